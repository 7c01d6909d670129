#include "topologies/metrics.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include <boost/graph/push_relabel_max_flow.hpp>

namespace fabricsim {
namespace {

constexpr int kRoles = static_cast<int>(Role::kRouter) + 1;

// ---- max flow ----------------------------------------------------------------------------

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, long long,
        boost::property<boost::edge_residual_capacity_t, long long,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

/// Adds arc u -> v of `capacity` and its zero-capacity reverse (what push_relabel expects).
void add_arc(FlowGraph& g, size_t u, size_t v, long long capacity) {
  const auto forward = boost::add_edge(u, v, g).first;
  const auto backward = boost::add_edge(v, u, g).first;
  boost::put(boost::edge_capacity, g, forward, capacity);
  boost::put(boost::edge_capacity, g, backward, 0LL);
  boost::put(boost::edge_reverse, g, forward, backward);
  boost::put(boost::edge_reverse, g, backward, forward);
}

/// Sum of the rates of a host's network links that are up.
long long host_capacity(const FabricGraph& g, VertexId h) {
  long long total = 0;
  for (auto [e, end] = boost::out_edges(h, g); e != end; ++e) {
    if (!g[*e].failed && !g[*e].nvlink) total += g[*e].rate_bps;
  }
  return total;
}

// ---- path diversity ----------------------------------------------------------------------

/// Routed paths from (node, descending) to host `dst`, memoised per state. The phase of the next
/// node follows walk_route: descending when it is entered from a higher tier.
class PathCounter {
 public:
  PathCounter(const Fabric& fabric, const RoutingTable& routes, int dst)
      : f_(fabric), routes_(routes), dst_(dst), memo_(2 * boost::num_vertices(fabric.graph), -1) {}

  int64_t count(VertexId v, bool descending) {
    if (v == f_.hosts[dst_]) return 1;
    int64_t& slot = memo_[2 * v + descending];
    if (slot == kInProgress) {
      throw std::runtime_error("path diversity: the routes to host" + std::to_string(dst_) +
                               " loop through " + f_.graph[v].name);
    }
    if (slot >= 0) return slot;
    slot = kInProgress;
    const FabricGraph& g = f_.graph;
    const auto first = boost::out_edges(v, g).first;
    int64_t total = 0;
    for (const uint16_t port : routes_.next_ports(v, dst_, descending)) {
      const VertexId next = boost::target(*std::next(first, port), g);
      total = std::min(kSaturated, total + count(next, g[next].tier < g[v].tier));
    }
    slot = total;
    return total;
  }

 private:
  static constexpr int64_t kInProgress = -2;
  static constexpr int64_t kSaturated = std::numeric_limits<int32_t>::max();
  const Fabric& f_;
  const RoutingTable& routes_;
  int dst_;
  std::vector<int64_t> memo_;  // (node, descending) -> paths; -1 not yet known
};

}  // namespace

int64_t host_halves_max_flow_bps(const Fabric& fabric) {
  const FabricGraph& g = fabric.graph;
  const size_t hosts = fabric.hosts.size();
  if (hosts < 2) return 0;
  const size_t n = boost::num_vertices(g);
  const size_t source = n, sink = n + 1;
  FlowGraph flow(n + 2);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (g[*e].failed) continue;
    const size_t u = boost::source(*e, g), v = boost::target(*e, g);
    add_arc(flow, u, v, g[*e].rate_bps);
    add_arc(flow, v, u, g[*e].rate_bps);
  }
  for (size_t h = 0; h < hosts; ++h) {
    const VertexId v = fabric.hosts[h];
    if (h < hosts / 2) {
      add_arc(flow, source, v, host_capacity(g, v));
    } else {
      add_arc(flow, v, sink, host_capacity(g, v));
    }
  }
  return boost::push_relabel_max_flow(flow, source, sink);
}

