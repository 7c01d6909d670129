// The table of fabric families: `topology.kind` -> builder. Adding a family is one builder in
// this folder and one row in registry.cpp.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/family.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

/// The edges a link name refers to: "leaf0-spine1" or "leaf0-spine1#0" the first of the
/// parallel links between the two nodes, "leaf0-spine1#1" the second, "leaf0-spine1#*" all of
/// them; `parallel` is set to how many there are. `by_name`: the fabric's vertices by name.
/// Throws ConfigError at `key` for a malformed name, an unknown node (with a "did you mean")
/// or a missing link.
std::vector<FabricGraph::edge_descriptor> find_links(const Scenario& sc, const Fabric& f,
                                                     const std::map<std::string, VertexId>& by_name,
                                                     const std::string& text,
                                                     const std::string& key, int& parallel);

/// Builds the fabric the scenario's `topology.kind` names, then applies `failed_links`,
/// `degraded_links` and the bit error rates (a per-link one on a failed link is a warning in
/// Fabric::warnings). Throws ConfigError (exit code 2) when the scenario cannot be built, naming
/// the key (e.g. topology.oversubscription, with the ratios that can be built).
Fabric build_fabric(const Scenario& scenario);

/// Refuses routing tables for `hosts` hosts among `nodes` vertices that
/// would take over half of memory_budget() (routing_table_bytes): ConfigError at `topology`
/// with the estimate. build_routes calls it; a builder calls the second form before building a
/// large fabric (`default_routing`: its Fabric::default_routing, what routing.algorithm auto
/// means; nothing is refused in the flow mode, which builds no tables), with the same numbers,
/// so that the refusal comes before the build, not after it.
void check_routes_fit(const Scenario& scenario, int64_t hosts, int64_t nodes,
                      RoutingAlgorithm algorithm);
void check_routes_fit(const Scenario& scenario, int64_t hosts, int64_t nodes,
                      const std::string& default_routing);

/// The routes `routing.algorithm` asks for on `fabric` ("auto" = the fabric's default).
/// Throws ConfigError (key routing.algorithm) when the algorithm does not fit the fabric or
/// cannot route every pair (dimension-order routing across a failed link), and when the tables
/// would take over half of memory_budget() (sim/core/memory_budget.hpp), with the estimate.
RoutingTable build_routes(const Scenario& scenario, const Fabric& fabric);

}  // namespace fabricsim
