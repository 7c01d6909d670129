// Torus / mesh (k-ary n-cube, n = 2 or 3) builder.
#pragma once

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/family.hpp"

namespace fabricsim {

/// Builds a k-ary n-cube with n = topology.dims.size() (2 or 3) and k_d = dims[d] routers along
/// dimension d: N = Π k_d routers (NodeKind::kSwitch, Role::kRouter, tier 1, named "r{x}_{y}"
/// or "r{x}_{y}_{z}") and one host per router ("host{i}", tier 0, the router's coordinates),
/// attached at link.host_rate. NodeProps::coord holds (x, y, z); z = -1 in 2-D.
///
/// Router-router links run along one dimension (EdgeProps::dim = d; host links keep dim = -1) at
/// topology.dim_rates[d], or link.fabric_rate (link.host_rate when 0) when dim_rates is empty;
/// all links have link.propagation_delay.
///   wraparound = true  (torus): a ring per line along d: k_d links per line, N links per
///                      dimension. A dimension of size 2 has ONE link per line, not two: the
///                      wraparound link would join the same two routers as the direct one, so it
///                      is not added (N/2 links for that dimension).
///   wraparound = false (mesh):  a line per line along d: k_d − 1 links per line,
///                      (k_d − 1)·N/k_d links per dimension.
///   links = N (host links) + the sum over dimensions.
///
/// Numbering: node i has coordinates x = i mod k_0, y = (i / k_0) mod k_1, z = i / (k_0·k_1):
/// x fastest, the last dimension slowest. Vertices are hosts 0…N−1, then routers 0…N−1 (router
/// i is vertex N + i). Hence hosts 0…N/2−1 are the half with coordinate[n−1] < k_{n−1}/2 when
/// k_{n−1} is even: a cut perpendicular to the last dimension. With equal rates that is the
/// bisection cut when the last dimension is the largest, so list the largest dimension last
/// (e.g. [4, 4, 8]) to make the first half of the ranks one side of the bisection.
///
/// Bisection bandwidth, one direction (Dally & Towles, "Principles and Practices of
/// Interconnection Networks", 2004, §3.3–3.4: a cut perpendicular to dimension d of a k-ary
/// n-cube crosses 2·N/k_d channels in a torus, N/k_d in a mesh):
///   cut_d = c_d · (N / k_d) · rate_d,  c_d = 2 for a torus dimension with k_d > 2, else 1
///   B     = min( min over d with k_d even of cut_d ,  floor(N/2) · host_rate )
/// The second term caps it by the hosts' injection on the smaller side. With any odd k_d a
/// balanced cut cannot follow a plane and there is no closed form: the value is then the
/// max-flow across the cut between the host-number halves (host_halves_max_flow_bps), exact for
/// that cut and an upper bound on the bisection.
/// Fabric::oversubscription is 1 (no tier of uplinks); Fabric::switches = N routers.
///
/// Throws ConfigError: topology.dims when n is not 2 or 3, a dimension is < 2 or > 32767
/// (coordinates are 16-bit), or N exceeds 1,000,000; topology.dim_rates when it is not empty and
/// does not give exactly one positive rate per dimension.
Fabric build_torus(const Scenario& scenario);

/// The topology-aware split over MPI ranks (FabricSplit), slabs along the largest dimension (the
/// last of equal ones): a router and its host go with their coordinate along it; none when the
/// fabric has no dims.
FabricSplit split_torus(const Fabric& fabric);

}  // namespace fabricsim
