// Collectives as NCCL runs them (collectives/plan.hpp): rings built over servers stay on one
// rail between servers; channels, loops, the protocol's wire overhead and step latency give the
// transfer counts, bytes and delays their closed forms say; replayed on a fabric, Ring and Tree
// AllReduce match their alpha-beta times, and on a 3:1 spine-leaf a ring whose every hop
// crosses leaves gets the cross-leaf bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>

#include "../support.hpp"
#include "collectives/nccl_plan.hpp"
#include "collectives/nccl_tests.hpp"
#include "collectives/plan.hpp"
#include "collectives/replay.hpp"
#include "collectives/tree.hpp"

using namespace fabricsim;

namespace {

// Simulated time of `dag` on a fresh network of `sc`, seconds; checks nothing was dropped.
double replay_s(const Scenario& sc, const TransferDag& dag) {
  fabricsim::testing::Bed bed(sc);
  PacketTransport transport(bed.sim, *bed.net);
  DagReplayer replayer(dag, transport);
  transport.attach(&replayer);
  replayer.start();
  REQUIRE(bed.sim.run() == StopReason::kWorkloadDone);
  REQUIRE(replayer.done());
  CHECK(bed.net->totals().drops == 0);
  return (replayer.finish_time() - replayer.start_time()).seconds();
}

// RoCEv2 framing (written out, not taken from sim/net): Ethernet 14 + IPv4 20 + UDP 8 + BTH 12
// + ICRC 4 + FCS 4 + preamble/SFD 8 + IFG 12 per data frame; an ACK adds the 4-byte AETH.
constexpr double kFrameOverhead = 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12;
constexpr double kAckWire = kFrameOverhead + 4;

// 16 ranks on 16 one-GPU nodes, 2 channels of 25 GB/s each way (the graph NCCL would find).
NcclRunSetup sixteen_nodes_two_channels() {
  NcclRunSetup setup;
  setup.layout = RankLayout{16, 1};
  setup.channels = 2;
  setup.tune.nranks = 16;
  setup.tune.nnodes = 16;
  setup.tune.nchannels = 2;
  setup.tune.bw_intra_GBps = setup.tune.bw_inter_GBps = 25;
  return setup;
}

}  // namespace

TEST_CASE("ring_order: every rank once, and every hop between servers stays on one rail") {
  for (int g : {1, 2, 4, 8}) {
    for (int servers : {1, 2, 3, 4, 6}) {
      const RankLayout layout{servers * g, g};
      if (layout.ranks < 2) continue;
      std::vector<int> exits(layout.ranks, 0);  // channels leaving a server from each GPU
      for (int c = 0; c < 2 * g; ++c) {
        const std::vector<int> order = ring_order(layout, c);
        std::vector<int> sorted = order;
        std::sort(sorted.begin(), sorted.end());
        std::vector<int> all(layout.ranks);
        std::iota(all.begin(), all.end(), 0);
        REQUIRE(sorted == all);
        // Each server's GPUs are contiguous in the ring (one NVLink run per server).
        int changes = 0;
        for (int i = 0; i < layout.ranks; ++i) {
          const int a = order[i], b = order[(i + 1) % layout.ranks];
          if (a / g == b / g) continue;
          ++changes;
          ++exits[a];
          // Rail-aligned: the same local GPU (NIC) on both ends, except the hop closing a ring
          // over an odd number of servers.
          const bool closing = i == layout.ranks - 1;
          if (!(closing && servers % 2 == 1)) CHECK(a % g == b % g);
        }
        CHECK(changes == (servers > 1 ? servers : 0));
        if (servers > 1 && g > 1) CHECK(order[0] == c % g);  // enters server 0 at GPU c
      }
      // 2G channels spread evenly over the NICs: every GPU sends 2 channels out of its server.
      if (servers > 1 && servers % 2 == 0 && g > 1) {
        for (int r = 0; r < layout.ranks; ++r) CHECK(exits[r] == 2);
      }
    }
  }
  CHECK_THROWS_AS(ring_order(RankLayout{1, 1}, 0), std::invalid_argument);
  CHECK_THROWS_AS(ring_order(RankLayout{8, 8}, -1), std::invalid_argument);
}

