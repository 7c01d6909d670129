// `fabricsim` subcommands: wiring only (load -> build -> simulate -> report).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/nccl_log.hpp"
#include "collectives/nccl_plan.hpp"
#include "collectives/step_model.hpp"
#include "sim/config/scenario.hpp"
#include "sim/parallel/partition.hpp"
#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

/// Exit codes (DESIGN.md §4).
/// 130 = 128 + SIGINT, what shells report for a command stopped by Ctrl-C.
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitBadInput = 2,
  kExitDeadlock = 3,
  kExitLimit = 124,  ///< --max-wall or --max-events reached (as timeout(1)); results written
  kExitInterrupted = 130
};

struct RunOptions {
  std::string scenario_path;
  std::vector<std::string> sets;  ///< --set KEY=VALUE, in order
  std::optional<uint64_t> seed;   ///< --seed N (wins over the file and --set seed=)
  std::string out_dir;            ///< --out DIR
  bool out_given = false;         ///< --out was given (an empty DIR is then an error)
  bool progress = false;          ///< progress lines on stderr (only when it is a terminal)
  /// --trace-events N: cap of trace.json events written with --out (0 = no trace.json).
  int64_t trace_max_events = 200'000;
  /// --max-wall T: stop cleanly after T of wall-clock time, picoseconds (0 = no limit).
  int64_t max_wall_ps = 0;
  /// --max-events N: stop cleanly after N simulated events (0 = no limit).
  uint64_t max_events = 0;
};

/// A scenario's fabric and routes, checked runnable: what `validate` checks and `run` simulates.
struct Prepared {
  Fabric fabric;
  /// The packet model's routes; nullopt in the flow mode (sim/flow routes without a table).
  std::optional<RoutingTable> routes;
  NcclRunSetup nccl;  ///< the workload's collective setup (default without a workload)
  /// measured.nccl_tests, parsed and checked against the workload; nullopt when not given.
  std::optional<NcclLog> measured;
  /// The training step (scenario `training:`) as a DAG; nullopt when not given.
  std::optional<StepPlan> step;
};
/// The scenario of `opts`: its file with the --set overrides and --seed applied. Throws
/// ConfigError (exit 2).
Scenario load(const RunOptions& opts);

/// Creates `dir` (with parents) and proves it writable, so a typo costs seconds, not a run.
/// Throws ConfigError naming "--out DIR" (exit 2).
void check_out_dir(const std::string& dir);

/// Builds and checks everything a run needs before anything is printed or written, and
/// resolves the scenario's traffic host names against the fabric. Throws ConfigError (exit 2)
/// for a fabric that cannot be built, routed or run.
Prepared prepare(Scenario& scenario);

/// Simulates the scenario's workload sweep on its fabric. Stops early (complete = false) when
/// `interrupt` becomes true, the network stalls, or `max_events` events have run (the CLI's
/// --max-events; stop_reason says so, `limited` is set); the rows finished so far are kept.
/// With `trace` set, network events go to it (trace.json).
RunReport simulate(const Scenario& scenario, const Prepared& prepared,
                   const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace = nullptr,
                   uint64_t max_events = UINT64_MAX);

/// A wall-clock limit (--max-wall): the steady_clock deadline and the limit as given, for the
/// stop_reason ("stopped at --max-wall 90 s during …"). A sweep shares one deadline among its
/// points; steady_clock is CLOCK_MONOTONIC, so a point's forked process keeps it.
struct WallLimit {
  std::chrono::steady_clock::time_point deadline;
  int64_t max_wall_ps = 0;
};

/// simulate(), stopped cleanly at `wall` if given: a watchdog thread raises the run's own stop
/// flag at the deadline (checked every 20 ms) and forwards `interrupt` (SIGINT/SIGTERM) to it
/// meanwhile. A run the deadline stopped is `limited` (not `interrupted`), with stop_reason
/// "stopped at --max-wall T during …"; an interrupt first is reported as one.
RunReport simulate_limited(const Scenario& scenario, const Prepared& prepared,
                           const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace,
                           uint64_t max_events, const std::optional<WallLimit>& wall);

/// Writes results.json, perf.json, ports.csv, queues.csv and flows.csv of `report` into
/// `dir` (which must exist). Throws std::runtime_error when a file cannot be written.
void write_run_outputs(const std::string& dir, const RunReport& report);

int cmd_run(const RunOptions& opts, const std::atomic<bool>* interrupt);
int cmd_validate(const RunOptions& opts);
/// `topo --partitions N [--partition-method M]`: parts = 0 when not asked for.
struct TopoPartitionOptions {
  int parts = 0;
  PartitionMethod method = PartitionMethod::kAuto;
};
/// Exit 2 (bad input) when the fabric cannot be split as asked (partition_fabric's
/// std::invalid_argument: too many parts, a zero-delay cut link, no METIS).
int cmd_topo(const RunOptions& opts, const std::string& dot_path, bool json,
             const TopoPartitionOptions& partition = {});

}  // namespace fabricsim
