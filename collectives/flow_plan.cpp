#include "collectives/flow_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "collectives/algorithm_registry.hpp"
#include "collectives/builtin_algorithms.hpp"
#include "collectives/tree.hpp"

namespace fabricsim {
namespace {

/// Above this many flows an AllToAll's channels share one flow per connection.
constexpr int64_t kMaxFlowsPerChannelSplit = 4'000'000;

/// Connections of a point-to-point collective (pairs), each up to two flows with PXN.
int64_t p2p_pairs(const RankLayout& layout, const CollectiveSpec& spec) {
  const int64_t n = layout.ranks;
  return spec.collective == "alltoall" ? n * (n - 1) : n;
}
bool merge_p2p_channels(const RankLayout& layout, const CollectiveSpec& spec) {
  return 2 * p2p_pairs(layout, spec) * spec.channels > kMaxFlowsPerChannelSplit;
}

int64_t part_count(int64_t count, int parts, int i) {
  return count / parts + (i < count % parts ? 1 : 0);
}

/// Payload framed in the protocol's lines, as build_collective's finalize frames it.
int64_t framed(int64_t payload, const CollectiveSpec& spec) {
  return (payload + spec.line_data_bytes - 1) / spec.line_data_bytes * spec.line_bytes;
}

/// The parent of every rank in channel `c`'s tree (−1 for the root): the server tree
/// (btree for even channels, the mirrored/shifted one for odd) between chain heads, and
/// chains h, h+1, … inside servers with head h = c mod G (tree.hpp).
std::vector<int> tree_parents(int servers, int g, int c) {
  std::vector<int> parent(static_cast<size_t>(servers) * g, -1);
  const int head = c % g;
  auto rank = [&](int server, int pos) { return server * g + (head + pos) % g; };
  for (int v = 0; v < servers; ++v) {
    const TreeLinks s = c % 2 == 0 ? btree_links(servers, v) : dtree_second_links(servers, v);
    if (s.parent >= 0) parent[static_cast<size_t>(rank(v, 0))] = rank(s.parent, 0);
    for (int p = 1; p < g; ++p) parent[static_cast<size_t>(rank(v, p))] = rank(v, p - 1);
  }
  return parent;
}

/// The rate a connection's bytes move at: `rate_bps`, or the protocol's pace where slower.
int64_t paced(int64_t rate_bps, const CollectiveSpec& spec) {
  if (spec.pace_bps > 0 && (rate_bps == 0 || spec.pace_bps < rate_bps)) return spec.pace_bps;
  return rate_bps;
}

/// The stream unit (CollectiveSpec::stream_unit_bytes) framed.
int64_t framed_unit(const CollectiveSpec& spec) {
  return spec.stream_unit_bytes / spec.line_data_bytes * spec.line_bytes;
}

/// The time of the stream unit at `rate_bps`.
double unit_ps(const CollectiveSpec& spec, double rate_bps) {
  return rate_bps > 0 ? static_cast<double>(framed_unit(spec)) * 8e12 / rate_bps : 0;
}

/// Whether a transfer of `framed_bytes` streams (the packet model cuts it: plan.cpp stream()).
bool streams(const CollectiveSpec& spec, double framed_bytes) {
  return spec.stream_unit_bytes > 0 && framed_bytes > static_cast<double>(framed_unit(spec));
}

/// What a chunk pipeline of `hops` hops adds to its flows' own time: Σ s_h + (n − 1)·max(C/B,
/// s/W) for n chunks of C bytes, s = λ + α + C/B one chunk's step at rate B and at most W
/// chunks in flight per connection, less what a flow carries itself (λ + α + n·C/B). The
/// `streamed` hops (inside a server, with a streaming protocol) pass a chunk on after one
/// stream unit U: s_h = λ + α + U/B there.
/// `path_alpha_ps` >= 0: the hops' latencies summed along the pipeline's critical path, in
/// place of hops × α (a tree whose hops differ: NVLink inside servers, 2 to 5 switches between).
int64_t pipeline_tail_ps(int64_t hops, int64_t streamed, int64_t bytes, const CollectiveSpec& spec,
                         int64_t step, int64_t alpha, int64_t rate_bps,
                         int64_t path_alpha_ps = -1) {
  const int64_t chunk =
      framed(spec.chunk_bytes > 0 ? std::min(spec.chunk_bytes, bytes) : bytes, spec);
  const int64_t chunks =
      spec.chunk_bytes > 0 ? std::max<int64_t>(1, (bytes + spec.chunk_bytes - 1) / spec.chunk_bytes)
                           : 1;
  const double c_over_b =
      rate_bps > 0 ? static_cast<double>(chunk) * 8e12 / static_cast<double>(rate_bps) : 0;
  const double s = static_cast<double>(step + alpha) + c_over_b;
  if (!streams(spec, chunk)) streamed = 0;
  const double s_streamed =
      static_cast<double>(step + alpha) + unit_ps(spec, static_cast<double>(rate_bps));
  // Every hop's α: hops × α, or the critical path's own sum.
  const double alpha_excess =
      path_alpha_ps >= 0 ? static_cast<double>(path_alpha_ps - hops * alpha) : 0.0;
  const double total = static_cast<double>(hops - streamed) * s +
                       static_cast<double>(streamed) * s_streamed + alpha_excess +
                       static_cast<double>(chunks - 1) * std::max(c_over_b, s / kConnectionWindow);
  const double own = static_cast<double>(step + alpha) + static_cast<double>(chunks) * c_over_b;
  return static_cast<int64_t>(std::llround(std::max(0.0, total - own)));
}

/// How many of a ring collective's hops (over all its channels) leave each rank and enter each
/// rank, counted apart for hops inside a server (NVLink) and between servers (the NIC): a
/// hop's static share of its endpoints' port is 1 / max(senders on its source port, receivers
/// on its destination port). Index 2 × rank + (1 if the hop crosses servers).
struct PortLoad {
  std::vector<int32_t> out, in;
  static size_t port(const RankLayout& layout, int rank, int peer) {
    return 2 * static_cast<size_t>(rank) +
           (layout.server_of(rank) != layout.server_of(peer) ? 1 : 0);
  }
  int32_t sharing(const RankLayout& layout, int src, int dst) const {
    return std::max(out[port(layout, src, dst)], in[port(layout, dst, src)]);
  }
};
PortLoad ring_port_load(const RankLayout& layout, int channels) {
  PortLoad load{std::vector<int32_t>(2 * static_cast<size_t>(layout.ranks), 0),
                std::vector<int32_t>(2 * static_cast<size_t>(layout.ranks), 0)};
  for (int c = 0; c < channels; ++c) {
    const std::vector<int> order = ring_order(layout, c);
    for (size_t i = 0; i < order.size(); ++i) {
      const int a = order[i], b = order[(i + 1) % order.size()];
      ++load.out[PortLoad::port(layout, a, b)];
      ++load.in[PortLoad::port(layout, b, a)];
    }
  }
  return load;
}

/// Per channel, how many channels (itself included) run the same ring: the same cycle of ranks,
/// whatever rank it is listed from. Those start together and stay in step.
std::vector<int32_t> same_ring_channels(const RankLayout& layout, int channels) {
  std::map<std::vector<int>, int32_t> count;
  std::vector<std::vector<int>> rings;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> order = ring_order(layout, c);
    std::rotate(order.begin(), std::min_element(order.begin(), order.end()), order.end());
    ++count[order];
    rings.push_back(std::move(order));
  }
  std::vector<int32_t> same;
  for (const std::vector<int>& r : rings) same.push_back(count[r]);
  return same;
}

/// A step's transfer time on a hop whose port carries `in_step` channels that move their step
/// with this one and `other` channels of other rings, each of its transfers taking `alone` ps
/// by itself; `gap` = how much longer the bottleneck hop's step is than this hop's own step
/// without sharing, α_b + S_max − α_h. Another ring's step reaches the port about Δ = gap − d
/// apart from this one's (its chain crossed a bottleneck hop at a different step), so a
/// transfer of duration d overlaps it for d / Δ of the time: d is the smaller root of
///   d = alone × (in_step + other × d / (gap − d)),
/// i.e. d² − (gap + alone·(in_step − other))·d + alone·in_step·gap = 0, or every channel on
/// the port at once, alone × (in_step + other), when there is no root below gap / 2 (the
/// offset no longer exceeds the transfer). With other = 0 it is alone × in_step. The counts
/// may be fractional: hops on a link faster than their own slowest count rate / link rate.
double ring_step_ps(double alone, double in_step, double other, double gap) {
  const double full = alone * (in_step + other);
  if (other <= 0) return full;
  const double b = gap + alone * (in_step - other);
  const double disc = b * b - 4 * alone * in_step * gap;
  if (b <= 0 || disc < 0) return full;
  const double d = (b - std::sqrt(disc)) / 2;
  return d < gap / 2 ? std::min(d, full) : full;
}

}  // namespace

