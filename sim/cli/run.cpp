#include "sim/cli/run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "collectives/nccl_tests.hpp"
#include "collectives/replay.hpp"
#include "collectives/transfer_dag.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "sim/net/network.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {
namespace {

Scenario load(const RunOptions& opts) {
  std::vector<std::string> sets = opts.sets;
  if (opts.seed) sets.push_back("seed=" + std::to_string(*opts.seed));
  return load_scenario(opts.scenario_path, sets);
}

FabricSummary summarize(const Scenario& sc, const Fabric& f) {
  FabricSummary s;
  s.kind = f.kind;
  s.gpus = static_cast<int>(f.hosts.size());
  s.switches = f.switches;
  s.links = f.links;
  s.oversubscription = f.oversubscription;
  s.bisection_bandwidth_bps = f.bisection_bandwidth_bps;
  s.host_rate_bps = sc.link.host_rate_bps;
  return s;
}

}  // namespace

RunReport simulate(const Scenario& sc, const std::atomic<bool>* interrupt, bool progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Fabric fabric = build_fabric(sc);
  const RoutingTable routes = build_routes(sc, fabric);
  Simulator sim;
  sim.set_interrupt_flag(interrupt);
  Network net(sim, fabric, routes, net_config_for(sc));
  PacketTransport transport(sim, net);

  RunReport rep;
  rep.scenario = sc.name;
  rep.seed = sc.seed;
  rep.fabric = summarize(sc, fabric);
  const int ranks = static_cast<int>(fabric.hosts.size());
  const int elem = datatype_bytes(sc.workload.datatype);
  const auto sizes =
      sweep_sizes(sc.workload.minbytes, sc.workload.maxbytes, sc.workload.stepfactor, elem);
  rep.stop_reason = "workload done";
  auto last_progress = wall_start;

  // Sizes run back to back on one network, like one all_reduce_perf process (1 iteration each:
  // the idle network repeats exactly, so warm-up and averaging would change nothing).
  for (size_t i = 0; i < sizes.size() && rep.complete; ++i) {
    const int64_t count = sizes[i] / elem;
    const TransferDag dag = ring_allreduce(ranks, count, elem);
    DagReplayer replayer(dag, transport);
    transport.attach(&replayer);
    replayer.start();
    for (;;) {
      const StopReason why = sim.run(SimTime::max(), 2'000'000);
      if (why == StopReason::kEventLimit) {
        const auto now = std::chrono::steady_clock::now();
        if (progress && now - last_progress > std::chrono::seconds(1)) {
          last_progress = now;
          const double wall = std::chrono::duration<double>(now - wall_start).count();
          std::fprintf(stderr,
                       "\r[fabricsim] size %zu/%zu (%s), simulated %.3f us, %.2f M events/s   ",
                       i + 1, sizes.size(), format_size(sizes[i]).c_str(), sim.now().us(),
                       static_cast<double>(sim.events_executed()) / wall / 1e6);
        }
        continue;
      }
      if (why == StopReason::kWorkloadDone) break;
      rep.complete = false;
      if (why == StopReason::kInterrupted) {
        rep.interrupted = true;
        rep.stop_reason = "interrupted during size " + std::to_string(sizes[i]) + " B";
      } else {
        const NetTotals t = net.totals();
        rep.stop_reason = "stalled during size " + std::to_string(sizes[i]) +
                          " B: " + std::to_string(replayer.completed()) + " of " +
                          std::to_string(dag.size()) + " transfers completed, " +
                          std::to_string(t.drops) +
                          " packets dropped (tail drop) and not recovered: go-back-N "
                          "retransmission is not modelled yet";
      }
      break;
    }
    transport.attach(nullptr);
    if (!rep.complete) break;
    CollectiveRow row;
    row.collective = sc.workload.collective;
    row.algorithm = "ring";
    row.protocol = "simple";
    row.datatype = sc.workload.datatype;
    row.redop = sc.workload.redop;
    row.ranks = ranks;
    row.size_bytes = sizes[i];
    row.count = count;
    row.time_ps = (replayer.finish_time() - replayer.start_time()).ps();
    row.algbw_GBps = algbw_GBps(row.size_bytes, row.time_ps);
    row.busbw_GBps = row.algbw_GBps * busbw_factor(row.collective, ranks);
    rep.rows.push_back(row);
  }
  if (progress) std::fprintf(stderr, "\r%*s\r", 100, "");

  const NetTotals t = net.totals();
  rep.counters.drops = t.drops;
  rep.counters.max_queue_bytes = t.max_queue_bytes;
  rep.events = static_cast<int64_t>(sim.events_executed());
  rep.simulated_ps = sim.now().ps();
  rep.packet_hops = t.packet_hops;
  const FabricGraph& g = fabric.graph;
  for (const Port& p : net.ports()) {
    rep.ports.push_back(PortRow{g[p.node].name, g[p.peer_node].name, p.index, p.rate_bps,
                                p.counters.tx_packets, p.counters.tx_bytes, p.counters.drops,
                                p.counters.drop_bytes, p.counters.max_queue_bytes});
  }
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rep.peak_rss_bytes = peak_rss_bytes();
  return rep;
}

