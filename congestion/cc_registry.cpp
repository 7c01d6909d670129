// The congestion-control table: the built-in controls, then the registered ones.
#include "congestion/cc_registry.hpp"

#include <deque>
#include <stdexcept>
#include <utility>

#include "sim/core/choices.hpp"

namespace fabricsim {

namespace {

// Built-ins first. A deque: entries never move, so pointers handed out stay valid.
std::deque<CongestionControl>& registry() {
  static std::deque<CongestionControl> controls = [] {
    std::deque<CongestionControl> d;
    d.push_back({"none",
                 "no congestion control: line rate or nic.qp_rate_limit",
                 CcKind::kNone,
                 {},
                 {},
                 -1});
    d.push_back({"dcqcn",
                 "DCQCN (Zhu et al., SIGCOMM 2015), with the dcqcn: section's parameters",
                 CcKind::kDcqcn,
                 {},
                 {},
                 -1});
    d.push_back({"timely",
                 "TIMELY (Mittal et al., SIGCOMM 2015): RTT gradient, with the timely: section's "
                 "parameters",
                 CcKind::kTimely,
                 {},
                 {},
                 -1,
                 true});
    d.push_back({"hpcc",
                 "HPCC (Li et al., SIGCOMM 2019): in-band telemetry per hop, with the hpcc: "
                 "section's parameters",
                 CcKind::kHpcc,
                 {},
                 {},
                 -1,
                 false,
                 true});
    return d;
  }();
  return controls;
}

}  // namespace

size_t register_congestion_control(CongestionControl control) {
  if (control.name.empty()) throw std::invalid_argument("register_congestion_control: no name");
  if (control.name == "auto" || find_congestion_control(control.name) != nullptr) {
    throw std::invalid_argument("register_congestion_control: '" + control.name +
                                "' is taken already");
  }
  if (control.kind != CcKind::kRegistered || !control.make_sender) {
    throw std::invalid_argument("register_congestion_control: '" + control.name +
                                "' needs make_sender (a registered control's sender state)");
  }
  if (control.cnp_traffic_class < -1 || control.cnp_traffic_class > 7) {
    throw std::invalid_argument("register_congestion_control: '" + control.name +
                                "': cnp_traffic_class must be -1 (the QP's class) or 0..7");
  }
  register_choice("nic.congestion_control", control.name);
  registry().push_back(std::move(control));
  return registry().size() - 1;
}

const CongestionControl* find_congestion_control(const std::string& name) {
  for (const CongestionControl& c : registry()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> congestion_control_names() {
  std::vector<std::string> names;
  for (const CongestionControl& c : registry()) names.push_back(c.name);
  return names;
}

}  // namespace fabricsim
