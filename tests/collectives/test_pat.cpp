// NCCL's PAT AllGather and ReduceScatter (collectives/pat/pat.hpp).
//
// The aggregation factor and the chunk size are checked on cases worked by hand from the rules
// of NCCL src/include/collectives.h (PatAGAlgorithm) and src/enqueue.cc (calcCollChunking). The
// DAGs are checked against the schedule of Jeaugey, arXiv:2506.20252, rebuilt here from its
// definition (which pieces each message carries), by tracking data: every AllGather piece reaches
// every rank exactly once, every ReduceScatter contribution reaches its destination exactly once,
// and each message waits for exactly the arrivals of what it carries (plus its sender's previous
// chunk). Byte counts, peer distances and critical paths are checked against closed forms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "collectives/pat/pat.hpp"
#include "collectives/plan.hpp"
#include "dag_support.hpp"

using namespace fabricsim;
using fabricsim::testing::ceil_log2;
using fabricsim::testing::critical_path;

namespace {

// U_d: the offsets u, multiples of 2^(d+1), with u + 2^d < n, ascending (counted one by one).
std::vector<int64_t> offsets(int n, int d) {
  std::vector<int64_t> u;
  for (int64_t x = 0; x < n; ++x) {
    if (x % (int64_t{2} << d) == 0 && x + (int64_t{1} << d) < n) u.push_back(x);
  }
  return u;
}

int64_t k_of(int n, int d) {
  return static_cast<int64_t>(offsets(n, d).size());
}

int64_t part_elems(int64_t count, int channels, int c) {
  return count / channels + (c < count % channels ? 1 : 0);
}

// One message as the header describes it.
struct Msg {
  int block;  // (channel, chunk) index, channel-major
  int channel;
  int dim;
  int rank;
  std::vector<int64_t> entries;  // AllGather: offsets u; ReduceScatter: distances w
  int64_t bytes;
};

struct Args {
  int ranks;
  int64_t count;
  int elem;
  int channels;
  int64_t chunk_bytes;
  int64_t step_bytes;
};

// The messages in the documented id order: channel, chunk, dimension in schedule order, rank,
// message. A (the aggregation) comes from pat_aggregation, checked by hand below.
std::vector<Msg> expected_messages(bool ag, const Args& a) {
  std::vector<Msg> out;
  const int n = a.ranks, dims = ceil_log2(n);
  const int64_t e = a.chunk_bytes / a.elem;
  int block = 0;
  for (int c = 0; c < a.channels; ++c) {
    const int64_t part = part_elems(a.count, a.channels, c);
    const int agg = pat_aggregation(n, a.step_bytes, part * a.elem);
    int64_t left = part;
    do {
      const int64_t chunk = std::min(left, e) * a.elem;
      left -= std::min(left, e);
      for (int i = 0; i < dims; ++i) {
        const int d = ag ? dims - 1 - i : i;
        const std::vector<int64_t> u = offsets(n, d);
        for (int r = 0; r < n; ++r) {
          for (size_t first = 0; first < u.size(); first += agg) {
            Msg m{block, c, d, r, {}, 0};
            for (size_t j = first; j < std::min(u.size(), first + agg); ++j)
              m.entries.push_back(ag ? u[j] : u[j] + (int64_t{1} << d));
            m.bytes = static_cast<int64_t>(m.entries.size()) * chunk;
            out.push_back(m);
          }
        }
      }
      ++block;
    } while (left > 0);
  }
  return out;
}

std::vector<std::vector<uint32_t>> predecessors(const TransferDag& dag) {
  std::vector<std::vector<uint32_t>> preds(dag.size());
  for (uint32_t t = 0; t < dag.size(); ++t) {
    for (uint32_t d : dag.dependents(t)) preds[d].push_back(t);
  }
  for (auto& p : preds) std::sort(p.begin(), p.end());
  return preds;
}

int wrap(int64_t r, int n) {
  return static_cast<int>(((r % n) + n) % n);
}

// Checks `dag` against the expected messages and tracks the data through it.
void check_schedule(bool ag, const Args& a) {
  const TransferDag dag =
      ag ? pat_all_gather(a.ranks, a.count, a.elem, a.channels, a.chunk_bytes, a.step_bytes)
         : pat_reduce_scatter(a.ranks, a.count, a.elem, a.channels, a.chunk_bytes, a.step_bytes);
  const std::vector<Msg> want = expected_messages(ag, a);
  REQUIRE(dag.size() == want.size());
  CHECK(pat_transfers(a.ranks, a.count, a.elem, a.channels, a.chunk_bytes, a.step_bytes) ==
        static_cast<int64_t>(want.size()));
  const int n = a.ranks;
  for (uint32_t t = 0; t < dag.size(); ++t) {
    const Transfer& tr = dag.transfer(t);
    INFO("transfer " << t);
    CHECK(tr.src_rank == want[t].rank);
    CHECK(tr.dst_rank == wrap(int64_t{want[t].rank} + (int64_t{1} << want[t].dim), n));
    CHECK(tr.bytes == want[t].bytes);
    CHECK(tr.flow == static_cast<uint32_t>(want[t].channel));
  }
  const auto preds = predecessors(dag);
  // Per block: AllGather, who delivered origin o to rank r (id; −1 own, −2 not yet);
  // ReduceScatter, the contributions to destination o gathered at rank r and the ids that
  // brought them.
  std::vector<uint32_t> last_send(n, UINT32_MAX), this_last(n, UINT32_MAX);
  int block = -1;
  std::vector<std::vector<int64_t>> delivered;
  std::vector<std::vector<std::vector<int>>> contrib;
  std::vector<std::vector<std::vector<uint32_t>>> brought;
  auto finish_block = [&] {
    if (block < 0) return;
    for (int r = 0; r < n; ++r) {
      for (int o = 0; o < n; ++o) {
        INFO("block " << block << " rank " << r << " origin " << o);
        if (ag) {
          CHECK(delivered[r][o] != -2);  // every rank ends with every piece
        } else if (o == r) {
          std::vector<int> total = contrib[r][r];
          total[r] += 1;                           // its own contribution
          CHECK(total == std::vector<int>(n, 1));  // every contribution exactly once
        }
      }
    }
    last_send = this_last;
  };
  for (uint32_t t = 0; t < dag.size(); ++t) {
    const Msg& m = want[t];
    if (m.block != block) {
      // A new (channel, chunk): last sends only carry over within one channel.
      const bool same_channel = block >= 0 && want[t - 1].channel == m.channel;
      finish_block();
      if (!same_channel) last_send.assign(n, UINT32_MAX);
      block = m.block;
      delivered.assign(n, std::vector<int64_t>(n, -2));
      for (int r = 0; r < n; ++r) delivered[r][r] = -1;
      contrib.assign(n, std::vector<std::vector<int>>(n, std::vector<int>(n, 0)));
      brought.assign(n, std::vector<std::vector<uint32_t>>(n));
    }
    const int r = m.rank, to = wrap(int64_t{r} + (int64_t{1} << m.dim), n);
    std::vector<uint32_t> deps;
    for (int64_t x : m.entries) {
      INFO("transfer " << t << " entry " << x);
      if (ag) {
        const int o = wrap(int64_t{r} - x, n);
        REQUIRE(delivered[r][o] != -2);  // the sender holds what it forwards
        if (delivered[r][o] >= 0) deps.push_back(static_cast<uint32_t>(delivered[r][o]));
        CHECK(delivered[to][o] == -2);  // each piece arrives once
        delivered[to][o] = t;
      } else {
        const int o = wrap(int64_t{r} + x, n);
        std::vector<int> sum = contrib[r][o];
        sum[r] += 1;
        deps.insert(deps.end(), brought[r][o].begin(), brought[r][o].end());
        for (int i = 0; i < n; ++i) contrib[to][o][i] += sum[i];
        brought[to][o].push_back(t);
        brought[r][o].clear();  // forwarded: a later message for o must not resend it
        contrib[r][o].assign(n, 0);
      }
    }
    if (last_send[r] != UINT32_MAX) deps.push_back(last_send[r]);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    INFO("transfer " << t);
    CHECK(preds[t] == deps);
    this_last[r] = t;
  }
  finish_block();
}

// Bytes each rank sends at each dimension (identified by the peer distance, a power of two).
std::vector<std::vector<int64_t>> bytes_per_rank_and_dim(const TransferDag& dag, int n) {
  const int dims = ceil_log2(n);
  std::vector<std::vector<int64_t>> sent(n, std::vector<int64_t>(dims, 0));
  for (uint32_t t = 0; t < dag.size(); ++t) {
    const Transfer& tr = dag.transfer(t);
    const int dist = wrap(int64_t{tr.dst_rank} - tr.src_rank, n);
    REQUIRE(std::has_single_bit(static_cast<unsigned>(dist)));
    sent[tr.src_rank][std::countr_zero(static_cast<unsigned>(dist))] += tr.bytes;
  }
  return sent;
}

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kHuge = int64_t{1} << 40;  // a step that lets A reach its N/2 cap

}  // namespace

