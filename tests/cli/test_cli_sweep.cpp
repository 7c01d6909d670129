// End-to-end: `fabricsim sweep`, and lossless settings refused at their key.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli_end_to_end;

// ---- fabricsim sweep --------------------------------------------------------------------------

namespace {

using cli_testing::cell;
using cli_testing::csv_table;

const std::string kSweepSmall = "tests/data/cli/sweep_small.yaml";

}  // namespace

TEST_CASE("sweep: a 2x2 product runs 4 points, each as `run` would, and tabulates them") {
  const fs::path d = scratch("sweep_2x2"), again = scratch("sweep_2x2_again"),
                 ref = scratch("sweep_2x2_run");
  const std::string args = "sweep " + kSweepSmall +
                           " --vary link.host_rate=100Gbps,200Gbps --vary ecn.enabled=false,true"
                           " --set workload.maxbytes=256KiB --out ";
  const Result r = fabricsim(args + d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* p : {"point-001", "point-002", "point-003", "point-004"}) {
    INFO(p);
    for (const char* f : {"results.json", "perf.json", "ports.csv", "queues.csv", "flows.csv"}) {
      CHECK(fs::exists(d / p / f));
    }
    CHECK(!fs::exists(d / p / "trace.json"));
  }
  CHECK(!fs::exists(d / "point-005"));
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 5);  // header + 4 points
  CHECK(t[0] == std::vector<std::string>{"point",
                                         "link.host_rate",
                                         "ecn.enabled",
                                         "status",
                                         "avg_busbw_GBps",
                                         "busbw_at_max_size_GBps",
                                         "max_queue_bytes",
                                         "worst_port_p99_queue_bytes",
                                         "pfc_pause_tx",
                                         "ecn_marked",
                                         "cnp_tx",
                                         "drops",
                                         "traffic_fct_p50_us",
                                         "traffic_fct_p99_us",
                                         "message_fct_p50_us",
                                         "message_fct_p99_us",
                                         "simulated_us",
                                         "slowdown_p50",
                                         "slowdown_p95",
                                         "slowdown_p99"});
  // The first --vary is outermost.
  const std::vector<std::pair<std::string, std::string>> order = {
      {"100Gbps", "false"}, {"100Gbps", "true"}, {"200Gbps", "false"}, {"200Gbps", "true"}};
  for (size_t i = 1; i <= 4; ++i) {
    INFO("point " << i);
    CHECK(cell(t, i, "point") == std::to_string(i));
    CHECK(cell(t, i, "link.host_rate") == order[i - 1].first);
    CHECK(cell(t, i, "ecn.enabled") == order[i - 1].second);
    CHECK(cell(t, i, "status") == "complete");
    // The columns restate the point's results.json.
    char dir[16];
    std::snprintf(dir, sizeof dir, "point-%03zu", i);
    const auto j = nlohmann::json::parse(slurp(d / dir / "results.json"));
    double avg = 0;
    for (const auto& row : j["collectives"]) avg += row["busbw_GBps"].get<double>();
    avg /= static_cast<double>(j["collectives"].size());
    CHECK(std::stod(cell(t, i, "avg_busbw_GBps")) == Approx(avg).margin(0.0005));
    CHECK(std::stod(cell(t, i, "busbw_at_max_size_GBps")) ==
          Approx(j["collectives"].back()["busbw_GBps"].get<double>()).margin(0.0005));
    CHECK(std::stoll(cell(t, i, "max_queue_bytes")) == j["counters"]["max_queue_bytes"]);
    CHECK(std::stoll(cell(t, i, "ecn_marked")) == j["counters"]["ecn_marked"]);
    CHECK(std::stoll(cell(t, i, "drops")) == j["counters"]["drops"]);
    // A collective's messages only: the message columns are results.json's flows.messages.
    CHECK(cell(t, i, "traffic_fct_p99_us").empty());
    CHECK(std::stod(cell(t, i, "message_fct_p99_us")) ==
          Approx(j["flows"]["messages"]["fct_us"]["p99"].get<double>()));
    CHECK(std::stod(cell(t, i, "simulated_us")) ==
          Approx(j["run"]["simulated_ps"].get<double>() / 1e6));
  }
  CHECK(std::stoll(cell(t, 2, "ecn_marked")) == 0);  // 100G hosts on 400G routers: no queue
  CHECK(slurp(d / "sweep.md").find("| point | link.host_rate | ecn.enabled | status") !=
        std::string::npos);
  CHECK(r.out.find("| point | link.host_rate | ecn.enabled | status") != std::string::npos);
  CHECK(csv_rows(d / "sweep_perf.csv").size() == 4);

  // The last point equals `run` with the same --set values, byte for byte, and a second sweep
  // writes the same sweep.csv.
  REQUIRE(fabricsim("run " + kSweepSmall +
                    " --set workload.maxbytes=256KiB --set link.host_rate=200Gbps"
                    " --set ecn.enabled=true --out " +
                    ref.string())
              .exit_code == 0);
  for (const char* f : {"results.json", "ports.csv", "queues.csv", "flows.csv"}) {
    INFO(f);
    CHECK(slurp(d / "point-004" / f) == slurp(ref / f));
  }
  REQUIRE(fabricsim(args + again.string()).exit_code == 0);
  CHECK(slurp(d / "sweep.csv") == slurp(again / "sweep.csv"));
  CHECK(slurp(d / "sweep.md") == slurp(again / "sweep.md"));
}

