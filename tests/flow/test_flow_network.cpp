// The flow-level network (sim/flow): max-min fair sharing against hand-worked allocations
// (Bertsekas & Gallager §6.5.2), completion times against serialization + path latency written
// out here, and flow routes against the fabric's wiring.
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <set>

#include "../support.hpp"
#include "sim/core/rng.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/net/nic_loop.hpp"

using namespace fabricsim;
using fabricsim::testing::one_leaf;
using fabricsim::testing::Recorder;
using fabricsim::testing::ser;
using fabricsim::testing::spine_leaf;

namespace {

constexpr int64_t kGbps = 1'000'000'000;

/// `acks` false: the flows' ACKs take no bandwidth (FlowConfig::ack_wire_bytes 0), for the
/// closed forms of max-min sharing that count the data alone.
struct FlowBed {
  explicit FlowBed(const Scenario& sc, uint64_t seed = 1, bool acks = true,
                   double batch_tolerance = 0)
      : fabric(build_fabric(sc)), router(fabric, seed) {
    FlowConfig cfg = flow_config_for(net_config_for(sc));
    if (!acks) cfg.ack_wire_bytes = 0;
    cfg.batch_tolerance = batch_tolerance;
    net = std::make_unique<FlowNetwork>(sim, fabric, router, cfg);
  }
  Fabric fabric;
  FlowRouter router;
  Simulator sim;
  std::unique_ptr<FlowNetwork> net;
};

/// RoCEv2 wire bytes of one packet: 62 B headers, the frame padded to Ethernet's 64 B
/// minimum, + 20 B preamble/IFG.
int64_t roce_packet(int64_t payload) {
  return std::max<int64_t>(payload + 62, 64) + 20;
}

/// RoCEv2 wire bytes of `payload` in packets of `mtu`.
int64_t roce_wire(int64_t payload, int64_t mtu) {
  const int64_t full = payload / mtu, rest = payload % mtu;
  return full * roce_packet(mtu) + (rest > 0 ? roce_packet(rest) : 0);
}

}  // namespace

