// A congestion control defined and registered in this file alone: every queue pair paced at a
// fixed rate, its receiver asking for a CNP every 64th data packet. Choosing it by name in a
// scenario, running it on a small fabric and the loader's checks of the choice go through the
// same registry as the built-in controls, with no library file edited.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support.hpp"
#include "congestion/cc_registry.hpp"
#include "sim/config/loader.hpp"
#include "sim/config/params.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {
namespace {

using testing::Bed;
using testing::Recorder;
using testing::ser;

constexpr int64_t kFixedRateBps = 25'000'000'000;  // a quarter of the 100 Gb/s line rate
constexpr int kCnpEvery = 64;                      // data packets per CNP

/// What the toy's halves saw, over every queue pair of the process.
struct Seen {
  int starts = 0;
  int64_t wire_bytes = 0;
  uint32_t last_ack_psn = 0;
  int cnps = 0;
  int receivers = 0;
};
Seen seen;

class FixedRateSender : public CcSender {
 public:
  void on_start(int64_t) override { ++seen.starts; }
  void on_bytes_sent(int64_t wire_bytes, int64_t) override { seen.wire_bytes += wire_bytes; }
  void on_ack(uint32_t psn, int64_t) override { seen.last_ack_psn = psn; }
  void on_cnp(int64_t) override { ++seen.cnps; }
  int64_t rate_bps() const override { return kFixedRateBps; }
};

class EveryNthReceiver : public CcReceiver {
 public:
  bool on_data(bool, int64_t) override { return ++packets_ % kCnpEvery == 0; }

 private:
  int packets_ = 0;
};

/// Registers the toy once per test process (the registry refuses a second registration).
void register_fixed_rate() {
  if (find_congestion_control("fixed_rate") != nullptr) return;
  CongestionControl cc;
  cc.name = "fixed_rate";
  cc.doc = "every queue pair at 25 Gb/s";
  cc.make_sender = [](const CcQpInfo&) { return std::make_unique<FixedRateSender>(); };
  cc.make_receiver = [](const CcQpInfo&) {
    ++seen.receivers;
    return std::make_unique<EveryNthReceiver>();
  };
  cc.cnp_traffic_class = 6;
  register_congestion_control(std::move(cc));
}

/// One 1 MiB message host0 -> host1 over one leaf at 100 Gb/s under control `cc`: its
/// completion time, ps.
int64_t one_mib_fct(const std::string& cc, NetTotals* totals = nullptr) {
  Scenario sc = testing::one_leaf(2, 100'000'000'000, 1'000'000, 500'000, 4 << 20, 4096);
  sc.nic.congestion_control = cc;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, 1 << 20, 0, 0);
  bed.sim.run();
  if (totals != nullptr) *totals = bed.net->totals();
  return rec.done.at(0);
}

// RoCEv2 wire bytes of a 4096-B packet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 +
// FCS 4 + preamble/SFD 8 + inter-frame gap 12 = 82 B of overhead.
constexpr int64_t kWire = 4096 + 82;
constexpr int64_t kPackets = (1 << 20) / 4096;  // 256
constexpr int64_t kLine = 100'000'000'000, kProp = 1'000'000, kLatency = 500'000;

TEST_CASE("the loader's built-in congestion controls are the registry's built-in controls") {
  std::string range;
  for (const ParamInfo& p : param_table()) {
    if (p.path == "nic.congestion_control") range = p.range;
  }
  std::string names = "auto";
  for (const std::string& n : congestion_control_names()) {
    if (n != "fixed_rate") names += " | " + n;
  }
  CHECK(range == names);
}

