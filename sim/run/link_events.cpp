#include "sim/run/link_events.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/strings.hpp"
#include "sim/core/units.hpp"
#include "sim/net/network.hpp"
#include "topologies/registry.hpp"

namespace fabricsim {

namespace {

/// A link as (node, port index at that node) of its lower-numbered end: one key per cable.
using LinkKey = std::pair<VertexId, uint16_t>;

/// Node v's port index of edge `e` (its position in out_edges(v)).
uint16_t port_index(const FabricGraph& g, VertexId v, FabricGraph::edge_descriptor e) {
  uint16_t i = 0;
  for (auto [it, end] = boost::out_edges(v, g); it != end; ++it, ++i) {
    if (&g[*it] == &g[e]) return i;
  }
  throw std::logic_error("plan_link_events: an edge not at its own end");
}

/// The link's name: "a-b", with "#k" when k-th of several parallel links between a and b.
std::string link_name(const FabricGraph& g, VertexId a, VertexId b,
                      FabricGraph::edge_descriptor e) {
  int k = 0, n = 0;
  for (auto [it, end] = boost::out_edges(a, g); it != end; ++it) {
    if (boost::target(*it, g) != b) continue;
    if (&g[*it] == &g[e]) k = n;
    ++n;
  }
  std::string name = g[a].name + "-" + g[b].name;
  if (n > 1) name += "#" + std::to_string(k);
  return name;
}

struct Resolved {
  FabricGraph::edge_descriptor e;
  VertexId a, b;
};

/// The links item `it` names: its link (#i, #*), or every link of its switch that is not a
/// failed link.
std::vector<Resolved> resolve_item(const Scenario& sc, const Fabric& f,
                                   const std::map<std::string, VertexId>& by_name,
                                   const LinkEventConfig& it, const std::string& path) {
  const FabricGraph& g = f.graph;
  std::vector<Resolved> out;
  if (!it.link.empty()) {
    int parallel = 0;
    for (const auto e : find_links(sc, f, by_name, it.link, path + ".link", parallel)) {
      if (g[e].failed) {
        throw key_error(sc, path + ".link",
                        "'" + it.link +
                            "' is in topology.failed_links: down for the whole run, it cannot "
                            "change state");
      }
      const VertexId a = boost::source(e, g);
      out.push_back({e, a, boost::target(e, g)});
    }
    return out;
  }
  const auto v = by_name.find(it.node);
  std::vector<std::string> switches;
  for (const auto& [name, id] : by_name) {
    if (g[id].kind == NodeKind::kSwitch && !is_server_switch(g[id].role)) switches.push_back(name);
  }
  if (v == by_name.end() || g[v->second].kind != NodeKind::kSwitch ||
      is_server_switch(g[v->second].role)) {
    const std::string guess = closest_match(it.node, switches);
    throw key_error(sc, path + ".switch",
                    "no network switch named '" + it.node + "'" +
                        (guess.empty() ? " (fabricsim topo --dot shows the names)"
                                       : "; did you mean '" + guess + "'?"));
  }
  for (auto [e, end] = boost::out_edges(v->second, g); e != end; ++e) {
    if (!g[*e].failed) out.push_back({*e, v->second, boost::target(*e, g)});
  }
  return out;
}

const char* state_name(LinkChange::Kind kind) {
  switch (kind) {
    case LinkChange::Kind::kDown:
      return "down";
    case LinkChange::Kind::kUp:
      return "up";
    case LinkChange::Kind::kRate:
      break;
  }
  return "rate";
}

}  // namespace

LinkPlan plan_link_events(const Scenario& sc, const Fabric& fabric, const RoutingTable& routes) {
  LinkPlan plan;
  const auto& items = sc.topology.link_events;
  if (items.empty()) return plan;
  const FabricGraph& g = fabric.graph;
  std::map<std::string, VertexId> by_name;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) by_name[g[*v].name] = *v;

