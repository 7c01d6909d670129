// NIC loopbacks (sim/net/nic_loop.hpp): a message from a host to itself up its NIC link, turned
// by the first switch and back down, against closed forms written out here: serialization +
// propagation + switch latency, the same as a message to a host on the same leaf; the ACKs
// sharing the host's link, worked frame by frame; go-back-N over the turn; bad keys refused.
#include <catch2/catch.hpp>

#include <deque>
#include <string>
#include <vector>

#include "../support.hpp"
#include "sim/net/nic_loop.hpp"

using namespace fabricsim;
using fabricsim::testing::Bed;
using fabricsim::testing::port_between;
using fabricsim::testing::Recorder;
using fabricsim::testing::ser;

namespace {

// RoCEv2 wire bytes from the standards, written out here independently of sim/net/wire.cpp:
// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4, + preamble/SFD 8 + IFG 12; an ACK
// adds the AETH (4 B) to a header-only packet (IBTA vol. 1 §9.3.5).
constexpr int64_t kRoceOverhead = 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12;  // 82
constexpr int64_t kAckWire = 62 + 4 + 20;                             // 86

constexpr int64_t kRate = 100'000'000'000, kMtu = 1000;
// An odd switch latency: the data frames' arrival times back at the host are then odd numbers
// of picoseconds and the host's frame boundaries (sums of 80 ps-per-byte serializations) even,
// so no frame arrives at the picosecond another ends and the worked schedule below is exact.
constexpr int64_t kProp = 1'000'000, kLat = 500'001;

/// When the last data packet of a NIC loopback of k full packets is back at the host, by a frame
/// by frame walk of the host's uplink. Data packet j's last bit leaves at e_j and is back at
/// e_j + D, D = T + 2 prop + lat: up the link, the leaf's store-and-forward latency, one
/// serialization down. (The leaf's downlink repeats the uplink's frames in order at the same
/// rate: a data frame, the longest, never waits there.) Its ACK (every a-th packet and the
/// last) joins the uplink's queue then, and the port sends queued frames before the NIC's next
/// data packet, so each ACK queued before the last packet leaves delays it by T_ack.
int64_t loop_done(int64_t k, int64_t a, int64_t T, int64_t t_ack, int64_t D) {
  std::deque<int64_t> acks;  // arrival times of the ACKs queued at the host's uplink
  int64_t t = 0, e = 0;      // the uplink's transmitter is free at t
  for (int64_t j = 1; j <= k;) {
    if (!acks.empty() && acks.front() < t) {
      t += t_ack;
      acks.pop_front();
      continue;
    }
    t += T;
    e = t;
    if (j % a == 0 || j == k) acks.push_back(e + D);
    ++j;
  }
  return e + D;
}

Scenario one_leaf(int hosts, int ack_interval = 1) {
  Scenario sc = fabricsim::testing::one_leaf(hosts, kRate, kProp, kLat, 64 << 20, kMtu);
  sc.nic.ack_interval = ack_interval;
  return sc;
}

/// The time message `tag` (sent at 0) completed.
int64_t finish(const Scenario& sc, int src, int dst, int64_t bytes, uint32_t flow) {
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(src, dst, bytes, flow, 0);
  bed.sim.run();
  bed.net->check_invariants();
  return rec.done.at(0);
}

}  // namespace

