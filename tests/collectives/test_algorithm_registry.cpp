// The collective-algorithm registry (collectives/algorithm_registry.hpp): the built-ins in their
// order, and an algorithm registered from this file alone run end to end through the run
// library (sim/run/run.hpp) against a closed form.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "collectives/algorithm_registry.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {
namespace {

// A "direct" AllGather: every rank sends its piece of the output buffer straight to every other
// rank, all at once (no dependencies). buffer_count = elements of the output buffer, piece r of
// N holding count/N elements plus one for the first count % N; channel c carries the c-th part
// of every piece on flow c.
TransferDag direct_allgather(const RankLayout& layout, const CollectiveSpec& spec,
                             int64_t buffer_count, int elem_bytes) {
  const int n = layout.ranks;
  TransferDag dag;
  for (int r = 0; r < n; ++r) {
    const int64_t piece = buffer_count / n + (r < buffer_count % n ? 1 : 0);
    for (int c = 0; c < spec.channels; ++c) {
      const int64_t part = piece / spec.channels + (c < piece % spec.channels ? 1 : 0);
      for (int d = 1; d < n; ++d) {
        dag.add(r, (r + d) % n, part * elem_bytes, static_cast<uint32_t>(c));
      }
    }
  }
  return dag;
}

void register_direct_once() {
  if (find_collective_algorithm("direct") != nullptr) return;
  CollectiveAlgorithm direct;
  direct.name = "direct";
  direct.collectives = {"all_gather"};
  direct.build = &direct_allgather;
  direct.estimate_transfers = [](const RankLayout& layout, const CollectiveSpec&, int64_t, int) {
    return int64_t{layout.ranks} * (layout.ranks - 1);
  };
  direct.chunked = false;  // no NCCL chunking: each channel's part in one transfer
  register_collective_algorithm(direct);
}

TEST_CASE("The built-in collective algorithms are registered in their order, with their roles") {
  const std::vector<std::string> names = collective_algorithm_names();
  REQUIRE(names.size() >= 5);
  CHECK(std::vector<std::string>(names.begin(), names.begin() + 5) ==
        std::vector<std::string>{"ring", "tree", "halving_doubling", "p2p", "nvls"});
  CHECK(algorithm_supports("ring", "broadcast"));
  CHECK(algorithm_supports("tree", "all_reduce"));
  CHECK_FALSE(algorithm_supports("tree", "all_gather"));
  CHECK(algorithm_supports("p2p", "alltoall"));
  CHECK_FALSE(algorithm_supports("nonexistent", "all_reduce"));
  CHECK(*find_collective_algorithm("ring")->nccl_algo == NcclAlgo::kRing);
  CHECK(*find_collective_algorithm("tree")->nccl_algo == NcclAlgo::kTree);
  CHECK(*find_collective_algorithm("nvls")->nccl_algo == NcclAlgo::kNvls);
  CHECK(algorithm_supports("nvls", "all_reduce"));
  CHECK_FALSE(algorithm_supports("nvls", "all_gather"));
  CHECK_FALSE(find_collective_algorithm("halving_doubling")->nccl_algo.has_value());
  CHECK(flow_mode_refusal("halving_doubling") ==
        "the flow mode runs NCCL's algorithms (ring, tree, p2p); halving_doubling needs the "
        "packet mode");
}

TEST_CASE("Every built-in collective algorithm is a workload.algorithm the loader accepts") {
  // The loader keeps its own list of names (sim/config does not depend on collectives): it
  // must accept every algorithm the registry is built with.
  for (const char* name : {"ring", "tree", "halving_doubling", "p2p", "nvls"}) {
    REQUIRE(find_collective_algorithm(name) != nullptr);
    RunOptions opts;
    opts.scenario_path = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
    opts.sets = {std::string("workload.algorithm=") + name};
    INFO(name);
    CHECK(load(opts).workload.algorithm == name);
  }
}

TEST_CASE("register_collective_algorithm refuses a duplicate or incomplete entry") {
  register_direct_once();
  CollectiveAlgorithm again;
  again.name = "ring";
  again.collectives = {"all_reduce"};
  again.build = &direct_allgather;
  again.estimate_transfers = [](const RankLayout&, const CollectiveSpec&, int64_t, int) {
    return int64_t{0};
  };
  CHECK_THROWS_AS(register_collective_algorithm(again), std::invalid_argument);
  again.name = "no_collectives";
  again.collectives.clear();
  CHECK_THROWS_AS(register_collective_algorithm(again), std::invalid_argument);
  CHECK(find_collective_algorithm("no_collectives") == nullptr);
}

TEST_CASE("An algorithm registered outside the library runs end to end at its alpha-beta time") {
  register_direct_once();
  // One leaf of 4 hosts (a single non-blocking switch: no ECMP collision to model), RoCEv2,
  // 400 Gb/s host links, 250 ns propagation, a 500 ns switch (quickstart.yaml's values), one
  // channel, Simple protocol (1:1 framing), NCCL's step and launch latencies zeroed.
  RunOptions opts;
  opts.scenario_path = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opts.sets = {
      "topology.leaves=1",        "workload.collective=all_gather", "workload.algorithm=direct",
      "workload.protocol=simple", "workload.minbytes=16MiB",        "workload.maxbytes=16MiB",
      "nccl.nchannels=1",         "nccl.step_latency=0ns",          "nccl.launch_latency=0ns"};
  Scenario sc = load(opts);
  // The registered algorithm is a workload.algorithm the loader accepts.
  REQUIRE(sc.workload.algorithm == "direct");
  const Prepared prepared = prepare(sc);
  const RunReport rep = simulate(sc, prepared, nullptr, false);
  REQUIRE(rep.complete);
  REQUIRE(rep.rows.size() == 1);
  CHECK(rep.rows[0].algorithm == "direct");

  // Closed form (alpha-beta): every host sends N−1 pieces of S/N at once over its one 400G link
  // and receives N−1 at once, so its link is busy for (N−1)·S/N / B, B the RoCEv2 goodput with
  // the downlink also carrying the ACKs of what the host sends: B = rate/8 · mtu / (wire + ack),
  // wire = mtu + 62 header + 20 framing bytes, ack = 4 (AETH) + 62 + 20 (sim/net/wire.hpp).
  // Plus α, one packet's path: 2 links' propagation, the switch's latency, 2 serializations.
  const double rate = 400e9, mtu = 4096, prop_s = 250e-9, switch_s = 500e-9;
  const double n = 4, size = 16 << 20;
  const double wire = mtu + 62 + 20, ack = 4 + 62 + 20;
  const double b_Bps = rate / 8 * mtu / (wire + ack);
  const double alpha_s = 2 * prop_s + switch_s + 2 * wire * 8 / rate;
  const double predicted_s = alpha_s + (n - 1) / n * size / b_Bps;
  const double t_s = static_cast<double>(rep.rows[0].time_ps) * 1e-12;
  INFO("simulated " << t_s * 1e6 << " us, alpha-beta " << predicted_s * 1e6 << " us");
  // Tolerance 0.5 % (measured 0.07 %: the switch is cut-through, so α counts one
  // serialization more than the run pays, and the host's N−1 queue pairs share its link packet
  // by packet rather than as one fluid stream).
  CHECK(t_s == Approx(predicted_s).epsilon(0.005));
  CHECK(rep.counters.drops == 0);

  // Without a flow hook the flow mode refuses it by name, as it does halving_doubling.
  sc.mode = "flow";
  try {
    prepare(sc);
    FAIL("the flow mode accepted an algorithm without flows");
  } catch (const std::exception& e) {
    CHECK_THAT(e.what(), Catch::Contains("direct needs the packet mode (mode: packet)"));
  }
}

}  // namespace
}  // namespace fabricsim
