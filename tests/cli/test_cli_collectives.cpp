// End-to-end: collectives, NCCL settings and the flow mode through `fabricsim run`.
#include <sys/wait.h>

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli_end_to_end;

TEST_CASE("collectives: bad workload and NCCL settings are bad input at their key") {
  struct Case {
    const char* args;
    const char* key;
    const char* text;
  };
  const Case cases[] = {
      {"--set workload.collective=all_gather --set workload.algorithm=tree", "workload.algorithm",
       "does not run all_gather; expected auto or ring"},
      {"--set workload.collective=alltoall --set workload.algorithm=ring", "workload.algorithm",
       "expected auto or p2p"},
      {"--set workload.collective=alltoall --set workload.protocol=ll128", "workload.protocol",
       "expected auto, ll or simple"},
      {"--set workload.ngpus=17", "workload.ngpus", "expected at most 16"},
      {"--set workload.root=3", "workload.root", "broadcast and reduce only"},
      {"--set workload.collective=broadcast --set workload.root=16", "workload.root",
       "expected 0 to 15"},
      {"--set nccl.algo=Rign", "nccl.algo", "did you mean"},
      {"--set nccl.proto=^LL,LL128,Simple", "nccl.proto", ""},
      {"--set nccl.net_gdr_level=pix", "nccl.net_gdr_level", "PIX"},
      {"--set nccl.min_nchannels=8 --set nccl.max_nchannels=4", "nccl.", ""},
      {"--set nccl.algo=Tree --set workload.algorithm=ring", "workload.algorithm",
       "excluded by nccl.algo"},
      {"--set workload.op=max --set workload.redop=sum", "workload.op", "the same setting"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = fabricsim(std::string("validate scenarios/quickstart.yaml ") + c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.key) != std::string::npos);
    CHECK(r.err.find(c.text) != std::string::npos);
  }
}

TEST_CASE("collectives: ngpus picks the first GPUs, and busbw uses that rank count") {
  const std::string d = scratch("ngpus").string();
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.ngpus=4 --set workload.minbytes=1MiB "
      "--set workload.maxbytes=1MiB --out " +
      d);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(fs::path(d) / "results.json"));
  const auto& row = j["collectives"][0];
  CHECK(row["ranks"] == 4);
  CHECK(j["nccl"]["ranks"] == 4);
  // nccl-tests: busbw = algbw x 2(n-1)/n with n = 4 ranks.
  CHECK(row["busbw_GBps"].get<double>() == Approx(row["algbw_GBps"].get<double>() * 2 * 3 / 4.0));
}

TEST_CASE("collectives: ranks_per_server places an N x 1 job one rank per server, on the NICs") {
  // 2 ranks of a rail fabric (4 servers of 8 H100, 400G NICs), Ring/Simple at 64 MiB.
  const std::string base =
      "run scenarios/rail_optimized_h100_su.yaml --set topology.servers_per_su=4 --set "
      "topology.spines=1 --set workload.ngpus=2 --set workload.algorithm=ring --set "
      "workload.protocol=simple --set workload.minbytes=64MiB --set workload.maxbytes=64MiB";
  const auto busbw = [](const fs::path& d) {
    const auto j = nlohmann::json::parse(slurp(d / "results.json"));
    return std::make_pair(j["collectives"][0]["busbw_GBps"].get<double>(),
                          j["nccl"]["servers"].get<int>());
  };
  const fs::path one = scratch("rps1"), packed = scratch("rps8");
  REQUIRE(fabricsim(base + " --set workload.ranks_per_server=1 --out " + one.string()).exit_code ==
          0);
  REQUIRE(fabricsim(base + " --out " + packed.string()).exit_code == 0);
  // One rank per server: every byte crosses one 400 Gb/s NIC each way, so busbw (= algbw for
  // 2 ranks) is bounded by 50 GB/s and, with 64 MiB in large chunks, close to it.
  const auto [nic_busbw, nic_servers] = busbw(one);
  CHECK(nic_servers == 2);
  CHECK(nic_busbw <= 50.0);
  CHECK(nic_busbw >= 0.9 * 50.0);
  // Both ranks on server 0 (the default: ranks fill servers) move over NVLink (450 GB/s).
  const auto [nvl_busbw, nvl_servers] = busbw(packed);
  CHECK(nvl_servers == 1);
  CHECK(nvl_busbw > 4 * 50.0);
  // The bytes went through the leaves to the second server's host.
  int64_t leaf_to_host = 0;
  const auto ports = csv_table(one / "ports.csv");
  for (size_t i = 1; i < ports.size(); ++i) {
    if (cell(ports, i, "node").rfind("leaf", 0) == 0 &&
        cell(ports, i, "peer").rfind("host", 0) == 0)
      leaf_to_host += std::stoll(cell(ports, i, "tx_bytes"));
  }
  CHECK(leaf_to_host >= 64 * (int64_t{1} << 20));  // each rank receives S in a 2-rank ring

  const Result many = fabricsim(
      "validate scenarios/rail_optimized_h100_su.yaml --set workload.ranks_per_server=1 --set "
      "workload.ngpus=40");
  CHECK(many.exit_code == 2);
  CHECK(many.err.find("32 of them at ranks_per_server 1; expected at most 32") !=
        std::string::npos);
  const Result big =
      fabricsim("validate scenarios/rail_optimized_h100_su.yaml --set workload.ranks_per_server=9");
  CHECK(big.exit_code == 2);
  CHECK(big.err.find("workload.ranks_per_server: ranks_per_server is 9 but a server has 8 GPUs") !=
        std::string::npos);
}