TEST_CASE("pat_aggregation: hand-worked cases of NCCL's rule") {
  // N = 16, B = 512 KiB, P = 1 KiB: B / P = 512; 512 / 1 >= 2 -> 2, 512 / 2 >= 2 -> 4,
  // 512 / 4 >= 2 -> 8, then A < N/2 = 8 fails: stop at 8 (the cap), no step doublings.
  CHECK(pat_aggregation(16, 512 * kKiB, 1 * kKiB) == 8);
  // N = 16, P = 512 KiB: B / P = 1 < 2, A = 1; step depth 8 -> 4 -> 2 -> 1 doubles A to 8.
  CHECK(pat_aggregation(16, 512 * kKiB, 512 * kKiB) == 8);
  // N = 64, P = 512 KiB: 1, then three step doublings to 8 (below the cap of 32).
  CHECK(pat_aggregation(64, 512 * kKiB, 512 * kKiB) == 8);
  // N = 64, P = 64 KiB: B / P = 8; 8/1, 8/2, 8/4 >= 2 -> 8; 8/8 = 1 stops; step doublings
  // 16, 32, then 32 < 32 fails.
  CHECK(pat_aggregation(64, 512 * kKiB, 64 * kKiB) == 32);
  // N = 1024, P = 200 KiB: B / P = 2 -> 2; 2/2 = 1 stops; three doublings: 16.
  CHECK(pat_aggregation(1024, 512 * kKiB, 200 * kKiB) == 16);
  // N = 2 and 3: N/2 = 1, A stays 1 however small the piece.
  CHECK(pat_aggregation(2, 512 * kKiB, 1) == 1);
  CHECK(pat_aggregation(3, 512 * kKiB, 1) == 1);
  // N = 6: N/2 = 3; 1 -> 2 -> 4 (2 < 3 still doubles).
  CHECK(pat_aggregation(6, 512 * kKiB, 512 * kKiB) == 4);
  // An empty piece counts as 1 byte: B / 1 is large, so A goes to the cap (N = 16: 8).
  CHECK(pat_aggregation(16, 512 * kKiB, 0) == 8);
  // As NCCL's kernels call it (step = the chunk): AllGather of 1 MiB over 16 ranks on 2
  // channels; each rank's 64 KiB piece is two 32 KiB parts, the chunk 64 KiB (below); 64K / 32K
  // = 2 -> 2, 2 / 2 = 1 stops; step doublings 4, 8, then 8 < 8 fails.
  CHECK(pat_aggregation(16, pat_chunk_bytes(true, 1 * kMiB, 2, 512 * kKiB), 32 * kKiB) == 8);
  // 32 ranks, 1 GiB on 16 channels: piece 32 MiB, part 2 MiB, chunk 512 KiB: A = 1, then 8.
  CHECK(pat_aggregation(32, pat_chunk_bytes(true, 1024 * kMiB, 16, 512 * kKiB), 2 * kMiB) == 8);
}

