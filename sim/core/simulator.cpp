#include "sim/core/simulator.hpp"

#include <algorithm>
#include <string>

namespace fabricsim {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::kWorkloadDone:
      return "workload done";
    case StopReason::kStopTime:
      return "stop time reached";
    case StopReason::kNoEvents:
      return "no events left";
    case StopReason::kEventLimit:
      return "event limit reached";
    case StopReason::kInterrupted:
      return "interrupted";
    case StopReason::kEventCap:
      return "event cap reached";
  }
  return "?";
}

void Simulator::add_lps(uint32_t lp) {
  if (lp >= kMaxLps) {
    throw std::overflow_error("Simulator: logical process id " + std::to_string(lp) +
                              " does not fit the event key's " + std::to_string(kLpBits) +
                              " bits (at most " + std::to_string(kMaxLps) +
                              " LPs: one per switch and host, plus a few global ones)");
  }
  lp_seq_.resize(std::min<size_t>(kMaxLps, std::max<size_t>(size_t{lp} + 1, 2 * lp_seq_.size())),
                 0);
}

void Simulator::sequence_overflow(uint32_t lp) {
  throw std::overflow_error("Simulator: logical process " + std::to_string(lp) + " pushed 2^" +
                            std::to_string(kSeqBits) +
                            " events, the most its sequence field in the event key holds");
}

void Simulator::push_remote(int64_t t_ps, LpId lp, EventFn fn, void* obj, uint64_t arg) {
  if (current_lp_ == kNoLp) {
    // Outside any event a push is keyed as its destination's own, which only the destination's
    // rank can do: set-up code pushes only for its own LPs, and a barrier's work for a node
    // runs as that node (as_lp).
    throw std::logic_error("Simulator: an event for LP " + std::to_string(lp.value) +
                           ", which another rank owns, pushed outside any event");
  }
  if (remote_hook_ == nullptr) {
    throw std::logic_error("Simulator: an event for LP " + std::to_string(lp.value) +
                           ", which another rank owns, and no remote hook");
  }
  remote_hook_(remote_ctx_, RemotePush{t_ps, next_key(lp), lp, fn, obj, arg});
}

void Simulator::advance_to(SimTime t) {
  if (t.ps() < now_ps_) throw std::logic_error("Simulator::advance_to: time in the past");
  if (!queue_.empty() && queue_.top().time_ps < t.ps()) {
    throw std::logic_error("Simulator::advance_to: an event is pending before " +
                           std::to_string(t.ps()) + " ps");
  }
  now_ps_ = t.ps();
}

void Simulator::set_barrier(int64_t t_ps, void (*fn)(void*), void* obj) {
  if (t_ps < now_ps_) throw std::logic_error("Simulator::set_barrier: barrier in the past");
  barrier_ps_ = t_ps;
  barrier_fn_ = fn;
  barrier_obj_ = obj;
  limit_ps_ = std::min(run_end_ps_, barrier_ps_);
}

void Simulator::clear_barrier() {
  barrier_ps_ = INT64_MAX;
  barrier_fn_ = nullptr;
  barrier_obj_ = nullptr;
  limit_ps_ = run_end_ps_;
}

StopReason Simulator::run(SimTime stop_at, uint64_t max_events) {
  stop_requested_ = false;
  uint64_t budget = max_events;
  bool capped = false;  // the budget is what is left under the event cap
  if (event_cap_ - std::min(events_, event_cap_) < budget) {
    budget = event_cap_ - std::min(events_, event_cap_);
    capped = true;
  }
  const int64_t stop_ps = stop_at.ps();
  // The current LP is that of the executing event; once run() returns (also when a handler
  // throws) there is none, and pushes from outside count as the destination's own. The loop
  // bound is reset too, so a barrier set between runs does not see a stale stop time.
  struct Restore {
    Simulator& s;
    ~Restore() {
      s.current_lp_ = kNoLp;
      s.current_key_ = 0;
      s.run_end_ps_ = INT64_MAX;
      s.limit_ps_ = s.barrier_ps_;
    }
  } restore{*this};
  run_end_ps_ = stop_ps == INT64_MAX ? INT64_MAX : stop_ps + 1;
  limit_ps_ = std::min(run_end_ps_, barrier_ps_);
  for (;;) {
    // Fast path: an event before both the stop time and the barrier. Otherwise (or with no
    // event left) decide between the barrier, the stop time and the end.
    if (queue_.empty() || queue_.top().time_ps >= limit_ps_) [[unlikely]] {
      const int64_t next = queue_.empty() ? INT64_MAX : queue_.top().time_ps;
      if (barrier_fn_ != nullptr && barrier_ps_ <= stop_ps && barrier_ps_ <= next) {
        void (*fn)(void*) = barrier_fn_;
        void* obj = barrier_obj_;
        now_ps_ = barrier_ps_;
        current_lp_ = kNoLp;
        current_key_ = 0;
        clear_barrier();
        in_barrier_ = true;
        struct EndBarrier {
          bool& flag;
          ~EndBarrier() { flag = false; }
        } end_barrier{in_barrier_};
        fn(obj);  // may set the next barrier
        if (stop_requested_) return StopReason::kWorkloadDone;
        continue;
      }
      if (queue_.empty()) return StopReason::kNoEvents;
      if (next > stop_ps) {
        // The clock never moves backwards, even if stop_at is earlier than now.
        if (stop_ps > now_ps_) now_ps_ = stop_ps;
        return StopReason::kStopTime;
      }
      // (Unreachable: an event at or past the limit is past the stop time or the barrier.)
    }
    if (budget == 0) return capped ? StopReason::kEventCap : StopReason::kEventLimit;
    --budget;
    const Event e = queue_.pop();
    hint_next();
    now_ps_ = e.time_ps;
    ++events_;
    current_lp_ = e.lp;
    current_key_ = e.key;
    e.fn(e.obj, e.arg);
    if (stop_requested_) return StopReason::kWorkloadDone;
    if (interrupt_ != nullptr && (events_ & 0xFFF) == 0 &&
        interrupt_->load(std::memory_order_relaxed)) {
      return StopReason::kInterrupted;
    }
  }
}

}  // namespace fabricsim