FabricMetrics compute_metrics(const Fabric& fabric, const RoutingTable& routes,
                              size_t maxflow_node_limit) {
  const FabricGraph& g = fabric.graph;
  FabricMetrics m;

  // Nodes by role.
  std::vector<int> by_role(kRoles, 0);
  for (auto [v, end] = boost::vertices(g); v != end; ++v) ++by_role[static_cast<int>(g[*v].role)];
  for (int r = 0; r < kRoles; ++r) {
    if (by_role[r] > 0) m.nodes_by_role.push_back({to_string(static_cast<Role>(r)), by_role[r]});
  }

  // Links by class (ends and rate: per-dimension rates and degraded links are classes of their
  // own); up and down capacity per switch over links that are up.
  std::map<std::pair<std::string, int64_t>, LinkClass> classes;
  std::vector<double> down_bps(boost::num_vertices(g), 0.0), up_bps(boost::num_vertices(g), 0.0);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    VertexId a = boost::source(*e, g), b = boost::target(*e, g);
    if (std::make_pair(g[b].tier, g[b].role) < std::make_pair(g[a].tier, g[a].role)) {
      std::swap(a, b);
    }
    const EdgeProps& link = g[*e];
    const std::string ends = link.pcie ? "pcie"
                             : link.nvlink
                                 ? "nvlink"
                                 : std::string(to_string(g[a].role)) + "-" + to_string(g[b].role);
    LinkClass& c = classes[{ends, -link.rate_bps}];  // fastest first within the same ends
    c.ends = ends;
    ++c.count;
    c.rate_bps = link.rate_bps;
    c.failed += link.failed;
    if (!link.nvlink && !link.failed && g[a].tier < g[b].tier) {
      up_bps[a] += static_cast<double>(link.rate_bps);
      down_bps[b] += static_cast<double>(link.rate_bps);
    }
  }
  for (auto& [ends, c] : classes) m.links_by_class.push_back(c);

  // Oversubscription per switch role: the worst switch of the role (a failed or degraded
  // uplink shows there, instead of being averaged away).
  std::vector<double> worst(kRoles, 0.0);
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (g[*v].kind != NodeKind::kSwitch || down_bps[*v] <= 0) continue;
    const int r = static_cast<int>(g[*v].role);
    if (up_bps[*v] <= 0) {
      // No uplink capacity left: infinitely oversubscribed if it had uplinks (all failed);
      // a top-tier switch (spine, core) has none and no ratio.
      bool had_up = false;
      for (auto [e, eend] = boost::out_edges(*v, g); e != eend; ++e) {
        had_up |= !g[*e].nvlink && g[boost::target(*e, g)].tier > g[*v].tier;
      }
      if (had_up) worst[r] = std::numeric_limits<double>::infinity();
      continue;
    }
    worst[r] = std::max(worst[r], down_bps[*v] / up_bps[*v]);
  }
  for (int r = 0; r < kRoles; ++r) {
    if (worst[r] > 0)
      m.oversubscription_by_tier.emplace_back(to_string(static_cast<Role>(r)), worst[r]);
  }

  m.bisection_bandwidth_bps = fabric.bisection_bandwidth_bps;
  if (boost::num_vertices(g) <= maxflow_node_limit) {
    m.bisection_maxflow_bps = host_halves_max_flow_bps(fabric);
  }

  // Diameter, and the pair path diversity is measured on.
  const int hosts = static_cast<int>(fabric.hosts.size());
  if (hosts < 2) return m;
  int farthest = 1;
  for (int s = 0; s < hosts; ++s) {
    for (int d = 0; d < hosts; ++d) {
      if (s != d) m.diameter_hops = std::max(m.diameter_hops, routes.host_distance(s, d));
    }
  }
  for (int d = 1; d < hosts; ++d) {
    if (routes.host_distance(0, d) >= routes.host_distance(0, farthest)) farthest = d;
  }
  PathCounter paths(fabric, routes, farthest);
  m.path_diversity = static_cast<int>(paths.count(fabric.hosts[0], false));
  m.path_diversity_pair = g[fabric.hosts[0]].name + "-" + g[fabric.hosts[farthest]].name;
  return m;
}

CostBreakdown fabric_cost(const Fabric& fabric, const CostModel& model) {
  const FabricGraph& g = fabric.graph;
  int64_t switch_ports = 0, nics = 0, host_links = 0, fabric_links = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (g[*e].nvlink) continue;
    int on_host = 0, on_switch = 0;
    for (const VertexId v : {boost::source(*e, g), boost::target(*e, g)}) {
      if (g[v].kind == NodeKind::kHost) {
        ++on_host;
      } else if (!is_server_switch(g[v].role)) {
        ++on_switch;
      }
    }
    switch_ports += on_switch;
    nics += on_host;
    host_links += on_host > 0;
    fabric_links += on_switch == 2;
  }
  CostBreakdown c;
  c.switches_usd = static_cast<double>(switch_ports) * model.switch_port_usd;
  c.nics_usd = static_cast<double>(nics) * model.nic_usd;
  c.host_links_usd = static_cast<double>(host_links) * model.host_link_usd;
  c.fabric_links_usd = static_cast<double>(fabric_links) * model.fabric_link_usd;
  c.total_usd = c.switches_usd + c.nics_usd + c.host_links_usd + c.fabric_links_usd;
  return c;
}

}  // namespace fabricsim