TEST_CASE("pat_chunk_bytes: hand-worked cases of NCCL's calcCollChunking") {
  // AllGather 1 MiB on 2 channels: 512K x 2 x 32 = 32M > 1M -> 256K -> 128K -> 64K, and
  // 64K > 65536 fails.
  CHECK(pat_chunk_bytes(true, 1 * kMiB, 2, 512 * kKiB) == 64 * kKiB);
  CHECK(pat_chunk_bytes(false, 1 * kMiB, 2, 512 * kKiB) == 64 * kKiB);
  // 16 MiB on 2 channels: AllGather 512K x 64 = 32M > 16M -> 256K (16M > 16M fails);
  // ReduceScatter 512K x 32 = 16M, not > 16M: stays 512K.
  CHECK(pat_chunk_bytes(true, 16 * kMiB, 2, 512 * kKiB) == 256 * kKiB);
  CHECK(pat_chunk_bytes(false, 16 * kMiB, 2, 512 * kKiB) == 512 * kKiB);
  // Large sizes keep the step; a step at or below 64 KiB is never halved; size 0 goes to 64K.
  CHECK(pat_chunk_bytes(true, 1024 * kMiB, 32, 512 * kKiB) == 512 * kKiB);
  CHECK(pat_chunk_bytes(true, 1, 1, 32 * kKiB) == 32 * kKiB);
  CHECK(pat_chunk_bytes(false, 0, 4, 512 * kKiB) == 64 * kKiB);
}

