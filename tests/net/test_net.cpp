// sim/net against closed forms: serialization + propagation + switch latency on an idle path,
// throughput = line rate × payload / (payload + headers), and packet conservation under drops;
// queue pairs opened ahead, and the receiver's own message copies (sim/parallel items 2-5).
#include <catch2/catch.hpp>

#include <map>
#include <utility>
#include <vector>

#include "../support.hpp"

using namespace fabricsim;
using fabricsim::testing::Bed;
using fabricsim::testing::Recorder;

namespace {

// Wire bytes from the standards, written out here independently of sim/net/wire.cpp:
// RoCEv2 = Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4, + preamble/SFD 8 + IFG 12.
constexpr int64_t kRoceOverhead = 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12;  // 82
// InfiniBand = LRH 8 + BTH 12 + ICRC 4 + VCRC 2.
constexpr int64_t kIbOverhead = 8 + 12 + 4 + 2;  // 26

// ceil(bytes × 8 / rate) in ps, by hand.
int64_t ser(int64_t bytes, int64_t rate_bps) {
  return (bytes * 8 * 1'000'000'000'000 + rate_bps - 1) / rate_bps;
}

}  // namespace

TEST_CASE("one packet on an idle cross-leaf path: latency is the sum of hop delays, exact in ps") {
  const int64_t rate = 100'000'000'000, prop = 1'000'000, lat = 500'000, mtu = 1000;
  // 2 leaves x 1 host, 1 spine: host0 -> leaf0 -> spine0 -> leaf1 -> host1 = 4 links, 3 switches.
  Bed bed(fabricsim::testing::spine_leaf(2, 1, 1, rate, prop, lat, 1 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, mtu, 0, 0);
  bed.sim.run();
  const int64_t w = mtu + kRoceOverhead;
  REQUIRE(rec.done.at(0) == 4 * (ser(w, rate) + prop) + 3 * lat);
}

TEST_CASE("a K-packet message pipelines: one serialization per packet plus the path latency") {
  const int64_t rate = 100'000'000'000, prop = 1'000'000, lat = 500'000, mtu = 1000;
  for (int64_t k : {2, 10, 1000}) {
    Bed bed(fabricsim::testing::spine_leaf(2, 1, 1, rate, prop, lat, 1 << 20, mtu));
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 1, k * mtu, 0, 0);
    bed.sim.run();
    const int64_t w = mtu + kRoceOverhead;
    // Last packet leaves the NIC after k serializations, then 3 store-and-forward hops.
    CHECK(rec.done.at(0) == k * ser(w, rate) + 3 * ser(w, rate) + 4 * prop + 3 * lat);
  }
}

