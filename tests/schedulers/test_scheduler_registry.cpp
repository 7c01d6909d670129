// An egress scheduler defined and registered in this file alone: "lowest_first", strict priority
// upside down (class 0 first). Loading a scenario that names it and running a network built from
// that scenario go through the same registry as strict priority and DWRR, with no library file
// edited.
#include <unistd.h>
#include <bit>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "../support.hpp"
#include "schedulers/registry.hpp"
#include "sim/config/loader.hpp"
#include "sim/config/params.hpp"

namespace fabricsim {
namespace {

using testing::Bed;
using testing::port_between;
using testing::Recorder;
using testing::ser;

/// The lowest class that may send goes first.
struct LowestFirst : Scheduler {
  int pick(uint8_t eligible, SchedulerState&, const QueueHeads&) override {
    return std::countr_zero(static_cast<uint32_t>(eligible));
  }
};

/// Always class 0, whether or not it may send: a broken scheduler.
struct AlwaysZero : Scheduler {
  int pick(uint8_t, SchedulerState&, const QueueHeads&) override { return 0; }
};

/// Registers the toys once per test process (the registry refuses a second registration).
void register_toys() {
  if (find_scheduler("lowest_first") != nullptr) return;
  register_scheduler({"lowest_first", "the lowest class that may send (0 first)",
                      SchedulerKind::kRegistered,
                      [](const SchedulerSettings&) { return std::make_unique<LowestFirst>(); }});
  register_scheduler({"always_zero", "class 0, even when it may not send",
                      SchedulerKind::kRegistered,
                      [](const SchedulerSettings&) { return std::make_unique<AlwaysZero>(); }});
}

constexpr int64_t kRate_bps = 100'000'000'000;  // link.host_rate: 100Gbps
constexpr int64_t kProp_ps = 100'000;           // link.propagation_delay: 100ns
constexpr int64_t kLatency_ps = 300'000;        // switch.latency: 300ns
constexpr int64_t kMtu_bytes = 1000;            // nic.mtu: 1000B

/// A scenario file: three hosts on one leaf at 100 Gb/s, RoCE, 1000-byte MTU, `scheduler`.
std::string scenario_file(const std::string& scheduler) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("fabricsim_test_scheduler_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "name: toy-scheduler\n"
                         "transport: roce\n"
                         "topology: {kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 3}\n"
                         "link: {host_rate: 100Gbps, propagation_delay: 100ns}\n"
                         "switch: {latency: 300ns, buffer_per_port: 64MiB, scheduler: "
                      << scheduler
                      << "}\n"
                         "nic: {mtu: 1000B}\n"
                         "workload: {collective: all_reduce, minbytes: 8KiB, maxbytes: 8KiB}\n";
  return path.string();
}

Scenario load_with(const std::string& scheduler) {
  const std::string path = scenario_file(scheduler);
  Scenario sc = load_scenario(path);
  std::filesystem::remove(path);
  return sc;
}

/// Hosts 0 and 1 each send `frames` MTU frames to host 2, in classes 1 and 5, from time 0:
/// the completion times of the two messages, ps.
std::pair<int64_t, int64_t> two_classes(const Scenario& sc, int64_t frames) {
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 2, frames * kMtu_bytes, 0, 0, 1);
  bed.net->send(1, 2, frames * kMtu_bytes, 0, 1, 5);
  bed.sim.run();
  return {rec.done.at(0), rec.done.at(1)};
}

TEST_CASE("the loader's built-in schedulers are the registry's built-in schedulers") {
  // The loader lists the built-in names itself (sim/config does not depend on schedulers/):
  // `fabricsim params` prints them as switch.scheduler's range, in the registry's order.
  std::string range;
  for (const ParamInfo& p : param_table()) {
    if (p.path == "switch.scheduler") range = p.range;
  }
  std::string names;
  for (const std::string& n : scheduler_names()) {
    if (n != "lowest_first" && n != "always_zero") names += (names.empty() ? "" : " | ") + n;
  }
  CHECK(range == names);
  CHECK(find_scheduler("strict")->kind == SchedulerKind::kStrict);
  CHECK(find_scheduler("dwrr")->kind == SchedulerKind::kDwrr);
}

TEST_CASE("a scheduler registered from outside the library is a valid switch.scheduler") {
  register_toys();
  CHECK(load_with("lowest_first").sw.scheduler == "lowest_first");
  CHECK(scheduler_names().back() == "always_zero");
  // The loader's "did you mean" knows the registered name.
  CHECK_THROWS_WITH(load_with("lowest_frist"),
                    Catch::Contains("unknown scheduler 'lowest_frist'; did you mean "
                                    "'lowest_first'?"));
  CHECK_THROWS_AS(register_scheduler(
                      {"lowest_first", "again", SchedulerKind::kRegistered,
                       [](const SchedulerSettings&) { return std::make_unique<LowestFirst>(); }}),
                  std::invalid_argument);
  CHECK_THROWS_AS(register_scheduler({"no_make", "", SchedulerKind::kRegistered, {}}),
                  std::invalid_argument);
}

TEST_CASE("a registered scheduler runs end to end: the class it favours ends first") {
  // One egress (leaf0 -> host2) offered class 1 by host 0 and class 5 by host 1, K frames each
  // at line rate R. A frame is 1000 B of payload + 82 B of RoCEv2 overhead on the wire
  // (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble/SFD 8, IFG 12): its slot is
  // t = 1082 x 8 / 100e9 s = 86.56 ns. Frame i of a sender ends its first hop at (i+1)t and is
  // queued at the egress prop + lat later, the instant frame i-1 of the favoured class leaves
  // it (the arrival, scheduled earlier, goes first). So the favoured class finds the egress
  // free for each frame, and its last frame reaches host 2 at K t + (t + 2 prop + lat). The
  // other class's frames wait and then go back to back behind it: 2K t + (t + 2 prop + lat).
  // The first frames of both classes reach the idle egress at the same picosecond: host 0's
  // (class 1, posted first) is taken first, so under strict priority class 5 starts one slot
  // late.
  register_toys();
  const int64_t k = 1000;
  const int64_t t = ser(kMtu_bytes + 82, kRate_bps);
  REQUIRE(t == 86'560);
  const int64_t path = t + 2 * kProp_ps + kLatency_ps;
  const auto [lowest1, lowest5] = two_classes(load_with("lowest_first"), k);
  CHECK(lowest1 == k * t + path);
  CHECK(lowest5 == 2 * k * t + path);
  // Strict priority (the default) is the mirror image: class 5 first, after class 1's first
  // frame.
  const auto [strict1, strict5] = two_classes(load_with("strict"), k);
  CHECK(strict5 == (k + 1) * t + path);
  CHECK(strict1 == 2 * k * t + path);
}

TEST_CASE("a registered scheduler that picks a class which may not send stops the run") {
  register_toys();
  const Scenario sc = load_with("always_zero");
  Bed bed(sc);
  // Class 1 only: the NIC's first frame already asks the scheduler.
  const auto run = [&] {
    bed.net->send(0, 2, 10 * kMtu_bytes, 0, 0, 1);
    bed.sim.run();
  };
  CHECK_THROWS_WITH(run(), Catch::Contains("scheduler 'always_zero' picked class 0, which may "
                                           "not send now"));
}

}  // namespace
}  // namespace fabricsim