TEST_CASE("pat dags: every piece and contribution arrives once with exactly its dependencies") {
  for (int n : {2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 18, 33}) {
    // A at its cap; A = min(8, …) from a tiny step (messages split from N = 18 on); three
    // channels of 3/2/2 elements in 2-element chunks; an empty channel; no data at all.
    const std::vector<Args> cases = {{n, 10, 4, 1, 40, kHuge},     {n, 10, 4, 1, 40, 1},
                                     {n, 7, 4, 3, 8, 1},           {n, 7, 4, 3, 8, kHuge},
                                     {n, 1, 8, 2, 64, 512 * kKiB}, {n, 0, 2, 1, 2, 4}};
    for (const Args& a : cases) {
      for (bool ag : {true, false}) {
        INFO((ag ? "all_gather" : "reduce_scatter")
             << " ranks " << n << " count " << a.count << " channels " << a.channels
             << " chunk_bytes " << a.chunk_bytes << " step_bytes " << a.step_bytes);
        check_schedule(ag, a);
      }
    }
  }
}

TEST_CASE("pat dags: total bytes N(N-1) count elem and k_d pieces per rank per dimension") {
  for (int n : {2, 3, 5, 8, 16}) {
    const std::vector<Args> cases = {
        {n, 1000, 4, 1, 4000, kHuge}, {n, 1000, 4, 3, 400, 512 * kKiB}, {n, 999, 2, 4, 64, 1}};
    for (const Args& a : cases) {
      for (bool ag : {true, false}) {
        INFO((ag ? "all_gather" : "reduce_scatter")
             << " ranks " << n << " channels " << a.channels << " step " << a.step_bytes);
        const TransferDag dag =
            ag ? pat_all_gather(n, a.count, a.elem, a.channels, a.chunk_bytes, a.step_bytes)
               : pat_reduce_scatter(n, a.count, a.elem, a.channels, a.chunk_bytes, a.step_bytes);
        const int64_t piece = a.count * a.elem;
        CHECK(dag.total_bytes() == int64_t{n} * (n - 1) * piece);
        const auto sent = bytes_per_rank_and_dim(dag, n);
        for (int r = 0; r < n; ++r) {
          int64_t total = 0;
          for (int d = 0; d < ceil_log2(n); ++d) {
            CHECK(sent[r][d] == k_of(n, d) * piece);
            total += sent[r][d];
          }
          CHECK(total == (n - 1) * piece);
        }
      }
    }
  }
}

