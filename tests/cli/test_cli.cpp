// End-to-end: the fabricsim binary as a user runs it (exit codes, messages, output files).
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

TEST_CASE("same scenario and seed give byte-identical results.json — a new seed is recorded") {
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
  CHECK(j["fabric"]["server_profile"].is_null());  // the quickstart names no server profile
  REQUIRE(j["collectives"].size() == 6);           // 8 KiB … 256 KiB by 2
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

TEST_CASE("a reader of stdout that went away does not stop run or sweep before their files") {
  // stdout is a pipe whose read end is already closed: the first write raises SIGPIPE, which
  // killed the process (exit 141) with its --out directory empty.
  for (const char* command : {"run", "sweep"}) {
    INFO(command);
    const fs::path d = scratch(std::string("sigpipe_") + command);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::close(fds[0]);
    const bool sweep = std::string(command) == "sweep";
    const std::string set = sweep ? "--vary" : "--set";
    const std::string value = sweep ? "workload.maxbytes=32KiB,64KiB" : "workload.maxbytes=64KiB";
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[1]);
      if (::chdir(FABRICSIM_SOURCE_DIR) == 0) {
        ::execl(FABRICSIM_BINARY, FABRICSIM_BINARY, command, "scenarios/quickstart.yaml",
                set.c_str(), value.c_str(), "--out", d.c_str(), static_cast<char*>(nullptr));
      }
      ::_exit(127);
    }
    ::close(fds[1]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(fs::exists(d / (sweep ? "point-002/results.json" : "results.json")));
    if (sweep) CHECK(fs::exists(d / "sweep.csv"));
  }
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
    // The closed-form bisection is checked by a max-flow on every shipped fabric; the closed
    // form is the design figure, so with failed links the max-flow may only be lower.
    const bool faults = slurp(entry.path()).find("failed_links") != std::string::npos;
    if (faults) {
      CHECK(j["bisection_maxflow_bps"] <= j["bisection_bandwidth_bps"]);
    } else {
      CHECK(j["bisection_maxflow_bps"] == j["bisection_bandwidth_bps"]);
    }
    CHECK(j["diameter_hops"].get<int>() >= 2);
    const std::string name = entry.path().stem().string();
    const bool deadlocks = name.rfind("pfc-deadlock-", 0) == 0 && name.size() > 6 &&
                           name.substr(name.size() - 6) != "-fixed";
    // A training step is cut to one small layer, background arrivals to 200 us (the scenario's
    // own runs by hand).
    const bool training = slurp(entry.path()).find("\ntraining:") != std::string::npos;
    const bool background = slurp(entry.path()).find("\nbackground:") != std::string::npos;
    // Jobs run their own sizes: cut to 64 KiB each.
    const bool jobs = slurp(entry.path()).find("\njobs:") != std::string::npos;
    const Result run =
        fabricsim("run " + rel +
                  (jobs ? std::string(" --set jobs.size=64KiB")
                        : " --set workload.minbytes=64KiB --set workload.maxbytes=64KiB") +
                  (training ? " --set 'training={dp: 2, tp: 8, layers: [{fwd_time: 10us, params: "
                              "1MiB, tp_comm: 64KiB}]}'"
                            : "") +
                  (background ? " --set background.duration=200us" : ""));
    INFO(run.err);
    CHECK(run.exit_code == (deadlocks ? 3 : 0));
  }
  CHECK(seen >= 4);  // one per fabric family
}

