// Uplinks derived from rates: a leaf gets as many as carry its hosts' capacity at the ratio,
// so a fabric link far slower than the hosts' (a typo: 1Mbps for 1Tbps) asks for thousands of
// parallel links. Checked before anything is built.
#pragma once

#include <cstdint>

#include "sim/config/scenario.hpp"

namespace fabricsim {

/// The most ports a switch is taken to have when the scenario gives no switch.radix: the
/// largest switch ASICs ship 512 ports (Broadcom Tomahawk 5, 51.2 Tb/s: 512 x 100G).
inline constexpr int64_t kLargestSwitchPorts = 512;

/// What a leaf's uplinks are derived from: `host_ports` hosts at `host_rate_bps`, uplinks at
/// `fabric_rate_bps`, the ratio (host capacity over uplink capacity), spread over `spines`
/// spines, on each of `leaves` leaves. `leaf` names the switch in messages ("leaf").
struct UplinkDerivation {
  const char* leaf;
  int64_t host_ports, host_rate_bps, fabric_rate_bps;
  double ratio;
  int64_t spines, leaves;
};

/// Refuses uplinks that no switch could hold: when the derived count (host capacity / (ratio x
/// fabric rate)) is above the leaf's host ports (its fabric links slower than its hosts', over
/// the ratio) and above the ports left beside them (switch.radix, or kLargestSwitchPorts when
/// the scenario gives none, less the host ports). Throws ConfigError at link.fabric_rate (at
/// link.host_rate when only that one came from --set or --vary) with the derived counts (per
/// leaf, per leaf-spine pair, in all) and the slowest fabric rate that fits.
void check_derived_uplinks(const Scenario& sc, const UplinkDerivation& d);

}  // namespace fabricsim
