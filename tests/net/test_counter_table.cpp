// The counter table: a counter registered from outside the library is kept per port by the
// network, summed into the run's totals, and written by results.json and ports.csv.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../support.hpp"
#include "sim/core/counter_table.hpp"
#include "sim/report/report.hpp"
#include "sim/run/run_parts.hpp"

using namespace fabricsim;
using namespace fabricsim::testing;

namespace {

/// A toy counter: messages received in full, at the switch port facing their destination.
uint32_t toy_counter() {
  static const uint32_t index =
      register_counter({"toy_messages_in", "messages", CounterScope::kPort, CounterMerge::kSum,
                        "messages received in full, at the switch port to their destination"});
  return index;
}

/// Increments the toy counter from the network's observer hook.
struct ToyCounting : NetObserver {
  ToyCounting(Network& n, const Bed& bed) : net(n) {
    for (int h = 0; h < 3; ++h) {
      to_host[h] = port_between(bed, "leaf0", "host" + std::to_string(h));
    }
  }
  void message_posted(uint64_t, int, int, uint32_t, int64_t, int64_t) override {}
  void message_delivered(uint64_t, int, int dst, uint32_t, int64_t) override {
    net.add(toy_counter(), to_host[dst], 1);
  }
  void queue_changed(uint32_t, int, int64_t, int64_t) override {}
  void packet_dropped(uint32_t, int, bool, int64_t) override {}
  void went_back(uint32_t, int, uint32_t, uint32_t, bool, int64_t) override {}
  Network& net;
  uint32_t to_host[3] = {};
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("counter table: the built-in counters in results.json order, names unique") {
  const auto& t = counter_table();
  REQUIRE(t.size() >= kBuiltinCounters);
  // DESIGN.md §4 `counters`: the seven first, then the extensions.
  const char* names[] = {"drops",          "retransmits", "pfc_pause_tx",    "pfc_pause_rx",
                         "ecn_marked",     "cnp_tx",      "max_queue_bytes", "tail_drops",
                         "corrupt_drops",  "nak_tx",      "rto_timeouts",    "headroom_drops",
                         "watchdog_drops", "pfc_storms",  "paused_ps",       "cnp_rx",
                         "ce_received"};
  for (uint32_t k = 0; k < kBuiltinCounters; ++k) CHECK(t[k].name == names[k]);
  CHECK_THROWS_AS(register_counter({"cnp_tx", "packets", CounterScope::kRun, CounterMerge::kSum,
                                    "a second cnp_tx"}),
                  std::invalid_argument);
}

TEST_CASE("a registered counter: incremented from an observer, in results.json and ports.csv") {
  const uint32_t toy = toy_counter();
  REQUIRE(toy >= kBuiltinCounters);
  Scenario sc = one_leaf(3, 100 * kGbps, 100'000, 300'000, 1 << 20, 1000);
  Bed bed(sc);
  ToyCounting counting(*bed.net, bed);
  bed.net->set_observer(&counting);
  // Three messages: two to host2, one to host0 (one count each, at leaf0's port to the host).
  bed.net->send(0, 2, 5'000, 0, 0);
  bed.net->send(1, 2, 5'000, 0, 1);
  bed.net->send(2, 0, 5'000, 0, 2);
  bed.sim.run();
  CHECK(bed.net->registered_counter(toy, counting.to_host[2]) == 2);
  CHECK(bed.net->registered_counter(toy, counting.to_host[0]) == 1);
  CHECK(bed.net->registered_counter(toy, counting.to_host[1]) == 0);

  RunReport rep;
  rep.scenario = "test";
  fill_counters(*bed.net, rep);
  const auto j = nlohmann::ordered_json::parse(results_json_text(rep));
  CHECK(j["counters"]["toy_messages_in"] == 3);
  CHECK(j["counters"].size() == counter_table().size());
  // Written after the built-in counters.
  auto it = j["counters"].end();
  --it;
  CHECK(it.key() == "toy_messages_in");

  const auto dir = std::filesystem::temp_directory_path() / "fabricsim_test_counter_table";
  std::filesystem::create_directories(dir);
  write_ports_csv((dir / "ports.csv").string(), rep);
  std::istringstream csv(slurp(dir / "ports.csv"));
  std::string header;
  std::getline(csv, header);
  CHECK(header.size() > 16);
  CHECK(header.substr(header.size() - 16) == ",toy_messages_in");
  int rows_with_two = 0;
  for (std::string row; std::getline(csv, row);) {
    if (row.rfind("leaf0,", 0) == 0 && row.find(",host2,") != std::string::npos) {
      CHECK(row.substr(row.size() - 2) == ",2");
      ++rows_with_two;
    }
  }
  CHECK(rows_with_two == 1);
  std::filesystem::remove_all(dir);
}