TEST_CASE("flow mode: one flow alone takes its wire bytes at line rate plus the path latency") {
  // Two hosts under one leaf, 100 Gb/s, 1 us propagation, 500 ns switching, 4096 B MTU.
  const int64_t rate = 100 * kGbps, prop = 1'000'000, lat = 500'000, mtu = 4096;
  FlowBed bed(one_leaf(2, rate, prop, lat, 1 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  for (const int64_t bytes : {int64_t{1'000'000}, int64_t{4096}, int64_t{1}}) {
    rec.done.clear();
    const int64_t start = bed.sim.now_ps();
    bed.net->send(0, 1, bytes, 0, 0);
    bed.sim.run();
    REQUIRE(rec.done.size() == 1);
    // Last bit out of the NIC after the wire bytes; then host link, leaf (latency, and the
    // last packet serialized again, store-and-forward), leaf link.
    const int64_t last = (bytes - 1) % mtu + 1;
    const int64_t expected =
        ser(roce_wire(bytes, mtu), rate) + prop + lat + ser(roce_packet(last), rate) + prop;
    INFO(bytes << " B");
    CHECK(rec.done[0] - start == Approx(expected).margin(2));
  }
  CHECK(bed.net->wire_bytes(0) == 84);  // a header-only packet pads to the 64 B minimum frame
  CHECK(bed.net->flows_completed() == 3);
}

TEST_CASE("flow mode: max-min shares, recomputed when a flow ends") {
  // One leaf, 4 hosts at 100 Gb/s, no latency. Three flows of S into host3 share its link
  // (R/3 each); host0 -> host2 shares host0's uplink with host0 -> host3 and takes the rest,
  // 2R/3 (max-min: the host3 link is the bottleneck of the first three). It ends at
  // 1.5 S/R; the incast keeps R/3 each and ends at 3 S/R.
  const int64_t rate = 100 * kGbps, mtu = 4096, bytes = 4096 * 1000;
  FlowBed bed(one_leaf(4, rate, 0, 0, 1 << 20, mtu), 1, false);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 3, bytes, 0, 0);
  bed.net->send(1, 3, bytes, 0, 1);
  bed.net->send(2, 3, bytes, 0, 2);
  bed.net->send(0, 2, bytes, 0, 3);
  bed.sim.run();
  REQUIRE(rec.done.size() == 4);
  const double s_over_r = static_cast<double>(ser(roce_wire(bytes, mtu), rate));
  const double last_packet = static_cast<double>(ser(mtu + 82, rate));  // store-and-forward
  CHECK(rec.done[3] == Approx(1.5 * s_over_r + last_packet).epsilon(1e-6));
  for (int i = 0; i < 3; ++i) {
    INFO("incast flow " << i);
    CHECK(rec.done[static_cast<size_t>(i)] == Approx(3 * s_over_r + last_packet).epsilon(1e-6));
  }
  // One allocation when the four start, one when host0 -> host2 ends; the last three end
  // together.
  CHECK(bed.net->reallocations() == 2);
}

TEST_CASE("flow mode: a flow started while another's end is pending gets its rate at once") {
  // One leaf, 100 Gb/s, no latency, no ACKs. A (host0 -> host1, 100 MB) runs alone at R; at
  // 1 ms B (host2 -> host1, 1 MB) joins it on host1's link and both run at R/2 until B's wire
  // bytes are through, 2 W_B / R later; A then has the link again. A ends at (W_A + W_B) / R.
  // The update pending for A's end must not hold back B's rate until then (B ended after A,
  // at 8.2 ms, when it did).
  const int64_t rate = 100 * kGbps, mtu = 4096, a_bytes = 100'000'000, b_bytes = 1'000'000;
  const int64_t join_ps = 1'000'000'000;
  FlowBed bed(one_leaf(3, rate, 0, 0, 1 << 20, mtu), 1, false);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 1, a_bytes, 0, 0);
  bed.sim.run(SimTime(join_ps));
  REQUIRE(rec.done.empty());
  bed.net->send(2, 1, b_bytes, 0, 1);
  bed.sim.run();
  REQUIRE(rec.done.size() == 2);
  const double w_a = static_cast<double>(ser(roce_wire(a_bytes, mtu), rate));
  const double w_b = static_cast<double>(ser(roce_wire(b_bytes, mtu), rate));
  // Each ends one store-and-forward of its last (partial) packet after its last bit leaves.
  const auto last_packet = [&](int64_t bytes) {
    return static_cast<double>(ser(roce_packet((bytes - 1) % mtu + 1), rate));
  };
  CHECK(rec.done[1] == Approx(join_ps + 2 * w_b + last_packet(b_bytes)).epsilon(1e-6));
  CHECK(rec.done[0] == Approx(w_a + w_b + last_packet(a_bytes)).epsilon(1e-6));
}

