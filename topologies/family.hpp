// The fabric families: what `topology.kind: NAME` builds, and what the rest of the simulator
// asks of a family (its routing style, which decides the deadlock fixes a report proposes, and
// its split over the ranks of an MPI run). The built-in families are one line each in registry.cpp;
// a family defined elsewhere (a test, a plug-in) calls register_fabric_family() before loading a
// scenario that names it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// A family's topology-aware split of a fabric over `parts` ranks (sim/parallel/partition.cpp):
/// it cuts `count` units (pods, leaves, servers, torus layers), contiguously.
struct FabricSplit {
  int count = 0;       ///< units to split by; 0: the family has none (METIS only)
  std::string units;   ///< their plural name for messages: "leaves", "pods", "servers"
  std::string scheme;  ///< the split in words, for `topo --partitions` and the MPI run's line
  /// Per vertex: {index, of}: the vertex goes to part floor(index · parts / of); of = 0: placed
  /// afterwards, beside its neighbours (spines and cores spread, hosts with their first switch).
  std::vector<std::pair<int, int>> unit_of;
};

/// One fabric family.
struct FabricFamily {
  std::string kind;  ///< the `topology.kind` value, e.g. "spine-leaf"
  /// Builds the graph from the scenario's `topology` and `link` keys; throws ConfigError (exit
  /// code 2) naming the key when the scenario cannot be built.
  Fabric (*build)(const Scenario&) = nullptr;
  /// true: a direct network of routers, each with its hosts, routed dimension by dimension (a
  /// torus or mesh): `dimension_order` routing and `routing.dateline_class` apply, `up_down`
  /// and `routing.bounce_class` do not. false: a tiered Clos (up_down, ecmp, bounce class).
  bool dimension_ordered = false;
  /// The family's topology-aware split over MPI ranks; nullptr: none (METIS only).
  FabricSplit (*split)(const Fabric&) = nullptr;
};

/// Adds `family` to the table, after the built-in ones, and its kind to the loader's valid
/// `topology.kind` values (register_choice). Throws std::invalid_argument when the kind
/// is empty or already registered, or `build` is null.
void register_fabric_family(FabricFamily family);

/// The family `kind` names; nullptr when no family has that kind.
const FabricFamily* find_fabric_family(const std::string& kind);

/// The family that built `fabric` (Fabric::kind); throws std::logic_error when none did.
const FabricFamily& family_of(const Fabric& fabric);

/// The kinds in table order: the built-in ones, then the registered ones.
std::vector<std::string> fabric_kinds();

}  // namespace fabricsim
