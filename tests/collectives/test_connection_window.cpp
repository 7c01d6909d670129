// The connection window (transfer_dag.hpp kConnectionWindow): a pipelined send of chunk k waits
// for the slot chunk k - 8 took at its receiver, which is free once the receiver has forwarded
// that chunk (posted its own send of it), as NCCL's primitives free a receive slot only after
// the step's reduce-copy into the outgoing slot (src/device/prims_simple.h genericOp). Checked
// on TransferDag's post dependencies, on DagReplayer, and on the tree and chain builders, with
// times worked out by hand on the ideal transport (every transfer alpha + bytes / rate after
// its post, no contention): with a step latency d before every post, a slot freed on arrival
// would let chunk 8 start one d earlier than a slot freed when the receiver forwards.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collectives/collectives.hpp"
#include "collectives/plan.hpp"
#include "collectives/replay.hpp"
#include "collectives/transfer_dag.hpp"
#include "collectives/tree.hpp"
#include "ideal_transport.hpp"
#include "sim/core/simulator.hpp"

using namespace fabricsim;
using testing::IdealTransport;
using testing::wire;

namespace {

// Replays `dag` on the ideal transport to the end; `check` sees the replayer.
template <class Check>
void replay(const TransferDag& dag, Check check) {
  Simulator sim;
  IdealTransport transport(sim);
  DagReplayer replayer(dag, transport);
  transport.attach(&replayer);
  replayer.start();
  if (!replayer.done()) REQUIRE(sim.run() == StopReason::kWorkloadDone);
  REQUIRE(replayer.done());
  check(replayer);
}

// Every transfer of `dag` gets `delay_ps` (a step latency).
void set_all_delays(TransferDag& dag, int64_t delay_ps) {
  for (uint32_t i = 0; i < dag.size(); ++i) dag.set_delay(i, delay_ps);
}

}  // namespace

TEST_CASE("TransferDag::depends_on_post counts as a dependency met by the other's post") {
  TransferDag dag;
  const uint32_t a = dag.add(0, 1, 1000);
  const uint32_t b = dag.add(1, 2, 1000);
  const uint32_t c = dag.add(2, 3, 1000);
  dag.depends_on_post(b, a);
  dag.depends(c, a);
  CHECK(dag.dependency_count(b) == 1);
  CHECK(dag.dependency_count(c) == 1);
  REQUIRE(dag.post_dependents(a).size() == 1);
  CHECK(dag.post_dependents(a)[0] == b);
  REQUIRE(dag.dependents(a).size() == 1);
  CHECK(dag.dependents(a)[0] == c);
  CHECK(dag.has_post_dependencies());
  CHECK_THROWS_AS(dag.depends_on_post(a, b), std::invalid_argument);  // must point back
  CHECK_THROWS_AS(dag.depends_on_post(a, a), std::invalid_argument);
  CHECK_THROWS_AS(dag.depends_on_post(7, a), std::invalid_argument);  // no such transfer

  // copy_dependencies moves both kinds, shifted by the base.
  TransferDag big;
  big.add(5, 6, 1);
  for (uint32_t i = 0; i < dag.size(); ++i) {
    big.add_like(dag.transfer(i), dag.transfer(i).src_rank, dag.transfer(i).dst_rank,
                 dag.transfer(i).bytes, 0);
  }
  big.copy_dependencies(dag, 1);
  REQUIRE(big.post_dependents(a + 1).size() == 1);
  CHECK(big.post_dependents(a + 1)[0] == b + 1);
  REQUIRE(big.dependents(a + 1).size() == 1);
  CHECK(big.dependents(a + 1)[0] == c + 1);
  CHECK(big.dependency_count(b + 1) == 1);
}

TEST_CASE("DagReplayer: a task waiting for another's post is ready when that one is posted") {
  constexpr int64_t d = 5'000'000;  // 5 us before a's post
  TransferDag dag;
  const uint32_t a = dag.add(0, 1, 1 << 20);
  const uint32_t b = dag.add(1, 2, 100);
  const uint32_t c = dag.add(2, 3, 100);
  dag.set_delay(a, d);
  dag.depends_on_post(b, a);
  dag.depends(c, a);
  replay(dag, [&](const DagReplayer& r) {
    CHECK(r.posted_time(a).ps() == d);
    CHECK(r.ready_time(b).ps() == d);  // a's post, not its arrival
    CHECK(r.completed_time(b).ps() == d + wire(100));
    CHECK(r.ready_time(c).ps() == d + wire(1 << 20));
    CHECK(r.finish_time().ps() == d + wire(1 << 20) + wire(100));
  });
}

