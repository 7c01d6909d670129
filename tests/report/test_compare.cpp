// The fabric comparison (sim/report/compare.hpp) on results.json values written here by hand:
// grouping into fabrics and measurements, the differences from the first fabric, why a number
// is missing, which are marked, and the two renderings.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/report/compare.hpp"

namespace fabricsim {
namespace {

/// A results.json with the fields the comparison reads.
nlohmann::json results(const std::string& kind, double cost, double busbw_64k, double busbw_1m,
                       int64_t max_queue, int64_t pause_frames) {
  return {{"seed", 7},
          {"mode", "packet"},
          {"fabric",
           {{"kind", kind},
            {"gpus", 16},
            {"switches", 6},
            {"links", 32},
            {"oversubscription", 1.0},
            {"bisection_bandwidth_bps", 3200000000000},
            {"cost_usd", cost}}},
          {"collectives",
           {{{"collective", "all_reduce"},
             {"algorithm", "ring"},
             {"protocol", "simple"},
             {"size_bytes", 65536},
             {"busbw_GBps", busbw_64k}},
            {{"collective", "all_reduce"},
             {"algorithm", "ring"},
             {"protocol", "simple"},
             {"size_bytes", 1048576},
             {"busbw_GBps", busbw_1m}}}},
          {"counters",
           {{"max_queue_bytes", max_queue}, {"pfc_pause_tx", pause_frames}, {"paused_ps", 0}}},
          {"ports_truncated", false},
          {"ports", nlohmann::json::array()}};
}

ComparePoint point(int64_t n, std::vector<std::string> values, std::optional<nlohmann::json> r,
                   const std::string& status = "complete") {
  ComparePoint p;
  p.point = n;
  p.values = std::move(values);
  p.status = status;
  p.complete = status == "complete";
  p.results = std::move(r);
  if (!p.complete) p.reason = "why " + std::to_string(n);
  return p;
}

/// Two fabric kinds x two collectives' worth of points: the first fabric's numbers are round,
/// so each difference is worked by hand in the test.
CompareInput two_kinds() {
  CompareInput in;
  in.scenario = "s";
  in.command = "fabricsim sweep s.yaml";
  in.axes = {"topology.kind", "workload.algorithm"};
  in.points.push_back(
      point(1, {"spine-leaf", "ring"}, results("spine-leaf", 1000, 10, 40, 100, 0)));
  in.points.push_back(
      point(2, {"spine-leaf", "tree"}, results("spine-leaf", 1000, 12, 44, 200, 0)));
  in.points.push_back(point(3, {"fat-tree", "ring"}, results("fat-tree", 1250, 8, 50, 150, 5)));
  in.points.push_back(point(4, {"fat-tree", "tree"}, std::nullopt, "unbuildable"));
  return in;
}

}  // namespace

TEST_CASE("compare: fabrics are the non-workload values, each number against the first's") {
  const CompareData d = compare_points(two_kinds());
  REQUIRE(d.fabrics.size() == 2);
  CHECK(d.fabrics[0].label == "spine-leaf");
  CHECK(d.fabrics[1].label == "fat-tree");
  CHECK(d.fabrics[1].settings == "topology.kind=fat-tree");
  CHECK(d.fabrics[1].points == std::vector<int64_t>{3, 4});
  CHECK(d.fabric_axes == std::vector<std::string>{"topology.kind"});
  CHECK(d.measured_axes == std::vector<std::string>{"workload.algorithm"});
  CHECK(d.seed == "7");
  // Cost: 1250 against 1000 is +25 %.
  CHECK(*d.fabrics[1].cost_usd.delta_pct == Approx(25.0));
  CHECK(!d.fabrics[0].cost_usd.delta_pct);
  // busbw rows: (algorithm=ring, 64 KiB), (ring, 1 MiB), (tree, 64 KiB), (tree, 1 MiB).
  REQUIRE(d.busbw.size() == 4);
  CHECK(d.busbw[0].workload == "all_reduce algorithm=ring");
  CHECK(d.busbw[0].size_bytes == 65536);
  CHECK(!d.busbw[0].largest);
  CHECK(d.busbw[1].largest);
  CHECK(*d.busbw[0].busbw_GBps[1].delta_pct == Approx(-20.0));  // 8 against 10
  CHECK(*d.busbw[1].busbw_GBps[1].delta_pct == Approx(25.0));   // 50 against 40
  CHECK(d.busbw[0].algorithm[1] == "ring/simple");
  // The fat-tree's tree point was not built: its cell says so, with no difference.
  CHECK(d.busbw[2].workload == "all_reduce algorithm=tree");
  CHECK(!d.busbw[2].busbw_GBps[1].value);
  CHECK(d.busbw[2].busbw_GBps[1].missing == "unbuildable");
  CHECK(!d.busbw[2].busbw_GBps[1].delta_pct);
  // Queues: 150 against 100 is +50 %; PFC frames 5 against 0 is no percentage; 0 against 0 is 0.
  REQUIRE(d.queues.size() == 2);
  CHECK(*d.queues[0].max_queue_bytes[1].delta_pct == Approx(50.0));
  CHECK(d.queues[0].pfc_pause_frames[1].value == 5);
  CHECK(!d.queues[0].pfc_pause_frames[1].delta_pct);
  CHECK(*d.queues[0].pfc_paused_us[1].delta_pct == 0.0);
  // The unbuildable point is listed with its reason.
  REQUIRE(d.problems.size() == 1);
  CHECK(d.problems[0].point == 4);
  CHECK(d.problems[0].fabric == "fat-tree");
  CHECK(d.problems[0].workload == "algorithm=tree");
  CHECK(d.problems[0].status == "unbuildable");
  CHECK(d.problems[0].reason == "why 4");
  CHECK(d.steps.empty());  // no training step anywhere
  CHECK(!d.doubtful);
}

TEST_CASE("compare: a number from a point that did not complete is marked, and so is its %") {
  CompareInput in = two_kinds();
  in.points[2].status = "limited";
  in.points[2].complete = false;
  const CompareData d = compare_points(in);
  CHECK(d.doubtful);
  CHECK(d.busbw[0].busbw_GBps[1].doubtful);
  CHECK(!d.busbw[0].busbw_GBps[0].doubtful);
  CHECK(!d.fabrics[1].cost_usd.doubtful);  // a price does not depend on the run
  const CompareDocument doc = compare_document(d);
  const CompareTable& bw = doc.tables[1];
  REQUIRE(bw.id == "busbw");
  // rows: ring 64K spine-leaf, ring 64K fat-tree, ...
  CHECK(bw.rows[1][4].text == "8.00 \u2020");
  CHECK(bw.rows[1][5].text == "-20.0 % \u2020");
  CHECK(bw.rows[1][5].tone == -1);  // lower busbw is worse
  // The glance line names the best of the numbers the tool stands behind only.
  bool found = false;
  for (const std::string& g : doc.glance) {
    found =
        found || g == "Highest all_reduce algorithm=ring busbw at 1 MiB: spine-leaf (40.00 GB/s).";
  }
  CHECK(found);
  // The plots leave the marked numbers out.
  for (const ComparePlot& p : doc.plots) {
    if (p.stem == "report-busbw") {
      CHECK(p.dat.find("\"all_reduce algorithm=ring 1 MiB\" 40 NaN\n") != std::string::npos);
    }
  }
}

TEST_CASE("compare: the training step per training.* value, its shape from results.json") {
  CompareInput in;
  in.scenario = "s";
  in.command = "c";
  in.training = true;
  in.axes = {"topology.oversubscription", "training.dp"};
  const auto with_step = [](int64_t step_ps, double util) {
    nlohmann::json j = results("spine-leaf", 1, 1, 1, 1, 0);
    j["training"] = {{"dp", 2},
                     {"tp", 8},
                     {"pp", 1},
                     {"microbatches", 1},
                     {"ranks", 16},
                     {"layers", 1},
                     {"buckets", 3},
                     {"step_ps", step_ps},
                     {"exposed_comm_ps", step_ps / 4},
                     {"gpu_utilization", util}};
    return j;
  };
  in.points.push_back(point(1, {"1", "2"}, with_step(2'000'000'000, 0.5)));
  in.points.push_back(point(2, {"2", "2"}, with_step(2'500'000'000, 0.4)));
  in.points.push_back(point(3, {"4", "2"}, std::nullopt, "limited"));
  const CompareData d = compare_points(in);
  REQUIRE(d.fabrics.size() == 3);
  CHECK(d.fabrics[1].label == "2:1");
  REQUIRE(d.steps.size() == 1);
  const CompareStep& s = d.steps[0];
  CHECK(s.training == "dp=2");
  CHECK(s.shape == "dp 2 x tp 8 x pp 1 = 16 GPUs, 1 layer, 1 microbatch, 3 DDP buckets");
  CHECK(*s.step_ms[0].value == Approx(2.0));
  CHECK(*s.step_ms[1].delta_pct == Approx(25.0));               // 2.5 ms against 2 ms
  CHECK(*s.gpu_utilization_pct[1].delta_pct == Approx(-20.0));  // 40 % against 50 %
  CHECK(s.step_ms[2].missing == "limited");
  const CompareDocument doc = compare_document(d);
  const auto step = std::find_if(doc.tables.begin(), doc.tables.end(),
                                 [](const CompareTable& t) { return t.id == "step"; });
  REQUIRE(step != doc.tables.end());
  CHECK(step->header.front() == "training");
  CHECK(step->rows[1][2].text == "2.500");
  CHECK(step->rows[1][3].text == "+25.0 %");
  CHECK(step->rows[1][3].tone == -1);  // a longer step is worse
  CHECK(step->rows[2][2].text == "limited");
}

TEST_CASE("compare: Markdown escapes '|', HTML escapes text and gives each SVG its own ids") {
  CompareInput in = two_kinds();
  in.points[0].values[0] = in.points[1].values[0] = "a|b<c>";
  const CompareDocument doc = compare_document(compare_points(in));
  CompareFigures figures;
  figures.svg["report-busbw"] =
      "<?xml version=\"1.0\"?>\n<svg width=\"9\"><defs><path id='gpPt0'/></defs>"
      "<use xlink:href='#gpPt0'/><g clip-path=\"url(#gpClip)\"/></svg>\n";
  const std::string md = compare_markdown(doc, figures);
  CHECK(md.find("| a\\|b<c> ") != std::string::npos);
  CHECK(md.find("![busbw per fabric at each workload's largest message size](report-busbw.svg)") !=
        std::string::npos);
  CHECK(md.find("Plot missing: report-cost.svg (not drawn)") != std::string::npos);
  const std::string html = compare_html(doc, figures);
  CHECK(html.find("<td>a|b&lt;c&gt;</td>") != std::string::npos);
  CHECK(html.find("<?xml") == std::string::npos);
  CHECK(
      html.find("<defs><path id='report-busbw-gpPt0'/></defs><use "
                "xlink:href='#report-busbw-gpPt0'/><g clip-path=\"url(#report-busbw-gpClip)\"/>") !=
      std::string::npos);
  CHECK(html.find("<code>fabricsim sweep s.yaml --out DIR --report</code>") != std::string::npos);
}

}  // namespace fabricsim

namespace fabricsim {

TEST_CASE("compare: jobs per jobs list and name, their busbw and slowdown against the first's") {
  // Two fabrics (routing.load_balancing) x two jobs lists: one job alone, two jobs at once.
  const auto job = [](const std::string& name, double busbw, double slowdown, bool complete) {
    return nlohmann::json{{"name", name},
                          {"complete", complete},
                          {"collective",
                           {{"collective", name == "ar" ? "all_reduce" : "alltoall"},
                            {"ranks", 16},
                            {"size_bytes", 16777216},
                            {"time_us", busbw > 0 ? 1000 / busbw : 0},
                            {"busbw_GBps", busbw}}},
                          {"slowdown", slowdown > 0 ? nlohmann::json(slowdown) : nullptr},
                          {"overlap", slowdown > 1 ? nlohmann::json(0.5) : nullptr}};
  };
  const auto with_jobs = [&](double cost, nlohmann::json jobs) {
    nlohmann::json r = results("spine-leaf", cost, 1, 1, 100, 0);
    r["collectives"] = nlohmann::json::array();
    r["jobs"] = std::move(jobs);
    return r;
  };
  const std::string one = "[{name: ar, size: 16MiB, gpus: 32}]";
  // A job's training layers have names too: not jobs of the list.
  const std::string two =
      "[{name: ar, size: 16MiB, gpus: 16, training: {layers: [{name: block}]}}, "
      "{name: 'a2a', collective: alltoall}]";
  CompareInput in;
  in.scenario = "s";
  in.command = "fabricsim sweep s.yaml";
  in.axes = {"routing.load_balancing", "jobs"};
  in.points.push_back(point(1, {"per_flow", one}, with_jobs(100, {job("ar", 40, 1, true)})));
  in.points.push_back(
      point(2, {"per_flow", two},
            with_jobs(100, {job("ar", 30, 1.25, true), job("a2a", 20, 1.5, true)})));
  in.points.push_back(point(3, {"adaptive", one}, with_jobs(100, {job("ar", 40, 1, true)})));
  in.points.push_back(point(4, {"adaptive", two},
                            with_jobs(100, {job("ar", 36, 1.1, true), job("a2a", 0, 0, false)}),
                            "incomplete: stalled"));
  const CompareData d = compare_points(in);
  CHECK(d.fabric_axes == std::vector<std::string>{"routing.load_balancing"});
  CHECK(d.measured_axes == std::vector<std::string>{"jobs"});
  REQUIRE(d.jobs.size() == 3);
  // A jobs list is labelled by its jobs' names.
  CHECK(d.jobs[0].workload == "ar");
  CHECK(d.jobs[1].workload == "ar + a2a");
  CHECK(d.jobs[1].job == "ar");
  CHECK(d.jobs[1].collective == "all_reduce");
  CHECK(d.jobs[1].ranks == 16);
  CHECK(d.jobs[1].size_bytes == 16777216);
  // 36 against 30 is +20 %; a slowdown of 1.1 against 1.25 is -12 %. The adaptive point did
  // not complete: its numbers are marked.
  CHECK(*d.jobs[1].busbw_GBps[1].delta_pct == Approx(20.0));
  CHECK(*d.jobs[1].slowdown[1].delta_pct == Approx(-12.0));
  CHECK(d.jobs[1].busbw_GBps[1].doubtful);
  // The unfinished job has no busbw: its cell says why.
  CHECK(d.jobs[2].job == "a2a");
  CHECK(d.jobs[2].busbw_GBps[0].value == 20.0);
  CHECK(!d.jobs[2].busbw_GBps[1].value);
  CHECK(d.jobs[2].busbw_GBps[1].missing == "incomplete");
  CHECK(d.doubtful);
  const std::string md = compare_markdown(compare_document(d), {});
  CHECK(md.find("## Jobs sharing the fabric") != std::string::npos);
  CHECK(md.find("| ar + a2a") != std::string::npos);
  CHECK(md.find("1.10x") != std::string::npos);
  // Time: 1000 / 36 against 1000 / 30 is -16.7 %; overlap 50 %, none for a job alone.
  CHECK(*d.jobs[1].time_us[1].delta_pct == Approx(-100.0 / 6));
  CHECK(d.jobs[1].overlap[0].value == 0.5);
  CHECK(md.find(" 50 % |") != std::string::npos);
  CHECK(!d.jobs[0].overlap[0].value);
  CHECK(d.jobs[0].overlap[0].missing == "-");
}

}  // namespace fabricsim
