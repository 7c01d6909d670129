// The run library: a scenario loaded (load), prepared (prepare: its fabric, routes and workload
// plan, checked runnable), simulated (simulate, simulate_limited) and reported (report_header,
// summarize); `fabricsim run` as one call is run_scenario (run_command.hpp), `topo` topo_view
// (topo_view.hpp); `validate`, `sweep` and `calibrate` (sim/cli) call it too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibration/nccl_log.hpp"
#include "calibration/perftest.hpp"
#include "collectives/nccl_plan.hpp"
#include "collectives/step_model.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/simulator.hpp"
#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"
#include "sim/run/jobs.hpp"
#include "sim/run/link_events.hpp"
#include "sim/run/run_hooks.hpp"
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
  /// The transport gave up: a queue pair exceeded its retry count (NCCL's "transport retry
  /// counter exceeded", IBV_WC_RETRY_EXC_ERR): the fabric lost or held its packets for
  /// retry_count x nic.rto; what finished is written, results.json says which QP and why.
  kExitTransport = 4,
  /// An output file could not be written (a full disk, a quota, a file too large): EX_IOERR of
  /// sysexits.h. Nothing was left half-written; what was written says what is missing.
  kExitOutput = 74,
  kExitLimit = 124,  ///< --max-wall or --max-events reached (as timeout(1)); results written
  kExitInterrupted = 130
};

class PacketEngine;
struct Prepared;
/// Makes the engine that advances a packet-mode run of `prepared` (see PacketEngine);
/// nullptr where one is taken stands for the sequential engine.
using PacketEngineFactory = std::unique_ptr<PacketEngine> (*)(const Prepared& prepared);

struct RunOptions {
  std::string scenario_path;
  std::vector<std::string> sets;  ///< --set KEY=VALUE, in order
  /// A sweep point's values, KEY=VALUE, applied after `sets` (errors name them --vary).
  std::vector<std::string> varied;
  std::optional<uint64_t> seed;  ///< --seed N (wins over the file and --set seed=)
  std::string out_dir;           ///< --out DIR
  bool out_given = false;        ///< --out was given (an empty DIR is then an error)
  bool progress = false;         ///< progress lines on stderr (only when it is a terminal)
  /// --trace-events N: cap of trace.json events written with --out (0 = no trace.json).
  int64_t trace_max_events = 200'000;
  /// --max-wall T: stop cleanly after T of wall-clock time, picoseconds (0 = no limit).
  int64_t max_wall_ps = 0;
  /// --max-events N: stop cleanly after N simulated events (0 = no limit).
  uint64_t max_events = 0;
  /// --flows csv|gz|none: flows.csv as it is, compressed to flows.csv.gz (a 512-GPU AllToAll
  /// point writes 70 MB of CSV), or not at all (results.json keeps the FCT percentiles).
  std::string flows = "csv";
  /// Ranks of the MPI job running this scenario partitioned (`mpirun -np N fabricsim run`);
  /// 1 = a sequential run.
  int mpi_ranks = 1;
  /// Whether this process prints and writes the results (false on MPI ranks other than 0).
  bool reports = true;
  /// The packet model's engine (nullptr: sequential; under mpirun, sim/parallel's MPI engine).
  PacketEngineFactory packet_engine = nullptr;
  /// Code taking part in the run (run_hooks.hpp): called once its network is built, watching
  /// its events, seeing its report. The CLI passes none.
  RunHooks hooks;
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
  /// measured.perftest, parsed and checked against the perftest section's test; nullopt when
  /// not given.
  std::optional<PerftestLog> measured_perftest;
  /// topology.link_events resolved against the fabric, with their routes (packet mode; empty
  /// otherwise).
  LinkPlan link_plan;
  /// `jobs:` placed and planned (sim/run/jobs.hpp); empty without jobs.
  JobsPlan jobs;
};
/// The scenario of `opts`: its file with the --set overrides and --seed applied. Throws
/// ConfigError (exit 2).
Scenario load(const RunOptions& opts);

/// The scenario's `cost_model:` resolved against the scenario's folder, like an include.
std::string cost_model_path(const Scenario& sc);

/// Creates `dir` (with parents) and proves that files can be created in it, so a typo costs
/// seconds, not a run. Throws ConfigError naming "--out DIR" and the system's reason (exit 2).
void check_out_dir(const std::string& dir);

