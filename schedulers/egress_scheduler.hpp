// The scheduler a network runs at its ports, chosen by name from the registry once, when the
// network is built. The transmitter calls pick() once per frame: the built-ins are a switch on a
// small enum into inline code (no virtual call); a registered scheduler is one virtual call.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "schedulers/dwrr.hpp"
#include "schedulers/registry.hpp"
#include "schedulers/scheduler.hpp"
#include "schedulers/strict_priority.hpp"

namespace fabricsim {

class EgressScheduler {
 public:
  /// Strict priority.
  EgressScheduler() = default;
  /// The scheduler registered as `name`, built with `settings`. Throws std::invalid_argument for
  /// a name no scheduler has, and as dwrr_quanta() for weights outside 1..255 (whatever the
  /// scheduler).
  EgressScheduler(const std::string& name, const SchedulerSettings& settings);

  /// The class to send next among `eligible` (never 0). `heads` is the port's queues:
  /// `heads.empty(tc)`, `heads.wire_bytes(tc)` (bytes of queue tc's head frame on the wire).
  template <class Heads>
  int pick(uint8_t eligible, SchedulerState& state, const Heads& heads) {
    switch (kind_) {
      case SchedulerKind::kStrict:
        return strict_priority_pick(eligible);
      case SchedulerKind::kDwrr:
        return dwrr_pick(eligible, state, heads, quantum_);
      case SchedulerKind::kRegistered:
        break;
    }
    QueueHeads view;
    for (int tc = 0; tc < kSchedulerClasses; ++tc) {
      if (heads.empty(tc)) continue;
      view.nonempty |= static_cast<uint8_t>(1u << tc);
      view.wire_bytes[tc] = heads.wire_bytes(tc);
    }
    return pick_registered(eligible, state, view);
  }

  SchedulerKind kind() const { return kind_; }

 private:
  /// The registered scheduler's pick, checked to be one of the eligible classes (else
  /// std::logic_error naming the scheduler).
  [[gnu::noinline]] int pick_registered(uint8_t eligible, SchedulerState& state,
                                        const QueueHeads& heads);

  SchedulerKind kind_ = SchedulerKind::kStrict;
  std::array<int64_t, kSchedulerClasses> quantum_{};  ///< DWRR's, bytes
  std::string name_ = "strict";
  std::shared_ptr<Scheduler> registered_;  ///< kind kRegistered: the instance
};

}  // namespace fabricsim
