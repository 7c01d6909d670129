// End-to-end: `fabricsim sweep --jobs N` (points in child processes) and the sweep's plots
// (busbw.gp/.dat/.svg, vs-KEY.gp/.dat/.svg), run as a user runs them. The sweep's table and
// its other behaviour are covered in test_cli_sweep.cpp ("sweep:").
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>
#include "cli_support.hpp"

namespace fs = std::filesystem;

namespace {

using cli_testing::fabricsim_then;
using cli_testing::Result;
using cli_testing::slurp;

fs::path scratch(const std::string& name) {
  return cli_testing::scratch_dir("fabricsim_test_sweep_", name);
}

/// Runs `ENV fabricsim ARGS` from the source directory (ENV: e.g. "env PATH=/nonexistent"),
/// capturing stdout, stderr and the exit code.
Result fabricsim(const std::string& args, const std::string& env = "") {
  return cli_testing::run_fabricsim(scratch("io"), args, env);
}

using cli_testing::cell;
using cli_testing::csv_table;

const std::string kSweepSmall = "tests/data/cli/sweep_small.yaml";

/// "point-003".
std::string point_dir(size_t point) {
  char dir[16];
  std::snprintf(dir, sizeof dir, "point-%03zu", point);
  return dir;
}

/// A point's results.json.
nlohmann::json results(const fs::path& sweep, size_t point) {
  return nlohmann::json::parse(slurp(sweep / point_dir(point) / "results.json"));
}

/// One block of a gnuplot data file: its "# point N: ..." / "# curve: ..." comment and its
/// rows of blank-separated fields.
struct DatBlock {
  std::string title;
  std::vector<std::vector<std::string>> rows;
};

/// The blocks of a gnuplot data file written by fabricsim: separated by two blank lines, each
/// with one title comment; comments before the first block are skipped.
std::vector<DatBlock> dat_blocks(const fs::path& p) {
  std::vector<DatBlock> blocks;
  std::istringstream in(slurp(p));
  std::string line;
  int blanks = 0;
  bool started = false;
  while (std::getline(in, line)) {
    if (line.empty()) {
      ++blanks;
      continue;
    }
    if (blanks >= 2) {
      blocks.emplace_back();
      started = true;
    }
    blanks = 0;
    if (!started) continue;
    if (line[0] == '#') {
      blocks.back().title = line.substr(2);
      continue;
    }
    std::vector<std::string> fields;
    std::istringstream fs_(line);
    for (std::string f; fs_ >> f;) fields.push_back(f);
    blocks.back().rows.push_back(fields);
  }
  return blocks;
}

/// Whether a gnuplot is on this test's PATH (the SVGs are only drawn then).
bool gnuplot_on_path() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/// The 2 x 2 sweep of test_cli_sweep.cpp's first sweep test, with --jobs and --out.
Result sweep_2x2(const std::string& jobs, const fs::path& out) {
  return fabricsim("sweep " + kSweepSmall +
                   " --vary link.host_rate=100Gbps,200Gbps --vary ecn.enabled=false,true"
                   " --set workload.maxbytes=256KiB --jobs " +
                   jobs + " --out " + out.string());
}

}  // namespace

TEST_CASE("sweep --jobs 2 writes the same bytes as --jobs 1, in point order") {
  const fs::path one = scratch("jobs_1"), two = scratch("jobs_2");
  const Result a = sweep_2x2("1", one);
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  const Result b = sweep_2x2("2", two);
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  CHECK(b.err.empty());  // no progress line when stderr is not a terminal
  // The header gives the points and, for more than one --vary, the grid's shape.
  CHECK(b.out.find(": 4 points (2 x 2), seed ") != std::string::npos);
  for (const char* f : {"sweep.csv", "sweep.md", "busbw.gp", "busbw.dat", "vs-link.host_rate.gp",
                        "vs-link.host_rate.dat"}) {
    INFO(f);
    REQUIRE(fs::exists(one / f));
    CHECK(slurp(one / f) == slurp(two / f));
  }
  for (size_t p = 1; p <= 4; ++p) {
    for (const char* f : {"results.json", "ports.csv", "queues.csv", "flows.csv"}) {
      INFO(point_dir(p) << "/" << f);
      REQUIRE(fs::exists(two / point_dir(p) / f));
      CHECK(slurp(one / point_dir(p) / f) == slurp(two / point_dir(p) / f));
    }
  }
  // The table's rows are in point order whatever order the points finished in.
  const auto t = csv_table(two / "sweep.csv");
  REQUIRE(t.size() == 5);
  for (size_t i = 1; i <= 4; ++i) CHECK(cell(t, i, "point") == std::to_string(i));
  // sweep_perf.csv has one row per point, in point order, too.
  const auto perf = csv_table(two / "sweep_perf.csv");
  REQUIRE(perf.size() == 5);
  for (size_t i = 1; i <= 4; ++i) CHECK(perf[i][0] == std::to_string(i));
  if (gnuplot_on_path()) {
    CHECK(fs::exists(two / "busbw.svg"));
    CHECK(fs::exists(two / "vs-link.host_rate.svg"));
    CHECK(
        slurp(two / "sweep.md").find("Plots: busbw.{gp,dat,svg}, vs-link.host_rate.{gp,dat,svg}") !=
        std::string::npos);
  }
}