namespace builtin {

int64_t p2p_flow_count(const RankLayout& layout, const CollectiveSpec& spec) {
  // PXN: up to two per pair and channel (one per pair once the channels are merged)
  return 2 * p2p_pairs(layout, spec) * (merge_p2p_channels(layout, spec) ? 1 : spec.channels);
}

int64_t tree_flows(const RankLayout& layout, const CollectiveSpec& spec) {
  const int64_t n = layout.ranks;
  return spec.channels * (2 * (n - 1) + 1);
}

int64_t ring_flows(const RankLayout& layout, const CollectiveSpec& spec) {
  const int64_t n = layout.ranks;
  return spec.channels * (n + 1);
}

TransferDag p2p_flows(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                      int elem_bytes, const HopLatency&) {
  // The packet model's DAG; the channels' parts go together in one flow per connection only
  // when the channels would make too many flows (each channel is its own ECMP path).
  CollectiveSpec p2p = spec;
  if (merge_p2p_channels(layout, spec)) p2p.channels = 1;
  return build_collective(layout, p2p, buffer_count, elem_bytes);
}

}  // namespace builtin

int64_t estimate_flows(const RankLayout& layout, const CollectiveSpec& spec) {
  const CollectiveAlgorithm* algorithm = find_collective_algorithm(spec.algorithm);
  if (algorithm != nullptr && algorithm->estimate_flows) {
    return algorithm->estimate_flows(layout, spec);
  }
  return builtin::ring_flows(layout, spec);
}

