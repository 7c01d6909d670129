#include "schedulers/registry.hpp"

#include <deque>
#include <stdexcept>
#include <utility>

#include "sim/core/choices.hpp"

namespace fabricsim {

namespace {

// The table, built-ins first. A deque: entries never move, so pointers handed out stay valid.
std::deque<SchedulerDef>& table() {
  static std::deque<SchedulerDef> defs{
      {"strict",
       "strict priority: the highest class that may send (7 first)",
       SchedulerKind::kStrict,
       {}},
      {"dwrr",
       "deficit weighted round robin: shares by switch.dwrr_weights",
       SchedulerKind::kDwrr,
       {}},
  };
  return defs;
}

}  // namespace

size_t register_scheduler(SchedulerDef def) {
  if (def.name.empty()) throw std::invalid_argument("register_scheduler: empty name");
  if (find_scheduler(def.name) != nullptr) {
    throw std::invalid_argument("register_scheduler: '" + def.name + "' is already registered");
  }
  if (def.kind != SchedulerKind::kRegistered || !def.make) {
    throw std::invalid_argument("register_scheduler: '" + def.name +
                                "' needs kind kRegistered and a make hook");
  }
  register_choice("switch.scheduler", def.name);
  table().push_back(std::move(def));
  return table().size() - 1;
}

const SchedulerDef* find_scheduler(const std::string& name) {
  for (const SchedulerDef& d : table()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> scheduler_names() {
  std::vector<std::string> names;
  for (const SchedulerDef& d : table()) names.push_back(d.name);
  return names;
}

}  // namespace fabricsim