TEST_CASE("sweep plots: slowdown.dat holds each point's slowdown.csv, drawn per size on log axes") {
  // Background flows, two controls, each point in its own process (--jobs 2): the buckets cross
  // the pipe from the point's process and must arrive as its own slowdown.csv has them.
  const fs::path d = scratch("plots_slowdown");
  const Result r = fabricsim(
      "sweep scenarios/background-websearch.yaml --set background.duration=200us"
      " --vary nic.congestion_control=dcqcn,hpcc --jobs 2 --out " +
      d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto blocks = dat_blocks(d / "slowdown.dat");
  REQUIRE(blocks.size() == 2);
  for (size_t p = 1; p <= 2; ++p) {
    INFO("point " << p);
    const DatBlock& b = blocks[p - 1];
    CHECK(b.title ==
          "point " + std::to_string(p) + ": nic.congestion_control=" + (p == 1 ? "dcqcn" : "hpcc"));
    // slowdown.csv: above_bytes,max_bytes,flows,p50,p95,p99,mean per non-empty bucket, then
    // `all`. The plot puts a bucket at its upper edge (the last, open one at 3 x its lower edge).
    std::istringstream csv(slurp(d / point_dir(p) / "slowdown.csv"));
    std::string line;
    std::getline(csv, line);  // header
    size_t k = 0;
    while (std::getline(csv, line) && line.rfind("all,", 0) != 0) {
      std::vector<std::string> f;
      std::istringstream cells(line);
      for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
      REQUIRE(k < b.rows.size());
      const std::vector<std::string>& row = b.rows[k++];
      REQUIRE(row.size() == 5);
      const std::string x = f[1].empty() ? std::to_string(3 * std::stoll(f[0])) : f[1];
      CHECK(row[0] == x);
      CHECK(row[1] == f[2]);  // flows
      CHECK(row[2] == f[3]);  // p50, p95, p99 as slowdown.csv prints them
      CHECK(row[3] == f[4]);
      CHECK(row[4] == f[5]);
    }
    CHECK(k == b.rows.size());
    CHECK(k >= 3);
  }
  const std::string gp = slurp(d / "slowdown.gp");
  CHECK(gp.find("set logscale x 10") != std::string::npos);
  CHECK(gp.find("set logscale y 10") != std::string::npos);
  CHECK(gp.find("set multiplot layout 3,1") != std::string::npos);
  CHECK(gp.find("'1MB' 1000000") != std::string::npos);
  for (const char* col : {"3", "4", "5"}) {  // p50, p95, p99: one panel each, both points
    for (const char* i : {"0", "1"}) {
      CHECK(gp.find(std::string("'slowdown.dat' index ") + i + " using 1:" + col + " ") !=
            std::string::npos);
    }
  }
  CHECK(gp.find("title 'nic.congestion_control=hpcc'") != std::string::npos);
  if (gnuplot_on_path()) CHECK(fs::exists(d / "slowdown.svg"));
}

TEST_CASE("sweep plots: busbw.dat holds each completed point's sizes and busbw from results.json") {
  const fs::path d = scratch("plots_busbw");
  const Result r = fabricsim("sweep " + kSweepSmall +
                             " --vary link.host_rate=50Gbps,100Gbps,200Gbps"
                             " --vary ecn.enabled=false,true --jobs 2 --out " +
                             d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto blocks = dat_blocks(d / "busbw.dat");
  REQUIRE(blocks.size() == 6);
  const auto t = csv_table(d / "sweep.csv");
  for (size_t p = 1; p <= 6; ++p) {
    INFO("point " << p);
    const DatBlock& b = blocks[p - 1];
    // Titled by its varied values, as the sweep table gives them.
    CHECK(b.title == "point " + std::to_string(p) +
                         ": link.host_rate=" + cell(t, p, "link.host_rate") +
                         " ecn.enabled=" + cell(t, p, "ecn.enabled"));
    const auto rows = results(d, p)["collectives"];
    REQUIRE(b.rows.size() == rows.size());
    for (size_t k = 0; k < rows.size(); ++k) {
      REQUIRE(b.rows[k].size() == 2);
      CHECK(std::stoll(b.rows[k][0]) == rows[k]["size_bytes"].get<int64_t>());
      CHECK(std::stod(b.rows[k][1]) == rows[k]["busbw_GBps"].get<double>());  // exact
    }
  }
  // busbw.gp plots every block, one curve per point, on log2 sizes labelled 64K ... 4M.
  const std::string gp = slurp(d / "busbw.gp");
  CHECK(gp.find("set logscale x 2") != std::string::npos);
  CHECK(gp.find("'64K' 65536") != std::string::npos);   // sweep_small.yaml: minbytes 64KiB
  CHECK(gp.find("'4M' 4194304") != std::string::npos);  // maxbytes 4MiB
  for (int i = 0; i < 6; ++i) {
    CHECK(gp.find("'busbw.dat' index " + std::to_string(i) + " ") != std::string::npos);
  }
  CHECK(gp.find("'busbw.dat' index 6 ") == std::string::npos);
  CHECK(gp.find("title 'link.host_rate=50Gbps ecn.enabled=false'") != std::string::npos);

  // vs-link.host_rate: one curve per ecn.enabled value, x = each host rate in the --vary order,
  // y = the busbw of the point's largest size in its results.json.
  const auto vs = dat_blocks(d / "vs-link.host_rate.dat");
  REQUIRE(vs.size() == 2);
  CHECK(vs[0].title == "curve: ecn.enabled=false");
  CHECK(vs[1].title == "curve: ecn.enabled=true");
  const std::vector<std::string> rates = {"50Gbps", "100Gbps", "200Gbps"};
  for (const DatBlock& b : vs) {
    REQUIRE(b.rows.size() == rates.size());
    for (size_t k = 0; k < rates.size(); ++k) {
      INFO(b.title << " row " << k);
      REQUIRE(b.rows[k].size() == 4);
      CHECK(std::stod(b.rows[k][0]) == std::stod(rates[k]));  // 50Gbps: 50 (Gb/s)
      CHECK(b.rows[k][3] == "\"" + rates[k] + "\"");
      const size_t point = std::stoul(b.rows[k][2]);
      CHECK(cell(t, point, "link.host_rate") == rates[k]);
      const auto rows = results(d, point)["collectives"];
      const auto largest =
          std::max_element(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
            return x["size_bytes"].template get<int64_t>() <
                   y["size_bytes"].template get<int64_t>();
          });
      CHECK(std::stod(b.rows[k][1]) == (*largest)["busbw_GBps"].get<double>());
    }
  }
  // ecn.enabled (true/false) is not a number: no vs- plot of it.
  for (const char* ext : {".gp", ".dat", ".svg"}) {
    CHECK(!fs::exists(d / (std::string("vs-ecn.enabled") + ext)));
  }
  CHECK(r.out.find("# plots      : ") != std::string::npos);
}

TEST_CASE("sweep plots: a one-size sweep draws busbw.svg as one bar per point") {
  // Every point measures 64 KiB only: curves against size would be a column of dots. Each bar
  // is a point's busbw.dat block at x = its block index, labelled with its varied values.
  const fs::path d = scratch("plots_one_size");
  const Result r = fabricsim("sweep " + kSweepSmall +
                             " --set workload.minbytes=64KiB --set workload.maxbytes=64KiB"
                             " --vary link.host_rate=100Gbps,200Gbps --jobs 2 --out " +
                             d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto blocks = dat_blocks(d / "busbw.dat");
  REQUIRE(blocks.size() == 2);
  for (size_t p = 1; p <= 2; ++p) {
    REQUIRE(blocks[p - 1].rows.size() == 1);
    CHECK(std::stod(blocks[p - 1].rows[0][1]) ==
          results(d, p)["collectives"][0]["busbw_GBps"].get<double>());
  }
  const std::string gp = slurp(d / "busbw.gp");
  CHECK(gp.find("set logscale x") == std::string::npos);
  CHECK(gp.find("busbw at 64K (65536 bytes), one bar per point") != std::string::npos);
  CHECK(gp.find("one bar per completed point\n") != std::string::npos);  // the header comment
  CHECK(gp.find("set xtics ('100Gbps' 0, '200Gbps' 1)") != std::string::npos);
  CHECK(gp.find("set xlabel 'link.host_rate'") != std::string::npos);
  CHECK(gp.find("'busbw.dat' index 0 using (0):2 with boxes") != std::string::npos);
  CHECK(gp.find("'busbw.dat' index 1 using (1):2 with boxes") != std::string::npos);
  if (gnuplot_on_path()) CHECK(fs::exists(d / "busbw.svg"));
}

TEST_CASE("sweep plots: an earlier sweep's plots in the same --out go, its other files stay") {
  // A sweep over seed left vs-seed.{gp,dat,svg}; the next one into the same directory varies
  // another key: the vs-seed plot stayed beside its tables.
  const fs::path d = scratch("stale_plots");
  const auto touch = [&](const std::string& name) { std::ofstream(d / name) << "old\n"; };
  for (const char* f : {"sweep.csv", "vs-seed.gp", "vs-seed.dat", "vs-seed.svg", "step-vs-seed.gp",
                        "notes.txt", "vs-seed.txt"}) {
    touch(f);
  }
  const Result r = fabricsim("sweep " + kSweepSmall +
                             " --vary link.host_rate=100Gbps,200Gbps --set workload.maxbytes=64KiB"
                             " --jobs 1 --out " +
                             d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"vs-seed.gp", "vs-seed.dat", "vs-seed.svg", "step-vs-seed.gp"}) {
    CHECK_FALSE(fs::exists(d / f));
  }
  CHECK(fs::exists(d / "notes.txt"));    // not a plot
  CHECK(fs::exists(d / "vs-seed.txt"));  // not a plot's extension
  CHECK(fs::exists(d / "vs-link.host_rate.gp"));
  CHECK(slurp(d / "sweep.csv") != "old\n");
}

TEST_CASE("sweep plots: points that did not complete are left out, with a note in the .gp") {
  // pfc-deadlock-ring deadlocks with its wraparound links; without them its traffic flows
  // complete, but it has no collective to plot.
  const fs::path d = scratch("plots_left_out");
  const Result r = fabricsim(
      "sweep scenarios/pfc-deadlock-ring.yaml --vary topology.wraparound=true,false --out " +
      d.string());
  CHECK(r.exit_code == 3);
  CHECK(dat_blocks(d / "busbw.dat").empty());
  const std::string gp = slurp(d / "busbw.gp");
  CHECK(gp.find("# left out: point 1 (topology.wraparound=true): did not complete: PFC "
                "deadlock") != std::string::npos);
  CHECK(gp.find("# left out: point 2 (topology.wraparound=false): no collective sizes") !=
        std::string::npos);
  CHECK(gp.find("\nplot ") == std::string::npos);
  CHECK(!fs::exists(d / "busbw.svg"));
}

TEST_CASE("sweep plots: without gnuplot on PATH the .gp and .dat are written, no .svg, exit 0") {
  const fs::path d = scratch("plots_no_gnuplot");
  // A first sweep (with gnuplot, when on PATH) leaves SVGs behind; the sweep without gnuplot
  // must not let them pass for its own.
  REQUIRE(sweep_2x2("2", d).exit_code == 0);
  const Result r =
      fabricsim("sweep " + kSweepSmall +
                    " --vary link.host_rate=100Gbps,200Gbps --vary ecn.enabled=false,true"
                    " --set workload.maxbytes=256KiB --jobs 2 --out " +
                    d.string(),
                "env PATH=/nonexistent");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  for (const char* stem : {"busbw", "vs-link.host_rate"}) {
    INFO(stem);
    CHECK(!slurp(d / (std::string(stem) + ".gp")).empty());
    CHECK(!slurp(d / (std::string(stem) + ".dat")).empty());
    CHECK(!fs::exists(d / (std::string(stem) + ".svg")));
  }
  CHECK(r.out.find("gnuplot is not on PATH") != std::string::npos);
  CHECK(r.err.empty());
  CHECK(slurp(d / "sweep.md")
            .find("Plots: busbw.{gp,dat}, vs-link.host_rate.{gp,dat} (gnuplot "
                  "was not on PATH: no SVG)") != std::string::npos);
}

TEST_CASE("sweep --jobs: anything but a positive integer is exit 2 naming --jobs") {
  const fs::path d = scratch("jobs_bad") / "out";
  for (const std::string jobs : {"0", "-1", "abc", "2x", "''", "1.5"}) {
    INFO("--jobs " << jobs);
    const Result r = fabricsim("sweep " + kSweepSmall + " --vary link.host_rate=100Gbps,200Gbps" +
                               " --jobs " + jobs + " --out " + d.string());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--jobs") != std::string::npos);
    CHECK(r.out.empty());
    CHECK(!fs::exists(d / "sweep.csv"));
  }
  const Result eq = fabricsim("sweep " + kSweepSmall + " --vary link.host_rate=100Gbps --jobs=-1");
  CHECK(eq.exit_code == 2);
  CHECK(eq.err.find("--jobs") != std::string::npos);
}

TEST_CASE("sweep --jobs 2: SIGINT reaches the running points, the started ones are tabulated") {
  const fs::path d = scratch("jobs_sigint");
  // Points 2 and 3 (8 GiB) take minutes; the signal comes once point 1 is tabulated, while both
  // run. Point 4 never starts.
  const std::string cmd =
      std::string("cd ") + FABRICSIM_SOURCE_DIR + " && (" + FABRICSIM_BINARY +
      " sweep scenarios/quickstart.yaml --vary workload.maxbytes=16KiB,8GiB,8GiB,16KiB --jobs 2"
      " --out " +
      d.string() + " >/dev/null 2>&1 & pid=$!; i=0; while [ ! -f " + (d / "sweep.csv").string() +
      " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.2; kill -INT $pid; "
      "wait $pid)";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 4);  // points 1 to 3
  CHECK(cell(t, 1, "status") == "complete");
  CHECK(cell(t, 2, "status") == "interrupted");
  CHECK(cell(t, 3, "status") == "interrupted");
  CHECK(!fs::exists(d / "point-004"));
  for (size_t p : {2, 3}) {
    const auto j = results(d, p);
    CHECK(j["run"]["stop_reason"].get<std::string>().rfind("interrupted", 0) == 0);
  }
  // Only the completed point is plotted.
  CHECK(dat_blocks(d / "busbw.dat").size() == 1);
}