TEST_CASE("pat dags: one chunk critical path D or D - 1 for large A and equal for AG and RS") {
  // By hand: N = 2: 1 (one dimension); N = 3: 1 (each rank only sends its own piece); N = 5:
  // dimension 1 carries only the own piece (4 + 2 >= 5), so 2 -> 1 -> 0 is no chain: 2;
  // N = 8: 4 -> 2 -> 1 steps: 3; N = 16: 4.
  const std::vector<std::pair<int, int>> by_hand = {{2, 1}, {3, 1}, {4, 2}, {5, 2},
                                                    {6, 2}, {7, 3}, {8, 3}, {16, 4}};
  for (auto [n, path] : by_hand) {
    INFO("ranks " << n);
    CHECK(critical_path(pat_all_gather(n, 10, 4, 1, 40, kHuge)) == path);
    CHECK(critical_path(pat_reduce_scatter(n, 10, 4, 1, 40, kHuge)) == path);
  }
  // The closed form: D for N = 2 or N > 3 x 2^(D-2), else D - 1 (dimension e feeds d iff
  // 2^e + 2^d < N).
  for (int n = 2; n <= 70; ++n) {
    INFO("ranks " << n);
    const int d = ceil_log2(n);
    const int want = (n == 2 || n > 3 * (1 << (d - 2))) ? d : d - 1;
    CHECK(critical_path(pat_all_gather(n, 3, 4, 1, 12, kHuge)) == want);
    CHECK(critical_path(pat_reduce_scatter(n, 3, 4, 1, 12, kHuge)) == want);
    // With the smallest A (split messages from N = 18 on) both still agree.
    CHECK(critical_path(pat_all_gather(n, 3, 4, 1, 12, 1)) ==
          critical_path(pat_reduce_scatter(n, 3, 4, 1, 12, 1)));
    CHECK(pat_all_gather(n, 3, 4, 1, 12, 1).size() == pat_reduce_scatter(n, 3, 4, 1, 12, 1).size());
  }
}

TEST_CASE("pat_reduce_scatter: one chunk is the all_gather dag reversed") {
  // RS message m of dimension d of rank r plays AG message m of dimension d of rank
  // (-r - 2^d) mod N: every AG edge before -> after is an RS edge after' -> before'.
  for (int n : {2, 3, 5, 7, 8, 12, 18, 33}) {
    for (int64_t step : {int64_t{1}, kHuge}) {
      INFO("ranks " << n << " step " << step);
      const Args a{n, 10, 4, 1, 40, step};
      const std::vector<Msg> ag = expected_messages(true, a), rs = expected_messages(false, a);
      const TransferDag ag_dag = pat_all_gather(n, 10, 4, 1, 40, step);
      const TransferDag rs_dag = pat_reduce_scatter(n, 10, 4, 1, 40, step);
      REQUIRE(ag_dag.size() == rs_dag.size());
      // (dim, rank, first entry as an AG offset) -> AG id.
      std::map<std::tuple<int, int, int64_t>, uint32_t> ag_id;
      for (uint32_t t = 0; t < ag.size(); ++t)
        ag_id[{ag[t].dim, ag[t].rank, ag[t].entries.front()}] = t;
      std::vector<uint32_t> as_ag(rs.size());
      for (uint32_t t = 0; t < rs.size(); ++t) {
        const int d = rs[t].dim;
        const int rank = wrap(-int64_t{rs[t].rank} - (int64_t{1} << d), n);
        as_ag[t] = ag_id.at({d, rank, rs[t].entries.front() - (int64_t{1} << d)});
      }
      std::set<std::pair<uint32_t, uint32_t>> ag_edges, rs_edges;
      for (uint32_t t = 0; t < ag_dag.size(); ++t) {
        for (uint32_t after : ag_dag.dependents(t)) ag_edges.insert({t, after});
        for (uint32_t after : rs_dag.dependents(t)) rs_edges.insert({as_ag[after], as_ag[t]});
      }
      CHECK(rs_edges == ag_edges);
    }
  }
}

