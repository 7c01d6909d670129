// The packet model's simulate(): the phase loop (each size, the training step, the traffic) over
// a PacketEngine (sequential here; sim/parallel/mpi_engine.cpp over MPI ranks).

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collectives/nccl_model.hpp"
#include "collectives/nccl_tests.hpp"
#include "collectives/replay.hpp"
#include "collectives/training_summary.hpp"
#include "collectives/transfer_dag.hpp"
#include "perftest/perftest.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "sim/net/network.hpp"
#include "sim/run/congestion_dependence.hpp"
#include "sim/run/deadlock_advice.hpp"
#include "sim/run/ideal_fct.hpp"
#include "sim/run/observer_fanout.hpp"
#include "sim/run/run.hpp"
#include "sim/run/run_parts.hpp"
#include "sim/run/scenario_collectives.hpp"
#include "sim/run/trace_observer.hpp"

namespace fabricsim {

namespace {

/// The sequential engine: Simulator::run, the transport stopping it when a phase is done.
class SequentialEngine final : public PacketEngine {
 public:
  void attach(Simulator& sim, Network&, PacketTransport&) override { sim_ = &sim; }
  void begin_phase(std::function<std::pair<size_t, int64_t>()>, size_t) override {}
  StopReason step(int64_t limit_ps, int64_t* finished_at_ps) override {
    const StopReason why = sim_->run(SimTime(limit_ps), 2'000'000);
    if (why == StopReason::kWorkloadDone) *finished_at_ps = sim_->now().ps();
    return why;
  }
  int64_t sum(int64_t v) override { return v; }
  int64_t max(int64_t v) override { return v; }
  void max_in_place(std::vector<int64_t>&) override {}
  uint64_t events() override { return sim_->events_executed(); }
  void finish() override {}

 private:
  Simulator* sim_ = nullptr;
};

}  // namespace

/// Starts `replayer` on `dag` as a phase's workload: the DAG's queue pairs opened, the
/// transport's completions going to the replayer, the engine told when the phase is done.
static void start_dag_phase(const TransferDag& dag, DagReplayer& replayer,
                            PacketTransport& transport, PacketEngine& engine) {
  transport.open_qps(dag);
  transport.attach(&replayer);
  engine.begin_phase(
      [&replayer] { return std::make_pair(replayer.completed(), replayer.finish_time().ps()); },
      dag.size());
  replayer.start();
}

/// The time a phase runs on after its workload finished (see simulate_packets): the smallest
/// non-zero propagation delay of any link, picoseconds (0 if every link has none).
static int64_t settle_gap_ps(const Network& net) {
  int64_t gap = 0;
  for (const Port& p : net.ports()) {
    if (p.delay_ps > 0 && (gap == 0 || p.delay_ps < gap)) gap = p.delay_ps;
  }
  return gap;
}

/// The perftest: section's run, after the sweep and the step: one phase per message size, its
/// report in rep.perftest (what ran, if a phase stopped the run) and, with a measured.perftest
/// log, the comparison in rep.measured_perftest.
template <class RunPhase>
static void run_perftest(const Scenario& sc, const Prepared& prepared, Simulator& sim, Network& net,
                         PacketEngine& engine, RunPhase& run_phase, RunReport& rep) {
  for (const int host : {sc.perftest.client, sc.perftest.server}) {
    // Its completions drive its posts on both hosts: one rank must hold both.
    if (!sim.is_local(Network::node_lp(static_cast<uint32_t>(net.fabric().hosts[host])))) {
      throw key_error(sc, "perftest",
                      "a perftest run is not partitioned over MPI ranks: run it without mpirun");
    }
  }
  PerftestPlayer player(sim, net, sc.perftest);
  std::vector<PerftestResult> results;
  for (const int64_t bytes : perftest_sizes(sc.perftest)) {
    player.start(bytes);
    engine.begin_phase([&] { return std::make_pair(player.completed(), player.finish_time_ps()); },
                       player.total());
    const bool ok =
        player.done() || run_phase(sc.perftest.test + " " + std::to_string(bytes) + " B",
                                   sc.perftest.test + " " + format_size(bytes), [&] {
                                     return std::to_string(player.completed()) + " of " +
                                            std::to_string(player.total()) + " " +
                                            sc.perftest.test + " messages completed";
                                   });
    if (!ok) break;
    results.push_back(player.result());
  }
  rep.perftest = format_perftest(sc.perftest, static_cast<int>(sc.nic.mtu_bytes),
                                 sc.transport == "infiniband" ? "IB" : "Ethernet", results);
  if (prepared.measured_perftest) {
    rep.measured_perftest = compare_measured_perftest(sc, *prepared.measured_perftest, results);
  }
}

/// The packet model's simulate().
RunReport simulate_packets(const Scenario& sc, const Prepared& prepared,
                           const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace,
                           uint64_t max_events, PacketEngineFactory make_engine,
                           const RunHooks& hooks, int alone_job) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Fabric& fabric = prepared.fabric;
  const RoutingTable& routes = *prepared.routes;
  std::unique_ptr<PacketEngine> engine = make_engine != nullptr ? make_engine(prepared) : nullptr;
  if (engine == nullptr) engine = std::make_unique<SequentialEngine>();
  Simulator sim;
  sim.set_interrupt_flag(interrupt);
  sim.set_event_cap(max_events);
  Network net(sim, fabric, routes, net_config_for(sc));
  PacketTransport transport(sim, net);
  transport.set_rank_hosts(prepared.jobs.empty() ? prepared.nccl.rank_hosts
                                                 : prepared.jobs.rank_hosts);
  engine->attach(sim, net, transport);
  schedule_link_events(prepared.link_plan, net, routes);
  // What watches the network: the engine's own recorder (set in attach), the trace, the hooks'.
  std::vector<NetObserver*> observers;
  if (net.observer() != nullptr) observers.push_back(net.observer());
  std::optional<TraceObserver> observer;
  if (!engine->traces(trace) && trace != nullptr) {
    observer.emplace(*trace, net);
    observers.push_back(&*observer);
  }
  for (const std::shared_ptr<RunHook>& hook : hooks) {
    hook->network_built(net, sc, prepared);
    if (NetObserver* o = hook->observer()) observers.push_back(o);
  }
  std::optional<ObserverFanOut> fanout;
  attach_observers(net, observers, fanout);

