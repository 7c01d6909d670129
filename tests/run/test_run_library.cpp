// The run library (sim/run/run.hpp) used without the CLI: a scenario loaded, prepared and
// simulated on an engine the caller passes in.
#include <catch2/catch.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/net/network.hpp"
#include "sim/run/run.hpp"
#include "sim/run/topo_view.hpp"

namespace fabricsim {
namespace {

/// Runs the simulator as the sequential engine does (Simulator::run in slices), and counts the
/// calls the run made to it.
class CountingEngine final : public PacketEngine {
 public:
  static inline int made = 0;
  static inline int steps = 0;
  static inline int finished = 0;
  void attach(Simulator& sim, Network&, PacketTransport&) override { sim_ = &sim; }
  void begin_phase(std::function<std::pair<size_t, int64_t>()>, size_t) override {}
  StopReason step(int64_t limit_ps, int64_t* finished_at_ps) override {
    ++steps;
    const StopReason why = sim_->run(SimTime(limit_ps), 2'000'000);
    if (why == StopReason::kWorkloadDone) *finished_at_ps = sim_->now().ps();
    return why;
  }
  int64_t sum(int64_t v) override { return v; }
  int64_t max(int64_t v) override { return v; }
  void max_in_place(std::vector<int64_t>&) override {}
  uint64_t events() override { return sim_->events_executed(); }
  void finish() override { ++finished; }

 private:
  Simulator* sim_ = nullptr;
};

std::unique_ptr<PacketEngine> make_counting_engine(const Prepared&) {
  ++CountingEngine::made;
  return std::make_unique<CountingEngine>();
}

/// quickstart.yaml with a three-size sweep (8, 16 and 32 KiB), so the test takes milliseconds.
Scenario small_quickstart() {
  RunOptions opts;
  opts.scenario_path = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opts.sets = {"workload.minbytes=8KiB", "workload.maxbytes=32KiB"};
  return load(opts);
}

TEST_CASE("simulate() runs the packet model on the engine its caller passes") {
  Scenario sc = small_quickstart();
  const Prepared prepared = prepare(sc);
  const RunReport sequential = simulate(sc, prepared, nullptr, false);
  const RunReport counted =
      simulate(sc, prepared, nullptr, false, nullptr, UINT64_MAX, &make_counting_engine);
  // One engine for the run, stepped at least once per size, finished once.
  CHECK(CountingEngine::made == 1);
  CHECK(CountingEngine::steps >= 3);
  CHECK(CountingEngine::finished == 1);
  // The same simulation as the default (sequential) engine's, size by size.
  REQUIRE(sequential.complete);
  REQUIRE(counted.complete);
  REQUIRE(counted.rows.size() == 3);  // 8, 16, 32 KiB
  REQUIRE(sequential.rows.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(counted.rows[i].size_bytes == (int64_t{8192} << i));
    CHECK(counted.rows[i].time_ps == sequential.rows[i].time_ps);
  }
  CHECK(counted.events == sequential.events);
  CHECK(counted.simulated_ps == sequential.simulated_ps);
}

TEST_CASE("simulate() leaves the flow mode to its own model, whatever packet engine is passed") {
  Scenario sc = small_quickstart();
  sc.mode = "flow";
  const Prepared prepared = prepare(sc);
  const int made = CountingEngine::made;
  const RunReport rep =
      simulate(sc, prepared, nullptr, false, nullptr, UINT64_MAX, &make_counting_engine);
  CHECK(CountingEngine::made == made);
  CHECK(rep.complete);
  CHECK(rep.rows.size() == 3);
}

TEST_CASE("topo_view() builds routes and measures a fabric as `topo` prints it") {
  const Scenario sc = small_quickstart();
  std::ostringstream warnings;
  const TopoView view = topo_view(sc, {2, PartitionMethod::kAuto}, warnings);
  // quickstart.yaml: 4 leaves x 4 hosts at 400 Gb/s, 4 spines, 1:1. Links: 16 host links and
  // 4 x 4 leaf-spine links. Bisection, one direction: half the hosts at line rate, 8 x 400 Gb/s.
  CHECK(view.summary.gpus == 16);
  CHECK(view.summary.switches == 8);
  CHECK(view.summary.links == 32);
  CHECK(view.summary.bisection_bandwidth_bps == 3'200'000'000'000);
  CHECK(view.metrics.bisection_maxflow_bps == 3'200'000'000'000);
  // Two parts of two leaves each, the spines spread: each leaf reaches the other part's two
  // spines, 4 x 2 = 8 cut links.
  REQUIRE(view.partition);
  CHECK(view.partition->parts == 2);
  CHECK(view.partition->cut_links == 8);
  CHECK(warnings.str().empty());
  // More parts than nodes (16 hosts and 8 switches): refused before routing.
  CHECK_THROWS_AS(topo_view(sc, {25, PartitionMethod::kAuto}, warnings), TopoPartitionError);
}

}  // namespace
}  // namespace fabricsim
