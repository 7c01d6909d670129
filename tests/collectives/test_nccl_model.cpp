// NCCL protocol model, NCCL_* settings and the ncclTopoTuneModel / ncclTopoGetAlgoTime cost model.
//
// Expected values are worked out by hand from NCCL 2.20.3's published constants and formulas
// (src/graph/tuning.cc, src/include/device.h, src/init.cc), written out as arithmetic with the
// constant named, never by calling the code under test.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "collectives/nccl_model.hpp"

using namespace fabricsim;

namespace {

using Env = std::map<std::string, std::string>;

/// A DGX-H100-like communicator: 8 GPUs a node on NVLink, 16 channels, 20 GB/s per channel
/// inside a node, 12.5 GB/s per channel between nodes, Intel CPUs, GPU-NIC path PXB.
NcclTuneInputs h100(int nnodes, const std::string& collective = "all_reduce") {
  NcclTuneInputs in;
  in.tuning = &nccl_tuning("2.20");  // the expected values are 2.20.3's
  in.collective = collective;
  in.nranks = 8 * nnodes;
  in.nnodes = nnodes;
  in.nchannels = 16;
  in.bw_intra_GBps = 20.0;
  in.bw_inter_GBps = 12.5;
  in.compute_capability = 90;
  return in;
}

void check_setting_error(const Env& env, const std::string& variable, const std::string& fragment) {
  try {
    parse_nccl_env(env);
    FAIL("no NcclSettingError for " + variable);
  } catch (const NcclSettingError& e) {
    CHECK(e.variable == variable);
    INFO(e.what());
    CHECK(std::string(e.what()).find(variable + ": ") == 0);
    CHECK(std::string(e.what()).find(fragment) != std::string::npos);
  }
}

NcclSettings with_env(const Env& env) {
  return parse_nccl_env(env);
}

}  // namespace

// ----- protocols -----

TEST_CASE("protocol specs follow NCCL's line layouts and default buffers", "[nccl_model]") {
  const ProtocolSpec& ll = protocol_spec(NcclProto::kLL);
  // union ncclLLFifoLine: data1, flag1, data2, flag2, four uint32.
  CHECK(ll.line_bytes == 4 * 4);
  CHECK(ll.data_bytes_per_line == 2 * 4);
  // DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD × NCCL_LL_MAX_NTHREADS × NCCL_STEPS × 16.
  CHECK(ll.default_buffsize_bytes == 8 * 512 * 8 * 16);
  CHECK(ll.default_buffsize_bytes == 524288);
  CHECK(std::string(ll.buffsize_variable) == "NCCL_LL_BUFFSIZE");

  const ProtocolSpec& ll128 = protocol_spec(NcclProto::kLL128);
  // NCCL_LL128_LINESIZE 128 = 16 uint64, NCCL_LL128_DATAELEMS = 16 - 1 of them data.
  CHECK(ll128.line_bytes == 128);
  CHECK(ll128.data_bytes_per_line == (16 - 1) * 8);
  // DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD × NCCL_LL128_MAX_NTHREADS × NCCL_STEPS
  // × sizeof(uint64_t).
  CHECK(ll128.default_buffsize_bytes == 120 * 640 * 8 * 8);
  CHECK(ll128.default_buffsize_bytes == 4915200);
  CHECK(std::string(ll128.buffsize_variable) == "NCCL_LL128_BUFFSIZE");

  const ProtocolSpec& simple = protocol_spec(NcclProto::kSimple);
  CHECK(simple.line_bytes == simple.data_bytes_per_line);
  CHECK(simple.default_buffsize_bytes == 4 * 1024 * 1024);  // DEFAULT_BUFFSIZE 1 << 22
  // computeBuffSizes: NCCL_BUFFSIZE is the Simple buffer's variable only.
  CHECK(std::string(simple.buffsize_variable) == "NCCL_BUFFSIZE");
  CHECK(kNcclSteps == 8);
}

