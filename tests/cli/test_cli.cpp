// End-to-end: the fabricsim binary as a user runs it (exit codes, messages, output files).
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Result {
  int exit_code;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("fabricsim_test_cli_" + std::to_string(::getpid())) / name;
  fs::create_directories(dir);
  return dir;
}

/// Runs `fabricsim ARGS` from the source directory, capturing stdout, stderr and the exit code.
Result fabricsim(const std::string& args) {
  const fs::path dir = scratch("io");
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && " + FABRICSIM_BINARY +
                          " " + args + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"),
                slurp(dir / "err")};
}

const std::string kSmall = " --set workload.maxbytes=256KiB";

/// The rows of a CSV file without quoted fields (fabricsim's node names have no commas), header
/// skipped.
std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(slurp(p));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream cs(line);
    std::string cell;
    while (std::getline(cs, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("run prints the nccl-tests table and the summary") {
  const Result r = fabricsim("run scenarios/quickstart.yaml" + kSmall);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(
      r.out.find(
          "#       size         count      type   redop    root     time   algbw   busbw #wrong") !=
      std::string::npos);
  CHECK(r.out.find("        8192          2048     float     sum      -1") != std::string::npos);
  CHECK(r.out.find("      262144         65536     float     sum      -1") != std::string::npos);
  CHECK(r.out.find("# Avg bus bandwidth") != std::string::npos);
  CHECK(r.out.find("# counters   : drops 0") != std::string::npos);
}

TEST_CASE("same scenario and seed give byte-identical results.json; a new seed is recorded") {
  const fs::path a = scratch("a"), b = scratch("b"), c = scratch("c");
  REQUIRE(fabricsim("run scenarios/quickstart.yaml" + kSmall + " --out " + a.string()).exit_code ==
          0);
  REQUIRE(fabricsim("run scenarios/quickstart.yaml" + kSmall + " --out " + b.string()).exit_code ==
          0);
  REQUIRE(fabricsim("run scenarios/quickstart.yaml" + kSmall + " --seed 7 --out " + c.string())
              .exit_code == 0);
  const std::string ja = slurp(a / "results.json");
  REQUIRE(!ja.empty());
  CHECK(ja == slurp(b / "results.json"));
  for (const char* f : {"ports.csv", "queues.csv", "flows.csv", "trace.json"}) {
    INFO(f);
    CHECK(!slurp(a / f).empty());
    CHECK(slurp(a / f) == slurp(b / f));
  }
  CHECK(nlohmann::json::parse(slurp(c / "results.json"))["seed"] == 7);
}

TEST_CASE("results.json carries the DESIGN.md section 4 fields") {
  const fs::path d = scratch("fields");
  REQUIRE(fabricsim("run scenarios/quickstart.yaml" + kSmall + " --out " + d.string()).exit_code ==
          0);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["scenario"] == "quickstart");
  CHECK(j["seed"] == 1);
  for (const char* k :
       {"kind", "gpus", "switches", "links", "oversubscription", "bisection_bandwidth_bps"}) {
    CHECK(j["fabric"].contains(k));
  }
  CHECK(j["fabric"]["kind"] == "spine-leaf");
  CHECK(j["fabric"]["gpus"] == 16);     // 4 leaves x 4 hosts in the file
  CHECK(j["fabric"]["switches"] == 8);  // 4 leaves + 4 spines
  CHECK(j["fabric"]["links"] == 32);    // 16 host links + 4 x 4 uplinks
  // 1:1, two halves of 2 leaves: 2 x 4 x 400 Gb/s cross the cut.
  CHECK(j["fabric"]["bisection_bandwidth_bps"] == int64_t{3'200'000'000'000});
  REQUIRE(j["collectives"].size() == 6);  // 8 KiB … 256 KiB by 2
  for (const auto& row : j["collectives"]) {
    for (const char* k : {"collective", "algorithm", "protocol", "ranks", "size_bytes", "time_us",
                          "algbw_GBps", "busbw_GBps"}) {
      CHECK(row.contains(k));
    }
    CHECK(row["collective"] == "all_reduce");
    // nccl-tests: algbw = S / t (GB = 1e9 B), busbw = algbw x 2(n-1)/n.
    const double t_s = row["time_us"].get<double>() * 1e-6;
    CHECK(row["algbw_GBps"].get<double>() == Approx(row["size_bytes"].get<double>() / t_s / 1e9));
    CHECK(row["busbw_GBps"].get<double>() == Approx(row["algbw_GBps"].get<double>() * 2 * 15 / 16));
  }
  for (const char* k : {"drops", "retransmits", "pfc_pause_tx", "pfc_pause_rx", "ecn_marked",
                        "cnp_tx", "max_queue_bytes"}) {
    CHECK(j["counters"].contains(k));
  }
  CHECK(j["deadlock"].is_null());
  CHECK(j["run"]["events"].get<int64_t>() > 0);
  CHECK(j["run"]["simulated_ps"].get<int64_t>() > 0);
  const auto perf = nlohmann::json::parse(slurp(d / "perf.json"));
  for (const char* k : {"wall_s", "events_per_s", "packet_hops_per_s", "peak_rss_bytes"})
    CHECK(perf.contains(k));
  CHECK(slurp(d / "ports.csv").rfind("node,port,peer,", 0) == 0);
}

TEST_CASE("bad input exits 2 with a message that says where and what") {
  SECTION("misspelt key: line, column, key path and the suggestion") {
    const Result r = fabricsim("run tests/data/cli/misspelt_key.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("misspelt_key.yaml:13:3") != std::string::npos);
    CHECK(r.err.find("topology.leavs") != std::string::npos);
    CHECK(r.err.find("did you mean 'leaves'") != std::string::npos);
  }
  SECTION("negative rate") {
    const Result r = fabricsim("validate tests/data/cli/negative_rate.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("negative_rate.yaml:19:") != std::string::npos);
    CHECK(r.err.find("link.host_rate") != std::string::npos);
    CHECK(r.err.find("negative") != std::string::npos);
  }
  SECTION("zero MTU") {
    const Result r = fabricsim("validate tests/data/cli/zero_mtu.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("zero_mtu.yaml:28:") != std::string::npos);
    CHECK(r.err.find("nic.mtu") != std::string::npos);
  }
  SECTION("missing file") {
    const Result r = fabricsim("run scenarios/no_such_file.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no_such_file.yaml") != std::string::npos);
    CHECK(r.err.find("No such file") != std::string::npos);
  }
  SECTION("misspelt --set key") {
    const Result r =
        fabricsim("validate scenarios/quickstart.yaml --set topology.oversubscriptoin=3");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("did you mean 'topology.oversubscription'") != std::string::npos);
  }
  SECTION("an oversubscription the spines cannot build names buildable ratios") {
    const Result r =
        fabricsim("validate scenarios/quickstart.yaml --set topology.oversubscription=3");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("topology.oversubscription") != std::string::npos);
    // 4 hosts x 400G per leaf and 4 spines: only 4 uplinks (1:1) divide evenly; 3:1 needs 1.33.
    CHECK(r.err.find("1:1") != std::string::npos);
  }
  SECTION("unknown command") {
    const Result r = fabricsim("rnu scenarios/quickstart.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("did you mean 'run'") != std::string::npos);
  }
}

TEST_CASE("validate accepts the quickstart and topo --json describes its fabric") {
  CHECK(fabricsim("validate scenarios/quickstart.yaml").exit_code == 0);
  const Result r = fabricsim("topo scenarios/quickstart.yaml --json --set topology.spines=2");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["switches"] == 6);
  CHECK(j["links"] == 32);  // 2 parallel uplinks to each of 2 spines
}

TEST_CASE("SIGINT during a long run still writes the finished sizes, marked incomplete") {
  const fs::path d = scratch("sigint");
  // A sweep to 8 GiB takes minutes; the signal arrives long before the end.
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && (" + FABRICSIM_BINARY +
                          " run scenarios/quickstart.yaml --set workload.maxbytes=8GiB --out " +
                          d.string() +
                          " >/dev/null 2>&1 & pid=$!; sleep 2; kill -INT $pid; wait $pid)";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["run"]["complete"] == false);
  CHECK(j["run"]["stop_reason"].get<std::string>().rfind("interrupted", 0) == 0);
  CHECK(j["collectives"].size() >= 1);  // 8 KiB alone takes milliseconds
  CHECK(j["collectives"].size() < 21);  // 8 KiB … 8 GiB is 21 sizes
}

TEST_CASE("every scenario in scenarios/ validates, describes its fabric and runs a small sweep") {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(FABRICSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    ++seen;
    const std::string rel = "scenarios/" + entry.path().filename().string();
    INFO(rel);
    CHECK(fabricsim("validate " + rel).exit_code == 0);
    const Result topo = fabricsim("topo --json " + rel);
    REQUIRE(topo.exit_code == 0);
    const auto j = nlohmann::json::parse(topo.out);
    // The closed-form bisection is checked by a max-flow on every shipped fabric.
    CHECK(j["bisection_maxflow_bps"] == j["bisection_bandwidth_bps"]);
    CHECK(j["diameter_hops"].get<int>() >= 2);
    const std::string name = entry.path().stem().string();
    const bool deadlocks = name.rfind("pfc-deadlock-", 0) == 0 && name.size() > 6 &&
                           name.substr(name.size() - 6) != "-fixed";
    const Result run =
        fabricsim("run " + rel + " --set workload.minbytes=64KiB --set workload.maxbytes=64KiB");
    INFO(run.err);
    CHECK(run.exit_code == (deadlocks ? 3 : 0));
  }
  CHECK(seen >= 4);  // one per fabric family
}

TEST_CASE(
    "every scenarios/pfc-deadlock-*.yaml deadlocks with its cycle; its -fixed twin completes") {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(FABRICSIM_SOURCE_DIR) / "scenarios")) {
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() != ".yaml" || name.rfind("pfc-deadlock-", 0) != 0 ||
        name.substr(name.size() - 6) == "-fixed") {
      continue;
    }
    ++seen;
    INFO(name);
    const fs::path a = scratch("deadlock-" + name), b = scratch("fixed-" + name);
    const Result bad = fabricsim("run scenarios/" + name + ".yaml --out " + a.string());
    INFO(bad.out << bad.err);
    CHECK(bad.exit_code == 3);
    const auto j = nlohmann::json::parse(slurp(a / "results.json"));
    REQUIRE(j["deadlock"].is_object());
    CHECK(j["deadlock"]["detected_at_ps"].get<int64_t>() > 0);
    const auto& cycle = j["deadlock"]["cycle"];
    REQUIRE(cycle.size() >= 2);
    for (const auto& q : cycle) {  // "switch:port:priority"
      const std::string s = q.get<std::string>();
      CHECK(std::count(s.begin(), s.end(), ':') == 2);
    }
    CHECK(j["run"]["complete"] == false);
    CHECK(j["counters"]["drops"] == 0);  // lossless: stuck, not lost
    const fs::path fixed = fs::path(FABRICSIM_SOURCE_DIR) / "scenarios" / (name + "-fixed.yaml");
    REQUIRE(fs::exists(fixed));
    const Result good = fabricsim("run scenarios/" + name + "-fixed.yaml --out " + b.string());
    INFO(good.err);
    CHECK(good.exit_code == 0);
    const auto k = nlohmann::json::parse(slurp(b / "results.json"));
    CHECK(k["deadlock"].is_null());
    CHECK(k["run"]["complete"] == true);
  }
  CHECK(seen >= 2);
}

