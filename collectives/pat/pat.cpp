#include "collectives/pat/pat.hpp"

#include <algorithm>
#include <bit>
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

// D = ⌈log2 ranks⌉, the number of dimensions.
int dimensions(int ranks) {
  int d = 0;
  while ((int64_t{1} << d) < ranks) ++d;
  return d;
}

// k_d = |{u : u a multiple of 2^(d+1), u + 2^d < ranks}| (2^d < ranks): the u in
// [0, ranks − 2^d) stepping by 2^(d+1).
int64_t pieces_at(int ranks, int d) {
  const int64_t limit = ranks - (int64_t{1} << d), step = int64_t{1} << (d + 1);
  return (limit + step - 1) / step;
}

// Everything the builders and pat_transfers derive from their arguments, checked.
struct Plan {
  int ranks = 0;
  int dims = 0;
  std::vector<int64_t> pieces;  // k_d per dimension d
  int64_t chunk_elems = 0;
  std::vector<int64_t> part_elems, chunks;  // per channel
  std::vector<int> aggregation;             // per channel
  int64_t transfers = 0;
};

int64_t messages_per_rank(const Plan& p, int aggregation) {
  int64_t m = 0;
  for (int64_t k : p.pieces) m += (k + aggregation - 1) / aggregation;
  return m;
}

Plan make_plan(const char* who, int ranks, int64_t count, int elem_bytes, int channels,
               int64_t chunk_bytes, int64_t step_bytes) {
  if (ranks < 2) fail(who, "ranks must be >= 2");
  if (count < 0) fail(who, "negative count");
  if (elem_bytes <= 0) fail(who, "elem_bytes must be > 0");
  if (channels < 1) fail(who, "channels must be >= 1");
  if (chunk_bytes < elem_bytes) fail(who, "chunk_bytes must be >= elem_bytes");
  if (step_bytes < 1) fail(who, "step_bytes must be >= 1");
  Plan p;
  p.ranks = ranks;
  p.dims = dimensions(ranks);
  for (int d = 0; d < p.dims; ++d) p.pieces.push_back(pieces_at(ranks, d));
  p.chunk_elems = chunk_bytes / elem_bytes;
  for (int c = 0; c < channels; ++c) {
    const int64_t part = count / channels + (c < count % channels ? 1 : 0);
    const int64_t chunks = std::max<int64_t>(1, (part + p.chunk_elems - 1) / p.chunk_elems);
    const int agg = pat_aggregation(ranks, step_bytes, part * elem_bytes);
    const int64_t block = int64_t{ranks} * messages_per_rank(p, agg);  // < 2^62
    if (chunks > (std::numeric_limits<int64_t>::max() - p.transfers) / block)
      fail(who, "transfer count overflows int64");
    p.transfers += chunks * block;
    p.part_elems.push_back(part);
    p.chunks.push_back(chunks);
    p.aggregation.push_back(agg);
  }
  return p;
}

TransferDag build(bool all_gather, const char* who, int ranks, int64_t count, int elem_bytes,
                  int channels, int64_t chunk_bytes, int64_t step_bytes) {
  const Plan p = make_plan(who, ranks, count, elem_bytes, channels, chunk_bytes, step_bytes);
  if (p.transfers > std::numeric_limits<uint32_t>::max()) fail(who, "more than 2^32 - 1 transfers");
  const int n = ranks, dims = p.dims;
  auto wrap = [n](int64_t r) { return static_cast<int32_t>(((r % n) + n) % n); };
  // Dimensions in schedule order: AllGather from the farthest, ReduceScatter from the nearest.
  std::vector<int> order(dims);
  for (int i = 0; i < dims; ++i) order[i] = all_gather ? dims - 1 - i : i;

  TransferDag dag;
  std::vector<uint32_t> deps;
  for (int c = 0; c < channels; ++c) {
    const int agg = p.aggregation[c];
    // msgs[d]: messages per rank at dimension d; dim_base[d]: where dimension d starts in a block.
    std::vector<int64_t> msgs(dims), dim_base(dims);
    int64_t block = 0;
    for (int d : order) {
      msgs[d] = (p.pieces[d] + agg - 1) / agg;
      dim_base[d] = block;
      block += n * msgs[d];
    }
    const int last_dim = order.back();
    const auto flow = static_cast<uint32_t>(c);
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> last_send(n, kNone);  // each rank's last send of the previous chunk
    for (int64_t k = 0; k < p.chunks[c]; ++k) {
      const int64_t bytes =
          std::min(p.chunk_elems, p.part_elems[c] - k * p.chunk_elems) * elem_bytes;
      const auto base = static_cast<uint32_t>(dag.size());
      // The message of `rank` at dimension d carrying the d-th list's entry `index` (U_d[index]
      // for AllGather, the distance U_d[index] + 2^d for ReduceScatter).
      auto message = [&](int d, int32_t rank, int64_t index) {
        return base + static_cast<uint32_t>(dim_base[d] + rank * msgs[d] + index / agg);
      };
      for (int d : order) {
        const int64_t dist = int64_t{1} << d;
        for (int32_t r = 0; r < n; ++r) {
          for (int64_t m = 0; m < msgs[d]; ++m) {
            const int64_t first = m * agg, end = std::min(p.pieces[d], first + agg);
            const uint32_t id = dag.add(r, wrap(r + dist), (end - first) * bytes, flow);
            deps.clear();
            for (int64_t i = first; i < end; ++i) {
              if (all_gather) {
                // Offset u arrived over the dimension of its lowest set bit (u = 0: own piece).
                const int64_t u = i << (d + 1);
                if (u == 0) continue;
                const int e = std::countr_zero(static_cast<uint64_t>(u));
                deps.push_back(message(e, wrap(r - (int64_t{1} << e)), (u >> (e + 1))));
              } else {
                // The partial sum for distance w gathers what came in at every lower dimension.
                const int64_t w = (i << (d + 1)) + dist;
                for (int e = 0; e < d; ++e) {
                  const int64_t from = int64_t{1} << e;
                  if (w + from < n) deps.push_back(message(e, wrap(r - from), w >> (e + 1)));
                }
              }
            }
            // NCCL's kernel runs a channel's chunks one after the other (its step loop moves to
            // the next chunk's offset once every dimension of this one is done), so a rank
            // starts chunk k + 1 only after its last send of chunk k.
            if (last_send[r] != kNone) deps.push_back(last_send[r]);
            std::sort(deps.begin(), deps.end());
            deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
            for (uint32_t before : deps) dag.depends(id, before);
          }
        }
      }
      for (int32_t r = 0; r < n; ++r) last_send[r] = message(last_dim, r, p.pieces[last_dim] - 1);
    }
  }
  return dag;
}

}  // namespace

