// The nccl-tests log parser (calibration/nccl_log.hpp) on every real log in tests/data/nccl/ and on
// small broken inputs. Expected values were read by hand from the files; each names its line.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "calibration/log_checks.hpp"
#include "calibration/nccl_log.hpp"

using namespace fabricsim;

namespace {

std::string data(const std::string& name) {
  return std::string(FABRICSIM_SOURCE_DIR) + "/tests/data/nccl/" + name;
}

/// The line of the ParseError `fn` throws; fails the test if it throws nothing.
template <typename Fn>
int error_line(Fn fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const ParseError& e) {
    if (message) *message = e.message;
    return e.line;
  }
  FAIL("no ParseError thrown");
  return -2;
}

int text_error_line(const std::string& text, std::string* message = nullptr) {
  return error_line([&] { parse_nccl_tests(text, "t.txt"); }, message);
}

// A valid current-format log used as the base of the broken inputs below.
const std::string kHeader =
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg "
    "iters: 1 validation: 1 graph: 0\n"                                          // line 1
    "#\n"                                                                        // line 2
    "# Using devices\n"                                                          // line 3
    "#  Rank  0 Group  0 Pid  1 on h1 device  0 [0x1b] NVIDIA H100 80GB HBM3\n"  // line 4
    "#  Rank  1 Group  0 Pid  2 on h2 device  0 [0x1b] NVIDIA H100 80GB HBM3\n"  // line 5
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n";  // line 6
const std::string kRow8 =
    "           8             2     float     sum      -1    14.79    0.00    0.00      0    "
    "15.56    0.00    0.00      0\n";
const std::string kRow16 =
    "          16             4     float     sum      -1    14.93    0.00    0.00      0    "
    "15.54    0.00    0.00      0\n";

}  // namespace

TEST_CASE("every log in tests/data/nccl parses or throws at the expected line", "[nccl_log]") {
  // 0: parses with rows. Otherwise the ParseError line (read from the file).
  const std::map<std::string, int> expected = {
      {"nccl-allgather-b200-1node-2gpu-nvlink-gcp-a4-01.txt", 0},
      {"nccl-allgather-b200-2node-gcp-a4-roce-gib-01.txt", 0},
      {"nccl-allgather-b200-2x1-gcp-a4-roce-gib-01.txt", 0},
      // line 30: the '#  size  count …' header; the run hangs and prints no rows.
      {"nccl-allgather-b200-2x2-no-rdma-nic-hang-problem-01.txt", 30},
      {"nccl-allgather-h200-2x1-gcp-a3ultra-roce-gib-01.txt", 0},
      {"nccl-allreduce-a100-16node-ib-hdr-coreweave-2022-01.txt", 0},
      {"nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.txt", 0},
      {"nccl-allreduce-a100-2node-aws-p4d-efa-nccl2.9-01.txt", 0},
      {"nccl-allreduce-a100-2node-aws-p4de-efa-01.txt", 0},
      {"nccl-allreduce-a100-4node-ib-sharp-coreweave-2023-01.txt", 0},
      {"nccl-allreduce-a100-multinode-ib-sharp-coreweave-2022-01.txt", 0},
      {"nccl-allreduce-a800-12node-2gpu-k8s-kubeflow-01.txt", 0},
      {"nccl-allreduce-gb200-nvl72-1rack-coreweave-01.txt", 0},
      {"nccl-allreduce-gb200-nvl72-20rack-coreweave-01.txt", 0},
      // line 17: the first row; busbw/algbw fits 128 ranks, the only device line (line 12,
      // 'Rank 143') says 144: the line is from another run (the file's own header says so).
      {"nccl-allreduce-gb200-nvl72-2rack-coreweave-01.txt", 17},
      {"nccl-allreduce-gb300-16node-mnnvl-oci-01.txt", 0},
      {"nccl-allreduce-gb300-32node-mnnvl-roce400-oci-01.txt", 0},
      {"nccl-allreduce-h100-12node-ib-ndr-sharp-coreweave-01.txt", 0},
      {"nccl-allreduce-h100-2node-8hca-01.txt", 0},
      {"nccl-allreduce-h100-2node-aws-p5-efa-01.txt", 0},
      {"nccl-allreduce-h100-2node-dgx-midsize-anomaly-01.txt", 0},
      {"nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt", 0},
      {"nccl-allreduce-rtx4090-1node-4gpu-pcie-p2p-patched-01.txt", 0},
      {"nccl-allreduce-t4-2node-aws-efa-karpenter-01.txt", 0},
      {"nccl-allreduce-t4-2node-aws-g4dn-metal-efa-01.txt", 0},
      {"nccl-allreduce-v100-2node-aws-p3dn-efa-01.txt", 0},
      // line 40: the second '#  Rank  0' line (four 1-rank runs interleaved, no MPI build).
      {"nccl-allreduce-v100-2node-roce-mpi-not-built-problem-01.txt", 40},
      {"nccl-allreduce-v100-2node-roce25g-nogdr-01.txt", 0},
      {"nccl-allreduce-v100-2x1-aws-p3dn-efa-01.txt", 0},
      {"nccl-alltoall-gb300-16node-mnnvl-oci-01.txt", 0},
      {"nccl-alltoall-gb300-32node-mnnvl-roce400-oci-01.txt", 0},
  };
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(FABRICSIM_SOURCE_DIR) +
                                                               "/tests/data/nccl")) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    const auto it = expected.find(name);
    REQUIRE(it != expected.end());
    ++seen;
    if (it->second == 0) {
      const NcclLog log = parse_nccl_tests_file(entry.path().string());
      CHECK_FALSE(log.rows.empty());
      CHECK_FALSE(log.collective.empty());
      CHECK(log.nranks > 0);
    } else {
      CHECK(error_line([&] { parse_nccl_tests_file(entry.path().string()); }) == it->second);
    }
  }
  CHECK(seen == static_cast<int>(expected.size()));
}

