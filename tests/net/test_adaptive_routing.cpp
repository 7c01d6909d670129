// Adaptive routing (routing.load_balancing: adaptive, flowlet): the load balancer's rule on
// hand-made queue depths, and the packet model against closed forms on a two-spine fabric.
#include <array>
#include <catch2/catch.hpp>

#include "../support.hpp"
#include "loadbalance/load_balancer.hpp"

using namespace fabricsim;
using fabricsim::testing::Bed;
using fabricsim::testing::kGbps;
using fabricsim::testing::kRoceOverhead;
using fabricsim::testing::Recorder;
using fabricsim::testing::ser;

TEST_CASE("load balancer: adaptive takes the least occupied port, the hashed one on a tie") {
  LoadBalancer lb({LbKind::kAdaptive, 16'000'000, 0}, 1);
  std::array<int64_t, 4> depth{3000, 1000, 1000, 5000};
  const auto load = [&](size_t i) { return depth[i]; };
  CHECK(lb.choose(4, 0, 0, 7, 0, load) == 1);  // 1 and 2 tie: the first after the hashed one
  CHECK(lb.choose(4, 2, 0, 7, 0, load) == 2);  // the hashed one is among the least: kept
  CHECK(lb.choose(4, 3, 0, 7, 0, load) == 1);  // from 3 the order is 0, 1, 2: 1 first
  // Hysteresis: the hashed port stays unless another is emptier by more than the threshold.
  LoadBalancer sticky({LbKind::kAdaptive, 16'000'000, 2000}, 1);
  CHECK(sticky.choose(4, 0, 0, 7, 0, load) == 0);  // 3000 - 1000 = 2000: not more
  CHECK(sticky.choose(4, 3, 0, 7, 0, load) == 1);  // 5000 - 1000 = 4000
}

TEST_CASE("load balancer: a flowlet keeps its port until the flow was idle for the gap") {
  const int64_t gap = 16'000'000;  // 16 us
  LoadBalancer lb({LbKind::kFlowlet, gap, 0}, 2);
  std::array<int64_t, 2> depth{0, 0};
  const auto load = [&](size_t i) { return depth[i]; };
  CHECK(lb.choose(2, 1, 0, 42, 0, load) == 1);  // a new flowlet: least occupied (tie: hashed)
  depth = {0, 9000};
  CHECK(lb.choose(2, 1, 0, 42, gap, load) == 1);  // gap after the last frame, not more: stays
  CHECK(lb.choose(2, 1, 0, 42, 2 * gap + 1, load) == 0);  // idle longer than the gap: moves
  // Another switch keeps its own table; another flow starts its own flowlet.
  CHECK(lb.choose(2, 1, 1, 42, 2 * gap + 2, load) == 0);
  depth = {9000, 0};
  CHECK(lb.choose(2, 0, 0, 43, 2 * gap + 3, load) == 1);
  CHECK(lb.choose(2, 1, 0, 42, 2 * gap + 4, load) == 0);  // flow 42's flowlet is unchanged
  // A flow whose slot another flow took since starts a new flowlet (the table is a hash).
  const uint32_t same_slot = 42 + LoadBalancer::kFlowletSlots;
  CHECK(lb.choose(2, 0, 0, same_slot, 2 * gap + 5, load) == 1);
  depth = {0, 9000};
  CHECK(lb.choose(2, 1, 0, 42, 2 * gap + 6, load) == 0);
}

TEST_CASE("adaptive routing: one flow over two 0.6x uplinks runs at its NIC's rate, ECMP at 0.6x") {
  // host0 -> leaf0 -> spine0|spine1 -> leaf1 -> host2, hosts at R, leaf-spine links at 0.6 R.
  // Frame i is fully in leaf0 at (i + 1) T + prop (T = its time at R) and forwarded lat later.
  // The uplink that took frame i - 1 is still busy then (0.6 R: 1.67 T per frame), the other
  // has been idle since (i - 1) T + prop + lat + T/0.6 < (i + 1) T + prop + lat: adaptive
  // routing alternates, each uplink and spine downlink gets a frame every 2T, and no queue
  // forms anywhere. The last frame leaves host0 at P T and its last bit reaches host2 after
  // T + prop + lat (leaf0), Tf + prop + lat (spine), Tf + prop + lat (leaf1), T + prop:
  //   done = P T + T + 2 Tf + 4 prop + 3 lat, Tf = the frame's time at 0.6 R.
  // Per-flow ECMP keeps every frame on one uplink: its 0.6 R is the bottleneck, P Tf + ...
  const int64_t rate = 100 * kGbps, fabric = 60 * kGbps, mtu = 1000, prop = 200'000, lat = 300'000,
                packets = 2000;
  const auto run = [&](const char* lb) {
    // Two hosts a leaf (host0 sends alone): 200 Gb/s down, 2 x 60 Gb/s up is 5:3.
    auto sc = fabricsim::testing::spine_leaf(2, 2, 2, rate, prop, lat, 4 << 20, mtu);
    sc.link.fabric_rate_bps = fabric;
    sc.topology.oversubscription = 5.0 / 3.0;
    sc.routing.load_balancing = lb;
    Bed bed(sc);
    Recorder rec(bed.sim);
    bed.net->set_sink(&rec);
    bed.net->send(0, 2, packets * mtu, 0, 0);
    bed.sim.run();
    bed.net->check_conservation();
    CHECK(bed.net->totals().retransmits == 0);
    return rec.done.at(0);
  };
  const int64_t t = ser(mtu + kRoceOverhead, rate), tf = ser(mtu + kRoceOverhead, fabric);
  CHECK(run("adaptive") == packets * t + t + 2 * tf + 4 * prop + 3 * lat);
  // ECMP: the uplink's P frames back to back from the first frame's arrival, then the rest of
  // the path: (T + prop + lat) + P Tf + prop + lat + Tf + prop + lat + T + prop.
  CHECK(run("per_flow") == 2 * t + (packets + 1) * tf + 4 * prop + 3 * lat);
  // A flowlet never breaks in a flow sent back to back: the same path as ECMP's first pick.
  CHECK(run("flowlet") == run("per_flow"));
}