TransferDag build_collective_flows(const RankLayout& layout, const CollectiveSpec& spec,
                                   int64_t buffer_count, int elem_bytes,
                                   const HopLatency& hop_latency) {
  const CollectiveAlgorithm* algorithm = find_collective_algorithm(spec.algorithm);
  if (algorithm != nullptr && !algorithm->build_flows) {
    throw std::invalid_argument(flow_mode_refusal(spec.algorithm));
  }
  if (algorithm == nullptr || !algorithm->serves(spec.collective)) {
    throw std::invalid_argument("build_collective_flows: algorithm '" + spec.algorithm +
                                "' does not run collective '" + spec.collective + "'");
  }
  return algorithm->build_flows(layout, spec, buffer_count, elem_bytes, hop_latency);
}

namespace builtin {

TransferDag nccl_flows(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                       int elem_bytes, const HopLatency& hop_latency) {
  const int n = layout.ranks;
  if (n < 2 || layout.gpus_per_server < 1 || buffer_count < 0 || elem_bytes <= 0 ||
      spec.channels < 1 || spec.chunk_bytes < 0 || spec.line_data_bytes < 1 ||
      spec.line_bytes < spec.line_data_bytes || spec.step_latency_ps < 0 ||
      spec.launch_latency_ps < 0 || spec.root < 0 || spec.root >= n) {
    throw std::invalid_argument("build_collective_flows: bad layout, buffer or spec");
  }
  const int64_t step = spec.step_latency_ps;
  const bool ring =
      spec.algorithm == "ring" && spec.collective != "broadcast" && spec.collective != "reduce";
  const PortLoad load = ring ? ring_port_load(layout, spec.channels) : PortLoad{};
  // A ring's hops (all channels) on each directed link, where the caller knows the links (the
  // flow mode: each flow's own ECMP path). Two hops that hash onto one uplink of their NICs'
  // rate share it as two hops from one NIC do; counted at the NICs alone (PortLoad), a ring on
  // a fabric with collisions was up to 25 % fast at 16-64 MiB against the packet mode (the same
  // paths). On a faster uplink they share it less: see the sharing below.
  std::vector<int32_t> link_load;
  if (ring) {
    for (int c = 0; c < spec.channels; ++c) {
      const std::vector<int> order = ring_order(layout, c);
      for (size_t i = 0; i < order.size(); ++i) {
        const Hop h =
            hop_latency(order[i], order[(i + 1) % order.size()], static_cast<uint32_t>(c));
        for (const HopLink& l : h.links) {
          if (l.id >= link_load.size()) link_load.resize(static_cast<size_t>(l.id) + 1, 0);
          ++link_load[l.id];
        }
      }
    }
  }
  const std::vector<int32_t> same_ring =
      ring ? same_ring_channels(layout, spec.channels) : std::vector<int32_t>{};
  TransferDag dag;
  for (int c = 0; c < spec.channels; ++c) {
    const int64_t bytes = part_count(buffer_count, spec.channels, c) * elem_bytes;
    const auto flow = static_cast<uint32_t>(c);
    std::vector<uint32_t> ids;
    int64_t alpha_max = 0, alpha_sum = 0, rate_min = 0;
    // Hops inside a server right after another (in the order added): the ones a chain streams.
    int64_t fed_inside = 0;
    bool last_inside = false;
    const auto add = [&](int src, int dst, int64_t payload) {
      const uint32_t id = dag.add(src, dst, framed(payload, spec), flow);
      dag.set_delay(id, spec.launch_latency_ps + step);
      dag.set_pace(id, spec.pace_bps);
      ids.push_back(id);
      const Hop h = hop_latency(src, dst, flow);
      const bool inside = layout.server_of(src) == layout.server_of(dst);
      if (inside && last_inside) ++fed_inside;
      last_inside = inside;
      alpha_max = std::max(alpha_max, h.latency_ps);
      alpha_sum += h.latency_ps;
      if (h.rate_bps > 0 && (rate_min == 0 || h.rate_bps < rate_min)) rate_min = h.rate_bps;
      return h;
    };
    int64_t tail_ps = -1;  // set by the tree and the chain; the ring below
    if (spec.algorithm == "tree") {
      if (n % layout.gpus_per_server != 0) {
        throw std::invalid_argument("build_collective_flows: tree needs whole servers");
      }
      const int g = layout.gpus_per_server, servers = n / g;
      const std::vector<int> parent = tree_parents(servers, g, c);
      std::vector<int64_t> up_ps(static_cast<size_t>(n), 0), down_ps(static_cast<size_t>(n), 0);
      for (int r = 0; r < n; ++r) {
        const int p = parent[static_cast<size_t>(r)];
        if (p < 0) continue;
        up_ps[static_cast<size_t>(r)] = add(r, p, bytes).latency_ps;    // reduce up
        down_ps[static_cast<size_t>(r)] = add(p, r, bytes).latency_ps;  // broadcast down
      }
      // The critical path of a chunk: up from the rank farthest (in latency) from the root, then
      // down to the farthest: the hops' own latencies, not the slowest hop's at every level.
      int64_t up_max = 0, down_max = 0;
      for (int r = 0; r < n; ++r) {
        int64_t up = 0, down = 0;
        for (int v = r; parent[static_cast<size_t>(v)] >= 0; v = parent[static_cast<size_t>(v)]) {
          up += up_ps[static_cast<size_t>(v)];
          down += down_ps[static_cast<size_t>(v)];
        }
        up_max = std::max(up_max, up);
        down_max = std::max(down_max, down);
      }
      // Streamed: the hops of a server's chain fed by another of its hops, up and down (on one
      // server the root's first send down too); a hop fed over the network waits for it whole.
      const int64_t chain_streamed = servers == 1 ? 2 * (g - 1) - 1 : 2 * std::max(0, g - 2);
      tail_ps = pipeline_tail_ps(2 * (tree_height(servers) + g - 1), chain_streamed, bytes, spec,
                                 step, alpha_max, paced(rate_min, spec), up_max + down_max);
    } else {
      const std::vector<int> order = ring_order(layout, c);
      if (spec.collective == "broadcast" || spec.collective == "reduce") {
        // The chain from the root (broadcast) or to it (reduce) along the ring.
        const int root_pos =
            static_cast<int>(std::find(order.begin(), order.end(), spec.root) - order.begin());
        for (int k = 0; k + 1 < n; ++k) {
          const int a = order[static_cast<size_t>((root_pos + k) % n)];
          const int b = order[static_cast<size_t>((root_pos + k + 1) % n)];
          if (spec.collective == "broadcast") {
            add(a, b, bytes);
          } else {
            add(b, a, bytes);
          }
        }
        // Every channel's chain runs through each rank's one NIC: a chunk moves at its share.
        tail_ps = pipeline_tail_ps(n - 1, fed_inside, bytes, spec, step, alpha_sum / (n - 1),
                                   paced(rate_min / spec.channels, spec));
      } else {
        const int64_t k = spec.collective == "all_reduce" ? 2 * (n - 1) : n - 1;
        const int64_t loop_bytes = spec.chunk_bytes > 0 ? int64_t{n} * spec.chunk_bytes : 0;
        const int64_t loops =
            loop_bytes > 0 ? std::max<int64_t>(1, (bytes + loop_bytes - 1) / loop_bytes) : 1;
        // Each hop carries k / N of the channel's part over the whole collective.
        const int64_t per_hop =
            static_cast<int64_t>((static_cast<__int128>(bytes) * k + n - 1) / n);
        // One step's transfer on each hop: on the busiest at its static share of its ports
        // (PortLoad; the bottleneck), and as a chain of steps walking the ring meets it
        // (ring_step_ps), their mean.
        const double step_payload =
            static_cast<double>(framed(per_hop, spec)) / static_cast<double>(loops * k);
        std::vector<double> alone(static_cast<size_t>(n)), lat_hop(static_cast<size_t>(n));
        std::vector<double> paced_step(static_cast<size_t>(n)), unit(static_cast<size_t>(n));
        std::vector<uint8_t> streamed(static_cast<size_t>(n));
        std::vector<double> sharing(static_cast<size_t>(n));
        double s_max = 0, alpha_b = 0;
        for (int i = 0; i < n; ++i) {
          const int a = order[static_cast<size_t>(i)], b = order[static_cast<size_t>((i + 1) % n)];
          const Hop h = add(a, b, per_hop);
          const auto u = static_cast<size_t>(i);
          alone[u] = h.rate_bps > 0 ? step_payload * 8e12 / static_cast<double>(h.rate_bps) : 0;
          // A paced step takes at least its pace's time, however lightly its port is shared.
          paced_step[u] = spec.pace_bps > 0 ? step_payload * 8e12 / spec.pace_bps : 0;
          lat_hop[u] = static_cast<double>(h.latency_ps);
          // On a link of rate R, m hops each alone at B_h (their slowest link) take m·B_h/R
          // times as long: a hop on an uplink faster than its NIC shares less than one.
          sharing[u] = load.sharing(layout, a, b);
          for (const HopLink& l : h.links) {
            if (l.rate_bps <= 0 || h.rate_bps <= 0) continue;
            sharing[u] = std::max(sharing[u], link_load[l.id] * static_cast<double>(h.rate_bps) /
                                                  static_cast<double>(l.rate_bps));
          }
          // A step streams inside a server when the step it forwards came from inside it too.
          const int before = order[static_cast<size_t>((i + n - 1) % n)];
          streamed[u] = layout.server_of(a) == layout.server_of(b) &&
                        layout.server_of(before) == layout.server_of(a) &&
                        streams(spec, step_payload);
          unit[u] = unit_ps(spec, static_cast<double>(paced(h.rate_bps, spec)));
          if (std::max(alone[u] * sharing[u], paced_step[u]) > s_max) {
            s_max = std::max(alone[u] * sharing[u], paced_step[u]);
            alpha_b = lat_hop[u];
          }
        }
        double s_sum = 0;
        const int32_t in_step = same_ring[static_cast<size_t>(c)];
        for (size_t u = 0; u < alone.size(); ++u) {
          const double with = std::min<double>(in_step, sharing[u]);
          const double s_h = std::max(paced_step[u], ring_step_ps(alone[u], with, sharing[u] - with,
                                                                  alpha_b + s_max - lat_hop[u]));
          // A streamed step is passed on after one unit, not the whole step.
          s_sum += streamed[u] ? std::min(s_h, unit[u]) : s_h;
        }
        // The join (flow_plan.hpp): the longest chain of steps walks the hops in turn, the
        // bottleneck hop's queue of steps hides the latency it overlaps. A step's data waits for
        // the hop before it, so α is the hops' mean latency.
        const double alpha_mean = static_cast<double>(alpha_sum) / n;
        const double lat = static_cast<double>(step) + alpha_mean;
        const double steps = static_cast<double>(loops * k);
        tail_ps = std::llround(std::max((steps - 1) * lat - steps * (s_max - s_sum / n),
                                        static_cast<double>(loops - 1) * lat));
      }
    }
    const uint32_t join = dag.add_compute(0, std::max<int64_t>(0, tail_ps));
    for (uint32_t id : ids) dag.depends(join, id);
  }
  return dag;
}

}  // namespace builtin

}  // namespace fabricsim
