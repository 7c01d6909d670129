// The lossless monitor on its own, without a network: the PFC watchdog's per-queue steps on a
// hand-written timeline, and the deadlock detector on a hand-built snapshot of two switches
// whose queues each wait on the other's ingress (the smallest cycle of the detector's
// definition, congestion/lossless_monitor.hpp), proven at the second check with nothing sent.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "congestion/lossless_monitor.hpp"
#include "sim/core/simulator.hpp"

using namespace fabricsim;

namespace {

using Step = LosslessMonitor::WatchdogStep;

void no_check(void*) {}

/// Switches A (node 0) and B (node 1), one link: global port 0 is A's port 0 (towards B),
/// global port 1 is B's port 0 (towards A).
LosslessMonitor::Wiring two_switches() {
  LosslessMonitor::Wiring w;
  w.port_node = {0, 1};
  w.peer_port = {1, 0};
  w.first_port = {0, 1, 2};
  return w;
}

/// Both egress queues of class 3 blocked (queue ids 0 x 8 + 3 = 3 and 1 x 8 + 3 = 11), each
/// switch's ingress in XOFF for class 3, each queue holding frames that came in on its own
/// switch's port 0 with class 3: queue 3 waits on ingress (port 1, class 3), whose frames are
/// in queue 11, which waits on ingress (port 0, class 3), whose frames are in queue 3.
LosslessSnapshot ring_snapshot() {
  LosslessSnapshot s;
  s.blocked = 1;
  s.blocked_queues = {{3, 40}, {11, 70}};
  s.xoff = {{0, 1u << 3}, {1, 1u << 3}};
  s.holds = {{3, 0, 3}, {11, 0, 3}};
  s.queued = {{3, 5}, {11, 6}};
  return s;
}

}  // namespace

TEST_CASE(
    "Watchdog: a queue paused with frames for the detection time storms, and is restored "
    "once no PFC frame came for the restoration time") {
  Simulator sim;
  // Detection 100 ps, restoration 50 ps (arbitrary test values).
  LosslessMonitor m(sim, {true, 100, 50, 1000, false}, &no_check, nullptr);
  int64_t stuck = -1;
  // Paused since t = 10 with frames: stuck from 10; at 109 only 99 ps.
  CHECK(m.watchdog_step(false, true, true, 0, 10, stuck, 60) == Step::kNone);
  CHECK(stuck == 10);
  CHECK(m.watchdog_step(false, true, true, 0, 10, stuck, 109) == Step::kNone);
  // At 110: 100 ps paused with frames.
  CHECK(m.watchdog_step(false, true, true, 0, 10, stuck, 110) == Step::kStorm);
  CHECK(stuck == -1);
  // Stormed; last PFC frame at 100: 49 ps later not restored, 50 ps later restored.
  CHECK(m.watchdog_step(true, true, true, 100, -1, stuck, 149) == Step::kNone);
  CHECK(m.watchdog_step(true, true, true, 100, -1, stuck, 150) == Step::kRestore);
  // An empty (or unpaused) queue is not stuck: its count starts again.
  stuck = 10;
  CHECK(m.watchdog_step(false, true, false, 0, 10, stuck, 500) == Step::kNone);
  CHECK(stuck == -1);
  stuck = 10;
  CHECK(m.watchdog_step(false, false, true, 0, 10, stuck, 500) == Step::kNone);
  CHECK(stuck == -1);
}

TEST_CASE(
    "Deadlock detector: two queues each waiting on the other's ingress form the cycle, broken "
    "by a frame of the awaited ingress being sent or by an ingress not in XOFF") {
  Simulator sim;
  LosslessMonitor m(sim, {false, 0, 0, 1000, false}, &no_check, nullptr);
  m.set_wiring(two_switches());
  CHECK(m.find_deadlock(ring_snapshot()) == std::vector<uint64_t>{3, 11});
  LosslessSnapshot sending = ring_snapshot();
  sending.in_tx = {{1, 0, 3}};  // B's port 0 sends a frame of ingress (port 0, class 3)
  CHECK(m.find_deadlock(sending).empty());
  LosslessSnapshot no_xoff = ring_snapshot();
  no_xoff.xoff = {{0, 1u << 3}};  // B's ingress not in XOFF: queue 3's pause will end
  CHECK(m.find_deadlock(no_xoff).empty());
  // With InfiniBand credits a blocked queue waits whatever the XOFF state.
  LosslessMonitor ib(sim, {false, 0, 0, 1000, true}, &no_check, nullptr);
  ib.set_wiring(two_switches());
  CHECK(ib.find_deadlock(no_xoff) == std::vector<uint64_t>{3, 11});
}

TEST_CASE(
    "Deadlock detector: a cycle is proven at the second check with nothing sent, and "
    "stops the run without the watchdog") {
  Simulator sim;
  LosslessMonitor m(sim, {false, 0, 0, 1000, false}, &no_check, nullptr);
  m.set_wiring(two_switches());
  CHECK(m.judge(ring_snapshot(), 0).empty());  // a candidate
  CHECK(m.detecting());
  CHECK(m.next_check_ps() == 1000);  // the next check, one period later
  LosslessSnapshot moved = ring_snapshot();
  moved.blocked_queues[1].tx_packets = 71;  // queue 11 sent a frame since
  CHECK(m.judge(moved, 1000).empty());
  m.begin_check();
  CHECK(m.judge(moved, 2000) == std::vector<uint64_t>{3, 11});
  CHECK(m.deadlock().detected_at_ps == 2000);
  CHECK(!m.detecting());
  // No watchdog: the detector stops, no further check is armed.
  CHECK(m.next_check_ps() == INT64_MAX);
  // Nothing blocked any more: no candidate.
  LosslessMonitor n(sim, {false, 0, 0, 1000, false}, &no_check, nullptr);
  n.set_wiring(two_switches());
  LosslessSnapshot clear;
  CHECK(n.judge(clear, 0).empty());
  CHECK(n.next_check_ps() == INT64_MAX);
}