  RunReport rep = report_header(sc, prepared);
  const auto sizes = workload_sizes(sc);
  const int elem = datatype_bytes(sc.workload.datatype);
  rep.stop_reason = to_string(StopReason::kWorkloadDone);
  auto last_progress = wall_start;

  // Explicit flows (traffic:) start at time 0, beside the sweep's first size.
  std::vector<TrafficPlayer::Flow> flows;
  for (size_t i = 0; i < sc.traffic.size(); ++i) {
    const TrafficFlow& t = sc.traffic[i];
    flows.push_back({t.src_host, t.dst_host, t.bytes, t.start_ps, t.priority,
                     static_cast<uint32_t>(t.flow >= 0 ? t.flow : static_cast<int64_t>(i))});
  }
  TrafficPlayer traffic(sim, net, std::move(flows));
  transport.attach_traffic(&traffic);
  traffic.start();

  // A phase (a size, the step, the traffic) ends `gap` after its workload finished: the
  // network runs on until then (ACKs, other traffic), and the next phase starts at that time.
  // A partitioned run learns that the workload finished only at the end of a window of at
  // most `gap` (the smallest cable delay, <= any cut link's): both agree on this time.
  const int64_t gap = settle_gap_ps(net);
  // Runs until the phase's workload is done (the transport stops the simulator) and `gap`
  // more; false, with rep.stop_reason set, if the run ended otherwise. `stalled` describes
  // what is missing.
  const auto run_phase = [&](const std::string& what, const std::string& label,
                             const std::function<std::string()>& stalled) {
    int64_t settle_until = -1;  // the workload finished (or a QP failed): run up to here
    for (;;) {
      StopReason why;
      int64_t finished_at = -1;
      try {
        why = engine->step(settle_until < 0 ? INT64_MAX : settle_until - 1, &finished_at);
      } catch (const std::overflow_error&) {
        rep.complete = false;
        rep.stop_reason = "simulated time overflow during " + what +
                          " (beyond int64 picoseconds, about 106 days)";
        return false;
      }
      if (why == StopReason::kEventLimit) {
        const auto now = std::chrono::steady_clock::now();
        if (progress && now - last_progress > std::chrono::seconds(1)) {
          last_progress = now;
          const double wall = std::chrono::duration<double>(now - wall_start).count();
          std::fprintf(stderr, "\r[fabricsim] %s, simulated %.3f us, %.2f M events/s   ",
                       label.c_str(), sim.now().us(),
                       static_cast<double>(sim.events_executed()) / wall / 1e6);
        }
        continue;
      }
      // With the PFC watchdog on, a deadlock found is reported but does not stop the run.
      const bool deadlocked = net.deadlock().detected_at_ps >= 0 && !net.config().pfc_watchdog;
      if (why == StopReason::kWorkloadDone && !deadlocked) {
        if (settle_until < 0) settle_until = finished_at + gap;
        continue;  // a later request (another QP failing) changes nothing
      }
      if (settle_until >= 0 && !deadlocked &&
          (why == StopReason::kStopTime || why == StopReason::kNoEvents)) {
        sim.advance_to(SimTime(settle_until));
        if (net.failure().empty()) return true;
        why = StopReason::kWorkloadDone;
      }
      rep.complete = false;
      // With the watchdog on, a deadlock it had not broken when a queue pair gave up is what
      // stopped the run: say so (exit 3), with the queue pair's failure.
      const bool deadlock_failed_qp = !net.failure().empty() &&
                                      net.deadlock().detected_at_ps >= 0 &&
                                      !net.deadlock().broken_by_watchdog;
      if ((deadlocked || deadlock_failed_qp) && why != StopReason::kInterrupted &&
          why != StopReason::kEventCap) {
        rep.deadlocked = true;
        rep.stop_reason = std::string(net.config().credits ? "credit" : "PFC") +
                          " deadlock during " + what + ": no packet in a cycle of " +
                          std::to_string(net.deadlock().cycle.size()) + " queues " +
                          (net.config().credits ? "without InfiniBand credits" : "paused by PFC") +
                          " can move (see deadlock in results.json)";
        if (!deadlocked) {
          rep.stop_reason += "; the PFC watchdog had not broken it when " + net.failure();
        }
      } else if (!net.failure().empty()) {
        rep.transport_failed = true;
        rep.stop_reason = "the transport gave up during " + what + ": " + net.failure();
      } else if (why == StopReason::kInterrupted) {
        rep.interrupted = true;
        rep.stop_reason = "interrupted during " + what;
      } else if (why == StopReason::kEventCap) {
        rep.limited = true;
        rep.stop_reason =
            "stopped at --max-events " + std::to_string(max_events) + " during " + what;
      } else {
        rep.stop_reason = "stalled during " + what + ": " + stalled() + " and no event left";
      }
      return false;
    }
  };

