// TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1), as congestion/timely/ computes it, against
// rates worked out by hand from the algorithm's formulas with the defaults of the HPCC authors'
// ns-3 model (alpha 0.875, beta 0.8, T_low 50 us, T_high 500 us, minRTT 20 us, HAI after 5);
// and the RTT the NIC measures for it (a data packet's send stamp echoed in its ACK), against
// the closed form of an idle path.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support.hpp"
#include "congestion/cc_registry.hpp"
#include "congestion/timely/timely.hpp"
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

/// A sender with the defaults whose first sample (rtt0, PSN 1 acknowledged, 10 sent) set its
/// reference RTT; the next call with acked_psn 11 closes the round trip.
TimelyRp primed(const TimelyConfig* cfg, int64_t rtt0_ps) {
  TimelyRp rp(cfg, kLine);
  rp.on_rtt(1, 10, rtt0_ps);
  return rp;
}

TEST_CASE("timely: a QP starts at the line rate, and the first sample only sets the reference") {
  const TimelyConfig cfg;
  TimelyRp rp(&cfg, kLine);
  CHECK(rp.rate_bps() == kLine);
  rp.on_rtt(1, 10, 900 * kUs);  // far above T_high, but there is no previous RTT yet
  CHECK(rp.rate_bps() == kLine);
  CHECK(rp.samples() == 1);
  CHECK(rp.updates() == 0);
}

