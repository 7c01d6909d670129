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
                                   const LinkEventConfig& it, const std::string& path,
                                   std::vector<std::string>& warnings) {
  const FabricGraph& g = f.graph;
  std::vector<Resolved> out;
  if (!it.link.empty()) {
    int parallel = 0;
    const auto links = find_links(sc, f, by_name, it.link, path + ".link", parallel);
    if (parallel > 1 && it.link.find('#') == std::string::npos) {
      const auto origin = sc.origins.find(path + ".link");
      warnings.push_back(config_warning(
          origin != sc.origins.end() ? origin->second : KeyOrigin{sc.path, 0, 0}, path + ".link",
          "'" + it.link + "' changes the first of " + std::to_string(parallel) +
              " parallel links; the other " + std::to_string(parallel - 1) +
              " stay as they were ('" + it.link + "#*' names them all, '" + it.link +
              "#1' the second)"));
    }
    for (const auto e : links) {
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
  if (v != by_name.end() && g[v->second].kind == NodeKind::kSwitch &&
      is_server_switch(g[v->second].role)) {
    throw key_error(sc, path + ".switch",
                    "'" + it.node +
                        "' is a server's own switch (NVSwitch or PCIe switch), not a network "
                        "switch; its links change one by one with link: GPU-" +
                        it.node);
  }
  if (v == by_name.end() || g[v->second].kind != NodeKind::kSwitch) {
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

/// At most this many changes once flaps and switches are expanded: each is two events and a
/// row of results.json.
constexpr size_t kMaxChanges = 1'000'000;

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
    for (const Resolved& r : resolve_item(sc, fabric, by_name, it, path, plan.warnings)) {
      if (it.rate_bps > g[r.e].rate_bps) {
        throw key_error(sc, path + ".rate",
                        format_rate(it.rate_bps) + " is above the link's own rate (" +
                            format_rate(g[r.e].rate_bps) + "): a link runs at most at it");
      }
      const size_t expanded =
          static_cast<size_t>(it.repeat) * (it.state == "down" && it.down_for_ps > 0 ? 2 : 1);
      if (plan.changes.size() + expanded > kMaxChanges) {
        throw key_error(sc, path,
                        "the link events make more than " + std::to_string(kMaxChanges) +
                            " changes (flaps and switches expanded); expected fewer");
      }
      LinkChange c;
      c.item = i;
      c.from_switch = !it.node.empty();
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
  // At one picosecond a link comes back before it goes down again (a flap's end and the next
  // failure), whatever order the items were written in.
  const auto rank = [](LinkChange::Kind k) {
    return k == LinkChange::Kind::kUp ? 0 : k == LinkChange::Kind::kRate ? 1 : 2;
  };
  std::stable_sort(plan.changes.begin(), plan.changes.end(),
                   [&](const LinkChange& x, const LinkChange& y) {
                     return x.at_ps != y.at_ps ? x.at_ps < y.at_ps : rank(x.kind) < rank(y.kind);
                   });

  // Each link's state in time order: a link goes down only when up, comes up only when down.
  // A switch going down or up changes the links of its that are not so already.
  std::map<LinkKey, bool> down;
  bool any_down = false;
  std::vector<LinkChange> kept;
  for (const LinkChange& c : plan.changes) {
    const LinkKey key{std::min(c.a, c.b), c.a < c.b ? c.port_a : c.port_b};
    const std::string path = "topology.link_events[" + std::to_string(c.item) + "]";
    bool& is_down = down[key];
    if (c.from_switch && c.kind != LinkChange::Kind::kRate &&
        is_down == (c.kind == LinkChange::Kind::kDown)) {
      continue;
    }
    kept.push_back(c);
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
  plan.changes = std::move(kept);
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
  std::vector<LinkKey> last_set;
  const double table_bytes = routing_table_bytes(fabric, routes.algorithm());
  for (size_t i = 0; i < plan.changes.size();) {
    const int64_t t = plan.changes[i].at_ps;
    const size_t first = i;
    const std::set<LinkKey> before = now_down;
    for (; i < plan.changes.size() && plan.changes[i].at_ps == t; ++i) {
      const LinkChange& c = plan.changes[i];
      const LinkKey key{std::min(c.a, c.b), c.a < c.b ? c.port_a : c.port_b};
      if (c.kind == LinkChange::Kind::kDown) now_down.insert(key);
      if (c.kind == LinkChange::Kind::kUp) now_down.erase(key);
    }
    if (now_down == before) continue;
    // A host whose every link is down is unreachable whatever the routes do: its links are
    // left out of the routing (the routes to it stay, and what is sent there is lost).
    const auto host_cut = [&](VertexId h) {
      if (g[h].kind != NodeKind::kHost) return false;
      uint16_t port = 0;
      for (auto [e, end] = boost::out_edges(h, g); e != end; ++e, ++port) {
        const VertexId o = boost::target(*e, g);
        const LinkKey k = h < o ? LinkKey{h, port} : LinkKey{o, port_index(g, o, *e)};
        if (!g[*e].failed && !now_down.count(k)) return false;
      }
      return true;
    };
    std::vector<LinkKey> set;
    for (const LinkKey& k : now_down) {
      auto [e, end] = boost::out_edges(k.first, g);
      std::advance(e, k.second);
      if (!host_cut(k.first) && !host_cut(boost::target(*e, g))) set.push_back(k);
    }
    for (size_t j = first; j < i; ++j) {  // a host's last link: no route avoids it
      LinkChange& c = plan.changes[j];
      const LinkKey key{std::min(c.a, c.b), c.a < c.b ? c.port_a : c.port_b};
      c.unrouted = c.kind == LinkChange::Kind::kDown && now_down.count(key) &&
                   !std::binary_search(set.begin(), set.end(), key);
    }
    if (!plan.epochs.empty() ? set == last_set : set.empty()) continue;  // routes unchanged
    last_set = set;
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
                                    const QpStallRow& stall, int64_t end_ps) {
  LinkEventsReport r;
  r.reconvergence_delay_ps = plan.reconvergence_ps;
  r.end_ps = end_ps;
  std::map<int64_t, const RouteEpoch*> epoch_at;  // by the time of the changes it follows
  for (const RouteEpoch& e : plan.epochs) epoch_at[e.change_ps] = &e;
  std::map<std::string, size_t> row_of;  // link name -> its row in r.links
  for (const LinkChange& c : plan.changes) {
    LinkEventRow row{c.at_ps, c.link, state_name(c.kind), c.rate_bps, -1, c.at_ps <= end_ps};
    if (c.kind != LinkChange::Kind::kRate) {
      const auto e = epoch_at.find(c.at_ps);
      if (e != epoch_at.end() && !e->second->cut && !c.unrouted && e->second->at_ps <= end_ps) {
        row.routes_ps = e->second->at_ps;
      }
    }
    r.events.push_back(row);
    if (row_of.emplace(c.link, r.links.size()).second) {
      const Port& pa = net.ports()[net.port_id(c.a, c.port_a)];
      const Port& pb = net.ports()[net.port_id(c.b, c.port_b)];
      r.links.push_back({c.link, pa.counters.link_down_drops + pb.counters.link_down_drops});
    }
  }
  for (const Port& p : net.ports()) r.lost_packets += p.counters.link_down_drops;
  r.lost_without_route = net.no_route_drops();
  r.lost_packets += r.lost_without_route;
  for (const RouteEpoch& e : plan.epochs) {
    if (e.cut && e.at_ps <= end_ps && r.cut.empty()) r.cut = e.cut_pair;
  }
  r.longest_stall = stall;
  return r;
}

}  // namespace fabricsim