  for (size_t i = 0; i < items.size(); ++i) {
    const LinkEventConfig& it = items[i];
    const std::string path = "topology.link_events[" + std::to_string(i) + "]";
    for (const Resolved& r : resolve_item(sc, fabric, by_name, it, path)) {
      if (it.rate_bps > g[r.e].rate_bps) {
        throw key_error(sc, path + ".rate",
                        format_rate(it.rate_bps) + " is above the link's own rate (" +
                            format_rate(g[r.e].rate_bps) + "): a link runs at most at it");
      }
      LinkChange c;
      c.item = i;
      c.link = link_name(g, r.a, r.b, r.e);
      c.a = r.a;
      c.b = r.b;
      c.port_a = port_index(g, r.a, r.e);
      c.port_b = port_index(g, r.b, r.e);
      for (int k = 0; k < it.repeat; ++k) {
        c.at_ps = it.at_ps + k * it.every_ps;
        if (it.state == "down") {
          c.kind = LinkChange::Kind::kDown;
          c.rate_bps = 0;
          plan.changes.push_back(c);
          if (it.down_for_ps > 0) {
            LinkChange up = c;
            up.kind = LinkChange::Kind::kUp;
            up.at_ps = c.at_ps + it.down_for_ps;
            plan.changes.push_back(up);
          }
        } else {
          c.kind = it.state == "up" ? LinkChange::Kind::kUp : LinkChange::Kind::kRate;
          c.rate_bps = it.rate_bps;
          plan.changes.push_back(c);
        }
      }
    }
  }
  std::stable_sort(plan.changes.begin(), plan.changes.end(),
                   [](const LinkChange& x, const LinkChange& y) { return x.at_ps < y.at_ps; });

  // Each link's state in time order: a link goes down only when up, comes up only when down.
  std::map<LinkKey, bool> down;
  bool any_down = false;
  for (const LinkChange& c : plan.changes) {
    const LinkKey key{std::min(c.a, c.b), c.a < c.b ? c.port_a : c.port_b};
    const std::string path = "topology.link_events[" + std::to_string(c.item) + "]";
    bool& is_down = down[key];
    if (c.kind == LinkChange::Kind::kDown) {
      if (is_down) {
        throw key_error(sc, path,
                        c.link + " is already down at " + format_time(c.at_ps) +
                            " (an earlier event took it down and none brought it up)");
      }
      is_down = any_down = true;
    } else if (c.kind == LinkChange::Kind::kUp) {
      if (!is_down) {
        throw key_error(sc, path,
                        c.link + " is up at " + format_time(c.at_ps) +
                            ": no earlier event takes it down; a rate change alone is "
                            "{at, link, rate}");
      }
      is_down = false;
    }
  }
  if (any_down && sc.routing.reconvergence_delay_ps < 0) {
    throw key_error(sc, "routing.reconvergence_delay",
                    "missing: topology.link_events takes links down, and how long the fabric's "
                    "routing takes to avoid them (routing protocol or subnet manager) is the "
                    "fabric's own; expected a time, e.g. routing.reconvergence_delay: 1ms");
  }
  plan.reconvergence_ps = std::max<int64_t>(sc.routing.reconvergence_delay_ps, 0);

