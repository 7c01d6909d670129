// The discrete-event engine: simulated clock, pending events and the run loop.
//
// One Simulator per simulation; no globals, so two simulations can live in one process (tests
// do this). Handlers are member functions bound at compile time (SST's Event::Handler<Cls,&fn>,
// ns-3's Schedule(&Cls::M, this)): scheduling allocates nothing beyond the heap's amortized
// growth.
//
//   sim.after<&Network::on_tx_done>(delay, LpId(port.node), this, port_id);
//
// Logical processes and the event order
// -------------------------------------
// Every event belongs to a logical process (LP): the simulated node (switch, or host with its
// NIC, GPU and collective tasks) whose state its handler works on, or one of the few global LPs
// a component reserves past the node ids (the flow-level model). The scheduler names the
// destination LP with every push; run() makes it the *current* LP while the handler executes.
//
// Barrier: besides events, one barrier at a fixed time (set_barrier) runs a function outside
// any LP before every event at or after its time: a point where the whole simulation is at one
// time and no handler is running, so it may read (and a partitioned run may gather) every LP's
// state. The network's periodic lossless check (PFC watchdog and deadlock detector) is one.
//
// Each push gets the key (time_ps, src_lp, src_seq): src_lp is the current LP (the LP whose
// handler is pushing), src_seq a counter of that LP's pushes. A push outside any event (set-up,
// or between run() calls) counts as the destination LP's own push: src_lp = the destination.
// src_lp (kLpBits = 24 bits, 16.7 M LPs) and src_seq (kSeqBits = 40 bits, 1.1e12 pushes per LP)
// are packed into one uint64 (Event::key), so the key stays 128 bits; an LP id or a sequence
// beyond its field throws std::overflow_error. Events run in key order.
//
// Why this order does not depend on how LPs are split across MPI ranks: the events destined to
// one LP run in (time, src_lp, src_seq) order, and src_seq counts only the pushes of the LP
// src_lp, made by src_lp's own handlers in src_lp's own execution order (or, before the run, by
// the set-up of src_lp itself, which the rank owning it repeats). By induction over time: if
// every LP's history (the events it executed, in order) up to t is the same in two runs, the
// keys of the events they pushed are the same, so every LP's history up to the next event time
// is the same again, whatever other LPs share its rank. This holds provided (1) a handler reads
// and writes only the state of its own LP (everything else goes through events), and (2) an
// event between LPs on different ranks has a delay >= the lookahead, so a rank never receives an
// event in its past. A global insertion sequence fails exactly here: it numbers pushes in the
// interleaving of all LPs, which a partitioned run cannot reproduce. (The engine used that order
// before; results differ from it only in the order of events at the same picosecond.)
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"

namespace fabricsim {

/// A logical process id (see the header comment). A strong type, so an LP cannot be passed
/// where a port or packet argument is expected, nor the other way round.
struct LpId {
  uint32_t value;
  constexpr explicit LpId(uint32_t v) : value(v) {}
  friend constexpr bool operator==(LpId, LpId) = default;
};

/// Why Simulator::run returned.
enum class StopReason {
  kWorkloadDone,  ///< request_stop() was called (the workload completed)
  kStopTime,      ///< the next event lies beyond the stop time
  kNoEvents,      ///< nothing left to do (if the workload is not done, it is stuck)
  kEventLimit,    ///< the event budget given to run() was used up
  kInterrupted,   ///< the interrupt flag (SIGINT/SIGTERM) was raised
  kEventCap,      ///< the simulation's event cap (set_event_cap, the CLI's --max-events) reached
};
const char* to_string(StopReason r);

class Simulator {
 public:
  static constexpr int kLpBits = 24;
  static constexpr int kSeqBits = 40;
  /// LP ids are 0 .. kMaxLps - 1.
  static constexpr uint32_t kMaxLps = uint32_t{1} << kLpBits;
  static constexpr uint64_t kSeqMask = (uint64_t{1} << kSeqBits) - 1;
  /// The key's parts: Event::key = src_lp << kSeqBits | src_seq.
  static constexpr uint32_t key_lp(uint64_t key) { return static_cast<uint32_t>(key >> kSeqBits); }
  static constexpr uint64_t key_seq(uint64_t key) { return key & kSeqMask; }

