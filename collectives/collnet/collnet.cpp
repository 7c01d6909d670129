#include "collectives/collnet/collnet.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/builtin_algorithms.hpp"

namespace fabricsim {

namespace {

[[noreturn]] void fail(const char* who, const char* why) {
  throw std::invalid_argument(std::string(who) + ": " + why);
}

void check_args(const char* who, int servers, int gpus_per_server, int64_t count, int elem_bytes,
                int64_t chunk_bytes) {
  if (servers < 1) fail(who, "servers must be >= 1");
  if (gpus_per_server < 1) fail(who, "gpus_per_server must be >= 1");
  const int64_t ranks = int64_t{servers} * gpus_per_server;
  if (ranks < 2) fail(who, "needs at least 2 ranks");
  if (ranks > std::numeric_limits<int32_t>::max()) fail(who, "more than 2^31 - 1 ranks");
  if (count < 0) fail(who, "negative count");
  if (elem_bytes <= 0) fail(who, "elem_bytes must be > 0");
  if (chunk_bytes < elem_bytes) fail(who, "chunk_bytes must be >= elem_bytes");
}

// Elements of part `i` of `count` cut into `parts` (the first count % parts one larger).
int64_t part_elems(int64_t count, int parts, int i) {
  return count / parts + (i < count % parts ? 1 : 0);
}

int64_t chunks_of(int64_t elems, int64_t chunk_elems) {
  return std::max<int64_t>(1, (elems + chunk_elems - 1) / chunk_elems);
}

// Σ over `parts` parts of chunks × the block of one chunk, saturating at INT64_MAX.
int64_t transfers_of(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                     int64_t chunk_bytes, int parts) {
  const int64_t block = int64_t{servers} * (2 * int64_t{gpus_per_server} - 1) + 1;
  const int64_t chunk_elems = chunk_bytes / elem_bytes;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t transfers = 0;
  for (int i = 0; i < parts; ++i) {
    const int64_t chunks = chunks_of(part_elems(count, parts, i), chunk_elems);
    if (chunks > (kMax - transfers) / block) return kMax;
    transfers += chunks * block;
  }
  return transfers;
}

// Where one server's intra-node sends of a chunk go, in id order: (src, dst) local GPUs.
struct LocalSend {
  int src;
  int dst;
};

// What one chunk's block looks like on every server (the same on each): the intra-node sends
// before the network part (`in`, in id order: Chain's up sends, Direct's scatter), whose sends
// to the head its NIC loopback waits for; the head; and those after it (`out`: Chain's down
// sends, Direct's bcast), each after the join or the `out` send named by `out_after`.
struct ChunkShape {
  int head = 0;
  std::vector<LocalSend> in, out;
  std::vector<int> in_after;   // index into `in` this send waits for, or −1
  std::vector<int> out_after;  // index into `out` this send waits for, or −1 (the join)
  uint32_t in_flow = 0, out_flow = 0, loop_flow = 0;
};

// Adds one pipeline (a channel's part or a head's slice) of `elems` elements to `dag`: per chunk
// one block as collnet.hpp lays it out.
void add_pipeline(TransferDag& dag, const ChunkShape& shape, int servers, int gpus, int64_t elems,
                  int64_t chunk_elems, int elem_bytes, int window, int64_t join_delay_ps) {
  const int64_t chunks = chunks_of(elems, chunk_elems);
  const auto n_in = static_cast<uint32_t>(shape.in.size());
  const auto n_out = static_cast<uint32_t>(shape.out.size());
  const uint32_t block = static_cast<uint32_t>(servers) * (n_in + 1 + n_out) + 1;
  auto rank = [gpus](int v, int i) { return static_cast<int32_t>(int64_t{v} * gpus + i); };
  std::vector<uint32_t> loops(static_cast<size_t>(servers));
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t bytes = std::min(chunk_elems, elems - k * chunk_elems) * elem_bytes;
    // The same transfer of chunk k − window (same connection), when there is one.
    auto windowed = [&](uint32_t id) {
      if (k >= window) dag.depends(id, id - static_cast<uint32_t>(window) * block);
    };
    for (int v = 0; v < servers; ++v) {
      const uint32_t v_first = static_cast<uint32_t>(dag.size());
      for (uint32_t j = 0; j < n_in; ++j) {
        const LocalSend& s = shape.in[j];
        const uint32_t id = dag.add(rank(v, s.src), rank(v, s.dst), bytes, shape.in_flow);
        if (shape.in_after[j] >= 0) dag.depends(id, v_first + uint32_t(shape.in_after[j]));
        windowed(id);
      }
      const uint32_t loop = dag.add_nic_loopback(rank(v, shape.head), bytes, shape.loop_flow);
      for (uint32_t j = 0; j < n_in; ++j) {
        if (shape.in[j].dst == shape.head) dag.depends(loop, v_first + j);
      }
      windowed(loop);
      loops[static_cast<size_t>(v)] = loop;
    }
    // SHARP's reduction over the servers: nothing leaves the network before every server's
    // contribution is in, and then join_delay_ps more (the header says why).
    const uint32_t join = dag.add_compute(0, join_delay_ps);
    for (uint32_t loop : loops) dag.depends(join, loop);
    for (int v = 0; v < servers; ++v) {
      const uint32_t v_first = static_cast<uint32_t>(dag.size());
      for (uint32_t j = 0; j < n_out; ++j) {
        const LocalSend& s = shape.out[j];
        const uint32_t id = dag.add(rank(v, s.src), rank(v, s.dst), bytes, shape.out_flow);
        if (shape.out_after[j] >= 0) {
          dag.depends(id, v_first + uint32_t(shape.out_after[j]));
        } else {
          dag.depends(id, join);
          dag.set_delay(id, join_delay_ps);  // at least that long after the join, too
        }
        windowed(id);
      }
    }
  }
}

}  // namespace

