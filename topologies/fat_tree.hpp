// Fat-tree (three-tier Clos of radix-k switches) builder.
#pragma once

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/family.hpp"

namespace fabricsim {

/// Builds the k-ary fat-tree of Al-Fares, Loukissas & Vahdat, "A Scalable, Commodity Data Center
/// Network Architecture", SIGCOMM 2008 (§3.2), generalised with oversubscription at the edge tier
/// (o_e = topology.oversubscription) and the aggregation tier (o_a =
/// topology.agg_oversubscription). Every switch has k ports. The ratios are port ratios (down ports
/// : up ports):
///   edge switch:  h_e = k·o_e / (1 + o_e) host ports,  u_e = k / (1 + o_e) uplinks
///   agg switch:   d_a = k·o_a / (1 + o_a) down ports,  u_a = k / (1 + o_a) uplinks
///   pod:          d_a edge switches and u_e agg switches; each edge has one link to each agg
///   core:         u_e·u_a switches, each with k ports, one link to every pod  =>  pods = k
///   agg a of every pod links to cores a·u_a … a·u_a + u_a − 1 (Al-Fares' core wiring)
///   hosts = k·d_a·h_e,  switches = k·d_a + k·u_e + u_e·u_a,
///   links = k·d_a·h_e (host) + k·d_a·u_e (edge-agg) + k·u_e·u_a (agg-core)
/// With o_e = o_a = 1 this is the classic fat-tree: k³/4 hosts, 5k²/4 switches, 3k³/4 links.
///
/// Host links run at link.host_rate, switch links at link.fabric_rate (link.host_rate when 0),
/// all with link.propagation_delay.
/// Vertex order: hosts, then edges, then aggs, then cores, each numbered globally pod by pod
/// ("host{i}", "edge{i}", "agg{i}", "core{i}"); host i sits under edge i / h_e, edge e is in pod
/// e / d_a, agg a in pod a / u_e. Roles kEdge/kAgg/kCore, tiers 1/2/3; NodeProps::su = pod of
/// hosts, edges and aggs (cores: -1). Hosts 0…H/2−1 are pods 0…k/2−1.
///
/// Fabric::oversubscription is end to end, in capacity terms: a pod's host capacity over the
/// narrower of its uplink tiers,
///   d_a·h_e·host_rate / min(d_a·u_e·fabric_rate, u_e·u_a·fabric_rate)
/// (= o_e·o_a when the rates are equal; `fabricsim topo` lists each tier's own ratio).
/// Bisection bandwidth, one direction, across the cut that splits the pods into two halves of
/// k/2 (k is even). Every core has one link to every pod, so the cores are never the bottleneck
/// and each pod sends at most the smallest of its three tier capacities:
///   B = (k/2) × min(d_a·h_e·host_rate, d_a·u_e·fabric_rate, u_e·u_a·fabric_rate)
/// (Al-Fares et al. §3.2 for the 1:1 case, k³/8 × rate; the per-tier minimum is the min cut of a
/// pod's layered, complete-bipartite stages, whose cost is bilinear and so minimal at a corner.)
///
/// Throws ConfigError for what cannot be built: topology.k when k is odd or < 2, or when the
/// fabric would exceed 1,000,000 hosts; topology.oversubscription or
/// topology.agg_oversubscription when k / (1 + o) is not a whole number in 1…k/2, listing the
/// ratios that can be built with this k as exact "down:up" port ratios (e.g. k = 8: 1:1, 5:3,
/// 3:1, 7:1).
Fabric build_fat_tree(const Scenario& scenario);

/// The topology-aware split over MPI ranks (FabricSplit), by pod: a pod's GPUs, edge and
/// aggregation switches are a unit; cores are spread.
FabricSplit split_fat_tree(const Fabric& fabric);

}  // namespace fabricsim
