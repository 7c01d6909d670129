// The NCCL environment overlay: the NCCL_* variables fabricsim reads, from the scenario's `nccl:`
// section and from its own environment (NCCL reads them at init; collectives/nccl_model.hpp
// parses them).
#pragma once

#include <map>
#include <string>

#include "collectives/nccl_params.hpp"
#include "sim/core/config_error.hpp"

namespace fabricsim {

/// The scenario's nccl section as NCCL_* variables (only what it sets).
std::map<std::string, std::string> nccl_variables(const NcclConfig& n);

/// The NCCL_* variables of fabricsim's own environment override the scenario's nccl section
/// (NCCL reads them at init), unless --set gave the key (`origins`: where the scenario's keys
/// were written, Scenario::origins); each one applied is recorded in `origins` and
/// nccl.from_env. Throws ConfigError (exit 2) for a bad value, naming the variable.
void apply_nccl_environment(NcclConfig& nccl, std::map<std::string, KeyOrigin>& origins);

/// The `nccl.` key a variable maps to (for errors), or the variable itself.
std::string nccl_key_of(const std::string& variable);

}  // namespace fabricsim