TEST_CASE("step_data_bytes and wire_factor against NCCL's constants", "[nccl_model]") {
  // Default buffers / NCCL_STEPS × data fraction.
  CHECK(step_data_bytes(NcclProto::kSimple, 4194304) == 4194304 / 8);
  CHECK(step_data_bytes(NcclProto::kSimple, 4194304) == 524288);
  CHECK(step_data_bytes(NcclProto::kLL, 524288) == 524288 / 8 / 2);               // 32768
  CHECK(step_data_bytes(NcclProto::kLL128, 4915200) == 4915200 / 8 / 128 * 120);  // 576000
  CHECK(step_data_bytes(NcclProto::kLL128, 4915200) == 576000);
  // A step that is not whole lines is rounded down: 1000 / 8 = 125 bytes = 7 LL lines.
  CHECK(step_data_bytes(NcclProto::kLL, 1000) == 7 * 8);
  CHECK_THROWS_AS(step_data_bytes(NcclProto::kLL, 0), std::invalid_argument);

  CHECK(wire_factor(NcclProto::kLL) == 2.0);
  CHECK(wire_factor(NcclProto::kLL128) == Approx(128.0 / 120.0));
  CHECK(wire_factor(NcclProto::kSimple) == 1.0);

  NcclSettings s = with_env({{"NCCL_BUFFSIZE", "1048576"}});
  CHECK(nccl_buffsize_bytes(NcclProto::kSimple, s) == 1048576);
  CHECK(nccl_buffsize_bytes(NcclProto::kLL, s) == 524288);  // NCCL_BUFFSIZE leaves LL alone
  CHECK(nccl_buffsize_bytes(NcclProto::kLL128, s) == 4915200);
  s = with_env({{"NCCL_LL_BUFFSIZE", "65536"}, {"NCCL_LL128_BUFFSIZE", "614400"}});
  CHECK(nccl_buffsize_bytes(NcclProto::kLL, s) == 65536);
  CHECK(nccl_buffsize_bytes(NcclProto::kLL128, s) == 614400);
  CHECK(nccl_buffsize_bytes(NcclProto::kSimple, s) == 4194304);
}

// ----- names and settings -----

TEST_CASE("names: to_string and NCCL's own spellings, any case", "[nccl_model]") {
  CHECK(std::string(to_string(NcclProto::kLL)) == "ll");
  CHECK(std::string(to_string(NcclProto::kLL128)) == "ll128");
  CHECK(std::string(to_string(NcclProto::kSimple)) == "simple");
  CHECK(std::string(to_string(NcclAlgo::kTree)) == "tree");
  CHECK(std::string(to_string(NcclAlgo::kRing)) == "ring");
  CHECK(parse_nccl_proto("LL") == NcclProto::kLL);
  CHECK(parse_nccl_proto("ll128") == NcclProto::kLL128);
  CHECK(parse_nccl_proto("SIMPLE") == NcclProto::kSimple);
  CHECK(parse_nccl_algo("Ring") == NcclAlgo::kRing);
  CHECK(parse_nccl_algo("tree") == NcclAlgo::kTree);
  CHECK(parse_nccl_algo(to_string(NcclAlgo::kRing)) == NcclAlgo::kRing);
  CHECK(std::string(to_string(NcclPathType::kPxb)) == "PXB");
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO list syntax", "[nccl_model]") {
  NcclAlgoFilter a = parse_algo_list("ring");
  CHECK_FALSE(a.allows(NcclAlgo::kTree));
  CHECK(a.allows(NcclAlgo::kRing));
  a = parse_algo_list("^Tree");
  CHECK_FALSE(a.allows(NcclAlgo::kTree));
  CHECK(a.allows(NcclAlgo::kRing));
  a = parse_algo_list("Tree, RING");
  CHECK(a.allows(NcclAlgo::kTree));
  CHECK(a.allows(NcclAlgo::kRing));

  NcclProtoFilter p = parse_proto_list("LL128,Simple");
  CHECK(p.set_by_user);
  CHECK(p.allowed == std::array<bool, 3>{false, true, true});
  // '^' starts from "all allowed": LL128 is then on, whatever NCCL's default rule says.
  p = parse_proto_list("^LL");
  CHECK(p.allowed == std::array<bool, 3>{false, true, true});
  p = parse_proto_list("simple");
  CHECK(p.allowed == std::array<bool, 3>{false, false, true});

  SECTION("a YAML key can be named instead of the variable") {
    try {
      parse_algo_list("Rign", "nccl.algo");
      FAIL("no throw");
    } catch (const NcclSettingError& e) {
      CHECK(e.variable == "nccl.algo");
      CHECK(std::string(e.what()).find("did you mean 'Ring'?") != std::string::npos);
    }
  }
}

TEST_CASE("NCCL_NET_GDR_LEVEL names and legacy integers", "[nccl_model]") {
  CHECK(parse_gdr_level("LOC") == NcclPathType::kLoc);
  CHECK(parse_gdr_level("PIX") == NcclPathType::kPix);
  CHECK(parse_gdr_level("PXB") == NcclPathType::kPxb);
  CHECK(parse_gdr_level("PHB") == NcclPathType::kPhb);
  CHECK(parse_gdr_level("SYS") == NcclPathType::kSys);
  CHECK(parse_gdr_level("PXN") == NcclPathType::kPxn);
  // paths.cc levelsOldToNew = { LOC, PIX, PXB, PHB, SYS, SYS }.
  CHECK(parse_gdr_level("0") == NcclPathType::kLoc);
  CHECK(parse_gdr_level("1") == NcclPathType::kPix);
  CHECK(parse_gdr_level("2") == NcclPathType::kPxb);
  CHECK(parse_gdr_level("3") == NcclPathType::kPhb);
  CHECK(parse_gdr_level("4") == NcclPathType::kSys);
  CHECK(parse_gdr_level("5") == NcclPathType::kSys);
  // Unset: ncclTopoCheckGdr's default PXB.
  CHECK(NcclSettings{}.net_gdr_level == NcclPathType::kPxb);
}

