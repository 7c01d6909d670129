// End-to-end: `fabricsim sweep ... --out DIR --report` (report.md, report.html and their
// plots), run as a user runs it. Every number and % the report prints is checked against the
// same points' results.json and ports.csv, computed here on their own.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace fs = std::filesystem;

namespace {

using cli_testing::csv_table;
using cli_testing::Result;
using cli_testing::slurp;

fs::path scratch(const std::string& name) {
  return cli_testing::scratch_dir("fabricsim_test_sweep_report_", name);
}

/// Runs `ENV fabricsim ARGS` from the source directory, capturing stdout, stderr, exit code.
Result fabricsim(const std::string& args, const std::string& env = "") {
  return cli_testing::run_fabricsim(scratch("io"), args, env);
}

/// The quickstart's 16 GPUs (4 leaves x 4, RoCE) with 2 spines, so that 1:1 and 2:1 both build,
/// three sizes of AllReduce and AllToAll, and a 2-layer training step after them: about a
/// second per point.
const std::string kSmall =
    "sweep scenarios/quickstart.yaml --set topology.spines=2 --set workload.minbytes=64KiB"
    " --set workload.maxbytes=256KiB"
    " --set 'training={dp: 16, layers: [{name: block, count: 2, fwd_time: 100us, params: 1MiB}]}'";

/// The two fabrics (1:1 and 2:1) times the two collectives: points 1 to 4.
const std::string kTwoFabrics = kSmall +
                                " --vary topology.oversubscription=1,2"
                                " --vary workload.collective=all_reduce,alltoall";

/// A Markdown table of report.md: the header and the rows, cells trimmed, "\|" read as '|'.
struct MdTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  /// The cell of row `r` under `column`.
  const std::string& at(size_t r, const std::string& column) const {
    const auto it = std::find(header.begin(), header.end(), column);
    REQUIRE(it != header.end());
    return rows.at(r).at(static_cast<size_t>(it - header.begin()));
  }
  /// The cell under the n-th (0-based) column named `column` ("vs first" repeats).
  const std::string& nth(size_t r, const std::string& column, size_t n) const {
    size_t seen = 0;
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == column && seen++ == n) return rows.at(r).at(i);
    }
    FAIL("no column " << column << " #" << n);
    return header.front();
  }
};

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

/// The table under the heading "## TITLE" of report.md (empty when it has none).
MdTable md_table(const std::string& md, const std::string& title) {
  MdTable t;
  const size_t at = md.find("\n## " + title + "\n");
  REQUIRE(at != std::string::npos);
  std::istringstream in(md.substr(at + 4 + title.size()));
  std::string line;
  bool in_table = false;
  int line_no = 0;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) break;
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    if (++line_no == 2) continue;  // | --- | ---: |
    std::vector<std::string> cells;
    std::string c;
    for (size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        c += '|';
        ++i;
      } else if (line[i] == '|') {
        cells.push_back(trim(c));
        c.clear();
      } else {
        c += line[i];
      }
    }
    (line_no == 1 ? t.header : t.rows.emplace_back()) = cells;
  }
  return t;
}

/// A point's results.json.
nlohmann::json results(const fs::path& sweep, int point) {
  char dir[16];
  std::snprintf(dir, sizeof dir, "point-%03d", point);
  return nlohmann::json::parse(slurp(sweep / dir / "results.json"));
}

/// The largest p99_queue_bytes of a point's ports.csv (every port).
double worst_p99(const fs::path& sweep, int point) {
  char dir[16];
  std::snprintf(dir, sizeof dir, "point-%03d", point);
  const auto t = csv_table(sweep / dir / "ports.csv");
  double worst = 0;
  for (size_t r = 1; r < t.size(); ++r) {
    worst = std::max(worst, std::stod(cli_testing::cell(t, r, "p99_queue_bytes")));
  }
  return worst;
}

/// "+12.3 %" / "-4.0 %" / "0.0 %" as a number.
double pct(const std::string& cell) {
  INFO("cell '" << cell << "'");
  REQUIRE(cell.size() > 2);
  REQUIRE(cell.substr(cell.size() - 2) == " %");
  return std::stod(cell.substr(0, cell.size() - 2));
}

