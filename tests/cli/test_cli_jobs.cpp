// End-to-end: `jobs:` through `fabricsim run`: jobs sharing a link share its bandwidth, jobs
// sharing none do not slow each other, a job alone runs as the same collective would in a
// `workload:` section, and the inputs it refuses.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli_end_to_end;

namespace {

/// A 2-leaf spine-leaf, 2 hosts a leaf at 400 Gb/s, one spine at 2:1: each leaf's one 400 Gb/s
/// uplink is the only way between the leaves. PFC on, so no job loses a packet.
const std::string kTwoLeaves =
    "seed: 1\n"
    "topology: {kind: spine-leaf, leaves: 2, spines: 1, hosts_per_leaf: 2, oversubscription: 2}\n"
    "link: {host_rate: 400Gbps, propagation_delay: 250ns}\n"
    "switch: {latency: 500ns, buffer_model: shared, shared_buffer: 64MiB, alpha: 1, "
    "cut_through: true}\n"
    "pfc: {enabled: true}\n";

fs::path write_scenario(const std::string& name, const std::string& text) {
  const fs::path p = scratch(name) / (name + ".yaml");
  std::ofstream(p) << text;
  return p;
}

nlohmann::json run_json(const std::string& name, const std::string& args) {
  const fs::path d = scratch(name + "_out");
  const Result r = fabricsim("run " + args + " --out " + d.string());
  INFO(r.out + r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(slurp(d / "results.json"));
}

}  // namespace

TEST_CASE("two jobs whose only path is one uplink each get half of it") {
  // Two sendrecv jobs, each between a host of leaf 0 and one of leaf 1: both send 64 MiB each
  // way through the same 400 Gb/s uplink. Alone, a job's time is that link's serialization of
  // its bytes B plus a fixed latency L; together the link carries both jobs' bytes, so each
  // takes 2B + L: a slowdown of (2B + L) / (B + L), just under 2 at sizes where L << B.
  const fs::path sc = write_scenario(
      "share", kTwoLeaves +
                   "jobs:\n"
                   "  - {name: a, collective: sendrecv, size: 64MiB, gpus: 2, servers: [0, 2]}\n"
                   "  - {name: b, collective: sendrecv, size: 64MiB, gpus: 2, servers: [1, 3]}\n");
  const auto j = run_json("share", sc.string());
  REQUIRE(j["jobs"].size() == 2);
  const auto& a = j["jobs"][0];
  const auto& b = j["jobs"][1];
  CHECK(a["name"] == "a");
  CHECK(a["placement"] == "servers");
  CHECK(a["leaves"] == 2);
  CHECK(a["complete"] == true);
  // The link is shared fairly: the jobs end within 0.1 % of each other.
  const double ta = a["collective"]["time_ps"].get<double>();
  const double tb = b["collective"]["time_ps"].get<double>();
  CHECK(ta == Approx(tb).epsilon(0.001));
  // Alone, the same job on the same servers: the same time for both (mirror images).
  const double alone = a["alone"]["time_ps"].get<double>();
  CHECK(b["alone"]["time_ps"].get<double>() == alone);
  // B from the uplink's bytes: the together run sends both jobs' bytes through leaf0 -> spine0,
  // which is busy the whole run but L (measured 1.977 at L = 14 us of 1,411 us alone).
  const auto ports = csv_rows(scratch("share_out") / "ports.csv");
  double uplink_bytes = 0;
  for (const auto& row : ports) {
    if (row[0] == "leaf0" && row[2] == "spine0") uplink_bytes = std::stod(row[5]);
  }
  REQUIRE(uplink_bytes > 0);
  const double b_ps = uplink_bytes * 8 / 400e9 * 1e12 / 2;  // one job's share
  const double l_ps = ta - 2 * b_ps;
  CHECK(l_ps > 0);
  CHECK(l_ps < 0.02 * ta);  // the link was busy for all but the latency
  CHECK(a["slowdown"].get<double>() == Approx((2 * b_ps + l_ps) / (b_ps + l_ps)).epsilon(0.01));
  CHECK(a["slowdown"].get<double>() > 1.95);
}

TEST_CASE("a job alone runs as the same collective in a workload section would") {
  // The job's DAG is the collective's, with 0-duration launch and join tasks per rank around it:
  // alone on servers 0..7 it takes the time a workload section's 8-rank run of the same size
  // takes, to the picosecond, and a job with nobody beside it is slowed by exactly 1.
  const std::string fabric =
      "seed: 1\n"
      "topology: {kind: spine-leaf, leaves: 4, spines: 4, hosts_per_leaf: 4}\n"
      "link: {host_rate: 400Gbps, propagation_delay: 250ns}\n"
      "switch: {latency: 500ns, buffer_per_port: 4MiB, cut_through: true}\n";
  const auto job =
      run_json("alone_job",
               write_scenario("alone_job",
                              fabric + "jobs: [{collective: all_reduce, size: 4MiB, gpus: 8}]\n")
                   .string());
  const auto workload = run_json(
      "alone_workload",
      write_scenario("alone_workload", fabric + "workload: {collective: all_reduce, ngpus: 8, "
                                                "minbytes: 4MiB, maxbytes: 4MiB}\n")
          .string());
  REQUIRE(job["jobs"].size() == 1);
  const auto& row = job["jobs"][0]["collective"];
  const auto& w = workload["collectives"][0];
  CHECK(row["algorithm"] == w["algorithm"]);
  CHECK(row["protocol"] == w["protocol"]);
  CHECK(row["channels"] == w["channels"]);
  CHECK(row["time_ps"] == w["time_ps"]);
  CHECK(row["busbw_GBps"] == w["busbw_GBps"]);
  CHECK(job["jobs"][0]["servers"] == nlohmann::json::array({0, 1, 2, 3, 4, 5, 6, 7}));
  CHECK(job["jobs"][0]["slowdown"] == 1.0);
}

TEST_CASE("leaf-disjoint jobs do not slow each other and the same jobs spread over the leaves do") {
  // scenarios/two-jobs.yaml: a ring AllReduce job and an AllToAll job of 16 GPUs each on a 2:1
  // spine-leaf of 4 leaves x 8. Packed, each job has two leaves of its own: in a spine-leaf a
  // packet between two leaves uses only those leaves' links, so no link carries both jobs and
  // each takes exactly its time alone. Spread, each job has 4 GPUs under every leaf and both
  // cross the same uplinks: the ring job is slower than alone.
  const std::string sc = "scenarios/two-jobs.yaml --set jobs.size=16MiB";
  const auto packed = run_json("packed", sc);
  const auto spread = run_json("spread", sc + " --set jobs.placement=spread");
  for (const auto& job : packed["jobs"]) {
    INFO(job["name"]);
    CHECK(job["leaves"] == 2);
    CHECK(job["collective"]["time_ps"] == job["alone"]["time_ps"]);
    CHECK(job["slowdown"] == 1.0);
  }
  CHECK(packed["jobs"][0]["servers"] ==
        nlohmann::json::array({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  const auto& ring = spread["jobs"][0];
  CHECK(ring["leaves"] == 4);
  CHECK(ring["servers"] ==
        nlohmann::json::array({0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27}));
  CHECK(ring["slowdown"].get<double>() > 1.1);
  CHECK(spread["counters"]["drops"] == 0);  // PFC: lossless however the jobs meet
  // The same scenario and seed write the same bytes.
  const fs::path again = scratch("spread_again");
  REQUIRE(
      fabricsim("run " + sc + " --set jobs.placement=spread --out " + again.string()).exit_code ==
      0);
  CHECK(slurp(again / "results.json") == slurp(scratch("spread_out") / "results.json"));
}

TEST_CASE("a job started later on an idle fabric takes as long as one started at zero") {
  // Nothing else runs before it: the start only shifts the job (end = start + time).
  const std::string jobs =
      "jobs: [{collective: all_gather, size: 1MiB, gpus: 4, servers: [0, 1, 2, 3]%s}]\n";
  const auto at = [&](const std::string& start) {
    std::string text = jobs;
    text.replace(text.find("%s"), 2, start);
    return write_scenario("start" + std::to_string(start.size()), kTwoLeaves + text).string();
  };
  const auto zero = run_json("start_zero", at(""));
  const auto later = run_json("start_later", at(", start: 100us"));
  const auto& z = zero["jobs"][0];
  const auto& l = later["jobs"][0];
  CHECK(l["start_ps"] == 100'000'000);
  CHECK(l["collective"]["time_ps"] == z["collective"]["time_ps"]);
  CHECK(l["end_ps"].get<int64_t>() ==
        100'000'000 + l["collective"]["time_ps"].get<int64_t>() * l["iterations"].get<int64_t>());
}

TEST_CASE("bad jobs are refused with where and what") {
  const auto refused = [&](const std::string& name, const std::string& jobs,
                           const std::string& extra = "") {
    const fs::path sc = write_scenario(name, kTwoLeaves + jobs);
    const Result r = fabricsim("run " + sc.string() + extra);
    INFO(r.out + r.err);
    CHECK(r.exit_code == 2);
    return r.err;
  };
  // A misspelt key: did you mean, at its line and column.
  CHECK_THAT(refused("typo", "jobs:\n  - {size: 1MiB, gpus: 2, placment: spread}\n"),
             Catch::Contains("typo.yaml:7:27") && Catch::Contains("placment") &&
                 Catch::Contains("did you mean 'placement'"));
  // nccl-tests' name for the rank count.
  CHECK_THAT(refused("ngpus", "jobs:\n  - {size: 1MiB, ngpus: 2}\n"),
             Catch::Contains("did you mean 'gpus'"));
  CHECK_THAT(refused("no_size", "jobs:\n  - {gpus: 2}\n"),
             Catch::Contains("missing required key size"));
  // Servers taken by an earlier job, or more GPUs than are left.
  CHECK_THAT(refused("taken",
                     "jobs:\n  - {size: 1MiB, gpus: 2, servers: [0, 1]}\n"
                     "  - {size: 1MiB, gpus: 2, servers: [1, 2]}\n"),
             Catch::Contains("jobs[1].servers") && Catch::Contains("server 1 is taken by an "
                                                                   "earlier job"));
  CHECK_THAT(refused("too_many",
                     "jobs:\n  - {size: 1MiB, gpus: 2}\n"
                     "  - {size: 1MiB, gpus: 3}\n"),
             Catch::Contains("jobs[1].gpus") &&
                 Catch::Contains("3 GPUs at 1 a server need 3 servers, and 2 of the fabric's 4 "
                                 "are left after the jobs before it"));
  CHECK_THAT(refused("count", "jobs:\n  - {size: 1MiB, gpus: 2, servers: [0, 1, 2]}\n"),
             Catch::Contains("2 GPUs at 1 a server need 2 servers; 3 are listed"));
  CHECK_THAT(
      refused("both", "jobs:\n  - {size: 1MiB, gpus: 2, servers: [0, 1], placement: spread}\n"),
      Catch::Contains("not both"));
  CHECK_THAT(refused("names",
                     "jobs:\n  - {name: x, size: 1MiB, gpus: 2}\n"
                     "  - {name: x, size: 1MiB, gpus: 2}\n"),
             Catch::Contains("duplicate job name 'x'"));
  // A job's collective checked as a workload section's is, under the job's own key.
  CHECK_THAT(refused("proto",
                     "jobs:\n  - {collective: alltoall, protocol: ll128, size: 1MiB, "
                     "gpus: 2}\n"),
             Catch::Contains("jobs[0].protocol") && Catch::Contains("LL and Simple only"));
  CHECK_THAT(refused("nccl", "jobs:\n  - {size: 1MiB, gpus: 2, nccl: {algoo: ring}}\n"),
             Catch::Contains("jobs[0].nccl.algoo") && Catch::Contains("did you mean 'algo'"));
  // Jobs are the workload: not beside a workload section; and not in the flow mode.
  CHECK_THAT(refused("beside",
                     "workload: {minbytes: 1MiB, maxbytes: 1MiB}\n"
                     "jobs:\n  - {size: 1MiB, gpus: 2}\n"),
             Catch::Contains("jobs run instead of a workload section"));
  CHECK_THAT(refused("flow", "mode: flow\njobs:\n  - {size: 1MiB, gpus: 2}\n"),
             Catch::Contains("packet mode only"));
  CHECK_THAT(
      refused("measured", "measured: {nccl_tests: log.txt}\njobs:\n  - {size: 1MiB, gpus: 2}\n"),
      Catch::Contains("measured.nccl_tests compares a workload section's sweep"));
  // Iterations whose DAG would not fit are refused before it is built.
  CHECK_THAT(refused("iterations", "jobs:\n  - {size: 64MiB, gpus: 4, iterations: 1000000}\n"),
             Catch::Contains("jobs[0].iterations") && Catch::Contains("tasks to replay"));
  // --set on a job that is not there.
  CHECK_THAT(refused("set", "jobs:\n  - {size: 1MiB, gpus: 2}\n", " --set 'jobs[3].size=2MiB'"),
             Catch::Contains("job 3 does not exist: the scenario has 1 job"));
  CHECK_THAT(refused("set_key", "jobs:\n  - {size: 1MiB, gpus: 2}\n", " --set jobs.gpu=4"),
             Catch::Contains("did you mean 'gpus'"));
}

TEST_CASE("a job of fewer bytes than one element finishes at once with busbw 0") {
  // 1 B of floats is a count of 0: NCCL returns at once, as nccl-tests' size-0 rows show
  // (time 0, algbw and busbw 0); a regression: the job's busbw once divided by its time of 0.
  const auto j =
      run_json("tiny", write_scenario("tiny", kTwoLeaves + "jobs:\n  - {size: 1B, gpus: 2}\n"
                                                           "  - {size: 1MiB, gpus: 2}\n")
                           .string());
  const auto& tiny = j["jobs"][0];
  CHECK(tiny["complete"] == true);
  CHECK(tiny["collective"]["count"] == 0);
  CHECK(tiny["collective"]["time_ps"] == 0);
  CHECK(tiny["collective"]["busbw_GBps"] == 0.0);
  CHECK(tiny["slowdown"].is_null());
  CHECK(j["jobs"][1]["slowdown"] == 1.0);  // nothing of the first job's is on the network
}

TEST_CASE("a sweep over placements tabulates each job's busbw and slowdown and reports them") {
  // sweep.csv's jobs.NAME columns are each point's results.json jobs[] values; packed jobs
  // share no link (slowdown 1.000). The same sweep on 2 processes writes the same bytes.
  const std::string sweep =
      "sweep scenarios/two-jobs.yaml --set jobs.size=4MiB --vary jobs.placement=packed,spread "
      "--report --out ";
  const fs::path one = scratch("sweep_1"), two = scratch("sweep_2");
  const Result a = fabricsim(sweep + one.string() + " --jobs 1");
  INFO(a.out + a.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(fabricsim(sweep + two.string() + " --jobs 2").exit_code == 0);
  CHECK(slurp(one / "sweep.csv") == slurp(two / "sweep.csv"));
  const auto t = csv_table(one / "sweep.csv");
  REQUIRE(t.size() == 3);
  for (size_t p = 1; p <= 2; ++p) {
    const auto r = nlohmann::json::parse(
        slurp(one / (std::string("point-00") + std::to_string(p)) / "results.json"));
    for (size_t j = 0; j < 2; ++j) {
      const std::string name = r["jobs"][j]["name"];
      char busbw[32], slowdown[32];
      std::snprintf(busbw, sizeof busbw, "%.3f",
                    r["jobs"][j]["collective"]["busbw_GBps"].get<double>());
      std::snprintf(slowdown, sizeof slowdown, "%.3f", r["jobs"][j]["slowdown"].get<double>());
      CHECK(cell(t, p, "jobs." + name + ".busbw_GBps") == busbw);
      CHECK(cell(t, p, "jobs." + name + ".slowdown") == slowdown);
    }
  }
  CHECK(cell(t, 1, "jobs.allreduce.slowdown") == "1.000");
  CHECK(cell(t, 1, "jobs.alltoall.slowdown") == "1.000");
  // The report's jobs table: one row per job and fabric (here one fabric: the placement is a
  // jobs key, measured on it).
  const std::string md = slurp(one / "report.md");
  CHECK(md.find("## Jobs sharing the fabric") != std::string::npos);
  CHECK(md.find("| placement=spread | alltoall") != std::string::npos);
}

TEST_CASE("a sweep over whole jobs lists shows each list as #k with the list under the table") {
  const Result r = fabricsim(
      "sweep scenarios/two-jobs.yaml --vary 'jobs=[{name: x, size: 1MiB, gpus: 8}],"
      "[{name: x, size: 1MiB, gpus: 8}, {name: y, collective: alltoall, size: 1MiB, gpus: 8}]'");
  INFO(r.out + r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("| #1   |") != std::string::npos);
  CHECK(r.out.find("- `jobs` #2: `[{name: x, size: 1MiB, gpus: 8}, {name: y, collective: "
                   "alltoall, size: 1MiB, gpus: 8}]`") != std::string::npos);
}

TEST_CASE("a training job alone takes the step time of the same training section run alone") {
  // A job's training step is the scenario's step (collectives/step_model.hpp) on its ranks,
  // rank r on the r-th GPU of its servers, with 0-duration launch and join tasks around it: on
  // servers 0..15 of a 16-GPU fabric it takes what a `training:` section takes there, to the
  // picosecond. Its row has the step time and no bandwidth.
  const std::string fabric =
      "seed: 1\n"
      "topology: {kind: spine-leaf, leaves: 4, spines: 4, hosts_per_leaf: 4}\n"
      "link: {host_rate: 400Gbps, propagation_delay: 250ns}\n"
      "switch: {latency: 500ns, buffer_per_port: 4MiB, cut_through: true}\n";
  const std::string step =
      "{optimizer_time: 100us, layers: [{name: block, count: 2, fwd_time: 100us, params: 8MiB}]}";
  const auto job = run_json(
      "train_job",
      write_scenario("train_job", fabric + "jobs: [{name: dp, gpus: 16, training: " + step + "}]\n")
          .string());
  const auto own = run_json(
      "train_own", write_scenario("train_own", fabric + "training: " + step + "\n").string());
  const auto& c = job["jobs"][0]["collective"];
  CHECK(c["collective"] == "training_step");
  CHECK(c["time_ps"] == own["training"]["step_ps"]);
  CHECK(c["busbw_GBps"].is_null());
  CHECK(job["jobs"][0]["alone"]["busbw_GBps"].is_null());
  CHECK(job["jobs"][0]["slowdown"] == 1.0);
}

TEST_CASE("a training job is refused with a collective's keys and without its layers") {
  const auto refused = [&](const std::string& name, const std::string& text) {
    const Result r = fabricsim("run " + write_scenario(name, text).string());
    INFO(r.out + r.err);
    CHECK(r.exit_code == 2);
    return r.err;
  };
  const std::string step = "training: {layers: [{fwd_time: 10us, params: 1MiB}]}";
  CHECK_THAT(refused("train_size", kTwoLeaves + "jobs:\n  - {gpus: 2, size: 1MiB, " + step + "}\n"),
             Catch::Contains("jobs[0].size") && Catch::Contains("training job"));
  CHECK_THAT(refused("train_coll",
                     kTwoLeaves + "jobs:\n  - {gpus: 2, collective: alltoall, " + step + "}\n"),
             Catch::Contains("jobs[0].collective") && Catch::Contains("training step"));
  CHECK_THAT(refused("train_layers", kTwoLeaves + "jobs:\n  - {gpus: 2, training: {dp: 2}}\n"),
             Catch::Contains("jobs[0].training.layers") &&
                 Catch::Contains("a training step needs its layers"));
  CHECK_THAT(refused("train_dp", kTwoLeaves + "jobs:\n  - {name: dp, gpus: 2, training: {dp: 4, "
                                              "layers: [{fwd_time: 10us, params: 1MiB}]}}\n"),
             Catch::Contains("jobs[0].training.dp") &&
                 Catch::Contains("4 x 1 x 1 = 4 GPUs, but job dp has 2"));
  CHECK_THAT(refused("train_typo", kTwoLeaves + "jobs:\n  - {gpus: 2, training: {layrs: []}}\n"),
             Catch::Contains("jobs[0].training.layrs") && Catch::Contains("did you mean 'layers'"));
}

TEST_CASE(
    "set overrides reach a job's nccl keys and swap servers for a placement and jobs for a "
    "workload") {
  // A job's own nccl key by its dotted path: the job runs what it says.
  const auto tree = run_json("set_nccl",
                             "scenarios/two-jobs.yaml --set jobs.size=1MiB "
                             "--set 'jobs[0].nccl.algo=tree'");
  CHECK(tree["jobs"][0]["collective"]["algorithm"] == "tree");
  // servers given by --set replace the file's placement (and a placement its servers).
  const auto listed = run_json("set_servers",
                               "scenarios/two-jobs.yaml --set jobs.size=1MiB "
                               "--set 'jobs[1].servers=[31, 30, 29, 28, 27, 26, 25, 24, 23, 22, "
                               "21, 20, 19, 18, 17, 16]'");
  CHECK(listed["jobs"][1]["placement"] == "servers");
  CHECK(listed["jobs"][1]["servers"][0] == 31);
  // Jobs given whole run instead of the file's workload, which is left out with a warning.
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set 'jobs=[{size: 1MiB, gpus: 4}, {size: 1MiB, gpus: 4}]'");
  INFO(r.out + r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("workload: not used: the jobs given by --set jobs=") &&
                        Catch::Contains("run instead of the file's workload section"));
  CHECK(r.out.find("# jobs: 2 on one fabric") != std::string::npos);
  // A whole list after a key of it would drop that key: refused.
  const Result dropped = fabricsim(
      "validate scenarios/two-jobs.yaml --set 'jobs[0].size=1MiB' "
      "--set 'jobs=[{size: 2MiB, gpus: 4}]'");
  CHECK(dropped.exit_code == 2);
  CHECK_THAT(dropped.err, Catch::Contains("replaces the whole list, and with it jobs[0].size"));
  // A seed for a placement that is not random does nothing: a warning, as a sweep over
  // placements sets it for all of them.
  const Result seed = fabricsim("validate scenarios/two-jobs.yaml --set jobs.seed=7");
  CHECK(seed.exit_code == 0);
  CHECK_THAT(seed.err, Catch::Contains("jobs[0].seed: not used: seed is the random placement's"));
}

TEST_CASE("a job's collective errors name the job's keys and --max-events bounds its alone runs") {
  // The collectives' check of too many transfers, written for a workload's maxbytes, in the
  // job's terms.
  const Result big = fabricsim(
      "validate scenarios/two-jobs.yaml --set 'jobs[0].size=64GiB' "
      "--set 'jobs[0].protocol=ll'");
  CHECK(big.exit_code == 2);
  CHECK_THAT(big.err, Catch::Contains("jobs[0].size: size 64 GiB would replay as") &&
                          Catch::Contains("lower jobs[0].size") && !Catch::Contains("workload."));
  // The run with both jobs and its two alone runs take E events in all: a cap of 95 % of E stops
  // the last alone run (exit 124, as any run at its cap), which says so.
  const auto full = run_json("events_full", "scenarios/two-jobs.yaml --set jobs.size=1MiB");
  const fs::path d = scratch("events_cap");
  const int64_t all = full["run"]["events"].get<int64_t>();
  const int64_t cap = all - all / 20;
  const Result capped = fabricsim("run scenarios/two-jobs.yaml --set jobs.size=1MiB --max-events " +
                                  std::to_string(cap) + " --out " + d.string());
  CHECK(capped.exit_code == 124);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["run"]["events"].get<int64_t>() == cap);
  CHECK_THAT(j["jobs"][1]["alone_note"].get<std::string>(),
             Catch::Contains("stopped at --max-events " + std::to_string(cap) +
                             " during job alltoall alone"));
}