TEST_CASE("build_collective: loops, channels, wire factor and latencies as the closed forms say") {
  const int n = 8;
  const int64_t elems = 1 << 20;  // 4 MiB of floats
  CollectiveSpec spec;
  spec.collective = "all_reduce";
  spec.algorithm = "ring";
  spec.channels = 2;
  spec.chunk_bytes = 64 << 10;
  spec.line_bytes = 16;  // LL: 16-byte lines of 8 data bytes
  spec.line_data_bytes = 8;
  spec.step_latency_ps = 600'000;
  spec.launch_latency_ps = 6'600'000;
  const TransferDag dag = build_collective(RankLayout{n, 4}, spec, elems, 4);
  // Channel part 2 MiB; a loop moves N × chunk = 512 KiB: 4 loops of 2(N−1) steps × N ranks.
  const int64_t loops = (elems * 4 / 2) / (n * (64 << 10));
  REQUIRE(loops == 4);
  CHECK(dag.size() == static_cast<size_t>(2 * loops * 2 * (n - 1) * n));
  // Each rank sends 2(N−1)/N of the buffer, doubled on the wire.
  CHECK(dag.total_bytes() == 2 * (2 * (n - 1) * elems * 4 / n) * n);
  int roots = 0;
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const bool root = dag.dependency_count(i) == 0;
    roots += root;
    CHECK(dag.transfer(i).delay_ps == (root ? 6'600'000 + 600'000 : 600'000));
    CHECK(dag.transfer(i).flow < 2);
  }
  CHECK(roots == 2 * n);  // only the first loop's first step of each channel starts at once

  // Every other collective, halving-doubling and tree: bytes and the algorithm/collective rules.
  struct Case {
    const char* collective;
    const char* algorithm;
    int64_t expected_bytes;  // total payload, for N = 8 and `elems` elements of 4 bytes
  };
  const int64_t s = elems * 4;
  const Case cases[] = {
      {"all_gather", "ring", (n - 1) * s},      // each rank forwards N−1 pieces of S/N
      {"reduce_scatter", "ring", (n - 1) * s},  // the input is S per rank
      {"broadcast", "ring", (n - 1) * s},       // every hop of the chain carries S
      {"reduce", "ring", (n - 1) * s},          //
      // p2p on 2 servers × 4 GPUs goes through PXN: a block for another server on another
      // rail crosses NVLink first, then the network (twice the bytes). alltoall: each rank
      // sends 7 blocks of S/8, 3 of them to another server and rail: 10 S/8 per rank.
      {"alltoall", "p2p", n * 10 * s / 8},
      // sendrecv r -> r+1: ranks 3 -> 4 and 7 -> 0 change server and rail (GPU 3 -> GPU 0).
      {"sendrecv", "p2p", (n + 2) * s},
      {"all_reduce", "halving_doubling", 2 * (n - 1) * s / n * n},
      {"all_reduce", "tree", 2 * (n - 1) * s},  // once up and once down per rank but the root
  };
  for (const Case& c : cases) {
    CollectiveSpec x;
    x.collective = c.collective;
    x.algorithm = c.algorithm;
    x.channels = 2;
    x.chunk_bytes = 256 << 10;
    x.root = 3;
    INFO(c.collective << " " << c.algorithm);
    CHECK(build_collective(RankLayout{n, 4}, x, elems, 4).total_bytes() == c.expected_bytes);
    CHECK(algorithm_supports(c.algorithm, c.collective));
  }
  CHECK_FALSE(algorithm_supports("tree", "all_gather"));
  CHECK_FALSE(algorithm_supports("ring", "alltoall"));
  CollectiveSpec bad = spec;
  bad.algorithm = "tree";
  bad.collective = "broadcast";
  CHECK_THROWS_AS(build_collective(RankLayout{n, 4}, bad, elems, 4), std::invalid_argument);
  bad = spec;
  bad.root = n;
  CHECK_THROWS_AS(build_collective(RankLayout{n, 4}, bad, elems, 4), std::invalid_argument);
  bad = spec;
  bad.line_bytes = 4;  // a line shorter than its data
  bad.line_data_bytes = 8;
  CHECK_THROWS_AS(build_collective(RankLayout{n, 4}, bad, elems, 4), std::invalid_argument);
}