int64_t collnet_chain_transfers(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                int64_t chunk_bytes, int channels) {
  const char* const who = "collnet_chain_transfers";
  check_args(who, servers, gpus_per_server, count, elem_bytes, chunk_bytes);
  if (channels < 1) fail(who, "channels must be >= 1");
  return transfers_of(servers, gpus_per_server, count, elem_bytes, chunk_bytes, channels);
}

int64_t collnet_direct_transfers(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                 int64_t chunk_bytes) {
  check_args("collnet_direct_transfers", servers, gpus_per_server, count, elem_bytes, chunk_bytes);
  return transfers_of(servers, gpus_per_server, count, elem_bytes, chunk_bytes, gpus_per_server);
}

TransferDag collnet_chain_allreduce(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                    int64_t chunk_bytes, int channels, int window,
                                    int64_t join_delay_ps) {
  const char* const who = "collnet_chain_allreduce";
  if (join_delay_ps < 0) fail(who, "join_delay_ps must be >= 0");
  check_args(who, servers, gpus_per_server, count, elem_bytes, chunk_bytes);
  if (channels < 1) fail(who, "channels must be >= 1");
  if (window < 1) fail(who, "window must be >= 1");
  if (collnet_chain_transfers(servers, gpus_per_server, count, elem_bytes, chunk_bytes, channels) >
      std::numeric_limits<uint32_t>::max()) {
    fail(who, "more than 2^32 - 1 transfers");
  }
  const int g = gpus_per_server;
  TransferDag dag;
  for (int c = 0; c < channels; ++c) {
    ChunkShape shape;
    shape.head = c % g;
    auto at = [&](int p) { return (shape.head + p) % g; };  // the GPU at chain position p
    // Up: position p to p − 1, the far end (G − 1) first; each after the one into it.
    for (int p = g - 1; p >= 1; --p) {
      shape.in.push_back({at(p), at(p - 1)});
      shape.in_after.push_back(p == g - 1 ? -1 : static_cast<int>(shape.in.size()) - 2);
    }
    // Down: position p to p + 1, the head first; each after the one into it.
    for (int p = 0; p + 1 < g; ++p) {
      shape.out.push_back({at(p), at(p + 1)});
      shape.out_after.push_back(p == 0 ? -1 : static_cast<int>(shape.out.size()) - 2);
    }
    shape.in_flow = static_cast<uint32_t>(c);
    shape.out_flow = static_cast<uint32_t>(channels) + static_cast<uint32_t>(c);
    shape.loop_flow = static_cast<uint32_t>(c);
    add_pipeline(dag, shape, servers, g, part_elems(count, channels, c), chunk_bytes / elem_bytes,
                 elem_bytes, window, join_delay_ps);
  }
  return dag;
}

