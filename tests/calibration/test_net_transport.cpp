// The network transport of every real log in tests/data/nccl/ (calibration/net_transport.hpp),
// read from the log's own lines: NCCL's "Using network X" and its transports' and plugins' INFO
// lines, else the collected file's "## fabric:" header line. Expected lines were read by hand
// from the files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "calibration/calibrate.hpp"
#include "calibration/nccl_log.hpp"
#include "calibration/net_transport.hpp"

using namespace fabricsim;

namespace {

std::string data(const std::string& name) {
  return std::string(FABRICSIM_SOURCE_DIR) + "/tests/data/nccl/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Expected {
  NetTransportSupport support;
  std::string name;
  int line;  ///< the line that shows it (0: none)
};

constexpr auto kModelled = NetTransportSupport::kModelled;
constexpr auto kNotModelled = NetTransportSupport::kNotModelled;
constexpr auto kNone = NetTransportSupport::kNone;
constexpr auto kUnknown = NetTransportSupport::kUnknown;
const std::string kEfa = "AWS EFA (SRD) through aws-ofi-nccl (libfabric)";

}  // namespace

TEST_CASE("every EFA log is not modelled from its own lines and IB or RoCE logs are modelled",
          "[net_transport]") {
  // Logs that do not parse (a hang, interleaved runs, a spliced device line) are left out.
  const std::map<std::string, Expected> expected = {
      // line 21: '#  Rank  0 … on node01': both ranks on one host.
      {"nccl-allgather-b200-1node-2gpu-nvlink-gcp-a4-01.txt",
       {kNone, "none (every rank on host node01)", 21}},
      // line 5: '## fabric: RoCEv2 8x400G per node via NCCL gIB plugin …'
      {"nccl-allgather-b200-2node-gcp-a4-roce-gib-01.txt", {kModelled, "NET/IB (RoCE)", 5}},
      {"nccl-allgather-b200-2x1-gcp-a4-roce-gib-01.txt", {kModelled, "NET/IB (RoCE)", 5}},
      {"nccl-allgather-h200-2x1-gcp-a3ultra-roce-gib-01.txt", {kModelled, "NET/IB (RoCE)", 5}},
      {"nccl-allreduce-a100-16node-ib-hdr-coreweave-2022-01.txt",
       {kModelled, "NET/IB (InfiniBand)", 5}},
      // line 14: '#  Rank  0 … on node01', all 8 ranks there.
      {"nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.txt",
       {kNone, "none (every rank on host node01)", 14}},
      // line 32: 'NCCL INFO NET/OFI Selected Provider is efa' (line 34: 'Using network AWS
      // Libfabric').
      {"nccl-allreduce-a100-2node-aws-p4d-efa-nccl2.9-01.txt", {kNotModelled, kEfa, 32}},
      // Only the table was published: line 4 '## fabric: AWS EFA (aws-ofi-nccl) inter-node …'.
      {"nccl-allreduce-a100-2node-aws-p4de-efa-01.txt", {kNotModelled, kEfa, 4}},
      {"nccl-allreduce-a100-4node-ib-sharp-coreweave-2023-01.txt",
       {kModelled, "NET/IB (InfiniBand)", 5}},
      {"nccl-allreduce-a100-multinode-ib-sharp-coreweave-2022-01.txt",
       {kModelled, "NET/IB (InfiniBand)", 5}},
      // '## fabric: NOT STATED …'
      {"nccl-allreduce-a800-12node-2gpu-k8s-kubeflow-01.txt", {kUnknown, "", 0}},
      // 18 trays in one NVLink domain (MNNVL): no network named.
      {"nccl-allreduce-gb200-nvl72-1rack-coreweave-01.txt", {kUnknown, "", 0}},
      {"nccl-allreduce-gb200-nvl72-20rack-coreweave-01.txt", {kModelled, "NET/IB (InfiniBand)", 7}},
      {"nccl-allreduce-gb300-16node-mnnvl-oci-01.txt", {kUnknown, "", 0}},
      {"nccl-allreduce-gb300-32node-mnnvl-roce400-oci-01.txt", {kModelled, "NET/IB (RoCE)", 6}},
      {"nccl-allreduce-h100-12node-ib-ndr-sharp-coreweave-01.txt",
       {kModelled, "NET/IB (InfiniBand)", 5}},
      // '## fabric: InfiniBand or RoCE not stated …'
      {"nccl-allreduce-h100-2node-8hca-01.txt", {kUnknown, "", 0}},
      // Log head elided: line 5 '## fabric: AWS EFA (aws-ofi-nccl, FI_PROVIDER=efa …'.
      {"nccl-allreduce-h100-2node-aws-p5-efa-01.txt", {kNotModelled, kEfa, 5}},
      // '## fabric: inter-node fabric NOT STATED (likely IB NDR) …'
      {"nccl-allreduce-h100-2node-dgx-midsize-anomaly-01.txt", {kUnknown, "", 0}},
      {"nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt",
       {kModelled, "NET/IB (RoCE)", 5}},
      {"nccl-allreduce-rtx4090-1node-4gpu-pcie-p2p-patched-01.txt",
       {kNone, "none (every rank on host node01)", 14}},
      // line 12: '[1,1]<stdout>:node02 … NCCL INFO NET/OFI Selected Provider is efa'.
      {"nccl-allreduce-t4-2node-aws-efa-karpenter-01.txt", {kNotModelled, kEfa, 12}},
      // line 24: 'NET/OFI Selected Provider is efa (found 1 nics)'.
      {"nccl-allreduce-t4-2node-aws-g4dn-metal-efa-01.txt", {kNotModelled, kEfa, 24}},
      {"nccl-allreduce-v100-2node-aws-p3dn-efa-01.txt", {kNotModelled, kEfa, 31}},
      // No 'Using network' line; line 59: 'NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO] …'.
      {"nccl-allreduce-v100-2node-roce25g-nogdr-01.txt", {kModelled, "NET/IB (RoCE)", 59}},
      {"nccl-allreduce-v100-2x1-aws-p3dn-efa-01.txt", {kNotModelled, kEfa, 17}},
      {"nccl-alltoall-gb300-16node-mnnvl-oci-01.txt", {kUnknown, "", 0}},
      {"nccl-alltoall-gb300-32node-mnnvl-roce400-oci-01.txt", {kModelled, "NET/IB (RoCE)", 6}},
  };
  int seen = 0;
  for (const auto& [name, want] : expected) {
    INFO(name);
    const NcclLog log = parse_nccl_tests_file(data(name));
    const NetTransport t = classify_net_transport(log);
    CHECK(to_string(t.support) == std::string(to_string(want.support)));
    CHECK(t.name == want.name);
    CHECK(t.line == want.line);
    if (want.line > 0) {
      // The evidence is that line of the file, as printed (launcher prefix stripped).
      std::istringstream in(slurp(data(name)));
      std::string line;
      for (int i = 0; i < want.line; ++i) std::getline(in, line);
      if (want.support == kNone) {
        CHECK(line.find("Rank  0") != std::string::npos);
      } else {
        CHECK(line.find(t.evidence.substr(0, 40)) != std::string::npos);
      }
    }
    const std::string why = not_modelled_reason(t);
    CHECK(why.empty() == (want.support != kNotModelled));
    if (want.support == kNotModelled) {
      CHECK(why.find("is not modelled (line " + std::to_string(want.line) + ": `") !=
            std::string::npos);
    }
    ++seen;
  }
  CHECK(seen == 28);
}

