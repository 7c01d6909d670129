// Calibration fits (calibration/calibrate.hpp) on the real logs in tests/data/: the fitted link
// bandwidth equals the plateau the log prints, every log's fit is plausible for the hardware
// its `##` header names, and the health hints fire where the header's notes say the run was
// unhealthy (and not where it was healthy).
#include <catch2/catch.hpp>

#include <filesystem>

#include "calibration/calibrate.hpp"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) {
  return std::string(FABRICSIM_SOURCE_DIR) + "/tests/data/" + name;
}

}  // namespace

TEST_CASE("perftest BW fits: the bandwidth is the plateau the log prints") {
  struct Case {
    const char* file;
    double plateau_Gbps;  // read from the log's largest rows (BW average column)
  };
  const Case cases[] = {
      // Gb/sec table, rows 64 KiB .. 8 MiB: 140.88 140.95 140.81 140.63 140.29 140.27 140.34
      // 140.40 → mean 140.57.
      {"perftest/perftest-ib_write_bw-roce400g-cx7-h200-gpudirect-dmabuf-gcp-a3ultra-01.txt",
       140.57},
      // Gb/sec table, rows 512 KiB .. 8 MiB: 80.98 80.94 80.96 80.97 80.96.
      {"perftest/perftest-ib_write_bw-ib-100g-a100-gpudirect-k8s-t9k-01.txt", 80.96},
      // MB/sec table (2^20 B/s), rows 1 .. 8 MiB: 3662.96 3662.97 3662.12 3662.02 MB/sec
      // = 3662.5 × 1048576 × 8 / 1e9 = 30.72 Gb/s.
      {"perftest/perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt", 3662.5 * 1048576 * 8 / 1e9},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    const PerftestLog log = parse_perftest_file(data(c.file));
    const PerftestBwFit f = fit_perftest_bw(log);
    CHECK(f.bandwidth_Gbps.value == Approx(c.plateau_Gbps).epsilon(0.015));
    CHECK(f.bandwidth_Gbps.ci95 < 0.05 * f.bandwidth_Gbps.value);
    CHECK(f.overhead_ns.value > 0);
    CHECK(f.r2 > 0.98);
  }
}

TEST_CASE("perftest: every BW log's fit is plausible for the link its header names") {
  int fitted = 0;
  for (const auto& entry : fs::directory_iterator(data("perftest"))) {
    PerftestLog log;
    try {
      log = parse_perftest_file(entry.path().string());
    } catch (const ParseError&) {
      continue;  // error logs without a table: the parser's tests pin them
    }
    if (log.latency) {
      const PerftestLatFit f = fit_perftest_lat(log);
      CHECK(f.base_latency_us > 0.3);  // no RDMA round trip is under 300 ns
      CHECK(f.base_latency_us < 50);
      continue;
    }
    INFO(entry.path().filename().string());
    const PerftestBwFit f = fit_perftest_bw(log);
    ++fitted;
    const auto nominal = nominal_rate_Gbps(log.meta);
    const auto hints = health_hints(log, f, nominal);
    const bool undetermined =
        !hints.empty() && hints.front().message.find("plateau") != std::string::npos;
    if (nominal && !undetermined) {
      // A link cannot carry more than its data rate (+5 % for header rounding).
      CHECK(f.line_rate_Gbps <= 1.05 * *nominal);
    }
  }
  CHECK(fitted >= 8);
}

TEST_CASE("perftest hints: GPU memory at 36 % of 400G flagged, QDR's 8b/10b not mistaken for it") {
  const PerftestLog gpu = parse_perftest_file(
      data("perftest/perftest-ib_write_bw-roce400g-cx7-h200-gpudirect-dmabuf-gcp-a3ultra-01.txt"));
  const auto h = health_hints(gpu, fit_perftest_bw(gpu), nominal_rate_Gbps(gpu.meta));
  REQUIRE(h.size() == 1);  // the ## notes: "only ~35% of the 400G port ... LOW/problematic"
  CHECK(h[0].message.find("of the 400 Gb/s") != std::string::npos);
  // QDR: "40 Gb/s (32 Gb/s data rate)"; 30.7 Gb/s of payload is healthy.
  const PerftestLog qdr =
      parse_perftest_file(data("perftest/perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt"));
  CHECK(*nominal_rate_Gbps(qdr.meta) == Approx(32));
  CHECK(health_hints(qdr, fit_perftest_bw(qdr), nominal_rate_Gbps(qdr.meta)).empty());
  CHECK(*nominal_rate_Gbps({{"hardware", "8 x ConnectX-7 400 Gb/s RoCE"}}) == 400);
  CHECK(*nominal_rate_Gbps({{"fabric", "InfiniBand HDR"}}) == 200);
  CHECK_FALSE(nominal_rate_Gbps({{"hardware", "NVIDIA A100-SXM4-80GB"}}).has_value());
}