int pat_aggregation(int ranks, int64_t step_bytes, int64_t piece_bytes) {
  if (ranks < 2) fail("pat_aggregation", "ranks must be >= 2");
  if (step_bytes < 1) fail("pat_aggregation", "step_bytes must be >= 1");
  if (piece_bytes < 0) fail("pat_aggregation", "negative piece_bytes");
  const int64_t pieces_per_step = step_bytes / std::max<int64_t>(piece_bytes, 1);
  int agg = 1;
  while (pieces_per_step / agg >= 2 && agg < ranks / 2) agg *= 2;
  // Then NCCL_STEPS (kConnectionWindow = 8) halved down to 1: 3 more doublings at most.
  for (int depth = kConnectionWindow; depth > 1 && agg < ranks / 2; depth /= 2) agg *= 2;
  return agg;
}

int64_t pat_chunk_bytes(bool all_gather, int64_t total_bytes, int channels, int64_t step_bytes) {
  if (total_bytes < 0) fail("pat_chunk_bytes", "negative total_bytes");
  if (channels < 1) fail("pat_chunk_bytes", "channels must be >= 1");
  if (step_bytes < 1) fail("pat_chunk_bytes", "step_bytes must be >= 1");
  // calcCollChunking's PAT branch (NCCL src/enqueue.cc): aim for at least 32 (AllGather) or 16
  // (ReduceScatter) chunks per channel, but no chunk below 64 KiB.
  const int64_t per_chunk = int64_t{channels} * (all_gather ? 32 : 16);
  int64_t chunk = step_bytes;
  // chunk × per_chunk > total_bytes  <=>  chunk > ⌊total_bytes / per_chunk⌋ (no overflow).
  while (chunk > total_bytes / per_chunk && chunk > 65536) chunk /= 2;
  return chunk;
}

TransferDag pat_all_gather(int ranks, int64_t count, int elem_bytes, int channels,
                           int64_t chunk_bytes, int64_t step_bytes) {
  return build(true, "pat_all_gather", ranks, count, elem_bytes, channels, chunk_bytes, step_bytes);
}

TransferDag pat_reduce_scatter(int ranks, int64_t count, int elem_bytes, int channels,
                               int64_t chunk_bytes, int64_t step_bytes) {
  return build(false, "pat_reduce_scatter", ranks, count, elem_bytes, channels, chunk_bytes,
               step_bytes);
}

int64_t pat_transfers(int ranks, int64_t count, int elem_bytes, int channels, int64_t chunk_bytes,
                      int64_t step_bytes) {
  return make_plan("pat_transfers", ranks, count, elem_bytes, channels, chunk_bytes, step_bytes)
      .transfers;
}

namespace builtin {

namespace {

/// NCCL's PAT kernels pass the chunk size as the aggregation's step size (all_gather.h).
int64_t pat_chunk(const CollectiveSpec& spec, int64_t rank_count, int elem_bytes) {
  return spec.chunk_bytes > 0 ? std::max<int64_t>(spec.chunk_bytes, elem_bytes)
                              : std::max<int64_t>(rank_count, 1) * elem_bytes;
}

}  // namespace

TransferDag pat_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                    int elem_bytes) {
  // The builder's buffer is every rank's piece (plan.hpp build_collective): N × count.
  const int n = layout.ranks;
  const int64_t count = buffer_count / n;
  const int64_t chunk = pat_chunk(spec, count, elem_bytes);
  if (spec.collective == "all_gather") {
    return pat_all_gather(n, count, elem_bytes, spec.channels, chunk, chunk);
  }
  return pat_reduce_scatter(n, count, elem_bytes, spec.channels, chunk, chunk);
}

int64_t pat_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                          int elem_bytes) {
  // One channel carrying `bytes` of the builder's buffer: bytes / N of every rank's piece.
  const int n = layout.ranks;
  const int64_t count = bytes / elem_bytes / n;
  const int64_t chunk = pat_chunk(spec, count, elem_bytes);
  return pat_transfers(n, count, elem_bytes, 1, chunk, chunk);
}

}  // namespace builtin

}  // namespace fabricsim