TEST_CASE("Ring AllReduce in loops under one switch: t = launch + L·2(N−1)·(α + λ + C/B)") {
  // One leaf: every ring hop is host → leaf → host, the same α for all. A step of chunk C
  // takes α + C/B after its data arrived (the packets of one message pipeline), plus the step
  // latency λ before the post; the loops run one after another (a rank starts loop l+1 when
  // its loop l is done), so the time is L·2(N−1) steps plus the launch latency.
  const int64_t rate = 400'000'000'000, prop = 250'000, lat = 500'000, mtu = 4096;
  const int n = 8;
  const auto sc = fabricsim::testing::one_leaf(n, rate, prop, lat, 64 << 20, mtu);
  const double wire = mtu + kFrameOverhead;
  const double b_Bps = rate / 8.0 * mtu / (wire + kAckWire);  // ACKs share the downlink
  const double alpha_s = (2 * prop + lat) * 1e-12 + wire * 8 / rate;
  for (int64_t step_latency_ps : {int64_t{0}, int64_t{3'400'000}}) {
    CollectiveSpec spec;
    spec.channels = 1;
    spec.chunk_bytes = 1 << 20;
    spec.step_latency_ps = step_latency_ps;
    spec.launch_latency_ps = 8'400'000;
    const int64_t size = 64 << 20;
    const double t = replay_s(sc, build_collective(RankLayout{n, 1}, spec, size / 4, 4));
    const int loops = static_cast<int>(size / (n * spec.chunk_bytes));  // 8
    const double c_bytes = static_cast<double>(size) / (loops * n);
    const double predicted =
        8.4e-6 + loops * 2 * (n - 1) * (alpha_s + step_latency_ps * 1e-12 + c_bytes / b_Bps);
    INFO("step latency " << step_latency_ps << " ps: simulated " << t * 1e6 << " us, closed form "
                         << predicted * 1e6 << " us");
    CHECK(t == Approx(predicted).epsilon(0.02));
  }
}

TEST_CASE("Tree AllReduce on a non-blocking leaf: its closed form, and where Ring and Tree cross") {
  // Double binary tree, two channels (one per tree), even N: every rank is interior (2
  // children) in one tree and a leaf in the other, so per byte of the buffer it sends
  // S/2 × (1 up + 2 down) + S/2 × 1 up = 2S and receives as much: the bandwidth term is 2S/B.
  // Pipelined in chunks of C (C = S/2 when the part is one chunk), the first chunk crosses 2H
  // hops (H = log2 N up, H down) first: t_tree = 2H·(α + C/B) + 2S/B. Ring (one loop):
  // t_ring = 2(N−1)·α + 2(N−1)/N · S/B. Latency O(log N) against O(N), bandwidth 2 against
  // 2(N−1)/N: the two cross where the closed forms are equal.
  const int64_t rate = 400'000'000'000, prop = 250'000, lat = 500'000, mtu = 4096;
  const int n = 16;
  const auto sc = fabricsim::testing::one_leaf(n, rate, prop, lat, 64 << 20, mtu);
  const double wire = mtu + kFrameOverhead;
  // Both directions of every host link carry data and the ACKs of the other direction's data.
  const double b_Bps = rate / 8.0 * mtu / (wire + kAckWire);
  const double alpha_s = (2 * prop + lat) * 1e-12 + wire * 8 / rate;
  const int h = tree_height(n);
  REQUIRE(h == 4);
  const int64_t chunk = 64 << 10;
  auto t_ring = [&](double s) { return 2 * (n - 1) * alpha_s + 2.0 * (n - 1) / n * s / b_Bps; };
  auto t_tree = [&](double s) {
    return 2 * h * (alpha_s + std::min<double>(chunk, s / 2) / b_Bps) + 2 * s / b_Bps;
  };
  CollectiveSpec ring;
  ring.channels = 2;
  CollectiveSpec tree;
  tree.algorithm = "tree";
  tree.channels = 2;
  tree.chunk_bytes = chunk;
  auto sim = [&](const CollectiveSpec& spec, int64_t s) {
    return replay_s(sc, build_collective(RankLayout{n, 1}, spec, s / 4, 4));
  };
  // Large: both within 2% of their closed forms.
  const int64_t big = 64 << 20;
  const double tr_big = sim(ring, big), tt_big = sim(tree, big);
  INFO("64 MiB: ring " << tr_big * 1e6 << " us (closed form " << t_ring(big) * 1e6 << "), tree "
                       << tt_big * 1e6 << " us (" << t_tree(big) * 1e6 << ")");
  CHECK(tr_big == Approx(t_ring(big)).epsilon(0.02));
  CHECK(tt_big == Approx(t_tree(big)).epsilon(0.02));
  // Small: latency terms 2(N−1) against 2H steps (the tiny chunks add little).
  const double tr_small = sim(ring, 4096), tt_small = sim(tree, 4096);
  INFO("4 KiB: ring " << tr_small * 1e6 << " us, tree " << tt_small * 1e6 << " us");
  CHECK(tr_small / tt_small == Approx((n - 1.0) / h).epsilon(0.15));
  // The crossover S* (C = chunk there): 2(N−1)α − 2H(α + C/B) = (2 − 2(N−1)/N)·S*/B.
  const double crossover =
      (2 * (n - 1) * alpha_s - 2 * h * (alpha_s + chunk / b_Bps)) * b_Bps / (2 - 2.0 * (n - 1) / n);
  REQUIRE(crossover > 4 * chunk);
  INFO("crossover by the closed forms: " << crossover << " B");
  const int64_t below = static_cast<int64_t>(crossover / 4) / 64 * 64;
  const int64_t above = static_cast<int64_t>(crossover * 4) / 64 * 64;
  const double tr_below = sim(ring, below), tt_below = sim(tree, below);
  const double tr_above = sim(ring, above), tt_above = sim(tree, above);
  INFO("S*/4: ring " << tr_below * 1e6 << " us, tree " << tt_below * 1e6 << " us; 4 S*: ring "
                     << tr_above * 1e6 << " us, tree " << tt_above * 1e6 << " us");
  CHECK(tt_below < tr_below);
  CHECK(tr_above < tt_above);
}

