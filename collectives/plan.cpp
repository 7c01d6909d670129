#include "collectives/plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "collectives/algorithm_registry.hpp"
#include "collectives/builtin_algorithms.hpp"
#include "collectives/collectives.hpp"
#include "collectives/tree.hpp"
#include "sim/core/time.hpp"

namespace fabricsim {

namespace {

int mod(int a, int n) {
  return ((a % n) + n) % n;
}

// Elements of part i of `count` cut into `parts` (the first count % parts get one more).
int64_t part_count(int64_t count, int parts, int i) {
  return count / parts + (i < count % parts ? 1 : 0);
}

// Appends `sub`, whose ranks are ring positions, mapping position p to order[p] (an empty
// order maps ranks to themselves) and giving every transfer flow `flow`. Returns the id the
// first transfer of `sub` got.
uint32_t append(TransferDag& out, const TransferDag& sub, const std::vector<int>& order,
                uint32_t flow) {
  const uint32_t base = static_cast<uint32_t>(out.size());
  auto rank = [&](int p) { return order.empty() ? p : order[p]; };
  for (uint32_t i = 0; i < sub.size(); ++i) {
    const Transfer& t = sub.transfer(i);
    out.add(rank(t.src_rank), rank(t.dst_rank), t.bytes, flow);
  }
  out.copy_dependencies(sub, base);
  return base;
}

// Per rank, the last send and the last receive (by id, which is each rank's program order in
// the builders) among transfers [first, end) of `dag`; kNone where there is none.
constexpr uint32_t kNone = ~uint32_t{0};
struct LastOps {
  std::vector<uint32_t> send, recv;
};
LastOps last_ops(const TransferDag& dag, uint32_t first, int ranks) {
  LastOps ops{std::vector<uint32_t>(ranks, kNone), std::vector<uint32_t>(ranks, kNone)};
  for (uint32_t i = first; i < dag.size(); ++i) {
    ops.send[dag.transfer(i).src_rank] = i;
    ops.recv[dag.transfer(i).dst_rank] = i;
  }
  return ops;
}

// The ring builders on one loop's share, in ring positions.
TransferDag ring_loop(const std::string& collective, int ranks, int64_t count, int elem_bytes) {
  if (collective == "all_reduce") return ring_allreduce(ranks, count, elem_bytes);
  if (collective == "all_gather") return ring_allgather(ranks, count, elem_bytes);
  return ring_reducescatter(ranks, count, elem_bytes);
}

// Copies `dag` with each transfer's payload framed in the protocol's lines and its delay set.
TransferDag finalize(const TransferDag& dag, const CollectiveSpec& spec, const RankLayout& layout) {
  TransferDag out;
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    const int64_t bytes =
        (t.bytes + spec.line_data_bytes - 1) / spec.line_data_bytes * spec.line_bytes;
    out.add_like(t, t.src_rank, t.dst_rank, bytes, t.flow);
    // A compute task keeps its own duration (an algorithm's 0-duration join waits for no step);
    // a transfer waits its step latency, or the longer delay its builder set (CollNet's sends
    // after the switches' join).
    int64_t delay = t.is_compute() ? t.delay_ps : std::max(spec.step_latency_ps, t.delay_ps);
    if (dag.dependency_count(i) == 0) delay += spec.launch_latency_ps;
    if (spec.staging_rate_bps > 0 && layout.server_of(t.src_rank) != layout.server_of(t.dst_rank)) {
      const int64_t exposed =
          spec.staging_unit_bytes > 0 ? std::min(bytes, spec.staging_unit_bytes) : bytes;
      delay += spec.staging_latency_ps + 2 * serialization_ps(exposed, spec.staging_rate_bps);
    }
    out.set_delay(i, delay);
    if (!t.is_compute()) out.set_pace(i, spec.pace_bps);
  }
  out.copy_dependencies(dag, 0);
  return out;
}

// The streaming protocols' transfers, cut as CollectiveSpec::stream_unit_bytes says: `dag` is
// finalized (framed bytes, delays, paces); `unit` is the stream unit in framed bytes.
TransferDag stream(const TransferDag& dag, int64_t unit, const RankLayout& layout) {
  const uint32_t n = static_cast<uint32_t>(dag.size());
  std::vector<std::vector<uint32_t>> waits(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t d : dag.dependents(i)) waits[d].push_back(i);
  }
  auto moves = [&](uint32_t i) {
    const Transfer& t = dag.transfer(i);
    return !t.is_compute() && !t.loopback && t.bytes > unit;
  };
  auto inside = [&](uint32_t i) {
    return layout.server_of(dag.transfer(i).src_rank) == layout.server_of(dag.transfer(i).dst_rank);
  };
  // p forwards into i inside one server: i sends on, from the GPU p delivered to, what p
  // brought. (After a network hop the GPU would forward at the network's rate, which the
  // parts cannot follow: a body sent on at the GPU's pace would overtake its own data. There
  // i waits for the whole of p.)
  auto feeds = [&](uint32_t p, uint32_t i) {
    return moves(p) && inside(p) && dag.transfer(p).dst_rank == dag.transfer(i).src_rank;
  };
  // i streams: it stays in one server (a GPU writing to its peer as it reads) and forwards.
  std::vector<uint8_t> streams(n, 0), cut(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (!moves(i) || !inside(i)) continue;
    for (uint32_t p : waits[i]) {
      if (feeds(p, i)) streams[i] = 1;
    }
    if (!streams[i]) continue;
    cut[i] = 1;
    for (uint32_t p : waits[i]) {
      if (feeds(p, i)) cut[p] = 1;  // arrives in parts for i to stream
    }
  }
  TransferDag out;
  std::vector<uint32_t> head(n), body(n), tail(n);
  for (uint32_t i = 0; i < n; ++i) {
    const Transfer& t = dag.transfer(i);
    if (!cut[i]) {
      head[i] = body[i] = tail[i] = out.add_like(t, t.src_rank, t.dst_rank, t.bytes, t.flow);
      for (uint32_t p : waits[i]) out.depends(head[i], tail[p]);
      continue;
    }
    // A head of one unit, a tail of at most one, the rest between them (none below 2 units).
    const int64_t tail_bytes = std::min(unit, t.bytes - unit);
    const int64_t body_bytes = t.bytes - unit - tail_bytes;
    head[i] = out.add_like(t, t.src_rank, t.dst_rank, unit, t.flow);
    body[i] =
        body_bytes > 0 ? out.add_like(t, t.src_rank, t.dst_rank, body_bytes, t.flow) : head[i];
    tail[i] = out.add_like(t, t.src_rank, t.dst_rank, tail_bytes, t.flow);
    for (uint32_t p : waits[i]) {
      const bool streamed = streams[i] && feeds(p, i);
      out.depends(head[i], streamed ? head[p] : tail[p]);
      if (body[i] != head[i]) out.depends(body[i], streamed ? head[p] : tail[p]);
      out.depends(tail[i], tail[p]);
    }
  }
  // A slot is free once what its receiver forwards is posted in full: every part of i waits
  // for p's tail. (Added by p, without a list per transfer of what it waits for: the same
  // edges in the same order per p as adding them with i.)
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t i : dag.post_dependents(p)) {
      out.depends_on_post(head[i], tail[p]);
      if (body[i] != head[i]) out.depends_on_post(body[i], tail[p]);
      if (tail[i] != head[i]) out.depends_on_post(tail[i], tail[p]);
    }
  }
  return out;
}