TEST_CASE("steady-state throughput is line rate x payload / (payload + headers)") {
  const int64_t rate = 400'000'000'000, mtu = 4096;
  auto finish = [&](int64_t packets, const char* transport) {
    Bed bed(
        fabricsim::testing::spine_leaf(1, 1, 2, rate, 250'000, 500'000, 1 << 22, mtu, transport));
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 1, packets * mtu, 0, 0);
    bed.sim.run();
    return rec.done.at(0);
  };
  for (auto [transport, overhead] :
       {std::pair{"roce", kRoceOverhead}, std::pair{"infiniband", kIbOverhead}}) {
    // The difference between two message lengths removes the path latency.
    const int64_t dt = finish(2000, transport) - finish(1000, transport);
    const double goodput_bps = 1000.0 * mtu * 8 / (dt * 1e-12);
    const double expected = rate * double(mtu) / double(mtu + overhead);
    INFO(transport);
    CHECK(goodput_bps == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("a short message is padded to the 64-byte minimum Ethernet frame") {
  const int64_t rate = 100'000'000'000, prop = 0, lat = 0;
  // 1 leaf, 2 hosts: host0 -> leaf0 -> host1, 2 links.
  Bed bed(fabricsim::testing::spine_leaf(1, 1, 2, rate, prop, lat, 1 << 20, 4096));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, 0, 0, 0);  // header-only packet: 62-byte frame padded to 64, + 20 framing
  bed.sim.run();
  REQUIRE(rec.done.at(0) == 2 * ser(64 + 20, rate));
}

TEST_CASE("ECMP spreads flows over the spines and is deterministic for a seed") {
  const int64_t rate = 100'000'000'000;
  auto spine_bytes = [&](uint64_t seed) {
    auto sc = fabricsim::testing::spine_leaf(2, 4, 1, rate, 0, 0, 1 << 20, 1000);
    sc.seed = seed;
    // 1 host per leaf, 4 spines: 4 uplinks of 25G would not keep 1:1 at 100G... use 4x rate/4.
    sc.link.fabric_rate_bps = rate / 4;
    Bed bed(sc);
    for (uint32_t flow = 0; flow < 64; ++flow) bed.net->send(0, 1, 1000, flow, flow);
    bed.sim.run();
    std::vector<int64_t> per_spine;
    for (const Port& p : bed.net->ports()) {
      if (bed.fabric.graph[p.node].tier == 1 && bed.fabric.graph[p.peer_node].tier == 2 &&
          p.node == 2) {
        per_spine.push_back(p.counters.tx_packets);
      }
    }
    return per_spine;
  };
  const auto a = spine_bytes(1), b = spine_bytes(1), c = spine_bytes(2);
  REQUIRE(a.size() == 4);
  CHECK(a == b);
  int used = 0;
  for (int64_t n : a) used += n > 0;
  CHECK(used >= 3);  // 64 flows over 4 paths: all idle with probability 4 x (3/4)^64 ~ 4e-8
  CHECK(a != c);     // another seed, another hash salt
}

TEST_CASE("two GPUs of one server: a message crosses the NVSwitch at the NVLink rate, no leaf") {
  const int64_t rate = 100'000'000'000, nvlink = 400'000'000'000, prop = 1'000'000, lat = 500'000,
                mtu = 1000;
  // 1 leaf x 4 GPUs, 2 servers of 2: host0 -> nvswitch0 -> host1 is 2 NVLinks (no propagation
  // delay) and 1 switch, where the leaf would be 2 links at 100G with 1 us each.
  auto sc = fabricsim::testing::spine_leaf(1, 1, 4, rate, prop, lat, 1 << 20, mtu);
  sc.topology.gpus_per_server = 2;
  sc.link.nvlink_rate_bps = nvlink;
  for (int64_t k : {1, 10}) {
    INFO(k << " packets");
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 1, k * mtu, 0, 0);
    bed.sim.run();
    const int64_t w = mtu + kRoceOverhead;
    // The NVLinks run at link.nvlink_efficiency (default 0.8) x link.nvlink_rate.
    const int64_t data_rate = nvlink / 10 * 8;
    CHECK(rec.done.at(0) == k * ser(w, data_rate) + ser(w, data_rate) + lat);
    const auto& g = bed.fabric.graph;
    int64_t leaf_tx = 0, nvswitch_tx = 0;
    for (const Port& p : bed.net->ports()) {
      if (g[p.node].role == Role::kLeaf || g[p.peer_node].role == Role::kLeaf) {
        leaf_tx += p.counters.tx_bytes;
      }
      if (g[p.node].name == "nvswitch0" && g[p.peer_node].name == "host1") {
        nvswitch_tx += p.counters.tx_bytes;
      }
    }
    CHECK(leaf_tx == 0);  // neither the leaf nor a NIC facing it sent a byte
    CHECK(nvswitch_tx == k * w);
  }
}

