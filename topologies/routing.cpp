#include "topologies/routing.hpp"
#include "topologies/family.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>

namespace fabricsim {
namespace {

constexpr int32_t kFar = std::numeric_limits<int32_t>::max();

/// The directed graph searched for ECMP and up-down routes. Each arc leaves a node by one of
/// its ports. Vertices are routing states: (node, phase) for up-down, and for hosts that may not
/// forward, separate departure and arrival states, so no route can pass through a host.
struct Arc {
  uint16_t port = 0;
};
using SearchGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, Arc>;

/// Hop distance from every state to `target`: one BFS on the reversed graph.
void distances_to(const SearchGraph& sg, size_t target, std::vector<int32_t>& dist) {
  dist.assign(boost::num_vertices(sg), kFar);
  dist[target] = 0;
  const boost::reverse_graph<SearchGraph> rev(sg);
  auto dist_map =
      boost::make_iterator_property_map(dist.data(), boost::get(boost::vertex_index, rev));
  boost::breadth_first_search(rev, target,
                              boost::visitor(boost::make_bfs_visitor(
                                  boost::record_distances(dist_map, boost::on_tree_edge()))));
}

/// Routing states of the search graph.
struct States {
  size_t nodes, phases;
  bool split_hosts;
  std::vector<int32_t> host_of;  // node -> host id or -1
  /// State where a packet at `v` in `phase` is (departure state for hosts).
  size_t at(VertexId v, size_t phase) const { return v * phases + phase; }
  /// State in which a packet arrives at host node `v`.
  size_t arrival(VertexId v, size_t phase) const {
    return split_hosts ? nodes * phases + static_cast<size_t>(host_of[v]) : at(v, phase);
  }
  size_t count(size_t hosts) const { return nodes * phases + (split_hosts ? hosts : 0); }
};

SearchGraph search_graph(const Fabric& fabric, const States& st, bool up_down) {
  const FabricGraph& g = fabric.graph;
  SearchGraph sg(st.count(fabric.hosts.size()));
  for (VertexId v = 0; v < st.nodes; ++v) {
    uint16_t port = 0;
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e, ++port) {
      if (g[*e].failed) continue;
      const VertexId u = boost::target(*e, g);
      auto to = [&](size_t phase) {
        return g[u].kind == NodeKind::kHost ? st.arrival(u, phase) : st.at(u, phase);
      };
      if (!up_down) {
        boost::add_edge(st.at(v, 0), to(0), Arc{port}, sg);
      } else if (g[u].tier > g[v].tier) {
        boost::add_edge(st.at(v, 0), to(0), Arc{port}, sg);  // up, still ascending
      } else if (g[u].tier < g[v].tier) {
        boost::add_edge(st.at(v, 0), to(1), Arc{port}, sg);  // turning down
        boost::add_edge(st.at(v, 1), to(1), Arc{port}, sg);  // going on down
      }  // same-tier links are not used by up-down routing
    }
  }
  return sg;
}

/// Between two GPUs of one server NCCL uses NVLink (P2P), never the network, even where a
/// leaf (a "ToR" design: the whole server under one leaf) is as few hops away: of the ports
/// `ports[first…]` of host `v`, keeps the NVLinks when there is one.
void keep_nvlink_ports(const FabricGraph& g, VertexId v, std::vector<uint16_t>& ports,
                       size_t first) {
  std::vector<bool> nvlink;
  for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) nvlink.push_back(g[*e].nvlink);
  const auto is_nvlink = [&](uint16_t p) { return nvlink[p]; };
  if (std::none_of(ports.begin() + first, ports.end(), is_nvlink)) return;
  ports.erase(
      std::remove_if(ports.begin() + first, ports.end(), [&](uint16_t p) { return !nvlink[p]; }),
      ports.end());
}

/// The dimension-order next hop of router or host `v` towards host `dst`, as a port of `v`.
uint16_t dimension_order_port(const Fabric& fabric, VertexId v, VertexId dst) {
  const FabricGraph& g = fabric.graph;
  const auto target = g[dst].coord;
  auto port_to = [&](auto accept) -> uint16_t {
    uint16_t port = 0;
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e, ++port) {
      if (!accept(*e)) continue;
      if (g[*e].failed) {
        throw std::runtime_error("dimension-order routing from " + g[v].name + " to " +
                                 g[dst].name + " must use the failed link " + g[v].name + "-" +
                                 g[boost::target(*e, g)].name +
                                 "; it has no alternative (use routing.algorithm: ecmp)");
      }
      return port;
    }
    throw std::runtime_error("dimension-order routing: no link from " + g[v].name);
  };
  if (g[v].kind == NodeKind::kHost) return port_to([](auto) { return true; });  // its router
  auto c = g[v].coord;
  for (size_t k = 0; k < fabric.dims.size(); ++k) {
    if (c[k] == target[k]) continue;
    const int size = fabric.dims[k];
    const int forward = ((target[k] - c[k]) % size + size) % size;
    const int step =
        fabric.wraparound ? (forward <= size - forward ? 1 : -1) : (target[k] > c[k] ? 1 : -1);
    c[k] = static_cast<int16_t>((c[k] + step + size) % size);
    return port_to([&](auto e) {
      const VertexId u = boost::target(e, g);
      return g[e].dim == static_cast<int>(k) && g[u].role == Role::kRouter && g[u].coord == c;
    });
  }
  return port_to([&](auto e) { return boost::target(e, g) == dst; });  // the attached host
}

}  // namespace