  SimTime now() const { return SimTime(now_ps_); }
  int64_t now_ps() const { return now_ps_; }

  /// Schedules obj->Method(arg) at absolute time `t` on logical process `lp`. Throws
  /// std::logic_error if t < now(), std::overflow_error if lp >= kMaxLps or the pushing LP has
  /// used up its 2^40 sequence numbers.
  template <auto Method, class Cls>
  void at(SimTime t, LpId lp, Cls* obj, uint64_t arg = 0) {
    if (t.ps() < now_ps_) throw std::logic_error("Simulator::at: event scheduled in the past");
    if (local_ != nullptr && (lp.value >= local_->size() || !(*local_)[lp.value])) [[unlikely]] {
      push_remote(t.ps(), lp, &trampoline<Method, Cls>, obj, arg);
      return;
    }
    queue_.push(Event{t.ps(), next_key(lp), &trampoline<Method, Cls>, obj, arg, lp.value},
                t.ps() - now_ps_);
  }
  /// Schedules obj->Method(arg) `delay` after now on `lp`. Throws std::logic_error if delay < 0.
  template <auto Method, class Cls>
  void after(SimTime delay, LpId lp, Cls* obj, uint64_t arg = 0) {
    at<Method>(now() + delay, lp, obj, arg);
  }

  /// For an event another rank will execute (sim/parallel): the key a push to `dst` by the
  /// current LP gets here, exactly as at() would take it (the sequence number is used up).
  uint64_t take_key(LpId dst) { return next_key(dst); }
  /// Pushes obj->Method(arg) at `t` on `lp` with a key taken by take_key() on another rank, so
  /// the event sorts as it would have had it been pushed here. Throws std::logic_error if
  /// t < now().
  template <auto Method, class Cls>
  void at_keyed(SimTime t, uint64_t key, LpId lp, Cls* obj, uint64_t arg = 0) {
    if (t.ps() < now_ps_) throw std::logic_error("Simulator::at_keyed: event in the past");
    if (lp.value >= lp_seq_.size()) add_lps(lp.value);
    queue_.push(Event{t.ps(), key, &trampoline<Method, Cls>, obj, arg, lp.value});
  }
  /// The function an event of obj->Method(arg) runs (what a RemotePush carries): lets a
  /// parallel run recognise the handlers whose events cross ranks.
  template <auto Method, class Cls>
  static EventFn handler() {
    return &trampoline<Method, Cls>;
  }
  /// Pushes a raw event (a handler from handler<>(), its object and argument) with a key taken
  /// on another rank; as at_keyed(). Throws std::logic_error if t < now().
  void at_keyed_raw(SimTime t, uint64_t key, LpId lp, EventFn fn, void* obj, uint64_t arg) {
    if (t.ps() < now_ps_) throw std::logic_error("Simulator::at_keyed: event in the past");
    if (lp.value >= lp_seq_.size()) add_lps(lp.value);
    queue_.push(Event{t.ps(), key, fn, obj, arg, lp.value});
  }
  /// A push for an LP another rank owns (see set_partition): what the remote hook receives.
  struct RemotePush {
    int64_t time_ps;
    uint64_t key;  ///< taken here, exactly as a local push would have taken it
    LpId lp;
    EventFn fn;
    void* obj;
    uint64_t arg;
  };
  using RemoteHook = void (*)(void* ctx, const RemotePush& push);
  /// Partitioned run (sim/parallel): `local[lp]` != 0 for the LPs this rank owns (ids past the
  /// table are remote). A push from a handler to a remote LP goes to `hook` instead of the
  /// queue, with its key; a push outside any handler (set-up, which every rank repeats) to a
  /// remote LP is dropped, since the owner makes it itself. `local` must outlive the Simulator
  /// (or the next call); nullptr turns partitioning off.
  void set_partition(const std::vector<uint8_t>* local, RemoteHook hook, void* ctx) {
    local_ = local;
    remote_hook_ = hook;
    remote_ctx_ = ctx;
  }
  /// Runs `f` outside any event (a barrier's work, Simulator::set_barrier) on behalf of `lp`:
  /// its pushes count as `lp`'s own, as if a handler of `lp` made them, so a partitioned run's
  /// owner of `lp` takes the same keys and can send events to other ranks. Throws
  /// std::logic_error inside an event.
  template <class F>
  void as_lp(LpId lp, F&& f) {
    if (current_lp_ != kNoLp) throw std::logic_error("Simulator::as_lp: inside an event");
    if (lp.value >= lp_seq_.size()) add_lps(lp.value);
    struct Restore {
      uint32_t& lp;
      ~Restore() { lp = kNoLp; }
    } restore{current_lp_};
    current_lp_ = lp.value;
    f();
  }
  /// Whether this rank executes `lp`'s events (always true without a partition).
  bool is_local(LpId lp) const {
    return local_ == nullptr || (lp.value < local_->size() && (*local_)[lp.value]);
  }
  /// Moves the clock forward to `t` when no pending event lies before it (a phase boundary
  /// every rank agrees on). Throws std::logic_error if t < now() or an event is pending
  /// before t.
  void advance_to(SimTime t);
  /// The time of the earliest pending event, picoseconds; INT64_MAX when none is pending.
  int64_t next_event_ps() const { return queue_.empty() ? INT64_MAX : queue_.top().time_ps; }

