// End-to-end: losses, ECN, PFC deadlocks and their fixes through `fabricsim run`.
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
  // Regressions: a port counted a frame when it started sending it,
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

TEST_CASE("the packet model: RTO floor, stale trace, refused runs") {
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

TEST_CASE("ecn: marks are counted in results.json and per queue — kmin must be below kmax") {
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

TEST_CASE("a deadlock the PFC watchdog breaks is reported, and the run completes with exit 0") {
  // Regression: the run was marked incomplete (deadlock) although the watchdog had broken the
  // cycle and every flow had been delivered.
  const fs::path d = scratch("watchdog");
  const Result r = fabricsim(
      "run scenarios/pfc-deadlock-ring.yaml --set pfc.watchdog=true --set "
      "pfc.watchdog_detection_time=1ms --set pfc.watchdog_action=forward --out " +
      d.string());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  REQUIRE(j["deadlock"].is_object());
  CHECK(j["deadlock"]["broken_by_watchdog"] == true);
  CHECK(j["run"]["complete"] == true);
  CHECK(j["counters"]["pfc_storms"].get<int64_t>() >= 1);
  CHECK(j["flows"]["completed"] == 4);
}

TEST_CASE("a PFC deadlock is named whatever the check interval, before a queue pair gives up") {
  // pfc-deadlock-ring forms its cycle within microseconds. Its queue pairs fail after 7
  // retries of 67.108864 ms (the default nic.rto): 8 x 67.108864 = 536.9 ms after their last
  // progress, which is within the first millisecond. A check interval of 300 ms (two checks: 600
  // ms) or 1 s used to let them fail first (exit 1, deadlock null): the detector now also looks at
  // their last two timeouts.
  const double qp_gives_up_ms = 8 * 67.108864;
  for (const std::string interval : {"300ms", "1s"}) {
    INFO(interval);
    const fs::path d = scratch("deadlock_interval_" + interval);
    const Result r = fabricsim(
        "run scenarios/pfc-deadlock-ring.yaml --set pfc.deadlock_check_interval=" + interval +
        " --out " + d.string());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 3);
    const auto j = nlohmann::json::parse(slurp(d / "results.json"));
    REQUIRE(j["deadlock"].is_object());
    CHECK(j["deadlock"]["cycle"].size() == 4);  // the four routers of the ring
    CHECK(j["deadlock"]["detected_at_ps"].get<double>() / 1e9 <= qp_gives_up_ms + 1.0);
    CHECK(r.err.find("PFC deadlock") != std::string::npos);
    CHECK(r.err.find("retry counter exceeded") == std::string::npos);
  }
  // The watchdog would break it only after 600 ms, when the queue pairs have given up: the
  // run ends in the deadlock it found (exit 3), not as an internal error (1), and says both.
  const fs::path w = scratch("deadlock_watchdog_late");
  const Result r = fabricsim(
      "run scenarios/pfc-deadlock-ring.yaml --set pfc.watchdog=true "
      "--set pfc.watchdog_detection_time=600ms --out " +
      w.string());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  const auto j = nlohmann::json::parse(slurp(w / "results.json"));
  CHECK(j["deadlock"].is_object());
  CHECK(j["deadlock"]["broken_by_watchdog"] == false);
  const std::string why = j["run"]["stop_reason"];
  CHECK(why.find("PFC deadlock") != std::string::npos);
  CHECK(why.find("had not broken it when queue pair") != std::string::npos);
  CHECK(why.find("transport retry counter exceeded") != std::string::npos);
}

TEST_CASE("a run whose transport gave up exits 4 and says so, not 1 (an internal error)") {
  // The PFC watchdog's drop action flushes the bounce deadlock's stormed queues and drops what
  // arrives for them: the queue pairs behind them time out 7 times (retry_count) and give up,
  // as NCCL reports "transport retry counter exceeded". That ended as exit 1, the code of an
  // internal error.
  const fs::path d = scratch("transport_gave_up");
  const Result r = fabricsim(
      "run scenarios/pfc-deadlock-clos-bounce.yaml --set pfc.watchdog=true"
      " --trace-events 0 --out " +
      d.string());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("# run        : INCOMPLETE (the transport gave up during the traffic flows: "
                   "queue pair ") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  const std::string why = j["run"]["stop_reason"];
  CHECK(why.rfind("the transport gave up during", 0) == 0);
  CHECK(why.find("transport retry counter exceeded (7 retries") != std::string::npos);
  CHECK(j["counters"]["watchdog_drops"].get<int64_t>() > 0);
}

namespace {
/// Runs the deadlock scenario `name`, then applies every fix its results.json proposes with --set
/// values to the same scenario: the run then completes with no deadlock, or the PFC watchdog
/// breaks it (exit 0, or 4 when a queue pair gave up while it waited); never exit 3 again.
/// trace.json marks the deadlock at the time results.json reports.
void check_deadlock_fixes(const std::string& name) {
  {
    INFO(name);
    const fs::path d = scratch("fixes_" + name);
    const Result r = fabricsim("run scenarios/" + name + ".yaml --out " + d.string());
    REQUIRE(r.exit_code == 3);
    CHECK(r.out.find("# fix        : --set '") != std::string::npos);
    const auto j = nlohmann::json::parse(slurp(d / "results.json"));
    const auto& fixes = j["deadlock"]["fixes"];
    REQUIRE(fixes.size() >= 2);
    // A class fix first: a bounce class on the Clos, a dateline on the tori.
    CHECK(fixes[0]["set"][0].get<std::string>().rfind(name == "pfc-deadlock-clos-bounce"
                                                          ? "routing.bounce_class="
                                                          : "routing.dateline_class=",
                                                      0) == 0);
    int applied = 0;
    int64_t class_fix_ps = 0, watchdog_ps = 0;  // how long the runs with those fixes took
    for (const auto& fix : fixes) {
      if (fix["set"].empty()) continue;
      std::string sets;
      for (const auto& s : fix["set"]) sets += " --set '" + s.get<std::string>() + "'";
      INFO(sets);
      const fs::path f = scratch("fixed_" + name);
      const Result g =
          fabricsim("run scenarios/" + name + ".yaml --trace-events 0 --out " + f.string() + sets);
      CHECK((g.exit_code == 0 || g.exit_code == 4));
      const auto k = nlohmann::json::parse(slurp(f / "results.json"));
      CHECK((k["deadlock"].is_null() || k["deadlock"]["broken_by_watchdog"] == true));
      const int64_t took_ps = k["run"]["simulated_ps"].get<int64_t>();
      if (applied == 0) class_fix_ps = took_ps;
      if (fix["set"][0] == "pfc.watchdog=true") {
        watchdog_ps = took_ps;
        // The watchdog is offered as a stopgap, and its runs say why: the cycle forms again.
        CHECK(fix["why"].get<std::string>().find("A stopgap, not a fix") != std::string::npos);
      }
      ++applied;
    }
    CHECK(applied >= 2);
    // Under the watchdog the runs take at least 10 times as long as with the class fix
    // (ring: 119 s against 14.7 ms; torus: 10.5 s against 0.9 ms; Clos: the transport gives up).
    CHECK(watchdog_ps > 10 * class_fix_ps);
    bool marked = false;
    for (const auto& e : nlohmann::json::parse(slurp(d / "trace.json"))) {
      if (e["name"].get<std::string>().rfind("deadlock: a cycle of ", 0) == 0 && e["s"] == "g") {
        marked = e["ts"].get<double>() ==
                 Approx(j["deadlock"]["detected_at_ps"].get<double>() / 1e6).epsilon(1e-12);
      }
    }
    CHECK(marked);
  }
}
}  // namespace

// One test case per scenario: each applies three fixes, and the watchdog's runs on the tori
// simulate about a second of pauses and drops (4 s each in Release), so they get a timeout each.
TEST_CASE(
    "a deadlock's report names fixes, and each one's --set values break that deadlock: clos "
    "bounce") {
  check_deadlock_fixes("pfc-deadlock-clos-bounce");
}

TEST_CASE(
    "a deadlock's report names fixes, and each one's --set values break that deadlock: torus") {
  check_deadlock_fixes("pfc-deadlock-torus");
}

TEST_CASE(
    "a deadlock's report names fixes, and each one's --set values break that deadlock: ring") {
  check_deadlock_fixes("pfc-deadlock-ring");
}