TEST_CASE("sweep --max-wall bounds the whole sweep, --max-events each point: status limited") {
  // The wall-clock limit: points 1 and 2 (8 GiB: minutes each) run at once and stop at the
  // sweep's deadline, 1 s after it started; point 3 never starts. Exit 124, as `run`.
  const fs::path d = scratch("limits_wall");
  const Result w = fabricsim(
      "sweep scenarios/quickstart.yaml --vary workload.maxbytes=8GiB,8GiB,16KiB --jobs 2"
      " --max-wall 1s --out " +
      d.string());
  INFO(w.err);
  CHECK(w.exit_code == 124);
  CHECK(w.err.find("fabricsim sweep: stopped at --max-wall 1 s; 2 of 3 points tabulated, 2 of "
                   "them stopped before the end (status limited)") != std::string::npos);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);  // header and points 1, 2
  for (size_t p : {1, 2}) {
    CHECK(cell(t, p, "status") == "limited");
    const auto j = results(d, p);
    CHECK(j["run"]["complete"] == false);
    CHECK(j["run"]["stop_reason"].get<std::string>().rfind("stopped at --max-wall 1 s during", 0) ==
          0);
  }
  CHECK(!fs::exists(d / "point-003"));

  // The event cap applies to each point: exactly N events each, in the sweep's own process.
  const fs::path e = scratch("limits_events");
  const Result r = fabricsim("sweep " + kSweepSmall +
                             " --vary seed=1,2 --jobs 1 --max-events 1000"
                             " --out " +
                             e.string());
  INFO(r.err);
  CHECK(r.exit_code == 124);
  const auto u = csv_table(e / "sweep.csv");
  REQUIRE(u.size() == 3);
  for (size_t p : {1, 2}) {
    CHECK(cell(u, p, "status") == "limited");
    const auto j = results(e, p);
    CHECK(j["run"]["events"].get<int64_t>() == 1000);
    CHECK(j["run"]["stop_reason"].get<std::string>().rfind("stopped at --max-events 1000 during",
                                                           0) == 0);
  }

  // A point whose transport gave up decides the exit code (4) over one that was limited (the
  // sweep exited 124 and a script checking it missed the failure). A bit error rate of 1e-3
  // loses nearly every frame: the QP's retry counter runs out.
  const fs::path f = scratch("limits_failed");
  const Result both = fabricsim(
      "sweep scenarios/quickstart.yaml --vary link.bit_error_rate=0,1e-3 --max-events 2000000"
      " --jobs 1 --out " +
      f.string());
  INFO(both.err);
  CHECK(both.exit_code == 4);
  const auto v = csv_table(f / "sweep.csv");
  REQUIRE(v.size() == 3);
  CHECK(cell(v, 1, "status") == "limited");
  CHECK(cell(v, 2, "status") == "transport gave up");
  CHECK(both.err.find("transport retry counter exceeded") != std::string::npos);
  CHECK(both.err.find("(status limited)") != std::string::npos);
}