/// The difference a report rounds to one decimal: within half a unit of the last digit.
void check_pct(const std::string& cell, double value, double first) {
  INFO("value " << value << " against " << first);
  CHECK(std::fabs(pct(cell) - (value - first) / first * 100.0) <= 0.05 + 1e-9);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// results.json busbw_GBps of `collective` at `size_bytes`.
double busbw(const nlohmann::json& j, const std::string& collective, int64_t size_bytes) {
  for (const auto& row : j["collectives"]) {
    if (row["collective"] == collective && row["size_bytes"] == size_bytes)
      return row["busbw_GBps"].get<double>();
  }
  FAIL("no " << collective << " of " << size_bytes << " B");
  return 0;
}

}  // namespace

TEST_CASE("sweep --report: every number and % is the points' own against the first fabric") {
  const fs::path d = scratch("two_fabrics");
  const Result r = fabricsim(kTwoFabrics + " --jobs 2 --out " + d.string() + " --report");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# report     : " + (d / "report.md").string() + ", report.html") !=
        std::string::npos);
  const std::string md = slurp(d / "report.md");
  // Points: 1 = 1:1 all_reduce, 2 = 1:1 alltoall, 3 = 2:1 all_reduce, 4 = 2:1 alltoall.
  const std::map<std::string, std::map<std::string, int>> point = {
      {"1:1", {{"all_reduce", 1}, {"alltoall", 2}}}, {"2:1", {{"all_reduce", 3}, {"alltoall", 4}}}};

  SECTION("cost: the prices times the parts, by hand") {
    // RoCE, so the switch ports are priced as Ethernet (configs/cost_example.yaml roce).
    // 1:1: 16 host links, 4 leaves x 4 uplinks = 16 fabric links, 16 + 2 x 16 = 48 switch
    //      ports: 48 x 522.95 + 16 x 2400 + 16 x 320 + 16 x 320 = 73,741.6
    // 2:1: 2 uplinks per leaf: 8 fabric links, 16 + 2 x 8 = 32 switch ports:
    //      32 x 522.95 + 16 x 2400 + 16 x 320 + 8 x 320 = 62,814.4, -14.818 % against 1:1
    const MdTable t = md_table(md, "Fabrics and cost proxy");
    REQUIRE(t.rows.size() == 2);
    CHECK(t.at(0, "fabric") == "1:1");
    CHECK(t.at(0, "cost proxy (USD)") == "73,742");
    CHECK(t.at(0, "vs first").empty());
    CHECK(t.at(1, "fabric") == "2:1");
    CHECK(t.at(1, "cost proxy (USD)") == "62,814");
    CHECK(t.at(1, "vs first") == "-14.8 %");
    CHECK(results(d, 1)["fabric"]["cost_usd"].get<double>() == Approx(73741.6).epsilon(1e-12));
    CHECK(results(d, 4)["fabric"]["cost_usd"].get<double>() == Approx(62814.4).epsilon(1e-12));
    CHECK(t.at(1, "points") == "3, 4");
    CHECK(t.at(0, "GPUs") == "16");
  }
  SECTION("busbw: each fabric's against the first's at the same collective and size") {
    const MdTable t = md_table(md, "Collective bus bandwidth");
    REQUIRE(t.rows.size() == 2 * 3 * 2);  // collectives x sizes x fabrics
    for (size_t row = 0; row < t.rows.size(); ++row) {
      const std::string& collective = t.at(row, "workload");
      const std::string& size = t.at(row, "size");
      const int64_t bytes = std::stoll(size) * 1024;  // "64 KiB"
      REQUIRE(size.find(" KiB") != std::string::npos);
      const std::string& fabric = t.at(row, "fabric");
      INFO(collective << " " << size << " " << fabric);
      const double v = busbw(results(d, point.at(fabric).at(collective)), collective, bytes);
      const double first = busbw(results(d, point.at("1:1").at(collective)), collective, bytes);
      CHECK(t.at(row, "busbw (GB/s)") == fixed(v, 2));
      if (fabric == "1:1") {
        CHECK(t.at(row, "vs first").empty());
      } else {
        check_pct(t.at(row, "vs first"), v, first);
      }
    }
    // AllToAll through 2:1 uplinks loses bandwidth at 256 KiB (12 of each GPU's 15 peers are
    // on other leaves): the report's % is negative there.
    for (size_t row = 0; row < t.rows.size(); ++row) {
      if (t.at(row, "workload") == "alltoall" && t.at(row, "size") == "256 KiB" &&
          t.at(row, "fabric") == "2:1") {
        CHECK(pct(t.at(row, "vs first")) < 0);
      }
    }
  }
  SECTION("training step: step time and GPU utilization from results.json `training`") {
    const MdTable t = md_table(md, "Training step");
    REQUIRE(t.rows.size() == 2);
    CHECK(md.find("One training step (dp 16 x tp 1 x pp 1 = 16 GPUs, 2 layers, 1 microbatch, "
                  "2 DDP buckets)") != std::string::npos);
    const auto j1 = results(d, 1)["training"], j3 = results(d, 3)["training"];
    const double step1 = j1["step_ps"].get<double>() / 1e9,
                 step3 = j3["step_ps"].get<double>() / 1e9;
    const double util1 = j1["gpu_utilization"].get<double>() * 100;
    const double util3 = j3["gpu_utilization"].get<double>() * 100;
    CHECK(t.at(0, "step (ms)") == fixed(step1, 3));
    CHECK(t.at(1, "step (ms)") == fixed(step3, 3));
    CHECK(t.at(0, "GPU utilization (%)") == fixed(util1, 1));
    CHECK(t.at(1, "GPU utilization (%)") == fixed(util3, 1));
    check_pct(t.nth(1, "vs first", 0), step3, step1);
    const double exposed1 = j1["exposed_comm_ps"].get<double>() / 1e9;
    const double exposed3 = j3["exposed_comm_ps"].get<double>() / 1e9;
    CHECK(t.at(1, "exposed communication (ms)") == fixed(exposed3, 3));
    check_pct(t.nth(1, "vs first", 1), exposed3, exposed1);
    check_pct(t.nth(1, "vs first", 2), util3, util1);
    // Two layers of 100 us forward and 200 us backward: 0.6 ms of compute in every step.
    CHECK(j1["compute_ps"] == 600'000'000);
    CHECK(md.find("Shortest training step: ") != std::string::npos);
  }
  SECTION("queues: max queue from counters, worst port p99 from ports.csv") {
    const MdTable t = md_table(md, "Queues and PFC");
    REQUIRE(t.rows.size() == 4);
    for (size_t row = 0; row < 4; ++row) {
      const std::string& fabric = t.at(row, "fabric");
      const std::string& collective = t.at(row, "workload");
      if (fabric == "1:1") continue;
      INFO(collective);
      const int p = point.at(fabric).at(collective), p1 = point.at("1:1").at(collective);
      check_pct(t.nth(row, "vs first", 0),
                results(d, p)["counters"]["max_queue_bytes"].get<double>(),
                results(d, p1)["counters"]["max_queue_bytes"].get<double>());
      check_pct(t.nth(row, "vs first", 1), worst_p99(d, p), worst_p99(d, p1));
      // No PFC pause on either fabric: 0 against 0 is 0 %.
      CHECK(t.at(row, "PFC pause frames") == "0");
      CHECK(t.nth(row, "vs first", 2) == "0.0 %");
    }
  }
  SECTION("every point completed: nothing is marked, the last table says so") {
    CHECK(md.find("\u2020") == std::string::npos);
    CHECK(md.find("None: every point ran its whole workload") != std::string::npos);
  }
  SECTION("the HTML holds the same tables and its plots inline") {
    const std::string html = slurp(d / "report.html");
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("<td class=\"num\">73,742</td>") != std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);  // nothing loaded from elsewhere
    if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
      for (const char* stem : {"report-busbw", "report-cost", "report-step"}) {
        INFO(stem);
        CHECK(fs::exists(d / (std::string(stem) + ".svg")));
        CHECK(md.find(std::string("](") + stem + ".svg)") != std::string::npos);
        // inline, its ids prefixed: two gnuplot SVGs on one page would share them
        CHECK(html.find(std::string("id='") + stem + "-gpPt0'") != std::string::npos);
      }
    }
  }
}