TEST_CASE("topology bad input exits 2 naming the key") {
  struct Case {
    std::string args, key, text;
  };
  const Case cases[] = {
      {"scenarios/fat_tree_k8.yaml --set topology.k=7", "topology.k", "even"},
      {"scenarios/fat_tree_k8.yaml --set topology.oversubscription=2", "topology.oversubscription",
       "3:1"},  // k = 8 splits 6:2, 5:3, 4:4, 7:1 — 2:1 is not among them
      // An item of an overridden list names the override, not a position in the file.
      {"scenarios/torus_4x4x4.yaml --set topology.dims=[4,1]",
       "--set topology.dims=[4,1]: topology.dims[1]", "expected an integer from 2 to 32767"},
      {"scenarios/rail_optimized_h100_su.yaml --set topology.rails=4", "topology.", "rails"},
      {"scenarios/torus_4x4x4.yaml --set topology.leaves=4", "topology.leaves",
       "applies to topology kind spine-leaf"},
      {"scenarios/quickstart.yaml --set topology.failed_links=[leaf0-spnie1]",
       "topology.failed_links", "did you mean 'spine1'"},
      {"scenarios/quickstart.yaml --set routing.algorithm=dimension_order", "routing.algorithm",
       "needs a torus"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = fabricsim("validate " + c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.key) != std::string::npos);
    CHECK(r.err.find(c.text) != std::string::npos);
  }
}