TEST_CASE(
    "every scenarios/pfc-deadlock-*.yaml deadlocks with its cycle — its -fixed twin completes") {
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

TEST_CASE("a whole section given by --set replaces the file's, so a sweep can vary the family") {
  // A k-ary fat-tree has k^3/4 hosts and 5k^2/4 switches (Al-Fares et al. 2008).
  const Result r =
      fabricsim("topo scenarios/quickstart.yaml --json --set 'topology={kind: fat-tree, k: 4}'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["kind"] == "fat-tree");
  CHECK(j["gpus"] == 4 * 4 * 4 / 4);
  CHECK(j["switches"] == 5 * 4 * 4 / 4);
  // The file's spine-leaf keys are gone with its section: no "applies to another kind" error.
  const Result typo =
      fabricsim("validate scenarios/quickstart.yaml --set 'topology={kind: fat-tree, kk: 4}'");
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("topology.kk: unknown key 'kk'; did you mean 'k'?") != std::string::npos);
  const Result scalar = fabricsim("validate scenarios/quickstart.yaml --set topology=3");
  CHECK(scalar.exit_code == 2);
  CHECK(scalar.err.find("or give the whole section as a map") != std::string::npos);
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
  // 16 GPUs on RoCE, so Ethernet switch ports (configs/cost_example.yaml roce: 522.95):
  // 48 switch ports x 522.95 + 16 NICs x 2400 + 16 + 16 cables x 320 = 73,741.6.
  CHECK(r.out.find("USD 73742 (switch ports 25102, NICs 38400, host links 5120, fabric links "
                   "5120)") != std::string::npos);
  const std::string dot = slurp(d / "f.dot");
  CHECK(dot.rfind("graph G {", 0) == 0);
  CHECK(dot.find("host0--leaf0") != std::string::npos);
}

TEST_CASE(
    "a fabric of one GPU, a buffer below one frame, a bad --seed or --out, a device file and "
    "routing tables beyond memory are bad input (exit 2), not internal errors") {
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
      {"validate /dev/zero", "it is a character device, not a regular file"},
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

TEST_CASE("maps in --set, rail-only and multi-plane from the command line, and size caps") {
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
  REQUIRE(fabricsim("run scenarios/quickstart.yaml" + kSmall +
                    " --set workload.algorithm=ring --set workload.protocol=simple --out " +
                    d.string())
              .exit_code == 0);
  const auto t = nlohmann::json::parse(slurp(d / "trace.json"));
  REQUIRE(t.is_array());
  int begins = 0, ends = 0, counters = 0;
  for (const auto& e : t) {
    begins += e["ph"] == "b";
    ends += e["ph"] == "e";
    counters += e["ph"] == "C";
  }
  // One span per message: 2 (16 - 1) ring steps x 16 ranks per channel and size (each size is
  // one loop: 256 KiB is under 16 ranks x 2 MiB chunks). NCCL keeps a second channel only from
  // 2 x 512 threads x 64 bytes = 64 KiB on: 8, 16, 32 KiB on 1 channel, 64, 128, 256 KiB on 2.
  CHECK(begins == 30 * 16 * (3 * 1 + 3 * 2));
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
  // The summary says how much of the run the trace covers: up to the note's time (trace.json
  // timestamps are in us), of the simulated time in results.json.
  double note_us = -1;
  for (const auto& e : capped) {
    if (e["name"].get<std::string>().find("trace truncated") != std::string::npos)
      note_us = e["ts"];
  }
  const double sim_us =
      nlohmann::json::parse(slurp(small / "results.json"))["run"]["simulated_ps"].get<double>() /
      1e6;
  char covers[160];
  std::snprintf(covers, sizeof covers, "covering the first %.3f us of %.3f us simulated (%.1f %%)",
                note_us, sim_us, 100 * note_us / sim_us);
  INFO(r.out);
  CHECK(r.out.find(covers) != std::string::npos);
  CHECK(fabricsim("run scenarios/quickstart.yaml --trace-events -5").exit_code == 2);
}

TEST_CASE("a training step stopped by --max-events counts its messages, not traffic flows") {
  // The summary said "traffic flows delivered" for the step's collective messages; a
  // scenario with traffic flows keeps that wording.
  const Result r = fabricsim("run scenarios/training_step_h100.yaml --max-events 200000");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 124);
  CHECK(r.out.find(" training-step messages delivered, FCT p50 ") != std::string::npos);
  CHECK(r.out.find("traffic flows delivered") == std::string::npos);
  const Result t = fabricsim("run scenarios/pfc-victim-flow.yaml");
  INFO(t.out << t.err);
  CHECK(t.exit_code == 0);
  CHECK(t.out.find("# flows      : 6 traffic flows delivered") != std::string::npos);
}

TEST_CASE(
    "Run limits: --max-events and --max-wall stop a run cleanly with what completed, exit 124") {
  // The event cap: exactly the events asked for run, the sizes finished before it are kept,
  // results.json says the run is incomplete and why.
  const fs::path capped = scratch("limits") / "events";
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --max-events 100000 --trace-events 0"
      " --out " +
      capped.string());
  INFO(r.err);
  CHECK(r.exit_code == 124);
  CHECK(r.err.find("fabricsim: run stopped at --max-events 100000 during size ") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(slurp(capped / "results.json"));
  CHECK(j["run"]["events"].get<int64_t>() == 100000);
  CHECK(j["run"]["complete"] == false);
  const std::string reason = j["run"]["stop_reason"];
  CHECK(reason.rfind("stopped at --max-events 100000 during size ", 0) == 0);
  const int64_t stopped_in = std::stoll(reason.substr(reason.rfind(' ', reason.size() - 3) + 1));
  for (const auto& row : j["collectives"]) CHECK(row["size_bytes"].get<int64_t>() < stopped_in);

  // The wall-clock limit: a run of several seconds (the k = 8 fat-tree's 64 MiB ring) stops
  // after 1 s and still writes its results.
  const fs::path walled = scratch("limits") / "wall";
  const Result w = fabricsim(
      "run scenarios/fat_tree_k8.yaml --set nccl.algo=Ring"
      " --set workload.minbytes=64MiB --set workload.maxbytes=64MiB"
      " --max-wall 1s --trace-events 0 --out " +
      walled.string());
  INFO(w.err);
  CHECK(w.exit_code == 124);
  const auto k = nlohmann::json::parse(slurp(walled / "results.json"));
  CHECK(k["run"]["complete"] == false);
  CHECK(k["run"]["stop_reason"] == "stopped at --max-wall 1 s during size 67108864 B");
  CHECK(k["run"]["events"].get<int64_t>() > 0);
  CHECK(fs::exists(walled / "perf.json"));
}

TEST_CASE("topo --partitions prints the split and a bad N exits 2") {
  // k = 8 fat-tree in 2 parts: pods 0-3 and 4-7, cores 0-7 and 8-15. Agg a (local 0..3) of
  // every pod links to cores 4a..4a+3, so aggs 0,1 reach part 0's cores and aggs 2,3 part 1's:
  // in each of the 8 pods 2 aggs x 4 links cross, 64 in all.
  const Result r = fabricsim("topo scenarios/fat_tree_k8.yaml --partitions 2");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("partition           : 2 parts, method topology: by pod (8 pods") !=
        std::string::npos);
  CHECK(r.out.find("  part 0            : 104 nodes, 64 hosts, 384 ports\n") != std::string::npos);
  CHECK(r.out.find("cut links           : 64\n") != std::string::npos);
  CHECK(r.out.find("lookahead           : 250 ns") != std::string::npos);
  CHECK(r.out.find("imbalance           : 1.000") != std::string::npos);

  const Result j = fabricsim("topo scenarios/fat_tree_k8.yaml --json --partitions 2");
  REQUIRE(j.exit_code == 0);
  const auto part = nlohmann::json::parse(j.out)["partition"];
  CHECK(part["parts"] == 2);
  CHECK(part["method"] == "topology");
  CHECK(part["cut_links"] == 64);
  CHECK(part["lookahead_ps"] == 250'000);
  REQUIRE(part["per_part"].size() == 2);
  CHECK(part["per_part"][1]["hosts"] == 64);

  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--partitions 0", "--partitions 0: expected a positive integer"},
           {"--partitions two", "--partitions two: expected a positive integer"},
           {"--partitions 100000",
            "--partitions 100000: 100000 parts: expected 1 to the "
            "fabric's 208 nodes"},
           {"--partitions 2 --partition-method best", "expected auto, topology or metis"},
           {"--partition-method metis", "--partition-method needs --partitions N"}}) {
    INFO(args);
    const Result bad = fabricsim("topo scenarios/fat_tree_k8.yaml " + args);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find(message) != std::string::npos);
  }
}

