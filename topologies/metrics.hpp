// Fabric metrics: what `fabricsim topo` reports about a built fabric besides the builder's own
// figures. Counts by role and link class, bisection bandwidth (the builder's closed form, checked
// by a max-flow), oversubscription per tier, diameter, path diversity and the cost proxy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/cost_model.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

/// Vertices of one role: {"leaf", 4}. `role` is to_string(Role).
struct TierCount {
  std::string role;
  int count = 0;
};

/// Links between two roles. `ends` is "gpu-leaf", "leaf-spine", "router-router": the two roles
/// joined by '-', the lower tier first (Role enum order breaks a tie). Every NVLink edge is in
/// the one class "nvlink", whatever its ends.
struct LinkClass {
  std::string ends;
  int count = 0;
  /// The class's per-link rate, one direction, bits/s: the highest rate among its links (a
  /// degraded link runs below it; a class never mixes nominal rates in the families built here).
  int64_t rate_bps = 0;
  int failed = 0;  ///< links of the class that are down (they are still counted in `count`)
};

struct FabricMetrics {
  std::vector<TierCount> nodes_by_role;   ///< in Role enum order; roles with count > 0 only
  std::vector<LinkClass> links_by_class;  ///< sorted by `ends`
  /// One direction, bits/s: the builder's closed form (Fabric::bisection_bandwidth_bps).
  int64_t bisection_bandwidth_bps = 0;
  /// One direction, bits/s: host_halves_max_flow_bps on the fabric as it is (failed links
  /// removed, degraded links at their rate); -1 when skipped because the graph has more than
  /// `maxflow_node_limit` vertices.
  int64_t bisection_maxflow_bps = -1;
  /// {"leaf", 3.0}: per switch role, down-link capacity / up-link capacity of a switch, averaged
  /// over the switches of that role that have both. "Down" and "up" are links to a lower and a
  /// higher tier; NVLinks and same-tier links are neither. Links are counted as built (failed
  /// links too, at their current rate), like Fabric::oversubscription. In Role enum order; roles
  /// with no such switch (spines, cores, torus routers, NVSwitches) are left out.
  std::vector<std::pair<std::string, double>> oversubscription_by_tier;
  /// Hops between the farthest pair of hosts on these routes: max of
  /// RoutingTable::host_distance over all host pairs (4 on a spine-leaf: host-leaf-spine-leaf-
  /// host). 0 with fewer than two hosts.
  int diameter_hops = 0;
  /// Distinct routed paths from host 0 to the host farthest from it (the highest-numbered one
  /// when several are equally far): the number of different port sequences walk_route can take.
  /// Parallel links are different paths. Saturates at INT32_MAX. 0 with fewer than two hosts.
  int path_diversity = 0;
  std::string path_diversity_pair;  ///< "host0-host15"; empty with fewer than two hosts
};

/// Everything above. The max-flow costs roughly O(V²·√E) for V vertices and E links; it is
/// skipped (bisection_maxflow_bps = -1) when the fabric has more than `maxflow_node_limit`
/// vertices. Throws std::runtime_error when the routes loop (a routing bug).
FabricMetrics compute_metrics(const Fabric& fabric, const RoutingTable& routes,
                              size_t maxflow_node_limit = 5000);

/// Max flow in bits/s, one direction, from hosts [0, H/2) to hosts [H/2, H).
///
/// The flow network: a super-source with an arc to each first-half host, and an arc from each
/// second-half host to a super-sink, each of capacity = that host's total network link rate
/// (non-NVLink links that are up); every link that is up as two opposite arcs of capacity
/// rate_bps (an undirected link carries rate_bps each way). NVLinks count like any link, so
/// flow may cross an NVLink domain. Computed with Boost.Graph push_relabel_max_flow on integer
/// capacities.
///
/// This is the throughput across the cut between the two host halves, bounded by the hosts' own
/// links: min over all cuts that separate the halves. It equals the bisection bandwidth when the
/// split by host number is a worst balanced cut, which holds for the symmetric families built
/// here (hosts are numbered leaf by leaf, pod by pod, server by server, along torus dimension
/// order), so it checks the builders' closed forms. For another numbering it is an upper bound
/// on the bisection. 0 with fewer than two hosts.
int64_t host_halves_max_flow_bps(const Fabric& fabric);

/// The fabric's parts at `model`'s prices. Counted over network links only (NVLinks and
/// NVSwitches excluded), failed links included (they were bought):
///   switch ports  = network link ends on a switch         × switch_port_usd
///   NICs          = network link ends on a host           × nic_usd
///   host links    = network links with a host end         × host_link_usd
///   fabric links  = network links between two switches    × fabric_link_usd
/// (NICs and host links are equal for every family built here: no cable joins two hosts.)
CostBreakdown fabric_cost(const Fabric& fabric, const CostModel& model);

}  // namespace fabricsim
