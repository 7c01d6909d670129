// A real perftest log beside the simulated perftest run (scenario `measured.perftest`,
// sim/run/measured_perftest.cpp): the error of each size is (simulated - measured) / measured,
// the measured value as the log prints it (its BW average in its unit, its t_typical), the
// simulated one as the run's own perftest table prints it; results.json carries the rows. The
// scenarios are bench/validation/perftest/'s, one per real log in tests/data/perftest/.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration/perftest.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {
namespace {

const std::string kSource = FABRICSIM_SOURCE_DIR;
const std::string kBench = kSource + "/bench/validation/perftest/";

/// Runs the bench scenario `name` with `sets`.
RunReport run_bench(const std::string& name, std::vector<std::string> sets) {
  RunOptions opts;
  opts.scenario_path = kBench + name;
  opts.sets = std::move(sets);
  Scenario sc = load(opts);
  const Prepared prepared = prepare(sc);
  RunReport rep = simulate(sc, prepared, nullptr, false);
  REQUIRE(rep.complete);
  REQUIRE(rep.measured_perftest);
  return rep;
}

}  // namespace

TEST_CASE("perftest BW error is simulated minus measured over measured in the log's MB/sec") {
  // perftest-ib_write_bw-roce100g-cx5-k8s-sriov-01.txt prints one row: 65536 B, BW average
  // 11024.71 MB/sec. The simulated value is the run's own table's BW average.
  const RunReport rep = run_bench("perftest-ib_write_bw-roce100g-cx5-k8s-sriov-01.yaml", {});
  const PerftestLog sim = parse_perftest(rep.perftest, "simulated");
  REQUIRE(sim.bw_rows.size() == 1);
  const double simulated = sim.bw_rows[0].bw_avg_Bps / 1048576.0;  // MB/sec = 2^20 B/s
  const PerftestComparison& m = *rep.measured_perftest;
  CHECK(m.test == "ib_write_bw");
  CHECK(m.metric == "bw_average");
  CHECK(m.unit == "MB/sec");
  REQUIRE(m.rows.size() == 1);
  CHECK(m.rows[0].bytes == 65536);
  CHECK(m.rows[0].measured == Approx(11024.71).epsilon(1e-9));
  CHECK(m.rows[0].simulated == Approx(simulated).margin(0.005));  // the table rounds to 0.01
  CHECK(m.rows[0].error_pct == Approx((simulated - 11024.71) / 11024.71 * 100).margin(1e-4));
  CHECK(m.median_abs_pct_error == Approx(std::abs(m.rows[0].error_pct)));
  CHECK(m.max_abs_pct_error == Approx(std::abs(m.rows[0].error_pct)));
  CHECK(m.max_error_bytes == 65536);
  CHECK(m.only_measured == 0);
  CHECK(m.only_simulated == 0);
  CHECK(m.warnings.empty());
}

TEST_CASE("perftest BW error in the log's Gb/sec skips the sizes the aborted log lacks") {
  // perftest-ib_write_bw-roce400g-cx7-gcp-a3ultra-error-01.txt aborted after 64 KiB; its 64 KiB
  // row: BW average 381.41 Gb/sec (--report_gbits: 1.25e8 B/s). The run's 128 KiB is not in it.
  const RunReport rep =
      run_bench("perftest-ib_write_bw-roce400g-cx7-gcp-a3ultra-error-01.yaml",
                {"perftest.all=false", "perftest.size=65536B", "perftest.iterations=1000"});
  const PerftestLog sim = parse_perftest(rep.perftest, "simulated");
  REQUIRE(sim.bw_rows.size() == 1);
  const double simulated = sim.bw_rows[0].bw_avg_Bps / 1.25e8;
  const PerftestComparison& m = *rep.measured_perftest;
  CHECK(m.unit == "Gb/sec");
  REQUIRE(m.rows.size() == 1);
  CHECK(m.rows[0].measured == Approx(381.41).epsilon(1e-9));
  CHECK(m.rows[0].error_pct == Approx((simulated - 381.41) / 381.41 * 100).margin(2e-3));
  CHECK(m.only_measured == 15);  // 2 B .. 32 KiB of the log's 16 rows
  CHECK(m.only_simulated == 0);
  const RunReport more =
      run_bench("perftest-ib_write_bw-roce400g-cx7-gcp-a3ultra-error-01.yaml",
                {"perftest.all=false", "perftest.size=131072B", "perftest.iterations=300"});
  CHECK(more.measured_perftest->rows.empty());
  CHECK(more.measured_perftest->only_simulated == 1);
  CHECK(more.measured_perftest->median_abs_pct_error == -1);
}

TEST_CASE("perftest latency error is on t_typical in usec") {
  // perftest-ib_write_lat-ib-qdr40g-cx3-docker-01.txt, 2 B: t_typical 0.98 us; 4 KiB: 3.74 us.
  for (const auto& [bytes, measured] : {std::pair<int64_t, double>{2, 0.98}, {4096, 3.74}}) {
    const RunReport rep =
        run_bench("perftest-ib_write_lat-ib-qdr40g-cx3-docker-01.yaml",
                  {"perftest.all=false", "perftest.size=" + std::to_string(bytes) + "B",
                   "perftest.iterations=50"});
    const PerftestLog sim = parse_perftest(rep.perftest, "simulated");
    REQUIRE(sim.lat_rows.size() == 1);
    const double simulated = sim.lat_rows[0].t_typical_us;
    const PerftestComparison& m = *rep.measured_perftest;
    INFO(bytes << " B");
    CHECK(m.metric == "t_typical");
    CHECK(m.unit == "usec");
    REQUIRE(m.rows.size() == 1);
    CHECK(m.rows[0].bytes == bytes);
    CHECK(m.rows[0].measured == Approx(measured).epsilon(1e-9));
    CHECK(m.rows[0].simulated == Approx(simulated).margin(0.005));
    CHECK(m.rows[0].error_pct == Approx((simulated - measured) / measured * 100).margin(0.6));
    CHECK(m.only_measured == 22);
  }
}