TEST_CASE("3:1 spine-leaf: a ring whose every hop crosses leaves gets the cross-leaf bound") {
  // 4 leaves x 3 hosts at 400G, one 400G uplink per leaf to one spine: 3 x 400 / 400 = 3:1
  // (one uplink, so no ECMP choice decides the result). Packed ranks (ring order = host order)
  // cross leaves once per leaf: one flow on each uplink, busbw reaches B. Spread ranks (rank r
  // on leaf r mod 4) cross leaves at every hop: the 3 flows leaving a leaf share its uplink
  // (and the 3 entering one its downlink), each gets 1/3, and busbw drops to B/3 (DESIGN.md
  // §5: o:1 caps cross-leaf throughput at 1/o of host rate). PFC keeps the fabric lossless.
  const int64_t rate = 400'000'000'000, prop = 250'000, lat = 500'000, mtu = 4096;
  const int leaves = 4, per_leaf = 3, n = leaves * per_leaf;
  auto sc = fabricsim::testing::spine_leaf(leaves, 1, per_leaf, rate, prop, lat, 8 << 20, mtu);
  sc.topology.oversubscription = 3.0;
  sc.pfc.enabled = true;
  sc.pfc.priorities = {3};
  fabricsim::testing::Bed probe(sc);
  REQUIRE(probe.fabric.oversubscription == Approx(3.0));

  CollectiveSpec ring;
  ring.channels = 1;
  ring.chunk_bytes = 1 << 20;
  const int64_t size = 24 << 20;
  const TransferDag packed = build_collective(RankLayout{n, 1}, ring, size / 4, 4);
  // The same DAG with rank r placed on host (r mod 4) × 3 + r / 4.
  TransferDag spread;
  auto host = [&](int r) { return (r % leaves) * per_leaf + r / leaves; };
  for (uint32_t i = 0; i < packed.size(); ++i) {
    const Transfer& t = packed.transfer(i);
    spread.add(host(t.src_rank), host(t.dst_rank), t.bytes, t.flow);
  }
  for (uint32_t i = 0; i < packed.size(); ++i) {
    for (uint32_t d : packed.dependents(i)) spread.depends(d, i);
  }
  const double wire = mtu + kFrameOverhead;
  const double b_Bps = rate / 8.0 * mtu / (wire + kAckWire);
  const double factor = busbw_factor("all_reduce", n);
  const double busbw_packed = size / replay_s(sc, packed) * factor;
  const double busbw_spread = size / replay_s(sc, spread) * factor;
  INFO("busbw packed " << busbw_packed / 1e9 << " GB/s, spread " << busbw_spread / 1e9
                       << " GB/s, B " << b_Bps / 1e9 << " GB/s");
  // Packed: B less the ring's latency terms (2 loops of 2(N−1) steps of 1 MiB, ~3 µs each
  // across the spine), under 10 %.
  CHECK(busbw_packed <= b_Bps);
  CHECK(busbw_packed >= 0.9 * b_Bps);
  CHECK(busbw_spread <= b_Bps / 3 * 1.01);
  CHECK(busbw_spread == Approx(b_Bps / 3).epsilon(0.05));
}

