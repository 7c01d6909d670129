// walk_route: the template part of routing.hpp.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace fabricsim {

template <class Choose>
std::vector<VertexId> walk_route(const Fabric& fabric, const RoutingTable& routes, int src_host,
                                 int dst_host, Choose choose) {
  const FabricGraph& g = fabric.graph;
  std::vector<VertexId> path{fabric.hosts[src_host]};
  bool descending = false;
  const size_t limit = boost::num_vertices(g) + 1;
  while (path.back() != fabric.hosts[dst_host]) {
    const VertexId v = path.back();
    const auto ports = routes.next_ports(v, dst_host, descending);
    if (ports.empty() || path.size() > limit) {
      throw std::runtime_error("walk_route: no route from " + g[v].name + " to host" +
                               std::to_string(dst_host));
    }
    const uint16_t port = ports[choose(v, ports.size())];
    const auto e = *std::next(boost::out_edges(v, g).first, port);
    const VertexId next = boost::target(e, g);
    descending = g[next].tier < g[v].tier;  // as the switch sees it: came in from above
    path.push_back(next);
  }
  return path;
}

}  // namespace fabricsim
