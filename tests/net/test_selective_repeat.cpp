// Selective repeat (nic.loss_recovery: selective_repeat) against closed forms: a frame-slot
// model of one lossy link written out here (not taken from sim/net), the timeout's arithmetic,
// and reordering without loss. Header sizes: tests/support.hpp (kRoceOverhead, kRoceAck).
#include <catch2/catch.hpp>
#include <map>

#include "../support.hpp"

using namespace fabricsim;
using fabricsim::testing::Bed;
using fabricsim::testing::kGbps;
using fabricsim::testing::kRoceAck;
using fabricsim::testing::kRoceOverhead;
using fabricsim::testing::one_leaf;
using fabricsim::testing::port_between;
using fabricsim::testing::Recorder;
using fabricsim::testing::ser;

namespace {

/// Selective repeat over one link that loses every k-th frame, in frame slots: the sender fills
/// every slot, a resend first; a lost packet L is deemed lost when the receiver's selective ACK
/// of packet L + th (th = reorder_threshold) reaches the sender, `w` slots after that packet's
/// slot began, and is resent in the next slot. Returns the last frame's slot and the counts.
struct SrSlots {
  int64_t last_slot = 0, frames = 0, losses = 0, resends = 0;
};
SrSlots selective_repeat_slots(int64_t packets, int64_t k, int64_t th, int64_t w) {
  SrSlots m;
  std::map<int64_t, int64_t> lost;  // lost PSN -> slot its resend is due (-1: not yet known)
  std::map<int64_t, int64_t> due;   // slot -> PSN to resend
  int64_t next = 0, received = 0;
  for (int64_t slot = 0; received < packets; ++slot) {
    int64_t psn = -1;
    bool resend = false;
    if (!due.empty() && due.begin()->first <= slot) {
      psn = due.begin()->second;
      due.erase(due.begin());
      resend = true;
    } else if (next < packets) {
      psn = next++;
    } else {
      // Idle: a resend is due later. A loss no packet th past it can reveal waits for the
      // timeout instead, which this model leaves out (choose P so that it does not happen).
      REQUIRE(!due.empty());
      continue;
    }
    ++m.frames;
    if (m.frames % k == 0) {
      REQUIRE(!resend);  // choose k so that no resend is lost (that waits for the timeout)
      ++m.losses;
      lost[psn] = -1;
    } else {
      ++received;
      if (resend) ++m.resends;
      // This packet's selective ACK marks every lost PSN at least th below it as lost.
      for (auto& [l, at] : lost) {
        if (at < 0 && psn >= l + th) {
          at = slot + w;
          due[at] = l;
        }
      }
    }
    m.last_slot = slot;
  }
  return m;
}

}  // namespace

TEST_CASE("selective repeat: a loss every k-th frame costs one frame each, goodput (k - 1) / k") {
  // One flow host0 -> leaf0 -> host1; the leaf's egress loses every k-th frame. A selective
  // ACK of the packet th past a loss reaches the sender 2T + 4 prop + 2 lat + 2 Ta after that
  // packet's slot began (T, Ta: data and ACK frame times); the resend takes the next slot.
  // Only lost frames are sent again (go-back-N resends the W frames behind each loss), so the
  // link carries P + D frames for P packets: goodput P / (P + D) ~ (k - 1) / k. The message
  // completes with the last bit of the last frame: 2T + 2 prop + lat after its slot began.
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000;
  const int64_t t = ser(mtu + kRoceOverhead, rate), ta = ser(kRoceAck, rate);
  const int64_t w = (2 * t + 4 * prop + 2 * lat + 2 * ta + t - 1) / t;  // not a whole slot
  REQUIRE((2 * t + 4 * prop + 2 * lat + 2 * ta) % t != 0);
  const int64_t packets = 20'050, k = 100, th = 3;  // the last loss is 50 before the end
  const SrSlots m = selective_repeat_slots(packets, k, th, w);
  auto sc = one_leaf(2, rate, prop, lat, 64 << 20, mtu);
  sc.nic.loss_recovery = "selective_repeat";
  sc.nic.reorder_threshold = static_cast<int>(th);
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->set_drop_every(port_between(bed, "leaf0", "host1"), static_cast<uint32_t>(k));
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  bed.net->check_conservation();
  const NetTotals totals = bed.net->totals();
  CHECK(rec.done.at(0) == m.last_slot * t + 2 * t + 2 * prop + lat);
  CHECK(totals.corrupt_drops == m.losses);
  CHECK(totals.retransmits == m.losses);  // each lost frame sent again once, nothing else
  CHECK(m.resends == m.losses);
  CHECK(totals.nak_tx == 0);
  CHECK(totals.rto_timeouts == 0);
  CHECK(m.frames == packets + m.losses);
  const double goodput = static_cast<double>(packets) / static_cast<double>(m.last_slot + 1);
  CHECK(goodput == Approx(double(k - 1) / k).margin(0.001));
}

