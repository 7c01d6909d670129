// `fabricsim calibrate`: fit the model to perftest and nccl-tests outputs (wiring only; the
// parsers and fits are in calibration/).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "sim/cli/run.hpp"

namespace fabricsim {

struct CalibrateOptions {
  std::vector<std::string> perftest;    ///< --perftest FILE (repeatable)
  std::vector<std::string> nccl_tests;  ///< --nccl-tests FILE (repeatable)
  RunOptions scenario;                  ///< --scenario FILE and --set: the fabric to fit through
  std::string out;                      ///< --out FILE.yaml; FILE.report.json beside it
  /// --holdout: "" none; "above=SIZE" leaves every size >= SIZE out of the fits; "largest=N"
  /// each log's N largest sizes (among the simulated ones when fitting through a scenario);
  /// "file=PATH" leaves that nccl-tests log out and predicts it.
  std::string holdout;
  int64_t max_sim_bytes = 256 << 20;  ///< sizes above this are not simulated
};

/// Parses, fits, prints the tables and hints, and writes the calibrated YAML fragment and the
/// report. With a scenario, fits link.host_rate, nccl.launch_latency and nccl.step_latency by
/// simulating the scenario with each log's collective, rank count and ranks per node: the rate
/// to the busbw at the largest fitted size, the launch latency to the time at the smallest, the
/// step latency to the median busbw error in between; then compares every size. Returns
/// an exit code; throws ConfigError (exit 2) and ParseError (exit 2) for bad input.
int cmd_calibrate(const CalibrateOptions& opts, const std::atomic<bool>* interrupt);

}  // namespace fabricsim
