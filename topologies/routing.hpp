// Routing tables: for every node, destination host and (for up-down) phase, the set of
// equal-cost egress ports a packet may take.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "topologies/fabric_graph.hpp"

namespace fabricsim {

enum class RoutingAlgorithm : uint8_t {
  /// All shortest paths over links that are up (hop count; one Boost.Graph BFS per
  /// destination). Hosts are never transit nodes unless Fabric::hosts_forward (rail-only PXN).
  kEcmp,
  /// Valley-free shortest paths on a Clos: tiers rise, then fall (up*/down*), never down then
  /// up again (Schroeder et al., "Autonet", 1991; the standard deadlock-free Clos routing).
  /// A packet's phase is known at each switch from the tier of the port it came in on.
  kUpDown,
  /// Dimension-order routing on a torus/mesh: correct dimension 0, then 1, then 2, each along
  /// the shorter way round the ring (ties go the positive way). One path per pair; it cannot
  /// avoid a failed link (build_routes says so).
  kDimensionOrder,
};
const char* to_string(RoutingAlgorithm a);

/// `routing.algorithm` resolved for a fabric: "auto" -> the fabric's default. Throws
/// std::invalid_argument for a name that does not fit the fabric (dimension_order off a torus).
RoutingAlgorithm resolve_routing(const std::string& name, const Fabric& fabric);

/// Precomputed next hops. A port is a node's incident edge in boost::out_edges order
/// (fabric_graph.hpp). Memory: 8 bytes per (destination, node, phase) plus 2 per next hop, plus
/// 4 per host pair: routing_table_bytes() estimates it before building.
class RoutingTable {
 public:
  /// Throws std::runtime_error naming the first pair that cannot be connected (a failed link
  /// cut the fabric, or dimension-order routing met a failed link).
  RoutingTable(const Fabric& fabric, RoutingAlgorithm algorithm = RoutingAlgorithm::kEcmp);

  /// Egress ports of `node` towards host `dst_host` (empty at the host itself). `descending`:
  /// the packet has already gone down a tier (up-down only; ignored otherwise).
  std::span<const uint16_t> next_ports(VertexId node, int dst_host, bool descending = false) const {
    const size_t i = (static_cast<size_t>(dst_host) * nodes_ + node) * phases_ +
                     (descending && phases_ > 1 ? 1 : 0);
    return {ports_.data() + begin_[i], ports_.data() + begin_[i + 1]};
  }
  /// Hops from host `src_host` to host `dst_host` on this routing.
  int host_distance(int src_host, int dst_host) const {
    return dist_[static_cast<size_t>(dst_host) * hosts_ + src_host];
  }
  RoutingAlgorithm algorithm() const { return algorithm_; }

 private:
  RoutingAlgorithm algorithm_;
  size_t nodes_ = 0, hosts_ = 0, phases_ = 1;
  std::vector<uint64_t> begin_;  // (dst, node, phase) -> first index into ports_, + end sentinel
  std::vector<uint16_t> ports_;
  std::vector<int32_t> dist_;  // (dst, src host) -> hops
};

/// The dimension-order next hop (RoutingAlgorithm::kDimensionOrder) of router or host `v` of a
/// torus towards host vertex `dst`, as a port index of `v`. Throws std::runtime_error when it
/// is a failed link.
uint16_t dimension_order_next_port(const Fabric& fabric, VertexId v, VertexId dst);

/// Estimated bytes of the RoutingTable for `fabric` (next hops counted as 2 per cell).
double routing_table_bytes(const Fabric& fabric, RoutingAlgorithm algorithm);
/// The same for `hosts` hosts among `nodes` vertices, before the fabric is built.
double routing_table_bytes(double hosts, double nodes, RoutingAlgorithm algorithm);

/// Walks the routes from `src_host` to `dst_host`, choosing among equal-cost ports with
/// `choose(node, n_choices)`, and returns the vertices visited (src host … dst host).
/// Throws std::runtime_error on a loop or a dead end (a routing bug: tests use this).
template <class Choose>
std::vector<VertexId> walk_route(const Fabric& fabric, const RoutingTable& routes, int src_host,
                                 int dst_host, Choose choose);

}  // namespace fabricsim

#include "topologies/routing_walk.hpp"