  /// The LP whose event is executing; false outside run()'s handlers.
  bool in_event() const { return current_lp_ != kNoLp; }
  /// The LP whose event is executing. Precondition: in_event().
  LpId current_lp() const { return LpId(current_lp_); }
  /// Event::key of the event executing (its pushing LP and that LP's push count), 0 outside
  /// run()'s handlers. Unique per event and, with the time, its place in the execution order:
  /// components record it to put things done by handlers into the sequential order later
  /// (sim/parallel: merging per-rank records).
  uint64_t current_key() const { return current_key_; }
  /// Whether the barrier's work is running (Simulator::set_barrier): before every event at its
  /// time, in no event (current_key() is 0; as_lp may name an LP).
  bool in_barrier() const { return in_barrier_; }

  /// Ends the current run() after the event being executed (the workload is done).
  void request_stop() { stop_requested_ = true; }

  /// Polled every few thousand events; when it becomes true run() returns kInterrupted.
  void set_interrupt_flag(const std::atomic<bool>* flag) { interrupt_ = flag; }

  /// Caps the events this simulator executes over all run() calls: once `total` have run, run()
  /// returns kEventCap (and again on every later call). Default: no cap.
  void set_event_cap(uint64_t total) { event_cap_ = total; }

  /// Sets the barrier: run() calls fn(obj) once the clock reaches `t_ps`, before any event at
  /// t_ps or later, outside any LP (in_event() is false; a push from fn counts as the
  /// destination's own). One barrier at a time: setting replaces the previous one; fn may set
  /// the next. A barrier is not an event (events_executed() does not count it, the budget and
  /// the event cap do not apply). It fires if t_ps <= the stop time, also when no event is left
  /// or the next one is beyond the stop time. If fn calls request_stop(), run() returns
  /// kWorkloadDone without executing more events. Throws std::logic_error if t_ps < now().
  void set_barrier(int64_t t_ps, void (*fn)(void*), void* obj);
  void clear_barrier();
  /// The time of the pending barrier, picoseconds; INT64_MAX when none is set.
  int64_t barrier_ps() const { return barrier_ps_; }

  /// Executes events in (time, src_lp, src_seq) order, and the barrier when its time comes,
  /// until the workload requests a stop, the next event is later than `stop_at`, no events
  /// remain, or `max_events` more have run.
  StopReason run(SimTime stop_at = SimTime::max(), uint64_t max_events = UINT64_MAX);

