// The flow mode's simulate(): each size's collective as max-min fair flows (sim/flow).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/flow_plan.hpp"
#include "collectives/nccl_model.hpp"
#include "collectives/nccl_tests.hpp"
#include "collectives/replay.hpp"
#include "collectives/transfer_dag.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/net/network.hpp"
#include "sim/run/run.hpp"
#include "sim/run/run_parts.hpp"
#include "topologies/family.hpp"

namespace fabricsim {

namespace {

/// The collective transport of the flow mode: ranks' transfers as FlowNetwork flows.
class FlowTransport final : public CollectiveTransport, public CompletionSink {
 public:
  FlowTransport(Simulator& sim, FlowNetwork& net, std::vector<int> rank_hosts)
      : sim_(sim), net_(net), rank_hosts_(std::move(rank_hosts)) {
    net_.set_sink(this);
  }
  void attach(DagReplayer* replayer) { replayer_ = replayer; }
  int host(int rank) const {
    return rank_hosts_.empty() ? rank : rank_hosts_[static_cast<size_t>(rank)];
  }
  void send(int src_rank, int dst_rank, int64_t bytes, uint32_t flow, uint64_t tag,
            int64_t pace_bps) override {
    net_.send(host(src_rank), host(dst_rank), bytes, flow, tag, pace_bps);
  }
  void post_after(int64_t delay_ps, uint64_t tag, int /*src_rank*/) override {
    // The flow model is one LP (FlowNetwork::lp): its tasks post there.
    sim_.at<&FlowTransport::on_post>(sim_.now() + SimTime(delay_ps), net_.lp(), this, tag);
  }
  SimTime now() const override { return sim_.now(); }
  void on_message_complete(uint64_t tag) override {
    replayer_->complete(tag);
    if (replayer_->done()) sim_.request_stop();
  }
  void on_post(uint64_t tag) {
    replayer_->post(tag);
    if (replayer_->done()) sim_.request_stop();
  }