TEST_CASE("collectives: the rail fabric and the op key") {
  const std::string rail = "scenarios/rail_optimized_h100_su.yaml";
  SECTION("a partial server: tree is refused at its key, auto runs the ring") {
    // Was an internal error (exit 1): the cost model chose Tree, which needs whole servers.
    const Result tree =
        fabricsim("validate " + rail + " --set workload.ngpus=12 --set workload.algorithm=tree");
    CHECK(tree.exit_code == 2);
    CHECK(tree.err.find("workload.algorithm") != std::string::npos);
    CHECK(tree.err.find("not a multiple of the 8 GPUs per server") != std::string::npos);
    const Result autos = fabricsim("run " + rail +
                                   " --set workload.ngpus=12 --set workload.minbytes=64KiB "
                                   "--set workload.maxbytes=64KiB");
    INFO(autos.err);
    CHECK(autos.exit_code == 0);
    CHECK(autos.out.find(" ring ") != std::string::npos);
  }
  SECTION("sendrecv between servers stays on the rails (PXN): nothing crosses a spine") {
    // GPU 7 of server s sends to GPU 0 of server s+1: NVLink to GPU 0 of server s first, then
    // rail 0. Before PXN these went up to the spines.
    const fs::path d = scratch("pxn");
    const Result r = fabricsim("run " + rail +
                               " --set workload.collective=sendrecv --set workload.minbytes=1MiB "
                               "--set workload.maxbytes=1MiB --out " +
                               d.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::ifstream in(d / "ports.csv");
    std::string line;
    std::getline(in, line);
    std::vector<std::string> header;
    {
      std::istringstream h(line);
      for (std::string c; std::getline(h, c, ',');) header.push_back(c);
    }
    const auto col = [&](const std::string& name) {
      return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    const size_t node = col("node"), peer = col("peer"), tx = col("tx_bytes");
    REQUIRE(tx < header.size());
    int64_t to_spines = 0, from_leaves_to_hosts = 0;
    while (std::getline(in, line)) {
      std::vector<std::string> c;
      std::istringstream row(line);
      for (std::string f; std::getline(row, f, ',');) c.push_back(f);
      if (c.size() <= tx) continue;
      if (c[node].rfind("leaf", 0) == 0 && c[peer].rfind("spine", 0) == 0)
        to_spines += std::stoll(c[tx]);
      if (c[node].rfind("leaf", 0) == 0 && c[peer].rfind("host", 0) == 0)
        from_leaves_to_hosts += std::stoll(c[tx]);
    }
    CHECK(to_spines == 0);
    CHECK(from_leaves_to_hosts > 32 * (1 << 20));  // every server's boundary send crossed a rail
  }
  SECTION("op given by --set overrides the file's redop (one setting, two names)") {
    const fs::path d = scratch("op");
    const Result r = fabricsim(
        "run scenarios/quickstart.yaml --set workload.op=max --set "
        "workload.maxbytes=8KiB --out " +
        d.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(slurp(d / "results.json"));
    CHECK(j["collectives"][0]["redop"] == "max");
  }
}

TEST_CASE("collectives: NCCL settings from the environment are checked as the scenario's") {
  const std::string q = "validate scenarios/quickstart.yaml";
  SECTION("a tiny NCCL_BUFFSIZE is bad input (it made a DAG of billions of steps)") {
    ::setenv("NCCL_BUFFSIZE", "64", 1);
    const Result r = fabricsim(q);
    ::unsetenv("NCCL_BUFFSIZE");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("NCCL_BUFFSIZE=64") != std::string::npos);
    CHECK(r.err.find("expected a buffer size from 65536") != std::string::npos);
  }
  SECTION("--set wins over the legacy NCCL_MAX_NRINGS, and over NCCL_MAX_NCHANNELS for nchannels") {
    const fs::path d = scratch("nrings");
    ::setenv("NCCL_MAX_NRINGS", "32", 1);
    const Result a = fabricsim(
        "run scenarios/quickstart.yaml --set workload.maxbytes=8KiB "
        "--set nccl.max_nchannels=1 --out " +
        d.string());
    ::unsetenv("NCCL_MAX_NRINGS");
    REQUIRE(a.exit_code == 0);
    CHECK(nlohmann::json::parse(slurp(d / "results.json"))["nccl"]["channels"] == 1);
    ::setenv("NCCL_MAX_NCHANNELS", "32", 1);
    const Result b = fabricsim(
        "run scenarios/quickstart.yaml --set workload.maxbytes=8KiB "
        "--set nccl.nchannels=1 --out " +
        d.string());
    ::unsetenv("NCCL_MAX_NCHANNELS");
    REQUIRE(b.exit_code == 0);
    CHECK(nlohmann::json::parse(slurp(d / "results.json"))["nccl"]["channels"] == 1);
  }
  SECTION("an empty NCCL_ALGO is unset, and NCCL_NCHANNELS is ignored as NCCL ignores it") {
    ::setenv("NCCL_ALGO", "", 1);
    ::setenv("NCCL_NCHANNELS", "4", 1);
    const Result r = fabricsim(q);
    ::unsetenv("NCCL_ALGO");
    ::unsetenv("NCCL_NCHANNELS");
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("NCCL_NCHANNELS=4 is ignored") != std::string::npos);
  }
  SECTION("nchannels conflicting with max_nchannels points at nccl.nchannels") {
    const Result r = fabricsim(q + " --set nccl.nchannels=4 --set nccl.max_nchannels=2");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nccl.") != std::string::npos);
    CHECK(r.err.find("scenarios/quickstart.yaml: nccl.min_nchannels") == std::string::npos);
  }
  SECTION("an environment value blamed by another key says where it came from") {
    ::setenv("NCCL_ALGO", "Tree", 1);
    const Result r = fabricsim(q + " --set workload.algorithm=ring");
    ::unsetenv("NCCL_ALGO");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("environment variable NCCL_ALGO=Tree") != std::string::npos);
  }
  SECTION("nccl settings in a scenario without a workload are bad input, not ignored") {
    const Result r = fabricsim("validate scenarios/pfc-victim-flow.yaml --set nccl.algo=Tree");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nccl.algo") != std::string::npos);
  }
  SECTION("results.json records the NCCL settings in force") {
    const fs::path d = scratch("nccl_block");
    const Result r = fabricsim(
        "run scenarios/quickstart.yaml --set workload.maxbytes=8KiB "
        "--set nccl.buffsize=8MiB --set nccl.step_latency=1us --out " +
        d.string());
    REQUIRE(r.exit_code == 0);
    const auto n = nlohmann::json::parse(slurp(d / "results.json"))["nccl"];
    CHECK(n["buffsize_bytes"]["simple"] == 8 << 20);
    CHECK(n["buffsize_bytes"]["ll"] == 524288);  // NCCL's DEFAULT_LL_BUFFSIZE
    CHECK(n["step_latency_ps"] == 1'000'000);
    CHECK(n["launch_latency_ps"].is_null());
    CHECK(n["net_gdr_level"] == "PXB");
  }
}

