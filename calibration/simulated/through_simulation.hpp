// `fabricsim calibrate --scenario`: the measured nccl-tests logs fitted through the simulator
// and compared with it. link.host_rate, nccl.launch_latency and nccl.step_latency are fitted so
// that simulating each log's collective on the scenario's fabric (as `fabricsim run` would,
// sim/run/run.hpp) matches the log; then every size is compared, measured against simulated,
// and a held-out log is predicted with the first fit that holds.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "calibration/calibrate_tables.hpp"
#include "calibration/holdout.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

/// What the simulation fits: the NIC rate, NCCL's launch latency and its per-step latency.
struct SimParams {
  int64_t rate_bps = 0;   ///< link.host_rate (link.fabric_rate scales with it)
  int64_t launch_ps = 0;  ///< nccl.launch_latency
  int64_t step_ps = -1;   ///< nccl.step_latency; -1 = NCCL's per-algorithm/protocol constants
};

/// Calibration of one log through the simulator.
struct SimFit {
  std::string path;
  SimParams params;
  int64_t fabric_rate_bps = 0;
  struct Point {
    int64_t bytes;
    double measured_busbw, simulated_busbw;
    bool heldout;
  };
  std::vector<Point> points;
  std::optional<double> fitted_median, fitted_max, heldout_median, heldout_max;
  int simulations = 0;      ///< runs the fit took
  std::string skipped;      ///< why the log was not simulated ("" = it was)
  std::string warning;      ///< a fit the scenario cannot really make ("" = none)
  std::string layout_note;  ///< the scenario's layout differs from the log's
  /// NCCL's tuning the simulations used: the version (the scenario's nccl.version when it writes
  /// one, else the log's; "" = the newest) and its table's name ("2.25-2.27").
  std::string nccl_version, nccl_tuning;
};

/// The logs simulated, in order (a held-out log's prediction last).
struct SimulatedLogs {
  std::vector<SimFit> sims;
  std::optional<SimFit> chosen;  ///< the first log fitted without a warning: the fragment's
  std::string interrupted_in;    ///< the log whose simulation a SIGINT/SIGTERM stopped ("" none)
};

/// Fits each log of `nccls` (but the held-out file) through simulations of `scenario` (sizes up
/// to `max_sim_bytes`; the fit starts from cf.link_rate_Gbps when perftest gave one), then
/// predicts the held-out file with the chosen fit; prints each comparison to `out`, adds its
/// hints and simulated busbw to `cf`, and sets report["simulated"]. After an interrupt the
/// remaining logs are skipped (said so). Throws ConfigError for a scenario that cannot be
/// loaded or prepared.
SimulatedLogs simulate_logs(const RunOptions& scenario, int64_t max_sim_bytes,
                            const std::atomic<bool>* interrupt, const std::vector<NcclLog>& nccls,
                            const Holdout& holdout, ClosedFormFits& cf,
                            nlohmann::ordered_json& report, std::ostream& out);

}  // namespace fabricsim