  /// A prefetch hint: before each event, run() passes the event then at the head of the queue
  /// (the next to run, unless the current one schedules an earlier event, which then runs
  /// without a hint) to the hint registered for its handler, which may prefetch what that
  /// handler will read (a packet, a port) while the current one runs. No effect on any
  /// result. `hint` must not change state.
  using HintFn = void (*)(const Event& next);
  /// Registers `hint` for events of handler `fn` (a handler<>()); once per handler, at most
  /// kMaxHints handlers (further ones are ignored: a hint is an optimization).
  void add_hint(EventFn fn, HintFn hint) {
    for (const Hint& h : hints_) {
      if (h.fn == fn) return;
    }
    if (n_hints_ < kMaxHints) hints_[n_hints_++] = Hint{fn, hint};
  }

  uint64_t events_executed() const { return events_; }
  size_t pending_events() const { return queue_.size(); }

 private:
  static constexpr uint32_t kNoLp = UINT32_MAX;

  template <auto Method, class Cls>
  static void trampoline(void* obj, uint64_t arg) {
    (static_cast<Cls*>(obj)->*Method)(arg);
  }

  /// The key of a push to `dst` by the current LP (or by `dst` itself outside any event).
  uint64_t next_key(LpId dst) {
    if (dst.value >= lp_seq_.size()) [[unlikely]]
      add_lps(dst.value);
    const uint32_t src = current_lp_ == kNoLp ? dst.value : current_lp_;
    const uint64_t seq = lp_seq_[src]++;
    if (seq > kSeqMask) [[unlikely]]
      sequence_overflow(src);
    return uint64_t{src} << kSeqBits | seq;
  }
  /// Makes room for LP ids up to `lp`; throws std::overflow_error if lp >= kMaxLps.
  [[gnu::cold]] void add_lps(uint32_t lp);
  [[noreturn]] [[gnu::cold]] static void sequence_overflow(uint32_t lp);
  [[gnu::cold]] void push_remote(int64_t t_ps, LpId lp, EventFn fn, void* obj, uint64_t arg);

  static constexpr int kMaxHints = 4;
  struct Hint {
    EventFn fn = nullptr;
    HintFn hint = nullptr;
  };
  /// The hint for the event at the head of the queue (add_hint), if its handler has one.
  void hint_next() const {
    if (n_hints_ == 0 || queue_.empty()) return;
    const Event& next = queue_.top();
    for (int i = 0; i < n_hints_; ++i) {
      if (hints_[i].fn == next.fn) {
        hints_[i].hint(next);
        return;
      }
    }
  }

  EventQueue queue_;
  std::array<Hint, kMaxHints> hints_{};
  int n_hints_ = 0;
  int64_t now_ps_ = 0;
  uint32_t current_lp_ = kNoLp;
  uint64_t current_key_ = 0;      ///< Event::key of the executing event, 0 = none
  bool in_barrier_ = false;       ///< the barrier's fn is running
  std::vector<uint64_t> lp_seq_;  ///< per LP: the next src_seq of its pushes
  uint64_t events_ = 0;
  uint64_t event_cap_ = UINT64_MAX;
  bool stop_requested_ = false;
  const std::atomic<bool>* interrupt_ = nullptr;
  const std::vector<uint8_t>* local_ = nullptr;  ///< partitioned run: LPs this rank owns
  RemoteHook remote_hook_ = nullptr;
  void* remote_ctx_ = nullptr;
  int64_t barrier_ps_ = INT64_MAX;  ///< INT64_MAX: no barrier
  void (*barrier_fn_)(void*) = nullptr;
  void* barrier_obj_ = nullptr;
  /// The current run()'s stop time + 1 (INT64_MAX for no stop time).
  int64_t run_end_ps_ = INT64_MAX;
  /// min(run_end_ps_, barrier_ps_): run()'s loop leaves its fast path for an event at or past
  /// this time. Refreshed by set_barrier() and clear_barrier().
  int64_t limit_ps_ = INT64_MAX;
};

}  // namespace fabricsim