// PXN (NCCL >= 2.12 on NVSwitch servers): a point-to-point transfer between servers whose GPUs
// sit on different rails first moves over NVLink to the GPU of the source server on the
// destination's rail, then crosses the network on that rail. Each such transfer becomes two;
// whatever waited for it waits for the second.
TransferDag pxn_split(const TransferDag& dag, const RankLayout& layout) {
  const int g = layout.gpus_per_server;
  TransferDag out;
  std::vector<uint32_t> done(dag.size());      // the new id whose completion stands for old id i
  std::vector<uint32_t> first_of(dag.size());  // the new id that starts old id i
  std::vector<std::vector<uint32_t>> waits(dag.size());
  for (uint32_t i = 0; i < dag.size(); ++i) {
    for (uint32_t d : dag.dependents(i)) waits[d].push_back(i);
  }
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    const int src_server = layout.server_of(t.src_rank), dst_server = layout.server_of(t.dst_rank);
    const int proxy = src_server * g + t.dst_rank % g;
    const bool split = src_server != dst_server && t.src_rank % g != t.dst_rank % g &&
                       proxy < layout.ranks && proxy != t.src_rank;
    uint32_t first = 0;
    if (split) {
      first = out.add(t.src_rank, proxy, t.bytes, t.flow);
      done[i] = out.add(proxy, t.dst_rank, t.bytes, t.flow);
      out.depends(done[i], first);
    } else {
      first = done[i] = out.add(t.src_rank, t.dst_rank, t.bytes, t.flow);
    }
    for (uint32_t w : waits[i]) out.depends(first, done[w]);
    first_of[i] = first;
  }
  for (uint32_t w = 0; w < dag.size(); ++w) {
    // w is posted when its first part (its sender's) is.
    for (uint32_t i : dag.post_dependents(w)) out.depends_on_post(first_of[i], first_of[w]);
  }
  return out;
}

}  // namespace

int RankLayout::gpus_in(int s) const {
  return std::min(gpus_per_server, ranks - s * gpus_per_server);
}