TEST_CASE("NIC loopback: as long as a message to a host on the same leaf when no ACK interleaves") {
  // host0 -> leaf0 -> host0 and host0 -> leaf0 -> host1 are both 2 links and 1 switch:
  // k T + T + 2 prop + lat (the last packet leaves after k serializations, then one
  // store-and-forward hop). With at most 29 packets the first ACK (T + D = 2.67 us) comes back
  // after the last packet left (29 T = 2.51 us); a long message acknowledged once does too.
  const int64_t T = ser(kMtu + kRoceOverhead, kRate);
  REQUIRE(T == 86'560);
  for (auto [k, ack_interval] :
       {std::pair{1, 1}, std::pair{10, 1}, std::pair{29, 1}, std::pair{1000, 1000}}) {
    INFO(k << " packets, ack_interval " << ack_interval);
    const Scenario sc = one_leaf(2, ack_interval);
    const int64_t closed = k * T + T + 2 * kProp + kLat;
    CHECK(finish(sc, 0, 1, k * kMtu, 3) == closed);
    CHECK(finish(sc, 0, 0, k * kMtu, 3 | kNicLoopFlowBit) == closed);
  }
}

TEST_CASE("NIC loopback: the ACKs share the host's link and delay the data by their frames") {
  // 1000 packets, each acknowledged: from the first ACK on (T + D after the start) the uplink
  // carries data and ACK frames, and the loopback ends later than a message to host1 by the
  // ACK frames sent before its last packet (each T_ack = 86 B at 100 Gb/s = 6.88 ns).
  const int64_t T = ser(kMtu + kRoceOverhead, kRate), t_ack = ser(kAckWire, kRate);
  const int64_t D = T + 2 * kProp + kLat;
  const int64_t k = 1000;
  const int64_t to_host1 = finish(one_leaf(2), 0, 1, k * kMtu, 0);
  const int64_t loop = finish(one_leaf(2), 0, 0, k * kMtu, kNicLoopFlowBit);
  CHECK(to_host1 == k * T + D);
  CHECK(loop == loop_done(k, 1, T, t_ack, D));
  // The difference is n ACK frames, n <= k - 1 (the last packet's own ACK comes after it).
  // Every ACK of packets 1 .. k - 32 was queued before the last packet could start (D < 31 T,
  // and the last packet starts at least (k - j - 1) T after packet j ended), and queued frames go
  // before the NIC's data: n >= k - 32.
  REQUIRE(D < 31 * T);
  const int64_t n = (loop - to_host1) / t_ack;
  CHECK(loop - to_host1 == n * t_ack);
  CHECK(n >= k - 32);
  CHECK(n <= k - 1);
}

TEST_CASE("NIC loopback: the bytes go up and down the host's NIC link and never to a spine") {
  // 2 leaves x 2 hosts, 1 spine. host0's loopback of 10 packets, each acknowledged: its
  // uplink and the leaf's port down to it each carry 10 data frames and 10 ACKs; no spine
  // port and no port of host1 sends a byte.
  const int64_t k = 10;
  Scenario sc = fabricsim::testing::spine_leaf(2, 1, 2, kRate, kProp, kLat, 64 << 20, kMtu);
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 0, k * kMtu, 5 | kNicLoopFlowBit, 0);
  bed.sim.run();
  bed.net->check_invariants();
  const int64_t T = ser(kMtu + kRoceOverhead, kRate);
  CHECK(rec.done.at(0) == k * T + T + 2 * kProp + kLat);
  const int64_t bytes = k * (kMtu + kRoceOverhead) + k * kAckWire;
  const auto& ports = bed.net->ports();
  const uint32_t up = port_between(bed, "host0", "leaf0"),
                 down = port_between(bed, "leaf0", "host0");
  CHECK(ports[up].counters.tx_bytes == bytes);
  CHECK(ports[down].counters.tx_bytes == bytes);
  CHECK(bed.net->arrived_from(up).rx_bytes == bytes);
  CHECK(bed.net->arrived_from(down).rx_bytes == bytes);
  for (uint32_t pid = 0; pid < ports.size(); ++pid) {
    if (pid == up || pid == down) continue;
    INFO(bed.fabric.graph[ports[pid].node].name << " -> "
                                                << bed.fabric.graph[ports[pid].peer_node].name);
    CHECK(ports[pid].counters.tx_bytes == 0);
  }
  CHECK(bed.net->totals().retransmits == 0);
}