TEST_CASE("topo prints the metrics table and writes DOT with Boost's writer") {
  const fs::path d = scratch("dot");
  const Result r = fabricsim("topo scenarios/quickstart.yaml --dot " + (d / "f.dot").string());
  REQUIRE(r.exit_code == 0);
  for (const char* row :
       {"bisection bandwidth : 3.2 Tb/s (closed form), 3.2 Tb/s (max-flow check)",
        "diameter            : 4 hops", "nodes               : gpu 16, leaf 4, spine 4"}) {
    CHECK(r.out.find(row) != std::string::npos);
  }
  // 16 GPUs: 48 switch ports x 656.25 + 16 NICs x 2400 + 16 + 16 cables x 320
  // (configs/cost_example.yaml).
  CHECK(r.out.find("USD 80140") != std::string::npos);
  const std::string dot = slurp(d / "f.dot");
  CHECK(dot.rfind("graph G {", 0) == 0);
  CHECK(dot.find("host0--leaf0") != std::string::npos);
}

TEST_CASE("inputs a fresh user found to end in internal errors are bad input (exit 2)") {
  struct Case {
    std::string args, text;
  };
  const Case cases[] = {
      {"run scenarios/quickstart.yaml --set topology.leaves=1 --set topology.hosts_per_leaf=1 "
       "--set topology.spines=1",
       "needs at least 2 GPUs; this fabric has 1"},
      {"run scenarios/quickstart.yaml --set switch.buffer_model=static "
       "--set switch.buffer_per_port=4096B",
       "switch.buffer_per_port: smaller than one full frame (4178 B at MTU 4096B)"},
      {"run scenarios/quickstart.yaml --seed -1", "--seed -1: expected a non-negative integer"},
      {"run scenarios/quickstart.yaml --out /proc/fabricsim", "--out /proc/fabricsim"},
      {"run scenarios/quickstart.yaml --out ''", "expected a directory name"},
      {"validate /dev/zero", "larger than 16 MiB"},
      {"validate scenarios/fat_tree_k8.yaml --set topology.k=120", "routing tables"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = fabricsim(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.text) != std::string::npos);
  }
  CHECK(fabricsim("help").exit_code == 0);
}

