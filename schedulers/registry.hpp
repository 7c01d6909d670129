// The egress schedulers: what `switch.scheduler: NAME` runs at every port. The built-ins (strict,
// dwrr) are one line each in registry.cpp and run bound at compile time (egress_scheduler.hpp);
// a scheduler defined elsewhere (a test, a plug-in) calls register_scheduler() before loading a
// scenario that names it, and runs through the Scheduler interface (scheduler.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "schedulers/scheduler.hpp"

namespace fabricsim {

/// How a scheduler is run: one of the built-ins, inlined into the transmitter, or a registered
/// one through its Scheduler object.
enum class SchedulerKind : uint8_t { kStrict, kDwrr, kRegistered };

/// What a scheduler is built with, from the scenario's `switch:` and `nic:` sections.
struct SchedulerSettings {
  /// switch.dwrr_weights: weight per class, 1..255 (all 1 unless the scheduler is dwrr).
  std::array<int, kSchedulerClasses> dwrr_weights{1, 1, 1, 1, 1, 1, 1, 1};
  /// One MTU-sized data frame on the wire, bytes (nic.mtu plus the transport's overhead).
  int64_t mtu_frame_bytes = 0;
};

/// One scheduler.
struct SchedulerDef {
  std::string name;  ///< the `switch.scheduler` value, e.g. "dwrr"
  std::string doc;   ///< one line: what it serves first
  SchedulerKind kind = SchedulerKind::kRegistered;
  /// A registered scheduler's instance for one network (called once per network built); unused
  /// by the built-ins.
  std::function<std::unique_ptr<Scheduler>(const SchedulerSettings&)> make;
};

/// Adds `def` (kind kRegistered) to the table, after the built-in ones, and its name to the
/// loader's valid `switch.scheduler` values (register_choice, sim/core/choices.hpp). Returns
/// its index in the table. Throws std::invalid_argument when the name is empty or registered
/// already, the kind is not kRegistered, or `make` is empty.
size_t register_scheduler(SchedulerDef def);

/// The scheduler `name` names; nullptr when none does. Entries never move once registered.
const SchedulerDef* find_scheduler(const std::string& name);

/// The names in table order: the built-in ones (strict, dwrr), then the registered ones.
std::vector<std::string> scheduler_names();

}  // namespace fabricsim