TEST_CASE("sweep: --vary values split on commas outside [] and {}") {
  const fs::path d = scratch("sweep_brackets");
  const Result r = fabricsim("sweep " + kSweepSmall +
                             " --vary 'topology.dims=[2,2],[4, 2]'"
                             " --vary 'topology.degraded_links={},{host0-r0_0: 50Gbps, "
                             "r0_0-r1_0: 100Gbps}' --set workload.maxbytes=64KiB --out " +
                             d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 5);
  CHECK(cell(t, 1, "topology.dims") == "[2,2]");
  CHECK(cell(t, 3, "topology.dims") == "[4, 2]");
  CHECK(cell(t, 1, "topology.degraded_links") == "{}");
  CHECK(cell(t, 2, "topology.degraded_links") == "{host0-r0_0: 50Gbps, r0_0-r1_0: 100Gbps}");
  const auto gpus = [&](const char* p) {
    return nlohmann::json::parse(slurp(d / p / "results.json"))["fabric"]["gpus"].get<int>();
  };
  CHECK(gpus("point-001") == 4);
  CHECK(gpus("point-003") == 8);
  // host0's link at half rate slows the ring that crosses it.
  CHECK(std::stod(cell(t, 2, "simulated_us")) > std::stod(cell(t, 1, "simulated_us")));
  // A quoted value keeps its commas too; an unbalanced bracket is refused.
  const fs::path q = scratch("sweep_quoted");
  REQUIRE(fabricsim("sweep " + kSweepSmall +
                    " --vary \"name='a,b',c\" --set workload.maxbytes=64KiB --out " + q.string())
              .exit_code == 0);
  const auto names = csv_table(q / "sweep.csv");
  REQUIRE(names.size() == 3);
  CHECK(cell(names, 1, "name") == "'a,b'");
  CHECK(nlohmann::json::parse(slurp(q / "point-001" / "results.json"))["scenario"] == "a,b");
  const Result open = fabricsim("sweep " + kSweepSmall + " --vary 'topology.dims=[2,2'");
  CHECK(open.exit_code == 2);
  CHECK(open.err.find("unclosed '['") != std::string::npos);
}

