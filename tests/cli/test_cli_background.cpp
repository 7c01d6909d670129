// End-to-end: FCT slowdown (each traffic flow's FCT over its ideal alone on the idle fabric)
// and Poisson background traffic (`background:`), through `fabricsim run`. Expected values are
// closed forms written out here (a lone message's store-and-forward time, a Poisson count's
// mean and spread) or properties of the generator's definition (HPCC's traffic_gen.py).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli_end_to_end;

namespace {

/// Picoseconds to serialize `bytes` at 100 Gb/s.
constexpr int64_t at_100g(int64_t bytes) {
  return bytes * 80;
}

/// RoCEv2 wire bytes of a packet of `payload` bytes: 62 B of headers, a 64 B minimum frame,
/// 20 B of preamble and gap (IBTA RoCEv2 Annex A17; IEEE 802.3).
constexpr int64_t wire(int64_t payload) {
  return std::max<int64_t>(payload + 62, 64) + 20;
}

/// flows.csv's rows as maps from column to text.
std::vector<std::map<std::string, std::string>> flow_rows(const fs::path& p) {
  const auto t = csv_table(p);
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t r = 1; r < t.size(); ++r) {
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < t[0].size() && c < t[r].size(); ++c) row[t[0][c]] = t[r][c];
    rows.push_back(row);
  }
  return rows;
}

int64_t us_to_ps(const std::string& us) {
  return std::llround(std::stod(us) * 1e6);
}

}  // namespace

TEST_CASE("FCT slowdown: a lone message's FCT is the store-and-forward closed form, slowdown 1") {
  // 2 leaves x 2 hosts, 100G everywhere, 1 us cables, 500 ns switches, 1 KiB MTU; each flow
  // crosses host-leaf-spine-leaf-host (4 links, 3 switches) alone. A train of packets arrives
  // after its wire bytes on the first link, the cables and switches, and at each of the 3
  // downstream links the serialization of its largest packet (a short last packet waits behind
  // the full one before it).
  const fs::path d = scratch("lone");
  const Result r = fabricsim("run tests/data/cli/lone_flows.yaml --out " + d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const int64_t fixed = 4 * 1'000'000 + 3 * 500'000;
  const std::map<int64_t, int64_t> expected = {
      {1, at_100g(wire(1)) + fixed + 3 * at_100g(wire(1))},
      {1025, at_100g(wire(1024) + wire(1)) + fixed + 3 * at_100g(wire(1024))},
      {1 << 20, at_100g(1024 * wire(1024)) + fixed + 3 * at_100g(wire(1024))}};
  const auto rows = flow_rows(d / "flows.csv");
  REQUIRE(rows.size() == 3);
  for (const auto& row : rows) {
    const int64_t bytes = std::stoll(row.at("bytes"));
    INFO(bytes << " B");
    CHECK(row.at("source") == "traffic");
    CHECK(us_to_ps(row.at("fct_us")) == expected.at(bytes));
    CHECK(us_to_ps(row.at("ideal_fct_us")) == expected.at(bytes));
    CHECK(row.at("slowdown") == "1.0000");
  }
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["fct_slowdown"]["flows"] == 3);
  CHECK(j["fct_slowdown"]["p99"].get<double>() == Approx(1.0));
  // slowdown.csv: one line per bucket that has flows (1 B, 1025 B, 1 MiB), then `all`.
  const auto t = csv_table(d / "slowdown.csv");
  REQUIRE(t.size() == 5);
  CHECK(t[1][0] == "0");
  CHECK(t[2][0] == "1000");
  CHECK(t[3][0] == "1000000");
  CHECK(t[4][0] == "all");
  CHECK(t[4][2] == "3");

  SECTION("400G hosts under a 100G fabric: the slowest link spaces the train") {
    // Hop rates 400, 100, 100, 400 Gb/s (20, 80, 80, 20 ps a byte). 1 MiB, 1024 equal packets:
    // the first crosses every hop, the other 1023 follow one 100G serialization apart. 1025 B:
    // the short last packet catches up and waits behind the full one at each 100G hop, so it
    // leaves hop 4 at 4,722,880 ps (hand-walked: hop 1 ends 23,800; hop 2 1,617,320; hop 3
    // 3,205,800; hop 4 max(4,721,200, 4,705,800) + 84 x 20), arriving a cable later.
    const fs::path f = scratch("lone_fast_hosts");
    REQUIRE(fabricsim("run tests/data/cli/lone_flows.yaml --set link.host_rate=400Gbps --out " +
                      f.string())
                .exit_code == 0);
    const std::map<int64_t, int64_t> fast = {
        {1, wire(1) * (20 + 80 + 80 + 20) + fixed},
        {1025, 4'722'880 + 1'000'000},
        {1 << 20, wire(1024) * (20 + 80 + 80 + 20) + 1023 * at_100g(wire(1024)) + fixed}};
    for (const auto& row : flow_rows(f / "flows.csv")) {
      const int64_t bytes = std::stoll(row.at("bytes"));
      INFO(bytes << " B");
      CHECK(us_to_ps(row.at("fct_us")) == fast.at(bytes));
      CHECK(us_to_ps(row.at("ideal_fct_us")) == fast.at(bytes));
    }
  }
  SECTION("a QP rate limit paces the train, not the first packet") {
    const fs::path q = scratch("lone_limited");
    REQUIRE(fabricsim("run tests/data/cli/lone_flows.yaml --set nic.qp_rate_limit=10Gbps --out " +
                      q.string())
                .exit_code == 0);
    for (const auto& row : flow_rows(q / "flows.csv")) {
      INFO(row.at("bytes") << " B");
      CHECK(row.at("slowdown") == "1.0000");
    }
  }
  SECTION("cut-through: the same closed form without the per-switch serialization") {
    const fs::path c = scratch("lone_ct");
    const Result rc = fabricsim(
        "run tests/data/cli/lone_flows.yaml --set switch.cut_through=true"
        " --out " +
        c.string());
    REQUIRE(rc.exit_code == 0);
    for (const auto& row : flow_rows(c / "flows.csv")) {
      const int64_t bytes = std::stoll(row.at("bytes"));
      const int64_t packets = (bytes + 1023) / 1024;
      const int64_t first = at_100g(packets > 1 ? (packets - 1) * wire(1024) : 0) +
                            at_100g(wire(bytes - (packets - 1) * 1024));
      INFO(bytes << " B");
      CHECK(us_to_ps(row.at("fct_us")) == first + fixed);
      CHECK(row.at("slowdown") == "1.0000");
    }
  }
}