std::vector<int> ring_order(const RankLayout& layout, int channel) {
  if (layout.ranks < 2 || layout.gpus_per_server < 1 || channel < 0) {
    throw std::invalid_argument("ring_order: needs ranks >= 2, gpus_per_server >= 1, channel >= 0");
  }
  std::vector<int> order;
  order.reserve(layout.ranks);
  const int servers = layout.servers();
  if (servers == 1 || layout.gpus_per_server == 1) {
    for (int i = 0; i < layout.ranks; ++i) order.push_back((i + channel) % layout.ranks);
    return order;
  }
  const int g = layout.gpus_per_server;
  int entry = channel % g;  // local GPU the ring enters the server at
  for (int s = 0; s < servers; ++s) {
    const int n = layout.gpus_in(s);
    const int e = entry % n;
    const int step = s % 2 == 0 ? 1 : -1;  // ascending, then descending: a snake
    for (int i = 0; i < n; ++i) order.push_back(s * g + mod(e + step * i, n));
    entry = mod(e - step, n);  // left from the last GPU visited; the next server enters there
  }
  return order;
}

bool algorithm_supports(const std::string& algorithm, const std::string& collective) {
  const CollectiveAlgorithm* a = find_collective_algorithm(algorithm);
  return a != nullptr && a->serves(collective);
}

namespace builtin {

TransferDag tree_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                     int elem_bytes) {
  const int n = layout.ranks;
  if (n % layout.gpus_per_server != 0) {
    throw std::invalid_argument("build_collective: tree needs whole servers");
  }
  const int64_t chunk = spec.chunk_bytes > 0 ? std::max<int64_t>(spec.chunk_bytes, elem_bytes)
                                             : std::max<int64_t>(buffer_count, 1) * elem_bytes;
  return tree_allreduce(TreeLayout{n / layout.gpus_per_server, layout.gpus_per_server},
                        buffer_count, elem_bytes, spec.channels, chunk);
}

TransferDag halving_doubling_dag(const RankLayout& layout, const CollectiveSpec& spec,
                                 int64_t buffer_count, int elem_bytes) {
  TransferDag dag;
  for (int c = 0; c < spec.channels; ++c) {
    const int64_t part = part_count(buffer_count, spec.channels, c);
    append(dag, halving_doubling_allreduce(layout.ranks, part, elem_bytes), {},
           static_cast<uint32_t>(c));
  }
  return dag;
}

TransferDag p2p_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                    int elem_bytes) {
  const int n = layout.ranks;
  TransferDag dag;
  for (int c = 0; c < spec.channels; ++c) {
    const int64_t part = part_count(buffer_count, spec.channels, c);
    const uint32_t flow = static_cast<uint32_t>(c);
    if (spec.collective == "alltoall") {
      append(dag, pxn_split(alltoall(n, part, elem_bytes), layout), {}, flow);
    } else {
      append(dag, pxn_split(sendrecv(n, part, elem_bytes), layout), {}, flow);
    }
  }
  return dag;
}

TransferDag ring_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                     int elem_bytes) {
  const int n = layout.ranks;
  TransferDag dag;
  for (int c = 0; c < spec.channels; ++c) {
    const int64_t part = part_count(buffer_count, spec.channels, c);
    const uint32_t flow = static_cast<uint32_t>(c);
    if (spec.collective == "broadcast" || spec.collective == "reduce") {
      const std::vector<int> order = ring_order(layout, c);
      const int root_pos =
          static_cast<int>(std::find(order.begin(), order.end(), spec.root) - order.begin());
      const int64_t bytes = part * elem_bytes;
      const int chunks = spec.chunk_bytes > 0
                             ? static_cast<int>(std::max<int64_t>(
                                   1, (bytes + spec.chunk_bytes - 1) / spec.chunk_bytes))
                             : 1;
      append(dag,
             spec.collective == "broadcast" ? ring_broadcast(n, part, elem_bytes, root_pos, chunks)
                                            : ring_reduce(n, part, elem_bytes, root_pos, chunks),
             order, flow);
    } else {
      const std::vector<int> order = ring_order(layout, c);
      const int64_t loop_bytes = spec.chunk_bytes > 0 ? int64_t{n} * spec.chunk_bytes : 0;
      const int64_t bytes = part * elem_bytes;
      const int64_t loops =
          loop_bytes > 0 ? std::max<int64_t>(1, (bytes + loop_bytes - 1) / loop_bytes) : 1;
      LastOps prev;
      for (int64_t l = 0; l < loops; ++l) {
        const int64_t share = part / loops + (l < part % loops ? 1 : 0);
        const TransferDag sub = ring_loop(spec.collective, n, share, elem_bytes);
        const uint32_t base = append(dag, sub, order, flow);
        if (l > 0) {
          // A rank starts loop l with its first send, once its loop l−1 is over.
          for (uint32_t i = 0; i < sub.size(); ++i) {
            if (sub.dependency_count(i) != 0) continue;
            const int r = dag.transfer(base + i).src_rank;
            if (prev.send[r] != kNone) dag.depends(base + i, prev.send[r]);
            if (prev.recv[r] != kNone) dag.depends(base + i, prev.recv[r]);
          }
        }
        prev = last_ops(dag, base, n);
      }
    }
  }
  return dag;
}

