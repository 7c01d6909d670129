// The nccl-tests collectives and halving-doubling all-reduce (collectives.hpp) against closed
// forms: transfer counts, bytes per rank, critical path length in steps, and the data each rank
// ends with, found by running each DAG symbolically: a transfer carries what its sender holds
// once the transfers it (transitively) depends on have arrived, and nothing else, so a missing
// dependency shows up as missing data. One end-to-end check replays ring AllGather on a
// non-blocking spine-leaf against the alpha-beta time (N−1)·α + (N−1)/N · S/B (Patarasuk &
// Yuan 2009; Thakur, Rabenseifner & Gropp 2005).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <vector>

#include "../support.hpp"
#include "collectives/collectives.hpp"
#include "collectives/replay.hpp"
#include "dag_support.hpp"

using namespace fabricsim;

namespace {

// Contributions of each rank (a count per rank) held in one piece of a buffer.
using Contrib = std::vector<int>;
using Buffer = std::vector<Contrib>;  // one Contrib per piece

Contrib unit(int n, int rank) {
  Contrib c(n, 0);
  c[rank] = 1;
  return c;
}

// Runs `dag` symbolically. spans[id] says which pieces transfer id carries and whether the
// receiver adds them to its copy or overwrites it. Returns each rank's final buffer; payloads
// (if given) receives what each transfer carried.
std::vector<Buffer> run_symbolic(const TransferDag& dag, int n, const std::vector<PieceSpan>& spans,
                                 const std::function<Buffer(int)>& initial,
                                 std::vector<Buffer>* payloads = nullptr) {
  const size_t t_count = dag.size();
  REQUIRE(spans.size() == t_count);
  // ancestors[t][u]: t waits, directly or not, for u. Ids are a topological order.
  std::vector<std::vector<bool>> ancestors(t_count, std::vector<bool>(t_count, false));
  for (uint32_t t = 0; t < t_count; ++t) {
    for (uint32_t d : dag.dependents(t)) {
      REQUIRE(d > t);
      for (uint32_t u = 0; u < t; ++u) {
        if (ancestors[t][u]) ancestors[d][u] = true;
      }
      ancestors[d][t] = true;
    }
  }
  auto apply = [](Buffer& buf, const PieceSpan& span, const Buffer& payload) {
    for (int i = span.first; i < span.last; ++i) {
      Contrib& dst = buf[i];
      const Contrib& src = payload[i - span.first];
      for (size_t r = 0; r < dst.size(); ++r) dst[r] = span.reduce ? dst[r] + src[r] : src[r];
    }
  };
  std::vector<Buffer> carried(t_count);
  for (uint32_t t = 0; t < t_count; ++t) {
    const Transfer& tr = dag.transfer(t);
    Buffer held = initial(tr.src_rank);
    for (uint32_t u = 0; u < t; ++u) {
      if (ancestors[t][u] && dag.transfer(u).dst_rank == tr.src_rank)
        apply(held, spans[u], carried[u]);
    }
    carried[t].assign(held.begin() + spans[t].first, held.begin() + spans[t].last);
  }
  std::vector<Buffer> final_buffers;
  for (int r = 0; r < n; ++r) {
    Buffer buf = initial(r);
    for (uint32_t u = 0; u < t_count; ++u) {
      if (dag.transfer(u).dst_rank == r) apply(buf, spans[u], carried[u]);
    }
    final_buffers.push_back(std::move(buf));
  }
  if (payloads) *payloads = std::move(carried);
  return final_buffers;
}

using fabricsim::testing::critical_path;

std::vector<int64_t> bytes_sent(const TransferDag& dag, int n) {
  std::vector<int64_t> sent(n, 0);
  for (uint32_t i = 0; i < dag.size(); ++i) sent[dag.transfer(i).src_rank] += dag.transfer(i).bytes;
  return sent;
}

int mod(int a, int n) {
  return ((a % n) + n) % n;
}

}  // namespace