TEST_CASE("sweep: bad input anywhere is exit 2 before any point runs or anything is written") {
  SECTION("a bad value in the second point") {
    const fs::path d = scratch("sweep_bad") / "out";
    const Result r = fabricsim("sweep " + kSweepSmall +
                               " --vary link.host_rate=100Gbps,-5Gbps --out " + d.string());
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("--vary link.host_rate=-5Gbps: link.host_rate:", 0) == 0);
    CHECK(r.err.find("in point 2/2") != std::string::npos);
    CHECK(!fs::exists(d / "point-001"));
    CHECK(!fs::exists(d / "sweep.csv"));
  }
  SECTION("a point that loads but cannot run (checked when prepared)") {
    const fs::path d = scratch("sweep_bad_buffer") / "out";
    const Result r = fabricsim("sweep " + kSweepSmall +
                               " --vary switch.buffer_per_port=1MB,4096B --out " + d.string());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("switch.buffer_per_port: smaller than one full frame") != std::string::npos);
    CHECK(!fs::exists(d / "point-001"));
  }
  struct Case {
    std::string args, text;
  };
  const Case cases[] = {
      {"--vary ecn.kmin=10KB,20KB --vary ecn.kmin=30KB",
       "--vary ecn.kmin=30KB: ecn.kmin: varied twice"},
      {"--vary ecn.kmin=10KB,,20KB", "empty value in the list (value 2)"},
      {"--vary ecn.kmin=", "empty value"},
      {"--vary =10KB", "expected a key before '='"},
      {"--vary ecn.kmin", "expected KEY=V1,V2,..."},
      {"--vary ecn.kmn=10KB", "did you mean 'ecn.kmin'"},
      {"--vary seed=1,2 --seed 3", "--seed 3 fixes the seed of every point"},
      {"", "expected at least one --vary"},
      // 101 x 100 points: refused up front, with the count.
      {"--vary seed=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
       "29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,"
       "58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,"
       "87,88,89,90,91,92,93,94,95,96,97,98,99,100,101 --vary nic.ack_interval=1,2,3,4,5,6,7,8,9,"
       "10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,"
       "39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,"
       "68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,"
       "97,98,99,100",
       "10100 points (101 x 100), more than the 10000"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = fabricsim("sweep " + kSweepSmall + " " + c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.text) != std::string::npos);
  }
}

TEST_CASE("sweep: busbw follows link.host_rate as the alpha-beta model says") {
  // Ring AllReduce on 4 GPUs whose host links are the only bottleneck (400G router links):
  // t = 2(N-1)a + 2(N-1)/N S/B (DESIGN.md section 5), so busbw = S/t x 2(N-1)/N = 1/(1/B + Na/S).
  // B is the goodput of a host link: rate/8 x 4096/4178 (MTU payload over the RoCEv2 frame).
  // At S = 4 MiB the alpha term (Na of a few us against S/B of 86-690 us) costs under 10 %:
  // B x 0.9 <= busbw <= B, so busbw doubles with the host rate.
  const fs::path d = scratch("sweep_rate");
  const Result r =
      fabricsim("sweep " + kSweepSmall +
                " --vary link.host_rate=50Gbps,100Gbps,200Gbps,400Gbps --out " + d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 5);
  const double rates_gbps[] = {50, 100, 200, 400};
  double previous = 0;
  for (size_t i = 1; i <= 4; ++i) {
    const double b = rates_gbps[i - 1] / 8 * 4096.0 / 4178.0;
    const double busbw = std::stod(cell(t, i, "busbw_at_max_size_GBps"));
    INFO("host rate " << rates_gbps[i - 1] << " Gb/s: busbw " << busbw << ", B " << b);
    CHECK(busbw <= b);
    CHECK(busbw >= 0.9 * b);
    CHECK(busbw > 1.8 * previous);
    previous = busbw;
  }
}

TEST_CASE("sweep: a deadlocked point is tabulated, the rest still run, and the exit code is 3") {
  // pfc-deadlock-ring deadlocks on its torus ring; without the wraparound links there is no
  // cycle and every flow completes.
  const fs::path d = scratch("sweep_deadlock");
  const Result r = fabricsim(
      "sweep scenarios/pfc-deadlock-ring.yaml --vary topology.wraparound=true,false --out " +
      d.string());
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("point 1/2 (topology.wraparound=true): PFC deadlock") != std::string::npos);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);
  CHECK(cell(t, 1, "status") == "deadlock");
  CHECK(cell(t, 1, "traffic_fct_p50_us").empty());  // no flow completed
  CHECK(!cell(t, 2, "traffic_fct_p50_us").empty());
  CHECK(cell(t, 2, "status") == "complete");
  CHECK(cell(t, 2, "avg_busbw_GBps").empty());  // traffic only: no collective
  CHECK(!nlohmann::json::parse(slurp(d / "point-001" / "results.json"))["deadlock"].is_null());
}