TEST_CASE("sweep --report: a fabric whose points failed shows why, the others are compared") {
  // With the quickstart's 4 spines a 2:1 leaf would need 2 uplinks for 4 spines: unbuildable.
  const fs::path d = scratch("unbuildable");
  const Result r = fabricsim(
      "sweep scenarios/quickstart.yaml --set workload.minbytes=64KiB --set workload.maxbytes=64KiB"
      " --vary topology.oversubscription=1,2 --vary workload.collective=all_reduce,alltoall"
      " --jobs 2 --out " +
      d.string() + " --report");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);  // unbuildable points are tabulated, not a failure of the sweep
  const std::string md = slurp(d / "report.md");
  const MdTable cost = md_table(md, "Fabrics and cost proxy");
  REQUIRE(cost.rows.size() == 2);
  CHECK(cost.at(1, "fabric") == "2:1");
  CHECK(cost.at(1, "GPUs") == "unbuildable");
  CHECK(cost.at(1, "cost proxy (USD)") == "unbuildable");
  const MdTable bw = md_table(md, "Collective bus bandwidth");
  REQUIRE(bw.rows.size() == 4);
  for (size_t row = 0; row < 4; ++row) {
    if (bw.at(row, "fabric") == "2:1") {
      CHECK(bw.at(row, "busbw (GB/s)") == "unbuildable");
      CHECK(bw.at(row, "vs first").empty());
    }
  }
  const MdTable problems = md_table(md, "Points that did not complete");
  REQUIRE(problems.rows.size() == 2);
  for (size_t row = 0; row < 2; ++row) {
    CHECK(problems.at(row, "point") == std::to_string(row + 3));
    CHECK(problems.at(row, "fabric") == "2:1");
    CHECK(problems.at(row, "status") == "unbuildable");
    CHECK(
        problems.at(row, "reason").find("cannot be built: oversubscription 2:1 cannot be built") !=
        std::string::npos);
  }
  CHECK(md.find("2 of 4 points did not complete") != std::string::npos);
}