TEST_CASE("open_qp: ids are the creation order, and send() reuses an opened QP, per class") {
  Bed bed(fabricsim::testing::one_leaf(3, 100'000'000'000, 0, 0, 1 << 20, 1000));
  Network& net = *bed.net;
  CHECK(net.open_qp(0, 1, 7) == 0);
  CHECK(net.open_qp(1, 2, 7) == 1);
  CHECK(net.open_qp(0, 1, 7, 5) == 2);  // another class on the same flow: another QP
  CHECK(net.open_qp(0, 1, 7) == 0);     // the same key again: the same QP
  CHECK(net.open_qp(0, 1, 7, net.config().traffic_class) == 0);  // -1 = the configured class
  CHECK_THROWS_AS(net.open_qp(0, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(net.open_qp(0, 3, 1), std::invalid_argument);
  CHECK_THROWS_AS(net.open_qp(0, 1, 1, 8), std::invalid_argument);
  // Messages on the opened keys use their QPs; a new key gets the next id. Alternating classes
  // on one flow keeps both QPs.
  net.send(0, 1, 1000, 7, 0, 5);
  net.send(0, 1, 1000, 7, 1);
  net.send(0, 1, 1000, 7, 2, 5);
  net.send(2, 0, 1000, 9, 3);
  net.send(1, 2, 1000, 7, 4);
  bed.sim.run();
  std::map<uint64_t, uint32_t> qp_of_tag;
  for (const FlowRecord& f : net.flows()) qp_of_tag[f.tag] = f.qp;
  CHECK(qp_of_tag == std::map<uint64_t, uint32_t>{{0, 2}, {1, 0}, {2, 2}, {3, 3}, {4, 1}});
  CHECK(net.open_qp(2, 0, 9) == 3);
}

TEST_CASE("set_require_open_qps: send() on a key never opened is refused") {
  Bed bed(fabricsim::testing::one_leaf(3, 100'000'000'000, 0, 0, 1 << 20, 1000));
  Network& net = *bed.net;
  net.open_qp(0, 1, 4);
  net.set_require_open_qps(true);
  CHECK(net.send(0, 1, 1000, 4, 0) == 0);
  CHECK_THROWS_AS(net.send(0, 1, 1000, 5, 1), std::logic_error);     // another flow
  CHECK_THROWS_AS(net.send(0, 1, 1000, 4, 1, 6), std::logic_error);  // another class
  CHECK_THROWS_AS(net.send(1, 0, 1000, 4, 1), std::logic_error);     // the reverse direction
  // Bad input is still bad input, whether opened or not.
  CHECK_THROWS_AS(net.send(0, 1, -1, 4, 1), std::invalid_argument);
  net.set_require_open_qps(false);
  CHECK(net.send(1, 0, 1000, 4, 1) == 1);
  bed.sim.run();
  CHECK(net.flows().size() == 2);
}

TEST_CASE("go-back-N: a flow record counts the message's packets accepted as resends") {
  // One QP host0 -> leaf0 -> host1 carries messages of 4, 8 and 3 packets (PSNs 0-3, 4-11,
  // 12-14); the leaf's egress to host1 loses every 11th frame. Worked by hand: the 15 frames go
  // out back to back and the 11th, PSN 10, is lost. The receiver accepts PSNs 0-9, discards
  // 11-14 and NAKs 10 once. The NAK reaches the sender about 3T + 4 prop + 2 lat (> 19 frame
  // times) after the loss, when all 15 are out: it resends PSNs 10-14, frames 16-20 (the next
  // loss would be frame 22), which all arrive in order. So the first message has no resent
  // packet, the second 2 (PSNs 10, 11: from the lost one to its end), the third all 3.
  const int64_t rate = 100'000'000'000, mtu = 1000, prop = 200'000, lat = 300'000;
  REQUIRE((3 * ser(mtu + kRoceOverhead, rate) + 4 * prop + 2 * lat) /
              ser(mtu + kRoceOverhead, rate) >
          15 - 10);  // the NAK comes back after the last first-pass frame
  Bed bed(fabricsim::testing::one_leaf(2, rate, prop, lat, 64 << 20, mtu));
  bed.net->set_drop_every(fabricsim::testing::port_between(bed, "leaf0", "host1"), 11);
  bed.net->send(0, 1, 4 * mtu, 0, 100);
  bed.net->send(0, 1, 8 * mtu, 0, 101);
  bed.net->send(0, 1, 3 * mtu, 0, 102);
  bed.sim.run();
  bed.net->check_conservation();
  const NetTotals t = bed.net->totals();
  CHECK(t.corrupt_drops == 1);
  CHECK(t.nak_tx == 1);
  CHECK(t.rto_timeouts == 0);
  CHECK(t.retransmits == 5);
  const auto& flows = bed.net->flows();
  REQUIRE(flows.size() == 3);
  CHECK(flows[0].tag == 100);
  CHECK(flows[0].retransmitted_packets == 0);
  CHECK(flows[1].tag == 101);
  CHECK(flows[1].retransmitted_packets == 2);
  CHECK(flows[2].tag == 102);
  CHECK(flows[2].retransmitted_packets == 3);
}

TEST_CASE(
    "go-back-N: a resend whose payload is produced leaves at once, not when the next packet is") {
  // One QP host0 -> leaf0 -> host1 carries one message of 8 packets whose payload is produced
  // at 1 Gb/s (a GPU protocol's pace): packet k may leave at (k + 1) x 8 us. The leaf's egress
  // to host1 loses every 6th frame: PSN 5, sent at 48 us. PSN 6 (56 us) arrives out of
  // sequence and is NAKed; the NAK is back about a microsecond later, while PSN 7 waits for its
  // payload until 64 us. PSNs 5 and 6 are produced already, so they go at once, and PSN 7 leaves
  // at 64 us: the message completes one idle path after that. A NIC that kept waiting for PSN
  // 7's payload before resending would send 5, 6 and 7 from 64 us, two frames later.
  const int64_t rate = 100'000'000'000, mtu = 1000, prop = 200'000, lat = 300'000;
  const int64_t pace = 1'000'000'000, t = ser(mtu + kRoceOverhead, rate);
  Bed bed(fabricsim::testing::one_leaf(2, rate, prop, lat, 64 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->set_drop_every(fabricsim::testing::port_between(bed, "leaf0", "host1"), 6);
  bed.net->send(0, 1, 8 * mtu, 0, 0, -1, false, pace);
  bed.sim.run();
  bed.net->check_conservation();
  const NetTotals totals = bed.net->totals();
  CHECK(totals.nak_tx == 1);
  CHECK(totals.retransmits == 2);
  const int64_t last_made = ser(8 * mtu, pace);  // 64 us
  REQUIRE(last_made == 64'000'000);
  CHECK(rec.done.at(0) == last_made + 2 * (t + prop) + lat);
}

namespace {

/// On the completion of tag 0, posts two messages host1 -> host0 (from inside that event).
struct Replier : CompletionSink {
  explicit Replier(Network& n) : net(n) {}
  void on_message_complete(uint64_t tag) override {
    if (tag != 0) return;
    net.send(1, 0, 1000, 0, 1);
    net.send(1, 0, 0, 1, 2);
  }
  Network& net;
};

}  // namespace

TEST_CASE("posted(): each message's event key and index in the event, for a later merge") {
  Bed bed(fabricsim::testing::one_leaf(2, 100'000'000'000, 100'000, 0, 1 << 20, 1000));
  Replier replier(*bed.net);
  bed.net->set_sink(&replier);
  bed.net->set_record_posts(true);
  CHECK(bed.sim.current_key() == 0);
  bed.net->send(0, 1, 3000, 0, 0);
  bed.sim.run();
  CHECK(bed.sim.current_key() == 0);
  const auto& posts = bed.net->posted();
  const auto& flows = bed.net->flows();
  REQUIRE(posts.size() == 3);
  REQUIRE(flows.size() == 3);
  CHECK(posts[0].t_ps == 0);
  CHECK(posts[0].event_key == 0);  // set-up, outside events
  CHECK(posts[0].index_in_event == 0);
  // Both replies were posted by the event that delivered message 0's last packet.
  for (int i : {1, 2}) {
    INFO("post " << i);
    CHECK(posts[i].seq == uint64_t(i));
    CHECK(posts[i].t_ps == flows[0].end_ps);
    CHECK(posts[i].event_key == flows[0].deliver_key);
    CHECK(posts[i].index_in_event == uint32_t(i - 1));
  }
}

TEST_CASE("set_remote_post: the receiver completes messages from the copies it was handed") {
  Bed bed(fabricsim::testing::one_leaf(2, 100'000'000'000, 100'000, 0, 1 << 20, 1000));
  Network& net = *bed.net;
  std::vector<std::pair<uint32_t, Network::RxMessage>> shipped;
  net.set_remote_post([&](uint32_t qp, const Network::RxMessage& m) {
    shipped.emplace_back(qp, m);
    return true;
  });
  net.send(0, 1, 2500, 0, 7);
  net.send(0, 1, 1000, 0, 8);
  REQUIRE(shipped.size() == 2);
  CHECK(shipped[0].second.first_psn == 0);
  CHECK(shipped[0].second.packets == 3);
  CHECK(shipped[1].second.first_psn == 3);
  CHECK(shipped[1].second.tag == 8);
  // Out of order, the second copy does not fit: refused.
  CHECK_THROWS_AS(net.accept_rx_message(shipped[1].first, shipped[1].second), std::logic_error);
  CHECK_THROWS_AS(net.accept_rx_message(99, shipped[0].second), std::out_of_range);
  for (const auto& [qp, m] : shipped) net.accept_rx_message(qp, m);
  bed.sim.run();
  REQUIRE(net.flows().size() == 2);
  CHECK(net.flows()[0].tag == 7);
  CHECK(net.flows()[0].bytes == 2500);
  CHECK(net.flows()[1].tag == 8);
  CHECK(net.messages_in_flight() == 0);

  // A copy never handed over: the first packet finds no message, and the run says so.
  Bed lost(fabricsim::testing::one_leaf(2, 100'000'000'000, 100'000, 0, 1 << 20, 1000));
  lost.net->set_remote_post([](uint32_t, const Network::RxMessage&) { return true; });
  lost.net->send(0, 1, 1000, 0, 0);
  CHECK_THROWS_AS(lost.sim.run(), std::logic_error);
}

TEST_CASE("open_qp with a NIC: a GPU's QPs take the NIC they are given, in port order") {
  // Rail-optimized, 2 servers of 2 GPUs, 2 NICs per GPU (one on each of 2 planes): a QP opened
  // with NIC n leaves host 0 by its NIC n mod 2 whatever its flow hashes to (the collectives
  // pass the channel, as NCCL gives a GPU's channels its NICs in turn).
  auto sc = fabricsim::testing::spine_leaf(1, 1, 1, 100'000'000'000, 0, 0, 1 << 20, 1000);
  sc.topology.kind = "rail-optimized";
  sc.topology.gpus_per_server = 2;
  sc.topology.nics_per_server = 4;
  sc.topology.planes = 2;
  sc.topology.rails = 2;
  sc.topology.servers_per_su = 2;
  sc.topology.spines = 1;
  sc.link.nvlink_rate_bps = 400'000'000'000;
  Bed bed(sc);
  Network& net = *bed.net;
  const auto& g = bed.fabric.graph;
  // host0's NIC ports in port order (NIC 0 on plane 0, NIC 2 on plane 1).
  std::vector<uint32_t> nic_ports;
  for (uint32_t pid = 0; pid < net.ports().size(); ++pid) {
    const Port& p = net.ports()[pid];
    if (g[p.node].name == "host0" && g[p.peer_node].role == Role::kLeaf) nic_ports.push_back(pid);
  }
  REQUIRE(nic_ports.size() == 2);
  // host2 is GPU 0 of the other server: every plane reaches it. Flows 0..7 are given even NIC
  // numbers (NIC 0 of 2), flows 8 and 9 odd ones (NIC 1): a hash would split 10 flows 8 / 2 this
  // way with probability 1/1024.
  for (uint32_t flow = 0; flow < 10; ++flow) {
    const int nic = flow < 8 ? 2 * static_cast<int>(flow) : 2 * static_cast<int>(flow) + 1;
    net.open_qp(0, 2, flow, -1, nic);
    net.send(0, 2, 1000, flow, flow);
  }
  bed.sim.run();
  // One 1000-byte packet a flow (the ACKs go the other way).
  CHECK(net.ports()[nic_ports[0]].counters.tx_bytes == 8 * (1000 + kRoceOverhead));
  CHECK(net.ports()[nic_ports[1]].counters.tx_bytes == 2 * (1000 + kRoceOverhead));
}