TEST_CASE("pat dags: critical path over chunks for large A") {
  // A rank's chunk k + 1 waits for its last send of chunk k, its dimension 0 message, which
  // ends the longest chain of chunk k.
  CHECK(critical_path(pat_all_gather(8, 30, 4, 1, 40, kHuge)) == 3 * 3);
  CHECK(critical_path(pat_all_gather(5, 40, 4, 1, 40, kHuge)) == 4 * 2);
  CHECK(critical_path(pat_all_gather(16, 21, 4, 1, 40, kHuge)) == 3 * 4);  // chunks 10, 10, 1
  CHECK(critical_path(pat_all_gather(2, 50, 4, 1, 40, kHuge)) == 5 * 1);
  // ReduceScatter chains chunks through its dimension D - 1 message: the same for N = 8 (that
  // message ends the longest chain, 1 -> 2 -> 4), shorter for N = 5 (its dimension 2 message
  // waits for nothing, 4 + 1 >= 5, so chunk k's is at depth k + 1, and the last chunk's
  // dimension 0 then dimension 1 messages add 2: 2 + 2).
  CHECK(critical_path(pat_reduce_scatter(8, 30, 4, 1, 40, kHuge)) == 3 * 3);
  CHECK(critical_path(pat_reduce_scatter(5, 30, 4, 1, 40, kHuge)) == 4);
  // The closed forms over N: AllGather chunks x (D or D - 1); ReduceScatter the same when its
  // one-chunk path is D (N = 2 or N > 3 x 2^(D-2)).
  for (int n = 2; n <= 40; ++n) {
    INFO("ranks " << n);
    const int d = ceil_log2(n);
    const bool full = n == 2 || n > 3 * (1 << (d - 2));
    const int ag = critical_path(pat_all_gather(n, 30, 4, 1, 40, kHuge));
    CHECK(ag == 3 * (full ? d : d - 1));
    if (full) CHECK(critical_path(pat_reduce_scatter(n, 30, 4, 1, 40, kHuge)) == ag);
  }
}

TEST_CASE("pat dags: messages per rank per chunk sum ceil(k_d / A) and scale with chunks") {
  // Tiny step: A = 1 then three step doublings capped by N/2. N = 2, 3: A = 1, N - 1 messages
  // per rank. N = 16: A = 8, k = (8, 4, 2, 1): 4. N = 32: A = 8, k = (16, 8, 4, 2, 1): 6.
  // N = 64: A = 8, k = (32, 16, 8, 4, 2, 1): 4 + 2 + 1 + 1 + 1 + 1 = 10.
  const std::vector<std::pair<int, int>> per_rank = {{2, 1}, {3, 2}, {16, 4}, {32, 6}, {64, 10}};
  for (auto [n, msgs] : per_rank) {
    INFO("ranks " << n);
    for (int chunks : {1, 5}) {
      const int64_t want = int64_t{n} * msgs * chunks;
      CHECK(pat_all_gather(n, 10 * chunks, 4, 1, 40, 1).size() == static_cast<size_t>(want));
      CHECK(pat_reduce_scatter(n, 10 * chunks, 4, 1, 40, 1).size() == static_cast<size_t>(want));
      CHECK(pat_transfers(n, 10 * chunks, 4, 1, 40, 1) == want);
    }
  }
  // With A = 1 (N = 3, whose A is always 1) every piece is its own message: N - 1 per rank.
  CHECK(pat_all_gather(3, 1000, 4, 2, 4000, kHuge).size() == 2 * 3 * 2);
  // Large A: one message per rank and dimension, N x D per chunk; 4 chunks of 10 elements.
  CHECK(pat_all_gather(16, 40, 4, 1, 40, kHuge).size() == 4 * 16 * 4);
  CHECK(pat_all_gather(12, 40, 4, 1, 40, kHuge).size() == 4 * 12 * 4);
}

TEST_CASE("pat_transfers: equals the size of both dags") {
  for (int n : {2, 3, 5, 8, 13, 16, 20, 40}) {
    for (int channels : {1, 2, 5}) {
      for (int64_t step : {int64_t{1}, 64 * kKiB, kHuge}) {
        INFO("ranks " << n << " channels " << channels << " step " << step);
        const int64_t want = pat_transfers(n, 777, 2, channels, 100, step);
        CHECK(static_cast<int64_t>(pat_all_gather(n, 777, 2, channels, 100, step).size()) == want);
        CHECK(static_cast<int64_t>(pat_reduce_scatter(n, 777, 2, channels, 100, step).size()) ==
              want);
      }
    }
  }
}