TEST_CASE("TransferDag: dependents keep the order depends() added them, across later additions") {
  // The replayer posts a completed transfer's dependents in this order, so it decides the order
  // of equal-time events: it must be the insertion order, whatever the edge storage.
  TransferDag dag;
  for (int i = 0; i < 5; ++i) dag.add(0, 1, 100);
  dag.depends(4, 0);
  dag.depends(2, 1);
  dag.depends(3, 0);
  dag.depends(2, 0);
  CHECK(std::vector<uint32_t>(dag.dependents(0).begin(), dag.dependents(0).end()) ==
        std::vector<uint32_t>{4, 3, 2});
  CHECK(std::vector<uint32_t>(dag.dependents(1).begin(), dag.dependents(1).end()) ==
        std::vector<uint32_t>{2});
  CHECK(dag.dependents(4).empty());
  // Read, then add more: the next read sees them.
  const uint32_t t5 = dag.add_compute(1, 10);
  dag.depends(t5, 0);
  dag.depends(t5, 4);
  CHECK(std::vector<uint32_t>(dag.dependents(0).begin(), dag.dependents(0).end()) ==
        std::vector<uint32_t>{4, 3, 2, t5});
  CHECK(std::vector<uint32_t>(dag.dependents(4).begin(), dag.dependents(4).end()) ==
        std::vector<uint32_t>{t5});
  CHECK(dag.dependency_count(2) == 2);
  CHECK(dag.dependency_count(t5) == 2);
}

TEST_CASE("ring_allgather: N(N-1) transfers, (N-1)/N of the output per rank, N-1 steps") {
  for (int n : {2, 3, 5, 8}) {
    const int64_t count = 8 * 9 * 5 * 7;  // divisible by every n above
    const TransferDag dag = ring_allgather(n, count, 4);
    REQUIRE(dag.size() == static_cast<size_t>(n * (n - 1)));
    for (uint32_t i = 0; i < dag.size(); ++i) {
      CHECK(dag.transfer(i).dst_rank == (dag.transfer(i).src_rank + 1) % n);
    }
    for (int64_t s : bytes_sent(dag, n)) CHECK(s == (n - 1) * count * 4 / n);
    CHECK(critical_path(dag) == n - 1);
  }
}

TEST_CASE("ring_allgather: every rank ends with every piece, forwarding only what has arrived") {
  for (int n : {2, 3, 4, 7}) {
    const TransferDag dag = ring_allgather(n, 1000, 2);
    std::vector<PieceSpan> spans;
    for (int s = 0; s < n - 1; ++s) {
      for (int r = 0; r < n; ++r) {
        const int piece = mod(r - s, n);  // documented: step s of rank r sends (r − s) mod N
        spans.push_back(PieceSpan{piece, piece + 1, false});
      }
    }
    auto initial = [n](int r) {
      Buffer b(n, Contrib(n, 0));
      b[r] = unit(n, r);
      return b;
    };
    std::vector<Buffer> carried;
    const auto final_buffers = run_symbolic(dag, n, spans, initial, &carried);
    for (uint32_t t = 0; t < dag.size(); ++t) {
      CHECK(carried[t][0] == unit(n, spans[t].first));  // the sender held the piece it sent
    }
    for (int r = 0; r < n; ++r) {
      for (int piece = 0; piece < n; ++piece) CHECK(final_buffers[r][piece] == unit(n, piece));
    }
  }
}