TEST_CASE("all_gather B200 2x1: header fields, zero-size rows, gIB launcher noise", "[nccl_log]") {
  const NcclLog log = parse_nccl_tests_file(data("nccl-allgather-b200-2x1-gcp-a4-roce-gib-01.txt"));
  CHECK(log.collective == "all_gather");  // line 3 '## tool: nccl-tests all_gather_perf'
  // line 22
  CHECK(log.nthread == 1);
  CHECK(log.ngpus == 1);
  CHECK(log.minbytes == 8);
  CHECK(log.maxbytes == 1073741824);
  CHECK(log.step == "2(factor)");
  CHECK(log.warmup_iters == 50);
  CHECK(log.iters == 100);
  CHECK(log.validation);
  // lines 25-26
  REQUIRE(log.ranks.size() == 2);
  CHECK(log.ranks[1].rank == 1);
  CHECK(log.ranks[1].host == "node02");
  CHECK(log.ranks[1].device == 0);
  CHECK(log.ranks[1].gpu == "NVIDIA B200");
  CHECK(log.nranks == 2);
  CHECK(log.nodes == 2);
  CHECK(log.nccl_version == "2.26.6+cuda12.8");   // line 27
  CHECK(log.meta.at("nodes x GPUs") == "2 x 1");  // line 6
  REQUIRE(log.rows.size() == 28);                 // lines 32-59
  const NcclLogRow& first = log.rows.front();     // line 32
  CHECK(first.line == 32);
  CHECK(first.size_bytes == 0);
  CHECK(first.count == 0);
  CHECK(first.type == "float");
  CHECK(first.redop == "none");
  CHECK(first.root == -1);
  CHECK(first.oop_time_us == 0.06);
  CHECK(first.ip_time_us == 0.06);
  CHECK(first.oop_wrong == 0);
  CHECK(std::isnan(first.oop_error));
  const NcclLogRow& last = log.rows.back();  // line 59
  CHECK(last.line == 59);
  CHECK(last.size_bytes == 1073741824);
  CHECK(last.count == 134217728);
  CHECK(last.oop_time_us == 14640);
  CHECK(last.oop_algbw_GBps == 73.35);
  CHECK(last.oop_busbw_GBps == 36.67);
  CHECK(last.ip_time_us == 11892);
  CHECK(last.ip_algbw_GBps == 90.29);
  CHECK(last.ip_busbw_GBps == 45.14);
  CHECK(last.ip_wrong == 0);
  CHECK(log.avg_busbw_GBps == 12.5463);  // line 61
  CHECK(log.transport.empty());          // no NCCL INFO lines
  CHECK(log.gdr == -1);
  CHECK(log.channels == 0);
  CHECK(log.notes.empty());
}

TEST_CASE("all_reduce A100 1 node: complete current-format log", "[nccl_log]") {
  const NcclLog log =
      parse_nccl_tests_file(data("nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.txt"));
  CHECK(log.collective == "all_reduce");
  CHECK(log.minbytes == 33554432);  // line 11
  CHECK(log.maxbytes == 1073741824);
  CHECK(log.warmup_iters == 5);
  CHECK(log.iters == 20);
  CHECK(log.nranks == 8);  // lines 14-21
  CHECK(log.nodes == 1);
  CHECK(log.ranks[7].gpu == "NVIDIA A100-SXM4-80GB");
  CHECK(log.nccl_version == "2.16.2+cuda11.6");  // line 22
  REQUIRE(log.rows.size() == 6);
  // line 27: 33554432 8388608 float sum -1 344.8 97.32 170.31 0 349.5 95.99 167.99 0
  CHECK(log.rows[0].size_bytes == 33554432);
  CHECK(log.rows[0].count == 8388608);
  CHECK(log.rows[0].redop == "sum");
  CHECK(log.rows[0].oop_busbw_GBps == 170.31);
  CHECK(log.rows[0].ip_busbw_GBps == 167.99);
  // line 32: 1073741824 268435456 … 8109.1 132.41 231.72 0 8109.7 132.40 231.70 0
  CHECK(log.rows[5].line == 32);
  CHECK(log.rows[5].oop_time_us == 8109.1);
  CHECK(log.rows[5].ip_busbw_GBps == 231.70);
  CHECK(log.avg_busbw_GBps == 210.99);  // line 34
  CHECK(log.notes.empty());
}

