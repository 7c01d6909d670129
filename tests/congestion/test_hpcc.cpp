// HPCC (Li et al., SIGCOMM 2019, Algorithm 1), as congestion/hpcc/ computes it, against rates
// worked out by hand from the algorithm's formulas with the HPCC authors' simulation settings
// (eta 0.95, maxStage 0, W_AI as 40 Mb/s at 100 Gb/s); the INT records the switches write,
// against the closed form of an idle path; and what the paper's design promises of a lone flow
// (it settles at eta of the bottleneck: R = Rc / (U / eta) + R_AI with U = R / B gives
// R = eta B + R_AI).
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support.hpp"
#include "congestion/cc_registry.hpp"
#include "congestion/hpcc/hpcc.hpp"
#include "sim/config/loader.hpp"
#include "sim/net/net_config.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {
namespace {

using testing::Bed;
using testing::Recorder;
using testing::ser;

constexpr int64_t kUs = 1'000'000;          // ps
constexpr int64_t kLine = 100'000'000'000;  // 100 Gb/s
constexpr int64_t kMbps = 1'000'000;
constexpr int64_t kT = 10 * kUs;  // the base RTT of the hand-worked cases

/// One hop's record: dequeued at ts_us, `tx` bytes sent so far, `qlen` bytes queued, 100 Gb/s.
IntStack one_hop(int64_t ts_us, int64_t tx, int64_t qlen) {
  IntStack s;
  s.hop[0] = IntHop{ts_us * kUs, tx, qlen, kLine};
  s.n = 1;
  return s;
}

/// A sender whose first ACK (PSN 1 acknowledged, 10 sent) stored `first` as the reference.
HpccRp primed(const HpccConfig* cfg, const IntStack& first) {
  HpccRp rp(cfg, kLine, kT);
  rp.on_ack(1, 10, first);
  return rp;
}

TEST_CASE(
    "hpcc: a QP starts at the line rate with W = line rate x T, and the first ACK only stores") {
  const HpccConfig cfg;
  HpccRp rp(&cfg, kLine, kT);
  CHECK(rp.rate_bps() == kLine);
  CHECK(rp.window_bytes() == 125'000);  // 100 Gb/s x 10 us / 8
  rp.on_ack(1, 10, one_hop(0, 0, 10'000'000));
  CHECK(rp.rate_bps() == kLine);
  CHECK(rp.updates() == 0);
  CHECK(rp.utilization() == 1.0);  // as the authors' ns-3 starts it
}

TEST_CASE("hpcc: a full update sets R = Rc / (U / eta) + R_AI from the most loaded hop") {
  const HpccConfig cfg;
  HpccRp rp = primed(&cfg, one_hop(0, 0, 62'500));
  // 10 us later: 125,000 B sent (100 Gb/s: txRate / B = 1), the queue 125,000 B; the smaller
  // of the two queue samples, 62,500 B = 500,000 bits, over B x T = 1,000,000 bits: 0.5.
  // U = 1.5, tau = T: u = 1.5; R = 100 Gb/s x 0.95 / 1.5 + 40 Mb/s = 63.37333... Gb/s.
  rp.on_ack(11, 20, one_hop(10, 125'000, 125'000));
  CHECK(rp.utilization() == Approx(1.5));
  CHECK(rp.rate_bps() == 63'373'333'333);
  CHECK(rp.reference_rate_bps() == rp.rate_bps());
  CHECK(rp.updates() == 1);
  // W = R x T: 63.373 Gb/s x 10 us / 8 = 79,216.7 B.
  CHECK(rp.window_bytes() == 79'217);
}

TEST_CASE("hpcc: tau below T weights the new sample by tau / T") {
  const HpccConfig cfg;
  HpccRp rp = primed(&cfg, one_hop(0, 0, 0));
  // 2 us later, 12,500 B sent: txRate 50 Gb/s, no queue: U = 0.5, tau = 2 us.
  // u = (1 x 8 + 0.5 x 2) / 10 = 0.9; R = 100 x 0.95 / 0.9 Gb/s, above the line rate: capped.
  rp.on_ack(11, 20, one_hop(2, 12'500, 0));
  CHECK(rp.utilization() == Approx(0.9));
  CHECK(rp.rate_bps() == kLine);
  // Next 10 us at 50 Gb/s: tau = T, u = 0.5; R = 100 x 0.95 / 0.5 + AI: the line rate again.
  rp.on_ack(21, 30, one_hop(12, 75'000, 0));
  CHECK(rp.utilization() == Approx(0.5));
  CHECK(rp.rate_bps() == kLine);
}

TEST_CASE("hpcc: of several hops the most utilized one decides") {
  const HpccConfig cfg;
  IntStack a, b;
  a.n = b.n = 2;
  a.hop[0] = IntHop{0, 0, 0, 4 * kLine};         // a 400G fabric hop
  a.hop[1] = IntHop{0, 0, 0, kLine};             // the 100G host hop
  b.hop[0] = IntHop{kT, 250'000, 0, 4 * kLine};  // 200 Gb/s of 400: 0.5
  b.hop[1] = IntHop{kT, 100'000, 0, kLine};      // 80 Gb/s of 100: 0.8
  HpccRp rp = primed(&cfg, a);
  rp.on_ack(11, 20, b);
  CHECK(rp.utilization() == Approx(0.8));
  // R = 100 x 0.95 / 0.8 Gb/s = 118.75: capped at the line rate.
  CHECK(rp.rate_bps() == kLine);
}

TEST_CASE("hpcc: between the once-per-RTT updates each ACK reacts from Rc (fast reaction)") {
  const HpccConfig cfg;
  HpccRp rp = primed(&cfg, one_hop(0, 0, 62'500));
  rp.on_ack(11, 20, one_hop(10, 125'000, 125'000));  // full: Rc = 63.373 Gb/s, next at PSN 20
  const int64_t rc = rp.reference_rate_bps();
  // An ACK of PSN 15 (sent before that update): u = 0.5 x 1.5 + 0.5 x U' over tau = 5 us.
  // 5 us later at 100 Gb/s with 125,000 B queued throughout: U' = 1 + 1 = 2, u = 1.75.
  rp.on_ack(15, 30, one_hop(15, 187'500, 125'000));
  CHECK(rp.utilization() == Approx(1.75));
  CHECK(rp.rate_bps() == std::llround(rc * 0.95 / 1.75 + 40 * kMbps));
  CHECK(rp.reference_rate_bps() == rc);  // Wc stays
  CHECK(rp.updates() == 1);
  CHECK(rp.fast_reacts() == 1);
  // Without fast reaction the same ACK changes nothing.
  HpccConfig slow = cfg;
  slow.fast_react = false;
  HpccRp q = primed(&slow, one_hop(0, 0, 62'500));
  q.on_ack(11, 20, one_hop(10, 125'000, 125'000));
  const int64_t before = q.rate_bps();
  q.on_ack(15, 30, one_hop(15, 187'500, 125'000));
  CHECK(q.rate_bps() == before);
}

TEST_CASE("hpcc: with maxStage > 0 a link below eta gets additive increase, maxStage times") {
  HpccConfig cfg;
  cfg.max_stage = 2;
  cfg.rate_ai_bps = 100 * kMbps;
  HpccRp rp = primed(&cfg, one_hop(0, 0, 62'500));
  rp.on_ack(11, 20, one_hop(10, 125'000, 125'000));  // u = 1.5: multiplicative
  int64_t rc = rp.rate_bps();
  CHECK(rc == std::llround(kLine * 0.95 / 1.5 + 100 * kMbps));
  // Then 10 us at 50 Gb/s, no queue: u = 0.5 < eta; two additive steps of 100 Mb/s.
  int64_t tx = 125'000, ts = 10, psn = 21;
  for (int i = 0; i < 2; ++i) {
    tx += 62'500;
    ts += 10;
    rp.on_ack(static_cast<uint32_t>(psn), static_cast<uint32_t>(psn + 9), one_hop(ts, tx, 0));
    psn += 10;
    rc += 100 * kMbps;
    CHECK(rp.rate_bps() == rc);
  }
  // The third: incStage = maxStage: multiplicative, Rc / (0.5 / 0.95) + AI, over the line rate.
  tx += 62'500;
  ts += 10;
  rp.on_ack(static_cast<uint32_t>(psn), static_cast<uint32_t>(psn + 9), one_hop(ts, tx, 0));
  CHECK(rp.rate_bps() == std::min<int64_t>(kLine, std::llround(rc * 0.95 / 0.5 + 100 * kMbps)));
}

TEST_CASE("hpcc: the rate stays within [min_rate, line rate] and parameters are checked") {
  const HpccConfig cfg;
  HpccRp rp = primed(&cfg, one_hop(0, 0, 10'000'000));
  rp.on_ack(11, 20, one_hop(10, 125'000, 10'000'000));  // u = 81: R = 1.17 Gb/s + AI
  rp.on_ack(21, 30, one_hop(20, 250'000, 10'000'000));
  rp.on_ack(31, 40, one_hop(30, 375'000, 10'000'000));
  CHECK(rp.rate_bps() == cfg.min_rate_bps);
  CHECK(hpcc_rate_ai_bps(cfg, kLine) == 40 * kMbps);
  CHECK(hpcc_rate_ai_bps(cfg, 4 * kLine) == 160 * kMbps);
  HpccConfig c;
  c.eta = 1.5;
  CHECK_THROWS_WITH(HpccRp(&c, kLine, kT), Catch::Contains("eta"));
  c = HpccConfig{};
  c.min_rate_bps = 2 * kLine;
  CHECK_THROWS_WITH(HpccRp(&c, kLine, kT), Catch::Contains("min_rate"));
  c = HpccConfig{};
  c.rate_ai_bps = 2 * kLine;
  CHECK_THROWS_WITH(HpccRp(&c, kLine, kT), Catch::Contains("rate_ai"));
  c = HpccConfig{};
  CHECK_THROWS_WITH(HpccRp(&c, kLine, 0), Catch::Contains("base RTT"));
}

// The INT records the switches write, through a registered control that asks for them
// (needs_int) and records every ACK's stack.
std::vector<IntStack> stacks;

class IntRecorder : public CcSender {
 public:
  void on_int(uint32_t, uint32_t, const IntStack& ints, int64_t) override {
    stacks.push_back(ints);
  }
  int64_t rate_bps() const override { return 0; }
};

void register_int_recorder() {
  if (find_congestion_control("int_recorder") != nullptr) return;
  CongestionControl cc;
  cc.name = "int_recorder";
  cc.doc = "line rate; records the INT records ACKs echo";
  cc.make_sender = [](const CcQpInfo&) { return std::make_unique<IntRecorder>(); };
  cc.needs_int = true;
  register_congestion_control(std::move(cc));
}

// RoCEv2 frames: a 4096-B packet 4096 + 82 B on the wire (no INT header from a registered
// control: only HPCC's header has a size).
constexpr int64_t kWire = 4096 + 82;
constexpr int64_t kProp = 1'000'000, kLatency = 500'000;

TEST_CASE("INT on an idle path: the leaf's record of each packet is its closed form") {
  register_int_recorder();
  stacks.clear();
  Scenario sc = testing::one_leaf(2, kLine, kProp, kLatency, 4 << 20, 4096);
  sc.nic.congestion_control = "int_recorder";
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, 1 << 20, 0, 0);
  bed.sim.run();
  // Packet k leaves the NIC at k x ser, is in the leaf after ser + prop, and leaves it after
  // the switch latency (store and forward; back-to-back packets never queue there). The leaf's
  // port has then sent k + 1 frames, nothing is queued behind, and its rate is 100 Gb/s.
  REQUIRE(stacks.size() == 256);  // one ACK per packet, each echoing one switch hop
  for (size_t k = 0; k < stacks.size(); ++k) {
    const IntStack& s = stacks[k];
    REQUIRE(s.n == 1);
    CHECK_FALSE(s.overflow);
    const int64_t kk = static_cast<int64_t>(k);
    CHECK(s.hop[0].ts_ps == kk * ser(kWire, kLine) + ser(kWire, kLine) + kProp + kLatency);
    CHECK(s.hop[0].tx_bytes == (kk + 1) * kWire);
    CHECK(s.hop[0].qlen_bytes == 0);
    CHECK(s.hop[0].rate_bps == kLine);
  }
}

TEST_CASE("INT across a spine-leaf: one record per switch egress, in path order") {
  register_int_recorder();
  stacks.clear();
  Scenario sc = testing::spine_leaf(2, 2, 2, kLine, kProp, kLatency, 4 << 20, 4096);
  sc.link.fabric_rate_bps = kLine;
  sc.nic.congestion_control = "int_recorder";
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 3, 64 << 10, 0, 0);  // leaf0 -> spine -> leaf1
  bed.sim.run();
  REQUIRE(stacks.size() == 16);
  for (const IntStack& s : stacks) {
    REQUIRE(s.n == 3);
    for (int i = 0; i < 3; ++i) CHECK(s.hop[i].rate_bps == kLine);  // leaf0, spine, leaf1
    CHECK(s.hop[0].ts_ps < s.hop[1].ts_ps);
    CHECK(s.hop[1].ts_ps < s.hop[2].ts_ps);
  }
}

TEST_CASE("hpcc: a lone flow settles at eta of its bottleneck plus the additive increase") {
  // R = Rc / (U / eta) + R_AI with U = R / B (no queue below the line rate) has the fixed point
  // R = eta B + R_AI: 95.04 Gb/s of wire bytes at 100 Gb/s. A 32 MiB message therefore takes
  // its wire bytes at that rate, within the first round trips at the line rate (< 1 %).
  Scenario sc = testing::one_leaf(2, kLine, kProp, kLatency, 4 << 20, 4096);
  sc.nic.congestion_control = "hpcc";
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  const int64_t bytes = 32 << 20, packets = bytes / 4096;
  bed.net->send(0, 1, bytes, 0, 0);
  bed.sim.run();
  const int64_t wire = packets * (kWire + 42);  // HPCC's INT header on every data packet
  const double expected_ps = wire * 8.0 * 1e12 / (0.95 * kLine + 40 * kMbps);
  const double fct = static_cast<double>(rec.done.at(0));
  INFO("FCT " << fct / 1e6 << " us, eta B + AI gives " << expected_ps / 1e6 << " us");
  CHECK(fct == Approx(expected_ps).epsilon(0.01));
  CHECK(bed.net->totals().drops == 0);
}

TEST_CASE("hpcc: ACKs every 64 packets never stall the window on the retransmission timer") {
  // A window of about 14 packets (W = R T at 100 Gb/s over a 4.7 us idle RTT) under a receiver
  // that ACKs every 64th packet: the window counted alone, the QP stopped at 14 packets and
  // waited for its timeout, again and again (a window of 64 packets still stalled it each round,
  // 18 % slow). The window grows by ack_interval - 1 packets, the ones the receiver answers late:
  // a 32 MiB message runs at the rate HPCC sets, with no timeout and no resend.
  Scenario sc = testing::one_leaf(2, kLine, kProp, kLatency, 4 << 20, 4096);
  sc.nic.congestion_control = "hpcc";
  sc.nic.ack_interval = 64;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  const int64_t bytes = 32 << 20;
  bed.net->send(0, 1, bytes, 0, 0);
  bed.sim.run();
  const NetTotals t = bed.net->totals();
  CHECK(t.rto_timeouts == 0);
  CHECK(t.retransmits == 0);
  // No slower than eta B + R_AI by more than 5 % (fewer samples: one per 64 packets).
  const double eta_ps = bytes / 4096 * (kWire + 42) * 8.0 * 1e12 / (0.95 * kLine + 40 * kMbps);
  INFO("FCT " << rec.done.at(0) << " ps; at eta B + AI " << eta_ps << " ps");
  CHECK(static_cast<double>(rec.done.at(0)) <= 1.05 * eta_ps);
}

TEST_CASE("hpcc: each queue pair's base RTT is its idle round trip (hpcc.base_rtt 0)") {
  // With the window on and T the idle RTT, W = B x T at the line rate is exactly the bytes a
  // line-rate sender has out when its first ACK comes back: the window never holds a lone QP
  // back before the rate does. With T a tenth of it, the window caps the QP at a tenth.
  Scenario sc = testing::one_leaf(2, kLine, kProp, kLatency, 4 << 20, 4096);
  sc.nic.congestion_control = "hpcc";
  sc.hpcc.base_rtt_ps = 0;
  const auto fct = [&](int64_t base_rtt_ps) {
    sc.hpcc.base_rtt_ps = base_rtt_ps;
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 1, 4 << 20, 0, 0);
    bed.sim.run();
    return rec.done.at(0);
  };
  // The idle RTT: 2 data frames (with INT) and 2 ACK frames (86 + 42 B) serialized, 4
  // propagations, 2 switch latencies: 4.7 us; W = 58.8 KB, about 14 packets.
  const int64_t rtt =
      2 * ser(kWire + 42, kLine) + 2 * ser(86 + 42, kLine) + 4 * kProp + 2 * kLatency;
  const int64_t own = fct(0);
  const int64_t tenth = fct(rtt / 10);
  INFO("FCT with T = idle RTT " << own << " ps, with T = RTT / 10 " << tenth << " ps");
  CHECK(own == fct(rtt));  // 0 means the QP's own idle RTT
  CHECK(tenth > 5 * own);  // a window of 1.4 packets: stop and wait
}

/// The FCT slowdown of scenarios/background-websearch.yaml (32 hosts, web-search at 30 % load,
/// 5 ms of arrivals) under the control `cc`.
FctSlowdown websearch_slowdown(const std::string& cc) {
  RunOptions opts;
  opts.scenario_path = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/background-websearch.yaml";
  opts.sets = {"nic.congestion_control=" + cc};
  Scenario sc = load(opts);
  const Prepared prepared = prepare(sc);
  const RunReport report = simulate(sc, prepared, nullptr, false);
  CHECK(report.congestion_control == cc);  // results.json `congestion_control`
  return report.slowdown;
}

TEST_CASE("hpcc against DCQCN on web-search: shorter tails for the short flows") {
  // The HPCC authors' comparison (Li et al., SIGCOMM 2019, §5; hpcc-group.github.io/results.html:
  // "HPCC significantly improves the FCT for flows < 200KB, especially at the tail", while
  // HPCC-INT's long flows pay for the INT header). Checked here on the 32-host scenario: in every
  // bucket below 300 KB with at least 10 flows, HPCC's p95 slowdown is below DCQCN's (ConnectX
  // defaults), and over all flows its p95 and p99 are. docs/congestion-experiments.md has the
  // 128-host fat-tree comparison with the authors' DCQCN settings.
  const FctSlowdown dcqcn = websearch_slowdown("dcqcn");
  const FctSlowdown hpcc = websearch_slowdown("hpcc");
  REQUIRE(dcqcn.flows() == hpcc.flows());  // the same flows, drawn before the run
  int compared = 0;
  for (size_t i = 0; i < hpcc.buckets.size(); ++i) {
    const SlowdownBucket& d = dcqcn.buckets[i];
    const SlowdownBucket& h = hpcc.buckets[i];
    if (h.max_bytes < 0 || h.max_bytes > 300'000 || h.count < 10) continue;
    INFO("sizes " << h.above_bytes << " .. " << h.max_bytes << " B: p95 DCQCN " << d.p95
                  << ", HPCC " << h.p95);
    CHECK(h.p95 < d.p95);
    ++compared;
  }
  CHECK(compared >= 4);
  CHECK(hpcc.all.p95 < dcqcn.all.p95);
  CHECK(hpcc.all.p99 < dcqcn.all.p99);
}

TEST_CASE("hpcc: the hpcc section's keys reach the sender's parameters, in their units") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("fabricsim_test_hpcc_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "topology: {kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 2}\n"
                         "link: {host_rate: 100Gbps, propagation_delay: 1us}\n"
                         "switch: {latency: 500ns, buffer_per_port: 4MB}\n"
                         "traffic:\n  - {src: host0, dst: host1, size: 1MiB}\n"
                         "nic: {congestion_control: hpcc}\n"
                         "hpcc: {eta: 0.99, max_stage: 5, rate_ai: 50Mbps, min_rate: 100Mbps, "
                         "fast_react: false, window: false, base_rtt: 13us, "
                         "int_header_bytes: 0}\n";
  const Scenario sc = load_scenario(path.string());
  std::filesystem::remove(path);
  const HpccConfig& h = sc.hpcc;
  CHECK(h.eta == 0.99);
  CHECK(h.max_stage == 5);
  CHECK(h.rate_ai_bps == 50 * kMbps);
  CHECK(h.min_rate_bps == 100 * kMbps);
  CHECK_FALSE(h.fast_react);
  CHECK_FALSE(h.window);
  CHECK(h.base_rtt_ps == 13 * kUs);
  CHECK(h.int_header_bytes == 0);
  CHECK(net_config_for(sc).cc.kind == CcKind::kHpcc);
  CHECK(congestion_control_in_effect(sc) == "hpcc");
  CHECK(net_config_for(sc).cc.needs_int());
  CHECK_FALSE(net_config_for(sc).cc.needs_rtt());
}

}  // namespace
}  // namespace fabricsim