TEST_CASE("a zero-count size takes no time, as NCCL returns at once") {
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.minbytes=1B --set workload.maxbytes=2B");
  REQUIRE(r.exit_code == 0);
  // sizes 1 and 2 bytes hold no whole float: count 0, time 0.
  CHECK(
      r.out.find("           0             0     float     sum      -1     0.00    0.00    0.00") !=
      std::string::npos);
}

TEST_CASE("a name that is not UTF-8 still gives a valid results.json") {
  const fs::path d = scratch("latin1");
  const Result r = fabricsim("run tests/data/cli/latin1_name.yaml --out " + d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["scenario"] == "caf\xEF\xBF\xBD");  // é in Latin-1 became U+FFFD
}

TEST_CASE(
    "errors found after loading point where the value was given, and suggest typable ratios") {
  // From --set: the override is named, not the file.
  const Result r = fabricsim(
      "validate scenarios/quickstart.yaml --set topology.spines=3 --set "
      "topology.oversubscription=2");
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("--set topology.oversubscription=2: topology.oversubscription:", 0) == 0);
  // 4 hosts x 400G over 3 spines: one uplink per spine is 1200G, i.e. 1600:1200 = 4:3 ...
  CHECK(r.err.find("ratios that can be built here: 4:3") != std::string::npos);
  // ... which reads back exactly.
  CHECK(fabricsim("validate scenarios/quickstart.yaml --set topology.spines=3 --set "
                  "topology.oversubscription=4:3")
            .exit_code == 0);
  // From the file: its line and column (quickstart.yaml line 17 holds `oversubscription: 1`).
  const Result f = fabricsim("validate scenarios/quickstart.yaml --set topology.spines=3");
  CHECK(f.exit_code == 2);
  CHECK(f.err.rfind("scenarios/quickstart.yaml:17:21: topology.oversubscription:", 0) == 0);
}