TEST_CASE("old 12-column format with mpirun tag prefixes and EFA INFO lines", "[nccl_log]") {
  const NcclLog log =
      parse_nccl_tests_file(data("nccl-allreduce-a100-2node-aws-p4d-efa-nccl2.9-01.txt"));
  CHECK(log.collective == "all_reduce");  // line 3 '## tool'
  CHECK(log.minbytes == 8);               // line 11 '[1,0]<stdout>:# nThread …'
  CHECK(log.maxbytes == 4294967296);
  CHECK(log.iters == 100);
  CHECK(log.nranks == 16);  // lines 14-29
  CHECK(log.nodes == 2);
  CHECK(log.nccl_version == "2.9.9+cuda11.2");  // line 35
  CHECK(log.transport == "AWS Libfabric");      // line 34 'Using network AWS Libfabric'
  CHECK(log.gdr == -1);                         // no channel lines kept
  REQUIRE(log.rows.size() == 30);               // lines 115-144
  // line 115: 8 2 float sum 179.1 0.00 0.00 2e-07 176.3 0.00 0.00 1e-07
  const NcclLogRow& first = log.rows.front();
  CHECK(first.line == 115);
  CHECK(first.root == -1);
  CHECK(first.oop_time_us == 179.1);
  CHECK(first.oop_wrong == -1);
  CHECK(first.oop_error == 2e-07);
  CHECK(first.ip_error == 1e-07);
  // line 144: 4294967296 1073741824 float sum 183834 23.36 43.81 5e-07 184216 23.31 43.72 5e-07
  const NcclLogRow& last = log.rows.back();
  CHECK(last.size_bytes == 4294967296);
  CHECK(last.count == 1073741824);
  CHECK(last.oop_busbw_GBps == 43.81);
  CHECK(last.ip_time_us == 184216);
  CHECK(log.avg_busbw_GBps == 11.2432);  // line 146
}

TEST_CASE("fork prefix 'run(), common.cu:NNN, ' and GPU Direct RDMA disabled", "[nccl_log]") {
  const NcclLog log = parse_nccl_tests_file(data("nccl-allreduce-v100-2node-roce25g-nogdr-01.txt"));
  CHECK(log.collective == "all_reduce");  // line 21 './build/all_reduce_perf'
  CHECK(log.minbytes == 8);               // line 51
  CHECK(log.maxbytes == 1073741824);
  CHECK(log.nranks == 2);  // lines 53-54
  CHECK(log.nodes == 2);
  CHECK(log.ranks[0].host == "node01");
  CHECK(log.ranks[0].gpu == "Tesla V100-SXM2-16GB");
  CHECK(log.nccl_version == "2.26.5+cuda12.9");  // line 55
  CHECK(log.transport == "IB");                  // line 59 'NET/IB : Using [0]mlx5_0:1/RoCE'
  CHECK(log.gdr == 0);                           // line 63 'GPU Direct RDMA Disabled'
  CHECK(log.channels == 0);
  REQUIRE(log.rows.size() == 28);  // lines 76-96 and 100-106, Open MPI noise at 97-99
  CHECK(log.rows.front().line == 76);
  CHECK(log.rows.front().oop_time_us == 14.79);
  CHECK(log.rows[21].line == 100);  // first row after the noise: 16777216 … 10394
  CHECK(log.rows[21].oop_time_us == 10394);
  CHECK(log.rows.back().line == 106);
  CHECK(log.rows.back().oop_time_us == 613812);
  CHECK(log.rows.back().ip_busbw_GBps == 1.74);
  CHECK(log.avg_busbw_GBps == 0.888172);  // line 108
}