TEST_CASE("selective repeat: without a reorder threshold a loss waits for the timeout alone") {
  // P = 64 packets, the 40th frame (PSN 39) lost, nothing else. reorder_threshold 0: the
  // selective ACKs of PSNs 40..63 do not resend it. The timer restarts at the last cumulative
  // progress, the ACK of PSN 38, which reaches host0 2T + 4 prop + 2 lat + 2 Ta after slot 38
  // began; it fires an RTO later and only PSN 39 is sent again, on the idle link; its last bit
  // is in 2T + 2 prop + lat later and completes the message (64 packets, 1 resend).
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000, rto = 50'000'000;
  const int64_t packets = 64;
  auto sc = one_leaf(2, rate, prop, lat, 64 << 20, mtu);
  sc.nic.rto_ps = rto;
  sc.nic.loss_recovery = "selective_repeat";
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->set_drop_every(port_between(bed, "leaf0", "host1"), 40);
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  const int64_t t = ser(mtu + kRoceOverhead, rate), ta = ser(kRoceAck, rate);
  const int64_t last_progress = 38 * t + 2 * t + 4 * prop + 2 * lat + 2 * ta;
  CHECK(rec.done.at(0) == last_progress + rto + 2 * t + 2 * prop + lat);
  CHECK(bed.net->totals().rto_timeouts == 1);
  CHECK(bed.net->totals().retransmits == 1);
  CHECK(bed.net->totals().nak_tx == 0);
  bed.net->check_conservation();
}

TEST_CASE("selective repeat: reordering by per-packet spraying resends nothing") {
  // Per-packet spraying over a 10 Gb/s and three 400 Gb/s uplinks reorders packets heavily
  // (the same fabric as go-back-N's reordering regression in test_packet_model.cpp). No frame
  // is lost, so an out-of-order receiver has nothing to ask for: zero NAKs, zero resends, and
  // every message completes. The same traffic under go-back-N resends what arrived out of
  // order (its count is checked positive: the reordering is real).
  const auto run = [](const char* recovery) {
    auto sc = fabricsim::testing::spine_leaf(2, 4, 4, 400 * kGbps, 250'000, 500'000, 2 << 20, 4096);
    sc.routing.load_balancing = "per_packet";
    sc.topology.degraded_links = {{"leaf1-spine0", 10 * kGbps}};
    sc.nic.loss_recovery = recovery;
    sc.nic.reorder_threshold = 0;
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    for (int h = 0; h < 2; ++h) bed.net->send(h, 4 + h, 2 << 20, 0, static_cast<uint64_t>(h));
    bed.net->send(6, 2, 2 << 20, 0, 2);
    bed.sim.run();
    for (int m = 0; m < 3; ++m) CHECK(rec.done.at(m) > 0);
    CHECK(bed.net->failure().empty());
    bed.net->check_conservation();
    return bed.net->totals();
  };
  const NetTotals gbn = run("go_back_n");
  CHECK(gbn.retransmits > 0);
  const NetTotals sr = run("selective_repeat");
  CHECK(sr.drops == 0);
  CHECK(sr.retransmits == 0);
  CHECK(sr.nak_tx == 0);
  CHECK(sr.rto_timeouts == 0);
}

TEST_CASE("selective repeat: a full congestion window does not hold back the resend of a hole") {
  // Regression: HPCC's window counts snd_nxt - snd_una; selective repeat never moves snd_nxt
  // back, and a lost packet keeps snd_una behind it, so the window stays full. The resend must
  // leave anyway (it is below snd_nxt, inside the window): before, the QP timed out again and
  // again and failed with "transport retry counter exceeded". One loss (the 40th frame), the
  // timeout resends it and only it, and the message completes.
  auto sc = one_leaf(2, 100 * kGbps, 200'000, 300'000, 64 << 20, 1000);
  sc.nic.congestion_control = "hpcc";
  sc.nic.loss_recovery = "selective_repeat";
  sc.nic.rto_ps = 50'000'000;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->set_drop_every(port_between(bed, "leaf0", "host1"), 40);
  bed.net->send(0, 1, 64 * 1000, 0, 0);
  bed.sim.run();
  CHECK(bed.net->failure().empty());
  CHECK(rec.done.at(0) > 0);
  CHECK(bed.net->totals().corrupt_drops == 1);
  CHECK(bed.net->totals().retransmits == 1);
  CHECK(bed.net->totals().rto_timeouts == 1);
  bed.net->check_conservation();
}
