// NVLS (NVLink SHARP) AllReduce: its DAG of loopbacks and NCCL's cost model for it.
//
// Expected values come from NCCL 2.20.3's constants and formulas (src/graph/tuning.cc,
// src/graph/search.cc, src/transport/nvls.cc, src/device/all_reduce.h), worked out by hand here,
// and from the bytes NVLS puts on each NVLink (all_reduce.h: multimem.ld_reduce and
// multimem.st), never from the code under test.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "collectives/nccl_model.hpp"
#include "collectives/nvls.hpp"

using namespace fabricsim;

namespace {

/// One 8 x H100 server as NCCL's model sees it: NVLink inside, 16 ring channels of 370.8 / 16
/// GB/s (18 NVLinks x SM90_NVLINK_BW 20.6 GB/s), NVLS on with its graph of 8 x 40 GB/s.
NcclTuneInputs h100_server() {
  NcclTuneInputs in;
  in.tuning = &nccl_tuning("2.20");  // the expected values are 2.20.3's
  in.nranks = 8;
  in.nnodes = 1;
  in.nchannels = 16;
  in.bw_intra_GBps = 370.8 / 16;
  in.bw_inter_GBps = 50.0 / 2;
  in.compute_capability = 90;
  in.nvls_available = true;
  in.nvls_channels = 8;
  in.nvls_bw_GBps = 40.0;
  return in;
}

}  // namespace

TEST_CASE("nvls: every GPU sends and receives (n + 1) / n of the buffer through the NVSwitch") {
  const int n = 8, elem = 4;
  const int64_t count = 1 << 20;  // 4 MiB
  const TransferDag dag = nvls_allreduce(n, count, elem, 65536, kNvlsWindow);
  std::vector<int64_t> bytes(n, 0);
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    REQUIRE(t.loopback);
    REQUIRE(t.src_rank == t.dst_rank);
    CHECK_FALSE(t.is_compute());
    bytes[t.src_rank] += t.bytes;
  }
  // multimem.ld_reduce: every GPU sends its copy of each slice up once, the head gets the sum
  // down; multimem.st: the head sends the sum up, every GPU gets it down. Per GPU and
  // direction: the buffer (its contributions, or the multicast copies) plus its own slice.
  for (int g = 0; g < n; ++g) CHECK(bytes[g] == count * elem + count * elem / n);
  CHECK(dag.total_bytes() == (n + 1) * count * elem);
  // 4 MiB / 8 slices / 64 KiB chunks = 8 chunks a slice, n + 1 loopbacks each.
  CHECK(dag.size() == size_t(n) * 8 * (n + 1));
}

TEST_CASE("nvls: the head's store waits for every GPU's contribution and the window") {
  const int n = 4, window = 2;
  const TransferDag dag = nvls_allreduce(n, 4 * 4 * 3, 4, 16, window);  // 3 chunks a slice
  const uint32_t block = n + 1;
  for (int h = 0; h < n; ++h) {
    for (uint32_t k = 0; k < 3; ++k) {
      const uint32_t first = (static_cast<uint32_t>(h) * 3 + k) * block;
      const uint32_t store = first + n;
      CHECK(dag.transfer(store).src_rank == h);
      CHECK(dag.transfer(store).flow == static_cast<uint32_t>(n + h));  // its own queue pair
      CHECK(dag.dependency_count(store) == static_cast<uint32_t>(n));
      for (int i = 0; i < n; ++i) {
        CHECK(dag.transfer(first + i).src_rank == i);
        // Chunk k waits for the store of chunk k - window of the same slice.
        CHECK(dag.dependency_count(first + i) == (k >= window ? 1u : 0u));
      }
    }
  }
  CHECK_THROWS_AS(nvls_allreduce(1, 16, 4, 16, 1), std::invalid_argument);
  CHECK_THROWS_AS(nvls_allreduce(4, 16, 4, 2, 1), std::invalid_argument);
  CHECK_THROWS_AS(nvls_allreduce(4, 16, 4, 16, 0), std::invalid_argument);
}

TEST_CASE("nvls: NCCL's NVLS graph on 8 x H100 is 8 channels of 40 GB/s") {
  // search.cc: sm90SpeedArrayIntra {60, 50, 40, ...}; 9 x 50 = 450 > 370.8 >= 9 x 40 = 360.
  const NcclNvlsGraph g = nccl_nvls_graph(8, 18 * 20.6);
  CHECK(g.channels == 8);
  CHECK(g.bw_GBps == 40.0);
  // 4 GPUs: 5 x 60 = 300 <= 370.8, and 60 x 4 <= 370.8 x 4 / 3.
  CHECK(nccl_nvls_graph(4, 18 * 20.6).bw_GBps == 60.0);
  CHECK(nccl_nvls_graph(8, 1.0).channels == 0);  // no speed fits
}

