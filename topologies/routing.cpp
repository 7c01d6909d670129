#include "topologies/routing.hpp"
#include "topologies/family.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

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

namespace {

/// One node's distinct port sets while the table is built, numbered in the order first seen
/// (set 0 is the empty one: the node is the destination, or cannot reach it), and its kinds of
/// cells: the distinct pairs of sets a destination gets in the two up-down phases.
class SetInterner {
 public:
  SetInterner() { sets_.emplace_back(); }
  /// The number of `ports` (in this order) among the node's sets, added if new. Throws
  /// std::runtime_error past 65,536 sets.
  uint16_t intern(const std::vector<uint16_t>& ports) {
    if (ports.empty()) return 0;
    if (ports.size() == 1) {  // most cells: one down port
      if (ports[0] >= single_.size()) single_.resize(size_t{ports[0]} + 1, -1);
      int32_t& id = single_[ports[0]];
      if (id < 0) id = add(ports);
      return static_cast<uint16_t>(id);
    }
    auto [it, added] = multi_.try_emplace(ports, 0);
    if (added) it->second = add(ports);
    return it->second;
  }
  /// The number of the (phase 0, phase 1) pair of set numbers among the node's cell kinds,
  /// added if new (ECMP and dimension order: phase 1 is 0 and a kind is its set's pair).
  uint16_t cell_kind(uint16_t set0, uint16_t set1) {
    const uint32_t key = uint32_t{set0} | uint32_t{set1} << 16;
    auto [it, added] = kinds_.try_emplace(key, static_cast<uint16_t>(pairs_.size()));
    if (added) {
      if (pairs_.size() > std::numeric_limits<uint16_t>::max()) {
        throw std::runtime_error("RoutingTable: a node with more than 65536 kinds of cells");
      }
      pairs_.push_back(key);
    }
    return it->second;
  }
  std::vector<std::vector<uint16_t>>& sets() { return sets_; }
  /// Each kind's set numbers, phase 0 in the low 16 bits.
  const std::vector<uint32_t>& kinds() const { return pairs_; }

 private:
  uint16_t add(const std::vector<uint16_t>& ports) {
    if (sets_.size() > std::numeric_limits<uint16_t>::max()) {
      throw std::runtime_error("RoutingTable: a node with more than 65536 distinct next-hop sets");
    }
    sets_.push_back(ports);
    return static_cast<uint16_t>(sets_.size() - 1);
  }
  std::vector<std::vector<uint16_t>> sets_;
  std::vector<int32_t> single_;  // port -> the set {port}, -1 = none yet
  std::map<std::vector<uint16_t>, uint16_t> multi_;
  std::unordered_map<uint32_t, uint16_t> kinds_;
  std::vector<uint32_t> pairs_;
};

uint16_t hops_of(int32_t hops) {
  if (hops > std::numeric_limits<uint16_t>::max()) {
    throw std::runtime_error("RoutingTable: a route of more than 65535 hops");
  }
  return static_cast<uint16_t>(hops);
}

}  // namespace