TEST_CASE("NCCL INFO hints: network, channels, GDR off, env", "[nccl_log]") {
  const NcclLog log =
      parse_nccl_tests_file(data("nccl-allreduce-t4-2node-aws-g4dn-metal-efa-01.txt"));
  CHECK(log.transport == "AWS Libfabric");  // line 25
  CHECK(log.channels == 2);                 // line 39 'Channel 00/02 :'
  CHECK(log.gdr == 0);                      // line 44 'via NET/AWS Libfabric/0', no GDRDMA
  CHECK(log.nccl_env == std::map<std::string, std::string>{{"NCCL_SHM_DISABLE", "0"}});  // l. 42
  CHECK(log.nccl_version == "2.12.7+cuda11.4");                                          // line 26
  CHECK(log.minbytes == 1);                                                              // line 12
  CHECK(log.nranks == 2);
  CHECK(log.nodes == 2);
  REQUIRE(log.rows.size() == 31);  // lines 67-97; 'Launch mode Parallel' at 66 skipped
  CHECK(log.rows.front().line == 67);
  CHECK(log.rows.back().line == 97);
  CHECK(log.rows.back().oop_busbw_GBps == 3.11);
  CHECK(log.avg_busbw_GBps == 1.15327);  // line 101

  const NcclLog karp =
      parse_nccl_tests_file(data("nccl-allreduce-t4-2node-aws-efa-karpenter-01.txt"));
  CHECK(karp.transport == "AWS Libfabric");  // line 13
  CHECK(karp.gdr == -1);                     // no channel lines
  CHECK(karp.nranks == 2);                   // ## nodes x GPUs: 2 workers x 1 GPU
  CHECK(karp.nodes == 2);
}

TEST_CASE("NCCL's choice lines: size, algorithm and protocol indices", "[nccl_log]") {
  // The format of enqueue.cc's line: "%ld Bytes -> Algo %d proto %d time %f" (NCCL 2.19-2.2x
  // print it from rank 0 under NCCL_DEBUG_SUBSYS=TUNING), here after NCCL's INFO prefix.
  const NcclLog log = parse_nccl_tests(
      "node01:1:1 [0] NCCL INFO 8 Bytes -> Algo 1 proto 0 time 12.500000\n"
      "node01:1:1 [0] NCCL INFO AllReduce: 8589934592 Bytes -> Algo 5 proto 2 time 9.9\n"
      // the named form of newer releases' enqueue.cc
      "node01:1:1 [0] NCCL INFO AllReduce: 16 Bytes -> Algo NVLS_TREE proto LL128 "
      "channel{Lo..Hi}={0..1}\n"
      "node01:1:1 [0] NCCL INFO AllReduce: 16 Bytes -> Algo SHORTCUT proto LL\n"  // unknown:
                                                                                  // skipped
      // a connection line: "/0" is a connection index, not a channel count
      "node01:1:1 [0] NCCL INFO Channel 05/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n" +
          kHeader + kRow8 + kRow16,
      "t.txt");
  CHECK(log.channels == 0);
  REQUIRE(log.choices.size() == 3);
  CHECK(nccl_algo_name(log.choices[2].algo) == "nvls_tree");
  CHECK(nccl_proto_name(log.choices[2].proto) == "ll128");
  CHECK(log.choices[0].bytes == 8);
  CHECK(nccl_algo_name(log.choices[0].algo) == "ring");
  CHECK(nccl_proto_name(log.choices[0].proto) == "ll");
  CHECK(log.choices[0].line == 1);
  CHECK(log.choices[1].bytes == 8589934592);  // above 2^31
  CHECK(nccl_algo_name(log.choices[1].algo) == "nvls_tree");
  CHECK(nccl_proto_name(log.choices[1].proto) == "simple");
  CHECK(nccl_algo_name(6) == "pat");
  // Text after "NCCL version" that is no version names none; a longer one keeps X.Y.Z.
  CHECK(parse_nccl_tests("NCCL version not printed by this image\n" + kHeader + kRow8, "t.txt")
            .nccl_version.empty());
  const NcclLog dotted = parse_nccl_tests("NCCL version 2.19.3.1\n" + kHeader + kRow8, "t.txt");
  CHECK(dotted.nccl_version == "2.19.3");
  CHECK(dotted.nccl_version_line == 1);
  CHECK(nccl_algo_name(7).empty());
}