  // Sizes run back to back on one network, like one all_reduce_perf process (1 iteration each:
  // the idle network repeats exactly, so warm-up and averaging would change nothing).
  const NcclRunSetup& setup = prepared.nccl;
  for (size_t i = 0; i < sizes.size() && rep.complete; ++i) {
    const SizePlan plan = plan_size(setup, sizes[i], elem);
    CollectiveRow row = plan_row(sc, setup, plan);
    if (plan.buffer_count == 0) {  // NCCL returns at once for a count of 0: nothing moves
      rep.rows.push_back(row);
      continue;
    }
    const TransferDag dag = build_collective(setup.layout, plan.spec, plan.buffer_count, elem);
    DagReplayer replayer(dag, transport);
    start_dag_phase(dag, replayer, transport, *engine);
    char label[96];
    std::snprintf(label, sizeof label, "size %zu/%zu (%s)", i + 1, sizes.size(),
                  format_size(sizes[i]).c_str());
    const bool ok = run_phase("size " + std::to_string(sizes[i]) + " B", label, [&] {
      return std::to_string(engine->sum(static_cast<int64_t>(replayer.completed()))) + " of " +
             std::to_string(dag.size()) + " transfers completed";
    });
    transport.attach(nullptr);
    if (!ok) break;
    row.time_ps = engine->max(replayer.finish_time().ps()) - replayer.start_time().ps();
    row.algbw_GBps = algbw_GBps(row.size_bytes, row.time_ps);
    row.busbw_GBps = row.algbw_GBps * busbw_factor(row.collective, row.ranks);
    rep.rows.push_back(row);
  }
  // The step's replayer outlives its phase: its summary reads the network's pause intervals,
  // which a partitioned run has all on rank 0 only after finish().
  std::optional<DagReplayer> step_replayer;
  bool step_done = false;
  if (rep.complete && prepared.step) {
    const StepPlan& plan = *prepared.step;
    transport.set_rank_hosts({});  // step rank r runs on GPU r
    DagReplayer& replayer = step_replayer.emplace(plan.dag, transport);
    start_dag_phase(plan.dag, replayer, transport, *engine);
    const bool ok =
        engine->sum(static_cast<int64_t>(replayer.completed())) <
                static_cast<int64_t>(plan.dag.size())
            ? run_phase(
                  "the training step", "training step",
                  [&] {
                    return std::to_string(engine->sum(static_cast<int64_t>(replayer.completed()))) +
                           " of " + std::to_string(plan.dag.size()) + " step tasks completed";
                  })
            : true;
    transport.attach(nullptr);
    // A partitioned run's ranks each hold the times of their own tasks: combine them.
    std::vector<int64_t> times = replayer.task_times();
    engine->max_in_place(times);
    replayer.set_task_times(times);
    if (ok) step_done = true;
  }
  if (rep.complete && !prepared.jobs.empty()) {
    // Every job in one phase (or one job, alone): each rank's iterations in turn from the job's
    // start, the jobs sharing the network.
    JobsPlan jobs = prepared.jobs;
    const TransferDag dag = build_jobs_dag(jobs, alone_job);
    DagReplayer replayer(dag, transport);
    start_dag_phase(dag, replayer, transport, *engine);
    const std::string what = alone_job < 0 ? std::string("the jobs")
                                           : "job " + jobs.jobs[alone_job].config.name + " alone";
    run_phase(what, what, [&] {
      return std::to_string(engine->sum(static_cast<int64_t>(replayer.completed()))) + " of " +
             std::to_string(dag.size()) + " job tasks completed";
    });
    transport.attach(nullptr);
    // A partitioned run's ranks each hold the times of their own tasks: combine them.
    std::vector<int64_t> times = replayer.task_times();
    engine->max_in_place(times);
    replayer.set_task_times(times);
    rep.jobs = job_rows(jobs, replayer, alone_job);
  }
  if (rep.complete && sc.perftest.enabled) {
    run_perftest(sc, prepared, sim, net, *engine, run_phase, rep);
    net.set_sink(&transport);  // the traffic's completions
  }
  if (rep.complete && engine->sum(static_cast<int64_t>(traffic.completed())) <
                          static_cast<int64_t>(traffic.size())) {
    engine->begin_phase(
        [&] { return std::make_pair(traffic.completed(), traffic.finish_time_ps()); },
        traffic.size());
    run_phase("the traffic flows", "traffic", [&] {
      return std::to_string(engine->sum(static_cast<int64_t>(traffic.completed()))) + " of " +
             std::to_string(traffic.size()) + " traffic flows completed";
    });
  }
  if (progress) std::fprintf(stderr, "\r%*s\r", 100, "");

