// Run hooks (sim/run/run_hooks.hpp): a counter registered in this file alone, fed by a hook's
// observer during a run made as `fabricsim run` makes it (run_scenario), and written by
// results.json, ports.csv and the summary as the counter table says.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/counter_table.hpp"
#include "sim/net/network.hpp"
#include "sim/run/run_command.hpp"

namespace fabricsim {
namespace {

/// Bytes of the messages each host posts, counted at the host's own port (its NIC's uplink).
uint32_t bytes_posted_counter() {
  static const uint32_t index =
      register_counter({"bytes_posted_by_hosts", "bytes", CounterScope::kPort, CounterMerge::kSum,
                        "message bytes posted by each host, at its NIC port"});
  return index;
}

class BytesPosted final : public RunHook, public NetObserver {
 public:
  int built = 0;
  int finished = 0;
  void network_built(Network& net, const Scenario&, const Prepared& prepared) override {
    ++built;
    net_ = &net;
    uplink_.assign(prepared.fabric.hosts.size(), 0);
    for (size_t h = 0; h < prepared.fabric.hosts.size(); ++h) {
      for (uint32_t p = 0; p < net.ports().size(); ++p) {
        if (net.ports()[p].node == prepared.fabric.hosts[h]) uplink_[h] = p;
      }
    }
  }
  NetObserver* observer() override { return this; }
  void run_finished(const Network&, RunReport&) override { ++finished; }

  void message_posted(uint64_t, int src, int, uint32_t, int64_t bytes, int64_t) override {
    net_->add(bytes_posted_counter(), uplink_[static_cast<size_t>(src)], bytes);
  }
  void message_delivered(uint64_t, int, int, uint32_t, int64_t) override {}
  void queue_changed(uint32_t, int, int64_t, int64_t) override {}
  void packet_dropped(uint32_t, int, bool, int64_t) override {}
  void went_back(uint32_t, int, uint32_t, uint32_t, bool, int64_t) override {}

 private:
  Network* net_ = nullptr;
  std::vector<uint32_t> uplink_;  ///< by host: its NIC port
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Splits a CSV line without quoted fields (ports.csv's node names here have none).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; std::getline(in, f, ',');) out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("a run hook feeds a registered counter through run_scenario into every output") {
  const uint32_t counter = bytes_posted_counter();
  const auto dir = std::filesystem::temp_directory_path() / "fabricsim_test_run_hooks";
  std::filesystem::remove_all(dir);
  auto hook = std::make_shared<BytesPosted>();
  RunOptions opts;
  // quickstart.yaml: 16 hosts of one GPU each, so every transfer crosses the network. Ring
  // AllReduce, Simple protocol, three sizes.
  opts.scenario_path = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opts.sets = {"workload.minbytes=8KiB", "workload.maxbytes=32KiB", "workload.algorithm=ring",
               "workload.protocol=simple"};
  opts.out_dir = dir.string();
  opts.out_given = true;  // with trace.json: the trace observer and the hook's watch together
  opts.hooks = {hook};
  std::ostringstream out;
  std::streambuf* const saved = std::cout.rdbuf(out.rdbuf());
  const int code = run_scenario(opts, nullptr);
  std::cout.rdbuf(saved);
  REQUIRE(code == kExitOk);
  CHECK(hook->built == 1);
  CHECK(hook->finished == 1);

  // Ring AllReduce of S bytes on N ranks: each rank sends 2 (N - 1) / N x S (reduce-scatter and
  // all-gather, N - 1 steps of S / N each); N = 16, S = 8, 16 and 32 KiB:
  // per host 30 / 16 x 57344 = 107520 bytes, in all 16 x 107520 = 1720320.
  constexpr int64_t kPerHost = 107'520;
  constexpr int64_t kTotal = 16 * kPerHost;
  const auto results = nlohmann::json::parse(slurp(dir / "results.json"));
  CHECK(results["counters"]["bytes_posted_by_hosts"] == kTotal);

  std::istringstream ports(slurp(dir / "ports.csv"));
  std::string line;
  std::getline(ports, line);
  const std::vector<std::string> header = fields(line);
  REQUIRE(header.back() == "bytes_posted_by_hosts");
  REQUIRE(header[0] == "node");
  int host_rows = 0;
  int64_t column_sum = 0;
  while (std::getline(ports, line)) {
    const std::vector<std::string> row = fields(line);
    REQUIRE(row.size() == header.size());
    const int64_t v = std::stoll(row.back());
    column_sum += v;
    if (row[0].rfind("host", 0) == 0) {
      ++host_rows;
      CHECK(v == kPerHost);
    }
  }
  CHECK(host_rows == 16);
  CHECK(column_sum == kTotal);

  // The summary's line of registered counters.
  const std::string text = out.str();
  CHECK(text.find("# registered : bytes_posted_by_hosts 1720320") != std::string::npos);
  // The trace observer still recorded the messages beside the hook.
  CHECK(slurp(dir / "trace.json").find("\"ph\":\"b\"") != std::string::npos);
  CHECK(counter >= kBuiltinCounters);
  std::filesystem::remove_all(dir);
}

TEST_CASE("run hooks are not called in the flow mode, which builds no network") {
  auto hook = std::make_shared<BytesPosted>();
  RunOptions opts;
  opts.scenario_path = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opts.sets = {"workload.minbytes=8KiB", "workload.maxbytes=8KiB", "mode=flow"};
  opts.hooks = {hook};
  std::ostringstream out;
  std::streambuf* const saved = std::cout.rdbuf(out.rdbuf());
  const int code = run_scenario(opts, nullptr);
  std::cout.rdbuf(saved);
  CHECK(code == kExitOk);
  CHECK(hook->built == 0);
  CHECK(hook->finished == 0);
}

}  // namespace fabricsim