TEST_CASE("timely: above T_high the rate falls by beta (1 - T_high / rtt)") {
  const TimelyConfig cfg;
  TimelyRp rp = primed(&cfg, 100 * kUs);
  rp.on_rtt(11, 20, 1000 * kUs);
  // 1 - 0.8 (1 - 500 / 1000) = 0.6 of 100 Gb/s.
  CHECK(rp.rate_bps() == 60'000'000'000);
  CHECK(rp.decreases() == 1);
}

TEST_CASE("timely: between the thresholds a rising RTT cuts by beta x the normalized gradient") {
  const TimelyConfig cfg;
  TimelyRp rp = primed(&cfg, 100 * kUs);
  rp.on_rtt(11, 20, 110 * kUs);
  // rtt_diff = 0.875 x 10 us = 8.75 us; gradient 8.75 / 20 = 0.4375; 1 - 0.8 x 0.4375 = 0.65.
  CHECK(rp.rtt_diff_ps() == Approx(8.75 * kUs));
  CHECK(rp.rate_bps() == 65'000'000'000);
  // Next RTT 120 us: new diff 10 us; rtt_diff = 0.125 x 8.75 + 0.875 x 10 = 9.84375 us;
  // gradient 0.4921875; factor 1 - 0.39375 = 0.60625 of 65 Gb/s = 39.40625 Gb/s.
  rp.on_rtt(21, 30, 120 * kUs);
  CHECK(rp.rate_bps() == 39'406'250'000);
  // A gradient above 1 / beta would make the factor negative: the rate stops at the floor.
  rp.on_rtt(31, 40, 400 * kUs);  // diff 280 us: gradient about 12
  CHECK(rp.rate_bps() == cfg.min_rate_bps);
}

TEST_CASE("timely: a falling RTT between the thresholds, or one below T_low, adds delta") {
  const TimelyConfig cfg;
  TimelyRp rp = primed(&cfg, 100 * kUs);
  rp.on_rtt(11, 20, 1000 * kUs);  // to 60 Gb/s
  rp.on_rtt(21, 30, 400 * kUs);   // falling: gradient < 0, in the band
  CHECK(rp.rate_bps() == 60'000'000'000 + 10 * kMbps);
  rp.on_rtt(31, 40, 10 * kUs);  // below T_low: increase whatever the gradient
  CHECK(rp.rate_bps() == 60'000'000'000 + 20 * kMbps);
}

TEST_CASE("timely: after N = 5 increases in a row the step is N x delta (HAI)") {
  const TimelyConfig cfg;
  TimelyRp rp = primed(&cfg, 100 * kUs);
  rp.on_rtt(11, 20, 1000 * kUs);  // 60 Gb/s, and the run of increases starts at 0
  int64_t expected = 60'000'000'000;
  for (uint32_t i = 0; i < 8; ++i) {
    rp.on_rtt(21 + 10 * i, 30 + 10 * i, 10 * kUs);
    expected += i < 5 ? 10 * kMbps : 50 * kMbps;
    CHECK(rp.rate_bps() == expected);
  }
  CHECK(rp.hai_increases() == 3);
  // A decrease ends the run: the next increase is delta again.
  rp.on_rtt(101, 110, 1000 * kUs);
  const int64_t cut = rp.rate_bps();
  rp.on_rtt(111, 120, 10 * kUs);
  CHECK(rp.rate_bps() == cut + 10 * kMbps);
  // The rate never passes the line rate.
  TimelyConfig big = cfg;
  big.rai_bps = 30'000'000'000;
  TimelyRp fast = primed(&big, 10 * kUs);
  fast.on_rtt(11, 20, 10 * kUs);
  CHECK(fast.rate_bps() == kLine);
}

TEST_CASE("timely: one rate computation per round trip") {
  const TimelyConfig cfg;
  TimelyRp rp = primed(&cfg, 100 * kUs);  // the update's snd_nxt: 10
  // ACKs of what was sent before that update (cumulative PSN up to 10) do not compute.
  for (uint32_t psn = 2; psn <= 10; ++psn) rp.on_rtt(psn, 30, 1000 * kUs);
  CHECK(rp.rate_bps() == kLine);
  CHECK(rp.updates() == 0);
  CHECK(rp.samples() == 10);
  rp.on_rtt(11, 30, 1000 * kUs);  // the first ACK of a packet sent after it
  CHECK(rp.updates() == 1);
  rp.on_rtt(12, 31, 1000 * kUs);  // the next round trip ends at PSN 30
  CHECK(rp.updates() == 1);
}

TEST_CASE("timely: parameters are checked, naming the one at fault") {
  TimelyConfig c;
  c.t_high_ps = c.t_low_ps - 1;
  CHECK_THROWS_WITH(TimelyRp(&c, kLine), Catch::Contains("t_high"));
  c = TimelyConfig{};
  c.min_rate_bps = 2 * kLine;
  CHECK_THROWS_WITH(TimelyRp(&c, kLine), Catch::Contains("min_rate"));
  c = TimelyConfig{};
  c.alpha = 0;
  CHECK_THROWS_WITH(TimelyRp(&c, kLine), Catch::Contains("alpha"));
  TimelyRp inert;
  CHECK_THROWS_AS(inert.on_rtt(1, 1, 1), std::logic_error);
  c = TimelyConfig{};
  TimelyRp rp(&c, kLine);
  CHECK_THROWS_WITH(rp.on_rtt(1, 1, -1), Catch::Contains("negative RTT"));
}

// The NIC's RTT measurement, through a registered control that asks for it (needs_rtt) and
// records every sample.
std::vector<int64_t> rtts;
std::vector<uint32_t> rtt_psns;

class RttRecorder : public CcSender {
 public:
  void on_rtt(uint32_t psn, uint32_t, int64_t rtt_ps, int64_t) override {
    rtts.push_back(rtt_ps);
    rtt_psns.push_back(psn);
  }
  int64_t rate_bps() const override { return 0; }
};

void register_rtt_recorder() {
  if (find_congestion_control("rtt_recorder") != nullptr) return;
  CongestionControl cc;
  cc.name = "rtt_recorder";
  cc.doc = "line rate; records the RTT samples";
  cc.make_sender = [](const CcQpInfo&) { return std::make_unique<RttRecorder>(); };
  cc.needs_rtt = true;
  register_congestion_control(std::move(cc));
}

// RoCEv2 frames: a 4096-B packet 4096 + 82 B on the wire; an ACK 62 header + 4 AETH + 20
// framing = 86 B.
constexpr int64_t kWire = 4096 + 82, kAckWire = 86;
constexpr int64_t kProp = 1'000'000, kLatency = 500'000;

TEST_CASE("the NIC's RTT sample on an idle path is the round trip's closed form") {
  register_rtt_recorder();
  rtts.clear();
  rtt_psns.clear();
  Scenario sc = testing::one_leaf(2, kLine, kProp, kLatency, 4 << 20, 4096);
  sc.nic.congestion_control = "rtt_recorder";
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, 1 << 20, 0, 0);
  bed.sim.run();
  // Each packet is stamped as the NIC starts it; it crosses two links (NIC, leaf egress) store
  // and forward with the leaf's latency between; its ACK leaves the receiver at once and
  // crosses the same two hops back. Back-to-back packets never queue at the leaf.
  const int64_t rtt = 2 * ser(kWire, kLine) + 2 * ser(kAckWire, kLine) + 4 * kProp + 2 * kLatency;
  REQUIRE(rtts.size() == 256);  // one ACK per packet (ack_interval 1)
  for (size_t i = 0; i < rtts.size(); ++i) {
    CHECK(rtts[i] == rtt);
    CHECK(rtt_psns[i] == i + 1);
  }
}

TEST_CASE("timely: a lone message never leaves the line rate (its RTT stays below T_low)") {
  Scenario sc = testing::one_leaf(2, kLine, kProp, kLatency, 4 << 20, 4096);
  const auto fct = [&](const std::string& cc) {
    sc.nic.congestion_control = cc;
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 1, 8 << 20, 0, 0);
    bed.sim.run();
    return rec.done.at(0);
  };
  // 2048 packets back to back at the NIC, then the last one's hop through the leaf.
  const int64_t line = 2048 * ser(kWire, kLine) + ser(kWire, kLine) + 2 * kProp + kLatency;
  CHECK(fct("none") == line);
  CHECK(fct("timely") == line);
}

TEST_CASE("timely: the timely section's keys reach the sender's parameters, in their units") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("fabricsim_test_timely_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "topology: {kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 2}\n"
                         "link: {host_rate: 100Gbps, propagation_delay: 1us}\n"
                         "switch: {latency: 500ns, buffer_per_port: 4MB}\n"
                         "traffic:\n  - {src: host0, dst: host1, size: 1MiB}\n"
                         "nic: {congestion_control: timely}\n"
                         "timely: {t_low: 20us, t_high: 1ms, min_rtt: 8us, alpha: 0.02, "
                         "beta: 0.5, rai: 100Mbps, rhai: 1Gbps, hai_threshold: 3, "
                         "min_rate: 100Mbps}\n";
  const Scenario sc = load_scenario(path.string());
  std::filesystem::remove(path);
  const TimelyConfig& t = sc.timely;
  CHECK(t.t_low_ps == 20 * kUs);
  CHECK(t.t_high_ps == 1000 * kUs);
  CHECK(t.min_rtt_ps == 8 * kUs);
  CHECK(t.alpha == 0.02);
  CHECK(t.beta == 0.5);
  CHECK(t.rai_bps == 100 * kMbps);
  CHECK(t.rhai_bps == 1000 * kMbps);
  CHECK(t.hai_threshold == 3);
  CHECK(t.min_rate_bps == 100 * kMbps);
  CHECK(net_config_for(sc).cc.kind == CcKind::kTimely);
  CHECK(net_config_for(sc).cc.needs_rtt());
}

}  // namespace
}  // namespace fabricsim