TEST_CASE("flow mode: ends within the batch tolerance share one rate computation") {
  // One leaf, 100 Gb/s, no latency, no ACKs. host0 sends 8 flows, to hosts 1..8, of 4,096,000
  // + 410 k bytes (wire bytes W_k, about 0.01 % apart). Exact max-min: all run at R/8 until the
  // first ends at 8 W_0 / R, then the 7 others at R/7, and so on: flow k ends at t_(k-1) +
  // (8 − k)(W_k − W_(k-1)) / R, one rate computation per end. With a tolerance of 0.1 % every
  // end falls within 0.1 % of the flows' age after the first, so the rates are computed once,
  // at the start (the window's last end leaves no flow to share with): the flows keep R/8 and
  // flow k ends at 8 W_k / R, at most 0.07 % after its exact end.
  const int64_t rate = 100 * kGbps, mtu = 4096, base = 4096 * 1000, step = 410;
  const auto run = [&](double tolerance, std::vector<int64_t>& ends) {
    FlowBed bed(one_leaf(9, rate, 0, 0, 1 << 20, mtu), 1, false, tolerance);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    for (int k = 0; k < 8; ++k)
      bed.net->send(0, 1 + k, base + k * step, 0, static_cast<uint64_t>(k));
    bed.sim.run();
    ends = rec.done;
    return bed.net->reallocations();
  };
  std::vector<int64_t> exact, batched;
  CHECK(run(0, exact) == 8);
  CHECK(run(0.001, batched) == 1);
  // The window is measured from the last start, not from time 0: after a 4 GB flow alone (320
  // ms), 8 flows 62.5 KB apart end at least 5 us apart, beyond 0.1 % of their own age (about
  // 2.6 ms) though within 0.1 % of 320 ms: one computation per end, as without batching.
  const auto after_idle = [&](double tolerance) {
    FlowBed bed(one_leaf(9, rate, 0, 0, 1 << 20, mtu), 1, false, tolerance);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(1, 2, 4'000'000'000, 0, 8);
    bed.sim.run();
    for (int k = 0; k < 8; ++k) {
      bed.net->send(0, 1 + k, base + k * 62'500, 0, static_cast<uint64_t>(k));
    }
    bed.sim.run();
    return bed.net->reallocations();
  };
  CHECK(after_idle(0.001) == after_idle(0));
  CHECK(after_idle(0) == 9);
  REQUIRE(exact.size() == 8);
  REQUIRE(batched.size() == 8);
  double t_exact = 0, w_before = 0;
  for (int k = 0; k < 8; ++k) {
    const double w = static_cast<double>(ser(roce_wire(base + k * step, mtu), rate));  // W_k / R
    const double last =
        static_cast<double>(ser(roce_packet((base + k * step - 1) % mtu + 1), rate));
    t_exact += (8 - k) * (w - w_before);
    w_before = w;
    INFO("flow " << k);
    CHECK(exact[static_cast<size_t>(k)] == Approx(t_exact + last).epsilon(1e-9));
    CHECK(batched[static_cast<size_t>(k)] == Approx(8 * w + last).epsilon(1e-9));
    CHECK(batched[static_cast<size_t>(k)] >= exact[static_cast<size_t>(k)]);
    CHECK(batched[static_cast<size_t>(k)] <= exact[static_cast<size_t>(k)] * 1.001);
  }
}

namespace {

/// Counts each tag's completions and starts one flow, alone on its links, when one of the
/// first `chain` tags completes (the next stage of a collective starting on a delivery).
struct ChainSink : CompletionSink {
  ChainSink(Simulator& s, FlowNetwork& n, int64_t bytes, int chain)
      : sim(s), net(n), next_bytes(bytes), chain(chain) {}
  void on_message_complete(uint64_t tag) override {
    ++done[tag];
    end_ps[tag] = sim.now_ps();
    if (tag < static_cast<uint64_t>(chain)) {
      const int k = static_cast<int>(tag);
      start_ps[100 + tag] = sim.now_ps();
      net.send(9 + k, 17 + k, next_bytes, 0, 100 + tag);
    }
  }
  Simulator& sim;
  FlowNetwork& net;
  int64_t next_bytes;
  int chain;
  std::map<uint64_t, int> done;
  std::map<uint64_t, int64_t> end_ps, start_ps;
};

}  // namespace

TEST_CASE("flow mode: inside a batch window a new flow gets its rate at once and slots stay") {
  // One leaf of 25 hosts, 100 Gb/s, no latency, no ACKs, tolerance 0.1. host0 sends 8 flows
  // (4 MB + k × 40 KB) to hosts 1..8: their ends fall in one window. Each end starts a flow
  // of 1 MB from host 9 + k to host 17 + k, alone on its links: it ends W / R after it
  // starts (plus its last packet's store-and-forward), as without batching; it would wait
  // for the window's last end if a start did not end the window. The ended flows stay listed
  // until the next rate computation while their deliveries start new flows: every flow must
  // end once (a slot freed too early would be reused while listed, and end twice).
  const int64_t rate = 100 * kGbps, mtu = 4096, next = 1'000'000;
  FlowBed bed(one_leaf(25, rate, 0, 0, 1 << 20, mtu), 1, false, 0.1);
  ChainSink sink(bed.sim, *bed.net, next, 8);
  bed.net->set_sink(&sink);
  for (int k = 0; k < 8; ++k) {
    bed.net->send(0, 1 + k, 4'000'000 + k * 40'000, 0, static_cast<uint64_t>(k));
  }
  bed.sim.run();
  REQUIRE(sink.done.size() == 16);
  for (const auto& [tag, n] : sink.done) {
    INFO("tag " << tag);
    CHECK(n == 1);
  }
  const double alone = static_cast<double>(ser(roce_wire(next, mtu), rate) +
                                           ser(roce_packet((next - 1) % mtu + 1), rate));
  for (uint64_t tag = 100; tag < 108; ++tag) {
    INFO("flow started at the end of flow " << tag - 100);
    CHECK(static_cast<double>(sink.end_ps[tag] - sink.start_ps[tag]) ==
          Approx(alone).epsilon(1e-6));
  }
  CHECK(bed.net->active_flows() == 0);
}

TEST_CASE("flow mode: a parking lot gets the max-min rates, not equal shares") {
  // Hosts 0..3 on one leaf; the long flow 0 -> 3 meets 1 -> 3 on host3's link and nothing
  // else; 1 -> 2 shares host1's uplink with 1 -> 3. Max-min: host3's link gives 0 -> 3 and
  // 1 -> 3 R/2 each; host1's uplink then leaves R/2 for 1 -> 2. Every flow runs at R/2, so
  // equal flows end together at 2 S/R (equal shares of every link would say the same here,
  // so add a second flow 2 -> 1 that is alone on its links and runs at R: it ends at S/R).
  const int64_t rate = 100 * kGbps, mtu = 4096, bytes = 4096 * 500;
  FlowBed bed(one_leaf(4, rate, 0, 0, 1 << 20, mtu), 1, false);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 3, bytes, 0, 0);
  bed.net->send(1, 3, bytes, 0, 1);
  bed.net->send(1, 2, bytes, 0, 2);
  bed.net->send(2, 1, bytes, 0, 3);
  bed.sim.run();
  REQUIRE(rec.done.size() == 4);
  const double s_over_r = static_cast<double>(ser(roce_wire(bytes, mtu), rate));
  const double last_packet = static_cast<double>(ser(mtu + 82, rate));
  for (int i = 0; i < 3; ++i) {
    INFO("flow " << i);
    CHECK(rec.done[static_cast<size_t>(i)] == Approx(2 * s_over_r + last_packet).epsilon(1e-6));
  }
  CHECK(rec.done[3] == Approx(s_over_r + last_packet).epsilon(1e-6));
}

TEST_CASE("flow mode: ACKs share the reverse links, weighted by their wire bytes") {
  // Two hosts under one leaf, 100 Gb/s, no latency, exchanging S bytes both ways at once. Each
  // direction of each link carries one flow's data at rate r and the other flow's ACKs at
  // r x a, where a = (ACK frames x 86 B) / (data wire bytes): an ACK is the RoCEv2 headers
  // (62 B) + AETH (4 B) + framing (20 B). The link is full: r (1 + a) = R, so each flow takes
  // (1 + a) S_wire / R. With ack_interval k, ceil(packets / k) ACKs.
  const int64_t rate = 100 * kGbps, bytes = 1'000'000;
  const int64_t ack_wire = 62 + 4 + 20;
  for (const auto& [mtu, interval] : {std::pair<int64_t, int>{256, 1}, {4096, 1}, {256, 64}}) {
    Scenario sc = one_leaf(2, rate, 0, 0, 1 << 20, mtu);
    sc.nic.ack_interval = interval;
    FlowBed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 1, bytes, 0, 0);
    bed.net->send(1, 0, bytes, 0, 1);
    bed.sim.run();
    REQUIRE(rec.done.size() == 2);
    const int64_t packets = (bytes + mtu - 1) / mtu;
    const int64_t acks = (packets + interval - 1) / interval;
    const double a = static_cast<double>(acks * ack_wire) / roce_wire(bytes, mtu);
    const double expected = (1 + a) * static_cast<double>(ser(roce_wire(bytes, mtu), rate)) +
                            static_cast<double>(ser(roce_packet((bytes - 1) % mtu + 1), rate));
    INFO("MTU " << mtu << ", ack_interval " << interval << ", a = " << a);
    CHECK(rec.done[0] == Approx(expected).epsilon(1e-6));
    CHECK(rec.done[1] == Approx(expected).epsilon(1e-6));
  }
  // One way only, the ACKs ride links that carry no data: the flow keeps the line rate.
  FlowBed one_way(one_leaf(2, rate, 0, 0, 1 << 20, 256));
  Recorder rec(one_way.sim);
  one_way.net->set_sink(&rec);
  one_way.net->send(0, 1, bytes, 0, 0);
  one_way.sim.run();
  CHECK(rec.done.at(0) == Approx(static_cast<double>(ser(roce_wire(bytes, 256), rate) +
                                                     ser(roce_packet((bytes - 1) % 256 + 1), rate)))
                              .epsilon(1e-6));
}

TEST_CASE("flow mode: routes are valley-free, per-flow ECMP spreads flows over the spines") {
  // 2 leaves x 4 hosts, 4 spines (1:1: one uplink per spine). host i -> host 4 + i crosses
  // leaf0 -> spine -> leaf1: 4 hops. Flows of one pair keep one path; 64 flow ids use every
  // spine.
  Scenario sc = spine_leaf(2, 4, 4, 100 * kGbps, 0, 0, 1 << 20, 4096);
  FlowBed bed(sc);
  const FabricGraph& g = bed.fabric.graph;
  std::set<std::string> spines;
  for (uint32_t flow = 0; flow < 64; ++flow) {
    std::vector<uint32_t> a, b;
    bed.router.path(0, 5, flow, a);
    bed.router.path(0, 5, flow, b);
    REQUIRE(a == b);
    REQUIRE(a.size() == 4);
    // The second hop leaves leaf0 for a spine: find the node of port a[1].
    for (VertexId v = 0; v < boost::num_vertices(g); ++v) {
      if (bed.router.first_port(v) <= a[2] && a[2] < bed.router.first_port(v + 1)) {
        spines.insert(g[v].name);
      }
    }
  }
  CHECK(spines == std::set<std::string>{"spine0", "spine1", "spine2", "spine3"});
  // Inside one leaf: 2 hops.
  std::vector<uint32_t> local;
  bed.router.path(0, 3, 0, local);
  CHECK(local.size() == 2);
}

TEST_CASE("flow mode: a paced flow keeps its pace and the others share what it leaves") {
  // One leaf, 100 Gb/s. Two flows of S into host2; the first paced at 20 Gb/s of payload.
  // Max-min with the pace as a link of its own: the paced flow runs at 20 Gb/s of payload
  // (its wire rate in proportion), the other takes the rest of host2's link, R − 20 × wire/S.
  // The unpaced one ends first, at S_wire / (R − r_paced); the paced one then has the link to
  // itself but keeps its pace, ending at S × 8 / 20 Gb/s (its wire bits at its wire rate).
  const int64_t rate = 100 * kGbps, mtu = 4096, bytes = 4096 * 1000, pace = 20 * kGbps;
  FlowBed bed(one_leaf(3, rate, 0, 0, 1 << 20, mtu));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  bed.net->send(0, 2, bytes, 0, 0, pace);
  bed.net->send(1, 2, bytes, 0, 1);
  bed.sim.run();
  REQUIRE(rec.done.size() == 2);
  const double wire = static_cast<double>(roce_wire(bytes, mtu));
  const double paced_wire_bps = static_cast<double>(pace) * wire / bytes;
  const double last_packet = static_cast<double>(ser(mtu + 82, rate));  // store-and-forward
  CHECK(rec.done[1] == Approx(wire * 8e12 / (rate - paced_wire_bps) + last_packet).epsilon(1e-6));
  CHECK(rec.done[0] == Approx(bytes * 8e12 / pace + last_packet).epsilon(1e-6));
  // A pace above the link's rate changes nothing: the flow takes its wire bytes at line rate.
  rec.done.clear();
  const int64_t start = bed.sim.now_ps();
  bed.net->send(0, 2, bytes, 0, 0, 4 * rate);
  bed.sim.run();
  REQUIRE(rec.done.size() == 1);
  CHECK(rec.done[0] - start == Approx(wire * 8e12 / rate + last_packet).epsilon(1e-6));
}

TEST_CASE("flow mode: a NIC loopback is refused as needing the packet network") {
  FlowBed bed(one_leaf(2, 100 * kGbps, 0, 0, 1 << 20, 1000));
  CHECK_THROWS_WITH(bed.net->send(0, 0, 1000, 3 | kNicLoopFlowBit, 0),
                    Catch::Contains("a NIC loopback (CollNet/SHARP) needs the packet network"));
  CHECK_THROWS_AS(bed.net->send(0, 0, 1000, 3, 0), std::invalid_argument);  // src == dst
}

namespace {

/// One flow of the water-filling reference below.
struct RefFlow {
  std::vector<std::pair<uint32_t, double>> links;  // (port, weight): 1 data, a_f its ACKs
  double remaining_bits = 0, cap_bps = 0, rate_bps = 0;
  int64_t latency_ps = 0;
  bool done = false;
};

/// Max-min rates by raising every free flow's rate together (Bertsekas & Gallager §6.5.2,
/// progressive filling as first stated, O(flows² × links)): at each round the level t at
/// which the first link its free data cross fills (what its fixed flows leave, over its free
/// flows' weights), or a free flow's cap, fixes the free flows there. Written apart from
/// FlowNetwork's heap of links to check it.
void water_fill(std::vector<RefFlow>& flows, const std::map<uint32_t, double>& capacity_bps) {
  std::vector<char> fixed(flows.size(), 0);
  for (size_t i = 0; i < flows.size(); ++i) fixed[i] = flows[i].done;
  for (;;) {
    std::map<uint32_t, double> left = capacity_bps, weight;
    std::map<uint32_t, int> free_data;
    for (size_t i = 0; i < flows.size(); ++i) {
      if (flows[i].done) continue;
      for (const auto& [l, w] : flows[i].links) {
        if (fixed[i]) {
          left[l] -= flows[i].rate_bps * w;
        } else {
          weight[l] += w;
          if (w == 1.0) ++free_data[l];
        }
      }
    }
    double level = std::numeric_limits<double>::infinity();
    for (const auto& [l, n] : free_data)
      level = std::min(level, std::max(0.0, left[l]) / weight[l]);
    for (size_t i = 0; i < flows.size(); ++i) {
      if (!fixed[i] && flows[i].cap_bps > 0) level = std::min(level, flows[i].cap_bps);
    }
    if (level == std::numeric_limits<double>::infinity()) return;
    for (size_t i = 0; i < flows.size(); ++i) {
      if (fixed[i]) continue;
      bool at_level = flows[i].cap_bps > 0 && flows[i].cap_bps <= level * (1 + 1e-12);
      for (const auto& [l, w] : flows[i].links) {
        if (w == 1.0 && std::max(0.0, left[l]) / weight[l] <= level * (1 + 1e-12)) at_level = true;
      }
      if (at_level) {
        flows[i].rate_bps = level;
        fixed[i] = 1;
      }
    }
  }
}

}  // namespace

TEST_CASE("flow mode: rates and ends match a water-filling that raises all free flows together") {
  // 2 leaves x 4 hosts, 2 spines, 100 Gb/s, MTU 1024 (ACKs 86 B per 1,106 B frame), no
  // latency: 40 flows between random hosts (seeded), 20 KB to 2 MB, every fifth paced at 5 to
  // 40 Gb/s, all starting at once. Several bottleneck levels, ACK weights on links that also
  // carry data, and caps make the heap of links re-queue stale entries; the reference
  // recomputes everything each round. Each flow ends at its last bit plus its path's latency.
  const int64_t rate = 100 * kGbps, mtu = 1024;
  Scenario sc = spine_leaf(2, 2, 4, rate, 0, 0, 1 << 20, mtu);
  FlowBed bed(sc);
  const FlowConfig cfg = flow_config_for(net_config_for(sc));
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  RngStream rng(2026, "flow water-filling test");
  auto below = [&](uint64_t n) { return rng.next() % n; };
  std::vector<RefFlow> ref;
  std::map<uint32_t, double> capacity;
  const int kFlows = 40;
  for (int i = 0; i < kFlows; ++i) {
    const int src = static_cast<int>(below(8));
    const int dst = (src + 1 + static_cast<int>(below(7))) % 8;
    const int64_t bytes = 20'000 + static_cast<int64_t>(below(1'980'000));
    const int64_t pace = i % 5 == 0 ? (5 + static_cast<int64_t>(below(36))) * kGbps : 0;
    const auto flow = static_cast<uint32_t>(i);
    bed.net->send(src, dst, bytes, flow, static_cast<uint64_t>(i), pace);
    RefFlow f;
    const double wire = static_cast<double>(bed.net->wire_bytes(bytes));
    f.remaining_bits = wire * 8;
    f.cap_bps = pace > 0 ? static_cast<double>(pace) * wire / static_cast<double>(bytes) : 0;
    const int64_t packets = (bytes + mtu - 1) / mtu;
    const int64_t acks = (packets + cfg.ack_interval - 1) / cfg.ack_interval;
    const double a = static_cast<double>(acks * cfg.ack_wire_bytes) / wire;
    std::vector<uint32_t> data, back;
    bed.router.path(src, dst, flow, data);
    bed.router.path(dst, src, flow, back, /*ack=*/true);  // the ACKs' path (packet mode's)
    for (uint32_t l : data) f.links.emplace_back(l, 1.0);
    for (uint32_t l : back) f.links.emplace_back(l, a);
    for (uint32_t l : data) capacity[l] = static_cast<double>(rate);
    for (uint32_t l : back) capacity[l] = static_cast<double>(rate);
    f.latency_ps = bed.net->path_latency_ps(src, dst, flow, (bytes - 1) % mtu + 1);
    ref.push_back(f);
  }
  REQUIRE(cfg.ack_wire_bytes == 86);
  bed.sim.run();
  REQUIRE(rec.done.size() == static_cast<size_t>(kFlows));
  // The reference, event by event: fill, run to the first end, take the ended flows out.
  std::vector<double> end_ps(kFlows, 0);
  double now_ps = 0;
  for (int left = kFlows; left > 0;) {
    water_fill(ref, capacity);
    double step_ps = std::numeric_limits<double>::infinity();
    for (const RefFlow& f : ref) {
      if (!f.done) step_ps = std::min(step_ps, f.remaining_bits / f.rate_bps * 1e12);
    }
    now_ps += step_ps;
    for (size_t i = 0; i < ref.size(); ++i) {
      RefFlow& f = ref[i];
      if (f.done) continue;
      f.remaining_bits -= f.rate_bps * step_ps * 1e-12;
      if (f.remaining_bits <= f.rate_bps * 1e-12) {
        f.done = true;
        end_ps[i] = now_ps + static_cast<double>(f.latency_ps);
        --left;
      }
    }
  }
  for (int i = 0; i < kFlows; ++i) {
    INFO("flow " << i);
    CHECK(static_cast<double>(rec.done[static_cast<size_t>(i)]) ==
          Approx(end_ps[static_cast<size_t>(i)]).epsilon(1e-6));
  }
  // More than one level: the flows did not all end together.
  CHECK(*std::max_element(end_ps.begin(), end_ps.end()) >
        1.5 * *std::min_element(end_ps.begin(), end_ps.end()));
}