TEST_CASE("results.json does not depend on how the scenario's path was typed") {
  // The cost model's and the measured log's paths were resolved against the scenario's path as
  // typed, so `run scenarios/x.yaml` and `run /abs/scenarios/x.yaml` wrote different files.
  for (const std::string scenario : {"quickstart.yaml", "roce_h200_a3ultra.yaml"}) {
    INFO(scenario);
    const fs::path rel = scratch("typed_rel"), abs = scratch("typed_abs"), up = scratch("typed_up");
    const std::string small = " --set workload.maxbytes=64KiB";
    REQUIRE(fabricsim("run scenarios/" + scenario + small + " --out " + rel.string()).exit_code ==
            0);
    REQUIRE(fabricsim("run " + (fs::path(FABRICSIM_SOURCE_DIR) / "scenarios" / scenario).string() +
                      small + " --out " + abs.string())
                .exit_code == 0);
    REQUIRE(fabricsim("run scenarios/../scenarios/./" + scenario + small + " --out " + up.string())
                .exit_code == 0);
    const std::string a = slurp(rel / "results.json");
    REQUIRE(!a.empty());
    CHECK(a == slurp(abs / "results.json"));
    CHECK(a == slurp(up / "results.json"));
    // The paths are recorded as the scenario writes them.
    const auto j = nlohmann::json::parse(a);
    CHECK(j["fabric"]["cost_breakdown_usd"]["prices"] == "../configs/cost_example.yaml");
    if (scenario == "roce_h200_a3ultra.yaml") {
      CHECK(j["measured"]["nccl_tests"] ==
            "../tests/data/nccl/nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt");
    }
  }
}