TransferDag collnet_direct_allreduce(int servers, int gpus_per_server, int64_t count,
                                     int elem_bytes, int64_t chunk_bytes, int window,
                                     int64_t join_delay_ps) {
  const char* const who = "collnet_direct_allreduce";
  if (join_delay_ps < 0) fail(who, "join_delay_ps must be >= 0");
  check_args(who, servers, gpus_per_server, count, elem_bytes, chunk_bytes);
  if (window < 1) fail(who, "window must be >= 1");
  if (collnet_direct_transfers(servers, gpus_per_server, count, elem_bytes, chunk_bytes) >
      std::numeric_limits<uint32_t>::max()) {
    fail(who, "more than 2^32 - 1 transfers");
  }
  const int g = gpus_per_server;
  TransferDag dag;
  for (int h = 0; h < g; ++h) {
    ChunkShape shape;
    shape.head = h;
    for (int i = 0; i < g; ++i) {
      if (i == h) continue;
      shape.in.push_back({i, h});  // scatter: i's chunk of slice h to head h
      shape.in_after.push_back(-1);
      shape.out.push_back({h, i});  // bcast: the servers' sum from head h to i
      shape.out_after.push_back(-1);
    }
    shape.in_flow = static_cast<uint32_t>(g) + static_cast<uint32_t>(h);
    shape.out_flow = static_cast<uint32_t>(h);
    shape.loop_flow = static_cast<uint32_t>(h);
    add_pipeline(dag, shape, servers, g, part_elems(count, g, h), chunk_bytes / elem_bytes,
                 elem_bytes, window, join_delay_ps);
  }
  return dag;
}

namespace builtin {

namespace {

/// The chunk build_collective asks for (NCCL's, nccl_plan.cpp), else the whole buffer.
int64_t collnet_chunk(const CollectiveSpec& spec, int64_t buffer_count, int elem_bytes) {
  return spec.chunk_bytes > 0 ? std::max<int64_t>(spec.chunk_bytes, elem_bytes)
                              : std::max<int64_t>(buffer_count, 1) * elem_bytes;
}

void need_whole_servers(const RankLayout& layout, const char* name) {
  if (layout.ranks % layout.gpus_per_server != 0) {
    throw std::invalid_argument(std::string("build_collective: ") + name + " joins whole servers");
  }
}

}  // namespace

TransferDag collnet_chain_dag(const RankLayout& layout, const CollectiveSpec& spec,
                              int64_t buffer_count, int elem_bytes) {
  need_whole_servers(layout, "collnet_chain");
  return collnet_chain_allreduce(layout.servers(), layout.gpus_per_server, buffer_count, elem_bytes,
                                 collnet_chunk(spec, buffer_count, elem_bytes), spec.channels,
                                 kConnectionWindow, spec.collnet_join_ps);
}

TransferDag collnet_direct_dag(const RankLayout& layout, const CollectiveSpec& spec,
                               int64_t buffer_count, int elem_bytes) {
  need_whole_servers(layout, "collnet_direct");
  // NCCL runs every head in each of its channels, NCCL_STEPS slots a connection each; one
  // pipeline a head here, so its window is theirs together.
  return collnet_direct_allreduce(layout.servers(), layout.gpus_per_server, buffer_count,
                                  elem_bytes, collnet_chunk(spec, buffer_count, elem_bytes),
                                  kConnectionWindow * std::max(1, spec.channels),
                                  spec.collnet_join_ps);
}

int64_t collnet_chain_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec,
                                    int64_t bytes, int elem_bytes) {
  // One channel's part (estimate_transfers sums the channels).
  const int64_t chunk = std::max<int64_t>(spec.chunk_bytes, elem_bytes);
  return collnet_chain_transfers(layout.servers(), std::max(1, layout.gpus_per_server),
                                 bytes / elem_bytes, elem_bytes, chunk, 1);
}

int64_t collnet_direct_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec,
                                     int64_t bytes, int elem_bytes) {
  // One channel's part of the buffer: the parts' counts add up to about the whole DAG's.
  const int64_t chunk = std::max<int64_t>(spec.chunk_bytes, elem_bytes);
  return collnet_direct_transfers(layout.servers(), std::max(1, layout.gpus_per_server),
                                  bytes / elem_bytes, elem_bytes, chunk);
}

}  // namespace builtin

}  // namespace fabricsim
