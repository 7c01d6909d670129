#include "schedulers/egress_scheduler.hpp"

#include <stdexcept>
#include <string>

namespace fabricsim {

EgressScheduler::EgressScheduler(const std::string& name, const SchedulerSettings& settings)
    : quantum_(dwrr_quanta(settings.dwrr_weights, settings.mtu_frame_bytes)), name_(name) {
  const SchedulerDef* def = find_scheduler(name);
  if (def == nullptr) throw std::invalid_argument("Network: unknown scheduler '" + name + "'");
  kind_ = def->kind;
  if (kind_ == SchedulerKind::kRegistered) {
    registered_ = def->make(settings);
    if (registered_ == nullptr) {
      throw std::invalid_argument("Network: scheduler '" + name + "' made no instance");
    }
  }
}

int EgressScheduler::pick_registered(uint8_t eligible, SchedulerState& state,
                                     const QueueHeads& heads) {
  const int tc = registered_->pick(eligible, state, heads);
  if (tc < 0 || tc >= kSchedulerClasses || !(eligible >> tc & 1)) {
    throw std::logic_error("scheduler '" + name_ + "' picked class " + std::to_string(tc) +
                           ", which may not send now");
  }
  return tc;
}

}  // namespace fabricsim