TEST_CASE("nccl-tests fits: the asymptote is the busbw the log reaches, held-out error computed") {
  int fitted = 0;
  for (const auto& entry : fs::directory_iterator(data("nccl"))) {
    NcclLog log;
    try {
      log = parse_nccl_tests_file(entry.path().string());
    } catch (const ParseError&) {
      continue;  // hang / interleaved logs: the parser's tests pin them
    }
    INFO(entry.path().filename().string());
    if (log.collective.empty() || log.rows.size() < 4) continue;
    const NcclFit f = fit_nccl(log);
    ++fitted;
    // The largest size's busbw, as printed, against the fit's value there: the last regime
    // must describe the end of the curve (within 10 %; the logs' own noise and anomalies).
    const NcclFit::Point& last = f.points.back();
    CHECK(last.fitted_busbw_GBps == Approx(last.measured_busbw_GBps).epsilon(0.10));
    CHECK(f.busbw_asymptote_GBps > 0);
    CHECK_FALSE(f.heldout_median_abs_pct_error.has_value());
  }
  CHECK(fitted >= 20);

  // Held out above 64 MiB on the H200 2x1 log: the curve steps up at 64 MiB (20.84 → 29.82
  // GB/s busbw in the log, NCCL changing algorithm or protocol), which sizes below cannot show.
  const NcclLog h200 = parse_nccl_tests_file(
      data("nccl/nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt"));
  const NcclFit held = fit_nccl(h200, 64 << 20);
  REQUIRE(held.heldout_median_abs_pct_error.has_value());
  int heldout = 0;
  for (const auto& p : held.points) heldout += p.heldout;
  CHECK(heldout == 8);                             // 64 MiB .. 8 GiB
  CHECK(*held.heldout_median_abs_pct_error > 20);  // the step is real and unseen
  CHECK(*held.heldout_max_abs_pct_error >= *held.heldout_median_abs_pct_error);
}

TEST_CASE("nccl-tests hints: sockets, GPUDirect off and wrong results are flagged") {
  // The V100 log's NCCL INFO lines say "GPU Direct RDMA Disabled for HCA 0": the hint fires on
  // the real log, and not on the same log with GDR on.
  const NcclLog log =
      parse_nccl_tests_file(data("nccl/nccl-allreduce-v100-2node-roce25g-nogdr-01.txt"));
  const NcclFit fit = fit_nccl(log);
  REQUIRE(log.gdr == 0);
  const auto h = health_hints(log, fit, std::nullopt);
  REQUIRE(h.size() == 1);
  CHECK(h[0].message.find("GPUDirect RDMA is off") != std::string::npos);
  NcclLog healthy = log;
  healthy.gdr = 1;
  CHECK(health_hints(healthy, fit, std::nullopt).empty());
  NcclLog sock = healthy;
  sock.transport = "Socket";
  REQUIRE(health_hints(sock, fit, std::nullopt).size() == 1);
  CHECK(health_hints(sock, fit, std::nullopt)[0].message.find("NET/Socket") != std::string::npos);
  NcclLog wrong = healthy;
  wrong.rows[3].oop_wrong = 5;
  CHECK(health_hints(wrong, fit, std::nullopt).size() == 1);
  // busbw ~1.75 GB/s on a link perftest measured at 3 GB/s (25 Gb/s): under half? no.
  CHECK(health_hints(healthy, fit, 3.0).empty());
  CHECK(health_hints(healthy, fit, 4.0).size() == 1);
  CHECK(abs_pct_errors({{100, 110}, {100, 95}, {50, 50}}) == std::pair<double, double>{5, 10});
  CHECK_THROWS_AS(abs_pct_errors({}), std::invalid_argument);
}
