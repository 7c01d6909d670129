#include "sim/core/choices.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace fabricsim {
namespace {

/// Key -> its registered values. Built on first use, so a registration during static
/// initialization finds it.
std::map<std::string, std::vector<std::string>>& choices() {
  static std::map<std::string, std::vector<std::string>> table = {{"topology.kind", {}},
                                                                  {"workload.algorithm", {}},
                                                                  {"switch.scheduler", {}},
                                                                  {"nic.congestion_control", {}},
                                                                  {"jobs[].placement", {}}};
  return table;
}

}  // namespace

void register_choice(const std::string& key_path, const std::string& value) {
  const auto it = choices().find(key_path);
  if (it == choices().end()) {
    throw std::invalid_argument("register_choice: '" + key_path +
                                "' takes no registered values (topology.kind, workload.algorithm, "
                                "switch.scheduler, nic.congestion_control, jobs[].placement)");
  }
  std::vector<std::string>& values = it->second;
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

std::vector<std::string> registered_choices(const std::string& key_path) {
  const auto it = choices().find(key_path);
  return it == choices().end() ? std::vector<std::string>{} : it->second;
}

}  // namespace fabricsim
