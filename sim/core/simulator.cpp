#include "sim/core/simulator.hpp"

#include <algorithm>

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

StopReason Simulator::run(SimTime stop_at, uint64_t max_events) {
  stop_requested_ = false;
  uint64_t budget = max_events;
  bool capped = false;  // the budget is what is left under the event cap
  if (event_cap_ - std::min(events_, event_cap_) < budget) {
    budget = event_cap_ - std::min(events_, event_cap_);
    capped = true;
  }
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
