// Spine-Leaf (two-tier Clos) builder.
#pragma once

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/family.hpp"

namespace fabricsim {

/// Builds `leaves` leaf switches with `hosts_per_leaf` hosts each (links at link.host_rate) and
/// `spines` spine switches. Uplinks per leaf are derived from the oversubscription o:
///   uplinks = hosts_per_leaf × host_rate / (o × fabric_rate),
/// spread evenly over the spines (uplinks / spines parallel links to each spine).
/// Vertex order: hosts 0…H-1 (host h under leaf h / hosts_per_leaf), then leaves, then spines.
/// Bisection bandwidth (one direction, hosts split in two halves by number): with an even
/// number of leaves, (leaves/2) × min(host capacity, uplink capacity) per leaf; with an odd
/// number one leaf is split between the halves and the value is the max-flow across that cut
/// (host_halves_max_flow_bps in metrics.hpp).
/// Throws ConfigError (key topology.oversubscription, or topology.spines) when the ratio cannot
/// be built with whole links spread evenly over the spines, naming the nearest ratios that can.
Fabric build_spine_leaf(const Scenario& scenario);

/// The topology-aware split over MPI ranks (FabricSplit), by leaf: each leaf with its hosts is a
/// unit; spines are spread.
FabricSplit split_spine_leaf(const Fabric& fabric);

}  // namespace fabricsim
