// The packet model against queueing truths: incast, Little's law, go-back-N,
// conservation, shared-buffer dynamic thresholds, strict priority / DWRR, cut-through latency,
// bit errors, the per-QP rate limiter and the retransmission timeout. Every expected value is a
// closed form written out here from the standards' header sizes, not taken from sim/net.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

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

TEST_CASE("incast: N senders into one port get 1/N each and the queue grows at (N-1) x rate") {
  // N hosts each send K packets to host N at line rate R through one leaf with a buffer big
  // enough for the whole burst. The egress to host N serves one frame per slot T while N arrive:
  // the queue grows by N-1 frames per slot for K slots, so it peaks at (N-1)K frames (within a
  // frame per sender), and FIFO interleaves the senders so they all finish within N slots of
  // N*K*T: each got 1/N of the port.
  const int n = 4;
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead, k = 400;
  Bed bed(one_leaf(n + 1, rate, 100'000, 300'000, 64 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  for (int h = 0; h < n; ++h) bed.net->send(h, n, k * mtu, 0, static_cast<uint64_t>(h));
  bed.sim.run();
  const uint32_t bottleneck = port_between(bed, "leaf0", "host" + std::to_string(n));
  const int64_t peak = bed.net->queue(bottleneck, 3).occupancy.max_bytes;
  CHECK(peak >= ((n - 1) * k - n) * w);
  CHECK(peak <= ((n - 1) * k + n) * w);
  const int64_t t = ser(w, rate);
  const int64_t path = 2 * 100'000 + 300'000 + t;  // 2 links, 1 switch, the first hop's slot
  for (int h = 0; h < n; ++h) {
    INFO("sender " << h);
    CHECK(rec.done.at(h) >= n * k * t + path - n * t);
    CHECK(rec.done.at(h) <= n * k * t + path + n * t);
  }
  CHECK(bed.net->totals().drops == 0);
  bed.net->check_conservation();
}

TEST_CASE("incast: tail drops match the fluid calculation for the configured buffer") {
  // N senders at line rate R into one egress of rate R holding at most L bytes. In the fluid
  // limit, once the queue is full (at t0 + L / ((N-1)R)), every arriving byte beyond R is
  // dropped, so by time t: drops = (N-1) R (t - t0) - L, where t0 is the first arrival. Go-back-N
  // keeps every sender transmitting at line rate (new or resent data), so the arrival rate stays
  // N R. Checked for a static buffer and for a shared buffer, whose single congested queue
  // settles at alpha x pool / (1 + alpha) (Choudhury & Hahne 1998).
  const int n = 4;
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead, prop = 100'000,
                lat = 300'000;
  const int64_t stop = 2'000'000'000;  // 2 ms
  auto run = [&](Scenario sc, int64_t limit_bytes) {
    Bed bed(sc);
    for (int h = 0; h < n; ++h) bed.net->send(h, n, int64_t{1} << 30, 0, static_cast<uint64_t>(h));
    bed.sim.run(SimTime(stop));
    const uint32_t bottleneck = port_between(bed, "leaf0", "host" + std::to_string(n));
    const auto& q = bed.net->queue(bottleneck, 3);
    // Arrivals start when the first frames are in and forwarded: one slot, one link, latency.
    const double t0 = static_cast<double>(ser(w, rate) + prop + lat);
    const double fluid_drop_bytes = (n - 1) * rate / 8.0 * (stop - t0) * 1e-12 - limit_bytes;
    INFO("tail drops " << q.drop_bytes << " B, fluid " << fluid_drop_bytes << " B");
    CHECK(q.occupancy.max_bytes <= limit_bytes);
    CHECK(q.occupancy.max_bytes >= limit_bytes - w);
    CHECK(std::abs(q.drop_bytes - fluid_drop_bytes) <= 2.0 * n * w);
    bed.net->check_conservation();
  };
  SECTION("static per-port buffer") {
    const int64_t buffer = 50 * w;
    run(one_leaf(n + 1, rate, prop, lat, buffer, mtu), buffer);
  }
  SECTION("shared buffer, alpha 1 and 2, no reservation") {
    for (double alpha : {1.0, 2.0}) {
      auto sc = one_leaf(n + 1, rate, prop, lat, 0, mtu);
      sc.sw.buffer_model = "shared";
      sc.sw.shared_buffer_bytes = 300 * w;
      sc.sw.alpha = alpha;
      // The queue stops growing when q + w > alpha (B - q), i.e. at the largest whole number
      // of frames with q <= (alpha B - w) / (1 + alpha) ... plus that last frame.
      const double b = static_cast<double>(sc.sw.shared_buffer_bytes);
      const int64_t frames = static_cast<int64_t>(std::floor((alpha * b / (1 + alpha)) / w));
      INFO("alpha " << alpha);
      run(sc, frames * w);
    }
  }
}

TEST_CASE(
    "Little's law: time-averaged queue = arrival rate x mean sojourn, and D/D/1 closed form") {
  // Two senders rate-limited to 0.4 R send into one egress of rate R. Their frames arrive
  // together every period P = w / (0.4 R): one is served at once (sojourn T = w / R), the other
  // waits one slot (sojourn 2T). So W = 1.5 T and, by Little, L = lambda W w with
  // lambda = 2 / P frames per second.
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead, packets = 2000;
  auto sc = one_leaf(3, rate, 100'000, 300'000, 4 << 20, mtu);
  sc.nic.qp_rate_limit_bps = rate * 2 / 5;
  Bed bed(sc);
  bed.net->send(0, 2, packets * mtu, 0, 0);
  bed.net->send(1, 2, packets * mtu, 0, 1);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.sim.run();
  const int64_t end = std::max(rec.done.at(0), rec.done.at(1));
  bed.net->settle_statistics();
  const uint32_t port = port_between(bed, "leaf0", "host2");
  const QueueCounters& q = bed.net->queue(port, 3);
  REQUIRE(q.tx_packets == 2 * packets);
  const double t = static_cast<double>(ser(w, rate));
  const double mean_sojourn = static_cast<double>(q.sojourn_ps) / q.tx_packets;
  CHECK(mean_sojourn == Approx(1.5 * t).epsilon(1e-3));
  // Little's law over [0, end]: the queue is empty at both ends (and stays so after end, while
  // the run drains ACKs and timers, so the integral is the one over [0, end]).
  const double lambda = q.tx_packets / static_cast<double>(end);
  const double l_avg = static_cast<double>(q.occupancy.area) / static_cast<double>(end);
  CHECK(l_avg == Approx(lambda * mean_sojourn * w).epsilon(1e-9));
  // And the closed form: lambda = 2 / P while both send.
  const double period = static_cast<double>(ser(w, rate * 2 / 5));
  CHECK(l_avg == Approx(2.0 / period * 1.5 * t * w).epsilon(0.01));
}

namespace {

/// Sends one message of `packets` MTU packets host0 -> host1 over one leaf whose egress to host1
/// loses every k-th frame; returns the completion time and the network's totals.
std::pair<int64_t, NetTotals> lossy_transfer(int64_t packets, uint32_t k, int64_t rate, int64_t mtu,
                                             int64_t prop, int64_t lat) {
  Bed bed(one_leaf(2, rate, prop, lat, 64 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->set_drop_every(port_between(bed, "leaf0", "host1"), k);
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  bed.net->check_conservation();
  return {rec.done.at(0), bed.net->totals()};
}

}  // namespace

namespace {

/// Go-back-N over one link that loses every k-th frame, as a frame-slot model independent of
/// sim/net: the sender fills every slot; a lost frame makes the sender resend it `w` slots later
/// (the NAK's round trip), and the frames in between are discarded by the receiver. Returns the
/// slot of the frame that completes the message, and counts frames, losses and resends.
struct SlotModel {
  int64_t last_slot = 0, frames = 0, losses = 0;
};
SlotModel go_back_n_slots(int64_t packets, int64_t k, int64_t w) {
  SlotModel m;
  int64_t psn = 0, rcv = 0, rewind_at = -1, rewind_to = 0;
  for (int64_t slot = 0; rcv < packets; ++slot) {
    if (slot == rewind_at) {
      psn = rewind_to;
      rewind_at = -1;
    }
    REQUIRE(psn < packets);  // the sender never runs dry waiting for a NAK (choose P so)
    ++m.frames;
    if (m.frames % k == 0) {
      REQUIRE(rewind_at < 0);  // k > w: one loss at a time
      ++m.losses;
      rewind_at = slot + w;
      rewind_to = psn;
    } else if (psn == rcv) {
      ++rcv;
    }
    m.last_slot = slot;
    ++psn;
  }
  return m;
}

}  // namespace

TEST_CASE("go-back-N: goodput under a fixed loss pattern matches the analytical expectation") {
  // One flow host0 -> leaf0 -> host1; the leaf's egress loses every k-th frame. The frame after
  // a loss reveals the gap at the receiver, whose NAK reaches the sender at
  // s + 3T + 4 prop + 2 lat + 2 Ta (s: the lost frame's slot; T, Ta: data and NAK frame times).
  // By then the sender has started W = ceil((3T + 4 prop + 2 lat + 2 Ta) / T) frames since the
  // lost one; it resends from the lost one. So of every k frames on the link W carry nothing
  // new: goodput = (k - W) / k of the lossless rate. The slot model above gives the exact slot
  // of the last frame; its last bit reaches host1 2T + 2 prop + lat after the slot starts.
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000;
  const int64_t t = ser(mtu + kRoceOverhead, rate), ta = ser(kRoceAck, rate);
  const int64_t w = (3 * t + 4 * prop + 2 * lat + 2 * ta + t - 1) / t;
  const int64_t packets = 20'000, k = 100;
  const SlotModel m = go_back_n_slots(packets, k, w);
  const auto [done, totals] = lossy_transfer(packets, k, rate, mtu, prop, lat);
  CHECK(done == m.last_slot * t + 2 * t + 2 * prop + lat);
  CHECK(totals.corrupt_drops == m.losses);
  CHECK(totals.nak_tx == m.losses);
  CHECK(totals.retransmits == m.frames - packets);
  CHECK(totals.rto_timeouts == 0);
  // The goodput fraction itself, (k - W) / k, within one cycle of edge effect.
  const double goodput_fraction = static_cast<double>(packets) / (m.last_slot + 1);
  CHECK(goodput_fraction == Approx(double(k - w) / k).margin(double(k) / packets));
}

TEST_CASE("go-back-N: a drop every 256th packet on 4 MB messages still makes progress") {
  // Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM 2016, §4: NICs that went back
  // to the first packet of the message (go-back-0) livelocked under a loss every 256 packets on
  // 4 MB messages (1024 packets of 4 KB). Go-back-N resends only from the lost packet.
  const int64_t rate = 100 * kGbps, mtu = 4096, prop = 200'000, lat = 300'000;
  const int64_t t = ser(mtu + kRoceOverhead, rate), ta = ser(kRoceAck, rate);
  const int64_t w = (3 * t + 4 * prop + 2 * lat + 2 * ta + t - 1) / t;
  const int64_t packets = (4 << 20) / mtu;
  const SlotModel m = go_back_n_slots(packets, 256, w);
  const auto [done, totals] = lossy_transfer(packets, 256, rate, mtu, prop, lat);
  CHECK(done == m.last_slot * t + 2 * t + 2 * prop + lat);
  CHECK(totals.corrupt_drops == 4);  // frames 256, 512, 768, 1024 of 1024 + 4 W
  CHECK(m.losses == 4);
}

TEST_CASE("go-back-N: a lost tail packet is recovered by the retransmission timeout") {
  // The last of P packets is lost: nothing follows it, so no NAK. The timer restarts at the
  // last ACK (for packet P-1, at P T + 4 prop + 2 lat + 2 Ta) and fires an RTO later; the
  // resent packet arrives 2T + 2 prop + lat after that.
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000,
                rto = 50'000'000;  // 50 us
  const int64_t packets = 64;
  auto sc = one_leaf(2, rate, prop, lat, 64 << 20, mtu);
  sc.nic.rto_ps = rto;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->set_drop_every(port_between(bed, "leaf0", "host1"), packets);
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  const int64_t t = ser(mtu + kRoceOverhead, rate), ta = ser(kRoceAck, rate);
  const int64_t last_ack = packets * t + 4 * prop + 2 * lat + 2 * ta;
  CHECK(rec.done.at(0) == last_ack + rto + 2 * t + 2 * prop + lat);
  CHECK(bed.net->totals().rto_timeouts == 1);
  CHECK(bed.net->totals().retransmits == 1);
  bed.net->check_conservation();
}

TEST_CASE("go-back-N: a dead link fails the queue pair after retry_count timeouts") {
  // Every frame corrupted (BER 1e-3 over a 4 KB frame: 1 - (1 - 1e-3)^33424 ~ 1 - 3e-15): no
  // ACK ever returns; the QP gives up after 7 retries (NCCL_IB_RETRY_CNT's default), i.e. at
  // the 8th timeout, and says so instead of retrying forever.
  auto sc = one_leaf(2, 100 * kGbps, 200'000, 300'000, 64 << 20, 4096);
  sc.link.bit_error_rate = 1e-3;
  sc.nic.rto_ps = 10'000'000;  // 10 us
  Bed bed(sc);
  bed.net->send(0, 1, 1 << 20, 0, 0);
  bed.sim.run();
  CHECK(bed.net->failure().find("transport retry counter exceeded") != std::string::npos);
  CHECK(bed.net->totals().rto_timeouts == 8);
  CHECK(bed.net->messages_in_flight() == 1);
  bed.net->check_conservation();
}

TEST_CASE("byte conservation: bytes sent = bytes delivered + bytes dropped, from port counters") {
  // Four senders overflow a 20-frame static buffer; go-back-N recovers every loss. After the
  // network drains, what the hosts serialized equals what hosts received intact plus what the
  // leaf dropped, counted port by port, and the network's own balance says the same.
  const int n = 4;
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead;
  Bed bed(one_leaf(n + 1, rate, 100'000, 300'000, 20 * w, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  for (int h = 0; h < n; ++h) bed.net->send(h, n, 300 * mtu, 0, static_cast<uint64_t>(h));
  bed.sim.run();  // to the last event: every message done, every ACK home, timers disarmed
  for (int h = 0; h < n; ++h) CHECK(rec.done.at(h) > 0);
  int64_t host_tx = 0, host_rx = 0, leaf_drops = 0;
  const auto& g = bed.fabric.graph;
  for (uint32_t pid = 0; pid < bed.net->ports().size(); ++pid) {
    const Port& p = bed.net->ports()[pid];
    if (g[p.node].kind == NodeKind::kHost) host_tx += p.counters.tx_bytes;
    if (g[p.peer_node].kind == NodeKind::kHost) host_rx += bed.net->arrived_from(pid).rx_bytes;
    leaf_drops += p.counters.drop_bytes;
  }
  CHECK(bed.net->totals().tail_drops > 0);
  CHECK(host_tx == host_rx + leaf_drops);
  const ByteBalance b = bed.net->byte_balance();
  CHECK(b.sent_bytes == host_tx);
  CHECK(b.delivered_bytes == host_rx);
  CHECK(b.dropped_bytes == leaf_drops);
  CHECK(b.in_flight_bytes == 0);
}

TEST_CASE("shared buffer: one congested queue settles at alpha x pool / (1 + alpha)") {
  // Choudhury & Hahne's dynamic threshold on its own (congestion/buffer_mmu.hpp): a queue fed
  // faster than it drains stops growing where q + b > alpha (B - q).
  for (double alpha : {0.5, 1.0, 4.0}) {
    const int64_t pool = 1'000'000, frame = 1000;
    BufferMmu mmu = BufferMmu::shared(pool, 0, alpha, 8);
    int64_t q = 0;
    while (mmu.admit(q, q, frame)) {
      mmu.on_enqueue(q, frame);
      q += frame;
    }
    INFO("alpha " << alpha);
    CHECK(static_cast<double>(q) == Approx(alpha * pool / (1 + alpha)).margin(frame));
    CHECK(mmu.shared_used_bytes() == q);
  }
  SECTION("a reservation is used first and is not drawn from the pool") {
    BufferMmu mmu = BufferMmu::shared(100'000, 5'000, 1.0, 4);  // pool = 80,000
    CHECK(mmu.limit_bytes() == 80'000);
    CHECK(mmu.admit(0, 0, 5'000));
    mmu.on_enqueue(0, 5'000);
    CHECK(mmu.shared_used_bytes() == 0);
    mmu.on_enqueue(5'000, 1'000);
    CHECK(mmu.shared_used_bytes() == 1'000);
    mmu.on_dequeue(6'000, 1'000);
    CHECK(mmu.shared_used_bytes() == 0);
  }
  SECTION("reservations that leave no pool are refused") {
    CHECK_THROWS_AS(BufferMmu::shared(10'000, 2'000, 1.0, 8), std::invalid_argument);
    CHECK_THROWS_AS(BufferMmu::shared(10'000, 0, 1000.0, 8), std::invalid_argument);
  }
}

TEST_CASE("traffic classes: strict priority serves class 5 first — DWRR 1:3 shares 1/4 : 3/4") {
  // Hosts 0 and 1 each send K frames to host 2, in classes 1 and 5, at line rate R: the egress
  // to host 2 is offered 2R. Strict priority: class 5 goes through as if alone (waiting at most
  // one class-1 frame), class 1 ends after both: 2K slots. DWRR with weights 1 (class 1) and 3
  // (class 5): class 5 gets 3/4 of R while both are backlogged, so it ends at 4/3 K slots; then
  // class 1 has the port and ends at 2K slots.
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead, k = 3000;
  const int64_t t = ser(w, rate);
  auto run = [&](bool dwrr) {
    auto sc = one_leaf(3, rate, 100'000, 300'000, 64 << 20, mtu);
    if (dwrr) {
      sc.sw.scheduler = "dwrr";
      sc.sw.dwrr_weights = {1, 1, 1, 1, 1, 3, 1, 1};
    }
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 2, k * mtu, 0, 0, 1);
    bed.net->send(1, 2, k * mtu, 0, 1, 5);
    bed.sim.run();
    return std::pair{rec.done.at(0), rec.done.at(1)};
  };
  // The last frame's path after its slot: two serializations, two links, one switch.
  const double path = 2.0 * t + 2 * 100'000 + 300'000;
  const auto [strict1, strict5] = run(false);
  CHECK(static_cast<double>(strict5) == Approx(double(k * t) + path).margin(2.0 * t));
  CHECK(static_cast<double>(strict1) == Approx(double(2 * k * t) + path).margin(2.0 * t));
  const auto [dwrr1, dwrr5] = run(true);
  // DWRR serves in rounds of 1 + 3 frames: within one round of the fluid share.
  CHECK(static_cast<double>(dwrr5) == Approx(4.0 / 3 * k * t + path).margin(4.0 * t));
  CHECK(static_cast<double>(dwrr1) == Approx(double(2 * k * t) + path).margin(2.0 * t));
}

TEST_CASE("cut-through: first bit in to first bit out, and stored when the egress is faster") {
  const int64_t rate = 100 * kGbps, prop = 1'000'000, lat = 400'000, mtu = 1000;
  const int64_t w = mtu + kRoceOverhead;
  SECTION("equal speeds: one serialization, the props and the latencies") {
    auto sc = fabricsim::testing::spine_leaf(2, 1, 1, rate, prop, lat, 1 << 20, mtu);
    sc.sw.cut_through = true;
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 1, mtu, 0, 0);
    bed.sim.run();
    CHECK(rec.done.at(0) == ser(w, rate) + 4 * prop + 3 * lat);
  }
  SECTION("100G hosts, 400G fabric: leaf0 stores (slow to fast), spine and leaf1 cut through") {
    // 4 x 100G hosts and one 400G uplink per leaf (1:1); host0 on leaf0, host4 on leaf1.
    auto sc = fabricsim::testing::spine_leaf(2, 1, 4, rate, prop, lat, 1 << 20, mtu);
    sc.sw.cut_through = true;
    sc.link.fabric_rate_bps = 4 * rate;
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 4, mtu, 0, 0);
    bed.sim.run();
    // leaf0 sends at ser100 + prop + lat; spine and leaf1 add prop + lat each; the last link
    // adds prop and the 100G serialization of the whole frame.
    CHECK(rec.done.at(0) == 2 * ser(w, rate) + 4 * prop + 3 * lat);
  }
}

TEST_CASE("bit errors: corrupted frames follow 1 - (1 - BER)^bits and go-back-N recovers them") {
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead, packets = 20'000;
  auto sc = one_leaf(2, rate, 200'000, 300'000, 64 << 20, mtu);
  const double ber = 1e-6;
  sc.link.bit_error_rate = ber;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  REQUIRE(rec.done.at(0) > 0);
  // On host0's uplink every data frame is a Bernoulli trial with p = 1 - (1 - BER)^(8 w).
  const uint32_t up_pid = port_between(bed, "host0", "leaf0");
  const Port& up = bed.net->ports()[up_pid];
  const double p = 1 - std::pow(1 - ber, 8.0 * w);
  const double n = static_cast<double>(up.counters.tx_packets);
  const double sd = std::sqrt(n * p * (1 - p));
  INFO("corrupted " << bed.net->arrived_from(up_pid).corrupt_drops << " of " << n << ", expected "
                    << n * p);
  CHECK(std::abs(bed.net->arrived_from(up_pid).corrupt_drops - n * p) <= 4 * sd);
  CHECK(bed.net->totals().retransmits > 0);
  bed.net->check_conservation();
}

TEST_CASE("per-QP rate limiter: frames leave every w / limit, exact in ps") {
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead, prop = 200'000,
                lat = 300'000, packets = 100;
  auto sc = one_leaf(2, rate, prop, lat, 64 << 20, mtu);
  sc.nic.qp_rate_limit_bps = rate / 4;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  CHECK(rec.done.at(0) == (packets - 1) * ser(w, rate / 4) + 2 * ser(w, rate) + 2 * prop + lat);
}

TEST_CASE("a queue pair is reused after all its messages were acknowledged and released") {
  // Regression: the sender's message cursor was left pointing at a released message, and the
  // next message on the same QP crashed the NIC (seen on rail_optimized_h100_su at 16 MiB).
  auto sc = one_leaf(2, 100 * kGbps, 200'000, 300'000, 64 << 20, 1000);
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, 10'000, 7, 0);
  bed.sim.run();  // delivered, acknowledged, released
  REQUIRE(rec.done.at(0) > 0);
  const int64_t t1 = bed.sim.now_ps();
  bed.net->send(0, 1, 10'000, 7, 1);
  bed.sim.run();
  CHECK(rec.done.at(1) > t1);
  CHECK(bed.net->messages_in_flight() == 0);
  bed.net->check_conservation();
}

TEST_CASE("go-back-N survives reordering: an ACK overtaking a go-back, and stale NAKs") {
  // Regression: per-packet spraying over a 10G and three 400G uplinks reorders
  // packets; a NAK's go-back could be overtaken by an ACK beyond it, leaving snd_nxt below
  // snd_una, and a stale NAK sent the QP back below snd_una: "message not held", exit 1.
  auto sc = fabricsim::testing::spine_leaf(2, 4, 4, 400 * kGbps, 250'000, 500'000, 2 << 20, 4096);
  sc.routing.load_balancing = "per_packet";
  sc.topology.degraded_links = {{"leaf1-spine0", 10 * kGbps}};
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  for (int h = 0; h < 2; ++h) bed.net->send(h, 4 + h, 2 << 20, 0, static_cast<uint64_t>(h));
  bed.net->send(6, 2, 2 << 20, 0, 2);
  bed.sim.run();
  for (int m = 0; m < 3; ++m) CHECK(rec.done.at(m) > 0);
  CHECK(bed.net->totals().nak_tx > 0);  // the reordering was real
  CHECK(bed.net->failure().empty());
  bed.net->check_conservation();
}

TEST_CASE("queue sojourn under cut-through is measured at the port that sent the packet") {
  // Regression: with cut-through the next switch queues a packet before this port finishes
  // serializing it, and overwrote the enqueue time this port's sojourn was computed from. On an
  // idle path every packet's sojourn at host0's port is exactly one serialization.
  const int64_t rate = 100 * kGbps, mtu = 1000;
  auto sc = one_leaf(2, rate, 10'000, 20'000, 64 << 20, mtu);  // 10 ns + 20 ns < 86.56 ns
  sc.sw.cut_through = true;
  Bed bed(sc);
  bed.net->send(0, 1, 100 * mtu, 0, 0);
  bed.sim.run();
  const QueueCounters& q = bed.net->queue(port_between(bed, "host0", "leaf0"), 3);
  REQUIRE(q.tx_packets == 100);
  CHECK(q.sojourn_ps == 100 * ser(mtu + kRoceOverhead, rate));
}

TEST_CASE(
    "occupancy percentiles: time-weighted, quoted at most 1/16 of an octave above the truth") {
  // Every occupancy b falls in a bucket whose upper edge u satisfies b <= u < (1 + 1/16) b (16
  // buckets per octave); the percentile of a known time profile is the edge of the right
  // bucket. (With 4 per octave, 25 % wide, a queue near its peak for 1 % of the run had its
  // p99 quoted as its maximum: worst_port_p99_queue_bytes equalled max_queue_bytes.)
  for (int64_t b = 1; b <= (int64_t{1} << 20); b += 1 + b / 97) {
    const int64_t u = OccupancyHistogram::upper_bytes(OccupancyHistogram::bucket(b));
    INFO("bytes " << b << " edge " << u);
    REQUIRE(u >= b);
    REQUIRE(static_cast<double>(u) < (1 + 1.0 / 16) * static_cast<double>(b));
  }
  OccupancyHistogram h;
  h.ps[OccupancyHistogram::bucket(0)] += 500;       // empty half the time
  h.ps[OccupancyHistogram::bucket(1000)] += 490;    // 1000 B for 49 %
  h.ps[OccupancyHistogram::bucket(100'000)] += 10;  // 100 kB for 1 %
  CHECK(h.percentile(0.5) == 0);
  CHECK(h.percentile(0.99) == OccupancyHistogram::upper_bytes(OccupancyHistogram::bucket(1000)));
  CHECK(h.percentile(0.999) ==
        OccupancyHistogram::upper_bytes(OccupancyHistogram::bucket(100'000)));
  CHECK(OccupancyHistogram().percentile(0.5) == 0);
}

TEST_CASE("a port's occupancy histogram holds every picosecond and brackets its queue's area") {
  // An 8:1 incast fills the egress to host8 through dozens of histogram buckets, more than a
  // port caches before adding them to its histogram (HistogramCache). The buckets partition
  // the run's time, and the time integral of the occupancy (Occupancy::area, kept apart from
  // the histogram) lies between the buckets' lower and upper edges weighted by their times.
  auto sc = one_leaf(9, 100 * kGbps, 100'000, 300'000, 64 << 20, 1000);
  Bed bed(sc);
  for (int h = 0; h < 8; ++h) bed.net->send(h, 8, 200'000, 0, static_cast<uint64_t>(h));
  bed.sim.run();
  bed.net->settle_statistics();
  const int64_t now = bed.sim.now().ps();
  const uint32_t port = port_between(bed, "leaf0", "host8");
  const OccupancyHistogram& h = bed.net->port_histogram(port);
  int64_t total_ps = 0, visited = 0;
  __int128 low = 0, high = 0;
  for (int b = 0; b < OccupancyHistogram::kBuckets; ++b) {
    if (h.ps[b] == 0) continue;
    ++visited;
    total_ps += h.ps[b];
    if (b > 0) {
      low += static_cast<__int128>(h.ps[b]) * OccupancyHistogram::upper_bytes(b - 1);
      high += static_cast<__int128>(h.ps[b]) * OccupancyHistogram::upper_bytes(b);
    }
  }
  REQUIRE(visited > 2 * HistogramCache::kWays);
  CHECK(total_ps == now);
  const __int128 area = bed.net->port_occupancy(port).area;
  CHECK(low <= area);
  CHECK(area <= high);
}

TEST_CASE("flow records are bounded: beyond the bound messages are counted, not kept") {
  auto sc = one_leaf(2, 100 * kGbps, 200'000, 300'000, 64 << 20, 1000);
  Bed bed(sc);
  NetConfig cfg = net_config_for(sc);
  cfg.max_flow_records = 10;
  Network net(bed.sim, bed.fabric, bed.routes, cfg);
  Recorder rec(bed.sim);
  net.set_sink(&rec);
  for (uint32_t m = 0; m < 25; ++m) net.send(0, 1, 3000, m % 4, m);
  bed.sim.run();
  CHECK(net.flows().size() == 10);
  CHECK(net.flows_unrecorded() == 15);
  CHECK(net.messages_in_flight() == 0);
  // The completion times cover all 25 messages, not the 10 recorded: every one was posted at
  // 0, so its FCT is when the sink heard of it. p50 is the 13th of the 25 (nearest rank).
  std::vector<int64_t> fct;
  for (uint32_t m = 0; m < 25; ++m) fct.push_back(rec.done.at(m));
  std::sort(fct.begin(), fct.end());
  const QuantileHistogram& h = net.fct_histogram(false);
  CHECK(h.count() == 25);
  CHECK(net.fct_histogram(true).count() == 0);
  CHECK(h.max() == fct.back());
  CHECK(h.percentile(50, 100) >= fct[12]);
  CHECK(h.percentile(50, 100) <= fct[12] + fct[12] / 1024);
}

TEST_CASE("cut-through: a frame dropped at its head leaves the sending port's accounting intact") {
  // Regression (code review): with latency + propagation (30 ns) shorter than a frame (86.56 ns
  // at 100G), a cut-through switch refused a frame and recycled the Packet while the upstream
  // port was still serializing it; the upstream's end of transmission then read another
  // packet's size and class. After the network drains, every queue must be empty again.
  auto sc = one_leaf(4, 100 * kGbps, 10'000, 20'000, 8 * (1000 + kRoceOverhead), 1000);
  sc.sw.cut_through = true;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  for (int h = 0; h < 3; ++h) bed.net->send(h, 3, 200'000 + 123 * h, 0, static_cast<uint64_t>(h));
  bed.sim.run();
  for (int h = 0; h < 3; ++h) CHECK(rec.done.at(h) > 0);
  REQUIRE(bed.net->totals().tail_drops > 0);
  for (uint32_t pid = 0; pid < bed.net->ports().size(); ++pid) {
    INFO("port " << pid);
    CHECK(bed.net->port_occupancy(pid).bytes == 0);
  }
  bed.net->check_conservation();
}

TEST_CASE("ECN: RED marking probability is DCQCN's, 0 to pmax from kmin to kmax, 1 above") {
  // Zhu et al., SIGCOMM 2015, §3.1 and §5: Kmin = 5 KB, Kmax = 200 KB, Pmax = 1 %.
  const RedEcn red{5'000, 200'000, 0.01};
  CHECK(red.probability(0) == 0.0);
  CHECK(red.probability(5'000) == 0.0);
  CHECK(red.probability(102'500) == Approx(0.005).epsilon(1e-12));  // half way: pmax / 2
  CHECK(red.probability(199'999) == Approx(0.01 * 194'999 / 195'000.0).epsilon(1e-12));
  CHECK(red.probability(200'000) == 1.0);
  // The draw: a binomial fraction within 4 sigma of p.
  RngStream rng(7, "red-test");
  const int n = 200'000;
  int marked = 0;
  for (int i = 0; i < n; ++i) marked += red.mark(102'500, rng);
  const double sd = std::sqrt(n * 0.005 * 0.995);
  CHECK(std::abs(marked - n * 0.005) <= 4 * sd);
}

TEST_CASE("ECN: a 2:1 incast marks the packets that find the queue above the threshold") {
  // Two senders at line rate into one egress: the queue grows one frame per slot, so the
  // frames arriving in slot j find about j and j + 1 frames ahead. With pmax = 1 and the step
  // between 10 and 11 frames (kmin = 10.5 frames - 1 B, kmax = 10.5 frames), every frame that
  // finds 11 or more ahead is marked: about 2K - 21 of the 2K (within a frame or two of the
  // slot alignment). Marked packets arrive in sequence, so receivers see each mark once.
  const int64_t rate = 100 * kGbps, mtu = 1000, w = mtu + kRoceOverhead, k = 300;
  for (const char* at : {"enqueue", "dequeue"}) {
    auto sc = one_leaf(3, rate, 100'000, 300'000, 64 << 20, mtu);
    sc.ecn.enabled = true;
    sc.ecn.kmax_bytes = 10 * w + w / 2;
    sc.ecn.kmin_bytes = sc.ecn.kmax_bytes - 1;
    sc.ecn.pmax = 1.0;
    sc.ecn.mark_at = at;
    Bed bed(sc);
    bed.net->send(0, 2, k * mtu, 0, 0);
    bed.net->send(1, 2, k * mtu, 0, 1);
    bed.sim.run();
    const NetTotals t = bed.net->totals();
    INFO("mark at " << at << ": " << t.ecn_marked << " marked");
    // On dequeue the queue behind a departing frame rises to K and drains back: the frames
    // leaving with 11 or more behind are again about 2K - 21.
    CHECK(std::abs(t.ecn_marked - (2 * k - 21)) <= 3);
    CHECK(t.ce_received == t.ecn_marked);
    CHECK(bed.net->queue(port_between(bed, "leaf0", "host2"), 3).ecn_marked == t.ecn_marked);
  }
  SECTION("off by default: nothing is marked") {
    Bed bed(one_leaf(3, rate, 100'000, 300'000, 64 << 20, mtu));
    bed.net->send(0, 2, k * mtu, 0, 0);
    bed.net->send(1, 2, k * mtu, 0, 1);
    bed.sim.run();
    CHECK(bed.net->totals().ecn_marked == 0);
  }
}

TEST_CASE(
    "ACKs: the NIC sends them ahead of its data and a switch port shares first come first served") {
  // One leaf, 100 Gb/s, no latency, MTU 256, a 64 MB buffer (nothing dropped). host0 sends S to
  // host1 and to host2 (f1, f2, x each) and receives S from host3 (f3, y). An ACK frame (86 B)
  // answers every data frame, a = ACK wire bytes / data wire bytes.
  // - host0's NIC puts its ACKs for f3 on its link ahead of its own data (they go straight to
  //   the port queue; data waits for the port): 2x + a y = R.
  // - The leaf's port to host0 takes f3 at R from host3's NIC and the ACKs of f1 and f2 at
  //   2 a x, more than R, and serves them in arrival order: f3 gets R^2 / (R + 2 a x).
  // Together: a^2 y^2 - (1 + a) R y + R^2 = 0, the smaller root. f3 ends at S_wire / y, having
  // let f1 and f2 send x S_wire / y each; alone then, they send the rest at R / 2. Their end,
  // (2 + a) S_wire / R, is host0's uplink carrying 2 S_wire + f3's ACKs whatever the order: it
  // checks that no ACK is lost or added; f3's end is what tells the sharing rules apart.
  // (The flow mode's weighted filling gives neither link this sharing: docs/flow-mode.md.)
  const int64_t rate = 100 * kGbps, bytes = 1'000'000, mtu = 256;
  Bed bed(one_leaf(4, rate, 0, 0, int64_t{64} << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, bytes, 0, 0);
  bed.net->send(0, 2, bytes, 0, 1);
  bed.net->send(3, 0, bytes, 0, 2);
  bed.sim.run();
  REQUIRE(rec.done.size() == 3);
  const int64_t full = bytes / mtu, rest = bytes % mtu;
  const int64_t wire = full * (mtu + kRoceOverhead) + (rest > 0 ? rest + kRoceOverhead : 0);
  const double a = static_cast<double>((full + (rest > 0 ? 1 : 0)) * kRoceAck) / wire;
  const double r = 1.0;  // rates in units of R
  const double y = ((1 + a) * r - std::sqrt((1 + a) * (1 + a) - 4 * a * a)) / (2 * a * a);
  const double x = (r - a * y) / 2;
  const double s_over_r = static_cast<double>(ser(wire, rate));
  const double f3_end = s_over_r / y;
  const double f12_end = f3_end + (1 - x / y) * s_over_r * 2;
  INFO("a = " << a << ", x = " << x << " R, y = " << y << " R");
  // The last packet's store-and-forward at the leaf and the ACK-to-data interleaving at packet
  // granularity: within 0.1 % (the flow mode's filling is 7.6 % off f3; docs/flow-mode.md).
  CHECK(static_cast<double>(rec.done[2]) == Approx(f3_end).epsilon(0.001));
  CHECK(static_cast<double>(rec.done[0]) == Approx(f12_end).epsilon(0.001));
  CHECK(static_cast<double>(rec.done[1]) == Approx(f12_end).epsilon(0.001));
}