TEST_CASE("sweep: SIGINT stops the running point and still writes the table, marked interrupted") {
  const fs::path d = scratch("sweep_sigint");
  // Point 2 (8 GiB) takes minutes: the signal comes once point 1 is tabulated.
  const std::string cmd =
      std::string("cd ") + FABRICSIM_SOURCE_DIR + " && (" + FABRICSIM_BINARY +
      " sweep scenarios/quickstart.yaml --vary workload.maxbytes=16KiB,8GiB,16KiB --jobs 1 --out " +
      d.string() + " >/dev/null 2>&1 & pid=$!; i=0; while [ ! -f " + (d / "sweep.csv").string() +
      " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.2; kill -INT $pid; "
      "wait $pid)";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);  // points 1 and 2; point 3 never started
  CHECK(cell(t, 1, "status") == "complete");
  CHECK(cell(t, 2, "status") == "interrupted");
  CHECK(!fs::exists(d / "point-003"));
  const auto j = nlohmann::json::parse(slurp(d / "point-002" / "results.json"));
  CHECK(j["run"]["stop_reason"].get<std::string>().rfind("interrupted", 0) == 0);
}

TEST_CASE("lossless settings that cannot work are refused as bad input at the right key") {
  // Regressions: these ran into "internal error" (exit 1), or ran with lossless bytes far
  // beyond the buffer, or blamed a key the user had not written.
  const fs::path d = scratch("lossless_bad");
  const std::string base = slurp(fs::path(FABRICSIM_SOURCE_DIR) / "scenarios/pfc-victim-flow.yaml");
  auto with = [&](const std::string& name, const std::string& extra) {
    const fs::path p = d / name;
    std::ofstream(p) << base << extra;
    return p.string();
  };
  struct Case {
    std::string file, args, key, text;
  };
  const std::vector<Case> cases = {
      {with("a.yaml", "switches:\n  leaf1: {pfc: {enabled: true, xoff: 1B}}\n"),
       " --set pfc.enabled=false", "switches.leaf1.pfc.xoff", "must be above the XON offset"},
      {with("b.yaml", "switches:\n  leaf1: {ecn: {enabled: true, kmin: 300KB}}\n"), "",
       "switches.leaf1.ecn.kmin", "must be below kmax"},
      {with("c.yaml", ""), " --set pfc.xoff=1GB", "pfc.xoff", "exceed the port's buffer"},
      {with("d.yaml", ""),
       " --set ecn.enabled=true --set dcqcn.enabled=true --set dcqcn.min_rate=1Tbps",
       "dcqcn.min_rate", "exceeds the line rate"},
  };
  for (const Case& c : cases) {
    for (const char* cmd : {"validate ", "run "}) {
      const Result r = fabricsim(cmd + c.file + c.args);
      INFO(cmd << c.file << c.args << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find(c.key + ": ") != std::string::npos);
      CHECK(r.err.find(c.text) != std::string::npos);
    }
  }
  // A flow beyond 64 GiB (the sequence space of a queue pair at small MTUs): bad input.
  std::string big = base;
  big.replace(big.find("size: 8MiB}"), 11, "size: 5TB}");
  std::ofstream(d / "e.yaml") << big;
  const Result r = fabricsim("validate " + (d / "e.yaml").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("traffic[5].size: expected a size from 1B to 64GiB") != std::string::npos);
}

