// The table of fabric families: `topology.kind` -> builder. Adding a family is one builder in
// this folder and one row in registry.cpp.
#pragma once

#include <string>
#include <vector>

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

/// Builds the fabric the scenario's `topology.kind` names, then applies `failed_links`,
/// `degraded_links` and the bit error rates (a per-link one on a failed link is a warning in
/// Fabric::warnings). Throws ConfigError (exit code 2) when the scenario cannot be built, naming
/// the key (e.g. topology.oversubscription, with the ratios that can be built).
Fabric build_fabric(const Scenario& scenario);

/// The routes `routing.algorithm` asks for on `fabric` ("auto" = the fabric's default).
/// Throws ConfigError (key routing.algorithm) when the algorithm does not fit the fabric or
/// cannot route every pair (dimension-order routing across a failed link), and when the tables
/// would take over half of memory_budget() (sim/core/memory_budget.hpp), with the estimate.
RoutingTable build_routes(const Scenario& scenario, const Fabric& fabric);

/// The kinds build_fabric knows, in table order.
std::vector<std::string> fabric_kinds();

}  // namespace fabricsim