TEST_CASE("a registered congestion control paces every packet at its rate: closed form") {
  register_fixed_rate();
  seen = Seen{};
  NetTotals totals;
  const int64_t fct = one_mib_fct("fixed_rate", &totals);
  // Packet i leaves the NIC at i x ser(wire, R); the last then crosses two links at the line
  // rate (NIC and leaf egress), two propagation delays and the leaf's latency.
  CHECK(fct ==
        (kPackets - 1) * ser(kWire, kFixedRateBps) + 2 * ser(kWire, kLine) + 2 * kProp + kLatency);
  // 4178 B x 8 / 25 Gb/s = 1.33696 us a packet: 255 x 1.33696 + 2 x 0.33424 + 2 x 1 + 0.5 us.
  CHECK(fct == 340'924'800 + 668'480 + 2'500'000);
  CHECK(seen.starts == 1);
  CHECK(seen.receivers == 1);
  CHECK(seen.wire_bytes == kPackets * kWire);
  CHECK(seen.last_ack_psn == kPackets);  // one ACK per packet, cumulative
  // The receiver's hook: a CNP every 64th data packet, each reaching the sender.
  CHECK(seen.cnps == kPackets / kCnpEvery);
  CHECK(totals.cnp_tx == kPackets / kCnpEvery);
  CHECK(totals.cnp_rx == kPackets / kCnpEvery);
}

TEST_CASE("with no congestion control the same message runs at line rate") {
  register_fixed_rate();
  // Back to back at the NIC: 256 serializations, then the leaf's hop.
  const int64_t line = kPackets * ser(kWire, kLine) + ser(kWire, kLine) + 2 * kProp + kLatency;
  CHECK(one_mib_fct("none") == line);
  CHECK(one_mib_fct("auto") == line);
}

/// A scenario file: two hosts on one leaf, RoCE with ECN, `extra` appended.
std::string scenario_file(const std::string& extra) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("fabricsim_test_cc_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "transport: roce\n"
                         "topology: {kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 2}\n"
                         "link: {host_rate: 100Gbps, propagation_delay: 1us}\n"
                         "switch: {latency: 500ns, buffer_per_port: 4MB}\n"
                         "ecn: {enabled: true}\n"
                         "traffic:\n  - {src: host0, dst: host1, size: 1MiB}\n"
                      << extra;
  return path.string();
}

TEST_CASE("nic.congestion_control takes a registered control, and refuses two choices at once") {
  register_fixed_rate();
  const std::string path = scenario_file("nic: {congestion_control: fixed_rate}\n");
  CHECK(load_scenario(path).nic.congestion_control == "fixed_rate");
  CHECK_FALSE(load_scenario(path).dcqcn.enabled);

  // A misspelt name is answered from the registry's names.
  scenario_file("nic: {congestion_control: fixed_rat}\n");
  CHECK_THROWS_WITH(load_scenario(path), Catch::Contains("did you mean 'fixed_rate'"));

  // dcqcn.enabled: true names DCQCN: another control named beside it is refused.
  scenario_file("nic: {congestion_control: fixed_rate}\ndcqcn: {enabled: true}\n");
  CHECK_THROWS_WITH(load_scenario(path),
                    Catch::Contains("dcqcn.enabled: true selects DCQCN, but "
                                    "nic.congestion_control names fixed_rate: leave "
                                    "dcqcn.enabled out (or false), or name dcqcn"));

  // Naming dcqcn is dcqcn.enabled: true.
  scenario_file("nic: {congestion_control: dcqcn}\n");
  CHECK(load_scenario(path).dcqcn.enabled);
  scenario_file("nic: {congestion_control: dcqcn}\ndcqcn: {enabled: false}\n");
  CHECK_THROWS_WITH(load_scenario(path), Catch::Contains("dcqcn.enabled is false"));
  std::filesystem::remove(path);
}

TEST_CASE("a scenario that names a registered control runs it through the run library") {
  register_fixed_rate();
  seen = Seen{};
  RunOptions opts;
  opts.scenario_path = scenario_file("nic: {congestion_control: fixed_rate}\n");
  Scenario sc = load(opts);
  const Prepared prepared = prepare(sc);
  const RunReport rep = simulate(sc, prepared, nullptr, false);
  std::filesystem::remove(opts.scenario_path);
  REQUIRE(rep.complete);
  REQUIRE(rep.flows.size() == 1);
  // The file's fabric is the one above (100 Gb/s, 1 us links, a 500 ns leaf): the same closed
  // form, from the flow's posting to its last byte.
  CHECK(rep.flows[0].end_ps - rep.flows[0].start_ps ==
        (kPackets - 1) * ser(kWire, kFixedRateBps) + 2 * ser(kWire, kLine) + 2 * kProp + kLatency);
  CHECK(rep.counters.cnp_tx == kPackets / kCnpEvery);
  // The run ends with the flow's last byte: the CNP its last packet caused is still on its way.
  CHECK(seen.cnps == kPackets / kCnpEvery - 1);
}

}  // namespace
}  // namespace fabricsim