TEST_CASE("nvls: NCCL's cost for NVLS is 23 us and 8 x 40 x 5/6 GB/s on 8 x H100") {
  const NcclAlgoProtoCost c = nccl_tuned_cost(h100_server(), NcclAlgo::kNvls, NcclProto::kSimple);
  CHECK(c.latency_us == Approx(23.0));               // hwLat[NVLINK][NVLS][Simple]
  CHECK(c.bw_GBps == Approx(8 * 40.0 * 5.0 / 6.0));  // 266.67: busbw 466.7 in nccl-tests' terms
  CHECK_THROWS_AS(nccl_tuned_cost(h100_server(), NcclAlgo::kNvls, NcclProto::kLL),
                  std::invalid_argument);
  NcclTuneInputs two = h100_server();
  two.nranks = 16;
  two.nnodes = 2;
  CHECK_THROWS_AS(nccl_tuned_cost(two, NcclAlgo::kNvls, NcclProto::kSimple), std::invalid_argument);
}

TEST_CASE("nvls: NCCL picks Ring LL at 64 KiB and NVLS from 1 MiB on 8 x H100") {
  const NcclTuneInputs in = h100_server();
  const NcclSettings none;
  // Ring LL: 6.6 + 14 x 0.6 = 15 us, bw min(87.7, 370.8 / 4) x 8 / 14 = 50.1 GB/s;
  // NVLS: 23 us + bytes / 266.7 GB/s.
  CHECK(select(in, none, 65536).algo == NcclAlgo::kRing);
  CHECK(select(in, none, 65536).proto == NcclProto::kLL);
  // 1 MiB: Ring LL 15 + 20.9 = 35.9 us; NVLS 23 + 3.9 = 26.9 us.
  CHECK(select(in, none, 1 << 20).algo == NcclAlgo::kNvls);
  CHECK(select(in, none, int64_t{1} << 30).algo == NcclAlgo::kNvls);
  CHECK(select(in, none, int64_t{1} << 30).proto == NcclProto::kSimple);
  // Off: NCCL_ALGO excludes it, or the communicator has none.
  NcclSettings ring_tree;
  ring_tree.algo = parse_algo_list("Ring,Tree");
  CHECK(select(in, ring_tree, int64_t{1} << 30).algo != NcclAlgo::kNvls);
  NcclTuneInputs off = in;
  off.nvls_available = false;
  CHECK(select(off, none, int64_t{1} << 30).algo != NcclAlgo::kNvls);
  CHECK(parse_algo_list("NVLS").allowed ==
        std::array<bool, 7>{false, false, true, false, false, false, false});
  CHECK(parse_nccl_algo("nvls") == NcclAlgo::kNvls);
  CHECK(parse_nccl_algo("NVLSTree") == NcclAlgo::kNvlsTree);
  CHECK(parse_nccl_algo("CollNetChain") == NcclAlgo::kCollNetChain);
}

TEST_CASE("nvls: NCCL has no NVLS without NVSwitch, before Hopper, on 2 GPUs or across nodes") {
  CHECK(nccl_nvls_unavailable(2, true, 90, 8, 1).empty());
  CHECK(nccl_nvls_unavailable(1, true, 100, 4, 1).empty());
  CHECK_THAT(nccl_nvls_unavailable(0, true, 90, 8, 1), Catch::Contains("NCCL_NVLS_ENABLE"));
  CHECK_THAT(nccl_nvls_unavailable(2, false, 90, 8, 1), Catch::Contains("NVSwitch"));
  CHECK_THAT(nccl_nvls_unavailable(2, true, 80, 8, 1), Catch::Contains("8.0"));
  CHECK_THAT(nccl_nvls_unavailable(2, true, 90, 2, 1), Catch::Contains("2 GPUs or fewer"));
  CHECK_THAT(nccl_nvls_unavailable(2, true, 90, 8, 2), Catch::Contains("NVLSTree"));
  const std::map<std::string, std::string> env = {{"NCCL_NVLS_ENABLE", "0"}};
  CHECK(parse_nccl_env(env).nvls_enable == 0);
  CHECK(parse_nccl_env({}).nvls_enable == 2);  // nvls.cc NCCL_PARAM(NvlsEnable, ..., 2)
  CHECK_THROWS_AS(parse_nccl_env({{"NCCL_NVLS_ENABLE", "3"}}), NcclSettingError);
}

TEST_CASE("nvls: across servers the NVLS graph's speed also fits each head's NIC") {
  // search.cc: a channel's head sends and receives its speed through its NIC too. 8 × H100 with
  // 400G NICs (50 GB/s): 40 fits; with 200G NICs (25 GB/s): the first speed <= 25 is 24.
  CHECK(nccl_nvls_graph(8, 18 * 20.6, 50.0).bw_GBps == 40.0);
  CHECK(nccl_nvls_graph(8, 18 * 20.6, 25.0).bw_GBps == 24.0);
  CHECK(nccl_nvls_graph(8, 18 * 20.6, 25.0).channels == 8);
  CHECK(nccl_nvls_graph(8, 18 * 20.6, 2.0).channels == 0);
}