TEST_CASE("ring_reducescatter: (N-1)/N of the input per rank, rank r ends with piece r+1 reduced") {
  for (int n : {2, 3, 6, 8}) {
    const int64_t count = 8 * 9 * 5 * 7;
    const TransferDag dag = ring_reducescatter(n, count, 4);
    REQUIRE(dag.size() == static_cast<size_t>(n * (n - 1)));
    for (int64_t s : bytes_sent(dag, n)) CHECK(s == (n - 1) * count * 4 / n);
    CHECK(critical_path(dag) == n - 1);
    std::vector<PieceSpan> spans;
    for (int s = 0; s < n - 1; ++s) {
      for (int r = 0; r < n; ++r)
        spans.push_back(PieceSpan{mod(r - s, n), mod(r - s, n) + 1, true});
    }
    const auto final_buffers =
        run_symbolic(dag, n, spans, [n](int r) { return Buffer(n, unit(n, r)); });
    for (int r = 0; r < n; ++r) CHECK(final_buffers[r][(r + 1) % n] == Contrib(n, 1));
  }
}

TEST_CASE(
    "ring_broadcast and ring_reduce: pipelined chain, critical path N - 1 + (chunks - 1) / 8") {
  for (int n : {2, 3, 5, 8}) {
    for (int chunks : {1, 4, 7, 8, 9, 17}) {
      for (int root : {0, n - 1}) {
        const int64_t count = 4 * 7 * 1000, elem = 4;
        const TransferDag bcast = ring_broadcast(n, count, elem, root, chunks);
        const TransferDag reduce = ring_reduce(n, count, elem, root, chunks);
        REQUIRE(bcast.size() == static_cast<size_t>(chunks * (n - 1)));
        REQUIRE(reduce.size() == static_cast<size_t>(chunks * (n - 1)));
        // Chunk k on hop h is transfer h + 1 + k / 8 of a chain: it waits for chunk k on hop
        // h − 1 and for the slot chunk k − 8 took at its receiver (8 chunks in flight per
        // link): that receiver's post of chunk k − 8 on hop h + 1, which runs as transfer
        // h + 2 + (k − 8) / 8 = h + 1 + k / 8, or on the last hop chunk k − 8's arrival.
        CHECK(critical_path(bcast) == n - 1 + (chunks - 1) / kConnectionWindow);
        CHECK(critical_path(reduce) == n - 1 + (chunks - 1) / kConnectionWindow);
        // Every rank but the chain's last sends the whole buffer once.
        const auto sent_b = bytes_sent(bcast, n), sent_r = bytes_sent(reduce, n);
        for (int r = 0; r < n; ++r) {
          CHECK(sent_b[r] == (r == mod(root - 1, n) ? 0 : count * elem));
          CHECK(sent_r[r] == (r == root ? 0 : count * elem));
        }
        std::vector<PieceSpan> copy, add;
        for (int k = 0; k < chunks; ++k) {
          for (int h = 0; h < n - 1; ++h) {
            copy.push_back(PieceSpan{k, k + 1, false});
            add.push_back(PieceSpan{k, k + 1, true});
          }
        }
        const auto got_b = run_symbolic(bcast, n, copy, [&](int r) {
          return Buffer(chunks, r == root ? unit(n, root) : Contrib(n, 0));
        });
        for (int r = 0; r < n; ++r) CHECK(got_b[r] == Buffer(chunks, unit(n, root)));
        const auto got_r =
            run_symbolic(reduce, n, add, [&](int r) { return Buffer(chunks, unit(n, r)); });
        CHECK(got_r[root] == Buffer(chunks, Contrib(n, 1)));
      }
    }
  }
}

