// The discrete-event engine: EventQueue ordering, Simulator scheduling and run() stop reasons,
// determinism under a randomized workload, and SimTime's checked arithmetic.
// Expected orders follow from the (time, source LP, source LP's push count) key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/time.hpp"

using namespace fabricsim;

namespace {

constexpr LpId kLp{0};  // tests with one logical process: the key order is the push order

using TimeId = std::pair<int64_t, uint64_t>;  // (time_ps, event id)

/// Records (now, id) for every event it receives.
struct Recorder {
  explicit Recorder(Simulator& s) : sim(s) {}
  void on_event(uint64_t id) { log.emplace_back(sim.now_ps(), id); }
  std::vector<uint64_t> ids() const {
    std::vector<uint64_t> out;
    for (const auto& [t, id] : log) out.push_back(id);
    return out;
  }
  Simulator& sim;
  std::vector<TimeId> log;
};

/// Event 0 schedules events 1000..1009 at the current time, from inside its handler.
struct FanOut {
  explicit FanOut(Simulator& s) : sim(s) {}
  void on_event(uint64_t id) {
    order.push_back(id);
    if (id == 0) {
      for (uint64_t k = 1000; k < 1010; ++k) sim.at<&FanOut::on_event>(sim.now(), kLp, this, k);
    }
  }
  Simulator& sim;
  std::vector<uint64_t> order;
};

/// Calls request_stop() when event `stop_id` runs.
struct Stopper {
  explicit Stopper(Simulator& s) : sim(s) {}
  void on_event(uint64_t id) {
    ++seen;
    if (id == stop_id) sim.request_stop();
  }
  Simulator& sim;
  uint64_t stop_id = 0;
  int seen = 0;
};

/// A self-rescheduling chain of `remaining` events 1 ps apart; raises `flag` at event `raise_at`.
struct Chain {
  explicit Chain(Simulator& s) : sim(s) {}
  void on_event(uint64_t n) {
    if (n == raise_at && flag != nullptr) flag->store(true);
    if (n + 1 < length) sim.after<&Chain::on_event>(SimTime(1), kLp, this, n + 1);
  }
  Simulator& sim;
  uint64_t length = 0;
  uint64_t raise_at = UINT64_MAX;
  std::atomic<bool>* flag = nullptr;
};

/// Schedules into the past from a handler.
struct PastScheduler {
  explicit PastScheduler(Simulator& s) : sim(s) {}
  void on_event(uint64_t) { sim.at<&PastScheduler::on_event>(sim.now() - SimTime(1), kLp, this); }
  Simulator& sim;
};

/// The hold model with random increments: `initial` pending events, then each executed event
/// schedules one more at now + uniform[0, 1000) ps until `extra` more have been scheduled.
/// Increments this small relative to the number of pending events produce many same-time ties.
/// Ids are handed out in scheduling order, so they increase with the insertion sequence.
struct HoldWorkload {
  HoldWorkload(uint64_t seed, int initial, uint64_t extra)
      : rng(seed, "test.hold"), remaining(extra) {
    for (int i = 0; i < initial; ++i) schedule();
  }
  void schedule() {
    sim.after<&HoldWorkload::on_event>(SimTime(static_cast<int64_t>(rng.next() % 1000)), kLp, this,
                                       next_id++);
  }
  void on_event(uint64_t id) {
    log.emplace_back(sim.now_ps(), id);
    if (remaining > 0) {
      --remaining;
      schedule();
    }
  }
  Simulator sim;
  RngStream rng;
  uint64_t remaining;
  uint64_t next_id = 0;
  std::vector<TimeId> log;
};

std::vector<TimeId> run_hold(uint64_t seed) {
  HoldWorkload w(seed, 1'000, 20'000);
  REQUIRE(w.sim.run() == StopReason::kNoEvents);
  return w.log;
}

void noop(void*, uint64_t) {}

}  // namespace

// ---------------------------------------------------------------------------------------------
// EventQueue

TEST_CASE("EventQueue pops by (time, key), whatever the push order", "[engine][queue]") {
  EventQueue q;
  q.push(Event{20, 1, &noop, nullptr, 0, 0});
  q.push(Event{10, 5, &noop, nullptr, 0, 0});
  q.push(Event{10, 2, &noop, nullptr, 0, 0});
  q.push(Event{5, 9, &noop, nullptr, 0, 0});
  REQUIRE(q.size() == 4);
  std::vector<std::pair<int64_t, uint64_t>> popped;
  while (!q.empty()) {
    const Event e = q.pop();
    popped.emplace_back(e.time_ps, e.key);
  }
  CHECK(popped == std::vector<std::pair<int64_t, uint64_t>>{{5, 9}, {10, 2}, {10, 5}, {20, 1}});
}