TEST_CASE("collectives: DAGs too large, NCCL_ALGO naming what is not modelled, one channel") {
  SECTION("a sweep whose DAG would not fit in memory is refused up front with an estimate") {
    const Result r = fabricsim(
        "validate scenarios/quickstart.yaml --set nccl.buffsize=64KiB --set "
        "workload.algorithm=ring "
        "--set workload.protocol=simple --set workload.maxbytes=32GiB");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("workload.maxbytes") != std::string::npos);
    CHECK(r.err.find("transfers") != std::string::npos);
  }
  SECTION("NCCL_ALGO naming CollNet (no NCCL algorithm's name) keeps the rest, with a note") {
    ::setenv("NCCL_ALGO", "CollNet,NVLSTree,Ring", 1);
    const Result r = fabricsim("run scenarios/quickstart.yaml --set workload.maxbytes=8KiB");
    ::unsetenv("NCCL_ALGO");
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("CollNet is not an NCCL algorithm name") != std::string::npos);
    // NVLSTree is kept; on one-GPU servers NCCL has none, so Ring runs.
    CHECK(r.err.find("NVLSTree not modelled") == std::string::npos);
    CHECK(r.out.find(" ring ") != std::string::npos);
    CHECK(r.out.find(" tree ") == std::string::npos);
  }
  SECTION("NCCL_ALGO leaving nothing for the collective: NCCL's Ring fallback, said out loud") {
    const Result r = fabricsim(
        "run scenarios/quickstart.yaml --set nccl.algo=Tree "
        "--set workload.collective=broadcast --set workload.maxbytes=8KiB");
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("leaves no algorithm for broadcast") != std::string::npos);
    CHECK(r.out.find("falls back to Ring") != std::string::npos);
  }
  SECTION("one channel is one channel") {
    const Result r = fabricsim(
        "run scenarios/quickstart.yaml --set nccl.nchannels=1 "
        "--set workload.maxbytes=8KiB");
    CHECK(r.out.find(", 1 channel,") != std::string::npos);
  }
}