TEST_CASE("background: Poisson Hadoop flows at 30 % load, as many as the load implies") {
  // 16 hosts at 100 Gb/s offering 30 % each for 2 ms, Facebook Hadoop sizes (Roy et al. 2015,
  // mean 120,420.75 B over HPCC's table): each host's arrivals are Poisson with mean gap
  // 120420.75 x 8 / (100e9 x 0.3) = 32.11 us, so the count is Poisson with mean
  // 16 x 2 ms / 32.11 us = 996.5 (standard deviation 31.6).
  const fs::path d = scratch("bg");
  const Result r = fabricsim("run tests/data/cli/background_hadoop.yaml --out " + d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const double mean_gap_ps = 120420.75 * 8 / (100e9 * 0.3) * 1e12;
  const double expected = 16 * 2e9 / mean_gap_ps;
  const auto rows = flow_rows(d / "flows.csv");
  CHECK(std::abs(static_cast<double>(rows.size()) - expected) <= 4 * std::sqrt(expected));
  int64_t worst_start = 0;
  for (const auto& row : rows) {
    CHECK(row.at("source") == "background");
    CHECK(row.at("src") != row.at("dst"));
    worst_start = std::max(worst_start, us_to_ps(row.at("start_us")));
    REQUIRE(!row.at("slowdown").empty());
    CHECK(std::stod(row.at("slowdown")) >= 0.9999);  // never faster than alone
  }
  CHECK(worst_start < 2'000'000'000);  // arrivals within background.duration
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["fct_slowdown"]["flows"] == rows.size());
  CHECK(j["flows"]["traffic"]["completed"] == rows.size());

  SECTION("the same seed gives the same flows and the same results") {
    const fs::path d2 = scratch("bg2");
    REQUIRE(fabricsim("run tests/data/cli/background_hadoop.yaml --out " + d2.string()).exit_code ==
            0);
    CHECK(slurp(d / "flows.csv") == slurp(d2 / "flows.csv"));
    CHECK(slurp(d / "results.json") == slurp(d2 / "results.json"));
  }
  SECTION("rack-local: every flow stays on its leaf") {
    const fs::path d3 = scratch("bg_rack");
    REQUIRE(
        fabricsim("run tests/data/cli/background_hadoop.yaml --set background.pattern=rack-local"
                  " --out " +
                  d3.string())
            .exit_code == 0);
    const auto local = flow_rows(d3 / "flows.csv");
    CHECK(!local.empty());
    for (const auto& row : local) {
      CHECK(std::stoi(row.at("src")) / 8 == std::stoi(row.at("dst")) / 8);  // 8 hosts a leaf
    }
  }
}

TEST_CASE("background: a sweep over the load reports the slowdown columns per point") {
  const fs::path d = scratch("bg_sweep");
  const Result r = fabricsim(
      "sweep tests/data/cli/background_hadoop.yaml --vary background.load=0.1,0.5"
      " --set background.duration=1ms --out " +
      d.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);
  for (size_t i = 1; i <= 2; ++i) {
    INFO("point " << i);
    CHECK(std::stod(cell(t, i, "slowdown_p50")) >= 0.9999);
    CHECK(std::stod(cell(t, i, "slowdown_p99")) >= std::stod(cell(t, i, "slowdown_p50")));
  }
  // Five times the load: more queueing, a higher tail.
  CHECK(std::stod(cell(t, 2, "slowdown_p99")) > std::stod(cell(t, 1, "slowdown_p99")));
}