TEST_CASE(
    "architect-user findings: maps in --set, rail-only and multi-plane from the command line, size "
    "caps") {
  // A map value through --set (regression: refused), and the degraded link is its own class.
  const Result d = fabricsim(
      "topo scenarios/quickstart.yaml --set 'topology.degraded_links={leaf1-spine2: 200Gbps}'");
  REQUIRE(d.exit_code == 0);
  CHECK(d.out.find("leaf-spine 15 x 400 Gb/s; leaf-spine 1 x 200 Gb/s") != std::string::npos);
  // leaf1: 4 x 400G of hosts over 3 x 400G + 200G of uplinks = 1600:1400 = 8:7.
  CHECK(d.out.find("leaf 1.14286:1") != std::string::npos);
  // rail_only reachable with --set (regression: spines could not be set to 0).
  CHECK(fabricsim("topo scenarios/rail_optimized_h100_su.yaml --set topology.rail_only=true --set "
                  "topology.spines=0")
            .exit_code == 0);
  // Two planes with one NIC per GPU route across planes through NVLink (regression: no route).
  CHECK(fabricsim("run scenarios/rail_optimized_h100_su.yaml --set topology.planes=2 --set "
                  "topology.rails=4 "
                  "--set workload.maxbytes=64KiB")
            .exit_code == 0);
  // Refused before building (regression: bad_alloc after 9 GB).
  const Result big = fabricsim(
      "topo scenarios/quickstart.yaml --set topology.leaves=1000000 --set "
      "topology.hosts_per_leaf=1000000");
  CHECK(big.exit_code == 2);
  CHECK(big.err.find("at most 1000000") != std::string::npos);
  CHECK(
      fabricsim("topo scenarios/rail_optimized_h100_su.yaml --set topology.scalable_units=1000000")
          .exit_code == 2);
}

TEST_CASE("validate also checks the cost_model file the scenario names") {
  const Result r = fabricsim(
      "validate scenarios/quickstart.yaml --set cost_model=../configs/no_such_prices.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no_such_prices.yaml") != std::string::npos);
}

TEST_CASE("trace.json is Chrome trace JSON: message spans and queue counters, capped with a note") {
  const fs::path d = scratch("trace"), small = scratch("trace_cap");
  REQUIRE(fabricsim("run scenarios/quickstart.yaml" + kSmall + " --out " + d.string()).exit_code ==
          0);
  const auto t = nlohmann::json::parse(slurp(d / "trace.json"));
  REQUIRE(t.is_array());
  int begins = 0, ends = 0, counters = 0;
  for (const auto& e : t) {
    begins += e["ph"] == "b";
    ends += e["ph"] == "e";
    counters += e["ph"] == "C";
  }
  // One span per message: 6 sizes x 2 (16 - 1) ring steps x 16 ranks.
  CHECK(begins == 6 * 30 * 16);
  CHECK(ends == begins);
  CHECK(counters > 0);
  const Result r = fabricsim("run scenarios/quickstart.yaml" + kSmall +
                             " --trace-events 100 --out " + small.string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("stopped at the cap of 100") != std::string::npos);
  const auto capped = nlohmann::json::parse(slurp(small / "trace.json"));
  int events = 0;
  bool note = false;
  for (const auto& e : capped) {
    if (e["ph"] != "M") ++events;
    if (e["name"].get<std::string>().find("trace truncated") != std::string::npos) note = true;
  }
  CHECK(events == 101);  // the cap plus the note
  CHECK(note);
  CHECK(fabricsim("run scenarios/quickstart.yaml --trace-events -5").exit_code == 2);
}

TEST_CASE("a lossy run recovers by go-back-N and its byte balance holds in results.json") {
  // Every link corrupts about 1 frame in 300 (BER 1e-6 x 33,424 bits): the run completes with
  // retransmissions, and sent = delivered + dropped + in flight.
  const fs::path d = scratch("lossy");
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.maxbytes=1MiB"
      " --set link.bit_error_rate=1e-7 --set nic.rto=20us --out " +
      d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["counters"]["corrupt_drops"].get<int64_t>() > 0);
  CHECK(j["counters"]["retransmits"].get<int64_t>() > 0);
  // Regressions (second fresh-user run): a port counted a frame when it started sending it,
  // its queue when it finished, so they disagreed by the frame in flight; and a percentile
  // quoted as a bucket edge could exceed the port's peak.
  std::map<std::string, int64_t> port_tx, queue_tx;
  for (const auto& row : csv_rows(d / "ports.csv")) {
    // node,port,peer,rate_bps,tx_packets,...,max_queue_bytes,avg,p50,p99,p999
    const std::string key = row.at(0) + ":" + row.at(1);
    port_tx[key] = std::stoll(row.at(4));
    const int64_t max = std::stoll(row.at(11)), p50 = std::stoll(row.at(13)),
                  p99 = std::stoll(row.at(14)), p999 = std::stoll(row.at(15));
    INFO(key);
    CHECK(p50 <= p99);
    CHECK(p99 <= p999);
    CHECK(p999 <= max);
  }
  for (const auto& row : csv_rows(d / "queues.csv")) {
    queue_tx[row.at(0) + ":" + row.at(1)] += std::stoll(row.at(4));
  }
  for (const auto& [key, tx] : port_tx) {
    INFO(key);
    CHECK(tx == (queue_tx.count(key) ? queue_tx[key] : 0));
  }
  const auto& c = j["conservation"];
  CHECK(c["sent_bytes"].get<int64_t>() == c["delivered_bytes"].get<int64_t>() +
                                              c["dropped_bytes"].get<int64_t>() +
                                              c["in_flight_bytes"].get<int64_t>());
}