TEST_CASE(
    "collectives: every collective runs with nccl-tests' columns and the algorithm per size") {
  // nccl-tests' columns for 16 ranks and a 64 KiB request (count = per-rank elements for
  // all_gather, reduce_scatter and alltoall; redop none where nothing is reduced, root only for
  // broadcast and reduce), and the algorithm and protocol each size ran with.
  struct Case {
    const char* collective;
    const char* row_prefix;  // size, count, type, redop, root
    const char* algorithms;  // the ones the row may show
  };
  const Case cases[] = {
      {"all_reduce", "       65536         16384     float     sum      -1", "ring tree"},
      {"all_gather", "       65536          1024     float    none      -1", "ring pat"},
      {"reduce_scatter", "       65536          1024     float     sum      -1", "ring pat"},
      {"broadcast", "       65536         16384     float    none       0", "ring"},
      {"reduce", "       65536         16384     float     sum       0", "ring"},
      {"alltoall", "       65536          1024     float    none      -1", "p2p"},
      {"sendrecv", "       65536         16384     float     sum      -1", "p2p"},
  };
  for (const Case& c : cases) {
    INFO(c.collective);
    const Result r =
        fabricsim(std::string("run scenarios/quickstart.yaml --set workload.collective=") +
                  c.collective + " --set workload.minbytes=64KiB --set workload.maxbytes=64KiB");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const size_t at = r.out.find(c.row_prefix);
    REQUIRE(at != std::string::npos);
    std::istringstream row(r.out.substr(at, r.out.find('\n', at) - at));
    std::vector<std::string> cols;
    for (std::string w; row >> w;) cols.push_back(w);
    REQUIRE(cols.size() == 15);  // 13 nccl-tests columns, algorithm, protocol
    CHECK(std::string(c.algorithms).find(cols[13]) != std::string::npos);
    CHECK((cols[14] == "ll" || cols[14] == "ll128" || cols[14] == "simple"));
    CHECK(cols[5] == cols[9]);  // in-place repeats out-of-place
  }
}

TEST_CASE(
    "collectives: NCCL settings from the scenario, the environment and --set, in that order") {
  const std::string q = "run scenarios/quickstart.yaml --set workload.maxbytes=64KiB";
  auto algorithms = [](const std::string& out) {
    std::set<std::string> seen;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream row(line);
      std::vector<std::string> cols;
      for (std::string w; row >> w;) cols.push_back(w);
      if (cols.size() == 15) seen.insert(cols[13] + "/" + cols[14]);
    }
    return seen;
  };
  // NCCL's cost model picks Tree/LL for these small sizes on 16 nodes (NCCL 2.20 tuning.cc).
  const Result plain = fabricsim(q);
  REQUIRE(plain.exit_code == 0);
  CHECK(algorithms(plain.out) == std::set<std::string>{"tree/ll"});
  const Result ring = fabricsim(q + " --set nccl.algo=Ring");
  REQUIRE(ring.exit_code == 0);
  CHECK(algorithms(ring.out) == std::set<std::string>{"ring/ll"});
  // The environment overrides the scenario (NCCL reads it at init); --set overrides both.
  ::setenv("NCCL_PROTO", "Simple", 1);
  const Result env = fabricsim(q + " --out " + scratch("nccl_env").string());
  const Result env_and_set = fabricsim(q + " --set nccl.proto=LL128");
  ::setenv("NCCL_PROTO", "Simpel", 1);
  const Result bad_env = fabricsim(q);
  ::unsetenv("NCCL_PROTO");
  REQUIRE(env.exit_code == 0);
  CHECK(algorithms(env.out) == std::set<std::string>{"tree/simple"});
  CHECK(env.out.find("from the environment: NCCL_PROTO=Simple") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(scratch("nccl_env") / "results.json"));
  CHECK(j["nccl"]["environment"] == nlohmann::json::array({"NCCL_PROTO=Simple"}));
  CHECK(j["collectives"][0]["protocol"] == "simple");
  REQUIRE(env_and_set.exit_code == 0);
  CHECK(algorithms(env_and_set.out) == std::set<std::string>{"tree/ll128"});
  CHECK(bad_env.exit_code == 2);
  CHECK(bad_env.err.find("NCCL_PROTO") != std::string::npos);
  CHECK(bad_env.err.find("did you mean") != std::string::npos);
}