TEST_CASE("EventQueue matches a sort on random keys", "[engine][queue]") {
  RngStream rng(7, "test.queue");
  EventQueue q;
  std::vector<std::pair<int64_t, uint64_t>> keys;
  for (uint64_t seq = 0; seq < 5'000; ++seq) {
    const auto t = static_cast<int64_t>(rng.next() % 300);  // many equal times
    keys.emplace_back(t, seq);
    q.push(Event{t, seq, &noop, nullptr, 0, 0});
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::pair<int64_t, uint64_t>> popped;
  while (!q.empty()) {
    const Event e = q.pop();
    popped.emplace_back(e.time_ps, e.key);
  }
  CHECK(popped == keys);
}

TEST_CASE("EventQueue with delay classes pops in (time, key) order, as a sorted set does",
          "[engine][queue]") {
  // The simulator's pattern: each pop advances now; pushes are now + a delay, most from a few
  // link delays (kept in FIFOs), some arbitrary (more delays than the class table has slots, so
  // some fall back to the general heap), some pushed without a delay (timers), zero delays too.
  // Keys are the simulator's: (source LP << 40 | that LP's push count). With one LP they grow
  // with every push; with many, pushes of equal time and delay come in any order of their keys
  // (two LPs executing at the same picosecond), which a class FIFO must not take out of order.
  const uint32_t lps = GENERATE(1u, 64u);
  CAPTURE(lps);
  RngStream rng(11, "test.queue.classes");
  EventQueue q;
  std::set<std::pair<int64_t, uint64_t>> reference;
  const int64_t link_delays[] = {0, 82, 82, 330, 412, 1000, 1000, 4096};
  std::vector<uint64_t> lp_seq(lps, 0);
  int64_t now = 0;
  auto push_some = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const uint64_t r = rng.next();
      int64_t delay;
      if (r % 10 < 7) {
        delay = link_delays[(r >> 8) % 8];
      } else {
        delay = static_cast<int64_t>((r >> 8) % 100'000);  // thousands of distinct delays
      }
      const uint32_t lp = static_cast<uint32_t>((r >> 40) % lps);
      const uint64_t key = uint64_t{lp} << Simulator::kSeqBits | lp_seq[lp]++;
      const Event e{now + delay, key, &noop, nullptr, 0, lp};
      if (r % 16 == 15) {
        q.push(e);
      } else {
        q.push(e, delay);
      }
      reference.emplace(e.time_ps, e.key);
    }
  };
  push_some(500);
  size_t popped = 0;
  while (!q.empty()) {
    REQUIRE(q.size() == reference.size());
    const Event top = q.top();
    const Event e = q.pop();
    REQUIRE(top.key == e.key);
    REQUIRE(std::make_pair(e.time_ps, e.key) == *reference.begin());
    REQUIRE(Simulator::key_lp(e.key) == e.lp);
    reference.erase(reference.begin());
    now = e.time_ps;
    if (++popped < 200'000) push_some(static_cast<int>(rng.next() % 3));
  }
  CHECK(reference.empty());
  CHECK(popped > 1'000);
}

TEST_CASE("EventQueue: equal times and delays pushed by many LPs in falling key order",
          "[engine][queue]") {
  // The worst case for the class FIFOs: every push has the same delay and, at each instant, the
  // LPs push in descending LP order, so each push but the first of an instant has a smaller key
  // than the FIFO's tail and must go to the general heap.
  EventQueue q;
  std::set<std::pair<int64_t, uint64_t>> reference;
  constexpr uint32_t kLps = 200;
  std::vector<uint64_t> lp_seq(kLps, 0);
  for (int64_t now = 0; now < 50; ++now) {
    // Drain what is due now, then push at now + 7 from every LP, highest LP first.
    while (!q.empty() && q.top().time_ps == now) {
      const Event e = q.pop();
      REQUIRE(std::make_pair(e.time_ps, e.key) == *reference.begin());
      reference.erase(reference.begin());
    }
    for (uint32_t lp = kLps; lp-- > 0;) {
      for (int k = 0; k < 2; ++k) {
        const uint64_t key = uint64_t{lp} << Simulator::kSeqBits | lp_seq[lp]++;
        q.push(Event{now + 7, key, &noop, nullptr, 0, lp}, 7);
        reference.emplace(now + 7, key);
      }
    }
  }
  while (!q.empty()) {
    const Event e = q.pop();
    REQUIRE(std::make_pair(e.time_ps, e.key) == *reference.begin());
    reference.erase(reference.begin());
  }
  CHECK(reference.empty());
}

// ---------------------------------------------------------------------------------------------
// Simulator: ordering

TEST_CASE("Events run in time order, ties of one LP in insertion order", "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  const std::vector<TimeId> scheduled = {{50, 0}, {10, 1}, {40, 2}, {20, 3},
                                         {30, 4}, {10, 5}, {0, 6}};
  for (const auto& [t, id] : scheduled) sim.at<&Recorder::on_event>(SimTime(t), kLp, &rec, id);
  CHECK(sim.pending_events() == 7);
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(rec.log ==
        std::vector<TimeId>{{0, 6}, {10, 1}, {10, 5}, {20, 3}, {30, 4}, {40, 2}, {50, 0}});
  CHECK(sim.now_ps() == 50);
  CHECK(sim.events_executed() == 7);
}

namespace {
std::vector<uint64_t> g_hinted;  // the args a prefetch hint saw, in order
void record_hint(const Event& next) {
  g_hinted.push_back(next.arg);
}
/// A second handler, without a hint.
struct Other {
  void on_other(uint64_t id) { ids.push_back(id); }
  std::vector<uint64_t> ids;
};
}  // namespace

TEST_CASE("a prefetch hint sees each event of its handler queued next, in run order", "[engine]") {
  // Simulator::add_hint's contract: before an event runs, the hint of the handler of the event
  // queued next is called with that event (here no handler schedules, so every event is). Two
  // handlers alternate in time (Other first), the hint on Recorder's: it sees every Recorder event,
  // in the order they run, and no other.
  Simulator sim;
  Recorder rec(sim);
  Other other;
  g_hinted.clear();
  sim.add_hint(Simulator::handler<&Recorder::on_event, Recorder>(), &record_hint);
  sim.add_hint(Simulator::handler<&Recorder::on_event, Recorder>(), &record_hint);  // once
  for (uint64_t id = 0; id < 20; ++id) {
    const auto t = static_cast<int64_t>(100 - 2 * id);
    sim.at<&Other::on_other>(SimTime(t), kLp, &other, 1000 + id);
    sim.at<&Recorder::on_event>(SimTime(t + 1), kLp, &rec, id);
  }
  sim.run();
  REQUIRE(rec.ids().size() == 20);
  REQUIRE(other.ids.size() == 20);
  CHECK(rec.ids().front() == 19);  // the earliest ran first: times fall with the id
  CHECK(g_hinted == rec.ids());
}

TEST_CASE("Many events of one LP at one time run in insertion order", "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  // 1000 events at t = 100, interleaved with events before and after it.
  std::vector<uint64_t> expected_at_100;
  for (uint64_t id = 0; id < 1'000; ++id) {
    sim.at<&Recorder::on_event>(SimTime(100), kLp, &rec, id);
    expected_at_100.push_back(id);
    if (id % 7 == 0) sim.at<&Recorder::on_event>(SimTime(50), kLp, &rec, 100'000 + id);
    if (id % 11 == 0) sim.at<&Recorder::on_event>(SimTime(150), kLp, &rec, 200'000 + id);
  }
  sim.run();
  std::vector<uint64_t> at_100;
  for (const auto& [t, id] : rec.log) {
    if (t == 100) at_100.push_back(id);
  }
  CHECK(at_100 == expected_at_100);
  CHECK(std::is_sorted(rec.log.begin(), rec.log.end(),
                       [](const TimeId& a, const TimeId& b) { return a.first < b.first; }));
}

TEST_CASE("Events scheduled at the current time from a handler run after those already due",
          "[engine]") {
  Simulator sim;
  FanOut fan(sim);
  for (uint64_t id = 0; id < 100; ++id) sim.at<&FanOut::on_event>(SimTime(10), kLp, &fan, id);
  sim.at<&FanOut::on_event>(SimTime(11), kLp, &fan, 2'000);
  CHECK(sim.run() == StopReason::kNoEvents);
  std::vector<uint64_t> expected;
  for (uint64_t id = 0; id < 100; ++id) expected.push_back(id);
  for (uint64_t id = 1000; id < 1010; ++id) expected.push_back(id);
  expected.push_back(2'000);
  CHECK(fan.order == expected);
}

namespace {

/// LP-aware model: the handler of an event on LP `lp` logs (lp, arg) and checks it runs as
/// that LP. A trigger (arg < 1000) on LP k pushes two events to the sink LP.
struct LpModel {
  static constexpr uint32_t kSink = 100;
  explicit LpModel(Simulator& s) : sim(s) {}
  void on_trigger(uint64_t k) {
    ran_as.push_back(sim.current_lp().value);
    order.push_back(k);
    for (uint64_t j = 0; j < 2; ++j)
      sim.at<&LpModel::on_sink>(SimTime(10), LpId(kSink), this, 1'000 * (k + 1) + j);
  }
  void on_sink(uint64_t tag) {
    ran_as.push_back(sim.current_lp().value);
    sink.push_back(tag);
  }
  /// LP 0 starts the sources 1..n at t = 5 in descending LP order.
  void on_start(uint64_t n) {
    for (uint64_t k = n; k >= 1; --k)
      sim.at<&LpModel::on_trigger>(SimTime(5), LpId(static_cast<uint32_t>(k)), this, k);
  }
  Simulator& sim;
  std::vector<uint32_t> ran_as;
  std::vector<uint64_t> order, sink;
};

}  // namespace

TEST_CASE("Equal-time events run by source LP, then the source's push order", "[engine][lp]") {
  // Sources 49..1 run in that order (LP 0 pushed them so), each pushing two events to the sink
  // at t = 10: the sink receives them by source LP (1, 2, ..., 49), each source's in its push
  // order, not in the order they were pushed overall. That order is what a rank holding only
  // the sink can reproduce.
  Simulator sim;
  LpModel m(sim);
  CHECK_FALSE(sim.in_event());
  sim.at<&LpModel::on_start>(SimTime(0), LpId(0), &m, 49);
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK_FALSE(sim.in_event());
  std::vector<uint64_t> sources, expected_sink;
  for (uint64_t k = 49; k >= 1; --k) sources.push_back(k);
  for (uint64_t k = 1; k <= 49; ++k) {
    expected_sink.push_back(1'000 * (k + 1));
    expected_sink.push_back(1'000 * (k + 1) + 1);
  }
  CHECK(m.order == sources);
  CHECK(m.sink == expected_sink);
  // Every handler ran as its event's LP: 49 sources, then 98 sink events.
  std::vector<uint32_t> expected_lps;
  for (uint32_t k = 49; k >= 1; --k) expected_lps.push_back(k);
  expected_lps.insert(expected_lps.end(), 98, LpModel::kSink);
  CHECK(m.ran_as == expected_lps);
}

TEST_CASE("A push from outside any event counts as the destination LP's own", "[engine][lp]") {
  // Set-up pushes at one time run by destination LP, whatever order they were made in; pushes
  // to one LP run in the order made.
  Simulator sim;
  Recorder rec(sim);
  sim.at<&Recorder::on_event>(SimTime(3), LpId(7), &rec, 70);
  sim.at<&Recorder::on_event>(SimTime(3), LpId(2), &rec, 20);
  sim.at<&Recorder::on_event>(SimTime(3), LpId(7), &rec, 71);
  sim.at<&Recorder::on_event>(SimTime(3), LpId(5), &rec, 50);
  sim.run();
  CHECK(rec.ids() == std::vector<uint64_t>{20, 50, 70, 71});
  // Between run() calls too (the LP of the last event is not the current one any more).
  sim.at<&Recorder::on_event>(SimTime(4), LpId(9), &rec, 90);
  sim.at<&Recorder::on_event>(SimTime(4), LpId(1), &rec, 10);
  sim.run();
  CHECK(rec.ids() == std::vector<uint64_t>{20, 50, 70, 71, 10, 90});
}

namespace {

/// LP 1 pushes to LPs 2 (local) and 3 (remote) when its event runs; the hook records what it
/// is handed.
struct Splitter {
  explicit Splitter(Simulator& s) : sim(s) {}
  void on_event(uint64_t id) {
    ran.push_back(id);
    if (id == 1) {
      sim.at<&Splitter::on_event>(sim.now() + SimTime(5), LpId(2), this, 2);
      sim.at<&Splitter::on_event>(sim.now() + SimTime(7), LpId(3), this, 3);
      sim.at<&Splitter::on_event>(sim.now() + SimTime(9), LpId(3), this, 4);
    }
  }
  static void hook(void* ctx, const Simulator::RemotePush& p) {
    static_cast<Splitter*>(ctx)->remote.push_back(p);
  }
  Simulator& sim;
  std::vector<uint64_t> ran;
  std::vector<Simulator::RemotePush> remote;
};

}  // namespace

TEST_CASE("Partitioned: pushes for another rank's LP go to the hook with the local key",
          "[engine][lp]") {
  // LPs 0..2 are this rank's, 3 another's. LP 1's handler pushes once to LP 2 and twice to LP
  // 3: the pushes to LP 3 reach the hook with LP 1's push counts 2 and 3 in the key (push 0 was
  // the set-up push of LP 1's own event, push 1 went to LP 2), exactly what a sequential run
  // gives them.
  const std::vector<uint8_t> local{1, 1, 1, 0};
  Simulator sim;
  Splitter m(sim);
  sim.set_partition(&local, &Splitter::hook, &m);
  CHECK(sim.is_local(LpId(2)));
  CHECK_FALSE(sim.is_local(LpId(3)));
  CHECK_FALSE(sim.is_local(LpId(9)));  // past the table: nobody's here
  sim.at<&Splitter::on_event>(SimTime(10), LpId(1), &m, 1);
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(m.ran == std::vector<uint64_t>{1, 2});
  REQUIRE(m.remote.size() == 2);
  CHECK(m.remote[0].time_ps == 17);
  CHECK(m.remote[0].lp == LpId(3));
  CHECK(m.remote[0].arg == 3);
  CHECK(Simulator::key_lp(m.remote[0].key) == 1);
  CHECK(Simulator::key_seq(m.remote[0].key) == 2);
  CHECK(Simulator::key_seq(m.remote[1].key) == 3);
  CHECK(m.remote[0].fn == Simulator::handler<&Splitter::on_event, Splitter>());
  // The receiving rank pushes it with that key: it then runs as it would have.
  Simulator other;
  Splitter n(other);
  other.at_keyed_raw(SimTime(m.remote[1].time_ps), m.remote[1].key, LpId(3), m.remote[1].fn, &n,
                     m.remote[1].arg);
  other.run();
  CHECK(n.ran == std::vector<uint64_t>{4});
  // Outside any event a push is the destination's own: for a remote LP that is a mistake.
  CHECK_THROWS_AS(sim.at<&Splitter::on_event>(SimTime(20), LpId(3), &m, 9), std::logic_error);
  // ... unless it is made on behalf of a local LP (a barrier's work for a node): then it is
  // that LP's push, here LP 1's fifth.
  sim.as_lp(LpId(1), [&] { sim.at<&Splitter::on_event>(SimTime(20), LpId(3), &m, 5); });
  REQUIRE(m.remote.size() == 3);
  CHECK(Simulator::key_lp(m.remote[2].key) == 1);
  CHECK(Simulator::key_seq(m.remote[2].key) == 4);
  CHECK_FALSE(sim.in_event());
}

TEST_CASE("advance_to moves the clock only over an empty stretch", "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  sim.at<&Recorder::on_event>(SimTime(100), LpId(0), &rec, 1);
  CHECK_THROWS_AS(sim.advance_to(SimTime(101)), std::logic_error);  // the event at 100 is due
  sim.advance_to(SimTime(100));
  CHECK(sim.now_ps() == 100);
  CHECK_THROWS_AS(sim.advance_to(SimTime(50)), std::logic_error);  // backwards
  sim.run();
  sim.advance_to(SimTime(250));
  CHECK(sim.now_ps() == 250);
}

TEST_CASE("An LP id beyond the key's 24 bits throws std::overflow_error", "[engine][lp]") {
  Simulator sim;
  Recorder rec(sim);
  CHECK_THROWS_AS(sim.at<&Recorder::on_event>(SimTime(1), LpId(Simulator::kMaxLps), &rec, 0),
                  std::overflow_error);
  CHECK_THROWS_AS(sim.at<&Recorder::on_event>(SimTime(1), LpId(UINT32_MAX - 1), &rec, 0),
                  std::overflow_error);
  CHECK(sim.pending_events() == 0);
  static_assert(Simulator::kMaxLps == 16'777'216);  // > 20k nodes of a 16k-GPU fabric
  static_assert(Simulator::key_lp(uint64_t{5} << 40 | 9) == 5);
  static_assert(Simulator::key_seq(uint64_t{5} << 40 | 9) == 9);
  static_assert(sizeof(Event) == 48);
}

TEST_CASE("Scheduling in the past throws std::logic_error", "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  sim.at<&Recorder::on_event>(SimTime(100), kLp, &rec, 0);
  sim.run();
  REQUIRE(sim.now_ps() == 100);
  CHECK_THROWS_AS(sim.at<&Recorder::on_event>(SimTime(99), kLp, &rec, 1), std::logic_error);
  CHECK_THROWS_AS(sim.after<&Recorder::on_event>(SimTime(-1), kLp, &rec, 1), std::logic_error);
  CHECK(sim.pending_events() == 0);
  // Now itself is not the past.
  sim.at<&Recorder::on_event>(SimTime(100), kLp, &rec, 2);
  sim.after<&Recorder::on_event>(SimTime(0), kLp, &rec, 3);
  CHECK(sim.pending_events() == 2);

  SECTION("from inside a handler, the error leaves run()") {
    Simulator sim2;
    PastScheduler past(sim2);
    sim2.at<&PastScheduler::on_event>(SimTime(5), kLp, &past);
    CHECK_THROWS_AS(sim2.run(), std::logic_error);
  }
}

// ---------------------------------------------------------------------------------------------
// Simulator: stop reasons

TEST_CASE("run() stop time: later events stay pending and now() becomes the stop time",
          "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  for (int64_t t : {10, 20, 30}) sim.at<&Recorder::on_event>(SimTime(t), kLp, &rec, t);
  CHECK(sim.run(SimTime(25)) == StopReason::kStopTime);
  CHECK(rec.log == std::vector<TimeId>{{10, 10}, {20, 20}});
  CHECK(sim.now_ps() == 25);
  CHECK(sim.pending_events() == 1);

  // An event exactly at the stop time runs.
  CHECK(sim.run(SimTime(30)) == StopReason::kNoEvents);
  CHECK(rec.log.back() == TimeId{30, 30});
  CHECK(sim.now_ps() == 30);
}

TEST_CASE("run() with a stop time earlier than now never moves the clock back", "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  sim.at<&Recorder::on_event>(SimTime(100), kLp, &rec, 0);
  CHECK(sim.run(SimTime(50)) == StopReason::kStopTime);
  CHECK(sim.now_ps() == 50);
  CHECK(sim.run(SimTime(20)) == StopReason::kStopTime);
  CHECK(sim.now_ps() == 50);
  CHECK_THROWS_AS(sim.at<&Recorder::on_event>(SimTime(30), kLp, &rec, 1), std::logic_error);
}

TEST_CASE("run() with no events left", "[engine]") {
  Simulator sim;
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(sim.now_ps() == 0);
  Recorder rec(sim);
  sim.at<&Recorder::on_event>(SimTime(7), kLp, &rec, 0);
  CHECK(sim.run(SimTime(1'000)) == StopReason::kNoEvents);
  CHECK(sim.now_ps() == 7);  // the clock stays at the last event, not the stop time
  CHECK(sim.pending_events() == 0);
}

TEST_CASE("run() returns kWorkloadDone after request_stop()", "[engine]") {
  Simulator sim;
  Stopper stopper(sim);
  stopper.stop_id = 2;
  for (uint64_t id = 0; id < 5; ++id) {
    sim.at<&Stopper::on_event>(SimTime(static_cast<int64_t>(id) + 1), kLp, &stopper, id);
  }
  CHECK(sim.run() == StopReason::kWorkloadDone);
  CHECK(stopper.seen == 3);
  CHECK(sim.now_ps() == 3);
  CHECK(sim.pending_events() == 2);
  // The request applies to one run(): the next run() continues.
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(stopper.seen == 5);
  CHECK(sim.events_executed() == 5);
}

TEST_CASE("run() returns kEventLimit when its budget is used up", "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  for (uint64_t id = 0; id < 10; ++id) {
    sim.at<&Recorder::on_event>(SimTime(static_cast<int64_t>(id)), kLp, &rec, id);
  }
  CHECK(sim.run(SimTime::max(), 4) == StopReason::kEventLimit);
  CHECK(sim.events_executed() == 4);
  CHECK(sim.pending_events() == 6);
  CHECK(sim.now_ps() == 3);
  CHECK(sim.run(SimTime::max(), 0) == StopReason::kEventLimit);
  CHECK(sim.events_executed() == 4);
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(rec.ids() == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("The event cap holds over several run() calls and wins over their budgets", "[engine]") {
  Simulator sim;
  Recorder rec(sim);
  for (uint64_t id = 0; id < 10; ++id) {
    sim.at<&Recorder::on_event>(SimTime(static_cast<int64_t>(id)), kLp, &rec, id);
  }
  sim.set_event_cap(7);
  CHECK(sim.run(SimTime::max(), 4) == StopReason::kEventLimit);  // the budget, 4 < 7
  CHECK(sim.events_executed() == 4);
  CHECK(sim.run(SimTime::max(), 5) == StopReason::kEventCap);  // 3 more reach the cap
  CHECK(sim.events_executed() == 7);
  CHECK(sim.run() == StopReason::kEventCap);  // and it stays reached
  CHECK(sim.events_executed() == 7);
  CHECK(sim.pending_events() == 3);
  CHECK(rec.ids() == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6});
}

TEST_CASE("run() returns kInterrupted when the interrupt flag is raised", "[engine]") {
  constexpr uint64_t kLength = 100'000;
  Simulator sim;
  std::atomic<bool> flag{false};
  sim.set_interrupt_flag(&flag);
  Chain chain(sim);
  chain.length = kLength;
  chain.flag = &flag;

  SECTION("raised by a handler mid-run (as a signal handler would)") {
    chain.raise_at = 100;
    sim.at<&Chain::on_event>(SimTime(0), kLp, &chain, 0);
    CHECK(sim.run() == StopReason::kInterrupted);
    // Polled every few thousand events: stopped soon after event 100, long before the end.
    CHECK(sim.events_executed() > 100);
    CHECK(sim.events_executed() < kLength);
    CHECK(sim.pending_events() == 1);
    // Lowering the flag lets the run finish.
    flag = false;
    CHECK(sim.run() == StopReason::kNoEvents);
    CHECK(sim.events_executed() == kLength);
  }
  SECTION("a flag that stays down never interrupts") {
    sim.at<&Chain::on_event>(SimTime(0), kLp, &chain, 0);
    CHECK(sim.run() == StopReason::kNoEvents);
    CHECK(sim.events_executed() == kLength);
  }
}

// ---------------------------------------------------------------------------------------------
// Simulator: the barrier

/// A barrier callback: logs (now, marker) into a Recorder (marker 900 + number of calls), checks
/// it runs outside any LP, and optionally re-arms itself or stops the run.
struct BarrierProbe {
  explicit BarrierProbe(Simulator& s, Recorder& r) : sim(s), rec(r) {}
  static void fire(void* self) { static_cast<BarrierProbe*>(self)->on_barrier(); }
  void on_barrier() {
    outside_lp = outside_lp && !sim.in_event();
    rec.log.emplace_back(sim.now_ps(), 900 + calls);
    ++calls;
    if (stop) sim.request_stop();
    if (rearm_every > 0 && calls < rearm_times) {
      sim.set_barrier(sim.now_ps() + rearm_every, &BarrierProbe::fire, this);
    }
  }
  Simulator& sim;
  Recorder& rec;
  uint64_t calls = 0;
  bool outside_lp = true;
  bool stop = false;
  int64_t rearm_every = 0;
  uint64_t rearm_times = 0;
};

TEST_CASE("A barrier runs after earlier events and before events at its time",
          "[engine][barrier]") {
  Simulator sim;
  Recorder rec(sim);
  BarrierProbe probe(sim, rec);
  CHECK(sim.barrier_ps() == INT64_MAX);
  for (int64_t t : {10, 20, 20, 30}) sim.at<&Recorder::on_event>(SimTime(t), kLp, &rec, t);
  sim.set_barrier(20, &BarrierProbe::fire, &probe);
  CHECK(sim.barrier_ps() == 20);
  CHECK(sim.run() == StopReason::kNoEvents);
  // 10 < 20 runs first; the barrier at 20 comes before both events at 20.
  CHECK(rec.log == std::vector<TimeId>{{10, 10}, {20, 900}, {20, 20}, {20, 20}, {30, 30}});
  CHECK(probe.outside_lp);
  CHECK(sim.barrier_ps() == INT64_MAX);  // cleared when it fired
  CHECK(sim.events_executed() == 4);     // the barrier is not an event
}

TEST_CASE("A barrier with no event left, or before the next one, still fires",
          "[engine][barrier]") {
  Simulator sim;
  Recorder rec(sim);
  BarrierProbe probe(sim, rec);
  sim.at<&Recorder::on_event>(SimTime(5), kLp, &rec, 5);
  sim.set_barrier(50, &BarrierProbe::fire, &probe);
  // Stop at 60: the barrier at 50 is within it though nothing is pending after 5.
  CHECK(sim.run(SimTime(60)) == StopReason::kNoEvents);
  CHECK(rec.log == std::vector<TimeId>{{5, 5}, {50, 900}});
  CHECK(sim.now_ps() == 50);
  // Next event beyond the stop time, barrier within it: the barrier fires, then the stop.
  sim.at<&Recorder::on_event>(SimTime(200), kLp, &rec, 200);
  sim.set_barrier(70, &BarrierProbe::fire, &probe);
  CHECK(sim.run(SimTime(100)) == StopReason::kStopTime);
  CHECK(rec.log.back() == TimeId{70, 901});
  CHECK(sim.now_ps() == 100);
}

TEST_CASE("A barrier beyond the stop time does not fire", "[engine][barrier]") {
  Simulator sim;
  Recorder rec(sim);
  BarrierProbe probe(sim, rec);
  sim.at<&Recorder::on_event>(SimTime(10), kLp, &rec, 10);
  sim.at<&Recorder::on_event>(SimTime(40), kLp, &rec, 40);
  sim.set_barrier(30, &BarrierProbe::fire, &probe);
  CHECK(sim.run(SimTime(25)) == StopReason::kStopTime);
  CHECK(rec.log == std::vector<TimeId>{{10, 10}});
  CHECK(probe.calls == 0);
  CHECK(sim.now_ps() == 25);
  CHECK(sim.barrier_ps() == 30);  // still set; the next run() reaches it
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(rec.log == std::vector<TimeId>{{10, 10}, {30, 900}, {40, 40}});
}

TEST_CASE("request_stop() in a barrier stops the run before the events at its time",
          "[engine][barrier]") {
  Simulator sim;
  Recorder rec(sim);
  BarrierProbe probe(sim, rec);
  probe.stop = true;
  for (int64_t t : {10, 20}) sim.at<&Recorder::on_event>(SimTime(t), kLp, &rec, t);
  sim.set_barrier(10, &BarrierProbe::fire, &probe);
  CHECK(sim.run() == StopReason::kWorkloadDone);
  CHECK(rec.log == std::vector<TimeId>{{10, 900}});
  CHECK(sim.now_ps() == 10);
  CHECK(sim.pending_events() == 2);
  CHECK(sim.events_executed() == 0);
}

TEST_CASE("A barrier re-armed from its callback fires again, setting replaces",
          "[engine][barrier]") {
  Simulator sim;
  Recorder rec(sim);
  BarrierProbe probe(sim, rec);
  probe.rearm_every = 10;
  probe.rearm_times = 3;  // fires at 10, 20, 30
  for (int64_t t : {15, 25, 35}) sim.at<&Recorder::on_event>(SimTime(t), kLp, &rec, t);
  sim.set_barrier(5, &BarrierProbe::fire, &probe);
  sim.set_barrier(10, &BarrierProbe::fire, &probe);  // replaces the one at 5
  CHECK_THROWS_AS(sim.set_barrier(-1, &BarrierProbe::fire, &probe), std::logic_error);
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(rec.log ==
        std::vector<TimeId>{{10, 900}, {15, 15}, {20, 901}, {25, 25}, {30, 902}, {35, 35}});
  CHECK(sim.events_executed() == 3);
  // clear_barrier() cancels.
  sim.set_barrier(100, &BarrierProbe::fire, &probe);
  sim.clear_barrier();
  CHECK(sim.barrier_ps() == INT64_MAX);
  sim.at<&Recorder::on_event>(SimTime(200), kLp, &rec, 200);
  CHECK(sim.run() == StopReason::kNoEvents);
  CHECK(probe.calls == 3);
}

TEST_CASE("The barrier ignores the event budget and the event cap", "[engine][barrier]") {
  Simulator sim;
  Recorder rec(sim);
  BarrierProbe probe(sim, rec);
  sim.at<&Recorder::on_event>(SimTime(10), kLp, &rec, 10);
  sim.at<&Recorder::on_event>(SimTime(20), kLp, &rec, 20);
  // Budget 0: no event runs, but the barrier before the next event does.
  sim.set_barrier(5, &BarrierProbe::fire, &probe);
  CHECK(sim.run(SimTime::max(), 0) == StopReason::kEventLimit);
  CHECK(rec.log == std::vector<TimeId>{{5, 900}});
  // Budget 1: the event at 10, then the barrier at 15 (before the event at 20), then the limit.
  sim.set_barrier(15, &BarrierProbe::fire, &probe);
  CHECK(sim.run(SimTime::max(), 1) == StopReason::kEventLimit);
  CHECK(rec.log == std::vector<TimeId>{{5, 900}, {10, 10}, {15, 901}});
  // The cap counts events only.
  sim.set_event_cap(1);
  sim.set_barrier(17, &BarrierProbe::fire, &probe);
  CHECK(sim.run() == StopReason::kEventCap);
  CHECK(rec.log.back() == TimeId{17, 902});
  CHECK(sim.events_executed() == 1);
}

TEST_CASE("to_string(StopReason)", "[engine]") {
  CHECK(std::string(to_string(StopReason::kStopTime)) == "stop time reached");
  CHECK(std::string(to_string(StopReason::kNoEvents)) == "no events left");
}

// ---------------------------------------------------------------------------------------------
// Determinism

TEST_CASE("A randomized hold-model workload is deterministic", "[engine][determinism]") {
  const std::vector<TimeId> first = run_hold(42);
  const std::vector<TimeId> second = run_hold(42);
  REQUIRE(first.size() == 21'000);  // 1000 initial + 20000 rescheduled
  CHECK(first == second);

  // Ids increase with the insertion sequence, so the (time, seq) order is the (time, id) order.
  CHECK(std::adjacent_find(first.begin(), first.end(), [](const TimeId& a, const TimeId& b) {
          return !(a < b);
        }) == first.end());
  // The workload really has same-time ties (otherwise it would not test tie-breaking).
  CHECK(std::adjacent_find(first.begin(), first.end(), [](const TimeId& a, const TimeId& b) {
          return a.first == b.first;
        }) != first.end());

  const std::vector<TimeId> other_seed = run_hold(43);
  CHECK(other_seed.size() == first.size());
  CHECK(other_seed != first);
}

TEST_CASE("Two simulations in one process do not interfere", "[engine][determinism]") {
  HoldWorkload a(42, 1'000, 20'000);
  HoldWorkload b(42, 1'000, 20'000);
  // Interleave the two runs in slices; each must match a run on its own.
  while (a.sim.run(SimTime::max(), 1'000) == StopReason::kEventLimit &&
         b.sim.run(SimTime::max(), 777) == StopReason::kEventLimit) {
  }
  a.sim.run();
  b.sim.run();
  const std::vector<TimeId> alone = run_hold(42);
  CHECK(a.log == alone);
  CHECK(b.log == alone);
}

// ---------------------------------------------------------------------------------------------
// SimTime

TEST_CASE("SimTime unit helpers", "[time]") {
  static_assert(SimTime::from_ns(5).ps() == 5'000);
  static_assert(SimTime::from_us(3).ps() == 3'000'000);
  static_assert(SimTime::from_ms(2).ps() == 2'000'000'000);
  static_assert(SimTime(10) + SimTime(5) == SimTime(15));
  static_assert(SimTime(10) - SimTime(15) == SimTime(-5));
  CHECK(SimTime::from_us(1).us() == 1.0);
  CHECK(SimTime::from_ms(500).seconds() == 0.5);
}

TEST_CASE("SimTime overflow throws std::overflow_error", "[time]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK_THROWS_AS(SimTime::max() + SimTime(1), std::overflow_error);
  CHECK_THROWS_AS(SimTime(kMin) - SimTime(1), std::overflow_error);
  CHECK_THROWS_AS(SimTime(0) - SimTime(kMin), std::overflow_error);
  SimTime t = SimTime::max();
  CHECK_THROWS_AS(t += SimTime(1), std::overflow_error);
  CHECK(t == SimTime::max());
  CHECK_THROWS_AS(SimTime::from_ns(kMax / 1'000 + 1), std::overflow_error);
  CHECK_THROWS_AS(SimTime::from_us(kMax / 1'000'000 + 1), std::overflow_error);
  CHECK_THROWS_AS(SimTime::from_ms(kMax / 1'000'000'000 + 1), std::overflow_error);
  CHECK(SimTime::from_ns(kMax / 1'000).ps() == kMax / 1'000 * 1'000);
  CHECK(SimTime::max() - SimTime(1) + SimTime(1) == SimTime::max());

  // Through the simulator: a delay that would overflow the clock.
  Simulator sim;
  Recorder rec(sim);
  sim.at<&Recorder::on_event>(SimTime(10), kLp, &rec, 0);
  sim.run();
  CHECK_THROWS_AS(sim.after<&Recorder::on_event>(SimTime::max(), kLp, &rec, 1),
                  std::overflow_error);
  CHECK(sim.pending_events() == 0);
}
