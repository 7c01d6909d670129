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
  if (current_lp_ == kNoLp) return;  // set-up: the owning rank pushes it itself
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

StopReason Simulator::run(SimTime stop_at, uint64_t max_events) {
  stop_requested_ = false;
  uint64_t budget = max_events;
  bool capped = false;  // the budget is what is left under the event cap
  if (event_cap_ - std::min(events_, event_cap_) < budget) {
    budget = event_cap_ - std::min(events_, event_cap_);
    capped = true;
  }
  // The current LP is that of the executing event; once run() returns (also when a handler
  // throws) there is none, and pushes from outside count as the destination's own.
  struct ClearLp {
    uint32_t& lp;
    uint64_t& key;
    ~ClearLp() {
      lp = kNoLp;
      key = 0;
    }
  } clear_lp{current_lp_, current_key_};
  while (!queue_.empty()) {
    if (queue_.top().time_ps > stop_at.ps()) {
      // The clock never moves backwards, even if stop_at is earlier than now.
      if (stop_at.ps() > now_ps_) now_ps_ = stop_at.ps();
      return StopReason::kStopTime;
    }
    if (budget == 0) return capped ? StopReason::kEventCap : StopReason::kEventLimit;
    --budget;
    const Event e = queue_.pop();
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
  return StopReason::kNoEvents;
}

}  // namespace fabricsim