TEST_CASE("pat functions reject bad arguments") {
  CHECK_NOTHROW(pat_all_gather(2, 0, 1, 1, 1, 1));
  for (bool ag : {true, false}) {
    auto build = [ag](int n, int64_t count, int elem, int ch, int64_t chunk, int64_t step) {
      return ag ? pat_all_gather(n, count, elem, ch, chunk, step)
                : pat_reduce_scatter(n, count, elem, ch, chunk, step);
    };
    CHECK_THROWS_AS(build(1, 10, 4, 1, 64, 64), std::invalid_argument);
    CHECK_THROWS_AS(build(0, 10, 4, 1, 64, 64), std::invalid_argument);
    CHECK_THROWS_AS(build(4, -1, 4, 1, 64, 64), std::invalid_argument);
    CHECK_THROWS_AS(build(4, 10, 0, 1, 64, 64), std::invalid_argument);
    CHECK_THROWS_AS(build(4, 10, -4, 1, 64, 64), std::invalid_argument);
    CHECK_THROWS_AS(build(4, 10, 4, 0, 64, 64), std::invalid_argument);
    CHECK_THROWS_AS(build(4, 10, 4, 1, 3, 64), std::invalid_argument);
    CHECK_THROWS_AS(build(4, 10, 4, 1, 64, 0), std::invalid_argument);
    // 2 ranks, one 1-byte chunk each: 2^32 chunks x 2 transfers > 2^32 - 1.
    CHECK_THROWS_AS(build(2, int64_t{1} << 32, 1, 1, 1, 1), std::invalid_argument);
  }
  CHECK_THROWS_WITH(pat_all_gather(1, 10, 4, 1, 64, 64), Catch::Contains("pat_all_gather"));
  CHECK_THROWS_WITH(pat_reduce_scatter(4, 10, 4, 1, 64, 0), Catch::Contains("pat_reduce_scatter"));
  CHECK(pat_transfers(2, int64_t{1} << 32, 1, 1, 1, 1) == int64_t{2} << 32);
  CHECK_THROWS_AS(pat_transfers(1, 10, 4, 1, 64, 64), std::invalid_argument);
  CHECK_THROWS_AS(pat_transfers(4, 10, 4, 1, 2, 64), std::invalid_argument);
  CHECK_THROWS_AS(pat_aggregation(1, 64, 64), std::invalid_argument);
  CHECK_THROWS_AS(pat_aggregation(4, 0, 64), std::invalid_argument);
  CHECK_THROWS_AS(pat_aggregation(4, 64, -1), std::invalid_argument);
  CHECK_THROWS_AS(pat_chunk_bytes(true, -1, 1, 64), std::invalid_argument);
  CHECK_THROWS_AS(pat_chunk_bytes(true, 64, 0, 64), std::invalid_argument);
  CHECK_THROWS_AS(pat_chunk_bytes(false, 64, 1, 0), std::invalid_argument);
}

TEST_CASE("pat: as a registered algorithm it moves N (N - 1) pieces over power-of-two distances") {
  // 8 one-GPU servers, an AllGather of 8 × 4096 floats on 2 channels in 8 KiB chunks: each rank
  // sends its 16 KiB piece to the 7 others once, N (N − 1) × 16 KiB in all, every transfer
  // between ranks 1, 2 or 4 apart (mod 8). The ReduceScatter of the same buffer moves as much.
  for (const char* collective : {"all_gather", "reduce_scatter"}) {
    INFO(collective);
    CollectiveSpec spec;
    spec.collective = collective;
    spec.algorithm = "pat";
    spec.channels = 2;
    spec.chunk_bytes = 8192;
    const TransferDag dag = build_collective(RankLayout{8, 1}, spec, 8 * 4096, 4);
    CHECK(dag.total_bytes() == int64_t{8} * 7 * 4096 * 4);
    for (uint32_t t = 0; t < dag.size(); ++t) {
      const int dist = (dag.transfer(t).dst_rank - dag.transfer(t).src_rank + 8) % 8;
      CHECK((dist == 1 || dist == 2 || dist == 4));
    }
    CHECK(estimate_transfers(RankLayout{8, 1}, spec, 8 * 4096, 4) == int64_t(dag.size()));
  }
}