TEST_CASE("alltoall GB300: elided device list, '# Truncated' rows, N/A in-place #wrong",
          "[nccl_log]") {
  const NcclLog log = parse_nccl_tests_file(data("nccl-alltoall-gb300-16node-mnnvl-oci-01.txt"));
  CHECK(log.collective == "alltoall");  // line 11 '# Collective test starting: alltoall_perf'
  CHECK(log.minbytes == 524288);        // line 12
  CHECK(log.maxbytes == 17179869184);
  CHECK(log.warmup_iters == 1);
  CHECK(log.iters == 50);
  CHECK(log.ranks.size() == 4);  // lines 15, 16, 18, 19
  CHECK(log.nranks == 64);       // last listed 'Rank 63' (line 19)
  CHECK(log.nodes == 16);        // list incomplete: '## nodes x GPUs: 16 x 4' (line 7)
  CHECK(log.nccl_version == "2.28.7+cuda13.0");  // line 20
  REQUIRE(log.rows.size() == 2);
  // line 26: 8589934592 33554432 float none -1 13028 659.33 649.03 0 12953 663.18 652.82 N/A
  CHECK(log.rows[0].line == 26);
  CHECK(log.rows[0].count == 33554432);
  CHECK(log.rows[0].oop_wrong == 0);
  CHECK(log.rows[0].ip_wrong == -1);
  CHECK(log.rows[0].ip_busbw_GBps == 652.82);
  // line 27
  CHECK(log.rows[1].size_bytes == 17179869184);
  CHECK(log.rows[1].oop_busbw_GBps == 666.92);
  CHECK(log.avg_busbw_GBps == 370.718);  // line 29
  REQUIRE(log.notes.size() == 2);
  CHECK(log.notes[0] == "line 17: device list elided ('...')");
  CHECK(log.notes[1] == "line 25: table truncated (\"# Truncated  smaller message sizes\")");
}

TEST_CASE("truncated table with '...' rows and a trailing markdown fence", "[nccl_log]") {
  const NcclLog log =
      parse_nccl_tests_file(data("nccl-allgather-b200-1node-2gpu-nvlink-gcp-a4-01.txt"));
  CHECK(log.collective == "all_gather");
  CHECK(log.nranks == 2);  // lines 21-22
  CHECK(log.nodes == 1);
  REQUIRE(log.rows.size() == 8);  // lines 29-36
  CHECK(log.rows.front().size_bytes == 67108864);
  CHECK(log.rows.back().ip_algbw_GBps == 1128.28);  // line 36
  CHECK(std::isnan(log.avg_busbw_GBps));            // no footer
  REQUIRE(log.notes.size() == 1);
  CHECK(log.notes[0] == "line 28: '...' in the table: rows were elided (truncated paste)");
}

TEST_CASE("srun '0: ' prefixes and a table with no run header", "[nccl_log]") {
  const NcclLog log = parse_nccl_tests_file(data("nccl-allreduce-a100-2node-aws-p4de-efa-01.txt"));
  CHECK(log.collective == "all_reduce");  // line 6 '## tool'
  CHECK(log.nthread == 0);                // no '# nThread' line
  CHECK(log.ranks.empty());
  CHECK(log.nranks == 16);  // line 5 '## nodes x GPUs: 2 x 8 = 16 ranks'
  CHECK(log.nodes == 2);
  REQUIRE(log.rows.size() == 29);  // lines 13-41
  CHECK(log.rows.front().size_bytes == 8);
  CHECK(log.rows.back().line == 41);
  CHECK(log.rows.back().oop_busbw_GBps == 78.33);
  CHECK(std::isnan(log.avg_busbw_GBps));
}

TEST_CASE("stale spliced headers are noted", "[nccl_log]") {
  const NcclLog sharp =
      parse_nccl_tests_file(data("nccl-allreduce-a100-multinode-ib-sharp-coreweave-2022-01.txt"));
  CHECK(sharp.ranks.size() == 5);  // lines 15-19, then '...' (line 20)
  CHECK(sharp.nranks == 32);       // '## nodes x GPUs' (line 6): 4 x 8
  CHECK(sharp.nodes == 4);
  REQUIRE(sharp.rows.size() == 31);  // lines 27-57
  CHECK(sharp.rows.back().size_bytes == 8589934592);
  CHECK(sharp.rows.back().oop_error == 5e-07);
  REQUIRE(sharp.notes.size() == 3);
  CHECK(sharp.notes[0] == "line 20: device list elided ('...')");
  CHECK(sharp.notes[1] ==
        "device list cut after rank 4; nranks 32 from the ## nodes x GPUs header");
  CHECK(sharp.notes[2] ==
        "rows reach 8589934592 bytes but the header says maxBytes 2147483648: header from another "
        "run");
}

TEST_CASE("a device line from another run than the table is refused at the first row",
          "[nccl_log]") {
  // 'Rank 143' (line 12, the only device line) gives 144 ranks, but the first row (line 17)
  // has busbw 493.94 = 1.98433 x algbw 248.92, and 2(n-1)/n = 1.98433 for n = 128; for 144 it
  // is 1.98611 (494.38 GB/s, 0.44 above the printed busbw; rounding allows 0.015).
  std::string msg;
  CHECK(
      error_line(
          [] { parse_nccl_tests_file(data("nccl-allreduce-gb200-nvl72-2rack-coreweave-01.txt")); },
          &msg) == 17);
  CHECK(msg.find("out-of-place busbw 493.94 GB/s is 1.98433 x algbw 248.92 GB/s") !=
        std::string::npos);
  CHECK(msg.find("all_reduce on 144 ranks (the device list: Rank 143 at line 12)") !=
        std::string::npos);
  CHECK(msg.find("busbw / algbw fits 128 ranks") != std::string::npos);
}

