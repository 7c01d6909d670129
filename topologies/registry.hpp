// The table of fabric families: `topology.kind` -> builder. Adding a family is one builder in
// this folder and one row in registry.cpp.
#pragma once

#include <string>
#include <vector>

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

/// Builds the fabric the scenario's `topology.kind` names, then applies `failed_links` and
/// `degraded_links`. Throws ConfigError (exit code 2) when the scenario cannot be built, naming
/// the key (e.g. topology.oversubscription, with the ratios that can be built).
Fabric build_fabric(const Scenario& scenario);

/// The memory build_routes budgets against, bytes: the environment's FABRICSIM_MAX_MEMORY (a
/// size, e.g. "16GiB": a container's limit, which sysconf does not see) or else the machine's
/// physical memory. Throws ConfigError for a FABRICSIM_MAX_MEMORY that is not a size.
double machine_memory_bytes();

/// The routes `routing.algorithm` asks for on `fabric` ("auto" = the fabric's default).
/// Throws ConfigError (key routing.algorithm) when the algorithm does not fit the fabric or
/// cannot route every pair (dimension-order routing across a failed link).
RoutingTable build_routes(const Scenario& scenario, const Fabric& fabric);

/// The kinds build_fabric knows, in table order.
std::vector<std::string> fabric_kinds();

}  // namespace fabricsim
