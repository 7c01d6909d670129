// The training step model (collectives/step_model.hpp) and the compute tasks it relies on in
// TransferDag and DagReplayer. Steps are replayed on an ideal transport (ideal_transport.hpp):
// every network transfer takes kAlpha + bytes × 8 / kRate with no contention, so each step time
// below is worked out by hand from the schedule (GPipe, DDP buckets, Megatron TP AllReduces).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "../support.hpp"
#include "collectives/replay.hpp"
#include "collectives/step_model.hpp"
#include "collectives/transfer_dag.hpp"
#include "ideal_transport.hpp"
#include "sim/core/simulator.hpp"

using namespace fabricsim;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
using testing::IdealTransport;
using testing::kAlpha;
using testing::wire;
// Ring AllReduce of 2 ranks on the ideal transport: two steps of bytes/2 each, in sequence.
constexpr int64_t ring2(int64_t bytes) {
  return 2 * wire(bytes / 2);
}

TransferDag ring(int ranks, int /*ranks_per_server*/, int64_t bytes) {
  return ring_allreduce(ranks, bytes, 1);
}

// Replays `plan` on the ideal transport and checks what must hold for every step: it finishes,
// the critical path adds up to the step exactly, and the analysis' other fields agree.
StepResult replay(const StepPlan& plan) {
  Simulator sim;
  IdealTransport transport(sim);
  DagReplayer replayer(plan.dag, transport);
  transport.attach(&replayer);
  replayer.start();
  if (!replayer.done()) REQUIRE(sim.run() == StopReason::kWorkloadDone);
  REQUIRE(replayer.done());
  const StepResult res = analyze_step(plan, replayer);
  CHECK(res.critical_path.compute_ps + res.critical_path.software_ps +
            res.critical_path.network_ps ==
        res.step_ps);
  CHECK(res.compute_ps ==
        *std::max_element(plan.compute_ps_per_rank.begin(), plan.compute_ps_per_rank.end()));
  CHECK(res.exposed_comm_ps == res.step_ps - plan.compute_ps_per_rank[res.critical_rank]);
  // The path is a chain: each task became ready when the one before it completed.
  REQUIRE(!res.critical_path_ids.empty());
  CHECK(replayer.ready_time(res.critical_path_ids.front()) == replayer.start_time());
  CHECK(replayer.completed_time(res.critical_path_ids.back()) == replayer.finish_time());
  for (size_t i = 1; i < res.critical_path_ids.size(); ++i) {
    CHECK(replayer.ready_time(res.critical_path_ids[i]) ==
          replayer.completed_time(res.critical_path_ids[i - 1]));
  }
  return res;
}

LayerSpec layer(int64_t fwd, int64_t bwd, int64_t params, int64_t tp_comm = 0,
                int64_t activations = 0) {
  return LayerSpec{"l", fwd, bwd, params, tp_comm, activations};
}

}  // namespace

TEST_CASE("TransferDag::add_compute: a task on one rank, no bytes, its duration as delay") {
  TransferDag dag;
  const uint32_t a = dag.add(0, 1, 100);
  const uint32_t c = dag.add_compute(3, 250);
  CHECK(c == a + 1);
  CHECK(dag.transfer(c).is_compute());
  CHECK_FALSE(dag.transfer(a).is_compute());
  CHECK(dag.transfer(c).src_rank == 3);
  CHECK(dag.transfer(c).dst_rank == 3);
  CHECK(dag.transfer(c).bytes == 0);
  CHECK(dag.transfer(c).delay_ps == 250);
  CHECK(dag.add_compute(0, 0) == c + 1);  // a join point
  CHECK(dag.total_bytes() == 100);
  CHECK_THROWS_AS(dag.add_compute(0, -1), std::invalid_argument);
  CHECK_THROWS_AS(dag.add_compute(-1, 0), std::invalid_argument);
  CHECK_THROWS_AS(dag.add(2, 2, 10), std::invalid_argument);  // add still refuses src == dst
}