int cmd_run(const RunOptions& opts, const std::atomic<bool>* interrupt) {
  const Scenario sc = load(opts);
  if (!opts.out_dir.empty()) std::filesystem::create_directories(opts.out_dir);
  std::cout << "# fabricsim " << sc.name << ": " << sc.workload.collective << ", algorithm "
            << sc.workload.algorithm << ", protocol " << sc.workload.protocol << ", seed "
            << sc.seed << "\n";
  const bool progress = opts.progress && isatty(STDERR_FILENO);
  const RunReport rep = simulate(sc, interrupt, progress);
  print_table_header(std::cout);
  for (const auto& row : rep.rows) print_table_row(std::cout, row);
  print_summary(std::cout, rep);
  if (!opts.out_dir.empty()) {
    const std::filesystem::path dir(opts.out_dir);
    write_results_json((dir / "results.json").string(), rep);
    write_perf_json((dir / "perf.json").string(), rep);
    write_ports_csv((dir / "ports.csv").string(), rep);
    std::cout << "# wrote      : " << (dir / "results.json").string() << ", perf.json, ports.csv\n";
  }
  if (!rep.complete) {
    std::cerr << "fabricsim: run " << rep.stop_reason << "\n";
    return rep.interrupted ? kExitInterrupted : kExitInternal;
  }
  return kExitOk;
}

int cmd_validate(const RunOptions& opts) {
  const Scenario sc = load(opts);
  const Fabric fabric = build_fabric(sc);  // also checks the topology can be built
  build_routes(sc, fabric);                // and routed
  std::cout << opts.scenario_path << ": ok (" << fabric.kind << ", " << fabric.hosts.size()
            << " GPUs, " << fabric.switches << " switches, " << fabric.links << " links)\n";
  return kExitOk;
}

int cmd_topo(const RunOptions& opts, const std::string& dot_path, bool json) {
  const Scenario sc = load(opts);
  const Fabric fabric = build_fabric(sc);
  const FabricSummary s = summarize(sc, fabric);
  if (!dot_path.empty()) {
    std::ofstream out(dot_path);
    if (!out) throw std::runtime_error("cannot write " + dot_path);
    out << to_dot(fabric);
  }
  if (json) {
    nlohmann::ordered_json j = {{"kind", s.kind},
                                {"gpus", s.gpus},
                                {"switches", s.switches},
                                {"links", s.links},
                                {"oversubscription", s.oversubscription},
                                {"bisection_bandwidth_bps", s.bisection_bandwidth_bps}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << s.kind << ": " << s.gpus << " GPUs, " << s.switches << " switches, " << s.links
              << " links, oversubscription " << s.oversubscription << ":1, bisection bandwidth "
              << format_rate(s.bisection_bandwidth_bps) << "\n";
  }
  return kExitOk;
}

}  // namespace fabricsim