TEST_CASE("nvls: NCCL's NVLSTree cost on 2 and 4 servers of 8 x H100 by release line") {
  // The NVLS graph: 8 channels of 40 GB/s. 16 ranks on 2 nodes (and 32 on 4), latencyInter 0.
  NcclTuneInputs in = h100_server();
  in.nranks = 16;
  in.nnodes = 2;
  in.nvls_available = false;
  in.nvls_tree_available = true;
  const auto cost = [&](const char* version, int nodes) {
    NcclTuneInputs v = in;
    v.tuning = &nccl_tuning(version);
    v.nnodes = nodes;
    v.nranks = 8 * nodes;
    return nccl_tuned_cost(v, NcclAlgo::kNvlsTree, NcclProto::kSimple);
  };
  // 2.18: baseLat 23 + 2 (nNodes − 1) × hwLat[NET][NVLSTree] 19; 8 × 40 × .70 × 2 / (2 × 1).
  CHECK(cost("2.18", 2).latency_us == Approx(23 + 2 * 19.0));
  CHECK(cost("2.18", 2).bw_GBps == Approx(320 * .70));
  // 2.20: intraLat 23 + 2 × log2(2) × 14; 8 × min(40, 40) × 5/6. On 4 nodes bwInter / 2.
  CHECK(cost("2.20", 2).latency_us == Approx(23 + 2 * 14.0));
  CHECK(cost("2.20", 2).bw_GBps == Approx(320 * 5.0 / 6.0));
  CHECK(cost("2.20", 4).latency_us == Approx(23 + 2 * 2 * 14.0));
  CHECK(cost("2.20", 4).bw_GBps == Approx(8 * 20 * 5.0 / 6.0));
  // 2.22: intraLat 25.
  CHECK(cost("2.22", 2).latency_us == Approx(25 + 2 * 14.0));
  // 2.28: min(40 × nvlsEfficiency .85 × 7/8 × 2 = 59.5, 40 × 2, perChMaxNVLSTreeBw 57.7) × 8 =
  // 461.6 bus, × 16/30; on 4 nodes min(59.5, 40, 45.5) × 8 = 320, × 32/62.
  CHECK(cost("2.28", 2).bw_GBps == Approx(8 * 57.7 * 16 / 30));
  CHECK(cost("2.28", 4).bw_GBps == Approx(8 * 40.0 * 32 / 62));
  CHECK_THROWS_WITH(nccl_tuned_cost(in, NcclAlgo::kNvlsTree, NcclProto::kLL128),
                    Catch::Contains("Simple protocol only"));
  NcclTuneInputs one = h100_server();
  CHECK_THROWS_AS(nccl_tuned_cost(one, NcclAlgo::kNvlsTree, NcclProto::kSimple),
                  std::invalid_argument);
}

TEST_CASE("nvls: NCCL 2.28 picks NVLSTree for a 256 MiB AllReduce on 2 x 8 H100") {
  // The ring graph as fabricsim sets it on 2 DGX H100: 16 channels of 400 Gb/s × 8 NICs / 16 =
  // 25 GB/s. Ring Simple: 8.4 + 28 × max(3.4, 3 × 1) + 2 × 14 = 131.6 µs, × 1.4 (plateau),
  // 16 × 25 × 16/30 = 213.3 GB/s: 184.2 + 1258.5 = 1442.7 µs at 256 MiB. NVLSTree (above): 53
  // + 268435456 / 246187 = 1143.4 µs. Tree Simple: min(400 × .92, 16 × 41.4) × .5 = 184 GB/s.
  NcclTuneInputs in = h100_server();
  in.tuning = &nccl_tuning("2.28");
  in.nranks = 16;
  in.nnodes = 2;
  in.bw_intra_GBps = in.bw_inter_GBps = 25.0;
  in.nvls_available = false;
  in.nvls_tree_available = true;
  const NcclChoice c = select(in, NcclSettings{}, int64_t{256} << 20);
  CHECK(c.algo == NcclAlgo::kNvlsTree);
  CHECK(c.time_us == Approx(53 + 268435456.0 / (8 * 57.7 * 16 / 30 * 1000)));
  in.nvls_tree_available = false;
  CHECK(select(in, NcclSettings{}, int64_t{256} << 20).algo == NcclAlgo::kRing);
  CHECK(nccl_nvls_tree_unavailable(2, true, 90, 8, 2).empty());
  CHECK_THAT(nccl_nvls_tree_unavailable(2, true, 90, 8, 1), Catch::Contains("across servers"));
  CHECK_THAT(nccl_nvls_tree_unavailable(2, true, 80, 8, 2), Catch::Contains("8.0"));
}