TEST_CASE("sweep --report: an unbuildable first fabric gives way to the first one built") {
  // With 2 spines a 4:1 leaf (1 uplink) cannot reach both spines: unbuildable. Swept first, it
  // would leave every difference n/a; 1:1, the first fabric built, leads instead, and the others
  // keep the sweep's order.
  const fs::path d = scratch("unbuildable_first");
  const Result r = fabricsim(
      "sweep scenarios/quickstart.yaml --set workload.minbytes=4MiB --set workload.maxbytes=4MiB"
      " --set topology.spines=2 --vary topology.oversubscription=4,1,2 --jobs 2 --out " +
      d.string() + " --report");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string md = slurp(d / "report.md");
  CHECK(md.find("Every difference in % is against the first fabric, 1:1.") != std::string::npos);
  const MdTable bw = md_table(md, "Collective bus bandwidth");
  REQUIRE(bw.rows.size() == 3);
  CHECK(bw.at(0, "fabric") == "1:1");
  CHECK(bw.at(1, "fabric") == "4:1");
  CHECK(bw.at(1, "busbw (GB/s)") == "unbuildable");
  CHECK(bw.at(2, "fabric") == "2:1");
  // 2:1 against 1:1, from the two points' results.json (points 2 and 3).
  const double one =
      nlohmann::json::parse(slurp(d / "point-002" / "results.json"))["collectives"][0]["busbw_GBps"]
          .get<double>();
  const double two =
      nlohmann::json::parse(slurp(d / "point-003" / "results.json"))["collectives"][0]["busbw_GBps"]
          .get<double>();
  char want[32];
  std::snprintf(want, sizeof want, "%+.1f %%", (two - one) / one * 100.0);
  CHECK(bw.at(2, "vs first") == want);
}