TEST_CASE("NCCL's transport lines: Using network wins and plugins are named", "[net_transport]") {
  const std::string two_hosts =
      "#  Rank  0 Group  0 Pid  1 on h1 device  0 [0x1b] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  2 on h2 device  0 [0x1b] NVIDIA H100 80GB HBM3\n";
  const std::string table =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    14.79    0.00    0.00      0    "
      "15.56    0.00    0.00      0\n";
  const auto classify = [&](const std::string& info) {
    return classify_net_transport(parse_nccl_tests(two_hosts + info + table, "t.txt"));
  };
  // NET/IB over InfiniBand (src/transport/net_ib.cc prints the link layer after the port).
  NetTransport t = classify(
      "h1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>\n"
      "h1:1:1 [0] NCCL INFO Using network IB\n");
  CHECK(t.support == kModelled);
  CHECK(t.name == "NET/IB (InfiniBand)");
  CHECK(t.line == 4);
  // HPC-X's nccl-rdma-sharp-plugins: the same verbs transport under the name IBext.
  t = classify(
      "h1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n"
      "h1:1:1 [0] NCCL INFO Using network IBext_v8\n");
  CHECK(t.support == kModelled);
  CHECK(t.name == "NET/IB (InfiniBand) through nccl-rdma-sharp-plugins (IBext_v8)");
  t = classify("h1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n");
  CHECK(t.support == kModelled);
  CHECK(t.name == "NET/Socket");
  // Google's TCPX plugins (nccl-plugin-gpudirecttcpx names itself GPUDirectTCPX).
  t = classify(
      "h1:1:1 [0] NCCL INFO NET/GPUDirectTCPX ver. 3.1.8.\n"
      "h1:1:1 [0] NCCL INFO Using network GPUDirectTCPX\n");
  CHECK(t.support == kNotModelled);
  CHECK(t.name == "Google GPUDirect-TCPX");
  CHECK(t.line == 4);
  t = classify("h1:1:1 [0] NCCL INFO NET/FasTrak plugin initialized\n");
  CHECK(t.support == kNotModelled);
  CHECK(t.name == "Google GPUDirect-TCPXO (FasTrak)");
  // aws-ofi-nccl on another libfabric provider (HPE Slingshot's cxi), under its newer name.
  t = classify(
      "h1:1:1 [0] NCCL INFO NET/OFI Selected Provider is cxi, fabric is cxi (found 4 nics)\n"
      "h1:1:1 [0] NCCL INFO Using network Libfabric\n");
  CHECK(t.support == kNotModelled);
  CHECK(t.name == "libfabric provider cxi through aws-ofi-nccl");
  // Any other plugin: not modelled, by the name NCCL printed.
  t = classify("h1:1:1 [0] NCCL INFO Using network MyNet\n");
  CHECK(t.support == kNotModelled);
  CHECK(t.name == "the NCCL net plugin 'MyNet'");
  // Nothing printed: unknown.
  t = classify("");
  CHECK(t.support == kUnknown);
  CHECK(t.line == 0);
  CHECK(not_modelled_reason(t).empty());
}