TEST_CASE("sweep --jobs 2: a point whose process dies is failed with the reason, others run") {
  const fs::path d = scratch("jobs_killed");
  // Point 2 (8 GiB) runs for about a minute. Once point 1 is tabulated (and so reaped), the
  // oldest child left is point 2's process: it is killed. Point 3 runs beside it or after it. (A
  // CI run once saw point 3 wait for point 2, as if the second process could not start; killing
  // "the children once two points are done" then killed nothing and the test failed.)
  // Point 2's directory holds an earlier sweep's results: they go, not left beside a row that
  // says the point failed.
  fs::create_directories(d / "point-002");
  std::ofstream(d / "point-002" / "results.json") << "{\"run\": {\"complete\": true}}\n";
  const int status = fabricsim_then(
      "sweep scenarios/quickstart.yaml --vary workload.maxbytes=16KiB,8GiB,16KiB --jobs 2 --out " +
          d.string(),
      d, "grep -q '^1,16KiB,complete,' " + (d / "sweep.csv").string(), "pkill -KILL -o -P $pid");
  INFO(slurp(d / "err"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 4);
  CHECK(cell(t, 1, "status") == "complete");
  CHECK(cell(t, 2, "status") ==
        "incomplete: internal error: the point's process was killed by signal 9 (Killed)");
  CHECK(cell(t, 3, "status") == "complete");
  CHECK_FALSE(fs::exists(d / "point-002" / "results.json"));
  CHECK(fs::exists(d / "point-003" / "results.json"));
  // The cost proxy depends on the fabric alone: the killed point's row has it too (same fabric).
  CHECK_FALSE(cell(t, 1, "cost_usd").empty());
  CHECK(cell(t, 2, "cost_usd") == cell(t, 1, "cost_usd"));
  CHECK(slurp(d / "err").find("point 2/3 (workload.maxbytes=8GiB): internal error: the point's "
                              "process was killed by signal 9") != std::string::npos);
  // One --vary: no shape after the count (before: it said "3 points (3)").
  CHECK(slurp(d / "out").find("# fabricsim sweep quickstart: 3 points, seed 1\n") !=
        std::string::npos);
  const auto blocks = dat_blocks(d / "busbw.dat");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].title == "point 1: workload.maxbytes=16KiB");
  CHECK(blocks[1].title == "point 3: workload.maxbytes=16KiB");
  CHECK(slurp(d / "busbw.gp").find("# left out: point 2 (workload.maxbytes=8GiB)") !=
        std::string::npos);
}