namespace {
int64_t pieces_of(int64_t bytes, int64_t unit) {
  return unit > 0 ? std::max<int64_t>(1, (bytes + unit - 1) / unit) : int64_t{1};
}
}  // namespace

int64_t tree_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                       int elem_bytes) {
  const int64_t n = layout.ranks;
  return pieces_of(bytes, std::max<int64_t>(spec.chunk_bytes, elem_bytes)) * 2 * (n - 1);
}

int64_t halving_doubling_transfers(const RankLayout& layout, const CollectiveSpec&, int64_t, int) {
  const int64_t n = layout.ranks;
  int64_t p = 1, log2p = 0;
  while (p * 2 <= n) {
    p *= 2;
    ++log2p;
  }
  return 2 * p * log2p + 2 * (n - p);
}

int64_t p2p_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t, int) {
  const int64_t n = layout.ranks;
  return spec.collective == "alltoall" ? 2 * n * (n - 1) : 2 * n;
}

int64_t ring_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes, int) {
  const int64_t n = layout.ranks;
  if (spec.collective == "broadcast" || spec.collective == "reduce") {
    return pieces_of(bytes, spec.chunk_bytes) * (n - 1);
  }
  const int64_t steps = spec.collective == "all_reduce" ? 2 * (n - 1) : n - 1;
  return pieces_of(bytes, spec.chunk_bytes > 0 ? n * spec.chunk_bytes : 0) * steps * n;
}

}  // namespace builtin

TransferDag build_collective(const RankLayout& layout, const CollectiveSpec& spec,
                             int64_t buffer_count, int elem_bytes) {
  const int n = layout.ranks;
  if (!algorithm_supports(spec.algorithm, spec.collective)) {
    throw std::invalid_argument("build_collective: algorithm '" + spec.algorithm +
                                "' does not run collective '" + spec.collective + "'");
  }
  if (n < 2 || layout.gpus_per_server < 1 || buffer_count < 0 || elem_bytes <= 0 ||
      spec.channels < 1 || spec.chunk_bytes < 0 || spec.line_data_bytes < 1 ||
      spec.line_bytes < spec.line_data_bytes || spec.step_latency_ps < 0 ||
      spec.launch_latency_ps < 0 || spec.staging_latency_ps < 0 || spec.staging_rate_bps < 0 ||
      spec.staging_unit_bytes < 0 || spec.pace_bps < 0 || spec.stream_unit_bytes < 0 ||
      spec.stream_unit_bytes % spec.line_data_bytes != 0) {
    throw std::invalid_argument("build_collective: bad layout, buffer or spec");
  }
  if (spec.root < 0 || spec.root >= n) {
    throw std::invalid_argument("build_collective: root outside [0, ranks)");
  }
  const CollectiveAlgorithm& algorithm = *find_collective_algorithm(spec.algorithm);
  TransferDag dag = finalize(algorithm.build(layout, spec, buffer_count, elem_bytes), spec, layout);
  if (spec.stream_unit_bytes == 0) return dag;
  return stream(dag, spec.stream_unit_bytes / spec.line_data_bytes * spec.line_bytes, layout);
}

int64_t estimate_transfers(const RankLayout& layout, const CollectiveSpec& spec,
                           int64_t buffer_count, int elem_bytes) {
  const int64_t n = layout.ranks;
  if (!algorithm_supports(spec.algorithm, spec.collective) || n < 2 || buffer_count < 0 ||
      elem_bytes <= 0 || spec.channels < 1 || spec.chunk_bytes < 0) {
    throw std::invalid_argument("estimate_transfers: bad layout, buffer or spec");
  }
  const CollectiveAlgorithm& algorithm = *find_collective_algorithm(spec.algorithm);
  int64_t total = 0;
  for (int c = 0; c < spec.channels; ++c) {
    const int64_t bytes = part_count(buffer_count, spec.channels, c) * elem_bytes;
    total += algorithm.estimate_transfers(layout, spec, bytes, elem_bytes);
  }
  // Streamed: up to three parts each, where a server has GPUs to stream between.
  return spec.stream_unit_bytes > 0 && layout.gpus_per_server > 1 ? 3 * total : total;
}

}  // namespace fabricsim