TEST_CASE("hang and launcher-problem logs throw with the line", "[nccl_log]") {
  std::string msg;
  CHECK(error_line(
            [] {
              parse_nccl_tests_file(
                  data("nccl-allgather-b200-2x2-no-rdma-nic-hang-problem-01.txt"));
            },
            &msg) == 30);
  CHECK(msg.find("no result rows") != std::string::npos);
  CHECK(error_line(
            [] {
              parse_nccl_tests_file(
                  data("nccl-allreduce-v100-2node-roce-mpi-not-built-problem-01.txt"));
            },
            &msg) == 40);
  CHECK(msg.find("built without MPI") != std::string::npos);
}

TEST_CASE("bad inputs throw ParseError with the line", "[nccl_log]") {
  std::string msg;
  SECTION("empty") {
    CHECK(text_error_line("", &msg) == 0);
    CHECK(text_error_line("  \n\n", &msg) == 0);
    CHECK(msg.find("empty") != std::string::npos);
  }
  SECTION("binary") {
    CHECK(text_error_line(std::string("# nThread\n\x7f"
                                      "ELF\x02\x01\x01\0\0",
                                      18),
                          &msg) == 2);
    CHECK(msg.find("binary") != std::string::npos);
  }
  SECTION("what() is path:line: message") {
    try {
      parse_nccl_tests("hello\n", "x.log");
      FAIL("no throw");
    } catch (const ParseError& e) {
      CHECK(e.path == "x.log");
      CHECK(e.line == 0);
      CHECK(std::string(e.what()) == "x.log:0: " + e.message);
      CHECK(e.message.rfind("no nccl-tests result table found; expected", 0) == 0);
    }
  }
  SECTION("a perftest log") {
    CHECK(error_line([] { parse_nccl_tests_file("/nonexistent/nccl.txt"); }) == 0);
    const std::string perf =
        "---------------------------------------------------------------------------------------\n"
        "                    RDMA_Write BW Test\n"
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 65536      5000             11024.71            11024.71\t\t   0.176395\n";
    CHECK(text_error_line(perf, &msg) == 2);
    CHECK(msg.find("this looks like a perftest output") != std::string::npos);
  }
  SECTION("header without rows") {
    CHECK(text_error_line(kHeader, &msg) == 6);
  }
  SECTION("row with a missing column") {
    CHECK(text_error_line(kHeader + kRow8 +
                              "  16  4  float  sum  -1  14.93  0.00  0.00  0  15.54  0.00  0.00\n",
                          &msg) == 8);
    CHECK(msg.find("row has 12 columns") != std::string::npos);
  }
  SECTION("unknown type") {
    CHECK(text_error_line(
              kHeader + "  8  2  float32  sum  -1  1.0  0.00  0.00  0  1.0  0.00  0.00  0\n",
              &msg) == 7);
    CHECK(msg.find("did you mean 'float'") != std::string::npos);
  }
  SECTION("unreadable number") {
    CHECK(
        text_error_line(kHeader + kRow8 +
                            "  16  4  float  sum  -1  14.9x  0.00  0.00  0  15.54  0.00  0.00  0\n",
                        &msg) == 8);
    CHECK(msg == "cannot read out-of-place time '14.9x'");
  }
  SECTION("two runs in one log") {
    CHECK(text_error_line(kHeader + kRow8 + kHeader.substr(kHeader.rfind("#       size")), &msg) ==
          8);
    CHECK(msg.find("second nccl-tests result table") != std::string::npos);
  }
  SECTION("sizes going down: interleaved rows") {
    CHECK(text_error_line(kHeader + kRow16 + kRow8, &msg) == 8);
  }
  SECTION("row after the footer") {
    CHECK(text_error_line(kHeader + kRow8 + "# Avg bus bandwidth    : 0\n" + kRow16, &msg) == 9);
  }
  SECTION("the base log itself parses") {
    const NcclLog log = parse_nccl_tests(kHeader + kRow8 + kRow16, "t.txt");
    CHECK(log.rows.size() == 2);
    CHECK(log.nranks == 2);
    CHECK(log.collective.empty());
  }
}

TEST_CASE("#wrong > 0 and out-of-bounds values are noted", "[nccl_log]") {
  const NcclLog log = parse_nccl_tests(
      kHeader + "  8  2  float  sum  -1  14.79  0.00  0.00  3  15.56  0.00  0.00  0\n" +
          "# Out of bounds values : 3 FAILED\n",
      "t.txt");
  REQUIRE(log.notes.size() == 2);
  CHECK(log.notes[0] ==
        "line 7: #wrong 3 out-of-place, 0 in-place at size 8: results failed validation");
  CHECK(log.notes[1] == "line 8: 3 out-of-bounds values (FAILED): results failed validation");
}