TEST_CASE("build_collective: staging through host memory delays only transfers between servers") {
  // GPUDirect RDMA off: a step between servers waits for a copy into host memory at the sender
  // and out of it at the receiver, each latency + bytes at the PCIe rate (counted before the
  // post); NVLink steps inside a server are not staged.
  CollectiveSpec spec;
  spec.channels = 1;
  spec.chunk_bytes = 1 << 20;
  spec.step_latency_ps = 1'000'000;
  spec.staging_latency_ps = 2'000'000;      // 2 × 1 µs
  spec.staging_rate_bps = 504'000'000'000;  // PCIe Gen5 x16, 63 GB/s
  const RankLayout layout{8, 4};            // 2 servers × 4 GPUs
  const TransferDag dag = build_collective(layout, spec, (8 << 20) / 4, 4);
  int staged = 0, local = 0;
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    const bool root = dag.dependency_count(i) == 0;
    const int64_t base = 1'000'000 + (root ? spec.launch_latency_ps : 0);
    if (t.src_rank / 4 != t.dst_rank / 4) {
      // bytes × 8 bits at 504 Gb/s, twice, in ps (1 MiB: 16644.06 ns each way), rounded up
      const int64_t copy_ps =
          (t.bytes * 8 * 1'000'000'000'000 + 504'000'000'000 - 1) / 504'000'000'000;
      CHECK(t.delay_ps == base + 2'000'000 + 2 * copy_ps);
      ++staged;
    } else {
      CHECK(t.delay_ps == base);
      ++local;
    }
  }
  // Each ring (2 servers) crosses servers twice per step: 2 of the 8 hops.
  CHECK(staged * 3 == local);
}

TEST_CASE(
    "Halving-doubling AllReduce under one switch: 2·log2(P)·α + 2(P−1)/P·S/B, + 2(α + S/B) off "
    "powers of 2") {
  // Rabenseifner: log2 P exchange steps of S/2, S/4 … (halving) then … S/4, S/2 (doubling);
  // an exchange uses both directions of each host link at once, so a step of b bytes takes
  // α + b/B. With N = P + R (R < P) the R extra ranks first send their whole buffer to a
  // partner and get the result back at the end: two more steps of S.
  const int64_t rate = 400'000'000'000, prop = 250'000, lat = 500'000, mtu = 4096;
  const double wire = mtu + kFrameOverhead;
  const double b_Bps = rate / 8.0 * mtu / (wire + kAckWire);
  const double alpha_s = (2 * prop + lat) * 1e-12 + wire * 8 / rate;
  CollectiveSpec hd;
  hd.algorithm = "halving_doubling";
  hd.channels = 1;
  const int64_t size = 32 << 20;
  for (int n : {8, 6}) {
    const auto sc = fabricsim::testing::one_leaf(n, rate, prop, lat, 64 << 20, mtu);
    int p = 1, log2p = 0;
    while (p * 2 <= n) {
      p *= 2;
      ++log2p;
    }
    double predicted = 2 * log2p * alpha_s + 2.0 * (p - 1) / p * size / b_Bps;
    if (n != p) predicted += 2 * (alpha_s + size / b_Bps);
    const double t = replay_s(sc, build_collective(RankLayout{n, 1}, hd, size / 4, 4));
    INFO("N = " << n << ": simulated " << t * 1e6 << " us, closed form " << predicted * 1e6);
    CHECK(t == Approx(predicted).epsilon(0.02));
  }
}