TEST_CASE("sweep --report: numbers of points stopped at --max-events are marked") {
  // 30,000 events of about 250,000: the first sizes finish, the later ones and the step do not.
  const fs::path d = scratch("limited");
  const Result r =
      fabricsim(kTwoFabrics + " --max-events 30000 --jobs 2 --out " + d.string() + " --report");
  INFO(r.err);
  REQUIRE(r.exit_code == 124);
  const std::string md = slurp(d / "report.md");
  const MdTable problems = md_table(md, "Points that did not complete");
  REQUIRE(problems.rows.size() == 4);
  for (size_t row = 0; row < 4; ++row) CHECK(problems.at(row, "status") == "limited");
  // Every busbw shown is marked, and so is every difference computed from one.
  const MdTable bw = md_table(md, "Collective bus bandwidth");
  REQUIRE(!bw.rows.empty());
  for (size_t row = 0; row < bw.rows.size(); ++row) {
    const std::string& v = bw.at(row, "busbw (GB/s)");
    INFO(v);
    CHECK((v == "limited" || v.find(" \u2020") != std::string::npos));
    const std::string& delta = bw.at(row, "vs first");
    CHECK((delta.empty() || delta == "n/a" || delta.find(" \u2020") != std::string::npos));
  }
  const MdTable step = md_table(md, "Training step");
  for (size_t row = 0; row < step.rows.size(); ++row) CHECK(step.at(row, "step (ms)") == "limited");
  CHECK(md.find("\u2020 from a point that did not complete") != std::string::npos);
  // The glance lines name no best fabric from numbers the tool cannot stand behind.
  CHECK(md.find("Highest ") == std::string::npos);
}

TEST_CASE("sweep --report: a glance line gives no % against a number marked as not complete") {
  // 2:1 first: its all_reduce point needs 268,933 events, 17 more than the limit, so it stops in
  // the training step with every size measured (busbw marked); its alltoall point (260,712) and
  // both 1:1 points (268,642 and 260,422) complete, so 2:1 stays the first fabric.
  const fs::path d = scratch("glance_marked");
  const Result r = fabricsim(kSmall +
                             " --vary topology.oversubscription=2,1"
                             " --vary workload.collective=all_reduce,alltoall"
                             " --max-events 268916 --jobs 2 --out " +
                             d.string() + " --report");
  INFO(r.err);
  REQUIRE(r.exit_code == 124);
  const std::string md = slurp(d / "report.md");
  const MdTable problems = md_table(md, "Points that did not complete");
  REQUIRE(problems.rows.size() == 1);
  CHECK(problems.at(0, "point") == "1");
  const size_t line = md.find("- Highest all_reduce busbw at 256 KiB: ");
  REQUIRE(line != std::string::npos);
  const std::string text = md.substr(line, md.find('\n', line) - line);
  INFO(text);
  CHECK(text.find("against") == std::string::npos);
  // The alltoall line compares two complete points, so it keeps its %.
  CHECK(md.find("- Highest alltoall busbw at 256 KiB: 1:1 (") != std::string::npos);
  CHECK(md.find("% against 2:1)") != std::string::npos);
}

TEST_CASE("sweep --report: seed and mode are measured on each fabric, not fabrics of their own") {
  // Two fabrics (1:1, 2:1 on 2 spines) under both models and two seeds: 8 points, 2 fabrics.
  // The flow mode models no queues nor PFC: its cells say so instead of a 0 that would read as
  // -100 % against the packet model.
  const fs::path d = scratch("seed_mode");
  const Result r = fabricsim(
      "sweep scenarios/quickstart.yaml --set topology.spines=2 --set workload.minbytes=1MiB"
      " --set workload.maxbytes=1MiB --vary topology.oversubscription=1,2"
      " --vary mode=packet,flow --vary seed=1,2 --jobs 2 --out " +
      d.string() + " --report");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string md = slurp(d / "report.md");
  CHECK(md.find("8 points: 2 fabrics (each combination of `topology.oversubscription`), each "
                "measured on every value of `mode`, `seed`") != std::string::npos);
  const MdTable q = md_table(md, "Queues and PFC");
  REQUIRE(q.rows.size() == 8);
  for (size_t row = 0; row < q.rows.size(); ++row) {
    INFO(q.at(row, "workload") << " " << q.at(row, "fabric"));
    const bool flow = q.at(row, "workload").find("mode=flow") != std::string::npos;
    CHECK((q.at(row, "max queue") == "not modelled (flow mode)") == flow);
    if (flow) CHECK(q.at(row, "vs first").empty());
  }
}