TEST_CASE("alltoall and sendrecv: transfer counts and bytes per rank, no dependencies") {
  for (int n : {2, 3, 8}) {
    const int64_t count = 8 * 3 * 100;
    const TransferDag a2a = alltoall(n, count, 4);
    REQUIRE(a2a.size() == static_cast<size_t>(n * (n - 1)));
    CHECK(critical_path(a2a) == 1);
    for (int64_t s : bytes_sent(a2a, n)) CHECK(s == (n - 1) * count * 4 / n);
    std::vector<std::vector<int>> pairs(n, std::vector<int>(n, 0));
    for (uint32_t i = 0; i < a2a.size(); ++i)
      ++pairs[a2a.transfer(i).src_rank][a2a.transfer(i).dst_rank];
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) CHECK(pairs[s][d] == (s == d ? 0 : 1));
    }
    const TransferDag sr = sendrecv(n, count, 4);
    REQUIRE(sr.size() == static_cast<size_t>(n));
    CHECK(critical_path(sr) == 1);
    for (uint32_t r = 0; r < sr.size(); ++r) {
      CHECK(sr.transfer(r).src_rank == static_cast<int>(r));
      CHECK(sr.transfer(r).dst_rank == static_cast<int>((r + 1) % n));
      CHECK(sr.transfer(r).bytes == count * 4);
    }
  }
  // Block sizes differ by at most one element when N does not divide the count.
  const auto sent = bytes_sent(alltoall(3, 100, 4), 3);
  for (int r = 0; r < 3; ++r) CHECK(std::abs(sent[r] - 2 * 100 * 4 / 3) <= 2 * 4);
}

TEST_CASE("halving_doubling_allreduce, N a power of two: 2(N-1)/N per rank, 2 log2 N steps") {
  for (int n : {2, 4, 8, 16}) {
    int log2n = 0;
    while ((1 << log2n) < n) ++log2n;
    const int64_t count = 1 << 16;
    const HalvingDoublingPlan plan = halving_doubling_allreduce_plan(n, count, 4);
    const TransferDag& dag = plan.dag;
    REQUIRE(plan.pieces == n);
    REQUIRE(dag.size() == static_cast<size_t>(2 * n * log2n));
    CHECK(halving_doubling_allreduce(n, count, 4).size() == dag.size());
    for (int64_t s : bytes_sent(dag, n)) CHECK(s == 2 * (n - 1) * count * 4 / n);
    CHECK(critical_path(dag) == 2 * log2n);
    const auto got = run_symbolic(dag, n, plan.spans, [n](int r) { return Buffer(n, unit(n, r)); });
    for (int r = 0; r < n; ++r) CHECK(got[r] == Buffer(n, Contrib(n, 1)));
  }
}

TEST_CASE("halving_doubling_allreduce, N not a power of two: every rank gets the full reduction") {
  for (int n : {3, 5, 6, 7, 12}) {
    int p = 1, log2p = 0;
    while (p * 2 <= n) p *= 2, ++log2p;
    const int extra = n - p;
    const HalvingDoublingPlan plan = halving_doubling_allreduce_plan(n, 1000, 4);
    REQUIRE(plan.pieces == p);
    REQUIRE(plan.dag.size() == static_cast<size_t>(2 * p * log2p + 2 * extra));
    CHECK(critical_path(plan.dag) == 2 * log2p + 2);
    // Each rank's final buffer holds every rank's contribution exactly once, in every piece.
    const auto got =
        run_symbolic(plan.dag, n, plan.spans, [&](int r) { return Buffer(p, unit(n, r)); });
    for (int r = 0; r < n; ++r) CHECK(got[r] == Buffer(p, Contrib(n, 1)));
    // An extra rank sends its whole buffer once; the others send 2(P−1)/P of it, plus the whole
    // buffer once more if they are an extra rank's partner.
    const auto sent = bytes_sent(plan.dag, n);
    const int64_t buffer = 1000 * 4;
    for (int r = 0; r < n; ++r) {
      const bool is_extra = r < 2 * extra && r % 2 == 0;
      const bool partner = r < 2 * extra && r % 2 == 1;
      const int64_t want = is_extra ? buffer : 2 * (p - 1) * buffer / p + (partner ? buffer : 0);
      CHECK(std::abs(sent[r] - want) <= 2 * log2p * 4);  // pieces differ by one element
    }
  }
}