TEST_CASE("parse_nccl_env reads the NCCL variables it knows", "[nccl_model]") {
  const NcclSettings d = parse_nccl_env({{"NCCL_DEBUG", "INFO"}, {"HOME", "/root"}});
  CHECK(d.algo.allowed == std::array<bool, 7>{true, true, true, true, true, true, true});
  CHECK_FALSE(d.proto.set_by_user);
  CHECK(d.buffsize_bytes == 0);
  CHECK(d.min_nchannels == 0);
  CHECK(d.max_nchannels == 0);
  CHECK(effective_net(d) == NcclNet::kIb);

  const NcclSettings s = parse_nccl_env({{"NCCL_ALGO", "^tree"},
                                         {"NCCL_PROTO", "LL,Simple"},
                                         {"NCCL_BUFFSIZE", "8388608"},
                                         {"NCCL_MIN_NCHANNELS", "4"},
                                         {"NCCL_MAX_NCHANNELS", "32"},
                                         {"NCCL_NET_GDR_LEVEL", "PHB"},
                                         {"NCCL_IB_DISABLE", "1"}});
  CHECK(s.algo.allowed == std::array<bool, 7>{false, true, true, true, true, true, true});
  CHECK(s.proto.allowed == std::array<bool, 3>{true, false, true});
  CHECK(s.buffsize_bytes == 8388608);
  CHECK(s.min_nchannels == 4);
  CHECK(s.max_nchannels == 32);
  CHECK(s.net_gdr_level == NcclPathType::kPhb);
  CHECK(s.ib_disable);
  CHECK(effective_net(s) == NcclNet::kSocket);

  // The legacy NRINGS names count, and the NCHANNELS names override them (connect.cc).
  const NcclSettings r = parse_nccl_env(
      {{"NCCL_MIN_NRINGS", "2"}, {"NCCL_MAX_NRINGS", "8"}, {"NCCL_MAX_NCHANNELS", "12"}});
  CHECK(r.min_nchannels == 2);
  CHECK(r.max_nchannels == 12);
  CHECK(parse_nccl_env({{"NCCL_NET", "socket"}}).net == NcclNet::kSocket);
  CHECK(parse_nccl_env({{"NCCL_NET", "IB"}}).net == NcclNet::kIb);
}

TEST_CASE("bad NCCL values throw NcclSettingError naming the variable", "[nccl_model]") {
  SECTION("misspelt algorithm") {
    check_setting_error({{"NCCL_ALGO", "Rign"}}, "NCCL_ALGO", "did you mean 'Ring'?");
  }
  SECTION("misspelt protocol") {
    check_setting_error({{"NCCL_PROTO", "LL12"}}, "NCCL_PROTO", "did you mean 'LL128'?");
  }
  SECTION("CollNet, a name NCCL does not have (it has CollNetDirect and CollNetChain)") {
    check_setting_error({{"NCCL_ALGO", "Ring,CollNet"}}, "NCCL_ALGO",
                        "did you mean 'CollNetDirect' or 'CollNetChain'?");
  }
  SECTION("empty list") {
    check_setting_error({{"NCCL_PROTO", "^"}}, "NCCL_PROTO", "expected a comma-separated list");
  }
  SECTION("list leaving nothing") {
    check_setting_error({{"NCCL_ALGO", "^Tree,Ring,NVLS,NVLSTree,PAT,CollNetDirect,CollNetChain"}},
                        "NCCL_ALGO", "leaves no algorithm");
  }
  SECTION("size with a unit") {
    check_setting_error({{"NCCL_BUFFSIZE", "4M"}}, "NCCL_BUFFSIZE", "whole number of bytes");
  }
  SECTION("zero size") {
    check_setting_error({{"NCCL_BUFFSIZE", "0"}}, "NCCL_BUFFSIZE", "got 0");
  }
  SECTION("negative size") {
    check_setting_error({{"NCCL_LL_BUFFSIZE", "-1"}}, "NCCL_LL_BUFFSIZE", "whole number");
  }
  SECTION("too many channels") {
    check_setting_error({{"NCCL_MAX_NCHANNELS", "65"}}, "NCCL_MAX_NCHANNELS", "1..64");
  }
  SECTION("zero max channels") {
    check_setting_error({{"NCCL_MAX_NCHANNELS", "0"}}, "NCCL_MAX_NCHANNELS", "1..64");
  }
  SECTION("min above max") {
    check_setting_error({{"NCCL_MIN_NCHANNELS", "8"}, {"NCCL_MAX_NCHANNELS", "4"}},
                        "NCCL_MIN_NCHANNELS", "above NCCL_MAX_NCHANNELS 4");
  }
  SECTION("NCCL_NCHANNELS is not an NCCL variable") {
    check_setting_error({{"NCCL_NCHANNELS", "8"}}, "NCCL_NCHANNELS", "NCCL_MIN_NCHANNELS");
  }
  SECTION("lower-case GDR level") {
    check_setting_error({{"NCCL_NET_GDR_LEVEL", "pxb"}}, "NCCL_NET_GDR_LEVEL",
                        "did you mean 'PXB'?");
  }
  SECTION("misspelt GDR level") {
    check_setting_error({{"NCCL_NET_GDR_LEVEL", "SIS"}}, "NCCL_NET_GDR_LEVEL",
                        "did you mean 'SYS'?");
  }
  SECTION("legacy GDR level out of range") {
    check_setting_error({{"NCCL_NET_GDR_LEVEL", "7"}}, "NCCL_NET_GDR_LEVEL", "0..5");
  }
  SECTION("IB disable not 0 or 1") {
    check_setting_error({{"NCCL_IB_DISABLE", "yes"}}, "NCCL_IB_DISABLE", "0 or 1");
  }
  SECTION("misspelt transport") {
    check_setting_error({{"NCCL_NET", "Sockets"}}, "NCCL_NET", "did you mean 'Socket'?");
  }
  SECTION("IB asked for and disabled") {
    check_setting_error({{"NCCL_NET", "IB"}, {"NCCL_IB_DISABLE", "1"}}, "NCCL_NET",
                        "NCCL_IB_DISABLE=1");
  }
}