const char* to_string(RoutingAlgorithm a) {
  switch (a) {
    case RoutingAlgorithm::kEcmp:
      return "ecmp";
    case RoutingAlgorithm::kUpDown:
      return "up_down";
    case RoutingAlgorithm::kDimensionOrder:
      return "dimension_order";
  }
  return "?";
}

RoutingAlgorithm resolve_routing(const std::string& name, const Fabric& fabric) {
  const std::string n = name == "auto" ? fabric.default_routing : name;
  if (n == "ecmp") return RoutingAlgorithm::kEcmp;
  if (n == "up_down") {
    if (family_of(fabric).dimension_ordered) {
      throw std::invalid_argument("up_down routing needs a tiered Clos fabric, not a " +
                                  fabric.kind);
    }
    return RoutingAlgorithm::kUpDown;
  }
  if (n == "dimension_order") {
    if (!family_of(fabric).dimension_ordered) {
      throw std::invalid_argument("dimension_order routing needs a torus, not a " + fabric.kind);
    }
    return RoutingAlgorithm::kDimensionOrder;
  }
  throw std::invalid_argument("unknown routing algorithm '" + n + "'");
}

RoutingTable::RoutingTable(const Fabric& fabric, RoutingAlgorithm algorithm)
    : algorithm_(algorithm) {
  const FabricGraph& g = fabric.graph;
  nodes_ = boost::num_vertices(g);
  hosts_ = fabric.hosts.size();
  phases_ = algorithm == RoutingAlgorithm::kUpDown ? 2 : 1;
  dist_.assign(hosts_ * hosts_, kFar);

  // Laid out destination by destination, node by node, phase by phase: each (dst, node, phase)
  // cell is appended as it is computed, with begin_ marking where it starts.
  begin_.reserve(hosts_ * nodes_ * phases_ + 1);
  auto open_cell = [&] { begin_.push_back(ports_.size()); };

  if (algorithm == RoutingAlgorithm::kDimensionOrder) {
    for (size_t d = 0; d < hosts_; ++d) {
      const size_t first = begin_.size();
      for (VertexId v = 0; v < nodes_; ++v) {
        open_cell();
        if (v != fabric.hosts[d]) {
          ports_.push_back(dimension_order_port(fabric, v, fabric.hosts[d]));
        }
      }
      for (size_t s = 0; s < hosts_; ++s) {  // distances: walk the single path
        int hops = 0;
        for (VertexId v = fabric.hosts[s]; v != fabric.hosts[d]; ++hops) {
          const uint16_t port = ports_[begin_[first + v]];
          v = boost::target(*std::next(boost::out_edges(v, g).first, port), g);
        }
        dist_[d * hosts_ + s] = hops;
      }
    }
  } else {
    States st{nodes_, phases_, !fabric.hosts_forward, std::vector<int32_t>(nodes_, -1)};
    for (size_t h = 0; h < hosts_; ++h) st.host_of[fabric.hosts[h]] = static_cast<int32_t>(h);
    const SearchGraph sg = search_graph(fabric, st, algorithm == RoutingAlgorithm::kUpDown);
    std::vector<int32_t> dist;
    for (size_t d = 0; d < hosts_; ++d) {
      const VertexId dst = fabric.hosts[d];
      distances_to(sg, st.arrival(dst, phases_ - 1), dist);
      for (VertexId v = 0; v < nodes_; ++v) {
        for (size_t phase = 0; phase < phases_; ++phase) {
          open_cell();
          const size_t s = st.at(v, phase);
          if (v == dst || dist[s] == kFar) continue;
          const size_t cell = ports_.size();
          for (auto [a, end] = boost::out_edges(s, sg); a != end; ++a) {
            if (dist[boost::target(*a, sg)] == dist[s] - 1) ports_.push_back(sg[*a].port);
          }
          if (g[v].kind == NodeKind::kHost && g[v].server >= 0 && g[v].server == g[dst].server) {
            keep_nvlink_ports(g, v, ports_, cell);
          }
        }
      }
      for (size_t s = 0; s < hosts_; ++s) {
        if (s == d) {
          dist_[d * hosts_ + s] = 0;
          continue;
        }
        const int32_t hops = dist[st.at(fabric.hosts[s], 0)];
        if (hops == kFar) {
          throw std::runtime_error(
              "no " + std::string(to_string(algorithm)) + " route from " + g[fabric.hosts[s]].name +
              " to " + g[dst].name +
              (algorithm == RoutingAlgorithm::kUpDown
                   ? " (up-down routes climb, then descend, and never pass through a GPU; "
                     "routing.algorithm: ecmp may still find one)"
                   : " (the links that are up do not connect them)"));
        }
        dist_[d * hosts_ + s] = hops;
      }
    }
  }

  begin_.push_back(ports_.size());  // end sentinel
  ports_.shrink_to_fit();
}

uint16_t dimension_order_next_port(const Fabric& fabric, VertexId v, VertexId dst) {
  return dimension_order_port(fabric, v, dst);
}

double routing_table_bytes(const Fabric& fabric, RoutingAlgorithm algorithm) {
  return routing_table_bytes(static_cast<double>(fabric.hosts.size()),
                             static_cast<double>(boost::num_vertices(fabric.graph)), algorithm);
}

double routing_table_bytes(double hosts, double nodes, RoutingAlgorithm algorithm) {
  const double phases = algorithm == RoutingAlgorithm::kUpDown ? 2 : 1;
  return hosts * nodes * phases * (8 + 2 * 2) + hosts * hosts * 4;
}

}  // namespace fabricsim