TEST_CASE("plan_size: NCCL's chunk and channel rules for the pair it runs") {
  // 16 ranks of one GPU, 2 channels, NCCL's default buffers (NCCL 2.20 enqueue.cc).
  NcclRunSetup setup = sixteen_nodes_two_channels();
  setup.algorithm = "tree";
  setup.protocol = "simple";
  // Tree Simple, 1 MiB: step 512 KiB; depth log2 16 = 4. Halve while 1 MiB / (2 × chunk) < 32
  // and chunk > 128 KiB: 512 → 256 → 128 KiB; then while < 16 and > 64 KiB: → 64 KiB (8 per
  // channel); then while < 4 and > 32 KiB: no.
  SizePlan p = plan_size(setup, 1 << 20, 4);
  CHECK(p.algorithm == "tree");
  CHECK(p.spec.chunk_bytes == 65536);
  CHECK(p.spec.channels == 2);  // 1 MiB >= 2 channels × 512 threads × 64 B
  // Ring Simple all_reduce: 4 steps of 512 KiB per chunk.
  setup.algorithm = "ring";
  p = plan_size(setup, 64 << 20, 4);
  CHECK(p.spec.chunk_bytes == 4 * 524288);
  // Ring LL at 8 KiB: the threshold is 8 B × 16 ranks per thread: 8 KiB < 2 × 512 × 128, one
  // channel; LL carries 8 of every 16 bytes.
  setup.protocol = "ll";
  p = plan_size(setup, 8192, 4);
  CHECK(p.spec.channels == 1);
  CHECK(p.spec.line_bytes == 16);
  CHECK(p.spec.line_data_bytes == 8);
  CHECK(p.spec.chunk_bytes == 32768);  // 512 KiB / 8 steps / 2
  // A protocol the workload fixes stays fixed when NCCL_ALGO leaves nothing (NCCL falls back
  // to Ring): all_gather with NCCL_ALGO=Tree and protocol simple.
  setup.collective = "all_gather";
  setup.algorithm = "auto";
  setup.protocol = "simple";
  setup.settings.algo = parse_algo_list("Tree");
  p = plan_size(setup, 1 << 20, 4);
  CHECK(p.algorithm == "ring");
  CHECK(p.protocol == "simple");
}