TEST_CASE("NIC loopbacks from every host of a leaf at once finish as one alone") {
  // 4 hosts on one leaf, each a 1000-packet loopback at time 0: each host link carries only its
  // own frames (the leaf turns host h's frames back down to host h), so each ends at the time
  // the worked schedule gives for one loopback alone.
  const int64_t T = ser(kMtu + kRoceOverhead, kRate), t_ack = ser(kAckWire, kRate);
  const int64_t D = T + 2 * kProp + kLat;
  const int64_t k = 1000;
  for (int ack_interval : {1, 1000}) {
    INFO("ack_interval " << ack_interval);
    Bed bed(one_leaf(4, ack_interval));
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    for (int h = 0; h < 4; ++h) {
      bed.net->send(h, h, k * kMtu, static_cast<uint32_t>(h) | kNicLoopFlowBit,
                    static_cast<uint64_t>(h));
    }
    bed.sim.run();
    bed.net->check_invariants();
    const int64_t alone = loop_done(k, ack_interval, T, t_ack, D);
    if (ack_interval == 1000) CHECK(alone == k * T + D);
    for (int h = 0; h < 4; ++h) {
      INFO("host " << h);
      CHECK(rec.done.at(static_cast<size_t>(h)) == alone);
      const int64_t acks = ack_interval == 1 ? k : 1;
      CHECK(bed.net->ports()[port_between(bed, "host" + std::to_string(h), "leaf0")]
                .counters.tx_bytes == k * (kMtu + kRoceOverhead) + acks * kAckWire);
    }
    CHECK(bed.net->totals().drops == 0);
  }
}

TEST_CASE("NIC loopback: go-back-N resends a packet lost on the host's uplink") {
  // One loopback of 15 packets acknowledged only at its end (ack_interval 100); the host's
  // uplink loses every 12th frame. Worked by hand: frames 1-15 are PSNs 0-14 and frame 12,
  // PSN 11, is lost. PSN 12 comes back at 13 T + D, after the last first-pass frame left
  // (15 T, as 2 prop + lat > T): the receiver's one NAK is frame 16 up; it is back at the
  // sender T_ack + prop + lat + T_ack + prop later, which resends PSNs 11-14 (frames 17-20, the
  // next loss would be frame 24); the last is back D after it left, completing the message, and
  // its ACK (frame 21) ends the run. So: 1 loss, 1 NAK, 4 resends accepted in order, no timeout,
  // done at 13 T + D + 2 T_ack + 2 prop + lat + 4 T + D.
  const int64_t T = ser(kMtu + kRoceOverhead, kRate), t_ack = ser(kAckWire, kRate);
  const int64_t D = T + 2 * kProp + kLat;
  REQUIRE(2 * kProp + kLat > T);
  Bed bed(one_leaf(2, 100));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->set_drop_every(port_between(bed, "host0", "leaf0"), 12);
  bed.net->send(0, 0, 15 * kMtu, kNicLoopFlowBit, 0);
  bed.sim.run();
  bed.net->check_invariants();
  const NetTotals t = bed.net->totals();
  CHECK(t.corrupt_drops == 1);
  CHECK(t.nak_tx == 1);
  CHECK(t.rto_timeouts == 0);
  CHECK(t.retransmits == 4);
  REQUIRE(bed.net->flows().size() == 1);
  CHECK(bed.net->flows()[0].retransmitted_packets == 4);
  CHECK(bed.net->flows()[0].src == 0);
  CHECK(bed.net->flows()[0].dst == 0);
  CHECK(rec.done.at(0) == 13 * T + D + 2 * t_ack + 2 * kProp + kLat + 4 * T + D);
  CHECK(bed.net->messages_in_flight() == 0);
}