// ----- cost model -----

TEST_CASE("hwLat and baseLat tables", "[nccl_model]") {
  const NcclTuning& v2_20 = nccl_tuning("2.20");
  CHECK(nccl_hw_latency_us(NcclHw::kNvlink, NcclAlgo::kTree, NcclProto::kLL, v2_20) == Approx(0.6));
  CHECK(nccl_hw_latency_us(NcclHw::kNvlink, NcclAlgo::kTree, NcclProto::kLL128, v2_20) ==
        Approx(1.25));
  CHECK(nccl_hw_latency_us(NcclHw::kNvlink, NcclAlgo::kRing, NcclProto::kSimple, v2_20) ==
        Approx(3.4));
  CHECK(nccl_hw_latency_us(NcclHw::kPci, NcclAlgo::kRing, NcclProto::kLL128, v2_20) == Approx(2.5));
  CHECK(nccl_hw_latency_us(NcclHw::kPci, NcclAlgo::kRing, NcclProto::kSimple, v2_20) ==
        Approx(5.7));
  CHECK(nccl_hw_latency_us(NcclHw::kNet, NcclAlgo::kTree, NcclProto::kSimple, v2_20) == Approx(28));
  CHECK(nccl_hw_latency_us(NcclHw::kNet, NcclAlgo::kRing, NcclProto::kLL, v2_20) == Approx(2.7));
  CHECK(nccl_hw_latency_us(NcclHw::kNet, NcclAlgo::kRing, NcclProto::kSimple, v2_20) ==
        Approx(14.0));
  CHECK(nccl_base_latency_us(NcclAlgo::kTree, NcclProto::kLL, v2_20) == Approx(6.8));
  CHECK(nccl_base_latency_us(NcclAlgo::kTree, NcclProto::kSimple, v2_20) == 0);
  CHECK(nccl_base_latency_us(NcclAlgo::kRing, NcclProto::kLL, v2_20) == Approx(6.6));
  CHECK(nccl_base_latency_us(NcclAlgo::kRing, NcclProto::kLL128, v2_20) == Approx(14.0));
  CHECK(nccl_base_latency_us(NcclAlgo::kRing, NcclProto::kSimple, v2_20) == Approx(8.4));
}