TEST_CASE("ring_broadcast: chunk 8's slot is free once the next rank forwards chunk 0") {
  // 3 ranks, 2 hops, 9 equal chunks of 1000 B, step latency d. Chunk 0 arrives at rank 1 at
  // d + w and is forwarded (posted on hop 1) at 2d + w: chunk 8 on hop 0 is ready then (d + w
  // if its slot were free on arrival). On the last hop the receiver forwards nothing: chunk 8
  // on hop 1 waits for chunk 0's arrival there (3d + 2w) and for its own chunk 8 on hop 0
  // (posted 3d + w, arrived 3d + 2w).
  constexpr int64_t d = 3'000'000;
  const int64_t w = wire(1000);
  TransferDag dag = ring_broadcast(3, 9 * 250, 4, 0, 9);
  set_all_delays(dag, d);
  const uint32_t hop0_chunk8 = 8 * 2, hop1_chunk8 = 8 * 2 + 1;
  replay(dag, [&](const DagReplayer& r) {
    CHECK(r.posted_time(1).ps() == 2 * d + w);  // chunk 0 forwarded on hop 1
    CHECK(r.ready_time(hop0_chunk8).ps() == 2 * d + w);
    CHECK(r.ready_time(hop1_chunk8).ps() == 3 * d + 2 * w);
  });
}

TEST_CASE("tree_allreduce: chunk 8's slot is free once the parent or child forwards chunk 0") {
  // One server of 3 GPUs, one channel: the chain 0 (root) - 1 - 2. Per chunk k (ids 4k ..
  // 4k + 3): up 2 -> 1, up 1 -> 0, down 0 -> 1, down 1 -> 2; 9 chunks of 1000 B, step latency d.
  // Chunk 0: 2 -> 1 arrives at d + w; 1 forwards it up (posted 2d + w, arrived 2d + 2w); the
  // root sends it down (posted 3d + 2w, arrived 3d + 3w); 1 forwards it down (posted 4d + 3w).
  // Chunk 8's sends wait for the slot chunk 0 took at their receiver:
  //  - 2 -> 1: until 1 forwarded chunk 0 up, 2d + w (d + w if a slot were free on arrival);
  //  - 1 -> 0: until the root sent chunk 0 down, 3d + 2w; chunk 8 from 2 arrives then too
  //    (posted 3d + w);
  //  - 0 -> 1: until 1 forwarded chunk 0 down, 4d + 3w; chunk 8 up arrives at the root then
  //    too (posted 4d + 2w);
  //  - 1 -> 2: 2 forwards nothing, so until chunk 0 arrived there (4d + 4w), and chunk 8 from
  //    the root (posted 5d + 3w, arrived 5d + 4w).
  constexpr int64_t d = 3'000'000;
  const int64_t w = wire(1000);
  TransferDag dag = tree_allreduce(TreeLayout{1, 3}, 9 * 250, 4, 1, 1000);
  REQUIRE(dag.size() == 9 * 4);
  set_all_delays(dag, d);
  replay(dag, [&](const DagReplayer& r) {
    CHECK(r.posted_time(1).ps() == 2 * d + w);
    CHECK(r.posted_time(2).ps() == 3 * d + 2 * w);
    CHECK(r.posted_time(3).ps() == 4 * d + 3 * w);
    CHECK(r.ready_time(32).ps() == 2 * d + w);
    CHECK(r.ready_time(33).ps() == 3 * d + 2 * w);
    CHECK(r.ready_time(34).ps() == 4 * d + 3 * w);
    CHECK(r.ready_time(35).ps() == 5 * d + 4 * w);
  });
}

TEST_CASE("build_collective: every streamed part of a send waits for the whole forward's post") {
  // LL128 streams transfers inside a server in parts (a head of one stream unit, the rest, a
  // tail). One server of 3 GPUs, one channel, 9 chunks of 1,200 B, step latency d: the chain
  // 2 -> 1 -> 0 up, 0 -> 1 -> 2 down, every transfer cut in parts. Chunk 8's parts from 2 to 1
  // may start only once 1 has posted every part of its forward of chunk 0 up (1 -> 0).
  constexpr int64_t d = 3'000'000;
  CollectiveSpec spec;
  spec.algorithm = "tree";
  spec.chunk_bytes = 1200;
  spec.line_bytes = 128;
  spec.line_data_bytes = 120;
  spec.stream_unit_bytes = 240;
  spec.step_latency_ps = d;
  const TransferDag dag = build_collective(RankLayout{3, 3}, spec, 9 * 300, 4);
  REQUIRE(dag.has_post_dependencies());
  // Each connection's transfers in id order: chunk after chunk, a chunk's parts in order.
  auto parts = [&](int src, int dst) {
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < dag.size(); ++i) {
      if (dag.transfer(i).src_rank == src && dag.transfer(i).dst_rank == dst) ids.push_back(i);
    }
    return ids;
  };
  const std::vector<uint32_t> up2 = parts(2, 1), up1 = parts(1, 0);
  REQUIRE(up2.size() % 9 == 0);
  REQUIRE(up1.size() == up2.size());
  const size_t m = up2.size() / 9;  // parts a chunk
  REQUIRE(m == 3);
  replay(dag, [&](const DagReplayer& r) {
    const int64_t forwarded = r.posted_time(up1[m - 1]).ps();  // 1's last part of chunk 0 up
    for (size_t j = 0; j < m; ++j) {
      INFO("part " << j << " of chunk 8 from 2 to 1");
      CHECK(r.ready_time(up2[8 * m + j]).ps() >= forwarded);
    }
    // The window is what holds the first part back: it is ready exactly then.
    CHECK(r.ready_time(up2[8 * m]).ps() == forwarded);
  });
}
