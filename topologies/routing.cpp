#include "topologies/routing.hpp"

#include <limits>
#include <stdexcept>

#include <boost/graph/breadth_first_search.hpp>

namespace fabricsim {

RoutingTable::RoutingTable(const Fabric& fabric) {
  const FabricGraph& g = fabric.graph;
  nodes_ = boost::num_vertices(g);
  hosts_ = fabric.hosts.size();
  dist_.assign(hosts_ * nodes_, std::numeric_limits<int32_t>::max());

  // Hop distances to every destination host: one BFS each (Boost.Graph, not hand-written).
  for (size_t d = 0; d < hosts_; ++d) {
    int32_t* dist = dist_.data() + d * nodes_;
    const VertexId src = fabric.hosts[d];
    dist[src] = 0;
    auto dist_map = boost::make_iterator_property_map(dist, boost::get(boost::vertex_index, g));
    boost::breadth_first_search(g, src,
                                boost::visitor(boost::make_bfs_visitor(
                                    boost::record_distances(dist_map, boost::on_tree_edge()))));
  }

  // Next hops: the incident edges whose far end is one hop closer to the destination.
  begin_.reserve(nodes_ * (hosts_ + 1));
  for (VertexId v = 0; v < nodes_; ++v) {
    for (size_t d = 0; d <= hosts_; ++d) {
      begin_.push_back(static_cast<uint32_t>(ports_.size()));
      if (d == hosts_) break;
      const int32_t here = dist_[d * nodes_ + v];
      if (here == std::numeric_limits<int32_t>::max()) {
        throw std::runtime_error("fabric is disconnected: " + g[v].name + " cannot reach host" +
                                 std::to_string(d));
      }
      if (here == 0) continue;
      uint16_t port = 0;
      for (auto [e, eend] = boost::out_edges(v, g); e != eend; ++e, ++port) {
        if (dist_[d * nodes_ + boost::target(*e, g)] == here - 1) ports_.push_back(port);
      }
    }
  }
}

}  // namespace fabricsim
