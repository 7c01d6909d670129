// The `flow:` section (FlowModeConfig, sim/config/scenario.hpp): the flow mode's own settings,
// read by sim/run/simulate_flow.cpp into FlowConfig. In the packet mode the section is said to
// do nothing, not refused, so that one scenario can be swept over the modes with its flow
// settings (--vary mode=packet,flow).
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

constexpr auto kFlow = &Scenario::flow;
using F = FlowModeConfig;

}  // namespace

// clang-format off
std::span<const Field> flow_params() {
  static const Field rows[] = {
  {"flow", "batch_tolerance", false, Fraction(0, 0.1, "a number from 0 to 0.1, e.g. 0.001"),
   at<kFlow, &F::batch_tolerance>,
   "flows ending within this fraction of their age after the first end share one rate "
   "computation (until then the others keep their rates and the freed bandwidth waits); 0 = "
   "one at every end, exact max-min"},
  };
  return rows;
}
// clang-format on

void check_flow(const std::map<std::string, Value>& found, Scenario& s) {
  if (s.mode == "flow") return;
  for (const auto& [path, value] : found) {
    if (path.rfind("flow.", 0) != 0) continue;
    s.warnings.push_back(config_warning(
        value.origin(), value.path(),
        "not used: the flow section sets the flow mode's parameters, and mode is " + s.mode));
    break;
  }
}

}  // namespace fabricsim::config_detail