TEST_CASE("AllReduce on 2 nodes x 8 GPUs: NCCL's latencies and bandwidths", "[nccl_model]") {
  const NcclTuneInputs in = h100(2);
  const auto cost = [&](NcclAlgo a, NcclProto p) { return nccl_tuned_cost(in, a, p); };
  // nranks 16, nnodes 2: nsteps = 2(16-1) = 30, nInterSteps = 2·2 = 4, ppn 8.
  // nnodes <= 2: bwIntra; busBw = 16 channels × 20 = 320. Hopper, 2 nodes: llMaxBw (Intel row)
  // 39.0, perChMaxTreeBw 41.4, perChMaxRingLL128Bw 36.7, perChMaxTreeLL128Bw 36.7.
  // Ring: intra step max(hwLat[NVLINK][Ring], netOverhead 1 µs, ×3 for Simple), inter step
  // hwLat[NET][Ring].
  const double ring_ll_lat = 6.6 + (30 - 4) * 1.0 + 4 * 2.7;       // 43.4
  const double ring_ll128_lat = 14.0 + (30 - 4) * 1.9 + 4 * 4.0;   // 79.4
  const double ring_simple_lat = 8.4 + (30 - 4) * 3.4 + 4 * 14.0;  // 152.8
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL).latency_us == Approx(ring_ll_lat));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL128).latency_us == Approx(ring_ll128_lat));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kSimple).latency_us == Approx(ring_simple_lat));
  // Ring bandwidths × nranks/nsteps = 16/30.
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL).bw_GBps ==
        Approx(std::min(39.0, 320 / 4.0) * 16 / 30));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL128).bw_GBps ==
        Approx(std::min(320 * 0.92, 16 * 36.7) * 16 / 30));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kSimple).bw_GBps == Approx(320.0 * 16 / 30));

  // Tree: baseLat + 2 × ((8 - 1) × hwLat[NVLINK][Tree] + log2(2) × hwLat[NET][Tree]).
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL).latency_us == Approx(6.8 + 2 * (7 * 0.6 + 1 * 5.0)));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL128).latency_us ==
        Approx(14.0 + 2 * (7 * 1.25 + 1 * 8.5)));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kSimple).latency_us ==
        Approx(0 + 2 * (7 * 28 + 1 * 28.0)));
  // Tree: t = min(320 × 0.92, 16 × 41.4) = 294.4, then × 0.5.
  const double t = std::min(320 * 0.92, 16 * 41.4);
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL).bw_GBps == Approx(std::min(t / 3.8, 39.0) * 0.5));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL128).bw_GBps ==
        Approx(std::min(t * 120 / 128, 16 * 36.7) * 0.5));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kSimple).bw_GBps == Approx(t * 0.5));
}

TEST_CASE("AllReduce on 16 nodes x 8 GPUs: NCCL's latencies and bandwidths", "[nccl_model]") {
  const NcclTuneInputs in = h100(16);
  const auto cost = [&](NcclAlgo a, NcclProto p) { return nccl_tuned_cost(in, a, p); };
  // nranks 128, nnodes 16: nsteps = 2 × 127 = 254, nInterSteps = 2 × 16 = 32.
  // nnodes > 2: bwInter; busBw = 16 × 12.5 = 200. Hopper, > 2 nodes: llMaxBw 20.4,
  // perChMaxTreeBw 36.0, perChMaxRingLL128Bw 36.7, perChMaxTreeLL128Bw 29.0.
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL).latency_us == Approx(6.6 + 222 * 1.0 + 32 * 2.7));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL128).latency_us == Approx(14.0 + 222 * 1.9 + 32 * 4.0));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kSimple).latency_us ==
        Approx(8.4 + 222 * 3.4 + 32 * 14.0));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL).bw_GBps ==
        Approx(std::min(20.4, 200 / 4.0) * 128 / 254));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kLL128).bw_GBps ==
        Approx(std::min(200 * 0.92, 16 * 36.7) * 128 / 254));
  CHECK(cost(NcclAlgo::kRing, NcclProto::kSimple).bw_GBps == Approx(200.0 * 128 / 254));
  // Tree: log2(16) = 4 network hops each way.
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL).latency_us == Approx(6.8 + 2 * (7 * 0.6 + 4 * 5.0)));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL128).latency_us ==
        Approx(14.0 + 2 * (7 * 1.25 + 4 * 8.5)));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kSimple).latency_us == Approx(2 * (7 * 28 + 4 * 28.0)));
  const double t = std::min(200 * 0.92, 16 * 36.0);  // 184
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL).bw_GBps == Approx(std::min(t / 3.8, 20.4) * 0.5));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kLL128).bw_GBps ==
        Approx(std::min(t * 120 / 128, 16 * 29.0) * 0.5));
  CHECK(cost(NcclAlgo::kTree, NcclProto::kSimple).bw_GBps == Approx(t * 0.5));
}