TEST_CASE("NIC loopback: a host with two NICs leaves by the one given or by its flow's low bits") {
  // Rail-optimized, 2 servers of 2 GPUs, 2 NICs per GPU (one on each of 2 planes), as in
  // test_net's NIC choice: a NIC loopback opened with NIC n (the NIC-loop bit in n ignored, as
  // the collectives pass the flow id) leaves by host0's n mod 2-th NIC port; one not opened
  // leaves by the (flow without the bit) mod 2-th. Each turns at its rail leaf.
  auto sc = fabricsim::testing::spine_leaf(1, 1, 1, kRate, 0, 0, 1 << 20, kMtu);
  sc.topology.kind = "rail-optimized";
  sc.topology.gpus_per_server = 2;
  sc.topology.nics_per_server = 4;
  sc.topology.planes = 2;
  sc.topology.rails = 2;
  sc.topology.servers_per_su = 2;
  sc.topology.spines = 1;
  sc.link.nvlink_rate_bps = 400'000'000'000;
  sc.nic.ack_interval = 1000;
  Bed bed(sc);
  Network& net = *bed.net;
  const auto& g = bed.fabric.graph;
  std::vector<uint32_t> nic_ports;  // host0's NIC ports in port order
  for (uint32_t pid = 0; pid < net.ports().size(); ++pid) {
    const Port& p = net.ports()[pid];
    if (g[p.node].name == "host0" && g[p.peer_node].role == Role::kLeaf) nic_ports.push_back(pid);
  }
  REQUIRE(nic_ports.size() == 2);
  // Opened: flows 0-2 on NIC 1 (odd n), flow 3 on NIC 0. Not opened: flows 4, 6 (even: NIC 0),
  // 5 (NIC 1). NIC 0: 3 messages, NIC 1: 4.
  for (uint32_t flow = 0; flow < 4; ++flow) {
    const uint32_t n = (flow < 3 ? 2 * flow + 1 : 2 * flow) | kNicLoopFlowBit;
    net.open_qp(0, 0, flow | kNicLoopFlowBit, -1, static_cast<int>(n));
  }
  for (uint32_t flow = 0; flow < 7; ++flow) net.send(0, 0, kMtu, flow | kNicLoopFlowBit, flow);
  bed.sim.run();
  net.check_invariants();
  CHECK(net.flows().size() == 7);
  const int64_t one = kMtu + kRoceOverhead + kAckWire;  // a 1-packet message and its ACK
  CHECK(net.ports()[nic_ports[0]].counters.tx_bytes == 3 * one);
  CHECK(net.ports()[nic_ports[1]].counters.tx_bytes == 4 * one);
  CHECK(net.ports()[net.ports()[nic_ports[0]].peer_port].counters.tx_bytes == 3 * one);
  CHECK(net.ports()[net.ports()[nic_ports[1]].peer_port].counters.tx_bytes == 4 * one);
  // Nothing crossed to the NVSwitch or a spine.
  for (const Port& p : net.ports()) {
    if (g[p.node].role == Role::kNvSwitch || g[p.peer_node].role == Role::kNvSwitch ||
        g[p.node].role == Role::kSpine) {
      CHECK(p.counters.tx_bytes == 0);
    }
  }
}

