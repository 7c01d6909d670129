// The discrete-event engine: simulated clock, pending events and the run loop.
//
// One Simulator per simulation; no globals, so two simulations can live in one process (tests
// do this). Handlers are member functions bound at compile time (SST's Event::Handler<Cls,&fn>,
// ns-3's Schedule(&Cls::M, this)): scheduling allocates nothing beyond the heap's amortized
// growth.
//
//   sim.after<&Port::on_tx_done>(delay, this, 0);
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>

#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"

namespace fabricsim {

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
  SimTime now() const { return SimTime(now_ps_); }
  int64_t now_ps() const { return now_ps_; }

  /// Schedules obj->Method(arg) at absolute time `t`. Throws std::logic_error if t < now().
  template <auto Method, class Cls>
  void at(SimTime t, Cls* obj, uint64_t arg = 0) {
    if (t.ps() < now_ps_) throw std::logic_error("Simulator::at: event scheduled in the past");
    queue_.push(Event{t.ps(), next_seq_++, &trampoline<Method, Cls>, obj, arg}, t.ps() - now_ps_);
  }
  /// Schedules obj->Method(arg) `delay` after now. Throws std::logic_error if delay < 0.
  template <auto Method, class Cls>
  void after(SimTime delay, Cls* obj, uint64_t arg = 0) {
    at<Method>(now() + delay, obj, arg);
  }

  /// Ends the current run() after the event being executed (the workload is done).
  void request_stop() { stop_requested_ = true; }

  /// Polled every few thousand events; when it becomes true run() returns kInterrupted.
  void set_interrupt_flag(const std::atomic<bool>* flag) { interrupt_ = flag; }

  /// Caps the events this simulator executes over all run() calls: once `total` have run, run()
  /// returns kEventCap (and again on every later call). Default: no cap.
  void set_event_cap(uint64_t total) { event_cap_ = total; }

  /// Executes events in (time, sequence) order until the workload requests a stop, the next
  /// event is later than `stop_at`, no events remain, or `max_events` more have run.
  StopReason run(SimTime stop_at = SimTime::max(), uint64_t max_events = UINT64_MAX);

  uint64_t events_executed() const { return events_; }
  size_t pending_events() const { return queue_.size(); }

 private:
  template <auto Method, class Cls>
  static void trampoline(void* obj, uint64_t arg) {
    (static_cast<Cls*>(obj)->*Method)(arg);
  }

  EventQueue queue_;
  int64_t now_ps_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t events_ = 0;
  uint64_t event_cap_ = UINT64_MAX;
  bool stop_requested_ = false;
  const std::atomic<bool>* interrupt_ = nullptr;
};

}  // namespace fabricsim