TEST_CASE("model refinements: AMD CPU, inter-node latency, one node, other collectives",
          "[nccl_model]") {
  SECTION("AMD CPU: llMaxBws row 1 and a 2 µs net overhead") {
    NcclTuneInputs in = h100(16);
    in.cpu_amd = true;
    const auto ll = nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kLL);
    CHECK(ll.bw_GBps == Approx(std::min(19.0, 200 / 4.0) * 128 / 254));
    CHECK(ll.latency_us == Approx(6.6 + 222 * std::max(0.6, 2.0) + 32 * 2.7));
    const auto simple = nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kSimple);
    CHECK(simple.latency_us == Approx(8.4 + 222 * std::max(3.4, 2.0 * 3) + 32 * 14.0));
  }
  SECTION("graph latencyInter: once per network step, twice for Simple") {
    NcclTuneInputs in = h100(2);
    in.latency_inter_us = 1.0;
    CHECK(nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kLL).latency_us ==
          Approx(6.6 + 26 * 1.0 + 4 * (2.7 + 1.0)));
    CHECK(nccl_tuned_cost(in, NcclAlgo::kTree, NcclProto::kSimple).latency_us ==
          Approx(2 * (7 * 28 + 1 * (28 + 1.0 + 1.0))));
  }
  SECTION("one node: no network steps, no net overhead, 7/9 for Tree LL128") {
    const NcclTuneInputs in = h100(1);
    // nsteps 14, nInterSteps 0; llMaxBws[Hopper][1 node] = 87.7.
    const auto ll = nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kLL);
    CHECK(ll.latency_us == Approx(6.6 + 14 * 0.6));
    CHECK(ll.bw_GBps == Approx(std::min(87.7, 320 / 4.0) * 8 / 14));
    const auto tree128 = nccl_tuned_cost(in, NcclAlgo::kTree, NcclProto::kLL128);
    const double t = std::min(320 * 0.92, 16 * 38.7);  // perChMaxTreeBws[Hopper][1 node]
    CHECK(tree128.bw_GBps == Approx(std::min(t * 7 / 9, 16 * 36.7) * 0.5));
    CHECK(tree128.latency_us == Approx(14.0 + 2 * (7 * 1.25 + 0 * 8.5)));
  }
  SECTION("AllGather: nranks - 1 steps, nnodes - 1 of them on the network, ring only") {
    const NcclTuneInputs in = h100(2, "all_gather");
    const auto ll = nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kLL);
    CHECK(ll.latency_us == Approx(6.6 + (15 - 1) * 1.0 + 1 * 2.7));
    CHECK(ll.bw_GBps == Approx(std::min(39.0, 320 / 4.0) * 16 / 15));
    CHECK(nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kSimple).latency_us ==
          Approx(8.4 + 14 * 3.4 + 1 * 14.0));
    CHECK_FALSE(nccl_algo_supported("all_gather", NcclAlgo::kTree));
    CHECK_FALSE(nccl_algo_supported("reduce_scatter", NcclAlgo::kTree));
    CHECK_FALSE(nccl_algo_supported("broadcast", NcclAlgo::kTree));
    CHECK_FALSE(nccl_algo_supported("reduce", NcclAlgo::kTree));
    CHECK(nccl_algo_supported("all_reduce", NcclAlgo::kTree));
    CHECK_THROWS_AS(nccl_tuned_cost(in, NcclAlgo::kTree, NcclProto::kLL), std::invalid_argument);
  }
  SECTION("Broadcast on one node: LL at 1/3, same-channel ring pays one step") {
    NcclTuneInputs in = h100(1, "broadcast");
    const auto ll = nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kLL);
    CHECK(ll.bw_GBps == Approx(std::min(87.7, 320 / 3.0) * 8 / 8));
    CHECK(ll.latency_us == Approx(6.6 + 0.6));
    in.ring_same_channels = false;  // nsteps 8; Simple takes hwLat[NVLINK][Tree][Simple]
    CHECK(nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kSimple).latency_us ==
          Approx(8.4 + 8 * 28.0));
  }
}

TEST_CASE("predicted time: tree correction factors and the ring plateau", "[nccl_model]") {
  const NcclTuneInputs in = h100(2);
  // treeCorrectionFactor[Simple]: index log2(bytes/64); 0 below 128 B; 1.0 from 2^23 × 64 B.
  CHECK(nccl_tree_correction_factor(NcclProto::kSimple, 10) == Approx(0.9));
  CHECK(nccl_tree_correction_factor(NcclProto::kLL, 262144) == Approx(0.4));  // index 12
  CHECK(nccl_tree_correction_factor(NcclProto::kLL128, 262144) == Approx(0.6));
  CHECK(nccl_tree_correction_factor(NcclProto::kSimple, int64_t{1} << 28) == Approx(0.9));  // 22
  CHECK(nccl_tree_correction_factor(NcclProto::kSimple, int64_t{1} << 29) == 1.0);          // 23
  CHECK(predicted_time_us(in, NcclAlgo::kTree, NcclProto::kLL, 262144) ==
        Approx(25.2 + 262144 / (1000 * 19.5 * 0.4)));

  // Plateau: Ring Simple AllReduce on > 1 node once bytes / (16 channels × 16 ranks) >= 64, i.e.
  // from 16384 bytes; × 1.4 at compute capability >= 80.
  const double simple_bw = 320.0 * 16 / 30;
  CHECK(predicted_time_us(in, NcclAlgo::kRing, NcclProto::kSimple, 16383) ==
        Approx(152.8 + 16383 / (1000 * simple_bw)));
  CHECK(predicted_time_us(in, NcclAlgo::kRing, NcclProto::kSimple, 16384) ==
        Approx(152.8 * 1.4 + 16384 / (1000 * simple_bw)));
  NcclTuneInputs volta = in;
  volta.compute_capability = 70;  // × 1.9 below 80
  CHECK(predicted_time_us(volta, NcclAlgo::kRing, NcclProto::kSimple, 16384) ==
        Approx(152.8 * 1.9 + 16384 / (1000 * simple_bw)));
  // No plateau for other protocols or on one node.
  CHECK(predicted_time_us(in, NcclAlgo::kRing, NcclProto::kLL, 16384) ==
        Approx(43.4 + 16384 / (1000 * 20.8)));
  CHECK_THROWS_AS(predicted_time_us(in, NcclAlgo::kRing, NcclProto::kLL, -1),
                  std::invalid_argument);
}