TEST_CASE("sweep --jobs 2: SIGTERM to one point's process fails that point, not the sweep") {
  // The point stops as `run` does on SIGTERM; the sweep was not interrupted, so the point is
  // failed (exit 1) and the others run. It was tabulated "interrupted" and the sweep exited 130.
  const fs::path d = scratch("jobs_term");
  const int status = fabricsim_then(
      "sweep scenarios/quickstart.yaml --vary workload.maxbytes=8GiB,16KiB --jobs 2 --out " +
          d.string(),
      d, "pgrep -o -P $pid", "sleep 0.3; kill -TERM $(pgrep -o -P $pid)");
  INFO(slurp(d / "err"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);
  CHECK(cell(t, 1, "status") ==
        "incomplete: internal error: the point's process was interrupted by a signal the sweep "
        "did not send (SIGINT, SIGTERM, SIGHUP or SIGQUIT to it alone)");
  CHECK(cell(t, 2, "status") == "complete");
  // Its row is failed and empty: the files it wrote on the signal go, as a killed point's do.
  CHECK_FALSE(fs::exists(d / "point-001" / "results.json"));
  CHECK(fs::exists(d / "point-002" / "results.json"));
}

TEST_CASE("sweep --jobs 2: a point that does not stop at --max-wall is killed 5 s later") {
  // A stopped (SIGSTOP) or hung point process held the sweep past --max-wall, and past Ctrl-C,
  // for as long as it stayed so.
  const fs::path d = scratch("jobs_hung");
  const auto start = std::chrono::steady_clock::now();
  const int status = fabricsim_then(
      "sweep scenarios/quickstart.yaml --vary workload.maxbytes=8GiB,16KiB --jobs 2"
      " --max-wall 1s --out " +
          d.string(),
      d, "pgrep -o -P $pid", "kill -STOP $(pgrep -o -P $pid)");
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(slurp(d / "err"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 124);
  CHECK(wall_s >= 6.0);  // --max-wall, then the 5 s grace
  CHECK(wall_s < 60.0);  // not the 8 GiB point's minute, nor forever
  CHECK(slurp(d / "err").find("point 1/2 (workload.maxbytes=8GiB) did not stop within 5 s of "
                              "--max-wall: killed") != std::string::npos);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);
  CHECK(cell(t, 1, "status") == "limited");
  CHECK(cell(t, 2, "status") == "complete");
  CHECK_FALSE(fs::exists(d / "point-001" / "results.json"));
}

TEST_CASE("sweep cost_usd: each point's cost proxy is `fabricsim topo --json`'s for its values") {
  // sweep_small.yaml on a 4-GPU spine-leaf with prices: 1:1 has 2 leaf-spine links per leaf,
  // 2:1 one, so the cost proxy differs between the points; the collective does not change it.
  const std::string fabric =
      " --set 'topology={kind: spine-leaf, leaves: 2, spines: 1, hosts_per_leaf: 2}'"
      " --set link.fabric_rate=100Gbps --set cost_model=../../../configs/cost_example.yaml"
      " --set workload.maxbytes=256KiB";
  const fs::path d = scratch("cost");
  const Result r = fabricsim("sweep " + kSweepSmall + fabric +
                             " --vary topology.oversubscription=1,2"
                             " --vary workload.collective=all_reduce,all_gather --jobs 2 --out " +
                             d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 5);
  // After the fixed metrics; a topology axis adds the GPUs of each point's fabric last.
  CHECK(t[0][t[0].size() - 2] == "cost_usd");
  CHECK(t[0].back() == "gpus");
  std::map<std::string, double> cost_by_ratio;
  for (size_t p = 1; p <= 4; ++p) {
    INFO("point " << p);
    const std::string ratio = cell(t, p, "topology.oversubscription");
    const Result topo = fabricsim(
        "topo " + kSweepSmall + fabric + " --set topology.oversubscription=" + ratio + " --set " +
        "workload.collective=" + cell(t, p, "workload.collective") + " --json");
    INFO(topo.err);
    REQUIRE(topo.exit_code == 0);
    const auto expected = nlohmann::json::parse(topo.out)["cost_usd"];
    REQUIRE(expected.is_object());
    const double total = expected["total"].get<double>();
    CHECK(std::stod(cell(t, p, "cost_usd")) == total);  // exact: shortest round-trip text
    // results.json restates topo's figures: the total, and the breakdown under topo's keys.
    const auto j = results(d, p)["fabric"];
    CHECK(j["cost_usd"].get<double>() == total);
    CHECK(j["cost_breakdown_usd"] == expected);
    cost_by_ratio[ratio] = total;
  }
  // 2:1 saves two leaf-spine links: 4 switch ports and 2 cables at cost_example.yaml's prices,
  // the ports Ethernet ones (the scenario is RoCE): 4 x 522.95 + 2 x 320 = 2,731.8.
  CHECK(cost_by_ratio["1"] - cost_by_ratio["2"] == Approx(4 * 522.95 + 2 * 320).epsilon(1e-12));
  // sweep.md has the column too.
  CHECK(slurp(d / "sweep.md").find("| cost_usd |") != std::string::npos);

  // vs-topology.oversubscription: cost_usd in column 5 of each curve, and one dashed cost
  // curve on y2 (both collectives cost the same).
  const auto vs = dat_blocks(d / "vs-topology.oversubscription.dat");
  REQUIRE(vs.size() == 2);
  for (const DatBlock& b : vs) {
    INFO(b.title);
    REQUIRE(b.rows.size() == 2);
    for (const auto& row : b.rows) {
      REQUIRE(row.size() == 5);
      const size_t point = std::stoul(row[2]);
      CHECK(std::stod(row[4]) == std::stod(cell(t, point, "cost_usd")));
      CHECK(std::stod(row[4]) == cost_by_ratio[cell(t, point, "topology.oversubscription")]);
    }
  }
  const std::string gp = slurp(d / "vs-topology.oversubscription.gp");
  CHECK(gp.find("set y2tics") != std::string::npos);
  CHECK(gp.find("index 0 using 1:5 axes x1y2") != std::string::npos);
  CHECK(gp.find("index 1 using 1:5 axes x1y2") == std::string::npos);  // the same costs
  CHECK(gp.find("title 'cost proxy, USD (right axis)'") != std::string::npos);
  if (gnuplot_on_path()) CHECK(fs::exists(d / "vs-topology.oversubscription.svg"));
}

TEST_CASE(
    "sweep cost_usd: no cost_model, no cost column, and results.json fabric.cost_usd is null") {
  const fs::path d = scratch("no_cost");
  const Result r = fabricsim("sweep " + kSweepSmall +
                             " --vary link.host_rate=100Gbps,200Gbps"
                             " --set workload.maxbytes=256KiB --out " +
                             d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv_table(d / "sweep.csv");
  CHECK(std::find(t[0].begin(), t[0].end(), "cost_usd") == t[0].end());
  const auto j = results(d, 1)["fabric"];
  CHECK(j["cost_usd"].is_null());
  CHECK(j["cost_breakdown_usd"].is_null());
  const auto vs = dat_blocks(d / "vs-link.host_rate.dat");
  REQUIRE(vs.size() == 1);
  for (const auto& row : vs[0].rows) CHECK(row.size() == 4);
  CHECK(slurp(d / "vs-link.host_rate.gp").find("y2") == std::string::npos);
}

TEST_CASE("sweep cost_usd: a cost_model file that does not read is exit 2, nothing run") {
  const fs::path d = scratch("bad_cost");
  const Result r = fabricsim("sweep " + kSweepSmall +
                             " --vary link.host_rate=100Gbps,200Gbps"
                             " --set cost_model=no_such_prices.yaml --out " +
                             d.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no_such_prices.yaml") != std::string::npos);
  CHECK(!fs::exists(d / "sweep.csv"));
}

namespace {

const std::string kSweepKinds = "tests/data/cli/sweep_kinds.yaml";

/// A fabric family crossed with an edge ratio: sweep_kinds.yaml has 2 leaves x 2 GPUs (1 or 2
/// uplinks per leaf: 1:1 and 2:1 are built) and a k = 4 fat-tree, whose edges make 1:1 and 3:1
/// but not 2:1 (4 / (1 + 2) uplinks).
Result sweep_kinds_by_ratio(const std::string& jobs, const fs::path& out) {
  return fabricsim("sweep " + kSweepKinds +
                   " --vary topology.kind=spine-leaf,fat-tree"
                   " --vary topology.oversubscription=1,2 --jobs " +
                   jobs + " --out " + out.string());
}

/// GPUs of sweep_kinds.yaml's fabrics, by the families' closed forms: spine-leaf leaves x
/// hosts_per_leaf; fat-tree pods x d_a x h_e with k = 4 at 1:1 (d_a = h_e = 2).
std::string expected_gpus(const std::string& kind) {
  return kind == "spine-leaf" ? std::to_string(2 * 2) : std::to_string(2 * 2 * 2);
}

}  // namespace

TEST_CASE("sweep over topology keys: a point that cannot be built is tabulated, the rest run") {
  const fs::path one = scratch("unbuildable_1"), two = scratch("unbuildable_2");
  // An earlier sweep's results in every point directory: the unbuildable point's must not
  // stay beside its row; the others are overwritten.
  for (size_t p = 1; p <= 4; ++p) {
    fs::create_directories(one / point_dir(p));
    std::ofstream(one / point_dir(p) / "results.json") << "{\"run\": {\"complete\": true}}\n";
  }
  const Result a = sweep_kinds_by_ratio("1", one);
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  const auto t = csv_table(one / "sweep.csv");
  REQUIRE(t.size() == 5);
  CHECK(t[0].back() == "gpus");
  const auto status_col =
      static_cast<size_t>(std::find(t[0].begin(), t[0].end(), "status") - t[0].begin());
  int unbuildable = 0;
  for (size_t p = 1; p <= 4; ++p) {
    const std::string kind = cell(t, p, "topology.kind");
    const std::string ratio = cell(t, p, "topology.oversubscription");
    INFO("point " << p << ": " << kind << " " << ratio << ":1");
    REQUIRE(t[p].size() == t[0].size());
    if (kind == "fat-tree" && ratio == "2") {
      ++unbuildable;
      CHECK(cell(t, p, "status") == "unbuildable");
      // Every metric cell after the status, and the GPUs, are empty.
      for (size_t c = status_col + 1; c < t[p].size(); ++c) CHECK(t[p][c].empty());
      CHECK(a.err.find("point " + std::to_string(p) +
                       "/4 (topology.kind=fat-tree "
                       "topology.oversubscription=2): cannot be built: ") != std::string::npos);
      CHECK(!fs::exists(one / point_dir(p) / "results.json"));
    } else {
      CHECK(cell(t, p, "status") == "complete");
      CHECK(cell(t, p, "gpus") == expected_gpus(kind));
      CHECK(!cell(t, p, "avg_busbw_GBps").empty());
      CHECK(results(one, p)["collectives"].size() == 1);
    }
  }
  CHECK(unbuildable == 1);
  CHECK(a.err.find("): cannot be built: ") == a.err.rfind("): cannot be built: "));  // once
  // --jobs 2 skips the point the same way, and writes the same table.
  const Result b = sweep_kinds_by_ratio("2", two);
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  CHECK(slurp(one / "sweep.csv") == slurp(two / "sweep.csv"));
  CHECK(b.err.find("cannot be built: ") != std::string::npos);
}

TEST_CASE("sweep over topology keys: when no point can be built it is exit 2, nothing written") {
  const fs::path d = scratch("unbuildable_all") / "out";
  // k = 4 edges make 1:1 and 3:1 only.
  const Result r = fabricsim("sweep " + kSweepKinds +
                             " --set topology.kind=fat-tree"
                             " --vary topology.oversubscription=2,5 --out " +
                             d.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("point 1/2 (topology.oversubscription=2): cannot be built: ") !=
        std::string::npos);
  CHECK(r.err.find("point 2/2 (topology.oversubscription=5): cannot be built: ") !=
        std::string::npos);
  CHECK(r.err.find("no point can be built") != std::string::npos);
  CHECK(!fs::exists(d / "sweep.csv"));
  CHECK(!fs::exists(d / point_dir(1)));
}

TEST_CASE("sweep over topology keys: a key the family has not (a torus's ratio) is unbuildable") {
  // Before: a torus in a sweep over oversubscription was exit 2 for the whole sweep.
  const fs::path sc = scratch("torus_ratio") / "tor.yaml";
  std::ofstream(sc) << "name: tor\nseed: 1\ntransport: roce\n"
                    << "topology:\n  kind: spine-leaf\n  oversubscription: 1\n"
                    << "  spine-leaf: {leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
                    << "  torus: {dims: [2, 2]}\n"
                    << "link: {host_rate: 100Gbps, propagation_delay: 100ns}\n"
                    << "switch: {latency: 300ns, buffer_per_port: 1MB}\n"
                    << "workload: {collective: all_reduce, minbytes: 16KiB, maxbytes: 16KiB}\n";
  const Result r = fabricsim("sweep " + sc.string() +
                             " --vary topology.kind=spine-leaf,torus"
                             " --vary topology.oversubscription=1,2 --jobs 1");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("point 3/4 (topology.kind=torus topology.oversubscription=1): cannot be "
                   "built: topology.oversubscription: applies to topology kind") !=
        std::string::npos);
  CHECK(r.out.find("| torus         | 2                         | unbuildable |") !=
        std::string::npos);
}

TEST_CASE("sweep --vary topology.kind on kind blocks: the GPUs of each family, same bytes") {
  const fs::path one = scratch("kinds_1"), two = scratch("kinds_2");
  const std::string args =
      "sweep " + kSweepKinds + " --vary topology.kind=spine-leaf,fat-tree --jobs ";
  const Result a = fabricsim(args + "1 --out " + one.string());
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  const Result b = fabricsim(args + "2 --out " + two.string());
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  CHECK(slurp(one / "sweep.csv") == slurp(two / "sweep.csv"));
  const auto t = csv_table(two / "sweep.csv");
  REQUIRE(t.size() == 3);
  CHECK(t[0].back() == "gpus");
  for (size_t p = 1; p <= 2; ++p) {
    const std::string kind = cell(t, p, "topology.kind");
    INFO(kind);
    CHECK(cell(t, p, "status") == "complete");
    CHECK(cell(t, p, "gpus") == expected_gpus(kind));
    const auto j = results(two, p)["fabric"];
    CHECK(j["kind"].get<std::string>() == kind);
  }
  CHECK(cell(t, 1, "topology.kind") == "spine-leaf");
  CHECK(cell(t, 2, "topology.kind") == "fat-tree");
}