/// Builds and checks everything a run needs before anything is printed or written, and
/// resolves the scenario's traffic host names against the fabric. Throws ConfigError (exit 2)
/// for a fabric that cannot be built, routed or run.
Prepared prepare(Scenario& scenario);

/// What every run's report starts with: the scenario, its fabric (summarize) and the workload's
/// NCCL setup; no rows, counters or outcome yet.
RunReport report_header(const Scenario& sc, const Prepared& prepared);

/// results.json's `fabric`: the fabric's shape, rates and bisection bandwidth and, with a
/// `cost_model:`, its cost proxy. Throws ConfigError if the cost model does not read.
FabricSummary summarize(const Scenario& sc, const Fabric& f);

/// Simulates the scenario's workload sweep on its fabric. Stops early (complete = false) when
/// `interrupt` becomes true, the network stalls, or `max_events` events have run (the CLI's
/// --max-events; stop_reason says so, `limited` is set); the rows finished so far are kept.
/// With `trace` set, network events go to it (trace.json). A packet-mode run advances on the
/// engine `engine` makes (nullptr: sequential); the flow mode is one sequential process.
/// `hooks` are called as run_hooks.hpp says (packet mode only).
RunReport simulate(const Scenario& scenario, const Prepared& prepared,
                   const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace = nullptr,
                   uint64_t max_events = UINT64_MAX, PacketEngineFactory engine = nullptr,
                   const RunHooks& hooks = {});

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
/// "stopped at --max-wall T during …"; an interrupt first is reported as one. `engine` as for
/// simulate(), as are `hooks`.
RunReport simulate_limited(const Scenario& scenario, const Prepared& prepared,
                           const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace,
                           uint64_t max_events, const std::optional<WallLimit>& wall,
                           PacketEngineFactory engine = nullptr, const RunHooks& hooks = {});

class Network;
class PacketTransport;

/// How the packet model advances its simulator. The default runs it sequentially; a
/// partitioned MPI run (sim/parallel/mpi_engine.cpp, sim/parallel/README.md) advances in windows
/// over the ranks and gathers the results on rank 0. simulate() uses the engine its caller passes
/// (a PacketEngineFactory), for the packet mode only.
class PacketEngine {
 public:
  virtual ~PacketEngine() = default;
  /// The run's simulator, network and transport exist; no traffic has been set up yet.
  virtual void attach(Simulator& sim, Network& net, PacketTransport& transport) = 0;
  /// A phase (a size, the step, the traffic) begins. Its workload is done when the completions
  /// `local_progress` counts (on this rank) reach `total` over all ranks; it also gives this
  /// rank's latest completion time, picoseconds.
  virtual void begin_phase(std::function<std::pair<size_t, int64_t>()> local_progress,
                           size_t total) = 0;
  /// Runs events up to `limit_ps`. Returns kWorkloadDone when the phase's workload finished or
  /// a queue pair failed (*finished_at_ps = when, the same on every rank) or a deadlock stopped
  /// the run; kStopTime / kNoEvents when no event at or before limit_ps is left; kEventLimit
  /// after a slice of work (for progress lines); kInterrupted, kEventCap as Simulator::run.
  virtual StopReason step(int64_t limit_ps, int64_t* finished_at_ps) = 0;
  /// The sum / maximum of `v` over all ranks (v itself when sequential).
  virtual int64_t sum(int64_t v) = 0;
  virtual int64_t max(int64_t v) = 0;
  /// Element-wise maximum of `v` over all ranks, in place (nothing when sequential).
  virtual void max_in_place(std::vector<int64_t>& v) = 0;
  /// Events executed, over all ranks.
  virtual uint64_t events() = 0;
  /// The run is over: merges every rank's share of the network's state and counters into this
  /// rank's Network (rank 0) so the report reads it as a sequential run's.
  virtual void finish() = 0;
  /// Whether this process holds the whole run after finish() (false on MPI ranks other than
  /// 0, whose state is their share only: they neither check invariants nor write files).
  virtual bool reports() const { return true; }
  /// Whether the engine writes trace.json itself: `trace` (this rank's, nullptr where none is
  /// written) receives the run's trace events at finish(). False: the caller observes the
  /// network into `trace` as the run goes (sequential).
  virtual bool traces(ChromeTrace* /*trace*/) { return false; }
};

}  // namespace fabricsim