namespace {

/// Runs `command` (a `run` without --mode and --out) in the packet and the flow mode; their
/// results.json by mode ("packet", "flow"), each run written to DIR_MODE.
std::map<std::string, nlohmann::json> run_packet_and_flow(const std::string& command,
                                                          const fs::path& dir) {
  std::map<std::string, nlohmann::json> by_mode;
  for (const char* mode : {"packet", "flow"}) {
    const fs::path d = dir.string() + "_" + mode;
    const Result r = fabricsim(command + " --mode " + mode + " --out " + d.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    by_mode[mode] = nlohmann::json::parse(slurp(d / "results.json"));
  }
  return by_mode;
}

/// Checks that the flow mode's runs of run_packet_and_flow take the packet mode's time within
/// `tolerance` (relative), size by size: `sizes` sizes each, and where `algorithm` is not empty,
/// the flow mode ran that algorithm. `label` names the case in a failure.
void check_flow_matches_packet(const std::map<std::string, nlohmann::json>& by_mode, size_t sizes,
                               double tolerance, const std::string& label,
                               const std::string& algorithm = "") {
  const auto& packet = by_mode.at("packet")["collectives"];
  const auto& flow = by_mode.at("flow")["collectives"];
  REQUIRE(packet.size() == sizes);
  REQUIRE(flow.size() == sizes);
  for (size_t i = 0; i < packet.size(); ++i) {
    INFO(label << ", " << packet[i]["size_bytes"] << " B: packet " << packet[i]["time_us"]
               << " us, flow " << flow[i]["time_us"] << " us");
    if (!algorithm.empty()) CHECK(flow[i]["algorithm"] == algorithm);
    CHECK(flow[i]["time_us"].get<double>() ==
          Approx(packet[i]["time_us"].get<double>()).epsilon(tolerance));
  }
}

}  // namespace

TEST_CASE("flow mode: uncongested collectives take the packet model's time within 5 %") {
  // 16 GPUs under one switch (nothing shared but each GPU's own links): the packet model is
  // the reference. Ring at every size; Tree where bandwidth dominates (>= 4 MiB: below it the
  // flow mode's closed-form pipeline latency is off by up to ~11 %, docs/flow-mode.md says so).
  const std::string fabric =
      " --set 'topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16}'"
      " --set workload.stepfactor=4";
  // broadcast: 30-66 % too fast before the chain's pipeline fill counted
  // each chunk at its channel's share of the NIC.
  for (const char* algo : {"Ring", "Tree", "broadcast"}) {
    const std::string sizes = std::string(algo) == "Tree"
                                  ? " --set workload.minbytes=4MiB --set workload.maxbytes=16MiB"
                                  : " --set workload.minbytes=64KiB --set workload.maxbytes=16MiB";
    const std::string what = std::string(algo) == "broadcast"
                                 ? " --set workload.collective=broadcast"
                                 : std::string(" --set nccl.algo=") + algo;
    auto by_mode = run_packet_and_flow("run scenarios/quickstart.yaml" + fabric + sizes + what,
                                       scratch("flow") / algo);
    const auto& packet = by_mode["packet"]["collectives"];
    const auto& flow = by_mode["flow"]["collectives"];
    REQUIRE(packet.size() == flow.size());
    REQUIRE(packet.size() >= 2);
    for (size_t i = 0; i < packet.size(); ++i) {
      INFO(algo << " " << packet[i]["size_bytes"] << " B " << packet[i]["protocol"]);
      CHECK(flow[i]["algorithm"] == packet[i]["algorithm"]);
      CHECK(flow[i]["protocol"] == packet[i]["protocol"]);
      CHECK(flow[i]["time_us"].get<double>() ==
            Approx(packet[i]["time_us"].get<double>()).epsilon(0.05));
    }
    CHECK(by_mode["flow"]["mode"] == "flow");
    CHECK(by_mode["flow"]["flow_model"]["flows"].get<int64_t>() > 0);
    CHECK(by_mode["packet"]["mode"] == "packet");
  }
}

TEST_CASE("flow mode: a ring's ACKs take their share of its links, as in the packet mode") {
  // 16 GPUs under one switch, Ring: every host sends and receives, so its uplink carries its
  // data and the ACKs of what it receives (86 B per packet, 25 % of a 256-byte MTU's 338). The
  // flow mode left the ACKs out and was 14 % (4 MiB) to 18 % (16 MiB) fast at MTU 256, 6 % at
  // 1024. The packet model is the reference.
  const std::string fabric =
      " --set 'topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16}'"
      " --set nccl.algo=Ring --set workload.minbytes=4MiB --set workload.maxbytes=16MiB"
      " --set workload.stepfactor=4";
  for (const char* mtu : {"256B", "1024B"}) {
    const auto by_mode =
        run_packet_and_flow("run scenarios/quickstart.yaml" + fabric + " --set nic.mtu=" + mtu,
                            scratch("flow_acks") / mtu);
    check_flow_matches_packet(by_mode, 2, 0.03, std::string("MTU ") + mtu);
  }
}

TEST_CASE("flow mode: a tree's pipeline fill sums its own hops' latencies, as the packet mode") {
  // The k = 8 fat-tree (128 servers) and the rail-optimized SuperPOD unit (8-GPU servers):
  // a tree's hops differ (one switch or five; NVLink inside a server). The flow mode charged
  // every hop of the pipeline the slowest hop's latency and was 8 to 13 us slow: +11 % at
  // 256 KiB and +8 % at 1 MiB on the fat-tree, +10 % at 1 MiB on the SuperPOD unit. The packet
  // model is the reference.
  for (const char* scenario : {"fat_tree_k8", "rail_optimized_h100_su"}) {
    auto by_mode = run_packet_and_flow(std::string("run scenarios/") + scenario +
                                           ".yaml --set nccl.algo=Tree --set workload.stepfactor=4"
                                           " --set workload.minbytes=256KiB"
                                           " --set workload.maxbytes=1MiB",
                                       scratch("flow_tree_fill") / scenario);
    check_flow_matches_packet(by_mode, 2, 0.03, scenario, "tree");
  }
}

/// The `why` of a results.json's limit entries whose `what` contains `what`.
std::vector<std::string> limits_about(const nlohmann::json& results, const std::string& what) {
  std::vector<std::string> out;
  for (const auto& l : results.value("limits", nlohmann::json::array())) {
    if (l["what"].get<std::string>().find(what) != std::string::npos) out.push_back(l["why"]);
  }
  return out;
}

/// The flow mode's limit entries of a results.json that name the tree's arrival-order sharing.
std::vector<std::string> tree_sharing_limits(const nlohmann::json& results) {
  return limits_about(results, "tree server's NIC link shared in arrival order");
}

/// The two sizes' times of run_packet_and_flow's runs: {packet, flow} x {first, second}, us.
std::array<std::array<double, 2>, 2> two_sizes_us(
    const std::map<std::string, nlohmann::json>& by_mode) {
  std::array<std::array<double, 2>, 2> us{};
  for (int m = 0; m < 2; ++m) {
    const auto& rows = by_mode.at(m == 0 ? "packet" : "flow")["collectives"];
    REQUIRE(rows.size() == 2);
    for (size_t i = 0; i < 2; ++i) us[m][i] = rows[i]["time_us"].get<double>();
  }
  return us;
}

/// Checks run_packet_and_flow's two sizes where the flow mode is more than 5 % slower than the
/// packet mode at size `off` (0 or 1) and within 3 % at the other: the flow mode's limits
/// about `what` say so once, naming the off size (`named`); the packet mode's never.
void check_said_where_off(const std::map<std::string, nlohmann::json>& by_mode, size_t off,
                          const std::string& what, const std::string& named) {
  const auto [packet, flow] = two_sizes_us(by_mode);
  INFO("packet " << packet[0] << ", " << packet[1] << " us; flow " << flow[0] << ", " << flow[1]
                 << " us");
  CHECK(flow[off] > 1.05 * packet[off]);
  CHECK(flow[1 - off] == Approx(packet[1 - off]).epsilon(0.03));
  const auto said = limits_about(by_mode.at("flow"), what);
  REQUIRE(said.size() == 1);
  CHECK(said[0].find(named) != std::string::npos);
  CHECK(limits_about(by_mode.at("packet"), what).empty());
}

/// Runs `command` at one size in both modes (scratch directory `dir`) and checks that the flow
/// mode is more than 5 % slower than the packet mode there and says so once, in a limit about
/// `what` naming that size (`named`); the packet mode says nothing about `what`.
void check_said_at_one_size(const std::string& command, const std::string& size,
                            const std::string& dir, const std::string& what,
                            const std::string& named) {
  const auto by_mode = run_packet_and_flow(
      command + " --set workload.minbytes=" + size + " --set workload.maxbytes=" + size,
      scratch("flow_tree_said") / dir);
  const double packet_us = by_mode.at("packet")["collectives"][0]["time_us"].get<double>();
  const double flow_us = by_mode.at("flow")["collectives"][0]["time_us"].get<double>();
  INFO(command << " at " << size << ": packet " << packet_us << " us, flow " << flow_us << " us");
  CHECK(flow_us > 1.05 * packet_us);
  const auto said = limits_about(by_mode.at("flow"), what);
  REQUIRE(said.size() == 1);
  CHECK(said[0].find(named) != std::string::npos);
  CHECK(limits_about(by_mode.at("packet"), what).empty());
}

TEST_CASE(
    "flow mode: a tree over multi-GPU servers names the sizes the packet mode finishes later") {
  // 8 rail-optimized servers of 8 GPUs, InfiniBand, Tree: a server between its parent and its
  // children receives the children's reduce streams and the parent's broadcast on one NIC
  // link. The flow mode shares it max-min; the packet mode serves it in arrival order behind
  // credits, the children take more and the broadcast ends later. The packet mode is the
  // reference for where that matters: within 5 % at 16 MiB (no limit said), more than 5 %
  // slower at 64 MiB (the limit names that size, and only in the flow mode).
  const std::string rail8 =
      "run scenarios/rail_optimized_h100_su.yaml --set topology.rail-optimized.servers_per_su=8";
  const auto by_mode = run_packet_and_flow(rail8 +
                                               " --set nccl.algo=Tree --set workload.stepfactor=4"
                                               " --set workload.minbytes=16MiB"
                                               " --set workload.maxbytes=64MiB",
                                           scratch("flow_tree_fifo") / "rail8");
  const auto [packet, flow] = two_sizes_us(by_mode);
  INFO("packet " << packet[0] << ", " << packet[1] << " us; flow " << flow[0] << ", " << flow[1]
                 << " us");
  CHECK(flow[0] == Approx(packet[0]).epsilon(0.05));
  CHECK(packet[1] > 1.05 * flow[1]);
  const auto said = tree_sharing_limits(by_mode.at("flow"));
  REQUIRE(said.size() == 1);
  CHECK(said[0].find("tree over 8 servers of 8 GPUs at 64 MiB here") != std::string::npos);
  CHECK(tree_sharing_limits(by_mode.at("packet")).empty());
  // The flow mode alone (the packet mode's times at these points are in docs/flow-mode.md).
  const auto flow_limits = [](const std::string& command, const std::string& name) {
    const fs::path d = scratch("flow_tree_fifo") / name;
    const Result r = fabricsim(command + " --mode flow --out " + d.string());
    INFO(command << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    return tree_sharing_limits(nlohmann::json::parse(slurp(d / "results.json")));
  };
  // Every tree size from 32 MiB is named, each one (the packet mode took 4.5 % longer at 32 MiB).
  const auto all = flow_limits(rail8 +
                                   " --set nccl.algo=Tree --set workload.stepfactor=2"
                                   " --set workload.minbytes=16MiB --set workload.maxbytes=64MiB",
                               "rail8_each");
  REQUIRE(all.size() == 1);
  CHECK(all[0].find("at 32 MiB and 64 MiB here") != std::string::npos);
  // Nothing where the modes agree at 64 MiB: a ring (−0.7 %); 4 servers (−2.9 %); 2 servers
  // (dgx_h100_2node_ib, no server between a parent and children, 0 %); one GPU per server
  // (fat_tree_k8, −0.1 %); and not on a lossy fabric (quickstart's RoCE without PFC, 8 servers
  // of 2 GPUs), where the packet mode drops and resends and `# depends on` says so.
  const std::string at64 = " --set workload.minbytes=64MiB --set workload.maxbytes=64MiB";
  CHECK(flow_limits(rail8 + " --set nccl.algo=Ring" + at64, "rail8_ring").empty());
  CHECK(flow_limits("run scenarios/rail_optimized_h100_su.yaml"
                    " --set topology.rail-optimized.servers_per_su=4 --set nccl.algo=Tree" +
                        at64,
                    "rail4")
            .empty());
  CHECK(flow_limits("run scenarios/dgx_h100_2node_ib.yaml --set nccl.algo=Tree" + at64, "dgx")
            .empty());
  CHECK(flow_limits("run scenarios/fat_tree_k8.yaml --set nccl.algo=Tree" + at64, "fat_tree")
            .empty());
  CHECK(flow_limits("run scenarios/quickstart.yaml --set link.nvlink_rate=3600Gbps --set "
                    "'topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16, "
                    "gpus_per_server: 2}' --set nccl.algo=Tree" +
                        at64,
                    "lossy")
            .empty());
}

TEST_CASE("flow mode: flows collide under per-flow ECMP where the packet mode's queue pairs do") {
  // 2 leaves of 8 hosts (4-GPU servers), 2 spines, per-flow ECMP: ring hops and AllToAll pairs
  // that hash onto one uplink share it. The flow mode hashed flows its own way, so other flows
  // collided: Ring −24 % at 16 MiB and −25 % at 64 MiB; its ring latency model took a hop's
  // share at the NICs only (+14 % at 4 MiB); AllToAll on the quickstart +3 % to +7 %. Now a
  // flow takes its queue pair's packet-mode path. The packet model is the reference.
  check_flow_matches_packet(
      run_packet_and_flow("run scenarios/quickstart.yaml --set link.nvlink_rate=3600Gbps"
                          " --set 'topology={kind: spine-leaf, leaves: 2, spines: 2,"
                          " hosts_per_leaf: 8, gpus_per_server: 4}' --set nccl.algo=Ring"
                          " --set workload.stepfactor=4 --set workload.minbytes=4MiB"
                          " --set workload.maxbytes=64MiB",
                          scratch("flow_ecmp") / "ring"),
      3, 0.03, "Ring over 2 spines", "ring");
  // The same at seed 6 with 1,600 Gb/s spine links: hops that share an uplink four times as
  // fast as their NICs barely slow each other; counted as if it were a NIC, the ring's latency
  // overlap made the flow mode −49 % at 4 MiB (faster than at 1 MiB).
  check_flow_matches_packet(
      run_packet_and_flow(
          "run scenarios/quickstart.yaml --set seed=6 --set link.nvlink_rate=3600Gbps"
          " --set link.fabric_rate=1600Gbps"
          " --set 'topology={kind: spine-leaf, leaves: 2, spines: 2,"
          " hosts_per_leaf: 8, gpus_per_server: 4}' --set nccl.algo=Ring"
          " --set workload.stepfactor=4 --set workload.minbytes=1MiB"
          " --set workload.maxbytes=4MiB",
          scratch("flow_ecmp") / "fast_spines"),
      2, 0.03, "Ring over 2 spines at 1600 Gb/s", "ring");
  check_flow_matches_packet(
      run_packet_and_flow("run scenarios/quickstart.yaml --set workload.collective=alltoall"
                          " --set workload.stepfactor=4 --set workload.minbytes=4MiB"
                          " --set workload.maxbytes=64MiB",
                          scratch("flow_ecmp") / "alltoall"),
      3, 0.02, "AllToAll on the quickstart");
}

TEST_CASE("flow mode: a tree whose edges share fabric links names the sizes it is far off") {
  // Tree/LL128 where several tree edges cross one fabric link: the 4x4x4 torus with 1,600 Gb/s
  // host links (the torus links the bottleneck) and a k = 8 fat-tree at 3:1. The flow mode
  // starts every tree connection at once, the packet mode's pipeline does not, and the flow
  // mode is slower at mid sizes (+20 % and +25 % at 1 MiB measured). There it says so; at
  // 64 MiB the two agree within 3 % and nothing is said. The packet model is the reference.
  const std::string sizes =
      " --set nccl.algo=Tree --set workload.protocol=ll128 --set workload.stepfactor=64"
      " --set workload.minbytes=1MiB --set workload.maxbytes=64MiB";
  check_said_where_off(
      run_packet_and_flow("run scenarios/torus_4x4x4.yaml --set link.host_rate=1600Gbps" + sizes,
                          scratch("flow_shared_tree") / "torus"),
      0, "starting with their first chunk", "share torus links or uplinks at 1 MiB here");
  // The fat-tree at 1 MiB only (its 64 MiB packet run alone takes 12 s).
  check_said_at_one_size(
      "run scenarios/fat_tree_k8.yaml --set topology.oversubscription=3"
      " --set nccl.algo=Tree --set workload.protocol=ll128",
      "1MiB", "fat_tree_3to1", "starting with their first chunk",
      "share torus links or uplinks at 1 MiB here");
}

TEST_CASE("flow mode: a tree over multi-GPU servers across spines names the sizes it is far off") {
  // fat_tree_k8 with 4-GPU servers at 1:1, NCCL's choice (Tree/LL128) at 4 MiB: the servers'
  // NICs carry several channels' tree edges, spread over the spines by per-flow ECMP and
  // colliding on some uplinks; the flow mode shares them from the start and is +22 % here
  // (measured). It says so. The packet model is the reference.
  check_said_at_one_size(
      "run scenarios/fat_tree_k8.yaml --set topology.gpus_per_server=4"
      " --set link.nvlink_rate=3600Gbps",
      "4MiB", "fat_tree_g4", "edges over spines", "servers of 4 GPUs across spines at 4 MiB here");
}

TEST_CASE("flow mode: a tree with Simple on one-GPU servers names the sizes it is far off") {
  // 16 GPUs under one switch, Tree with Simple forced: Simple's chunks are large, the
  // pipeline has few, and the flow mode's closed form is +12 % at 2 MiB (measured); at 128 KiB
  // the two agree within 3 % and nothing is said. The packet model is the reference.
  const auto by_mode = run_packet_and_flow(
      "run scenarios/quickstart.yaml"
      " --set 'topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16}'"
      " --set nccl.algo=Tree --set workload.protocol=simple --set workload.stepfactor=16"
      " --set workload.minbytes=128KiB --set workload.maxbytes=2MiB",
      scratch("flow_simple_tree") / "one_switch");
  check_said_where_off(by_mode, 1, "Simple's few large chunks", "one GPU per server at 2 MiB here");
}

TEST_CASE("flow mode: rings through multi-GPU servers take the packet model's time") {
  // Before: with 4-GPU servers rings were +8 % to +45 % slow in the flow mode (LL128
  // 16 MiB: 261 vs 192 us), which added every step's latency in series with the NIC's busy
  // time. A ring's step crosses a NIC on one hop in G; its NVLink steps are short, so the NIC's
  // queue of steps hides the step latency (flow_plan.hpp). 16 GPUs under one switch, G GPUs per
  // NVSwitch server, NCCL's protocol per size. Measured: G = 2 within 3.4 %, G = 4 within 2 %,
  // G = 8 within 1.3 % but +8.3 % at 16 MiB (docs/flow-mode.md: its rings stay more in step than
  // the model counts). With LL and LL128 paced and streamed inside servers, G = 4 all_gather is
  // 3 to 6 % faster in the flow mode (16 MiB: 102.5 against 109.1 us).
  struct Case {
    int gpus;
    const char* collective;
    double tolerance;
  };
  for (const Case& k : {Case{2, "all_reduce", 0.05}, Case{4, "all_reduce", 0.05},
                        Case{4, "all_gather", 0.07}, Case{8, "all_reduce", 0.10}}) {
    const std::string args =
        " --set 'topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16, "
        "gpus_per_server: " +
        std::to_string(k.gpus) +
        "}' --set link.nvlink_rate=3600Gbps --set nccl.algo=Ring --set workload.collective=" +
        k.collective +
        " --set workload.minbytes=256KiB --set workload.maxbytes=16MiB"
        " --set workload.stepfactor=4";
    auto by_mode = run_packet_and_flow(
        "run scenarios/quickstart.yaml" + args,
        scratch("flow_servers") / (std::to_string(k.gpus) + "_" + k.collective));
    const auto& packet = by_mode["packet"]["collectives"];
    const auto& flow = by_mode["flow"]["collectives"];
    REQUIRE(packet.size() == flow.size());
    REQUIRE(packet.size() == 4);  // 256 KiB, 1, 4, 16 MiB
    for (size_t i = 0; i < packet.size(); ++i) {
      INFO(k.gpus << " GPUs per server, " << k.collective << " " << packet[i]["size_bytes"] << " B "
                  << packet[i]["protocol"] << ": packet " << packet[i]["time_us"] << " us, flow "
                  << flow[i]["time_us"] << " us");
      CHECK(flow[i]["protocol"] == packet[i]["protocol"]);
      CHECK(flow[i]["channels"] == packet[i]["channels"]);
      CHECK(flow[i]["time_us"].get<double>() ==
            Approx(packet[i]["time_us"].get<double>()).epsilon(k.tolerance));
    }
  }
}

TEST_CASE("flow mode: what it does not model is refused at the key mode, exit 2") {
  const std::string g4 =
      " --set 'topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16,"
      " gpus_per_server: 4}' --set link.nvlink_rate=3600Gbps";
  // {command, what stderr must say}
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"validate scenarios/pfc-victim-flow.yaml --mode flow",
       "mode: the flow mode runs the workload's collectives; traffic flows need the packet mode"},
      {"validate scenarios/training_step_h100.yaml --mode flow",
       "a training step needs the packet mode"},
      // Before: failed links ended in an internal error (exit 1) after validate
      // passed, and routing.algorithm was silently ignored.
      {"validate scenarios/fat_tree_k8.yaml --mode flow"
       " --set 'topology.failed_links=[agg4-core0]'",
       "topology.failed_links: the flow mode does not route around failed links"},
      {"validate scenarios/torus_4x4x4.yaml --mode flow --set routing.algorithm=ecmp",
       "routing.algorithm: the flow mode routes by the fabric's default"},
      // Each silently ignored before (results 2 to 13 times off).
      {"validate scenarios/quickstart.yaml --mode flow --set nic.qp_rate_limit=100Gbps",
       "nic.qp_rate_limit: the flow mode does not model a per-QP rate limit"},
      {"validate scenarios/quickstart.yaml --mode flow --set nccl.net_gdr_level=LOC",
       "the flow mode does not model NCCL's staging through host memory"},
      {"validate scenarios/quickstart.yaml --mode flow --set workload.collective=broadcast" + g4,
       "workload.collective: the flow mode's broadcast is checked on one GPU per server only "
       "(with 4"},
      {"validate scenarios/quickstart.yaml --mode flows", "did you mean 'flow'"},
      {"run scenarios/quickstart.yaml --mode flow --set workload.algorithm=halving_doubling"
       " --set workload.maxbytes=64KiB",
       "workload.algorithm: the flow mode runs NCCL's algorithms"},
  };
  for (const auto& [command, message] : refused) {
    const Result r = fabricsim(command);
    INFO(command << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(message) != std::string::npos);
  }
}