 private:
  Simulator& sim_;
  FlowNetwork& net_;
  std::vector<int> rank_hosts_;
  DagReplayer* replayer_ = nullptr;
};

/// From this size a tree over servers of several GPUs on a lossless fabric ends later in the
/// packet mode than here (measured, docs/flow-mode.md "Every shipped scenario"; the packet
/// mode's time over the flow mode's, InfiniBand): 1.5 to 15.5 % at 32 MiB, 6.4 to 15.1 % at
/// 64 MiB, 4.6 to 18.1 % at 128 MiB on 6 to 32 servers of 4 or 8 GPUs, 8.9 % at 256 MiB on 128
/// servers; at 16 MiB within 1 % on 8 servers.
constexpr int64_t kTreeFifoFromBytes = int64_t{32} << 20;
/// From this many servers: 3 and 4 servers of 8 GPUs within 3 % at 16-128 MiB, 6 servers 5 to
/// 9 % at 32-128 MiB (5 not measured).
constexpr int kTreeFifoFromServers = 5;

/// "1 MiB, 4 MiB and 16 MiB": the sizes, in order.
std::string size_list(const std::vector<int64_t>& sizes) {
  std::string list;
  for (size_t i = 0; i < sizes.size(); ++i) {
    list += i == 0 ? "" : i + 1 == sizes.size() ? " and " : ", ";
    list += format_size(sizes[i]);
  }
  return list;
}

/// A tree case where this mode's closed form is measured far from the packet mode: the sizes
/// it covers and what a run of them says (`# not modelled:`, results.json `limits`).
struct TreeGap {
  bool (*applies)(const Scenario& sc, const Fabric& fabric, const FabricSummary& summary,
                  const RankLayout& layout, const SizePlan& plan);
  const char* what;
  std::string (*subject)(const RankLayout& layout);  ///< the run, before " at SIZES here: "
  const char* why;
};

/// Tree over kTreeFifoFromServers or more servers of more than one GPU, on a lossless fabric
/// (InfiniBand credits or PFC: on a lossy one the packet mode drops and resends instead, and
/// says so under `# depends on`), from kTreeFifoFromBytes. With one GPU per server every NIC
/// carries a stream of each phase in each direction (NCCL's two trees), so no link is offered
/// more than its rate and the modes agree (fat_tree_k8, 64 MiB: 0.1 %).
bool tree_phases_shared_fifo(const Scenario& sc, const Fabric&, const FabricSummary&,
                             const RankLayout& layout, const SizePlan& plan) {
  const bool lossless = sc.transport == "infiniband" || sc.pfc.enabled;
  return lossless && plan.algorithm == "tree" && layout.gpus_per_server > 1 &&
         layout.servers() >= kTreeFifoFromServers && plan.size.size_bytes >= kTreeFifoFromBytes;
}

/// The sizes at which a tree whose edges share fabric links is slower here than in the packet
/// mode: on a torus the edges follow dimension-order paths, several on one torus link; on an
/// oversubscribed fabric several cross one uplink. This mode starts every connection of the
/// tree at once, so the broadcast and the upper levels share those links with the reduce from
/// the start, where the packet mode's pipeline has sent nothing on them yet. Measured
/// (docs/flow-mode.md, flow over packet, Tree/LL128): the 4x4x4 torus +2.0 % at 256 KiB,
/// +5.9 % at 1 MiB, +0.9 % at 4 MiB, with 1,600 Gb/s host links (the torus links the
/// bottleneck) +9.0, +20.0 and +5.5 %; fat_tree_k8 at 3:1 +9.7, +25.5 and +10.4 % (4-GPU
/// servers: +4.4, +14.1, +13.9 and +8.3 % at 16 MiB); the torus and the one-GPU fat-tree
/// within 3 % at 64 KiB and from 16 MiB. Starting each connection with its first chunk was tried:
/// it fixed the torus and overshot elsewhere (Simple at 512 KiB to 1 MiB on one switch, the torus
/// and fat_tree_k8: −9 to −15 %).
constexpr int64_t kSharedTreeFromBytes = int64_t{256} << 10;
constexpr int64_t kSharedTreeToBytes = int64_t{16} << 20;

/// A torus (dimension-order paths, several tree edges per link) or an oversubscribed fabric.
bool tree_edges_cross_shared_links(const Fabric& fabric, const FabricSummary& summary) {
  return family_of(fabric).dimension_ordered || summary.oversubscription > 1.0;
}

bool tree_edges_share_links(const Scenario&, const Fabric& fabric, const FabricSummary& summary,
                            const RankLayout&, const SizePlan& plan) {
  return plan.algorithm == "tree" && tree_edges_cross_shared_links(fabric, summary) &&
         plan.size.size_bytes >= kSharedTreeFromBytes && plan.size.size_bytes <= kSharedTreeToBytes;
}

/// The sizes at which a tree with Simple on one GPU per server is far from the packet mode:
/// Simple's chunks are large, so the pipeline has few, and the packet mode overlaps its phases
/// and levels otherwise than this mode's closed form with every connection from the start.
/// Measured (docs/flow-mode.md, flow over packet, Tree/Simple forced): 16 GPUs under one switch
/// +5.3 % at 512 KiB, +12.2 % at 2 MiB, +0.7 % at 16 MiB; the 4x4x4 torus +9.3 % at 512 KiB,
/// +17.3 % at 4 MiB, +12.4 % at 8 MiB, +0.1 % at 32 MiB; fat_tree_k8 +3.8 % at 512 KiB, −5.9 % at 8
/// MiB, −7.8 % at 32 MiB; within 3.6 % at 128 and 256 KiB. With several GPUs per server the chains
/// inside the servers stream and the tree model differs (the multi-GPU entry).
constexpr int64_t kSimpleTreeFromBytes = int64_t{512} << 10;
constexpr int64_t kSimpleTreeToBytes = int64_t{32} << 20;

bool simple_tree_few_chunks(const Scenario&, const Fabric& fabric, const FabricSummary& summary,
                            const RankLayout& layout, const SizePlan& plan) {
  return plan.algorithm == "tree" && plan.protocol == "simple" && layout.gpus_per_server == 1 &&
         !tree_edges_cross_shared_links(fabric, summary) &&
         plan.size.size_bytes >= kSimpleTreeFromBytes && plan.size.size_bytes <= kSimpleTreeToBytes;
}

/// The sizes at which a tree over servers of several GPUs on a Clos fabric with spines (a
/// spine-leaf of several leaves, a fat-tree) is far from the packet mode at 1:1: the servers'
/// NICs carry several channels' tree edges, which per-flow ECMP spreads over the spines,
/// colliding on some uplinks. Measured (docs/flow-mode.md, flow over packet, NCCL's choice,
/// Tree/LL128): fat_tree_k8 with 4-GPU servers, seeds 1 to 3: +7.8 to +12.9 % at 1 MiB, +18.2 to
/// +22.3 % at 4 MiB, +7.2 to +18.4 % at 16 MiB (before the flow mode hashed as the packet mode,
/// +1.2 to +14.2 % and −13.2 to +10.4 %); a spine-leaf of 4 or 2 leaves, 2 spines, 4-GPU
/// servers: +5.9 / +6.3 % at 1 MiB, −7.4 / −7.7 % at 16 MiB. Rail-optimized fabrics, whose
/// tree edges stay on their rail, agree within 1 % (rail_optimized_h100_su at 1 to 16 MiB).
constexpr int64_t kSpinesTreeFromBytes = int64_t{1} << 20;
constexpr int64_t kSpinesTreeToBytes = int64_t{16} << 20;

bool multi_gpu_tree_across_spines(const Scenario& sc, const Fabric& fabric,
                                  const FabricSummary& summary, const RankLayout& layout,
                                  const SizePlan& plan) {
  const bool spines = sc.topology.kind == "fat-tree" ||
                      (sc.topology.kind == "spine-leaf" && sc.topology.leaves > 1);
  return plan.algorithm == "tree" && layout.gpus_per_server > 1 && spines &&
         !tree_edges_cross_shared_links(fabric, summary) &&
         plan.size.size_bytes >= kSpinesTreeFromBytes && plan.size.size_bytes <= kSpinesTreeToBytes;
}

const TreeGap kTreeGaps[] = {
    {tree_phases_shared_fifo,
     "a tree server's NIC link shared in arrival order, as the packet mode shares it",
     [](const RankLayout& layout) {
       return "tree over " + std::to_string(layout.servers()) + " servers of " +
              std::to_string(layout.gpus_per_server) + " GPUs";
     },
     "this mode gives the streams into a tree server (its children's reduce, its parent's "
     "broadcast) equal max-min shares of its NIC link; the packet mode serves them in arrival "
     "order behind lossless backpressure, where the children, each sending alone, take more and "
     "the broadcast ends later. The packet mode took 1.5 to 15.5 % longer at 32 MiB, 6.4 to 15.1 % "
     "at 64 MiB and 4.6 to 18.1 % at 128 MiB on 6 to 32 InfiniBand servers of 4 or 8 GPUs, "
     "8.9 % at 256 MiB on 128 (docs/flow-mode.md). No real measurement here tells which sharing "
     "a switch gives"},
    {tree_edges_share_links, "a tree's connections starting with their first chunk",
     [](const RankLayout&) { return std::string("tree whose edges share torus links or uplinks"); },
     "this mode starts every connection of the tree at once, so the broadcast and the upper "
     "levels share the links that carry several tree edges with the reduce from the start, "
     "where the packet mode's pipeline has sent nothing on them yet. This mode's time was up "
     "to 26 % above the packet mode's at 256 KiB to 16 MiB (a 4x4x4 torus +0.9 to +5.9 %, "
     "+20 % with its host links faster than its torus links, +17 % with Simple; a k = 8 "
     "fat-tree at 3:1 +2.3 to +25.5 %, with Simple +6.8 % at 256 KiB, with 4-GPU servers up to "
     "+14 %; docs/flow-mode.md); the packet mode is the reference"},
    {multi_gpu_tree_across_spines, "a tree's edges over spines, as the packet mode shares them",
     [](const RankLayout& layout) {
       return "tree over servers of " + std::to_string(layout.gpus_per_server) +
              " GPUs across spines";
     },
     "the servers' NICs carry several channels' tree edges, which per-flow ECMP spreads over "
     "the spines, colliding on some uplinks, and this mode shares the collided links max-min "
     "from the start. This mode's time was 8 % below to 22 % above the packet mode's at 1 to "
     "16 MiB (a k = 8 fat-tree and spine-leafs of 2 spines with 4-GPU servers; "
     "docs/flow-mode.md); the packet mode is the reference"},
    {simple_tree_few_chunks,
     "a tree's pipeline of Simple's few large chunks, as the packet mode runs it",
     [](const RankLayout&) { return std::string("tree with Simple on one GPU per server"); },
     "this mode runs the tree's pipeline as a closed form with every connection from the start; "
     "with Simple's few large chunks the packet mode's pipeline overlaps its phases and levels "
     "otherwise. This mode's time was 8 % below to 12 % above the packet mode's at 512 KiB to "
     "32 MiB (16 GPUs under one switch +0.7 to +12.2 %, a k = 8 fat-tree −7.8 to +3.8 %; "
     "docs/flow-mode.md); the packet mode is the reference"},
};

}  // namespace

/// `run` in the flow mode: each size's collective as max-min fair flows (sim/flow,
/// collectives/flow_plan.hpp). Counters of queues, PFC, ECN and drops stay 0: not modelled.
RunReport simulate_flows(const Scenario& sc, const Prepared& prepared,
                         const std::atomic<bool>* interrupt, bool progress, uint64_t max_events) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Fabric& fabric = prepared.fabric;
  RunReport rep = report_header(sc, prepared);
  rep.stop_reason = to_string(StopReason::kWorkloadDone);
  const NetConfig n = net_config_for(sc);
  FlowConfig cfg = flow_config_for(n);
  cfg.batch_tolerance = sc.flow.batch_tolerance;
  const FlowRouter router(fabric, sc.seed);
  Simulator sim;
  sim.set_interrupt_flag(interrupt);
  sim.set_event_cap(max_events);
  FlowNetwork net(sim, fabric, router, cfg);
  const NcclRunSetup& setup = prepared.nccl;
  FlowTransport transport(sim, net, setup.rank_hosts);
  const int elem = datatype_bytes(sc.workload.datatype);
  const auto sizes = workload_sizes(sc);
  int64_t events = 0;
  std::vector<std::vector<int64_t>> gap_sizes(std::size(kTreeGaps));  // sizes each applies to
  for (size_t i = 0; i < sizes.size() && rep.complete; ++i) {
    const SizePlan plan = plan_size(setup, sizes[i], elem);
    CollectiveRow row = plan_row(sc, setup, plan);
    if (plan.buffer_count == 0) {
      rep.rows.push_back(row);
      continue;
    }
    // α of a hop: the uncongested latency of a message of one chunk (or the whole transfer).
    const int64_t probe = plan.spec.chunk_bytes > 0 ? plan.spec.chunk_bytes : n.mtu_bytes;
    std::vector<uint32_t> ports;  // a hop's path (the callback's scratch)
    const TransferDag dag = build_collective_flows(
        setup.layout, plan.spec, plan.buffer_count, elem, [&](int src, int dst, uint32_t flow) {
          const int a = transport.host(src), b = transport.host(dst);
          Hop h;
          std::tie(h.latency_ps, h.rate_bps) =
              net.path_latency_rate(a, b, flow, std::min<int64_t>(probe, n.mtu_bytes), ports);
          for (const uint32_t id : ports) h.links.push_back({id, net.port_rate_bps(id)});
          return h;
        });
    DagReplayer replayer(dag, transport);
    transport.attach(&replayer);
    replayer.start();
    StopReason why = StopReason::kWorkloadDone;
    if (!replayer.done()) why = sim.run(SimTime::max());
    transport.attach(nullptr);
    if (progress) {
      std::fprintf(stderr, "\r[fabricsim] flow mode: size %zu/%zu done   ", i + 1, sizes.size());
    }
    if (why != StopReason::kWorkloadDone || !replayer.done()) {
      rep.complete = false;
      if (why == StopReason::kInterrupted) {
        rep.interrupted = true;
        rep.stop_reason = "interrupted during size " + std::to_string(sizes[i]) + " B";
      } else if (why == StopReason::kEventCap) {
        rep.limited = true;
        rep.stop_reason = "stopped at --max-events " + std::to_string(max_events) +
                          " during size " + std::to_string(sizes[i]) + " B";
      } else {
        rep.stop_reason = "stalled during size " + std::to_string(sizes[i]) +
                          " B: " + std::to_string(replayer.completed()) + " of " +
                          std::to_string(dag.size()) +
                          " flows completed (a failed link with no way around it?)";
      }
      break;
    }
    row.time_ps = (replayer.finish_time() - replayer.start_time()).ps();
    row.algbw_GBps = algbw_GBps(row.size_bytes, row.time_ps);
    row.busbw_GBps = row.algbw_GBps * busbw_factor(row.collective, row.ranks);
    rep.rows.push_back(row);
    for (size_t g = 0; g < std::size(kTreeGaps); ++g) {
      if (kTreeGaps[g].applies(sc, fabric, rep.fabric, setup.layout, plan)) {
        gap_sizes[g].push_back(row.size_bytes);
      }
    }
  }
  for (size_t g = 0; g < std::size(kTreeGaps); ++g) {
    if (gap_sizes[g].empty()) continue;
    const TreeGap& gap = kTreeGaps[g];
    rep.limits.push_back({gap.what, gap.subject(setup.layout) + " at " + size_list(gap_sizes[g]) +
                                        " here: " + gap.why});
  }
  if (progress) std::fprintf(stderr, "\r%*s\r", 100, "");
  events += static_cast<int64_t>(sim.events_executed());
  rep.events = events;
  rep.simulated_ps = sim.now().ps();
  rep.flow_stats = FlowStats{net.flows_completed(), net.reallocations(), net.max_active_flows(),
                             net.link_bytes(),      net.batched_ends(),  sc.flow.batch_tolerance};
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rep.peak_rss_bytes = peak_rss_bytes();
  if (prepared.measured)
    rep.measured = compare_measured(sc, *prepared.measured, rep.rows, prepared.nccl.channels);
  return rep;
}

}  // namespace fabricsim