TEST_CASE("select: LL at small sizes, Simple at large ones, switch points by hand",
          "[nccl_model]") {
  const NcclTuneInputs in = h100(2);
  const NcclSettings defaults;
  // This model's choices over powers of two, 2 nodes x 8 GPUs: Tree/LL up to 128 KiB, Tree/LL128
  // from 256 KiB, Ring/LL128 from 32 MiB, Ring/Simple from 256 MiB.
  const NcclChoice small = select(in, defaults, 1024);
  CHECK(small.algo == NcclAlgo::kTree);
  CHECK(small.proto == NcclProto::kLL);
  // 1024 B: index log2(16) = 4, treeCorrectionFactor[LL][4] = 0.9.
  CHECK(small.time_us == Approx(25.2 + 1024 / (1000 * 19.5 * 0.9)));

  // LL -> LL128 between 128 KiB (index 11: LL 0.5, LL128 0.6) and 256 KiB (index 12: 0.4, 0.6).
  const double tree_ll_128k = 25.2 + 131072 / (1000 * 19.5 * 0.5);      // 38.64
  const double tree_ll128_128k = 48.5 + 131072 / (1000 * 138.0 * 0.6);  // 50.08
  const double tree_ll_256k = 25.2 + 262144 / (1000 * 19.5 * 0.4);      // 58.81
  const double tree_ll128_256k = 48.5 + 262144 / (1000 * 138.0 * 0.6);  // 51.67
  CHECK(tree_ll_128k < tree_ll128_128k);
  CHECK(tree_ll128_256k < tree_ll_256k);
  NcclChoice c = select(in, defaults, 131072);
  CHECK((c.algo == NcclAlgo::kTree && c.proto == NcclProto::kLL));
  CHECK(c.time_us == Approx(tree_ll_128k));
  c = select(in, defaults, 262144);
  CHECK((c.algo == NcclAlgo::kTree && c.proto == NcclProto::kLL128));
  CHECK(c.time_us == Approx(tree_ll128_256k));

  // Ring LL128 -> Ring Simple between 128 MiB and 256 MiB (plateau × 1.4 on Simple).
  const double ring_bw_ll128 = std::min(320 * 0.92, 16 * 36.7) * 16 / 30;
  const double ring_bw_simple = 320.0 * 16 / 30;
  const double mib128 = 134217728, mib256 = 268435456;
  CHECK(79.4 + mib128 / (1000 * ring_bw_ll128) < 152.8 * 1.4 + mib128 / (1000 * ring_bw_simple));
  CHECK(152.8 * 1.4 + mib256 / (1000 * ring_bw_simple) < 79.4 + mib256 / (1000 * ring_bw_ll128));
  c = select(in, defaults, 134217728);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kLL128));
  c = select(in, defaults, 268435456);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kSimple));
  CHECK(c.time_us == Approx(152.8 * 1.4 + mib256 / (1000 * ring_bw_simple)));
  c = select(in, defaults, int64_t{1} << 30);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kSimple));

  // 16 nodes: small is still Tree/LL.
  c = select(h100(16), defaults, 1024);
  CHECK((c.algo == NcclAlgo::kTree && c.proto == NcclProto::kLL));
  CHECK(c.time_us == Approx(55.2 + 1024 / (1000 * 10.2 * 0.9)));
}