/// The out-of-place busbw (column 8) of each size of a real nccl-tests log in tests/data/nccl,
/// from its first row of that size.
std::map<int64_t, double> logged_busbw(const std::string& log_name) {
  std::map<int64_t, double> measured;
  std::istringstream log(slurp(fs::path(FABRICSIM_SOURCE_DIR) / "tests/data/nccl" / log_name));
  for (std::string line; std::getline(log, line);) {
    std::istringstream row(line);
    int64_t size = 0;
    std::string count, type, redop, root;
    double time_us = 0, algbw = 0, busbw = 0;
    if (row >> size >> count >> type >> redop >> root >> time_us >> algbw >> busbw) {
      measured.emplace(size, busbw);
    }
  }
  return measured;
}

/// Runs a scenario of bench/validation/nccl/ named after `log_name` (with `sets`) and checks
/// each simulated size's busbw against the log's within `tolerance`; returns the sizes checked.
int check_against_log(const std::string& log_name, const std::string& sets, double tolerance,
                      const std::string& algorithm) {
  const std::map<int64_t, double> measured = logged_busbw(log_name);
  REQUIRE(!measured.empty());
  const std::string scenario =
      "bench/validation/nccl/" + log_name.substr(0, log_name.size() - 4) + ".yaml";
  const fs::path out = scratch("vs_" + log_name);
  const Result r = fabricsim("run " + scenario + " " + sets + " --out " + out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(out / "results.json"));
  int rows = 0;
  for (const auto& c : j["collectives"]) {
    const int64_t size = c["size_bytes"].get<int64_t>();
    REQUIRE(measured.count(size) == 1);
    const double predicted = c["busbw_GBps"].get<double>();
    const double logged = measured.at(size);
    INFO(size << " B: predicted " << predicted << " GB/s, measured " << logged);
    CHECK(c["algorithm"] == algorithm);
    CHECK(std::abs(predicted - logged) <= tolerance * logged);
    ++rows;
  }
  return rows;
}