TEST_CASE("collective builders reject bad arguments") {
  CHECK_THROWS_AS(ring_allgather(1, 100, 4), std::invalid_argument);
  CHECK_THROWS_AS(ring_allgather(4, -1, 4), std::invalid_argument);
  CHECK_THROWS_AS(ring_allgather(4, 100, 0), std::invalid_argument);
  CHECK_THROWS_AS(ring_reducescatter(1, 100, 4), std::invalid_argument);
  CHECK_THROWS_AS(ring_reducescatter(4, 100, -4), std::invalid_argument);
  CHECK_THROWS_AS(ring_broadcast(4, 100, 4, 4, 2), std::invalid_argument);
  CHECK_THROWS_AS(ring_broadcast(4, 100, 4, -1, 2), std::invalid_argument);
  CHECK_THROWS_AS(ring_broadcast(4, 100, 4, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(ring_broadcast(1, 100, 4, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(ring_reduce(4, 100, 4, 5, 1), std::invalid_argument);
  CHECK_THROWS_AS(ring_reduce(4, -5, 4, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(alltoall(0, 100, 4), std::invalid_argument);
  CHECK_THROWS_AS(alltoall(4, 100, 0), std::invalid_argument);
  CHECK_THROWS_AS(sendrecv(1, 100, 4), std::invalid_argument);
  CHECK_THROWS_AS(sendrecv(2, -1, 4), std::invalid_argument);
  CHECK_THROWS_AS(halving_doubling_allreduce(1, 100, 4), std::invalid_argument);
  CHECK_THROWS_AS(halving_doubling_allreduce(6, -1, 4), std::invalid_argument);
  CHECK_THROWS_AS(halving_doubling_allreduce_plan(6, 100, 0), std::invalid_argument);
  CHECK_NOTHROW(ring_allgather(4, 0, 4));  // an empty buffer is a valid (zero-byte) collective
}

TEST_CASE("Ring AllGather on a non-blocking spine-leaf matches alpha-beta within 0.5%") {
  // Same fabric and model as test_ring's all-reduce check.
  const int64_t rate = 400'000'000'000, prop = 250'000, lat = 500'000, mtu = 4096;
  const int leaves = 2, per_leaf = 4, n = leaves * per_leaf;
  const auto sc =
      fabricsim::testing::spine_leaf(leaves, 2, per_leaf, rate, prop, lat, 4 << 20, mtu);
  // B: RoCEv2 goodput with each host's downlink also carrying the ACKs of the step it sends.
  const double wire = mtu + 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12;
  const double ack = 14 + 20 + 8 + 12 + 4 + 4 + 4 + 8 + 12;
  const double b_Bps = rate / 8.0 * mtu / (wire + ack);
  // α per ring link: `leaves` of the N links cross the spine, the rest stay under one leaf. A
  // dependency chain of N−1 steps walks all ring links but one; the slowest chain skips a local
  // link, so it sees all `leaves` crossing links and N−1−leaves local ones.
  const double ser_s = wire * 8 / rate;
  const double alpha_cross_s = (4 * prop + 3 * lat) * 1e-12 + 3 * ser_s;
  const double alpha_local_s = (2 * prop + lat) * 1e-12 + ser_s;
  const double alpha_sum_s = leaves * alpha_cross_s + (n - 1 - leaves) * alpha_local_s;
  for (int64_t size : {int64_t{64} << 20, int64_t{256} << 20}) {
    fabricsim::testing::Bed bed(sc);
    PacketTransport transport(bed.sim, *bed.net);
    const TransferDag dag = ring_allgather(n, size / 4, 4);  // size = output buffer bytes
    DagReplayer replayer(dag, transport);
    transport.attach(&replayer);
    replayer.start();
    REQUIRE(bed.sim.run() == StopReason::kWorkloadDone);
    const double t = (replayer.finish_time() - replayer.start_time()).seconds();
    const double predicted = alpha_sum_s + (n - 1.0) / n * size / b_Bps;
    INFO("size " << size << " simulated " << t * 1e6 << " us, alpha-beta " << predicted * 1e6
                 << " us");
    CHECK(t == Approx(predicted).epsilon(0.005));  // measured 0.01% at 64 and 256 MiB
    CHECK(bed.net->totals().drops == 0);
  }
}