TEST_CASE("DagReplayer: compute tasks skip the network, 0-duration ones complete at once") {
  TransferDag dag;
  const uint32_t c0 = dag.add_compute(0, 0);  // root join: completes inside start()
  const uint32_t c1 = dag.add_compute(0, 0);  // made ready by c0 while start() still iterates
  dag.depends(c1, c0);
  const uint32_t t2 = dag.add(0, 1, 1000);
  dag.depends(t2, c1);
  dag.set_delay(t2, 7);
  const uint32_t c3 = dag.add_compute(1, 500);
  dag.depends(c3, t2);
  const uint32_t c4 = dag.add_compute(1, 0);
  dag.depends(c4, c3);
  dag.depends(c4, c0);
  const uint32_t c5 = dag.add_compute(2, 0);  // an independent root after the others

  Simulator sim;
  IdealTransport transport(sim);
  DagReplayer replayer(dag, transport);
  transport.attach(&replayer);
  replayer.start();  // c1 must not be released twice (a repeat would throw std::logic_error)
  CHECK(replayer.completed() == 3);  // c0, c1, c5
  CHECK(replayer.completed_time(c1) == SimTime(0));
  CHECK(replayer.completed_time(c3) == SimTime(-1));  // not yet
  REQUIRE(sim.run() == StopReason::kWorkloadDone);
  REQUIRE(replayer.done());

  const int64_t t2_done = 7 + wire(1000);  // delay, then alpha + 1000 B × 80 ps
  CHECK(replayer.ready_time(t2) == SimTime(0));
  CHECK(replayer.posted_time(t2) == SimTime(7));
  CHECK(replayer.completed_time(t2) == SimTime(t2_done));
  CHECK(replayer.ready_time(c3) == SimTime(t2_done));
  CHECK(replayer.posted_time(c3) == SimTime(t2_done + 500));
  CHECK(replayer.completed_time(c3) == SimTime(t2_done + 500));
  CHECK(replayer.ready_time(c4) == SimTime(t2_done + 500));
  CHECK(replayer.completed_time(c4) == SimTime(t2_done + 500));
  CHECK(replayer.completed_time(c5) == SimTime(0));
  CHECK(replayer.finish_time() == SimTime(t2_done + 500));
  CHECK_THROWS_AS(replayer.ready_time(99), std::out_of_range);

  // A DAG of joins only is done by the end of start(), without a single event.
  TransferDag joins;
  const uint32_t j0 = joins.add_compute(0, 0);
  const uint32_t j1 = joins.add_compute(1, 0);
  joins.depends(j1, j0);
  joins.depends(joins.add_compute(0, 0), j1);
  Simulator sim2;
  IdealTransport transport2(sim2);
  DagReplayer replayer2(joins, transport2);
  transport2.attach(&replayer2);
  replayer2.start();
  CHECK(replayer2.done());
  CHECK(sim2.pending_events() == 0);
}