RoutingTable::RoutingTable(const Fabric& fabric, RoutingAlgorithm algorithm)
    : algorithm_(algorithm) {
  const FabricGraph& g = fabric.graph;
  nodes_ = boost::num_vertices(g);
  hosts_ = fabric.hosts.size();
  phases_ = algorithm == RoutingAlgorithm::kUpDown ? 2 : 1;
  dist_.assign(hosts_ * hosts_, 0);

  // Computed destination by destination; a node's cell for a destination holds the number of
  // its kind (the pair of port sets of the two phases) among the node's.
  std::vector<SetInterner> interned(nodes_);
  std::vector<std::vector<uint16_t>> cells(nodes_, std::vector<uint16_t>(hosts_, 0));
  for (SetInterner& n : interned) n.cell_kind(0, 0);  // kind 0: no route in either phase
  std::vector<uint16_t> hop;                          // one cell's next hops

  if (algorithm == RoutingAlgorithm::kDimensionOrder) {
    std::vector<uint16_t> next(nodes_);
    for (size_t d = 0; d < hosts_; ++d) {
      for (VertexId v = 0; v < nodes_; ++v) {
        if (v == fabric.hosts[d]) continue;
        next[v] = dimension_order_port(fabric, v, fabric.hosts[d]);
        hop.assign(1, next[v]);
        cells[v][d] = interned[v].cell_kind(interned[v].intern(hop), 0);
      }
      for (size_t s = 0; s < hosts_; ++s) {  // distances: walk the single path
        int hops = 0;
        for (VertexId v = fabric.hosts[s]; v != fabric.hosts[d]; ++hops) {
          v = boost::target(*std::next(boost::out_edges(v, g).first, next[v]), g);
        }
        dist_[d * hosts_ + s] = hops_of(hops);
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
        uint16_t set[2] = {0, 0};
        for (size_t phase = 0; phase < phases_; ++phase) {
          const size_t s = st.at(v, phase);
          if (v == dst || dist[s] == kFar) continue;
          hop.clear();
          for (auto [a, end] = boost::out_edges(s, sg); a != end; ++a) {
            if (dist[boost::target(*a, sg)] == dist[s] - 1) hop.push_back(sg[*a].port);
          }
          if (g[v].kind == NodeKind::kHost && g[v].server >= 0 && g[v].server == g[dst].server) {
            keep_nvlink_ports(g, v, hop, 0);
          }
          set[phase] = interned[v].intern(hop);
        }
        cells[v][d] = interned[v].cell_kind(set[0], set[1]);
      }
      for (size_t s = 0; s < hosts_; ++s) {
        if (s == d) continue;
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
        dist_[d * hosts_ + s] = hops_of(hops);
      }
    }
  }
  // Packed node by node, each node's build state freed as it goes.
  node_.resize(nodes_);
  size_t narrow_cells = 0;
  for (const SetInterner& n : interned) narrow_cells += n.kinds().size() <= 256 ? hosts_ : 0;
  narrow_.reserve(narrow_cells);
  wide_.reserve(nodes_ * hosts_ - narrow_cells);
  for (VertexId v = 0; v < nodes_; ++v) {
    NodeRoutes& n = node_[v];
    const auto first_set = static_cast<uint32_t>(sets_.size());
    for (const std::vector<uint16_t>& set : interned[v].sets()) {
      sets_.push_back(
          PortSet{static_cast<uint32_t>(ports_.size()), static_cast<uint32_t>(set.size())});
      ports_.insert(ports_.end(), set.begin(), set.end());
    }
    n.kinds = static_cast<uint32_t>(kind_sets_.size());
    for (const uint32_t pair : interned[v].kinds()) {
      kind_sets_.push_back(first_set + (pair & 0xFFFF));
      if (phases_ > 1) kind_sets_.push_back(first_set + (pair >> 16));
    }
    n.wide = interned[v].kinds().size() > 256;
    n.cells = n.wide ? wide_.size() : narrow_.size();
    for (const uint16_t kind : cells[v]) {
      if (n.wide) {
        wide_.push_back(kind);
      } else {
        narrow_.push_back(static_cast<uint8_t>(kind));
      }
    }
    interned[v] = SetInterner{};
    std::vector<uint16_t>().swap(cells[v]);
  }
  ports_.shrink_to_fit();
  sets_.shrink_to_fit();
  kind_sets_.shrink_to_fit();
}

size_t RoutingTable::memory_bytes() const {
  return node_.size() * sizeof(NodeRoutes) + sets_.size() * sizeof(PortSet) +
         kind_sets_.size() * sizeof(uint32_t) + ports_.size() * sizeof(uint16_t) + narrow_.size() +
         wide_.size() * sizeof(uint16_t) + dist_.size() * sizeof(uint16_t);
}

uint16_t dimension_order_next_port(const Fabric& fabric, VertexId v, VertexId dst) {
  return dimension_order_port(fabric, v, dst);
}

double routing_table_bytes(const Fabric& fabric, RoutingAlgorithm algorithm) {
  return routing_table_bytes(static_cast<double>(fabric.hosts.size()),
                             static_cast<double>(boost::num_vertices(fabric.graph)), algorithm);
}

double routing_table_bytes(double hosts, double nodes, RoutingAlgorithm algorithm) {
  // The peak while building: every (destination, node) cell is 2 bytes until its node is
  // packed into 1 (2 past 256 kinds, rare), so 3 bytes a cell, and 2 bytes per host pair; the
  // port sets and kinds, a few per port of each node, are small beside them. Up-down's two
  // phases share a cell (its kind names both sets), so the algorithm does not change it.
  (void)algorithm;
  return hosts * nodes * 3 + hosts * hosts * 2;
}

}  // namespace fabricsim
