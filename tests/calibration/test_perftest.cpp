// perftest log parser (calibration/perftest.hpp) against the corpus in tests/data/perftest/.
// Every expected value below was read from the named file at the named line; bandwidths are the
// printed value times the unit perftest uses (MB/sec = 2^20 = 1048576 B/s, Gb/sec = 1.25e8 B/s).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/perftest.hpp"

using namespace fabricsim;

namespace {

const std::filesystem::path kDir =
    std::filesystem::path(FABRICSIM_SOURCE_DIR) / "tests" / "data" / "perftest";

PerftestLog load(const std::string& name) {
  return parse_perftest_file((kDir / name).string());
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The first `n` lines of `name`, each with its "\n".
std::string first_lines(const std::string& name, int n) {
  std::istringstream in(read_text(kDir / name));
  std::string out, line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

/// The line number of the ParseError `f` throws (-1 if it throws none).
template <typename F>
int error_line(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const ParseError& e) {
    if (message != nullptr) *message = e.message;
    return e.line;
  }
  return -1;
}

bool has_note(const PerftestLog& log, const std::string& part) {
  for (const auto& n : log.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("perftest: every corpus file parses, the two aborted runs keep their rows") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    INFO(entry.path().filename().string());
    const PerftestLog log = parse_perftest_file(entry.path().string());
    CHECK(!log.tool.empty());
    CHECK(log.meta.count("source") == 1);
    CHECK(log.bw_rows.size() + log.lat_rows.size() > 0);
    // "*-error-*" logs are the runs whose ## notes say the sweep aborted: they parse, keep the
    // rows printed before the error and say so in the notes.
    const bool aborted = entry.path().filename().string().find("-error-") != std::string::npos;
    CHECK(has_note(log, "table truncated by the error") == aborted);
  }
  CHECK(files == 15);
}

TEST_CASE("perftest: ib_read_bw, MB/sec table, -a sweep") {
  const PerftestLog log = load("perftest-ib_read_bw-ib-qdr40g-cx3-docker-01.txt");
  CHECK(log.tool == "ib_read_bw");  // line 12 "RDMA_Read BW Test"
  CHECK_FALSE(log.latency);
  CHECK_FALSE(log.bidirectional);
  CHECK(log.device == "mlx4_0");       // line 13
  CHECK(log.num_qps == 1);             // line 14
  CHECK(log.connection_type == "RC");  // line 15
  CHECK(log.mtu_bytes == 2048);        // line 18
  CHECK(log.link_type == "IB");        // line 19
  CHECK_FALSE(log.gpu_memory);
  CHECK_FALSE(log.report_gbits);  // line 27 "BW peak[MB/sec]"
  CHECK(log.notes.empty());
  CHECK(log.meta.at("command") == "ib_read_bw -a --iter 50000 <server-ip>");  // line 7
  REQUIRE(log.bw_rows.size() == 23);                                          // lines 28..50
  // line 28: " 2          50000            0.00               9.08           4.757918"
  CHECK(log.bw_rows[0].bytes == 2);
  CHECK(log.bw_rows[0].iterations == 50000);
  CHECK(log.bw_rows[0].bw_peak_Bps == 0.0);
  CHECK(log.bw_rows[0].bw_avg_Bps == Approx(9521070.08));  // 9.08 × 1048576
  CHECK(log.bw_rows[0].msg_rate_Mpps == Approx(4.757918));
  // line 39: " 4096       50000            0.00               3519.76        0.901060"
  CHECK(log.bw_rows[11].bytes == 4096);
  CHECK(log.bw_rows[11].bw_avg_Bps == Approx(3690735861.76));  // 3519.76 × 1048576
  CHECK(log.bw_rows[11].msg_rate_Mpps == Approx(0.901060));
  // line 50: " 8388608    50000            0.00               3666.47        0.000458"
  CHECK(log.bw_rows[22].bytes == 8388608);
  CHECK(log.bw_rows[22].bw_avg_Bps == Approx(3844572446.72));  // 3666.47 × 1048576
}

TEST_CASE("perftest: ib_write_bw --report_gbits, RoCE, 6-decimal first row") {
  const PerftestLog log = load("perftest-ib_write_bw-roce-cx6dx-52g-k8s-nvidia-cns-01.txt");
  CHECK(log.tool == "ib_write_bw");  // line 11 "RDMA_Write BW Test"
  CHECK(log.device == "mlx5_0");     // line 12
  CHECK(log.num_qps == 1);           // line 13
  CHECK(log.connection_type == "RC");
  CHECK(log.mtu_bytes == 1024);        // line 17
  CHECK(log.link_type == "Ethernet");  // line 18
  CHECK(log.report_gbits);             // line 29 "BW peak[Gb/sec]"
  CHECK_FALSE(log.gpu_memory);
  REQUIRE(log.bw_rows.size() == 23);
  // line 30: " 2          5000           0.080755            0.073090            4.568094"
  CHECK(log.bw_rows[0].bytes == 2);
  CHECK(log.bw_rows[0].iterations == 5000);
  CHECK(log.bw_rows[0].bw_peak_Bps == Approx(10094375.0));  // 0.080755 × 1.25e8
  CHECK(log.bw_rows[0].bw_avg_Bps == Approx(9136250.0));    // 0.073090 × 1.25e8
  // line 42: " 8192       5000             52.00              51.98  \t\t   0.793178" (tabs)
  CHECK(log.bw_rows[12].bytes == 8192);
  CHECK(log.bw_rows[12].bw_avg_Bps == Approx(6497500000.0));  // 51.98 × 1.25e8
  CHECK(log.bw_rows[12].msg_rate_Mpps == Approx(0.793178));
  // line 52: " 8388608    5000             52.52              52.52  \t\t   0.000783"
  CHECK(log.bw_rows[22].bytes == 8388608);
  CHECK(log.bw_rows[22].bw_peak_Bps == Approx(6565000000.0));  // 52.52 × 1.25e8
  CHECK(log.bw_rows[22].bw_avg_Bps == Approx(6565000000.0));
}

TEST_CASE("perftest: bidirectional ib_write_bw on ROCm GPU memory") {
  const PerftestLog log = load("perftest-ib_write_bw-bidir-roce-rocm-gpu-amd-docs-01.txt");
  CHECK(log.tool == "ib_write_bw");  // line 11 "RDMA_Write Bidirectional BW Test"
  CHECK(log.bidirectional);
  CHECK(log.gpu_memory);                // line 9 "-use_rocm=0"
  CHECK(log.device == "<RDMA-NIC-2>");  // line 12
  CHECK(log.link_type == "Ethernet");   // line 20
  CHECK(log.mtu_bytes == 4096);         // line 19
  CHECK(log.report_gbits);
  REQUIRE(log.bw_rows.size() == 23);
  // line 32: "2          5000           0.142947            0.012281            0.767588"
  CHECK(log.bw_rows[0].bw_peak_Bps == Approx(17868375.0));  // 0.142947 × 1.25e8
  CHECK(log.bw_rows[0].bw_avg_Bps == Approx(1535125.0));    // 0.012281 × 1.25e8
  // line 47: "65536      5000             204.12             203.85             0.388818"
  CHECK(log.bw_rows[15].bytes == 65536);
  CHECK(log.bw_rows[15].bw_avg_Bps == Approx(25481250000.0));  // 203.85 × 1.25e8
  // line 54: "8388608    5000             204.59             204.59             0.003049"
  CHECK(log.bw_rows[22].bytes == 8388608);
  CHECK(log.bw_rows[22].bw_avg_Bps == Approx(25573750000.0));  // 204.59 × 1.25e8 (both ways)
  CHECK(log.bw_rows[22].msg_rate_Mpps == Approx(0.003049));
}

TEST_CASE("perftest: ib_send_bw over UD") {
  const PerftestLog log = load("perftest-ib_send_bw-ud-ib-qdr40g-cx2-01.txt");
  CHECK(log.tool == "ib_send_bw");     // line 13 "Send BW Test"
  CHECK(log.connection_type == "UD");  // line 16
  CHECK(log.mtu_bytes == 4096);        // line 19
  CHECK(log.link_type == "IB");        // line 20
  CHECK_FALSE(log.report_gbits);
  REQUIRE(log.bw_rows.size() == 12);  // lines 29..40
  // line 29: " 2          1000             7.29               6.79           3.560575"
  CHECK(log.bw_rows[0].iterations == 1000);
  CHECK(log.bw_rows[0].bw_peak_Bps == Approx(7644119.04));  // 7.29 × 1048576
  CHECK(log.bw_rows[0].bw_avg_Bps == Approx(7119831.04));   // 6.79 × 1048576
  // line 36: " 256        1000             1139.94            1022.73        4.189109"
  CHECK(log.bw_rows[7].bytes == 256);
  CHECK(log.bw_rows[7].bw_avg_Bps == Approx(1072410132.48));  // 1022.73 × 1048576
  // line 40: " 4096       1000             3019.29            3018.58        0.772757"
  CHECK(log.bw_rows[11].bytes == 4096);
  CHECK(log.bw_rows[11].bw_avg_Bps == Approx(3165210542.08));  // 3018.58 × 1048576
}

TEST_CASE("perftest: ib_write_bw GPUDirect with 2 QPs and tab-separated rows") {
  const PerftestLog log = load("perftest-ib_write_bw-ib-100g-a100-gpudirect-k8s-t9k-01.txt");
  CHECK(log.tool == "ib_write_bw");
  CHECK(log.num_qps == 2);  // line 22 " Number of qps   : 2\t\tTransport type : IB"
  CHECK(log.gpu_memory);    // line 9 "--use_cuda 0", line 10 "initializing CUDA"
  CHECK(log.link_type == "IB");
  REQUIRE(log.bw_rows.size() == 23);
  // line 40: " 2          10000           0.061867            0.060962            3.810117"
  CHECK(log.bw_rows[0].bw_avg_Bps == Approx(7620250.0));  // 0.060962 × 1.25e8
  // line 51: " 4096       10000            80.53              74.83  \t\t   2.283757"
  CHECK(log.bw_rows[11].bytes == 4096);
  CHECK(log.bw_rows[11].bw_avg_Bps == Approx(9353750000.0));  // 74.83 × 1.25e8
  // line 62: " 8388608    10000            81.02              80.96  \t\t   0.001206"
  CHECK(log.bw_rows[22].bw_avg_Bps == Approx(10120000000.0));  // 80.96 × 1.25e8
}

TEST_CASE("perftest: single-size ib_write_bw with a CPU warning inside the table") {
  const PerftestLog log = load("perftest-ib_write_bw-roce100g-cx5-k8s-sriov-01.txt");
  CHECK(log.tool == "ib_write_bw");
  CHECK(log.link_type == "Ethernet");
  REQUIRE(log.bw_rows.size() == 1);
  // line 34: " 65536      5000             11025.44            11024.71                  0.176395"
  CHECK(log.bw_rows[0].bytes == 65536);
  CHECK(log.bw_rows[0].bw_peak_Bps == Approx(11561011773.44));  // 11025.44 × 1048576
  CHECK(log.bw_rows[0].bw_avg_Bps == Approx(11560246312.96));   // 11024.71 × 1048576
  CHECK(log.bw_rows[0].msg_rate_Mpps == Approx(0.176395));
  CHECK(has_note(log, "line 33: perftest warning: Conflicting CPU frequency"));
  CHECK(log.meta.at("mode") ==
        "SR-IOV VF per pod (sriov-cni + k8s-rdma-sriov-dev-plugin, "
        "resource rdma/vhca)");  // line 7
}

TEST_CASE("perftest: an aborted sweep keeps its rows and reports the error") {
  const PerftestLog log = load("perftest-ib_write_bw-roce400g-cx7-gcp-a3ultra-error-01.txt");
  CHECK(log.tool == "ib_write_bw");
  CHECK(log.device == "mlx5_3");      // line 15
  REQUIRE(log.bw_rows.size() == 16);  // lines 36..51; the run fails at line 52
  // line 51: " 65536      5000             381.50             381.41               0.727473"
  CHECK(log.bw_rows[15].bytes == 65536);
  CHECK(log.bw_rows[15].bw_avg_Bps == Approx(47676250000.0));  // 381.41 × 1.25e8
  CHECK(has_note(log, "line 52: Completion with error at client"));
  CHECK(has_note(log, "line 53: Failed status 10"));
  CHECK(has_note(log, "line 55: Failed to complete run_iter_bw"));
  CHECK(has_note(log, "line 35: table truncated by the error at line 52"));
  // two "## notes:" lines (8 and 9) joined
  const std::string& notes = log.meta.at("notes");
  CHECK(notes.find(" | pod names -> pod1/pod2") != std::string::npos);
}

TEST_CASE("perftest: a table without its closing dashed line is kept with a note") {
  // the post ends at line 50 with the last row (its ## notes say so)
  const PerftestLog log = load("perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt");
  REQUIRE(log.bw_rows.size() == 23);
  // line 50: " 8388608    50000            0.00               3662.02              0.000458"
  CHECK(log.bw_rows[22].bytes == 8388608);
  CHECK(log.bw_rows[22].bw_avg_Bps == Approx(3662.02 * 1048576.0));
  CHECK(has_note(log, "line 27: table has no closing dashed line"));
}

TEST_CASE("perftest: ib_write_lat with every latency column") {
  const PerftestLog log = load("perftest-ib_write_lat-ib-qdr40g-cx3-docker-01.txt");
  CHECK(log.tool == "ib_write_lat");  // line 12 "RDMA_Write Latency Test"
  CHECK(log.latency);
  CHECK(log.bw_rows.empty());
  CHECK(log.mtu_bytes == 2048);        // line 17
  CHECK(log.link_type == "IB");        // line 18
  REQUIRE(log.lat_rows.size() == 23);  // lines 27..49
  // line 27: " 2  20000  0.88  6.84  0.98  1.03  0.20  1.21  5.42" (trailing spaces)
  const PerftestLatRow& a = log.lat_rows[0];
  CHECK(a.bytes == 2);
  CHECK(a.iterations == 20000);
  CHECK(a.t_min_us == Approx(0.88));
  CHECK(a.t_max_us == Approx(6.84));
  CHECK(a.t_typical_us == Approx(0.98));
  CHECK(a.t_avg_us == Approx(1.03));
  CHECK(a.t_stdev_us == Approx(0.20));
  CHECK(a.p99_us == Approx(1.21));
  CHECK(a.p99_9_us == Approx(5.42));
  // line 38: " 4096    20000  3.56  49.03  3.74  3.80  0.29  4.16  8.70"
  CHECK(log.lat_rows[11].bytes == 4096);
  CHECK(log.lat_rows[11].t_max_us == Approx(49.03));
  CHECK(log.lat_rows[11].p99_9_us == Approx(8.70));
  // line 49: " 8388608 20000  2296.01  2345.48  2302.01  2304.98  6.43  2327.01  2335.48"
  const PerftestLatRow& z = log.lat_rows[22];
  CHECK(z.bytes == 8388608);
  CHECK(z.t_typical_us == Approx(2302.01));
  CHECK(z.t_avg_us == Approx(2304.98));
  CHECK(z.p99_us == Approx(2327.01));
}

TEST_CASE("perftest: ib_read_lat single row amid CPU-frequency warnings") {
  const PerftestLog log = load("perftest-ib_read_lat-roce-cx5-k8s-macvlan-01.txt");
  CHECK(log.tool == "ib_read_lat");  // line 12
  CHECK(log.latency);
  CHECK(log.device == "mlx5_0");
  CHECK(log.link_type == "Ethernet");
  CHECK(log.mtu_bytes == 1024);
  REQUIRE(log.lat_rows.size() == 1);
  // line 32: " 2       1000          6.88           16.81        7.04              7.06  0.31  7.38
  // 16.81"
  CHECK(log.lat_rows[0].t_min_us == Approx(6.88));
  CHECK(log.lat_rows[0].t_typical_us == Approx(7.04));
  CHECK(log.lat_rows[0].t_stdev_us == Approx(0.31));
  CHECK(log.lat_rows[0].p99_9_us == Approx(16.81));
  CHECK(has_note(log, "line 30: perftest warning"));
  CHECK(has_note(log, "line 31: perftest warning"));
}

TEST_CASE("perftest: old three-column ib_read_lat that aborts, missing columns are NaN") {
  const PerftestLog log = load("perftest-ib_read_lat-ib-fdr56g-cx3-error-01.txt");
  CHECK(log.tool == "ib_read_lat");
  CHECK(log.device == "mlx4_0");
  REQUIRE(log.lat_rows.size() == 12);  // lines 26..37, then the error at line 38
  // line 26: " 2       1000          2.29           15.78        2.34"
  CHECK(log.lat_rows[0].t_min_us == Approx(2.29));
  CHECK(log.lat_rows[0].t_max_us == Approx(15.78));
  CHECK(log.lat_rows[0].t_typical_us == Approx(2.34));
  CHECK(std::isnan(log.lat_rows[0].t_avg_us));
  CHECK(std::isnan(log.lat_rows[0].t_stdev_us));
  CHECK(std::isnan(log.lat_rows[0].p99_us));
  CHECK(std::isnan(log.lat_rows[0].p99_9_us));
  // line 37: " 4096    1000          4.07           8.42         4.13"
  CHECK(log.lat_rows[11].bytes == 4096);
  CHECK(log.lat_rows[11].t_typical_us == Approx(4.13));
  CHECK(has_note(log, "line 38: Completion with error at client"));
}

TEST_CASE("perftest: empty and binary input") {
  std::string msg;
  CHECK(error_line([] { parse_perftest("", "empty.txt"); }, &msg) == 0);
  CHECK(msg.find("empty") != std::string::npos);
  CHECK(error_line([] { parse_perftest(" \n\n\t\n", "blank.txt"); }) == 0);
  const std::string nul("ib_write_bw\nabc\n\x01\x02\0\x03", 20);
  CHECK(error_line([&] { parse_perftest(nul, "nul.bin"); }, &msg) == 3);
  CHECK(msg.find("binary") != std::string::npos);
  std::string noise(200, '\x01');
  CHECK(error_line([&] { parse_perftest(noise, "ctrl.bin"); }) == 0);
  CHECK(error_line([] { parse_perftest_file("/nonexistent/perftest.txt"); }) == 0);
  try {
    parse_perftest("", "x.txt");
  } catch (const ParseError& e) {
    CHECK(std::string(e.what()) == "x.txt:0: " + e.message);
  }
}

TEST_CASE("perftest: a truncated table throws at the header or the cut row") {
  const std::string name = "perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt";
  std::string msg;
  // cut right after the header (line 27): a table with no rows
  CHECK(error_line([&] { parse_perftest(first_lines(name, 27), name); }, &msg) == 27);
  CHECK(msg.find("no rows") != std::string::npos);
  // cut in the middle of line 32 " 32         50000            0.00               166.62 …"
  const std::string cut = first_lines(name, 31) + " 32         50000            0.00";
  CHECK(error_line([&] { parse_perftest(cut, name); }, &msg) == 32);
  CHECK(msg.find("row has 3 fields") != std::string::npos);
}

TEST_CASE("perftest: a row with a missing column throws naming its line") {
  const std::string name = "perftest-ib_read_lat-roce-cx5-k8s-macvlan-01.txt";
  std::string text = read_text(kDir / name);
  // line 32 loses its last column (99.9% percentile "16.81")
  const std::string row =
      " 2       1000          6.88           16.81        7.04              "
      "7.06         0.31      7.38        16.81";
  const size_t at = text.find(row);
  REQUIRE(at != std::string::npos);
  text.replace(at, row.size(), row.substr(0, row.size() - 5));
  std::string msg;
  CHECK(error_line([&] { parse_perftest(text, name); }, &msg) == 32);
  CHECK(msg.find("8 fields") != std::string::npos);
  CHECK(msg.find("9 columns") != std::string::npos);
  // a non-number field
  text = first_lines(name, 29) + " 2       1000   6.88  16.81  7.04  7.06  0.31  7.38  x\n";
  CHECK(error_line([&] { parse_perftest(text, name); }, &msg) == 30);
  CHECK(msg.find("'x'") != std::string::npos);
}

TEST_CASE("perftest: an nccl-tests log is not perftest output") {
  const auto path = std::filesystem::path(FABRICSIM_SOURCE_DIR) / "tests" / "data" / "nccl" /
                    "nccl-allreduce-h100-2node-8hca-01.txt";
  std::string msg;
  CHECK(error_line([&] { parse_perftest_file(path.string()); }, &msg) == 0);
  CHECK(msg.find("no perftest result table found") != std::string::npos);
  CHECK(msg.find("nccl-tests") != std::string::npos);
}

TEST_CASE("perftest: a failed connection without a table throws at the error line") {
  const std::string text =
      "$ ib_write_bw 10.0.0.1\n"
      "---------------------------------------------------------------------------------------\n"
      "                    RDMA_Write BW Test\n"
      "Couldn't connect to 10.0.0.1:18515\n"
      "Unable to open file descriptor for socket connection Unable to init the socket "
      "connection\n";
  std::string msg;
  CHECK(error_line([&] { parse_perftest(text, "conn.txt"); }, &msg) == 4);
  CHECK(msg.find("Couldn't connect") != std::string::npos);
}

TEST_CASE("perftest: unknown header column and title/table mismatch throw at the header") {
  const std::string dash(87, '-');
  std::string msg;
  const std::string unknown =
      " #bytes     #iterations    BW peak[KB/sec]    BW average[KB/sec]\n"
      " 2 1000 1.0 1.0\n";
  CHECK(error_line([&] { parse_perftest("x\n" + unknown, "u.txt"); }, &msg) == 2);
  CHECK(msg.find("unknown column 'BW'") != std::string::npos);
  const std::string mismatch = "                    RDMA_Write Latency Test\n" + dash +
                               "\n #bytes     #iterations    BW peak[MB/sec]    "
                               "BW average[MB/sec]   MsgRate[Mpps]\n 2 5000 1.00 1.00 0.5\n" +
                               dash + "\n";
  CHECK(error_line([&] { parse_perftest(mismatch, "m.txt"); }, &msg) == 3);
}

TEST_CASE("perftest: variants from perftest_parameters.h: QoS, per-port, duration, CRLF") {
  const std::string dash(87, '-');
  // RESULT_FMT_QOS with CRLF line ends and a colour escape on the title
  const std::string qos = "\x1b[1m Send BW Test\x1b[0m\r\n" + dash +
                          "\r\n #bytes    #sl      #iterations    BW peak[Gb/sec]    "
                          "BW average[Gb/sec]   MsgRate[Mpps]\r\n"
                          " 65536    3           5000           90.00            89.00"
                          "                  0.169754\r\n" +
                          dash + "\r\n";
  const PerftestLog q = parse_perftest(qos, "qos.txt");
  CHECK(q.tool == "ib_send_bw");
  REQUIRE(q.bw_rows.size() == 1);
  CHECK(q.bw_rows[0].iterations == 5000);
  CHECK(q.bw_rows[0].bw_avg_Bps == Approx(89.0 * 1.25e8));
  // RESULT_FMT_PER_PORT (9 columns), MB/sec; tool from the command line
  const std::string per_port =
      "$ ib_write_bw -O 10.0.0.1\n #bytes     #iterations    BW peak[MB/sec]    "
      "BW average[MB/sec]   MsgRate[Mpps]   BW Port1[MB/sec]   MsgRate Port1[Mpps]   "
      "BW Port2[MB/sec]   MsgRate Port2[Mpps]\n"
      " 65536      5000           100.00            90.00\t\t   0.001440        45.00  "
      "0.000720  45.00  0.000720\n";
  const PerftestLog p = parse_perftest(per_port, "pp.txt");
  CHECK(p.tool == "ib_write_bw");
  CHECK_FALSE(p.bidirectional);
  // no title: -b on the command line marks a bidirectional run
  const PerftestLog b =
      parse_perftest("# ib_read_bw -b -a 10.0.0.1\n" + per_port.substr(25), "b.txt");
  CHECK(b.tool == "ib_read_bw");
  CHECK(b.bidirectional);
  REQUIRE(p.bw_rows.size() == 1);
  CHECK(p.bw_rows[0].bw_avg_Bps == Approx(90.0 * 1048576.0));
  CHECK(p.bw_rows[0].msg_rate_Mpps == Approx(0.001440));
  // RESULT_FMT_LAT_DUR (-D): only t_avg; tool from the ## header
  const std::string dur =
      "## tool: perftest ib_send_lat -D 5\n #bytes        #iterations       t_avg[usec]    "
      "tps average\n 2             2845000           0.88           1137000.00\n" +
      dash + "\n";
  const PerftestLog d = parse_perftest(dur, "dur.txt");
  CHECK(d.tool == "ib_send_lat");
  CHECK(d.latency);
  REQUIRE(d.lat_rows.size() == 1);
  CHECK(d.lat_rows[0].t_avg_us == Approx(0.88));
  CHECK(std::isnan(d.lat_rows[0].t_min_us));
  // two tables (a loop over sizes) are concatenated
  const std::string header =
      " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n";
  const std::string two = header + " 4096 5000 100.00 99.00 0.025\n" + dash + "\n" + header +
                          " 8192 5000 200.00 199.00 0.025\n" + dash + "\n";
  const PerftestLog t = parse_perftest(two, "two.txt");
  REQUIRE(t.bw_rows.size() == 2);
  CHECK(t.bw_rows[1].bytes == 8192);
  CHECK(has_note(t, "line 4: another result table"));
}

// ---------------------------------------------------------------------------------------------
// Plausibility (calibration/log_checks.hpp): a row's numbers agree the way perftest computes them.

namespace {

/// The ib_write_bw log cut after its table header (line 27), then `rows`.
std::string bw_log(const std::string& rows) {
  return first_lines("perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt", 27) + rows;
}

/// The ib_write_lat log cut after its table header (line 26), then `rows`.
std::string lat_log(const std::string& rows) {
  return first_lines("perftest-ib_write_lat-ib-qdr40g-cx3-docker-01.txt", 26) + rows;
}

}  // namespace

TEST_CASE("perftest: MsgRate must be BW average / size within the printed rounding") {
  // 41.68 MB/sec of 8-byte messages: 41.68 x 1048576 / 8 / 1e6 = 5.46308 Mpps, and BW average
  // was in [41.675, 41.685): MsgRate in [5.46243, 5.46374] before its 6 decimals.
  std::string msg;
  CHECK(parse_perftest(bw_log(" 8   50000   0.00   41.68   5.462932\n"), "t.txt").bw_rows.size() ==
        1);
  CHECK(parse_perftest(bw_log(" 8   50000   0.00   41.68   5.463700\n"), "t.txt").bw_rows.size() ==
        1);
  CHECK(
      error_line([] { parse_perftest(bw_log(" 8   50000   0.00   41.68   5.463800\n"), "t.txt"); },
                 &msg) == 28);
  CHECK(msg.rfind("MsgRate 5.463800 Mpps, but BW average 41.68 of 8-byte messages is 5.46308", 0) ==
        0);
  CHECK(error_line([] {
          parse_perftest(bw_log(" 8   50000   0.00   41.68   5.462000\n"), "t.txt");
        }) == 28);
}

TEST_CASE("perftest: latencies of one sample set must be in order and at most an hour") {
  std::string msg;
  const std::string ok = " 8  20000  0.89  9.06  0.99  1.04  0.25  1.22  6.05\n";
  CHECK(parse_perftest(lat_log(ok), "t.txt").lat_rows.size() == 1);
  // Two values 0.01 apart the wrong way can be rounding (t_min 1.00 over t_typical 0.99); 0.02
  // cannot.
  CHECK(parse_perftest(lat_log(" 8  20000  1.00  9.06  0.99  1.04  0.25  1.22  6.05\n"), "t.txt")
            .lat_rows.size() == 1);
  CHECK(error_line(
            [] {
              parse_perftest(lat_log(" 8  20000  1.01  9.06  0.99  1.04  0.25  1.22  6.05\n"),
                             "t.txt");
            },
            &msg) == 27);
  CHECK(msg ==
        "t_min 1.01 us is above t_typical 0.99 us; perftest computes both from the same samples, "
        "so t_min <= t_typical: the row was edited or its columns are shifted");
  // the 99.9th percentile above t_max
  CHECK(error_line(
            [] {
              parse_perftest(lat_log(" 8  20000  0.89  9.06  0.99  1.04  0.25  1.22  9.08\n"),
                             "t.txt");
            },
            &msg) == 27);
  CHECK(msg.rfind("99.9% percentile 9.08 us is above t_max 9.06 us", 0) == 0);
  CHECK(error_line(
            [] {
              parse_perftest(lat_log(" 8  20000  0.89  1e308  0.99  1.04  0.25  1.22  6.05\n"),
                             "t.txt");
            },
            &msg) == 27);
  CHECK(msg.rfind("t_max 1e+308 us is more than an hour for one message", 0) == 0);
}

TEST_CASE("perftest: a table row that does not parse is reported at its line, not skipped") {
  std::string msg;
  // a full-width digit for the size
  CHECK(
      error_line([] { parse_perftest(bw_log(" ８   50000   0.00   41.68   5.462932\n"), "t.txt"); },
                 &msg) == 28);
  CHECK(msg ==
        "field 1 '８' is not a positive integer (non-ASCII characters; expected ASCII "
        "digits 0-9)");
  // columns out of order: the row starts with a bandwidth
  CHECK(
      error_line([] { parse_perftest(bw_log(" 0.000   50000   8   41.68   5.462932\n"), "t.txt"); },
                 &msg) == 28);
  CHECK(msg == "field 1 '0.000' is not a positive integer");
  // a size that is not a number in a row of the table's width
  CHECK(
      error_line([] { parse_perftest(bw_log(" 8B   50000   0.00   41.68   5.462932\n"), "t.txt"); },
                 &msg) == 28);
  CHECK(msg == "field 1 '8B' is not a positive integer");
  // noise of another width is still skipped
  CHECK(parse_perftest(bw_log(" Conflicting CPU frequency values detected: 1200.000 != 3400.000\n"
                              " 8   50000   0.00   41.68   5.462932\n"),
                       "t.txt")
            .bw_rows.size() == 1);
}