TEST_CASE("results.json depends_on names the congestion settings a result leans on") {
  const auto run = [&](const std::string& args, const std::string& name) {
    const fs::path d = scratch("depends_" + name);
    const Result r = fabricsim("run " + args + " --trace-events 0 --out " + d.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return std::make_pair(nlohmann::json::parse(slurp(d / "results.json")), r.out);
  };
  // An idle fabric: nothing paused, marked or dropped; nothing to name.
  const auto [quiet, quiet_out] = run("scenarios/quickstart.yaml" + kSmall, "quiet");
  CHECK(quiet["depends_on"].empty());
  CHECK(quiet_out.find("# depends on") == std::string::npos);
  // The victim-flow incast: PFC holds the senders.
  const auto [pfc, pfc_out] = run("scenarios/pfc-victim-flow.yaml", "pfc");
  REQUIRE(pfc["depends_on"].size() == 1);
  CHECK(pfc["depends_on"][0]["keys"][0] == "pfc.xoff");
  const std::string frames = std::to_string(pfc["counters"]["pfc_pause_tx"].get<int64_t>());
  CHECK(pfc["depends_on"][0]["why"].get<std::string>().find("(" + frames + " PAUSE frames)") !=
        std::string::npos);
  CHECK(pfc_out.find("# depends on : pfc.xoff, pfc.xon_offset, switch.buffer_per_port (PFC "
                     "paused") != std::string::npos);
  // The same incast without PFC: drops and go-back-N.
  const auto [lossy, lossy_out] =
      run("scenarios/pfc-victim-flow.yaml --set pfc.enabled=false", "lossy");
  REQUIRE(lossy["depends_on"].size() == 1);
  const std::string resent = std::to_string(lossy["counters"]["retransmits"].get<int64_t>());
  CHECK(lossy["depends_on"][0]["why"].get<std::string>().find("go-back-N resent " + resent) !=
        std::string::npos);
  // The ECN sweep's incast under DCQCN: rate cuts, at least one per queue pair.
  const auto [dcqcn, dcqcn_out] = run("scenarios/ecn-threshold-sweep.yaml", "dcqcn");
  bool named = false;
  for (const auto& d : dcqcn["depends_on"]) {
    if (d["keys"][0] != "ecn.kmin") continue;
    named = true;
    const std::string cuts = std::to_string(dcqcn["counters"]["cnp_rx"].get<int64_t>());
    CHECK(d["why"].get<std::string>().rfind("DCQCN cut senders' rates " + cuts + " times", 0) == 0);
  }
  CHECK(named);
}

TEST_CASE("results.json limits: two NICs per GPU past link.pcie_rate, and the flow mode") {
  const auto run = [&](const std::string& args, const std::string& name) {
    const fs::path d = scratch("limits_" + name);
    const Result r = fabricsim("run " + args + " --trace-events 0 --out " + d.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return std::make_pair(nlohmann::json::parse(slurp(d / "results.json")), r.out);
  };
  // The SuperPOD unit with 16 NICs per 8-GPU server: each GPU's 2 x 400 Gb/s NICs add up to
  // more than a PCIe Gen5 x16 link (link.pcie_rate: 504 Gb/s), which is not in the path.
  const std::string twin =
      "scenarios/rail_optimized_h100_su.yaml --set topology.rail-optimized.nics_per_server=16 "
      "--set topology.rail-optimized.rails=16 --set topology.rail-optimized.servers_per_su=4 "
      "--set workload.maxbytes=64KiB";
  const auto [pcie, pcie_out] = run(twin + " --set workload.ngpus=16", "pcie");
  REQUIRE(pcie["limits"].size() == 1);
  CHECK(pcie["limits"][0]["what"] == "the PCIe link between each GPU and its NICs");
  CHECK(pcie["limits"][0]["why"].get<std::string>().find("2 NICs, 800 Gb/s together, more than "
                                                         "link.pcie_rate") != std::string::npos);
  CHECK(pcie_out.find("# not modelled: the PCIe link between each GPU and its NICs (") !=
        std::string::npos);
  // One server: no byte takes a NIC. A PCIe link of 1 Tb/s: the two NICs fit in it.
  CHECK(run(twin + " --set workload.ngpus=8", "one_server").first["limits"].empty());
  CHECK(run(twin + " --set workload.ngpus=16 --set link.pcie_rate=1000Gbps", "wide")
            .first["limits"]
            .empty());
  // A NIC behind a PCIe link slower than its port: the receiving NIC's payload writes cap it at
  // nic.pcie_rate, which is modelled, so it is no limit of the run.
  CHECK(run("scenarios/quickstart.yaml --set nic.pcie_rate=200Gbps" + kSmall, "nic_pcie")
            .first["limits"]
            .empty());
  // The flow mode: queues, PFC, ECN and drops are not modelled.
  const auto [flow, flow_out] = run("scenarios/quickstart.yaml --set mode=flow" + kSmall, "flow");
  REQUIRE(flow["limits"].size() == 1);
  CHECK(flow["limits"][0]["what"] == "queues, PFC, ECN/DCQCN, drops and retransmissions");
  // The packet mode of the quickstart: nothing.
  CHECK(run("scenarios/quickstart.yaml" + kSmall, "packet").first["limits"].empty());
}

TEST_CASE(
    "run --flows gz writes flows.csv compressed (zcat gives the same bytes), none leaves it out") {
  const fs::path csv = scratch("flows_csv"), gz = scratch("flows_gz"), none = scratch("flows_none");
  const std::string args = "run scenarios/quickstart.yaml" + kSmall + " --trace-events 0";
  REQUIRE(fabricsim(args + " --out " + csv.string()).exit_code == 0);
  // A folder that held an earlier run's flows.csv: the gz run replaces it, not beside it.
  fs::copy_file(csv / "flows.csv", gz / "flows.csv");
  const Result g = fabricsim(args + " --flows gz --out " + gz.string());
  REQUIRE(g.exit_code == 0);
  CHECK(g.out.find("queues.csv, flows.csv.gz") != std::string::npos);
  CHECK(!fs::exists(gz / "flows.csv"));
  const std::string cmd =
      "zcat " + (gz / "flows.csv.gz").string() + " > " + (gz / "unzipped.csv").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(slurp(gz / "unzipped.csv") == slurp(csv / "flows.csv"));
  CHECK(fs::file_size(gz / "flows.csv.gz") < fs::file_size(csv / "flows.csv") / 3);
  CHECK(slurp(gz / "results.json") == slurp(csv / "results.json"));
  fs::copy_file(csv / "flows.csv", none / "flows.csv");
  const Result n = fabricsim(args + " --flows none --out " + none.string());
  REQUIRE(n.exit_code == 0);
  CHECK(!fs::exists(none / "flows.csv"));
  CHECK(!fs::exists(none / "flows.csv.gz"));
  CHECK(n.out.find("flows.csv") == std::string::npos);
  CHECK(slurp(none / "results.json") == slurp(csv / "results.json"));
}

TEST_CASE("topology.failed_links NODE-NODE#* fails every parallel link between the two") {
  // 2 leaves x 4 hosts at 100G, 2 spines, 100G uplinks: 2 parallel links from each leaf to
  // each spine. leaf0-spine0#* fails both: leaf0's traffic leaves by spine1 alone, and no
  // frame crosses a leaf0-spine0 link (ports.csv); without the index only the first would.
  const fs::path d = scratch("failed_all");
  const Result r = fabricsim(
      "run scenarios/pfc-victim-flow.yaml --set link.fabric_rate=100Gbps --set topology.spines=2 "
      "--set 'topology.failed_links=[leaf0-spine0#*]' --trace-events 0 --out " +
      d.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("parallel links") == std::string::npos);  // named them all: no warning
  const auto t = cli_testing::csv_table(d / "ports.csv");
  int leaf0_spine0 = 0, leaf0_spine1_busy = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    const std::string node = cli_testing::cell(t, i, "node"),
                      peer = cli_testing::cell(t, i, "peer");
    if ((node == "leaf0" && peer == "spine0") || (node == "spine0" && peer == "leaf0")) {
      ++leaf0_spine0;
      CHECK(cli_testing::cell(t, i, "tx_bytes") == "0");
    }
    if (node == "leaf0" && peer == "spine1" && cli_testing::cell(t, i, "tx_bytes") != "0") {
      ++leaf0_spine1_busy;
    }
  }
  CHECK(leaf0_spine0 == 4);  // 2 links, both directions
  CHECK(leaf0_spine1_busy >= 1);
}

TEST_CASE("NCCL's own spellings of collectives, algorithms and protocols are accepted") {
  // AllReduce (NCCL's API and logs), ncclAllReduce, all_reduce_perf (the nccl-tests binary), Ring
  // and LL128 (NCCL_ALGO, NCCL_PROTO): each is the name results.json writes.
  const std::pair<std::string, std::string> spellings[] = {
      {"AllReduce", "all_reduce"},
      {"ncclAllGather", "all_gather"},
      {"reduce_scatter_perf", "reduce_scatter"},
      {"AllToAll", "alltoall"},
      {"Broadcast", "broadcast"}};
  for (const auto& [written, name] : spellings) {
    INFO(written);
    const fs::path d = scratch("spelling");
    const Result r = fabricsim(
        "run scenarios/quickstart.yaml --set workload.maxbytes=64KiB "
        "--set workload.collective=" +
        written + " --trace-events 0 --out " + d.string());
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(slurp(d / "results.json"))["collectives"][0]["collective"] == name);
  }
  const fs::path d = scratch("spelling_algo");
  REQUIRE(
      fabricsim("run scenarios/quickstart.yaml --set workload.maxbytes=64KiB --set "
                "workload.algorithm=Ring --set workload.protocol=LL128 --trace-events 0 --out " +
                d.string())
          .exit_code == 0);
  const auto row = nlohmann::json::parse(slurp(d / "results.json"))["collectives"][0];
  CHECK(row["algorithm"] == "ring");
  CHECK(row["protocol"] == "ll128");
  // A spelling that is neither still says what it might be.
  const Result bad =
      fabricsim("validate scenarios/quickstart.yaml --set workload.collective=Allreduce");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("did you mean 'all_reduce'?") != std::string::npos);
}