TEST_CASE("a log run on GPU memory or over UD is compared with a warning") {
  const RunReport gpu =
      run_bench("perftest-ib_write_bw-ib-100g-a100-gpudirect-k8s-t9k-01.yaml",
                {"perftest.all=false", "perftest.size=65536B", "perftest.iterations=300"});
  REQUIRE(gpu.measured_perftest->warnings.size() == 1);
  CHECK(gpu.measured_perftest->warnings[0].find("GPU memory") != std::string::npos);
  const RunReport ud = run_bench("perftest-ib_send_bw-ud-ib-qdr40g-cx2-01.yaml",
                                 {"perftest.all=false", "perftest.size=4096B"});
  REQUIRE(ud.measured_perftest->warnings.size() == 1);
  CHECK(ud.measured_perftest->warnings[0].find("UD connection") != std::string::npos);
  REQUIRE(ud.measured_perftest->rows.size() == 1);
  CHECK(ud.measured_perftest->rows[0].measured == Approx(3018.58).epsilon(1e-9));
}

TEST_CASE("run --out writes measured.perftest in results.json beside what it prints") {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / "fabricsim_test_measured_perftest";
  std::filesystem::remove_all(out);
  const std::string cmd = "cd " + kSource + " && " + FABRICSIM_BINARY +
                          " run bench/validation/perftest/"
                          "perftest-ib_read_lat-ib-fdr56g-cx3-error-01.yaml"
                          " --set perftest.all=false --set perftest.size=4096B --out " +
                          out.string() + " > " + (out.string() + ".txt");
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(out / "results.json");
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(in);
  REQUIRE(j.contains("measured"));
  CHECK_FALSE(j["measured"].contains("nccl_tests"));  // no nccl-tests log named
  const auto& m = j["measured"]["perftest"];
  CHECK(m["path"] ==
        "../../../tests/data/perftest/perftest-ib_read_lat-ib-fdr56g-cx3-error-01.txt");
  CHECK(m["test"] == "ib_read_lat");
  CHECK(m["metric"] == "t_typical");
  CHECK(m["unit"] == "usec");
  CHECK(m["sizes_only_measured"] == 11);  // the log's 2 B .. 2 KiB
  REQUIRE(m["rows"].size() == 1);
  const auto& row = m["rows"][0];
  CHECK(row["bytes"] == 4096);
  CHECK(row["measured"].get<double>() == Approx(4.13).epsilon(1e-9));  // the log's t_typical
  const double sim = row["simulated"].get<double>(), err = row["error_pct"].get<double>();
  CHECK(err == Approx((sim - 4.13) / 4.13 * 100).epsilon(1e-12));
  CHECK(m["median_abs_pct_error"].get<double>() == Approx(std::abs(err)));
  CHECK(m["max_abs_pct_error"].get<double>() == Approx(std::abs(err)));
  CHECK(m["max_error_bytes"] == 4096);
  // The printed comparison says the same.
  std::ifstream printed(out.string() + ".txt");
  const std::string text((std::istreambuf_iterator<char>(printed)), {});
  char worst[96];
  std::snprintf(worst, sizeof worst, "t_typical error over 1 size: median %.1f %%, worst %.1f %%",
                std::abs(err), std::abs(err));
  CHECK(text.find(worst) != std::string::npos);
  CHECK(text.find("skipped: 11 sizes only the log has, 0 only the run has") != std::string::npos);
  std::filesystem::remove_all(out);
  std::filesystem::remove(out.string() + ".txt");
}

TEST_CASE("every real perftest log has a validation scenario comparing it with its own run") {
  // bench/validation/perftest/NAME.yaml names tests/data/perftest/NAME.txt, and every log there
  // with rows (all of them parse: an aborted run keeps its rows) has one.
  std::vector<std::string> logs;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/tests/data/perftest")) {
    if (e.path().extension() == ".txt") logs.push_back(e.path().stem().string());
  }
  REQUIRE(logs.size() == 15);
  for (const std::string& log : logs) {
    INFO(log);
    const PerftestLog parsed =
        parse_perftest_file(kSource + "/tests/data/perftest/" + log + ".txt");
    CHECK(parsed.bw_rows.size() + parsed.lat_rows.size() > 0);
    RunOptions opts;
    opts.scenario_path = kBench + log + ".yaml";
    REQUIRE(std::filesystem::exists(opts.scenario_path));
    Scenario sc = load(opts);
    CHECK(sc.measured_perftest == "../../../tests/data/perftest/" + log + ".txt");
    const Prepared prepared = prepare(sc);  // the log is the scenario's test
    REQUIRE(prepared.measured_perftest);
    CHECK(prepared.measured_perftest->tool == sc.perftest.test);
  }
}

}  // namespace fabricsim