  // The longest queue-pair stall over the ranks (each holds its own QPs' waits): the longest,
  // then the lowest QP id, then the earliest, as Network::longest_stall orders them.
  QpStallRow stall;
  if (!prepared.link_plan.empty()) {
    const QpStall mine = net.longest_stall();
    const int64_t longest = engine->max(mine.stall_ps);
    const int64_t qp =
        -engine->max(mine.stall_ps == longest && mine.qp >= 0 ? -mine.qp : INT64_MIN);
    const int64_t from = engine->max(mine.stall_ps == longest && mine.qp == qp ? mine.from_ps : -1);
    if (longest > 0 && qp >= 0) {
      const auto [src, dst] = net.qp_hosts(static_cast<uint32_t>(qp));
      stall = {longest, from, src, dst};
    }
  }
  engine->finish();
  net.settle_statistics();
  if (step_done) {
    rep.training = training_summary(sc, fabric, *prepared.step, *step_replayer, net);
  }
  if (engine->reports()) net.check_invariants();  // every run: conservation, no lossless drop
  rep.events = static_cast<int64_t>(engine->events());
  rep.simulated_ps = sim.now().ps();
  fill_counters(net, rep);
  fill_fct_slowdown(sc, fabric, rep);
  rep.packet_pool_packets = static_cast<int64_t>(net.packet_pool_capacity());
  rep.packet_struct_bytes = static_cast<int64_t>(Network::packet_bytes());
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rep.peak_rss_bytes = peak_rss_bytes();
  if (prepared.measured)
    rep.measured = compare_measured(sc, *prepared.measured, rep.rows, prepared.nccl.channels);
  if (rep.deadlock.detected_at_ps >= 0) rep.deadlock.fixes = deadlock_fixes(sc, fabric.kind);
  if (rep.simulated_ps > 0 && !fabric.hosts.empty()) {
    double paused = 0;
    for (size_t h = 0; h < fabric.hosts.size(); ++h) {
      paused += static_cast<double>(net.host_paused_ps(static_cast<int>(h), 0, rep.simulated_ps));
    }
    rep.mean_host_paused_fraction =
        paused / static_cast<double>(fabric.hosts.size()) / static_cast<double>(rep.simulated_ps);
  }
  rep.queue_pairs = static_cast<int64_t>(net.queue_pairs());
  if (!prepared.link_plan.empty())
    rep.link_events = link_events_report(prepared.link_plan, net, stall, rep.simulated_ps);
  rep.depends_on = congestion_dependence(sc, rep);
  for (const std::shared_ptr<RunHook>& hook : hooks) hook->run_finished(net, rep);
  return rep;
}

}  // namespace fabricsim
