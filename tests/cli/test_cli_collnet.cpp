// End-to-end: NCCL's CollNet AllReduce (InfiniBand SHARP: the switches reduce) through
// `fabricsim run` on 2 x 8 H100 (DGX H100, NDR rail-optimized), against the closed forms of its
// bounds, NCCL's settings that turn it on, and the refusals where it cannot run.
//
// The bounds (2 servers, G = 8 GPUs each, S bytes): every head GPU sends its part of the buffer
// up its NIC link to the rail's leaf and gets the servers' sum back down it, so each NIC carries
// S / G each way: algbw <= G x the NIC's payload rate. Inside the server each GPU sends 2 (G - 1)
// / G of the buffer over its NVLink (Direct: to the heads and from its own slice to the peers;
// Chain with 2 channels a head: up the chain unless it is the head, down unless it is the far
// end): algbw <= NVLink rate x G / (2 (G - 1)).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli_end_to_end;

namespace {

const std::string kDgx = "scenarios/dgx_h100_2node_ib.yaml";
const std::string kSharp = " --set nccl.collnet_enable=1";

/// The results.json rows of `fabricsim run kDgx ARGS` (into scratch(name)).
nlohmann::json run_rows(const std::string& name, const std::string& args) {
  const fs::path out = scratch(name);
  const Result r = fabricsim("run " + kDgx + " " + args + " --out " + out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(slurp(out / "results.json"))["collectives"];
}

/// InfiniBand's payload share of a 4096-byte-MTU packet: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26
/// header bytes (IBTA vol. 1 ch. 7).
constexpr double kIbPayload = 4096.0 / (4096 + 26);

}  // namespace

TEST_CASE("collnet: at 100G NICs both CollNet algorithms take S / (G x the NIC's payload rate)") {
  // 8 heads a server x 12.5 GB/s x 4096/4122 = 99.4 GB/s algbw: 256 MiB in 2701 µs; the NVLinks
  // (211.9) are not the bound. On top: the launch (NCCL's interLat, 30-31 µs) and the pipeline's
  // fill, at most Chain's 14 NVLink hops of a 256 KiB chunk, each with its step latency (2.8 µs)
  // and under 5 µs on the link: 150 µs in all.
  const double bound = 8 * 12.5 * kIbPayload;
  const double bytes = double(int64_t{256} << 20);
  for (const std::string algo : {"collnet_direct", "collnet_chain"}) {
    const auto rows = run_rows("collnet_nic_" + algo,
                               "--set link.host_rate=100Gbps --set link.fabric_rate=100Gbps "
                               "--set workload.minbytes=256MiB "
                               "--set workload.maxbytes=256MiB --set workload.algorithm=" +
                                   algo + kSharp);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["algorithm"] == algo);
    const double time_us = rows[0]["time_us"].get<double>();
    const double ideal_us = bytes / (bound * 1e3);
    INFO(algo << ": " << time_us << " us, S / B " << ideal_us << " us");
    CHECK(time_us >= ideal_us);
    CHECK(time_us <= ideal_us + 150);
    // Each NIC carried S / G up and down (plus headers and ACKs); no byte went beyond the rail
    // leaves, where the SHARP trees turn the data around.
    const double part = double(int64_t{256} << 20) / 8;
    int heads = 0;
    for (const auto& r : csv_rows(scratch("collnet_nic_" + algo) / "ports.csv")) {
      if (r.size() < 8) continue;
      // The scenario's unit has 4 servers; the run uses the first two (hosts 0 to 15).
      if (r[0].rfind("host", 0) == 0 && std::stoi(r[0].substr(4)) < 16 &&
          r[2].rfind("leaf", 0) == 0) {
        INFO(r[0] << " -> " << r[2] << ": tx " << r[5] << " rx " << r[7]);
        CHECK(std::stod(r[5]) >= part);
        CHECK(std::stod(r[5]) <= 1.02 * part);
        CHECK(std::stod(r[7]) >= part);
        CHECK(std::stod(r[7]) <= 1.02 * part);
        ++heads;
      }
      if (r[0].rfind("leaf", 0) == 0 && r[2].rfind("spine", 0) == 0) CHECK(std::stod(r[5]) == 0);
    }
    CHECK(heads == 16);
  }
}

TEST_CASE("collnet: at NDR the NVLinks bound CollNet at NVLink rate x G / (2 (G - 1))") {
  // 3600 Gb/s x 0.824 = 370.8 GB/s a direction; x 8 / 14 = 211.9 GB/s algbw, below the NICs'
  // 8 x 50 x 4096/4122 = 397.5.
  const double bound = 370.8 * 8 / 14;
  for (const std::string algo : {"collnet_direct", "collnet_chain"}) {
    const auto rows = run_rows("collnet_nvl_" + algo,
                               "--set workload.minbytes=256MiB "
                               "--set workload.maxbytes=256MiB "
                               "--set workload.algorithm=" +
                                   algo + kSharp);
    REQUIRE(rows.size() == 1);
    const double algbw = rows[0]["algbw_GBps"].get<double>();
    INFO(algo << ": algbw " << algbw << " GB/s, bound " << bound);
    CHECK(algbw <= bound);
    CHECK(algbw >= 0.93 * bound);
  }
}

