// Routing tables: for every node and destination host, the set of equal-cost egress ports.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// Equal-cost shortest-path next hops (ECMP sets), computed with one Boost.Graph breadth-first
/// search per destination host (hop count metric). A port is a node's incident edge, numbered in
/// boost::out_edges order (see fabric_graph.hpp). Memory: one uint16 per (node, destination,
/// next hop).
class RoutingTable {
 public:
  explicit RoutingTable(const Fabric& fabric);

  /// Egress ports of `node` on a shortest path to host `dst_host` (empty at the host itself).
  std::span<const uint16_t> next_ports(VertexId node, int dst_host) const {
    const size_t i = static_cast<size_t>(node) * (hosts_ + 1) + dst_host;
    return {ports_.data() + begin_[i], ports_.data() + begin_[i + 1]};
  }
  /// Hop count (links) from `node` to host `dst_host`.
  int distance(VertexId node, int dst_host) const {
    return dist_[static_cast<size_t>(dst_host) * nodes_ + node];
  }

 private:
  size_t nodes_ = 0, hosts_ = 0;
  std::vector<uint32_t> begin_;  // (node, dst) -> first index into ports_; row width hosts_+1
  std::vector<uint16_t> ports_;
  std::vector<int32_t> dist_;  // (dst, node) -> hops
};

}  // namespace fabricsim