  // The routes after each time the set of links down changes, one table per distinct set.
  // A set's routes, or (cut non-empty) why none avoid its links.
  struct Routes {
    const RoutingTable* table = nullptr;
    std::string cut;
  };
  std::map<std::vector<LinkKey>, Routes> tables;
  tables[{}] = Routes{};
  std::set<LinkKey> now_down;
  const double table_bytes = routing_table_bytes(fabric, routes.algorithm());
  for (size_t i = 0; i < plan.changes.size();) {
    const int64_t t = plan.changes[i].at_ps;
    const std::set<LinkKey> before = now_down;
    for (; i < plan.changes.size() && plan.changes[i].at_ps == t; ++i) {
      const LinkChange& c = plan.changes[i];
      const LinkKey key{std::min(c.a, c.b), c.a < c.b ? c.port_a : c.port_b};
      if (c.kind == LinkChange::Kind::kDown) now_down.insert(key);
      if (c.kind == LinkChange::Kind::kUp) now_down.erase(key);
    }
    if (now_down == before) continue;
    const std::vector<LinkKey> set(now_down.begin(), now_down.end());
    auto found = tables.find(set);
    if (found == tables.end()) {
      if (const MemoryBudget budget = memory_budget();
          over_half(table_bytes * static_cast<double>(tables.size() + 1), budget)) {
        throw key_error(sc, "topology.link_events",
                        std::to_string(tables.size() + 1) +
                            " sets of links down need as many routing tables of about " +
                            gigabytes_text(table_bytes) + ", more than half of " + budget.text +
                            "; expected fewer distinct failures");
      }
      Fabric copy = fabric;
      for (const LinkKey& k : set) {
        auto [e, end] = boost::out_edges(k.first, copy.graph);
        std::advance(e, k.second);
        copy.graph[*e].failed = true;
      }
      Routes r;
      try {
        plan.tables.push_back(std::make_unique<RoutingTable>(copy, routes.algorithm()));
        r.table = plan.tables.back().get();
      } catch (const std::runtime_error& e) {
        r.cut = e.what();
      }
      found = tables.emplace(set, std::move(r)).first;
    }
    RouteEpoch epoch;
    epoch.change_ps = t;
    epoch.at_ps = t + plan.reconvergence_ps;
    epoch.routes = found->second.table;
    epoch.cut = !found->second.cut.empty();
    epoch.cut_pair = found->second.cut;
    plan.epochs.push_back(std::move(epoch));
  }
  return plan;
}

void schedule_link_events(const LinkPlan& plan, Network& net, const RoutingTable& base) {
  for (const LinkChange& c : plan.changes) {
    const uint32_t pa = net.port_id(c.a, c.port_a), pb = net.port_id(c.b, c.port_b);
    const auto change = c.kind == LinkChange::Kind::kDown ? Network::PortChange::kDown
                        : c.kind == LinkChange::Kind::kUp ? Network::PortChange::kUp
                                                          : Network::PortChange::kRate;
    net.schedule_port_change(c.at_ps, pa, change, c.rate_bps);
    net.schedule_port_change(c.at_ps, pb, change, c.rate_bps);
  }
  for (const RouteEpoch& e : plan.epochs) {
    if (!e.cut) net.schedule_routes(e.at_ps, e.routes != nullptr ? e.routes : &base);
  }
}

LinkEventsReport link_events_report(const LinkPlan& plan, const Network& net,
                                    const QpStallRow& stall) {
  LinkEventsReport r;
  r.reconvergence_delay_ps = plan.reconvergence_ps;
  std::map<std::string, int64_t> lost;  // by link name, in first-change order below
  std::vector<std::string> order;
  for (const LinkChange& c : plan.changes) {
    LinkEventRow row{c.at_ps, c.link, state_name(c.kind), c.rate_bps, -1};
    if (c.kind != LinkChange::Kind::kRate) {
      for (const RouteEpoch& e : plan.epochs) {
        if (e.change_ps == c.at_ps) row.routes_ps = e.cut ? -1 : e.at_ps;
      }
    }
    r.events.push_back(row);
    if (lost.emplace(c.link, 0).second) {
      const Port& pa = net.ports()[net.port_id(c.a, c.port_a)];
      const Port& pb = net.ports()[net.port_id(c.b, c.port_b)];
      lost[c.link] = pa.counters.link_down_drops + pb.counters.link_down_drops;
      order.push_back(c.link);
    }
  }
  int64_t on_links = 0;
  for (const std::string& name : order) {
    r.links.push_back({name, lost[name]});
    on_links += lost[name];
  }
  for (const Port& p : net.ports()) r.lost_packets += p.counters.link_down_drops;
  r.lost_without_route = r.lost_packets - on_links;
  for (const RouteEpoch& e : plan.epochs) {
    if (e.cut && r.cut.empty()) r.cut = e.cut_pair;
  }
  r.longest_stall = stall;
  return r;
}

}  // namespace fabricsim