TEST_CASE("collnet: algorithm auto picks CollNet as NCCL's model does once SHARP is on") {
  // NCCL 2.18's model on 2 x 8 H100 at 256 MiB: CollNet's latency (44-69 µs) is nothing there, and
  // its algorithm bandwidth (the CollNet graph's bwIntra, raised above the NICs') beats Ring's
  // and Tree's; without nccl.collnet_enable the model has no CollNet to pick.
  const auto on = run_rows("collnet_auto",
                           "--set nccl.version=2.18 --set workload.minbytes=256MiB "
                           "--set workload.maxbytes=256MiB" +
                               kSharp);
  REQUIRE(on.size() == 1);
  const std::string picked = on[0]["algorithm"];
  CHECK(picked.rfind("collnet_", 0) == 0);
  const auto off = run_rows("collnet_auto_off",
                            "--set nccl.version=2.18 "
                            "--set workload.minbytes=256MiB "
                            "--set workload.maxbytes=256MiB");
  const std::string plain = off[0]["algorithm"];
  CHECK(plain.rfind("collnet_", 0) == std::string::npos);
  // Nor for a product, which SHARP cannot reduce.
  const auto prod = run_rows("collnet_auto_prod",
                             "--set nccl.version=2.18 "
                             "--set workload.minbytes=256MiB "
                             "--set workload.maxbytes=256MiB "
                             "--set workload.redop=prod" +
                                 kSharp);
  const std::string product = prod[0]["algorithm"];
  CHECK(product.rfind("collnet_", 0) == std::string::npos);
}

TEST_CASE("collnet: refused with the reason where NCCL has no CollNet") {
  const auto refused = [](const std::string& args, const std::string& why) {
    const Result r = fabricsim("run " + kDgx + " --set workload.maxbytes=256MiB " + args);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(why));
  };
  refused("--set workload.algorithm=collnet_chain", "NCCL_COLLNET_ENABLE=1");
  refused("--set workload.algorithm=collnet_direct --set transport=roce" + kSharp,
          "transport is not infiniband");
  refused("--set workload.algorithm=collnet_chain --set workload.ngpus=8" + kSharp,
          "NCCL_COLLNET_NODE_THRESHOLD");
  refused("--set workload.algorithm=collnet_chain --set mode=flow" + kSharp, "packet mode");
  refused("--set workload.algorithm=collnet_chain --set workload.protocol=ll128" + kSharp,
          "Simple protocol only");
  // SHARP has no product (nccl-rdma-sharp-plugins reduce sum, min and max).
  refused("--set workload.algorithm=collnet_chain --set workload.redop=prod" + kSharp, "not prod");
  // NCCL_ALGO naming only CollNet where it is off: bad input with its reason.
  refused("--set nccl.algo=CollNetChain", "CollNetChain: CollNet needs NCCL_COLLNET_ENABLE=1");
}

TEST_CASE("collnet: a training step's gradient buckets run through CollNet once SHARP is on") {
  // dp 16 on 2 x 8 H100: each bucket's AllReduce spans both servers with 8 GPUs each, where
  // NCCL 2.18's model picks CollNet for the large buckets. Its NIC loopbacks are spliced into the
  // step's DAG with the communicator's flow range (a regression: the splice refused a NIC
  // loopback's flow id, bit 30, as out of range). The step then differs from the one without.
  const std::string args = " --set training.tp=1 --set training.dp=16 --set nccl.version=2.18";
  const auto step_of = [&](const std::string& more) {
    const Result r = fabricsim("run scenarios/training_step_h100.yaml" + args + more);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const size_t at = r.out.find("step ");
    REQUIRE(at != std::string::npos);
    return r.out.substr(at, r.out.find('\n', at) - at);
  };
  CHECK(step_of(kSharp) != step_of(""));
}

TEST_CASE("collnet: the flow mode names the one algorithm NCCL's model would pick instead") {
  // At 256 MiB on 2 x 8 H100 under 2.18 with SHARP on, NCCL's model prefers NVLSTree, CollNetDirect
  // and CollNetChain to Ring and Tree, and of the three CollNetDirect (what the packet run
  // runs): the flow mode, which has none of them, names that one alone (a regression: it listed
  // every one that beat its own choice).
  const std::string args =
      " --set nccl.version=2.18 --set workload.minbytes=256MiB --set workload.maxbytes=256MiB" +
      kSharp;
  const auto packet = run_rows("collnet_flow_packet", args);
  REQUIRE(packet.size() == 1);
  const std::string picked = packet[0]["algorithm"];
  const Result r = fabricsim("run " + kDgx + args + " --set mode=flow");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(picked == "collnet_direct");
  CHECK_THAT(r.out, Catch::Contains("NCCL 2.18's model picks CollNetDirect"));
  CHECK(r.out.find("picks CollNetChain") == std::string::npos);
  CHECK(r.out.find("picks NVLSTree") == std::string::npos);
}