TEST_CASE("one node: the socket NCCL initialises there gets no CPU or GPUDirect hint",
          "[net_transport]") {
  // The real 1-node A100 log with the two lines NCCL prints when it initialises its socket
  // transport on a host without RDMA devices (src/transport/net_socket.cc "NET/Socket : Using",
  // src/init.cc "Using network Socket"): all 8 ranks are on node01, no byte crosses it.
  const std::string path = data("nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.txt");
  std::string text = slurp(path);
  const std::string at = "NCCL version 2.16.2+cuda11.6\n";
  REQUIRE(text.find(at) != std::string::npos);
  text.insert(text.find(at),
              "node01:66421:66421 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
              "node01:66421:66421 [0] NCCL INFO Using network Socket\n");
  const NcclLog log = parse_nccl_tests(text, path);
  REQUIRE(log.transport == "Socket");
  REQUIRE(log.nodes == 1);
  CHECK(classify_net_transport(log).support == kNone);
  const NcclFit fit = fit_nccl(log);
  CHECK(health_hints(log, fit, std::nullopt).empty());
  // The file as it is: no INFO line, no hint either.
  const NcclLog plain = parse_nccl_tests_file(path);
  CHECK(classify_net_transport(plain).support == kNone);
  CHECK(health_hints(plain, fit_nccl(plain), std::nullopt).empty());
  // The same lines on two nodes are the transport the data took: the hint stays.
  NcclLog two = log;
  two.nodes = 2;
  REQUIRE(health_hints(two, fit, std::nullopt).size() == 1);
  CHECK(health_hints(two, fit, std::nullopt)[0].message.find("NET/Socket") != std::string::npos);
}