TEST_CASE("shared buffers whose reservations leave no pool are bad input") {
  // quickstart's leaves have 8 ports: 8 x 8 queues x 9216 B reserved = 589,824 B > 500 KB.
  const Result r =
      fabricsim("run scenarios/quickstart.yaml --set switch.shared_buffer=500KB" + kSmall);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("switch.shared_buffer") != std::string::npos);
  CHECK(r.err.find("reserve 589824 B") != std::string::npos);
}

TEST_CASE("fresh-user findings on the packet model: RTO floor, stale trace, refused runs") {
  SECTION("an RTO shorter than any round trip is bad input, not 7 instant timeouts") {
    // quickstart: 4178 B at 400G (83.56 ns) + 86 B ACK (1.72 ns) + 4 x 250 ns + 2 x 500 ns.
    const Result r = fabricsim("run scenarios/quickstart.yaml --set nic.rto=1ns" + kSmall);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nic.rto: 1 ns is shorter than the fastest possible round trip (2.08528 us") !=
          std::string::npos);
  }
  SECTION("--trace-events 0 leaves no trace.json of an earlier run") {
    const fs::path d = scratch("stale_trace");
    REQUIRE(
        fabricsim("run scenarios/quickstart.yaml" + kSmall + " --out " + d.string()).exit_code ==
        0);
    REQUIRE(fs::exists(d / "trace.json"));
    REQUIRE(fabricsim("run scenarios/quickstart.yaml" + kSmall + " --trace-events 0 --out " +
                      d.string())
                .exit_code == 0);
    CHECK(!fs::exists(d / "trace.json"));
  }
  SECTION("a run refused as bad input writes and prints nothing") {
    const fs::path d = scratch("refused");
    REQUIRE(
        fabricsim("run scenarios/quickstart.yaml" + kSmall + " --out " + d.string()).exit_code ==
        0);
    const std::string trace = slurp(d / "trace.json"), results = slurp(d / "results.json");
    const Result r = fabricsim("run scenarios/quickstart.yaml --set switch.shared_buffer=500KB" +
                               kSmall + " --out " + d.string());
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(slurp(d / "trace.json") == trace);
    CHECK(slurp(d / "results.json") == results);
  }
  SECTION("reordering by per-packet spraying over a degraded uplink completes") {
    const Result r = fabricsim(
        "run scenarios/quickstart.yaml --set routing.load_balancing=per_packet"
        " --set 'topology.degraded_links={leaf3-spine0: 10Gbps}' --set workload.minbytes=128KiB"
        " --set workload.maxbytes=128KiB");
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("ecn: marks are counted in results.json and per queue; kmin must be below kmax") {
  // The quickstart's ring queues a frame or two at leaf egresses: with kmin 0 and kmax 4 KB
  // (less than one 4178-byte frame), every data packet that finds a frame ahead is marked.
  const fs::path d = scratch("ecn");
  const Result r = fabricsim("run scenarios/quickstart.yaml" + kSmall +
                             " --set ecn.enabled=true --set ecn.kmin=0B --set ecn.kmax=4KB"
                             " --out " +
                             d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  const int64_t marked = j["counters"]["ecn_marked"].get<int64_t>();
  CHECK(marked > 0);
  int64_t per_queue = 0;
  for (const auto& row : csv_rows(d / "queues.csv")) per_queue += std::stoll(row.at(11));
  CHECK(per_queue == marked);
  const Result bad = fabricsim("validate scenarios/quickstart.yaml --set ecn.kmin=300KB");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("ecn.kmin (300000 B) must be below ecn.kmax (200000 B)") != std::string::npos);
  CHECK(fabricsim("validate scenarios/quickstart.yaml --set ecn.pmax=2").exit_code == 2);
  CHECK(fabricsim("validate scenarios/quickstart.yaml --set ecn.mark_at=egress").exit_code == 2);
}