TEST_CASE("NVLink at NCCL's per-link bandwidth: 8 x A100 Ring AllReduce within 5 % of a real log") {
  // The real all_reduce_perf log of one HGX A100 server (232 GB/s busbw at 1 GiB); the
  // scenario is the server's published NVLink rate with NCCL's own NVLink efficiency
  // (link.nvlink_efficiency's default), nothing fitted to the log. At the full 300 GB/s the
  // ring reached 293 GB/s (+26 %).
  CHECK(check_against_log("nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.txt",
                          "--set workload.minbytes=512MiB", 0.05, "ring") == 2);
}

TEST_CASE(
    "The DGX A100 server profile alone: 8 x A100 AllReduce at 1 GiB within 5 % of a real log") {
  // One server whose GPUs, NVLink and compute capability are configs/servers/nvidia_dgx_a100.yaml
  // alone (300 GB/s a direction, NCCL's SM80 share 0.8, sm_80); the scenario gives only the
  // fabric around it. The real all_reduce_perf log of one HGX A100: 231.72 GB/s busbw at 1 GiB.
  const fs::path dir = scratch("dgx_a100_profile");
  const fs::path scenario = dir / "one_dgx_a100.yaml";
  std::ofstream(scenario)
      << "transport: infiniband\n"
      << "server: {profile: "
      << (fs::path(FABRICSIM_SOURCE_DIR) / "configs/servers/nvidia_dgx_a100.yaml").string() << "}\n"
      << "topology: {kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 8}\n"
      << "link: {propagation_delay: 0ns}\n"
      << "switch: {latency: 0ns, buffer_per_port: 4MB}\n"
      << "workload: {collective: all_reduce, ngpus: 8, ranks_per_server: 8, minbytes: 1GiB, "
         "maxbytes: 1GiB}\n";
  const Result r = fabricsim("run " + scenario.string() + " --out " + (dir / "out").string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto results = nlohmann::json::parse(slurp(dir / "out" / "results.json"));
  // results.json names the profile as the scenario does, so a result says what server it is.
  CHECK(results["fabric"]["server_profile"] ==
        (fs::path(FABRICSIM_SOURCE_DIR) / "configs/servers/nvidia_dgx_a100.yaml").string());
  const auto rows = results["collectives"];
  REQUIRE(rows.size() == 1);
  const double logged =
      logged_busbw("nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.txt").at(1 << 30);
  CHECK(logged == 231.72);
  CHECK(rows[0]["algorithm"] == "ring");
  CHECK(std::abs(rows[0]["busbw_GBps"].get<double>() - logged) <= 0.05 * logged);
}

TEST_CASE("The NIC's costs stay off NVLink: nic.* keys change no intra-server transfer") {
  // nic.message_rate, tx/rx latencies, dma_read_latency and pcie_rate are the NIC's (its work
  // queue, its PCIe link): a GPU's NVLink to its NVSwitch has none of them. One DGX A100 (the
  // server profile), 8 ranks on one server: the same busbw with and without them. The same
  // keys on 2 ranks of 2 servers cap the network path at nic.pcie_rate (50 Gb/s = 6.25 GB/s of
  // payload), where the 200G NICs alone reach over 20 GB/s.
  const fs::path dir = scratch("nic_keys_nvlink");
  const fs::path scenario = dir / "two_dgx_a100.yaml";
  std::ofstream(scenario)
      << "transport: infiniband\n"
      << "server: {profile: "
      << (fs::path(FABRICSIM_SOURCE_DIR) / "configs/servers/nvidia_dgx_a100.yaml").string() << "}\n"
      << "topology: {kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16}\n"
      << "link: {propagation_delay: 0ns}\n"
      << "switch: {latency: 0ns, buffer_per_port: 4MB}\n"
      << "workload: {collective: all_reduce, algorithm: ring, ngpus: 8, ranks_per_server: 8, "
         "minbytes: 16MiB, maxbytes: 16MiB}\n";
  const std::string nic_keys =
      " --set nic.pcie_rate=50Gbps --set nic.message_rate=1e4 --set nic.tx_latency=100us"
      " --set nic.rx_latency=100us --set nic.dma_read_latency=10us";
  auto busbw = [&](const std::string& name, const std::string& args) {
    const fs::path out = dir / name;
    const Result r = fabricsim("run " + scenario.string() + " --out " + out.string() + args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(slurp(out / "results.json"))["collectives"][0]["busbw_GBps"]
        .get<double>();
  };
  const double nvlink = busbw("nvlink", "");
  CHECK(nvlink > 100);  // NVLink3 at 240 GB/s a direction, not a NIC's 25
  CHECK(busbw("nvlink_nic_keys", nic_keys) == nvlink);
  const std::string two_servers = " --set workload.ngpus=2 --set workload.ranks_per_server=1";
  CHECK(busbw("network", two_servers) > 20);
  CHECK(busbw("network_nic_keys", two_servers + nic_keys) <= 6.25);
}

TEST_CASE("PCIe peer-to-peer: 4 x RTX 4090 Ring AllReduce within 5 % of a real log") {
  // Four GPUs without NVLink, P2P through PCIe 4.0 x16: the real log's busbw levels off at
  // 25.3 GB/s. The scenario has the link's spec rate less the protocol's overheads (PCIe Base
  // Spec 5.0 ACK/flow-control rates, 24 B per 256 B write: servers/pcie.hpp), 26.0 GB/s,
  // nothing fitted. Before the PCIe model the GPUs of a server could only use an NVSwitch.
  CHECK(check_against_log("nccl-allreduce-rtx4090-1node-4gpu-pcie-p2p-patched-01.txt",
                          "--set workload.minbytes=16MiB --set workload.maxbytes=256MiB", 0.05,
                          "ring") == 5);
}

TEST_CASE(
    "LL at its own pace: 4 x RTX 4090 Ring AllReduce at 64-128 KiB within 10 % of a real log") {
  // NCCL's LL writes 8 data bytes and an 8-byte flag per line and moves a channel's bytes at a
  // quarter of the graph's bandwidth (tuning.cc, llMaxBw), shared by the channels running, and
  // each GPU forwards a line as soon as its flag arrives. Paced and streamed so, the sizes NCCL
  // runs in LL on 4 and 8 channels (64 and 128 KiB) come within 10 % of the real log (+8.4 and
  // -0.6 %); with only the PCIe links' LL framing (half the link) they were +45 and +64 %.
  // (32 KiB, on 2 channels, stays +34 %.) The log does not say which NCCL ran it; the quarter
  // is NCCL 2.20's Ring LL factor (2.21 raised it to a half, which puts these sizes at +45 and
  // +53 %), so the check runs 2.20's tables.
  CHECK(check_against_log("nccl-allreduce-rtx4090-1node-4gpu-pcie-p2p-patched-01.txt",
                          "--set workload.minbytes=64KiB --set workload.maxbytes=128KiB "
                          "--set nccl.version=2.20",
                          0.10, "ring") == 2);
}

TEST_CASE("PCIe peer-to-peer on one-GPU servers changes nothing: there is no intra-server path") {
  // NCCL's intra-node path of a one-GPU node is PATH_LOC: no PCI latency, LL128 kept. Giving
  // topology.gpu_interconnect: pcie to 1-GPU hosts used to slow every step to NCCL's PCI row
  // and turn LL128 off (24.72 -> 14.44 GB/s at 1 MiB on the quickstart).
  const auto collectives = [&](const std::string& interconnect) {
    const fs::path out = scratch("one_gpu_" + interconnect);
    const Result r = fabricsim(
        "run scenarios/quickstart.yaml --set workload.maxbytes=1MiB "
        "--set topology.gpu_interconnect=" +
        interconnect + " --out " + out.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(slurp(out / "results.json"))["collectives"];
  };
  const auto nvswitch = collectives("nvswitch");
  REQUIRE(nvswitch.size() == 8);  // 8 KiB .. 1 MiB
  CHECK(collectives("pcie") == nvswitch);
}

TEST_CASE("One scenario sweeps over NVSwitch and PCIe servers: the other's keys are said unused") {
  // link.nvlink_rate is required with NVSwitch servers and the pcie section describes PCIe
  // ones; refusing either under the other made --vary topology.gpu_interconnect unusable. The
  // scenario's PCIe keys come from its server profile (defaults, not said unused); the --set
  // gives it a pcie section of its own, with the profile's value.
  const std::string scenario =
      "bench/validation/nccl/nccl-allreduce-rtx4090-1node-4gpu-pcie-p2p-patched-01.yaml";
  const fs::path out = scratch("sweep_interconnect");
  const Result r = fabricsim("sweep " + scenario +
                             " --vary topology.gpu_interconnect=pcie,nvswitch"
                             " --set pcie.max_payload=256B"
                             " --set link.nvlink_rate=400Gbps --set workload.minbytes=64MiB"
                             " --set workload.maxbytes=64MiB --jobs 1 --out " +
                             out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("link.nvlink_rate: not used: the servers' GPUs reach each other over PCIe") !=
        std::string::npos);
  CHECK(r.err.find("pcie: not used: the pcie section sets the PCIe links") != std::string::npos);
  // PCIe 4.0 x16 (26.0 GB/s a direction) against 400 Gb/s NVLinks (x 0.8 = 40 GB/s): the ring
  // follows its links.
  const auto busbw = [&](const std::string& point) {
    const auto j = nlohmann::json::parse(slurp(out / point / "results.json"));
    return j["collectives"][0]["busbw_GBps"].get<double>();
  };
  CHECK(busbw("point-001") < 26.0);
  CHECK(busbw("point-002") > 30.0);
  CHECK(busbw("point-002") < 40.0);
}
