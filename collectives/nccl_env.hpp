// The NCCL environment overlay: the NCCL_* variables fabricsim reads, from the scenario's `nccl:`
// section and from its own environment (NCCL reads them at init; collectives/nccl_model.hpp
// parses them).
#pragma once

#include <map>
#include <string>

#include "sim/config/scenario.hpp"

namespace fabricsim {

/// The scenario's nccl section as NCCL_* variables (only what it sets).
std::map<std::string, std::string> nccl_variables(const Scenario& sc);

/// The NCCL_* variables of fabricsim's own environment override the scenario's nccl section
/// (NCCL reads them at init), unless --set gave the key; each one applied is recorded in
/// sc.origins and sc.nccl.from_env. Throws ConfigError (exit 2) for a bad value, naming the
/// variable.
void apply_nccl_environment(Scenario& sc);

/// The `nccl.` key a variable maps to (for errors), or the variable itself.
std::string nccl_key_of(const std::string& variable);

}  // namespace fabricsim
