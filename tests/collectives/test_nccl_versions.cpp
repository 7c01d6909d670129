// NCCL's tuning per release line (collectives/nccl_versions): nccl.version's names, and the cost
// model with each line's tables.
//
// Expected values are worked out by hand from the constants and formulas of each line's
// src/graph/tuning.cc (the copies versions.cpp names: 2.18.3, 2.20.3, 2.21/2.22, 2.24, 2.25,
// 2.28.3), written out as arithmetic with the constant named.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "collectives/nccl_model.hpp"

using namespace fabricsim;

namespace {

/// `nranks` GPUs on `nnodes` nodes, 2 channels of 25 GB/s (one 400G NIC a node), Intel CPUs,
/// GPU-NIC path PIX, under the release line `version`.
NcclTuneInputs cluster(const std::string& version, int nranks, int nnodes,
                       const std::string& collective = "all_reduce") {
  NcclTuneInputs in;
  in.tuning = &nccl_tuning(version);
  in.collective = collective;
  in.nranks = nranks;
  in.nnodes = nnodes;
  in.nchannels = 2;
  in.bw_intra_GBps = in.bw_inter_GBps = 25.0;
  in.compute_capability = 90;
  in.gpu_nic_path = NcclPathType::kPix;
  return in;
}

std::string error_of(const std::string& version) {
  try {
    nccl_tuning(version);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("nccl.version: a minor version, a release or a log's version string names a table") {
  CHECK(nccl_tuning("2.20").name == "2.19-2.20");
  CHECK(nccl_tuning("2.19.3").name == "2.19-2.20");
  CHECK(nccl_tuning("2.26.6+cuda12.8").name == "2.25-2.27");
  CHECK(nccl_tuning("2.28.3").name == "2.28");
  CHECK(newest_nccl_tuning().name == "2.28");
  // Oldest first, no minor version covered twice, none skipped from 2.18 to 2.28.
  int next = 18;
  for (const NcclTuning& t : nccl_tunings()) {
    CHECK(t.first_minor == next);
    CHECK(t.last_minor >= t.first_minor);
    next = t.last_minor + 1;
  }
  CHECK(next == 29);
}

TEST_CASE("nccl.version: an unmodelled or malformed version says what is modelled") {
  CHECK(error_of("2.16").find("2.18 to 2.28") != std::string::npos);
  CHECK(error_of("2.2").find("did you mean '2.20'") != std::string::npos);
  CHECK(error_of("two").find("MAJOR.MINOR") != std::string::npos);
  CHECK(error_of("2.26.6 cuda").find("MAJOR.MINOR") != std::string::npos);
  // A log's version outside the tables takes the nearest one and says so.
  const NcclTuningMatch old = nccl_tuning_nearest("2.16.2+cuda11.6");
  CHECK(old.tuning->name == "2.18");
  CHECK(old.note.find("oldest") != std::string::npos);
  const NcclTuningMatch newer = nccl_tuning_nearest("2.29.7");
  CHECK(newer.tuning->name == "2.28");
  CHECK(newer.note.find("newest") != std::string::npos);
  CHECK(nccl_tuning_nearest("2.24.3").note.empty());
}

TEST_CASE("nccl.version: Tree Simple's and NVLS's latencies by release line") {
  // hwLat[NET][Tree][Simple]: 14 (2.18.3), 28 (2.19-2.22), 14 (2.23+); [NVLINK][Tree][Simple]
  // 4, 28, 4. hwLat[NVLINK][NVLS][Simple]: 0 in 2.18.3 (its baseLat is 23), 23 in 2.20.3, 25
  // from 2.21.
  const auto net = [](const std::string& v) {
    return nccl_hw_latency_us(NcclHw::kNet, NcclAlgo::kTree, NcclProto::kSimple, nccl_tuning(v));
  };
  CHECK(net("2.18") == Approx(14));
  CHECK(net("2.20") == Approx(28));
  CHECK(net("2.22") == Approx(28));
  CHECK(net("2.24") == Approx(14));
  CHECK(nccl_hw_latency_us(NcclHw::kNvlink, NcclAlgo::kTree, NcclProto::kSimple,
                           nccl_tuning("2.28")) == Approx(4));
  CHECK(nccl_base_latency_us(NcclAlgo::kTree, NcclProto::kSimple, nccl_tuning("2.20")) == 0);
  CHECK(nccl_base_latency_us(NcclAlgo::kTree, NcclProto::kSimple, nccl_tuning("2.24")) ==
        Approx(8.4));
  // NVLS on one 8 x H100 server (8 channels of 40 GB/s): latency baseLat + hwLat[NVLINK].
  NcclTuneInputs in = cluster("2.18", 8, 1);
  in.nvls_available = true;
  in.nvls_channels = 8;
  in.nvls_bw_GBps = 40;
  for (const auto& [version, latency] :
       {std::pair{"2.18", 23.0}, {"2.20", 23.0}, {"2.22", 25.0}, {"2.28", 25.0}}) {
    in.tuning = &nccl_tuning(version);
    INFO(version);
    CHECK(nccl_tuned_cost(in, NcclAlgo::kNvls, NcclProto::kSimple).latency_us == Approx(latency));
  }
  // Bandwidth: 8 × 40 × 5/6 = 266.67 to 2.27; 2.28: 8 × min(40 × 0.85 × 7/8 × 2, 40) = 320, ×
  // nRanks / nsteps = 8/14: 182.86.
  in.tuning = &nccl_tuning("2.27");
  CHECK(nccl_tuned_cost(in, NcclAlgo::kNvls, NcclProto::kSimple).bw_GBps == Approx(266.667));
  in.tuning = &nccl_tuning("2.28");
  CHECK(nccl_tuned_cost(in, NcclAlgo::kNvls, NcclProto::kSimple).bw_GBps == Approx(182.857));
}

TEST_CASE("nccl.version: Ring LL and LL128 bandwidth and latency on one GPU a node") {
  // 2 nodes × 1 GPU, AllReduce: busBw = 2 channels × 25 = 50 GB/s; nsteps = 2; × nRanks/nsteps 1.
  // Ring LL: 2.20 min(llMaxBw[Intel][2 nodes] 39, 50/4) = 12.5; 2.22 min(39, 50 × .5) = 25.
  // Ring LL128: 2.22 min(50 × 0.7 (ppn < 2), 2 × 36.7) = 35; 2.24 min(50 × .92, 73.4) = 46.
  const auto bw = [](const std::string& v, NcclProto p) {
    return nccl_tuned_cost(cluster(v, 2, 2), NcclAlgo::kRing, p).bw_GBps;
  };
  CHECK(bw("2.20", NcclProto::kLL) == Approx(12.5));
  CHECK(bw("2.22", NcclProto::kLL) == Approx(25.0));
  CHECK(bw("2.22", NcclProto::kLL128) == Approx(35.0));
  CHECK(bw("2.24", NcclProto::kLL128) == Approx(46.0));
  // Ring AllReduce Simple latency, latencyInter 0: 2.20 baseLat 8.4 + (nsteps 2 - nInterSteps
  // 2 × 2) × max(hwLat[NVLINK][Ring][Simple] 3.4, netOverhead 1 × 3) + 4 × hwLat[NET][Ring]
  // [Simple] 14 = 57.6; 2.24 (one GPU a node: Tree's NET row, nInterSteps 2 × (2 - 1)):
  // 8.4 + 0 + 2 × 14 = 36.4.
  CHECK(nccl_tuned_cost(cluster("2.20", 2, 2), NcclAlgo::kRing, NcclProto::kSimple).latency_us ==
        Approx(57.6));
  CHECK(nccl_tuned_cost(cluster("2.24", 2, 2), NcclAlgo::kRing, NcclProto::kSimple).latency_us ==
        Approx(36.4));
  // Ring LL on one 8-GPU Hopper node (llMaxBws' Hopper row, one node): 2 channels of 100 GB/s,
  // × 1/3 for AllGather to 2.20: min(87.7, 66.7); from 2.21 min(141, 100).
  NcclTuneInputs node = cluster("2.20", 8, 1, "all_gather");
  node.bw_intra_GBps = node.bw_inter_GBps = 100;
  CHECK(nccl_tuned_cost(node, NcclAlgo::kRing, NcclProto::kLL).bus_bw_GBps == Approx(200.0 / 3));
  node.tuning = &nccl_tuning("2.22");
  CHECK(nccl_tuned_cost(node, NcclAlgo::kRing, NcclProto::kLL).bus_bw_GBps == Approx(100.0));
}

TEST_CASE("nccl.version: Blackwell's rows and LL128's default by release line") {
  // One 8 x B200 node, Tree AllReduce: min(busBw × .92, nChannels × perChMaxTreeBw[arch][1
  // node]); busBw = 2 × 100. Hopper's row (38.7) to 2.24, 2 × 38.7 = 77.4 in 2.25-2.27, 70.0 in
  // 2.28.
  NcclTuneInputs b200 = cluster("2.24", 8, 1);
  b200.compute_capability = 100;
  b200.bw_intra_GBps = b200.bw_inter_GBps = 100;
  const auto tree = [&](const std::string& v) {
    b200.tuning = &nccl_tuning(v);
    return nccl_tuned_cost(b200, NcclAlgo::kTree, NcclProto::kSimple).bus_bw_GBps;
  };
  CHECK(tree("2.24") == Approx(2 * 38.7));
  CHECK(tree("2.27") == Approx(2 * 77.4));
  CHECK(tree("2.28") == Approx(2 * 70.0));
  // LL128 unset: compute capability 10.0 only from 2.25 (case 100); 8.9 (a GPU NCCL lists in
  // no case) only once 2.28 takes any from 7.0.
  b200.tuning = &nccl_tuning("2.24");
  CHECK_FALSE(nccl_ll128_enabled_by_default(b200));
  b200.tuning = &nccl_tuning("2.25");
  CHECK(nccl_ll128_enabled_by_default(b200));
  NcclTuneInputs ada = cluster("2.27", 8, 1);
  ada.compute_capability = 89;
  CHECK_FALSE(nccl_ll128_enabled_by_default(ada));
  ada.tuning = &nccl_tuning("2.28");
  CHECK(nccl_ll128_enabled_by_default(ada));
}

TEST_CASE("nccl.version: PAT's cost from 2.23 for one GPU a node") {
  // 16 nodes × 1 GPU, AllGather of 1 MiB, 2 channels of 25 GB/s: latency 8 + log2(16) ×
  // hwLat[NET][Tree][Simple] 14 / 3.5 + 16 × 2.8 = 68.8 µs; bandwidth 2 × 25 × .75 = 37.5 GB/s,
  // not converted: 68.8 + 1048576 / 37500 = 96.76 µs.
  CHECK(predicted_time_us(cluster("2.24", 16, 16, "all_gather"), NcclAlgo::kPat, NcclProto::kSimple,
                          1 << 20) == Approx(68.8 + 1048576.0 / 37500));
  // No PAT yet in 2.22, none for AllReduce, none with 8 GPUs a node.
  CHECK_FALSE(nccl_pat_unavailable(cluster("2.22", 16, 16, "all_gather")).empty());
  CHECK_FALSE(nccl_algo_supported("all_reduce", NcclAlgo::kPat));
  CHECK_THROWS_AS(predicted_time_us(cluster("2.28", 16, 16, "all_reduce"), NcclAlgo::kPat,
                                    NcclProto::kSimple, 1 << 20),
                  std::invalid_argument);
  CHECK_THROWS_WITH(predicted_time_us(cluster("2.28", 16, 2, "all_gather"), NcclAlgo::kPat,
                                      NcclProto::kSimple, 1 << 20),
                    Catch::Contains("one GPU a server only"));
}

TEST_CASE("nccl.version: the suggestion for a version outside the tables is the nearest end") {
  CHECK(error_of("2.29").find("did you mean '2.28'") != std::string::npos);
  CHECK(error_of("3.0").find("did you mean '2.28'") != std::string::npos);
  CHECK(error_of("2.16").find("did you mean '2.18'") != std::string::npos);
  CHECK(error_of("1.9").find("did you mean '2.18'") != std::string::npos);
}

TEST_CASE("nccl.version: PAT in NCCL's selection for one GPU a node") {
  // 16 nodes × 1 GPU, AllGather, 2 channels of 25 GB/s, NCCL 2.28 (LL128 on: PIX, NVLink row).
  NcclTuneInputs in = cluster("2.28", 16, 16, "all_gather");
  const NcclAlgoProtoCost pat = nccl_tuned_cost(in, NcclAlgo::kPat, NcclProto::kSimple);
  CHECK(pat.latency_us == Approx(8 + 4 * 14 / 3.5 + 16 * 2.8));  // 68.8 µs
  CHECK(pat.bw_GBps == Approx(2 * 25.0 * .75));                  // 37.5, not converted
  CHECK_THROWS_WITH(nccl_tuned_cost(in, NcclAlgo::kPat, NcclProto::kLL),
                    Catch::Contains("Simple protocol only"));
  // 1 MiB: PAT 68.8 + 1048576 / 37500 = 96.8 µs; Ring LL 6.6 + 15 × 5.0 = 81.6 µs + 1048576 /
  // (min(20.4, 25) × 16/15 = 21.76 GB/s) = 129.8 µs; Ring Simple 8.4 + 15 × 14 = 218.4 µs + ...
  CHECK(select(in, NcclSettings{}, 1 << 20).algo == NcclAlgo::kPat);
  // 64 MiB: PAT 68.8 + 1789.6 = 1858.4 µs; Ring Simple 218.4 + 67108864 / (50 × 16/15 =
  // 53.33) = 1476.7 µs; Ring LL128 14 + 15 × 8.5 + 67108864 / (46 × 16/15) = 1509.1 µs.
  const NcclChoice big = select(in, NcclSettings{}, int64_t{64} << 20);
  CHECK(big.algo == NcclAlgo::kRing);
  CHECK(big.proto == NcclProto::kSimple);
  // No PAT before 2.23, with 8 GPUs a node, or when the run turns it off; NCCL_ALGO names it.
  CHECK(select(cluster("2.22", 16, 16, "all_gather"), NcclSettings{}, 1 << 20).algo ==
        NcclAlgo::kRing);
  CHECK(select(cluster("2.28", 16, 2, "all_gather"), NcclSettings{}, 1 << 20).algo !=
        NcclAlgo::kPat);
  in.pat_enabled = false;
  CHECK(select(in, NcclSettings{}, 1 << 20).algo != NcclAlgo::kPat);
  CHECK(parse_nccl_algo("pat") == NcclAlgo::kPat);
  CHECK_THAT(nccl_pat_unavailable(cluster("2.20", 4, 4, "all_gather")),
             Catch::Contains("came with 2.23"));
}

TEST_CASE("nccl.version: CollNet's cost by release line") {
  // 4 nodes x 8 GPUs, AllReduce, 2 channels of 25 GB/s, Hopper; intraLat from the NVLink row.
  NcclTuneInputs in = cluster("2.20", 32, 4);
  in.collnet_direct_available = in.collnet_chain_available = true;
  // 2.19+: CollNetDirect latency baseLat 0 + 2 (min(1, 7) × hwLat[NVLINK][Direct][Simple] 3.7 +
  // 7 × 0.4) + hwLat[NET][Direct][Simple] 31 = 44.0 µs. Bandwidth: busBw 2 × 25 = 50, GPU:NIC
  // factor 8 / 2 = 4, 4 − (4 − 1) / 2 = 2.5: 50 / 2.5 = 20, × .85 (Hopper) = 17, × .5 = 8.5.
  const NcclAlgoProtoCost direct =
      nccl_tuned_cost(in, NcclAlgo::kCollNetDirect, NcclProto::kSimple);
  CHECK(direct.latency_us == Approx(2 * (3.7 + 7 * 0.4) + 31));
  CHECK(direct.bw_GBps == Approx(50.0 / 2.5 * .85 * .5));
  // CollNetChain: 2 × 7 × hwLat[NVLINK][Chain][Simple] 2.8 + hwLat[NET][Chain][Simple] 30 =
  // 69.2 µs; busBw 50 × .5 = 25 GB/s.
  const NcclAlgoProtoCost chain = nccl_tuned_cost(in, NcclAlgo::kCollNetChain, NcclProto::kSimple);
  CHECK(chain.latency_us == Approx(2 * 7 * 2.8 + 30));
  CHECK(chain.bw_GBps == Approx(25.0));
  // 2.18: baseLat 0 for Simple, hwLat NVLINK 8.0 / 4.75, NET 10.7 / 14, the arity term 0.5 µs.
  in.tuning = &nccl_tuning("2.18");
  CHECK(nccl_tuned_cost(in, NcclAlgo::kCollNetDirect, NcclProto::kSimple).latency_us ==
        Approx(2 * (8.0 + 7 * 0.5) + 10.7));
  CHECK(nccl_tuned_cost(in, NcclAlgo::kCollNetChain, NcclProto::kSimple).latency_us ==
        Approx(2 * 7 * 4.75 + 14));
  // Simple only; AllReduce only.
  CHECK_THROWS_WITH(nccl_tuned_cost(in, NcclAlgo::kCollNetChain, NcclProto::kLL128),
                    Catch::Contains("Simple protocol only"));
  CHECK_FALSE(nccl_algo_supported("all_gather", NcclAlgo::kCollNetDirect));
  CHECK_FALSE(nccl_algo_supported("broadcast", NcclAlgo::kCollNetChain));
}

TEST_CASE("nccl.version: CollNet in NCCL's selection only where SHARP is on") {
  // 4 nodes x 8 GPUs, 2 channels of 25 GB/s (the CollNet graph's bwIntra raised to 40), 2.20,
  // 1 GiB AllReduce. Tree Simple: latency 0 + 2 (7 × 28 + 2 × (28 + 0)) = 504 µs, bandwidth
  // min(50 × .92, 2 × 36) × .5 = 23 GB/s: 504 + 1073741824 / 23000 = 47189 µs. Ring Simple:
  // (8.4 + 54 × 3.4 + 8 × 14) × 1.4 = 425.6 µs + 1073741824 / (50 × 32/62) = 42034 µs.
  // CollNetChain 69.2 + 1073741824 / (2 × 40 × .5) = 26913 µs: Chain wins once SHARP is on;
  // CollNetDirect (80 / 2.5 × .85 × .5 = 13.6 GB/s) does not.
  NcclTuneInputs in = cluster("2.20", 32, 4);
  in.collnet_bw_intra_GBps = 40;
  const int64_t gib = int64_t{1} << 30;
  CHECK(select(in, NcclSettings{}, gib).algo != NcclAlgo::kCollNetChain);
  in.collnet_direct_available = in.collnet_chain_available = true;
  CHECK(select(in, NcclSettings{}, gib).algo == NcclAlgo::kCollNetChain);
  // NCCL_ALGO=CollNetDirect forces Direct; "CollNet" alone is not a name NCCL has.
  NcclSettings direct_only;
  direct_only.algo = parse_algo_list("CollNetDirect");
  CHECK(select(in, direct_only, gib).algo == NcclAlgo::kCollNetDirect);
  CHECK(parse_nccl_algo("collnetchain") == NcclAlgo::kCollNetChain);
  CHECK_THROWS_WITH(parse_nccl_algo("CollNet"), Catch::Contains("did you mean 'CollNetDirect'"));
  // Why not: the setting, the network, one server, more than 8 GPUs a server, no NVSwitch.
  using A = NcclAlgo;
  CHECK_THAT(nccl_collnet_unavailable(A::kCollNetChain, 0, true, true, 8, 4),
             Catch::Contains("NCCL_COLLNET_ENABLE=1"));
  CHECK_THAT(nccl_collnet_unavailable(A::kCollNetChain, 1, false, true, 8, 4),
             Catch::Contains("transport is not infiniband"));
  CHECK_THAT(nccl_collnet_unavailable(A::kCollNetChain, 1, true, true, 8, 1),
             Catch::Contains("NCCL_COLLNET_NODE_THRESHOLD"));
  CHECK_THAT(nccl_collnet_unavailable(A::kCollNetDirect, 1, true, true, 16, 4),
             Catch::Contains("at most 8 GPUs a server"));
  CHECK_THAT(nccl_collnet_unavailable(A::kCollNetDirect, 1, true, false, 8, 4),
             Catch::Contains("NVSwitch"));
  CHECK(nccl_collnet_unavailable(A::kCollNetChain, 1, true, false, 8, 4).empty());
  CHECK(nccl_collnet_unavailable(A::kCollNetDirect, 1, true, true, 8, 4).empty());
}