// ---------------------------------------------------------------------------------------------
// Plausibility: the numbers of a row agree the way nccl-tests computes them (algbw = size / time,
// busbw = algbw x busbw_factor(collective, nranks)), within the rounding of the printed digits.

namespace {

/// kHeader's 2-rank device list with an all_reduce starting line in front (line 1), so the
/// header's lines move down by one: ranks at lines 5-6, table header at line 7, rows from 8.
const std::string kAllReduce = "# Collective test starting: all_reduce_perf\n" + kHeader;

/// A current-format row of size `size` with the same numbers in both blocks.
std::string row(int64_t size, const std::string& time, const std::string& algbw,
                const std::string& busbw) {
  const std::string block = "  " + time + "  " + algbw + "  " + busbw + "  0";
  return "  " + std::to_string(size) + "  " + std::to_string(size / 4) + "  float  sum  -1" +
         block + block + "\n";
}

}  // namespace

TEST_CASE("half_last_digit: half a unit of the last printed digit", "[nccl_log]") {
  CHECK(half_last_digit("14.79") == Approx(0.005));
  CHECK(half_last_digit("2156.8") == Approx(0.05));
  CHECK(half_last_digit("11469") == Approx(0.5));
  CHECK(half_last_digit("5e-07") == Approx(5e-08));
  CHECK(half_last_digit("1.5e3") == Approx(50));
}

TEST_CASE("a row's time must be positive and at most an hour", "[nccl_log]") {
  std::string msg;
  SECTION("the base row parses") {
    CHECK(parse_nccl_tests(kAllReduce + row(1048576, "98.57", "10.64", "10.64"), "t.txt")
              .rows.size() == 1);
  }
  SECTION("0.00 us") {
    CHECK(text_error_line(kAllReduce + row(8, "0.00", "0.00", "0.00"), &msg) == 8);
    CHECK(msg == "out-of-place time 0.00 us; expected a positive time in microseconds");
  }
  SECTION("negative") {
    CHECK(text_error_line(kAllReduce + row(8, "-14.79", "0.00", "0.00"), &msg) == 8);
    CHECK(msg.find("expected a positive time") != std::string::npos);
  }
  SECTION("1e308 us, which the bandwidth columns round to 0.00") {
    CHECK(text_error_line(kAllReduce + row(8, "1e308", "0.00", "0.00"), &msg) == 8);
    CHECK(msg.find("out-of-place time 1e308 us is more than an hour") != std::string::npos);
  }
  SECTION("an hour is the bound: 3.6e9 us passes, 3.7e9 does not") {
    CHECK(
        parse_nccl_tests(kAllReduce + row(8, "3600000000", "0.00", "0.00"), "t.txt").rows.size() ==
        1);
    CHECK(text_error_line(kAllReduce + row(8, "3700000000", "0.00", "0.00")) == 8);
  }
}

TEST_CASE("a row's algbw must be size / time within the printed rounding", "[nccl_log]") {
  // 1048576 B in 98.57 us: the time was in [98.565, 98.575) us, so algbw in
  // [10.6374, 10.6384] GB/s before rounding to 2 decimals: 10.64 only.
  CHECK(
      parse_nccl_tests(kAllReduce + row(1048576, "98.57", "10.64", "10.64"), "t.txt").rows.size() ==
      1);
  std::string msg;
  CHECK(text_error_line(kAllReduce + row(1048576, "98.57", "10.65", "10.65"), &msg) == 8);
  CHECK(msg ==
        "out-of-place algbw 10.65 GB/s, but size 1048576 B in 98.57 us is 10.64 GB/s (nccl-tests' "
        "algbw = size / time): the row was edited or its columns are shifted");
  CHECK(text_error_line(kAllReduce + row(1048576, "98.57", "10.63", "10.63")) == 8);
  // A time printed with fewer digits allows more: 11469 us is [11468.5, 11469.5).
  CHECK(parse_nccl_tests(kAllReduce + row(4294967296, "11469", "374.47", "374.47"), "t.txt")
            .rows.size() == 1);
}

