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
/// (fabric_graph.hpp). Each node keeps the distinct lists of next hops it uses (its port sets:
/// one per down port, the uplinks, a few more), the distinct pairs of them a destination gets in
/// the two up-down phases (its kinds of cells), and per destination the number of its kind:
/// 1 byte per (destination, node) for a node with at most 256 kinds, else 2. Plus 2 bytes per
/// host pair (the distances). routing_table_bytes() estimates the peak of building it.
class RoutingTable {
 public:
  /// Throws std::runtime_error naming the first pair that cannot be connected (a failed link
  /// cut the fabric, or dimension-order routing met a failed link).
  RoutingTable(const Fabric& fabric, RoutingAlgorithm algorithm = RoutingAlgorithm::kEcmp);

  /// Egress ports of `node` towards host `dst_host` (empty at the host itself). `descending`:
  /// the packet has already gone down a tier (up-down only; ignored otherwise).
  std::span<const uint16_t> next_ports(VertexId node, int dst_host, bool descending = false) const {
    const NodeRoutes& n = node_[node];
    const size_t cell = n.cells + static_cast<size_t>(dst_host);
    const size_t kind = n.wide ? wide_[cell] : narrow_[cell];
    const PortSet set =
        sets_[kind_sets_[n.kinds + kind * phases_ + (descending ? phases_ - 1 : 0)]];
    return {ports_.data() + set.begin, set.size};
  }
  /// Hops from host `src_host` to host `dst_host` on this routing.
  int host_distance(int src_host, int dst_host) const {
    return dist_[static_cast<size_t>(dst_host) * hosts_ + src_host];
  }
  RoutingAlgorithm algorithm() const { return algorithm_; }
  /// Bytes the table holds: cells, port sets and distances (routing_table_bytes() estimates
  /// the peak of building it, a little more).
  size_t memory_bytes() const;

 private:
  /// A list of next hops: ports_[begin, begin + size).
  struct PortSet {
    uint32_t begin;
    uint32_t size;
  };
  /// Where node v's routes are: its kinds of cells (the port sets a destination gets in each
  /// phase) from kind_sets_[kinds], phases_ entries each, and one cell per destination, the
  /// number of its kind, from narrow_[cells] (1 byte) or wide_[cells] (2 bytes).
  struct NodeRoutes {
    uint64_t cells = 0;
    uint32_t kinds = 0;
    bool wide = false;
  };

  RoutingAlgorithm algorithm_;
  size_t nodes_ = 0, hosts_ = 0, phases_ = 1;
  std::vector<NodeRoutes> node_;
  std::vector<PortSet> sets_;
  std::vector<uint32_t> kind_sets_;  // per node's kind and phase: its set in sets_
  std::vector<uint16_t> ports_;
  std::vector<uint8_t> narrow_;
  std::vector<uint16_t> wide_;
  std::vector<uint16_t> dist_;  // (dst, src host) -> hops
};

/// The dimension-order next hop (RoutingAlgorithm::kDimensionOrder) of router or host `v` of a
/// torus towards host vertex `dst`, as a port index of `v`. Throws std::runtime_error when it
/// is a failed link.
uint16_t dimension_order_next_port(const Fabric& fabric, VertexId v, VertexId dst);

/// Estimated peak bytes of building the RoutingTable for `fabric` (3 per destination and node,
/// 2 per host pair).
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