TEST_CASE("NIC loopback: the bit between two hosts and a host without a NIC link are refused") {
  Bed bed(one_leaf(2));
  Network& net = *bed.net;
  CHECK_THROWS_WITH(net.send(0, 1, 1000, kNicLoopFlowBit, 0),
                    Catch::Contains("NIC-loopback bit") && Catch::Contains("host 0 to host 1"));
  CHECK_THROWS_AS(net.open_qp(1, 0, 7 | kNicLoopFlowBit), std::invalid_argument);
  // Without the bit, a host to itself is an NVLink loopback, and this GPU has no NVLink.
  CHECK_THROWS_WITH(net.send(0, 0, 1000, 0, 0), Catch::Contains("bad host pair"));
  CHECK(net.messages_in_flight() == 0);
  CHECK(net.queue_pairs() == 0);

  // Two GPUs on an NVSwitch and nothing else: NVLink loopbacks only.
  Fabric f;
  f.kind = "spine-leaf";
  f.gpus_per_server = 2;
  FabricGraph& g = f.graph;
  const VertexId nvswitch = boost::add_vertex(g);
  g[nvswitch].kind = NodeKind::kSwitch;
  g[nvswitch].role = Role::kNvSwitch;
  g[nvswitch].name = "nvswitch0";
  g[nvswitch].tier = 1;
  for (int h = 0; h < 2; ++h) {
    const VertexId v = boost::add_vertex(g);
    g[v].name = "host" + std::to_string(h);
    g[v].server = 0;
    EdgeProps e;
    e.rate_bps = 400'000'000'000;
    e.nvlink = true;
    boost::add_edge(v, nvswitch, e, g);
    f.hosts.push_back(v);
  }
  const RoutingTable routes(f);
  Simulator sim;
  Network nvl(sim, f, routes, net_config_for(one_leaf(2)));
  CHECK_THROWS_WITH(
      nvl.send(0, 0, 1000, kNicLoopFlowBit, 0),
      Catch::Contains("NIC loopback on host 0") && Catch::Contains("needs a NIC port to a switch"));
  CHECK_THROWS_AS(nvl.open_qp(1, 1, kNicLoopFlowBit, -1, 0), std::invalid_argument);
  // Without the bit, the NVLink loopback: up to the NVSwitch and back, 2 serializations + lat.
  Recorder rec(sim);
  nvl.set_sink(&rec);
  nvl.send(0, 0, 1000, 0, 0);
  sim.run();
  nvl.check_invariants();
  CHECK(rec.done.at(0) == 2 * ser(1000 + kRoceOverhead, 400'000'000'000) + kLat);
}

TEST_CASE("NIC loopback meeting a message to its host: PFC pauses the host and loses nothing") {
  // host0's loopback and host1 -> host0 at once, 2000 packets each: the leaf's port down to
  // host0 carries both (and the loopback's ACKs) and its queue fills; PFC (XOFF at 30 frames)
  // pauses both ingresses, host0's NIC port included, whose frames the leaf turns into the
  // same egress, and sends the XOFF/XON frames to host0 on it too. That egress drains to a host,
  // which never pauses: no cycle, nothing lost, and the downlink, the bottleneck, is never idle
  // once both streams are in: the later of the two ends within one path latency D after the
  // downlink's bytes (PFC frames included) at line rate.
  // Under InfiniBand credits (a 32 KiB VL buffer per port) the same mix is lossless as well.
  const int64_t k = 2000;
  for (const char* transport : {"roce", "infiniband"}) {
    INFO(transport);
    // Short links (100 ns, 100 ns switch latency): a pause or credit round trip (about 0.5 us,
    // 6 frames) is well inside the 30 frames the thresholds leave, so the bottleneck never
    // idles waiting for a resume.
    const int64_t prop = 100'000, lat = 100'001;
    Scenario sc = fabricsim::testing::one_leaf(2, kRate, prop, lat, 64 << 20, kMtu);
    const bool ib = std::string(transport) == "infiniband";
    if (ib) {
      sc.transport = "infiniband";
      sc.infiniband.vl_buffer_bytes = 32 << 10;
    } else {
      sc.pfc.enabled = true;
      sc.pfc.xoff_bytes = 30 * (kMtu + kRoceOverhead);
    }
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 0, k * kMtu, kNicLoopFlowBit, 0);
    bed.net->send(1, 0, k * kMtu, 0, 1);
    bed.sim.run();
    REQUIRE(rec.done.size() == 2);
    CHECK_NOTHROW(bed.net->check_invariants());
    const NetTotals t = bed.net->totals();
    CHECK(t.drops == 0);
    CHECK(t.retransmits == 0);
    CHECK(bed.net->deadlock().detected_at_ps < 0);
    if (!ib) {
      CHECK(t.pfc_tx > 0);
      CHECK(bed.net->pfc().paused_mask(port_between(bed, "host0", "leaf0")) == 0);
    }
    const uint32_t down = port_between(bed, "leaf0", "host0");
    const int64_t down_bytes = bed.net->ports()[down].counters.tx_bytes;
    const int64_t w = ib ? kMtu + 26 : kMtu + kRoceOverhead, ack = ib ? 30 : kAckWire;
    CHECK(down_bytes == 2 * k * w + k * ack);  // both streams' data, the loopback's ACKs
    const int64_t T = ser(w, kRate), D = T + 2 * prop + lat;
    const int64_t last = std::max(rec.done[0], rec.done[1]);
    // The XOFF/XON frames to host0 leave by that same port (PFC frames: 64 B + 20 B framing,
    // IEEE 802.1Qbb), between data frames.
    const int64_t pfc_bytes = bed.net->ports()[down].counters.pfc_tx * (64 + 20);
    if (!ib) CHECK(bed.net->ports()[down].counters.pfc_tx > 0);
    CHECK(last >= ser(down_bytes, kRate));
    CHECK(last <= ser(down_bytes + pfc_bytes, kRate) + D);
  }
}
