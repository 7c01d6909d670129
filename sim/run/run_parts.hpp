// The parts the run library's prepare() and simulate() are made of, shared between its files
// (sim/run); not an interface of their own.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "calibration/nccl_log.hpp"
#include "calibration/perftest.hpp"
#include "collectives/nccl_plan.hpp"
#include "perftest/perftest.hpp"
#include "sim/config/scenario.hpp"
#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

class Network;

/// Copies the network's counters, per-port and per-queue statistics and flow records into the
/// report (formatting is sim/report's job).
void fill_counters(const Network& net, RunReport& rep);

/// The message sizes of the workload's sweep (none without a workload).
std::vector<int64_t> workload_sizes(const Scenario& sc);

/// The row of one size, before it runs: what NCCL would choose and the nccl-tests columns.
CollectiveRow plan_row(const Scenario& sc, const NcclRunSetup& setup, const SizePlan& plan);
/// The same for a collective given as `workload` (a job's).
CollectiveRow plan_row(const WorkloadConfig& workload, const NcclRunSetup& setup,
                       const SizePlan& plan);

/// The end-of-run invariant on the workload: a complete run has a row for every size and the
/// training step's summary; an incomplete one says why. Throws std::logic_error (an internal
/// error, exit 1) otherwise.
void check_accounted(const Scenario& sc, const Prepared& prepared, const RunReport& rep);

/// The scenario's `measured.nccl_tests` log, resolved against the scenario's folder and parsed;
/// its collective and rank count must be the workload's. Throws ConfigError (exit 2) at the key
/// for a log that cannot be read or does not match.
NcclLog measured_log(const Scenario& sc, const NcclRunSetup& setup);
/// When the scenario names a measured nccl-tests log and no nccl.version, the log's NCCL version
/// (its "NCCL version X" line, else the "NCCL X.Y.Z" of its "## software:" header) becomes
/// nccl.version, marked as read from the log (NcclConfig::version_from_log). A log that cannot
/// be read is left to measured_log to report.
void take_measured_nccl_version(Scenario& sc);
/// `path` as a scenario key gives it (a measured log): resolved against the scenario's folder
/// unless absolute, and normalised.
std::string scenario_relative_path(const Scenario& sc, const std::string& path);

/// The measured log beside the simulated rows, size by size (sizes in both), with the median and
/// worst absolute busbw error, percent; and where the log prints them, its channels against
/// `model_channels` and NCCL's algorithm and protocol against the run's.
MeasuredComparison compare_measured(const Scenario& sc, const NcclLog& log,
                                    const std::vector<CollectiveRow>& rows, int model_channels);

/// The scenario's `measured.perftest` log, resolved against the scenario's folder and parsed;
/// its test must be the perftest section's (the title's or command's program, a BW or latency
/// table, bidirectional or not). Throws ConfigError (exit 2) at the key for a scenario without
/// a perftest section, a log that cannot be read or one of another test.
PerftestLog measured_perftest_log(const Scenario& sc);

/// The measured perftest log beside the simulated rows `results` (perftest/perftest.hpp) of the
/// scenario's perftest run, size by size (sizes in both), with the median and worst absolute
/// error, percent.
PerftestComparison compare_measured_perftest(const Scenario& sc, const PerftestLog& log,
                                             const std::vector<PerftestResult>& results);

/// `run` in the flow mode: each size's collective as max-min fair flows (sim/flow,
/// collectives/flow_plan.hpp). Counters of queues, PFC, ECN and drops stay 0: not modelled.
RunReport simulate_flows(const Scenario& sc, const Prepared& prepared,
                         const std::atomic<bool>* interrupt, bool progress, uint64_t max_events);

/// The packet model's simulate(), on the engine `make_engine` makes (nullptr: sequential),
/// calling `hooks` (run_hooks.hpp).
/// `alone_job` >= 0: the run of that job alone on its servers (the scenario without the other
/// jobs, for its slowdown), with no trace, hooks or progress lines.
RunReport simulate_packets(const Scenario& sc, const Prepared& prepared,
                           const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace,
                           uint64_t max_events, PacketEngineFactory make_engine,
                           const RunHooks& hooks, int alone_job = -1);

}  // namespace fabricsim