TEST_CASE("build_training_step: one layer, dp = 2, one bucket: fwd + bwd + AllReduce + optimizer") {
  const int64_t fwd = 500'000'000, bwd = 1'000'000'000, params = 4 * kMiB, opt = 50'000'000;
  ParallelSpec spec;
  spec.dp = 2;
  spec.optimizer_ps = opt;
  const StepPlan plan = build_training_step({layer(fwd, bwd, params)}, spec, ring);
  REQUIRE(plan.ranks == 2);
  REQUIRE(plan.buckets.size() == 1);
  CHECK(plan.buckets[0].bytes == params);
  CHECK(plan.compute_ps_per_rank == std::vector<int64_t>{fwd + bwd + opt, fwd + bwd + opt});

  const StepResult res = replay(plan);
  const int64_t allreduce = ring2(params);  // 2 × (1 us + 2 MiB × 80 ps) = 337 544 320 ps
  CHECK(allreduce == 337'544'320);
  CHECK(res.step_ps == fwd + bwd + allreduce + opt);  // 1 887 544 320 ps
  CHECK(res.step_ps == 1'887'544'320);
  CHECK(res.compute_ps == fwd + bwd + opt);
  CHECK(res.exposed_comm_ps == allreduce);
  CHECK(res.gpu_utilization == Approx(double(fwd + bwd + opt) / (fwd + bwd + allreduce + opt)));
  CHECK(res.critical_path.compute_ps == fwd + bwd + opt);
  CHECK(res.critical_path.software_ps == 0);
  CHECK(res.critical_path.network_ps == allreduce);
}

TEST_CASE("build_training_step: the collectives' software delays land in software_ps") {
  const int64_t fwd = 500'000'000, bwd = 1'000'000'000, params = 4 * kMiB, delay = 5'000'000;
  ParallelSpec spec;
  spec.dp = 2;
  auto delayed_ring = [&](int ranks, int, int64_t bytes) {
    TransferDag dag = ring_allreduce(ranks, bytes, 1);
    for (uint32_t i = 0; i < dag.size(); ++i) dag.set_delay(i, delay);
    return dag;
  };
  const StepPlan plan = build_training_step({layer(fwd, bwd, params)}, spec, delayed_ring);
  const StepResult res = replay(plan);
  CHECK(res.step_ps == fwd + bwd + 2 * delay + ring2(params));
  CHECK(res.critical_path.compute_ps == fwd + bwd);
  CHECK(res.critical_path.software_ps == 2 * delay);
  CHECK(res.critical_path.network_ps == ring2(params));
}

TEST_CASE("build_training_step: bucket AllReduces hide behind the next layers' backward") {
  // Four layers, each its own bucket (a bucket closes once it reaches the cap: 4 MiB >= 4 MiB).
  const int64_t fwd = 100'000'000, params = 4 * kMiB, opt = 20'000'000;
  const int64_t allreduce = ring2(params);  // 337 544 320 ps
  ParallelSpec spec;
  spec.dp = 2;
  spec.bucket_cap_bytes = params;
  spec.optimizer_ps = opt;

  SECTION("backward longer than an AllReduce: only the last bucket (layer 0's) is exposed") {
    const int64_t bwd = 1'000'000'000;
    const std::vector<LayerSpec> layers(4, layer(fwd, bwd, params));
    const StepPlan plan = build_training_step(layers, spec, ring);
    REQUIRE(plan.buckets.size() == 4);
    for (int b = 0; b < 4; ++b) {
      CHECK(plan.buckets[b].first_layer == 3 - b);
      CHECK(plan.buckets[b].last_layer == 3 - b);
    }
    const StepResult res = replay(plan);
    CHECK(res.step_ps == 4 * fwd + 4 * bwd + allreduce + opt);
    CHECK(res.exposed_comm_ps == allreduce);
    CHECK(res.critical_path.compute_ps == 4 * fwd + 4 * bwd + opt);
    CHECK(res.critical_path.network_ps == allreduce);
  }
  SECTION("AllReduces longer than a backward: they queue on the communication stream") {
    const int64_t bwd = 100'000'000;
    const std::vector<LayerSpec> layers(4, layer(fwd, bwd, params));
    const StepPlan plan = build_training_step(layers, spec, ring);
    const StepResult res = replay(plan);
    // Bucket 0 (layer 3) starts after one backward; each later one after its predecessor:
    // the four run back to back, and the last three backwards (3 × bwd) are overlapped.
    CHECK(res.step_ps == 4 * fwd + bwd + 4 * allreduce + opt);
    CHECK(res.exposed_comm_ps == 4 * allreduce - 3 * bwd);  // 1 050 177 280 ps
    CHECK(res.exposed_comm_ps == 1'050'177'280);
    CHECK(res.critical_path.compute_ps == 4 * fwd + bwd + opt);
    CHECK(res.critical_path.network_ps == 4 * allreduce);
  }
}

TEST_CASE("build_training_step: DDP bucketing in gradient-ready order, closed at the cap") {
  // PyTorch reducer.cpp compute_bucket_assignment_by_size: each gradient (in ready order,
  // i.e. reverse layer order after the rebuild of the first iteration) is added to the open
  // bucket, which is closed as soon as its size >= the limit; the first bucket's limit is
  // first_bucket_bytes_cap (1 MiB), later ones bucket_cap_mb (25 MiB here).
  ParallelSpec spec;
  spec.dp = 2;
  spec.bucket_cap_bytes = 25 * kMiB;
  auto layers_of = [](std::vector<int64_t> mib) {
    std::vector<LayerSpec> layers;
    for (int64_t m : mib) layers.push_back(layer(1000, 1000, m * kMiB));
    return layers;
  };
  struct Expect {
    int first, last;
    int64_t mib;
  };
  auto check = [&](const StepPlan& plan, const std::vector<Expect>& want) {
    REQUIRE(plan.buckets.size() == want.size());
    for (size_t b = 0; b < want.size(); ++b) {
      CAPTURE(b);
      CHECK(plan.buckets[b].first_layer == want[b].first);
      CHECK(plan.buckets[b].last_layer == want[b].last);
      CHECK(plan.buckets[b].bytes == want[b].mib * kMiB);
      // A ring of 2 moves each rank's whole bucket once in each direction: 2 × bytes, in 4
      // transfers; plus 2 launch points and 2 joins.
      int64_t bytes = 0;
      int transfers = 0;
      for (uint32_t id = plan.buckets[b].first_id; id < plan.buckets[b].end_id; ++id) {
        if (plan.dag.transfer(id).is_compute()) continue;
        bytes += plan.dag.transfer(id).bytes;
        ++transfers;
      }
      CHECK(transfers == 4);
      CHECK(bytes == 2 * want[b].mib * kMiB);
      CHECK(plan.buckets[b].end_id - plan.buckets[b].first_id == 8);
    }
    replay(plan);
  };
  SECTION("10, 20, 30 MiB: layer 2 alone (over the cap), then layers 1 and 0 (30 >= 25)") {
    check(build_training_step(layers_of({10, 20, 30}), spec, ring), {{2, 2, 30}, {0, 1, 30}});
  }
  SECTION("4 × 10 MiB: the 1 MiB first bucket takes layer 3, then 2+1+0 reach 30 >= 25") {
    check(build_training_step(layers_of({10, 10, 10, 10}), spec, ring), {{3, 3, 10}, {0, 2, 30}});
  }
  SECTION("4 × 10 MiB with first_bucket_cap = 25 MiB: 3+2+1 = 30 >= 25, then 0 alone") {
    spec.first_bucket_cap_bytes = 25 * kMiB;
    check(build_training_step(layers_of({10, 10, 10, 10}), spec, ring), {{1, 3, 30}, {0, 0, 10}});
  }
  SECTION("layers without parameters are not bucketed") {
    spec.first_bucket_cap_bytes = 25 * kMiB;
    check(build_training_step(layers_of({10, 0, 10, 0}), spec, ring), {{0, 2, 20}});
  }
  SECTION("dp = 1: buckets listed, no transfers") {
    spec.dp = 1;
    const StepPlan plan = build_training_step(layers_of({10, 20, 30}), spec, ring);
    REQUIRE(plan.buckets.size() == 2);
    for (const Bucket& b : plan.buckets) CHECK(b.first_id == b.end_id);
    const StepResult res = replay(plan);
    CHECK(res.step_ps == 6000);  // 3 forwards + 3 backwards of 1000 ps
    CHECK(res.exposed_comm_ps == 0);
    CHECK(res.gpu_utilization == 1.0);
  }
}

TEST_CASE("build_training_step: tp = 2, pp = 2, GPipe with 2 microbatches") {
  // Two layers, one per stage. Per microbatch and stage: forward f then a TP AllReduce T;
  // backward b then T. Stage boundary: X bytes each way.
  const int64_t f = 100'000'000, b = 200'000'000, opt = 10'000'000;
  const int64_t tp_bytes = 1 * kMiB, act_bytes = 2 * kMiB;
  const int64_t T = ring2(tp_bytes);   // 85 886 080 ps
  const int64_t Xt = wire(act_bytes);  // 168 772 160 ps
  const int64_t u = f + T, v = b + T;  // a stage's forward, backward per microbatch
  const std::vector<LayerSpec> layers{layer(f, b, 4 * kMiB, tp_bytes, act_bytes),
                                      layer(f, b, 4 * kMiB, tp_bytes, 999 * kMiB)};
  ParallelSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  spec.microbatches = 2;
  spec.gpus_per_server = 2;
  spec.optimizer_ps = opt;

  SECTION("dp = 1: (pp − 1 + m) stage times forward and backward, plus the boundary hops") {
    const StepPlan plan = build_training_step(layers, spec, ring);
    REQUIRE(plan.ranks == 4);
    // GPipe: stage 0 F0 F1; stage 1 F0 F1 B1 B0; stage 0 B1 B0. Forward takes (pp − 1 + m) = 3
    // stage times plus one hop, backward 3 stage times plus one hop.
    const StepResult res = replay(plan);
    CHECK(res.step_ps == 3 * u + 3 * v + 2 * Xt + opt);  // 1 762 860 800 ps
    CHECK(res.step_ps == 1'762'860'800);
    for (int r = 0; r < 4; ++r) CHECK(plan.compute_ps_per_rank[r] == 2 * f + 2 * b + opt);
    CHECK(res.exposed_comm_ps == res.step_ps - (2 * f + 2 * b + opt));
    // Which ranks talk: TP within {0,1} and {2,3}, PP 0<->2 and 1<->3; flows per instance.
    for (uint32_t id = 0; id < plan.dag.size(); ++id) {
      const Transfer& t = plan.dag.transfer(id);
      if (t.is_compute()) continue;
      const bool tp_pair = t.src_rank / 2 == t.dst_rank / 2;
      const bool pp_pair = t.src_rank % 2 == t.dst_rank % 2 && t.src_rank != t.dst_rank;
      CHECK(tp_pair != pp_pair);
      CHECK(t.bytes == (tp_pair ? tp_bytes / 2 : act_bytes));
    }
  }
  SECTION("dp = 2: the last bucket's AllReduce runs beside stage 0's last TP AllReduce") {
    spec.dp = 2;
    spec.gpus_per_server = 4;
    const StepPlan plan = build_training_step(layers, spec, ring);
    REQUIRE(plan.ranks == 8);
    // Rank = stage × 4 + d × 2 + t. Count the transfers of each kind.
    int tp_n = 0, dp_n = 0, pp_n = 0;
    for (uint32_t id = 0; id < plan.dag.size(); ++id) {
      const Transfer& t = plan.dag.transfer(id);
      if (t.is_compute()) continue;
      const int s0 = t.src_rank / 4, d0 = t.src_rank / 2 % 2, t0 = t.src_rank % 2;
      const int s1 = t.dst_rank / 4, d1 = t.dst_rank / 2 % 2, t1 = t.dst_rank % 2;
      if (s0 == s1 && d0 == d1) {
        ++tp_n;
      } else if (s0 == s1 && t0 == t1) {
        ++dp_n;
      } else {
        CHECK((d0 == d1 && t0 == t1 && (s1 - s0 == 1 || s0 - s1 == 1)));
        ++pp_n;
      }
    }
    // TP: 2 layers × 2 microbatches × 2 passes × 2 groups per stage × 4 transfers (ring of 2).
    CHECK(tp_n == 64);
    // DP: one bucket per stage × 2 tp indices × 4 transfers.
    CHECK(dp_n == 16);
    // PP: 2 microbatches × 2 directions × 4 (d, t) pairs.
    CHECK(pp_n == 16);
    // Stage 0 finishes last: its last backward ends at 3u + 2Xt + 2v + b; then its TP
    // AllReduce (T) and the bucket's DP AllReduce (A > T) run side by side.
    const int64_t A = ring2(4 * kMiB);
    const StepResult res = replay(plan);
    CHECK(res.step_ps == 3 * u + 2 * v + 2 * Xt + b + std::max(T, A) + opt);
    CHECK(res.critical_rank / 4 == 0);
  }
}

TEST_CASE("build_training_step: layers split into contiguous stages, the first ones larger") {
  ParallelSpec spec;
  spec.pp = 3;
  // 5 layers over 3 stages: 2, 2, 1. Rank s runs the compute of its stage's layers.
  std::vector<LayerSpec> layers;
  for (int i = 0; i < 5; ++i) layers.push_back(layer(int64_t{1} << i, 0, 0));
  const StepPlan plan = build_training_step(layers, spec, ring);
  CHECK(plan.compute_ps_per_rank == std::vector<int64_t>{1 + 2, 4 + 8, 16});
  // No activations: the stages still wait for each other, so the step is their sum.
  CHECK(replay(plan).step_ps == 31);
}

TEST_CASE("build_training_step: invalid specs are refused with a message") {
  const std::vector<LayerSpec> one{layer(1, 1, 1)};
  auto refuses = [&](const std::vector<LayerSpec>& layers, ParallelSpec spec, const char* what) {
    CAPTURE(what);
    CHECK_THROWS_WITH(build_training_step(layers, spec, ring), Catch::Contains(what));
    CHECK_THROWS_AS(build_training_step(layers, spec, ring), std::invalid_argument);
  };
  ParallelSpec ok;
  refuses({}, ok, "no layers");
  ParallelSpec s = ok;
  s.dp = 0;
  refuses(one, s, "dp must be >= 1");
  s = ok;
  s.tp = 0;
  refuses(one, s, "tp must be >= 1");
  s = ok;
  s.pp = 0;
  refuses(one, s, "pp must be >= 1");
  s = ok;
  s.pp = 2;
  refuses(one, s, "more pipeline stages (2) than layers (1)");
  s = ok;
  s.microbatches = 0;
  refuses(one, s, "microbatches must be >= 1");
  s = ok;
  s.bucket_cap_bytes = 0;
  refuses(one, s, "bucket_cap_bytes must be >= 1");
  s = ok;
  s.first_bucket_cap_bytes = 0;
  refuses(one, s, "first_bucket_cap_bytes must be >= 1");
  s = ok;
  s.optimizer_ps = -1;
  refuses(one, s, "optimizer_ps must be >= 0");
  s = ok;
  s.gpus_per_server = 0;
  refuses(one, s, "gpus_per_server must be >= 1");
  s = ok;
  s.tp = 16;
  refuses(one, s, "must fit inside a server");
  s = ok;
  s.tp = 3;
  refuses(one, s, "tp = 3 must divide gpus_per_server = 8");
  for (int field = 0; field < 5; ++field) {
    LayerSpec l = layer(1, 1, 1, 1, 1);
    l.name = "attn";
    int64_t* fields[] = {&l.fwd_ps, &l.bwd_ps, &l.param_bytes, &l.tp_comm_bytes,
                         &l.activation_bytes};
    *fields[field] = -1;
    refuses({layer(1, 1, 1), l}, ok, "layer 1 (attn) has a negative time or size");
  }
  s = ok;
  s.dp = 2;
  CHECK_THROWS_AS(build_training_step(one, s, GroupCollective{}), std::invalid_argument);
  CHECK_THROWS_WITH(build_training_step(one, s,
                                        [](int, int, int64_t) {
                                          TransferDag d;
                                          d.add(0, 5, 1);
                                          return d;
                                        }),
                    Catch::Contains("outside its group"));
  CHECK_THROWS_WITH(build_training_step(one, s,
                                        [](int, int, int64_t) {
                                          TransferDag d;
                                          d.add(0, 1, 1, 64);
                                          return d;
                                        }),
                    Catch::Contains("flow 64"));
}

TEST_CASE("build_training_step: each communicator keeps one flow range across its collectives") {
  ParallelSpec spec;
  spec.dp = 2;
  spec.bucket_cap_bytes = 1;
  spec.first_bucket_cap_bytes = 1;
  auto two_channel_ring = [](int ranks, int, int64_t bytes) {
    TransferDag d;
    d.add(0, 1, bytes, 0);
    d.add(1, 0, bytes, 1);
    (void)ranks;
    return d;
  };
  const StepPlan plan =
      build_training_step({layer(1, 1, 8), layer(1, 1, 8)}, spec, two_channel_ring);
  REQUIRE(plan.buckets.size() == 2);
  std::vector<uint32_t> flows;
  for (uint32_t id = 0; id < plan.dag.size(); ++id) {
    if (!plan.dag.transfer(id).is_compute()) flows.push_back(plan.dag.transfer(id).flow);
  }
  // Both buckets run on the one DP group {0, 1}: the second reuses its queue pairs.
  CHECK(flows == std::vector<uint32_t>{0, 1, 0, 1});

  // tp 2 x dp 2: the TP group {0, 1} and the DP group {0, 2} are two communicators.
  ParallelSpec both;
  both.dp = 2;
  both.tp = 2;
  LayerSpec l = layer(1, 1, 8);
  l.tp_comm_bytes = 8;
  const StepPlan p2 = build_training_step({l, l}, both, two_channel_ring);
  std::set<uint32_t> tp_bases, dp_bases;
  for (uint32_t id = 0; id < p2.dag.size(); ++id) {
    const Transfer& x = p2.dag.transfer(id);
    if (x.is_compute()) continue;
    const uint32_t base = x.flow / kFlowsPerCollective;
    if ((x.src_rank == 0 && x.dst_rank == 1) || (x.src_rank == 1 && x.dst_rank == 0))
      tp_bases.insert(base);
    if ((x.src_rank == 0 && x.dst_rank == 2) || (x.src_rank == 2 && x.dst_rank == 0))
      dp_bases.insert(base);
  }
  CHECK(tp_bases.size() == 1);  // 4 TP AllReduces (2 layers x fwd, bwd), one range
  CHECK(dp_bases.size() == 1);
  CHECK(tp_bases != dp_bases);
}

TEST_CASE("analyze_step: refuses a replay that has not finished") {
  ParallelSpec spec;
  spec.dp = 2;
  const StepPlan plan = build_training_step({layer(10, 10, 100)}, spec, ring);
  Simulator sim;
  IdealTransport transport(sim);
  DagReplayer replayer(plan.dag, transport);
  transport.attach(&replayer);
  CHECK_THROWS_AS(analyze_step(plan, replayer), std::invalid_argument);
}

TEST_CASE("build_training_step: a step replays on the packet network and stops when done") {
  // Two hosts on one leaf; the step's last tasks are compute (the optimizer), completed from a
  // post timer: the run must still end with kWorkloadDone.
  const int64_t fwd = 10'000'000, bwd = 20'000'000, opt = 5'000'000;
  ParallelSpec spec;
  spec.dp = 2;
  spec.optimizer_ps = opt;
  const StepPlan plan = build_training_step({layer(fwd, bwd, 1 * kMiB)}, spec, ring);
  const Scenario sc =
      fabricsim::testing::one_leaf(2, testing::kRate, 1000, 100'000, 4 * kMiB, 4096);
  fabricsim::testing::Bed bed(sc);
  PacketTransport transport(bed.sim, *bed.net);
  DagReplayer replayer(plan.dag, transport);
  transport.attach(&replayer);
  replayer.start();
  REQUIRE(bed.sim.run() == StopReason::kWorkloadDone);
  REQUIRE(replayer.done());
  const StepResult res = analyze_step(plan, replayer);
  CHECK(res.critical_path.compute_ps + res.critical_path.software_ps +
            res.critical_path.network_ps ==
        res.step_ps);
  CHECK(res.critical_path.compute_ps == fwd + bwd + opt);
  // The AllReduce moves 512 KiB twice per rank at 100 Gb/s: at least 2 × 41.9 us on the wire.
  CHECK(res.critical_path.network_ps > 2 * (512 * 1024) * 80);
  CHECK(res.step_ps == fwd + bwd + opt + res.critical_path.network_ps);
}