TEST_CASE("sweep --report: the same sweep writes the same bytes, whatever --jobs and folder") {
  const fs::path a = scratch("same_a"), b = scratch("same_b");
  const Result ra = fabricsim(kTwoFabrics + " --jobs 2 --out " + a.string() + " --report");
  const Result rb = fabricsim(kTwoFabrics + " --jobs 1 --out " + b.string() + " --report");
  INFO(ra.err << rb.err);
  REQUIRE(ra.exit_code == 0);
  REQUIRE(rb.exit_code == 0);
  for (const char* f : {"report.md", "report.html", "report-busbw.gp", "report-busbw.dat",
                        "report-cost.dat", "report-step.dat"}) {
    INFO(f);
    const std::string x = slurp(a / f);
    CHECK(!x.empty());
    CHECK(x == slurp(b / f));
  }
  CHECK(slurp(a / "report.md").find(a.string()) == std::string::npos);  // no folder names
}

TEST_CASE("sweep --report: one fabric (only workload axes) is compared with nothing") {
  const fs::path d = scratch("one_fabric");
  const Result r = fabricsim(kSmall + " --vary workload.collective=all_reduce,alltoall --out " +
                             d.string() + " --report");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string md = slurp(d / "report.md");
  CHECK(md.find("2 points: 1 fabric (the scenario's own: no --vary axis outside workload.*, "
                "training.*, seed and mode)") != std::string::npos);
  const MdTable cost = md_table(md, "Fabrics and cost proxy");
  REQUIRE(cost.rows.size() == 1);
  CHECK(cost.at(0, "fabric") == "spine-leaf 1:1");  // from results.json `fabric`
  CHECK(cost.at(0, "settings") == "as in the scenario");
  const MdTable bw = md_table(md, "Collective bus bandwidth");
  REQUIRE(bw.rows.size() == 2 * 3);
  for (size_t row = 0; row < bw.rows.size(); ++row) CHECK(bw.at(row, "vs first").empty());
  CHECK(md.find("Training step") != std::string::npos);
  CHECK(!fs::exists(d / "report-cost.gp"));  // one price: no cost plot
}

TEST_CASE("sweep --report: without gnuplot the tables are written and the plots said missing") {
  const fs::path d = scratch("no_gnuplot");
  const Result r = fabricsim(kTwoFabrics + " --jobs 2 --out " + d.string() + " --report",
                             "env PATH=/nonexistent");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string md = slurp(d / "report.md"), html = slurp(d / "report.html");
  CHECK(md_table(md, "Collective bus bandwidth").rows.size() == 12);
  CHECK(md.find("Plot missing: report-busbw.svg (gnuplot is not on PATH: install gnuplot-nox)") !=
        std::string::npos);
  CHECK(html.find("Plot missing: report-busbw.svg") != std::string::npos);
  CHECK(!fs::exists(d / "report-busbw.svg"));
  CHECK(!slurp(d / "report-busbw.gp").empty());
  CHECK(r.out.find("the report has no plots") != std::string::npos);
}

TEST_CASE(
    "sweep --report: an earlier sweep's report goes when a sweep without --report reuses DIR") {
  const fs::path d = scratch("stale");
  REQUIRE(
      fabricsim(kSmall + " --vary workload.collective=all_reduce --out " + d.string() + " --report")
          .exit_code == 0);
  REQUIRE(fs::exists(d / "report.md"));
  REQUIRE(
      fabricsim(kSmall + " --vary workload.collective=all_reduce --out " + d.string()).exit_code ==
      0);
  CHECK(!fs::exists(d / "report.md"));
  CHECK(!fs::exists(d / "report.html"));
  CHECK(!fs::exists(d / "report-busbw.dat"));
}

TEST_CASE("sweep --report: a report that cannot be written is exit 74, the tables still are") {
  const fs::path d = scratch("unwritable");
  fs::create_directories(d / "report.md");  // a folder where the file goes
  const Result r = fabricsim(kSmall + " --vary workload.collective=all_reduce --out " + d.string() +
                             " --report");
  CHECK(r.exit_code == 74);
  CHECK(r.err.find((d / "report.md").string()) != std::string::npos);
  CHECK(!slurp(d / "sweep.csv").empty());
  CHECK(!slurp(d / "report.html").empty());  // the other file of the report is written
  CHECK(r.out.find("# report     : " + (d / "report.html").string()) != std::string::npos);
}
