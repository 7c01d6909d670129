// Cost proxy: unit prices for the parts a fabric is built from, read from a small YAML file
// (configs/cost_example.yaml). topologies/metrics.hpp (fabric_cost) multiplies them by the part
// counts of a built fabric. It is a proxy for comparing fabrics, not a quote: the example
// prices are low-confidence reseller numbers.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fabricsim {

/// Unit prices in US dollars. The file has exactly these four top-level keys, each a
/// non-negative number (an integer or a decimal), e.g.
///   switch_port_usd: 656
///   nic_usd: 2400
///   host_link_usd: 320
///   fabric_link_usd: 320
/// switch_port_usd may instead give one price per transport (an InfiniBand switch and an
/// Ethernet switch of the same port count do not cost the same), with every transport of
/// cost_model_transports() as a key:
///   switch_port_usd: {infiniband: 656.25, roce: 522.95}
struct CostModel {
  /// One network port of a switch (switch price / port count). With the per-transport form, 0
  /// until for_transport() picks the scenario's price.
  double switch_port_usd = 0;
  double nic_usd = 0;          ///< one host NIC port (a NIC per host network link)
  double host_link_usd = 0;    ///< one host <-> switch cable (optics included if any)
  double fabric_link_usd = 0;  ///< one switch <-> switch cable (optics included if any)
  std::string source;          ///< the file the prices were read from
  /// The per-transport form of switch_port_usd: transport -> USD per port; empty for the plain
  /// number.
  std::map<std::string, double> switch_port_usd_by_transport = {};
};

/// The transports a per-transport switch_port_usd must price, in the order messages list them:
/// the values of the scenario key `transport` (DESIGN.md §4: roce, infiniband).
const std::vector<std::string>& cost_model_transports();

/// `model` priced for a fabric of `transport` (the scenario's `transport`): switch_port_usd
/// is the per-transport price when the file gives one, else the plain number as read. Throws
/// std::invalid_argument for a transport the per-transport form does not price (the loader
/// requires every one of cost_model_transports(), so only a transport outside them).
CostModel for_transport(CostModel model, const std::string& transport);

/// Reads and validates a cost file. Throws ConfigError (the CLI's exit code 2) as
/// "FILE:LINE:COL: KEY: MESSAGE" for an unknown key (with "did you mean 'x'?" via
/// closest_match), a duplicate key, a value that is not a number, or a negative or non-finite
/// value (in switch_port_usd's per-transport map too: "switch_port_usd.roce: ...", an unknown
/// transport with "did you mean", a transport missing from it); as "FILE: KEY: missing required
/// key; ..." (no position) for a missing key; and for a missing or unreadable file, a YAML syntax
/// error, or a top level that is not a map. Every key is required: a price left out would silently
/// cost nothing.
CostModel load_cost_model(const std::string& path);

/// A fabric's cost by part, US dollars (topologies/metrics.hpp fabric_cost).
struct CostBreakdown {
  double switches_usd = 0;      ///< switch ports × switch_port_usd
  double nics_usd = 0;          ///< NIC ports × nic_usd
  double host_links_usd = 0;    ///< host links × host_link_usd
  double fabric_links_usd = 0;  ///< switch-switch links × fabric_link_usd
  double total_usd = 0;         ///< the sum of the four
};

}  // namespace fabricsim
