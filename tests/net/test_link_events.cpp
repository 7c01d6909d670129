// Links changing during the run (Network::schedule_port_change, schedule_routes) against
// closed forms: serialization at the new rate, what a black hole costs per unit of time, and
// the stall a link down puts on a queue pair.
#include <catch2/catch.hpp>

#include "../support.hpp"

using namespace fabricsim;
using fabricsim::testing::Bed;
using fabricsim::testing::kGbps;
using fabricsim::testing::kRoceOverhead;
using fabricsim::testing::one_leaf;
using fabricsim::testing::port_between;
using fabricsim::testing::Recorder;
using fabricsim::testing::ser;

namespace {

/// Packets lost to down links, every port.
int64_t link_down_drops(const Bed& bed) {
  int64_t n = 0;
  for (const Port& p : bed.net->ports()) n += p.counters.link_down_drops;
  return n;
}

}  // namespace

TEST_CASE("link events: a NIC link slowed mid-message sends every later frame at the new rate") {
  // host0 -> leaf0 -> host1, P frames back to back at R (T each). At C, between the starts of
  // frames k - 1 and k, host0's link drops to R/2: frame k - 1 finishes at R, frames k.. take
  // T2 = 2T each, so the last starts at s = k T + (P - 1 - k) T2. The leaf's egress at R is
  // faster than what arrives: no queue. The last bit reaches host1 after T2 + prop + lat + T +
  // prop (store and forward): done = s + T2 + T + 2 prop + lat.
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000, packets = 500;
  const int64_t t = ser(mtu + kRoceOverhead, rate), t2 = ser(mtu + kRoceOverhead, rate / 2);
  const int64_t k = 200, change = k * t - t / 2;
  Bed bed(one_leaf(2, rate, prop, lat, 64 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  const uint32_t up = port_between(bed, "host0", "leaf0");
  bed.net->schedule_port_change(change, up, Network::PortChange::kRate, rate / 2);
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  bed.net->check_conservation();
  const int64_t last_start = k * t + (packets - 1 - k) * t2;
  CHECK(rec.done.at(0) == last_start + t2 + t + 2 * prop + lat);
  CHECK(bed.net->ports()[up].rate_bps == rate / 2);
  CHECK(bed.net->totals().drops == 0);
}

TEST_CASE("link events: each unit of reconvergence delay black-holes a line-rate flow's frames") {
  // 2 leaves x 2 hosts, 2 spines. host0 -> host2 (on leaf1) streams at line rate R through spine s
  // (its ECMP pick). At C the link s-leaf1 goes down: s has no other way to leaf1, and leaf0 keeps
  // sending to s (its own ports are up) until the routes reconverge at C + D. Every frame leaf0
  // forwards to s in that time is lost, one every T: a delay longer by dD loses dD / T more
  // frames (+-1 for where the window's ends fall between frames). What was lost at C itself
  // (the frames and ACKs on the failed link) is the same in both runs.
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000, packets = 20'000,
                change = 100'000'000;  // 100 us, well inside the message
  const int64_t t = ser(mtu + kRoceOverhead, rate);
  const auto sc = fabricsim::testing::spine_leaf(2, 2, 2, rate, prop, lat, 4 << 20, mtu);
  // Which spine carries the flow: the uplink that sent its frames on an unbroken run.
  std::string spine;
  {
    Bed probe(sc);
    probe.net->send(0, 2, 100 * mtu, 0, 0);
    probe.sim.run();
    for (const char* s : {"spine0", "spine1"}) {
      if (probe.net->ports()[port_between(probe, "leaf0", s)].counters.tx_packets > 0) spine = s;
    }
  }
  REQUIRE(!spine.empty());
  const auto lost_with_delay = [&](int64_t delay) {
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    // The routes without the link, built as `fabricsim run` builds them.
    Fabric without = bed.fabric;
    const auto& g = without.graph;
    for (auto [e, end] = boost::edges(g); e != end; ++e) {
      const std::string a = g[boost::source(*e, g)].name, b = g[boost::target(*e, g)].name;
      if ((a == spine && b == "leaf1") || (a == "leaf1" && b == spine))
        without.graph[*e].failed = true;
    }
    const RoutingTable routes(without, bed.routes.algorithm());
    for (const auto& [from, to] : {std::pair{spine, std::string("leaf1")}, {"leaf1", spine}}) {
      bed.net->schedule_port_change(change, port_between(bed, from, to), Network::PortChange::kDown,
                                    0);
    }
    bed.net->schedule_routes(change + delay, &routes);
    bed.net->send(0, 2, packets * mtu, 0, 0);
    bed.sim.run();
    bed.net->check_conservation();
    CHECK(rec.done.at(0) > 0);  // complete: the other spine carries the rest
    CHECK(bed.net->totals().tail_drops == 0);
    return link_down_drops(bed);
  };
  const int64_t d1 = 2'000'000, d2 = 12'000'000;  // 2 us and 12 us
  const int64_t l1 = lost_with_delay(d1), l2 = lost_with_delay(d2);
  const int64_t expected = (d2 - d1) / t;  // 10 us / 86.56 ns = 115 frames
  CHECK(l2 - l1 >= expected - 1);
  CHECK(l2 - l1 <= expected + 1);
  CHECK(l1 >= d1 / t);  // at least the black hole's own frames
}

TEST_CASE("link events: a NIC link down then up stalls its queue pair for the time it was down") {
  // host0 -> leaf0 -> host1. host0's link goes down at C and comes back at C + D (D well
  // under the RTO): the frames on it are lost, the NIC sends nothing while it is down, then
  // resumes; the receiver's NAK of the gap brings the go-back. The queue pair waits for its
  // acknowledged PSN from before C until after C + D: its stall is at least D, and at most D
  // plus the resend's round trip and the frames that were in flight (a few us here). Nothing
  // times out.
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000, packets = 2000;
  const int64_t change = 50'000'000, down = 30'000'000;  // 50 us, 30 us
  Bed bed(one_leaf(2, rate, prop, lat, 64 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  for (const auto& [from, to] : {std::pair{"host0", "leaf0"}, {"leaf0", "host0"}}) {
    const uint32_t pid = port_between(bed, from, to);
    bed.net->schedule_port_change(change, pid, Network::PortChange::kDown, 0);
    bed.net->schedule_port_change(change + down, pid, Network::PortChange::kUp, 0);
  }
  bed.net->send(0, 1, packets * mtu, 0, 0);
  bed.sim.run();
  bed.net->check_conservation();
  const NetTotals totals = bed.net->totals();
  const QpStall stall = bed.net->longest_stall();
  CHECK(rec.done.at(0) > change + down);
  CHECK(totals.rto_timeouts == 0);
  CHECK(totals.drops == link_down_drops(bed));
  CHECK(totals.drops >= 1);
  CHECK(stall.stall_ps >= down);
  CHECK(stall.stall_ps <= down + 5'000'000);
  CHECK(stall.from_ps < change);
  CHECK(stall.qp == 0);
  // Without the event the same message never waits that long.
  Bed clean(one_leaf(2, rate, prop, lat, 64 << 20, mtu));
  clean.net->send(0, 1, packets * mtu, 0, 0);
  clean.sim.run();
  CHECK(clean.net->longest_stall().stall_ps < 5'000'000);
}

TEST_CASE("link events: a switch forwards around its own dead port at once, with no timeout") {
  // 2 leaves x 2 hosts, 2 spines: host0's flow to host2 goes through spine s. At C the link leaf0-s
  // goes down and the routes never reconverge: leaf0 itself stops choosing that port (local
  // failover) and the rest of the message goes through the other spine. The receiver NAKs the
  // gap left by the frames lost on the link: go-back-N recovers without a timeout, and the
  // dead link carries nothing after C.
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000, packets = 5000;
  const int64_t change = 100'000'000;
  const auto sc = fabricsim::testing::spine_leaf(2, 2, 2, rate, prop, lat, 4 << 20, mtu);
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 2, packets * mtu, 0, 0);
  bed.sim.run(SimTime(change - 1));
  std::string spine;
  for (const char* s : {"spine0", "spine1"}) {
    if (bed.net->ports()[port_between(bed, "leaf0", s)].counters.tx_packets > 0) spine = s;
  }
  REQUIRE(!spine.empty());
  const uint32_t up = port_between(bed, "leaf0", spine), down = port_between(bed, spine, "leaf0");
  bed.net->schedule_port_change(change, up, Network::PortChange::kDown, 0);
  bed.net->schedule_port_change(change, down, Network::PortChange::kDown, 0);
  bed.sim.run(SimTime(change + 1));
  const int64_t sent_by_then = bed.net->ports()[up].counters.tx_packets;
  bed.sim.run();
  bed.net->check_conservation();
  CHECK(rec.done.at(0) > change);
  const NetTotals totals = bed.net->totals();
  CHECK(totals.rto_timeouts == 0);
  CHECK(totals.nak_tx >= 1);
  CHECK(totals.drops == link_down_drops(bed));
  CHECK(totals.drops >= 1);
  // The frame being sent at C finishes leaving (and is lost at the spine); nothing after it.
  CHECK(bed.net->ports()[up].counters.tx_packets <= sent_by_then + 1);
}

TEST_CASE("link events: adaptive routing sends nothing to a dead port, ECMP rehashes its flows") {
  // 2 leaves x 4 hosts, 4 spines; the link leaf0-spine1 goes down at time 0, before any
  // traffic, and the routes never reconverge: only leaf0's own failover keeps its traffic off
  // that port. 256 one-packet flows from host0 leave leaf0 within 25 us (256 frames of 87 ns
  // back to back); by 50 us, long before any retransmission timeout, every data packet must
  // have left by one of the three live uplinks, each once.
  // - Adaptive: a dead port's flushed queue reads empty, the least occupied of all; it must
  //   still never be chosen.
  // - Per-flow ECMP: the flows hashed to the dead port are hashed again over the 3 live ones
  //   (a resilient group), not all moved to the next port: each live uplink carries about a
  //   third (85; a port taking its own quarter and the dead one's would carry half, 128; 107
  //   is three standard deviations of a fair three-way split above 85).
  const int64_t rate = 100 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000, flows = 256;
  for (const char* lb : {"adaptive", "per_flow"}) {
    INFO(lb);
    auto sc = fabricsim::testing::spine_leaf(2, 4, 4, rate, prop, lat, 4 << 20, mtu);
    sc.routing.load_balancing = lb;
    Bed bed(sc);
    const uint32_t dead = port_between(bed, "leaf0", "spine1");
    bed.net->schedule_port_change(0, dead, Network::PortChange::kDown, 0);
    bed.net->schedule_port_change(0, port_between(bed, "spine1", "leaf0"),
                                  Network::PortChange::kDown, 0);
    for (uint32_t f = 0; f < flows; ++f) bed.net->send(0, 4, mtu, f, f);
    bed.sim.run(SimTime(50'000'000));
    CHECK(bed.net->totals().retransmits == 0);
    CHECK(bed.net->ports()[dead].counters.tx_packets == 0);
    int64_t sent = 0, most = 0, least = INT64_MAX;
    for (const char* s : {"spine0", "spine2", "spine3"}) {
      const int64_t n = bed.net->ports()[port_between(bed, "leaf0", s)].counters.tx_packets;
      sent += n;
      most = std::max(most, n);
      least = std::min(least, n);
    }
    CHECK(sent == flows);
    if (std::string(lb) == "per_flow") {
      CHECK(most <= 107);
      CHECK(least >= 64);
    }
  }
}