TEST_CASE("a paced transfer: its last packet leaves once produced, t = S / pace + 2 wire / R + α") {
  // One transfer of S between two hosts of one leaf, paced at 50 Gb/s on a 400 Gb/s link: the
  // sender produces the bytes at the pace, each packet leaves once its last byte is produced,
  // so the last packet starts at S / pace on an idle link and then crosses the NIC and the
  // leaf (store-and-forward): + 2 × its wire time + 2 propagations + the leaf's latency.
  const int64_t rate = 400'000'000'000, prop = 250'000, lat = 500'000, mtu = 4096;
  const auto sc = fabricsim::testing::one_leaf(2, rate, prop, lat, 64 << 20, mtu);
  const int64_t bytes = 4 << 20;
  const double wire = mtu + kFrameOverhead;
  const double tail_s = 2 * wire * 8 / rate + (2 * prop + lat) * 1e-12;
  TransferDag dag;
  dag.add(0, 1, bytes);
  dag.set_pace(0, 50'000'000'000);
  CHECK(replay_s(sc, dag) == Approx(bytes * 8 / 50e9 + tail_s).epsilon(0.002));
  // Paced above the link's rate: the link's own time, S / B + the same tail less one packet
  // (the ACKs go the other way: B is the link's payload rate).
  const double b_Bps = rate / 8.0 * mtu / wire;
  dag.set_pace(0, 4 * rate);
  const double unpaced = replay_s(sc, dag);
  CHECK(unpaced == Approx(bytes / b_Bps + tail_s - wire * 8 / rate).epsilon(0.002));
}

TEST_CASE(
    "a streamed chain pays one unit a hop, not one chunk: launch + λ + α + S/B + (H−1)(λ + α + "
    "U/B)") {
  // Broadcast of S = 4 MiB down a chain of 8 ranks of one server (H = 7 hops, one leaf: every
  // hop host → leaf → host, the same α), in chunks of C = 1 MiB. Stored and forwarded, every
  // hop after the first adds a whole chunk (λ + α + C/B); streamed (LL and LL128: the GPU
  // forwards each line as its flag arrives), one unit U = 32 KiB (λ + α + U/B). The links all
  // carry S, so the first hop's S/B is the bandwidth term in both.
  const int64_t rate = 400'000'000'000, prop = 250'000, lat = 500'000, mtu = 4096;
  const int n = 8;
  const auto sc = fabricsim::testing::one_leaf(n, rate, prop, lat, 64 << 20, mtu);
  const double wire = mtu + kFrameOverhead;
  const double b_Bps = rate / 8.0 * mtu / (wire + kAckWire);  // ACKs share each host's links
  const double alpha_s = (2 * prop + lat) * 1e-12 + wire * 8 / rate;
  const double lambda_s = 1e-6, launch_s = 5e-6, size = 4 << 20;
  for (const int64_t unit : {int64_t{0}, int64_t{32768}}) {
    CollectiveSpec spec;
    spec.collective = "broadcast";
    spec.channels = 1;
    spec.chunk_bytes = 1 << 20;
    spec.step_latency_ps = 1'000'000;
    spec.launch_latency_ps = 5'000'000;
    spec.stream_unit_bytes = unit;
    const double t = replay_s(sc, build_collective(RankLayout{n, n}, spec, (4 << 20) / 4, 4));
    const double per_hop = static_cast<double>(unit > 0 ? unit : spec.chunk_bytes) / b_Bps;
    const double predicted =
        launch_s + lambda_s + alpha_s + size / b_Bps + (n - 2) * (lambda_s + alpha_s + per_hop);
    INFO("unit " << unit << ": simulated " << t * 1e6 << " us, closed form " << predicted * 1e6
                 << " us");
    CHECK(t == Approx(predicted).epsilon(0.02));
  }
}

TEST_CASE("plan_size: LL and LL128 paced at NCCL's protocol bandwidth over the channels running") {
  // 16 ranks on 16 nodes, 2 channels of 25 GB/s (NCCL 2.20 tuning.cc, Ring): LL's bus
  // bandwidth is min(llMaxBw, 2 × 25 / 4) = 12.5 GB/s (llMaxBw 20.4 on more than 2 nodes,
  // Intel), 6.25 GB/s a channel when both run, with LL's 16 wire bytes per 8: 100 Gb/s of
  // framed bytes. LL128 with one GPU a node: min(50 × 0.7, 2 × perChMaxRingLL128Bw 20) = 35
  // GB/s, 17.5 a channel, min'd with the per-channel 20, × 128/120: 149.33 Gb/s. Simple: none.
  // Streaming units: a warp's lines, 32 threads × 8 B (LL), × 60 B (LL128).
  NcclRunSetup setup = sixteen_nodes_two_channels();
  setup.tune.compute_capability = 80;
  setup.tune.tuning = &nccl_tuning("2.20");
  setup.algorithm = "ring";
  setup.protocol = "ll";
  SizePlan p = plan_size(setup, 1 << 20, 4);
  REQUIRE(p.spec.channels == 2);
  CHECK(p.spec.pace_bps == 100'000'000'000);
  CHECK(p.spec.stream_unit_bytes == 256);
  setup.protocol = "ll128";
  p = plan_size(setup, 1 << 20, 4);
  REQUIRE(p.spec.channels == 2);
  CHECK(p.spec.pace_bps == Approx(17.5e9 * 8 * 128 / 120).epsilon(1e-9));
  CHECK(p.spec.stream_unit_bytes == 1920);
  // One channel running (a small size): the protocol's bandwidth on it, up to the per-channel
  // limit: LL 12.5 GB/s × 2 = 200 Gb/s framed; LL128 min(35, 20) GB/s.
  setup.protocol = "ll";
  p = plan_size(setup, 4096, 4);
  REQUIRE(p.spec.channels == 1);
  CHECK(p.spec.pace_bps == 200'000'000'000);
  setup.protocol = "simple";
  p = plan_size(setup, 64 << 20, 4);
  CHECK(p.spec.pace_bps == 0);
  CHECK(p.spec.stream_unit_bytes == 0);
  // NCCL 2.28's tables: LL min(llMaxBw 20.4, 50 × 0.5) = 20.4 GB/s, 10.2 a channel, × 16/8:
  // 163.2 Gb/s; LL128 without the one-GPU penalty min(50 × 0.92, 2 × 20) = 40, 20 a channel, ×
  // 128/120: 170.67 Gb/s.
  setup.tune.tuning = &nccl_tuning("2.28");
  setup.protocol = "ll";
  p = plan_size(setup, 1 << 20, 4);
  REQUIRE(p.spec.channels == 2);
  CHECK(p.spec.pace_bps == Approx(163.2e9).epsilon(1e-9));
  setup.protocol = "ll128";
  p = plan_size(setup, 1 << 20, 4);
  CHECK(p.spec.pace_bps == Approx(20e9 * 8 * 128 / 120).epsilon(1e-9));
}

TEST_CASE("plan_size: p2p LL up to 2 channels per network peer x NCCL_P2P_LL_THRESHOLD") {
  // NCCL 2.20 enqueue.cc addP2pToPlan: LL while a peer's bytes <= p2pnChannelsPerPeer × 16 KiB;
  // p2pnChannelsPerPeer = NCCL_NCHANNELS_PER_NET_PEER = 2 once a peer is across the network,
  // whatever the communicator's channels (16 on 8-NIC servers). Regression: the threshold was
  // taken per channel of the 16, which ran a 16 MiB AllToAll on 256 GPUs (64 KiB per peer) in
  // LL and halved its busbw.
  NcclRunSetup setup;
  setup.layout = RankLayout{16, 8};  // 16 ranks on 2 servers of 8 GPUs, one NIC each
  setup.channels = 16;
  setup.collective = "alltoall";
  setup.tune.nranks = 16;
  setup.tune.nnodes = 2;
  setup.tune.nchannels = 16;
  setup.tune.bw_intra_GBps = setup.tune.bw_inter_GBps = 3.125;
  setup.algorithm = "auto";
  setup.protocol = "auto";
  // 16 ranks: per peer = size / 16.
  CHECK(plan_size(setup, 16 * 16384, 4).protocol == "ll");             // 16 KiB per peer
  CHECK(plan_size(setup, 16 * 32768, 4).protocol == "ll");             // 32 KiB: the threshold
  CHECK(plan_size(setup, 16 * (32768 + 16), 4).protocol == "simple");  // 16 B more per peer
  CHECK(plan_size(setup, 16 << 20, 4).protocol == "simple");           // 1 MiB per peer
  // Inside one server every peer is an NVLink peer: the communicator's channels count.
  setup.layout = RankLayout{8, 8};
  setup.tune.nranks = 8;
  setup.tune.nnodes = 1;
  CHECK(plan_size(setup, 8 * 16 * 16384, 4).protocol == "ll");  // 256 KiB per peer, 16 channels
  CHECK(plan_size(setup, 8 * (16 * 16384 + 16), 4).protocol == "simple");
}

TEST_CASE("estimate_transfers: the count build_collective makes, without building it") {
  const RankLayout layouts[] = {{16, 1}, {12, 4}, {6, 1}};
  for (const RankLayout& layout : layouts) {
    for (const char* coll : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                             "alltoall", "sendrecv"}) {
      for (const char* algo : {"ring", "tree", "halving_doubling", "p2p"}) {
        if (!algorithm_supports(algo, coll)) continue;
        if (std::string(algo) == "tree" && layout.ranks % layout.gpus_per_server) continue;
        CollectiveSpec spec;
        spec.collective = coll;
        spec.algorithm = algo;
        spec.channels = 3;
        spec.chunk_bytes = 40000;
        for (int64_t count : {int64_t{0}, int64_t{1000}, int64_t{1} << 20}) {
          INFO(coll << " " << algo << " ranks " << layout.ranks << " count " << count);
          const int64_t built =
              static_cast<int64_t>(build_collective(layout, spec, count, 4).size());
          const int64_t estimated = estimate_transfers(layout, spec, count, 4);
          if (std::string(algo) == "p2p") {
            CHECK(estimated >= built);  // PXN counted for every transfer
          } else {
            CHECK(estimated == built);
          }
          // Streamed (LL128's warp of lines): at most three parts a transfer, the estimate an
          // upper bound where a server has several GPUs, exact where it has one.
          CollectiveSpec streamed = spec;
          streamed.line_bytes = 128;
          streamed.line_data_bytes = 120;
          streamed.stream_unit_bytes = 1920;
          const int64_t cut =
              static_cast<int64_t>(build_collective(layout, streamed, count, 4).size());
          const int64_t bound = estimate_transfers(layout, streamed, count, 4);
          CHECK(cut <= bound);
          if (layout.gpus_per_server == 1 && std::string(algo) != "p2p") CHECK(cut == bound);
        }
      }
    }
  }
}