TEST_CASE("a row's busbw must be algbw times the busbw factor of the log's rank count",
          "[nccl_log]") {
  std::string msg;
  SECTION("2 ranks: all_reduce's 2(n-1)/n is 1") {
    CHECK(parse_nccl_tests(kAllReduce + row(1048576, "98.57", "10.64", "10.64"), "t.txt").nranks ==
          2);
    CHECK(text_error_line(kAllReduce + row(1048576, "98.57", "10.64", "10.66"), &msg) == 8);
    CHECK(msg.find("out-of-place busbw 10.66 GB/s is 1.00188 x algbw 10.64 GB/s; all_reduce on 2 "
                   "ranks (the device list: Rank 1 at line 6) has busbw = 2(n-1)/n x algbw = 1 x "
                   "10.64 = 10.64 GB/s") == 0);
  }
  SECTION("a device line 'Rank 999999' over a 2-rank table") {
    const std::string text = "# Collective test starting: all_reduce_perf\n" +
                             kHeader.substr(0, kHeader.find("#       size")) +
                             "#  Rank 999999 Group  0 Pid  3 on h3 device  0 [0x1b] NVIDIA H100\n" +
                             kHeader.substr(kHeader.find("#       size")) +
                             row(1048576, "98.57", "10.64", "10.64");
    CHECK(text_error_line(text, &msg) == 9);
    CHECK(msg.find("all_reduce on 1000000 ranks (the device list: Rank 999999 at line 7)") !=
          std::string::npos);
    CHECK(msg.find("busbw / algbw fits 2 ranks") != std::string::npos);
  }
  SECTION("rows too small to show a bandwidth cannot contradict a rank count") {
    const std::string text = kAllReduce.substr(0, kAllReduce.find("#       size")) +
                             "#  Rank 999999 Group  0 Pid  3 on h3 device  0 [0x1b] NVIDIA H100\n" +
                             kHeader.substr(kHeader.find("#       size")) + kRow8;
    CHECK(parse_nccl_tests(text, "t.txt").nranks == 1000000);
  }
  SECTION("rank numbers are at most a million") {
    const std::string text = kAllReduce.substr(0, kAllReduce.find("#       size")) +
                             "#  Rank 999999999 Group  0 Pid  3 on h3 device  0 [0x1b] NVIDIA\n" +
                             kHeader.substr(kHeader.find("#       size")) + kRow8;
    CHECK(text_error_line(text, &msg) == 7);
    CHECK(msg ==
          "rank 999999999: more than 1000000 ranks, beyond any real run; expected the "
          "rank of one GPU");
  }
  SECTION("the in-place block is checked too") {
    CHECK(text_error_line(kAllReduce +
                              "  1048576  262144  float  sum  -1  98.57  10.64  10.64  0  98.57  "
                              "10.64  21.28  0\n",
                          &msg) == 8);
    CHECK(msg.rfind("in-place busbw 21.28 GB/s", 0) == 0);
  }
  SECTION("no collective named: nothing to check busbw against") {
    CHECK(
        parse_nccl_tests(kHeader + row(1048576, "98.57", "10.64", "21.28"), "t.txt").rows.size() ==
        1);
  }
}

TEST_CASE("a table row that does not parse is reported at its line, not skipped", "[nccl_log]") {
  std::string msg;
  SECTION("a full-width digit in the size") {
    CHECK(text_error_line(
              kHeader + kRow8 +
                  "  １6  4  float  sum  -1  14.93  0.00  0.00  0  15.54  0.00  0.00  0\n",
              &msg) == 8);
    CHECK(msg == "cannot read size '１6' (non-ASCII characters; expected ASCII digits 0-9)");
  }
  SECTION("a size in full-width digits only, with a column missing") {
    CHECK(
        text_error_line(kHeader + kRow8 +
                            "  １６  4  float  sum  -1  14.93  0.00  0.00  0  15.54  0.00  0.00\n",
                        &msg) == 8);
    CHECK(msg.find("row has 12 columns") != std::string::npos);
  }
  SECTION("a full-width digit in the count") {
    CHECK(text_error_line(
              kHeader + kRow8 +
                  "  16  ４  float  sum  -1  14.93  0.00  0.00  0  15.54  0.00  0.00  0\n",
              &msg) == 8);
    CHECK(msg == "cannot read count '４' (non-ASCII characters; expected ASCII digits 0-9)");
  }
  SECTION("a row of the table's width with a size in other words") {
    CHECK(text_error_line(
              kHeader + kRow8 +
                  "  16B  4  float  sum  -1  14.93  0.00  0.00  0  15.54  0.00  0.00  0\n",
              &msg) == 8);
    CHECK(msg == "cannot read size '16B'");
  }
  SECTION("a row of the table's width with its size and time swapped") {
    CHECK(
        text_error_line(kHeader + kRow8 +
                            "  14.93  4  float  sum  -1  16  0.00  0.00  0  15.54  0.00  0.00  0\n",
                        &msg) == 8);
    CHECK(msg == "cannot read size '14.93'");
  }
  SECTION("noise of another width inside the table is still skipped") {
    const NcclLog log = parse_nccl_tests(
        kHeader + kRow8 +
            "node1:123:456 [0] NCCL INFO comm 0x55 rank 0 nranks 2 - Destroy COMPLETE\n" +
            "Warning: Permanently added 'node2' (ED25519) to the list of known hosts.\n" + kRow16,
        "t.txt");
    CHECK(log.rows.size() == 2);
  }
}
