// `fabricsim calibrate`'s closed-form fits of the measured logs (calibration/calibrate.hpp),
// printed as tables and added to the report (FILE.report.json `inputs`), with the hints and the
// plot series they give.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "calibration/calibrate.hpp"
#include "calibration/calibrate_outputs.hpp"
#include "calibration/holdout.hpp"
#include "calibration/nic_fit.hpp"

namespace fabricsim {

/// What the closed-form fits of the logs give the rest of the calibration.
struct ClosedFormFits {
  std::vector<std::string> not_fitted;  ///< why each log that could not be fitted was not
  std::vector<HealthHint> hints;
  /// The largest line rate and payload bandwidth (GB/s) of the perftest bandwidth fits that
  /// determined one; nullopt when none did.
  std::optional<double> link_rate_Gbps, link_GBps;
  std::vector<PlotSeries> plots;
  std::map<std::string, size_t> plot_of;  ///< nccl-tests log path -> its series
  std::vector<NcclFit> fits;              ///< the nccl-tests logs fitted, in order
  /// The port's rate that tells a host/PCIe plateau from the wire (--scenario's
  /// link.host_rate), and where it came from; none without a scenario.
  std::optional<double> port_Gbps;
  std::string port_source;
  /// The NIC keys of each perftest log, fitted or not (with why), in order.
  std::vector<NicKeyFit> nic_keys;
};

/// "#   nic.KEY = VALUE UNIT (LOG): ROWS" or "#   nic.KEY not fitted (LOG): REASON".
void print_nic_key(std::ostream& out, const NicKeyFit& k);
/// {"key", "path", "value", "unit", "scenario_value", "rows"} or {"key", "path", "not_fitted"}.
nlohmann::ordered_json nic_key_json(const NicKeyFit& k);

/// Fits each perftest log (bandwidth: t(s) = a + s/B, nic.message_rate and nic.pcie_rate
/// against cf.port_Gbps; latency: the base latency), prints its table to `out`, appends its
/// entry to report["inputs"] (the NIC keys under "nic"), and its series, hints, NIC keys and
/// link rate to `cf` (a log whose plateau is fitted as nic.pcie_rate gives no link rate). A log
/// that cannot be fitted is printed and reported with why.
void fit_perftest_logs(const std::vector<PerftestLog>& perftests, nlohmann::ordered_json& report,
                       ClosedFormFits& cf, std::ostream& out);

/// Fits each nccl-tests log per regime (its sizes from holdout.first_heldout held out; the
/// held-out file is predicted, not fitted), prints its table to `out`, appends its entry to
/// report["inputs"], and its fit, series and hints (against cf.link_GBps) to `cf`. Each entry
/// gets `network_transport` (classify_net_transport); a log whose transport is not modelled is
/// not fitted: `not_fitted` says why, with the line that shows the transport, and a warning
/// goes to stderr.
void fit_nccl_logs(const std::vector<NcclLog>& nccls, const Holdout& holdout,
                   nlohmann::ordered_json& report, ClosedFormFits& cf, std::ostream& out);

}  // namespace fabricsim