TEST_CASE("select honours NCCL_ALGO and NCCL_PROTO", "[nccl_model]") {
  const NcclTuneInputs in = h100(2);
  NcclChoice c = select(in, with_env({{"NCCL_ALGO", "^Tree"}}), 1024);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kLL));
  CHECK(c.time_us == Approx(43.4 + 1024 / (1000 * 20.8)));
  c = select(in, with_env({{"NCCL_ALGO", "ring"}}), 1024);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kLL));
  // LL128 index 4 factor 1.0: 48.5 + 1024/138000 beats Ring LL128 (79.4) and Tree Simple (448).
  c = select(in, with_env({{"NCCL_PROTO", "LL128,Simple"}}), 1024);
  CHECK((c.algo == NcclAlgo::kTree && c.proto == NcclProto::kLL128));
  CHECK(c.time_us == Approx(48.5 + 1024 / (1000 * 138.0 * 1.0)));
  c = select(in, with_env({{"NCCL_ALGO", "^Tree"}, {"NCCL_PROTO", "LL128,Simple"}}), 1024);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kLL128));
  c = select(in, with_env({{"NCCL_PROTO", "Simple"}}), 1024);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kSimple));
  CHECK(c.time_us == Approx(152.8 + 1024 / (1000 * 320.0 * 16 / 30)));
}

TEST_CASE("select when the filters leave nothing: throw, or NCCL's ring fallback", "[nccl_model]") {
  const NcclTuneInputs in = h100(2, "all_gather");
  const NcclSettings tree_only = with_env({{"NCCL_ALGO", "Tree"}});
  CHECK_THROWS_WITH(select(in, tree_only, 1024), Catch::Contains("all_gather"));
  CHECK_THROWS_AS(select(in, tree_only, 1024), std::invalid_argument);
  const NcclChoice c = select(in, tree_only, 1024, NcclEmptyChoice::kRingFallback);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kLL));
  CHECK(c.time_us == Approx(6.6 + 14 * 1.0 + 2.7 + 1024 / (1000 * 39.0 * 16 / 15)));
}

TEST_CASE("LL128's default-enable rule", "[nccl_model]") {
  NcclTuneInputs in = h100(2);
  CHECK(nccl_ll128_enabled_by_default(in));  // sm90, NVLink, GPU-NIC PXB
  in.gpu_nic_path = NcclPathType::kPxn;
  CHECK(nccl_ll128_enabled_by_default(in));  // PXN allowed from sm90
  in.compute_capability = 80;
  CHECK_FALSE(nccl_ll128_enabled_by_default(in));
  in.gpu_nic_path = NcclPathType::kPix;
  CHECK(nccl_ll128_enabled_by_default(in));
  in.compute_capability = 86;  // only exactly 70, 80, 90
  CHECK_FALSE(nccl_ll128_enabled_by_default(in));
  in.compute_capability = 90;
  in.intra_hw = NcclHw::kPci;
  CHECK_FALSE(nccl_ll128_enabled_by_default(in));

  // GPU-NIC path SYS: LL128 off by default, so at 256 KiB Ring/LL wins instead of Tree/LL128
  // (Tree/LL 58.81 as above, Ring/LL 43.4 + 262144/20800 = 56.0).
  NcclTuneInputs far = h100(2);
  far.gpu_nic_path = NcclPathType::kSys;
  NcclChoice c = select(far, NcclSettings{}, 262144);
  CHECK((c.algo == NcclAlgo::kRing && c.proto == NcclProto::kLL));
  CHECK(c.time_us == Approx(43.4 + 262144 / (1000 * 20.8)));
  // Naming LL128 in NCCL_PROTO turns it on regardless.
  c = select(far, with_env({{"NCCL_PROTO", "^LL"}}), 262144);
  CHECK((c.algo == NcclAlgo::kTree && c.proto == NcclProto::kLL128));
}

TEST_CASE("cost model rejects invalid inputs", "[nccl_model]") {
  const auto throws = [](NcclTuneInputs in) {
    CHECK_THROWS_AS(nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kSimple),
                    std::invalid_argument);
  };
  SECTION("unknown collective") {
    NcclTuneInputs in = h100(2, "allreduce");
    CHECK_THROWS_WITH(nccl_tuned_cost(in, NcclAlgo::kRing, NcclProto::kLL),
                      Catch::Contains("did you mean 'all_reduce'?"));
  }
  SECTION("one rank") {
    NcclTuneInputs in = h100(1);
    in.nranks = 1;
    throws(in);
  }
  SECTION("ranks not a multiple of nodes") {
    NcclTuneInputs in = h100(2);
    in.nranks = 15;
    throws(in);
  }
  SECTION("no channels") {
    NcclTuneInputs in = h100(2);
    in.nchannels = 0;
    throws(in);
  }
  SECTION("zero bandwidth") {
    NcclTuneInputs in = h100(2);
    in.bw_inter_GBps = 0;
    throws(in);
  }
  SECTION("network as the intra-node link") {
    NcclTuneInputs in = h100(2);
    in.intra_hw = NcclHw::kNet;
    throws(in);
  }
  SECTION("negative inter-node latency") {
    NcclTuneInputs in = h100(2);
    in.latency_inter_us = -1;
    throws(in);
  }
}
