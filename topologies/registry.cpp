#include "topologies/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <stdexcept>

#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>

#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "topologies/family.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/rail_optimized.hpp"
#include "topologies/spine_leaf.hpp"
#include "topologies/torus.hpp"

namespace fabricsim {
namespace {

/// The table: the built-in families first (one line each), then the registered ones. Built on
/// first use, so a registration during static initialization finds it; a deque, so the pointers
/// find_fabric_family() returned stay valid when a family is registered later. Building it
/// makes the built-in kinds valid topology.kind values (register_choice), in this order.
std::deque<FabricFamily>& families() {
  static std::deque<FabricFamily> table = [] {
    // clang-format off
    std::deque<FabricFamily> builtin = {
      {"spine-leaf",     &build_spine_leaf,     false, &split_spine_leaf},
      {"fat-tree",       &build_fat_tree,       false, &split_fat_tree},
      {"rail-optimized", &build_rail_optimized, false, &split_rail_optimized},
      {"torus",          &build_torus,          true,  &split_torus},
    };
    // clang-format on
    for (const FabricFamily& f : builtin) register_choice("topology.kind", f.kind);
    return builtin;
  }();
  return table;
}

/// The built-in kinds are valid before main() runs, so a scenario loaded before anything asks
/// the registry (the loader reads the kinds from sim/core/choices.hpp) finds them.
[[maybe_unused]] const bool kBuiltinKindsRegistered = (families(), true);

/// A warning at `key` when `text`, written without an index, picked the first of several
/// parallel links (as "leaf0-spine1" does): how many stay as they were, and the form for all.
void warn_parallel(const Scenario& sc, Fabric& f, const std::string& key, const std::string& text,
                   int parallel, const std::string& what) {
  if (parallel <= 1 || text.find('#') != std::string::npos) return;
  const auto origin = sc.origins.find(key);
  f.warnings.push_back(config_warning(
      origin != sc.origins.end() ? origin->second : KeyOrigin{sc.path, 0, 0}, key,
      "'" + text + "' " + what + " the first of " + std::to_string(parallel) +
          " parallel links; the other " + std::to_string(parallel - 1) + " stay as they were ('" +
          text + "#*' names them all, '" + text + "#1' the second)"));
}

void apply_link_faults(const Scenario& sc, Fabric& f) {
  FabricGraph& g = f.graph;
  std::map<std::string, VertexId> by_name;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) by_name[g[*v].name] = *v;
  // A link named twice (in one list or across both) is a mistake, not a no-op.
  std::map<const void*, std::string> named;  // edge property address -> the name first used
  auto claim = [&](FabricGraph::edge_descriptor e, const std::string& text, const char* key) {
    const auto [it, fresh] = named.emplace(&g[e], text);
    if (!fresh) {
      throw key_error(sc, key, "'" + text + "' names the same link as '" + it->second + "'");
    }
  };
  for (const auto& text : sc.topology.failed_links) {
    int parallel = 0;
    for (const auto e : find_links(sc, f, by_name, text, "topology.failed_links", parallel)) {
      claim(e, text, "topology.failed_links");
      g[e].failed = true;
    }
    warn_parallel(sc, f, "topology.failed_links", text, parallel, "fails");
  }
  for (const auto& [text, rate_bps] : sc.topology.degraded_links) {
    int parallel = 0;
    for (const auto e : find_links(sc, f, by_name, text, "topology.degraded_links", parallel)) {
      claim(e, text, "topology.degraded_links");
      if (rate_bps >= g[e].rate_bps) {
        throw key_error(sc, "topology.degraded_links",
                        "'" + text + "': a degraded link runs below its nominal rate (" +
                            format_rate(g[e].rate_bps) + ")");
      }
      g[e].rate_bps = rate_bps;
    }
    warn_parallel(sc, f, "topology.degraded_links", text, parallel, "degrades");
  }

  // Bit error rates: link.bit_error_rate on every network cable, then the per-link values. A
  // link may be failed or degraded and have a BER too; only naming it twice here is refused.
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (!g[*e].nvlink) g[*e].bit_error_rate = sc.link.bit_error_rate;
  }
  std::map<const void*, std::string> ber_named;
  for (const auto& [text, ber] : sc.topology.link_bit_error_rates) {
    // Errors point at the entry (the loader records its origin under this path).
    const std::string key = "topology.link_bit_error_rates." + text;
    int parallel = 0;
    const auto links = find_links(sc, f, by_name, text, key, parallel);
    for (const auto e : links) {
      if (const auto [it, fresh] = ber_named.emplace(&g[e], text); !fresh) {
        throw key_error(sc, key, "'" + text + "' names the same link as '" + it->second + "'");
      }
      if (g[e].nvlink) {
        throw key_error(sc, key, "'" + text + "' is an NVLink; NVLinks are modelled error-free");
      }
      g[e].bit_error_rate = ber;
    }
    warn_parallel(sc, f, key, text, parallel, "sets the bit error rate of");
    // Warned, not refused: the file may keep a flaky link's measured BER while a sweep or a
    // --set fails that link (drain it or keep it, compared); a failed link carries no frames.
    if (std::any_of(links.begin(), links.end(), [&](auto e) { return g[e].failed; })) {
      const auto origin = sc.origins.find(key);
      f.warnings.push_back(config_warning(
          origin != sc.origins.end() ? origin->second : KeyOrigin{sc.path, 0, 0}, key,
          "'" + text +
              "' is a failed link (topology.failed_links): it carries no frames, so its bit "
              "error rate does nothing"));
    }
  }
}

/// Every host must reach every other over links that are up: a fabric described (or failed)
/// into pieces is bad input, not a routing crash later.
void check_connected(const Scenario& sc, const Fabric& f) {
  const FabricGraph& g = f.graph;
  struct Up {
    const FabricGraph* g;
    bool operator()(FabricGraph::edge_descriptor e) const { return !(*g)[e].failed; }
  };
  const boost::filtered_graph<FabricGraph, Up> up(g, Up{&g});
  std::vector<int> component(boost::num_vertices(g));
  boost::connected_components(up, component.data());
  for (VertexId h : f.hosts) {
    if (component[h] == component[f.hosts.front()]) continue;
    const std::string pair = g[h].name + " cannot reach " + g[f.hosts.front()].name;
    if (!sc.topology.failed_links.empty()) {
      throw key_error(sc, "topology.failed_links", "these failed links cut: " + pair);
    }
    if (sc.topology.rail_only) {
      throw key_error(sc, "topology.scalable_units",
                      "a rail-only fabric has no spines to join its " +
                          std::to_string(sc.topology.scalable_units) + " scalable units (" + pair +
                          "); use one unit, or spines");
    }
    throw key_error(sc, "topology", "the fabric is not connected: " + pair);
  }
}

/// Every network switch must fit in `switch.radix` ports, when it is given.
void check_radix(const Scenario& sc, const Fabric& f) {
  if (sc.sw.radix <= 0) return;
  const FabricGraph& g = f.graph;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (g[*v].kind != NodeKind::kSwitch || is_server_switch(g[*v].role)) continue;
    int down = 0, up = 0, side = 0;
    for (auto [e, eend] = boost::out_edges(*v, g); e != eend; ++e) {
      if (g[*e].nvlink) continue;
      const int t = g[boost::target(*e, g)].tier;
      (t < g[*v].tier ? down : t > g[*v].tier ? up : side) += 1;
    }
    const int ports = down + up + side;
    if (ports > sc.sw.radix) {
      throw key_error(sc, "switch.radix",
                      g[*v].name + " needs " + std::to_string(ports) + " ports (" +
                          std::to_string(down) + " down, " + std::to_string(up) + " up" +
                          (side ? ", " + std::to_string(side) + " across" : std::string()) +
                          ") but a switch has " + std::to_string(sc.sw.radix));
    }
  }
}

}  // namespace

std::vector<FabricGraph::edge_descriptor> find_links(const Scenario& sc, const Fabric& f,
                                                     const std::map<std::string, VertexId>& by_name,
                                                     const std::string& text,
                                                     const std::string& key, int& parallel) {
  const FabricGraph& g = f.graph;
  auto fail = [&](const std::string& message) -> void {
    throw key_error(sc, key, "'" + text + "': " + message);
  };
  std::string name = text;
  int index = 0;
  bool all = false;
  if (const size_t hash = name.find('#'); hash != std::string::npos) {
    const std::string digits = name.substr(hash + 1);
    all = digits == "*";
    if (!all && (digits.empty() || digits.size() > 6 ||
                 digits.find_first_not_of("0123456789") != std::string::npos)) {
      fail("expected a parallel-link index after '#', e.g. leaf0-spine1#1, or #* for all of them");
    }
    index = all ? 0 : std::stoi(digits);
    name = name.substr(0, hash);
  }
  const size_t dash = name.find('-');
  if (dash == std::string::npos) fail("expected a link as NODE-NODE, e.g. leaf0-spine1");
  VertexId ends[2];
  const std::string names[2] = {name.substr(0, dash), name.substr(dash + 1)};
  for (int i = 0; i < 2; ++i) {
    const auto it = by_name.find(names[i]);
    if (it == by_name.end()) {
      std::vector<std::string> all;
      for (const auto& [n, v] : by_name) all.push_back(n);
      const std::string guess = closest_match(names[i], all);
      fail("no node named '" + names[i] + "'" +
           (guess.empty() ? " (fabricsim topo --dot shows the names)"
                          : "; did you mean '" + guess + "'?"));
    }
    ends[i] = it->second;
  }
  std::vector<FabricGraph::edge_descriptor> between;
  for (auto [e, end] = boost::out_edges(ends[0], g); e != end; ++e) {
    if (boost::target(*e, g) == ends[1]) between.push_back(*e);
  }
  parallel = static_cast<int>(between.size());
  const int seen = parallel;
  if (seen == 0) fail("there is no link between " + names[0] + " and " + names[1]);
  if (all) return between;
  if (index >= seen) {
    fail("there are only " + std::to_string(seen) + " links between " + names[0] + " and " +
         names[1] + " (#0 to #" + std::to_string(seen - 1) + ", or #* for all)");
  }
  return {between[static_cast<size_t>(index)]};
}

Fabric build_fabric(const Scenario& sc) {
  if (const FabricFamily* family = find_fabric_family(sc.topology.kind)) {
    {
      Fabric f = family->build(sc);
      if (f.hosts_forward) f.default_routing = "ecmp";  // rail-only: PXN hops are valleys
      apply_link_faults(sc, f);
      check_connected(sc, f);
      check_radix(sc, f);
      return f;
    }
  }
  throw key_error(sc, "topology.kind",
                  "no builder for kind '" + sc.topology.kind + "' in this version");
}

void check_routes_fit(const Scenario& sc, int64_t hosts, int64_t nodes,
                      RoutingAlgorithm algorithm) {
  // Refuse up front what would exhaust memory, rather than be killed halfway.
  const double need =
      routing_table_bytes(static_cast<double>(hosts), static_cast<double>(nodes), algorithm);
  const MemoryBudget budget = memory_budget();
  if (over_half(need, budget)) {
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "%lld GPUs and %lld nodes need about %.1f GB of routing tables, more than half "
                  "of %s; the flow mode (--mode flow) keeps no hosts x nodes table",
                  static_cast<long long>(hosts), static_cast<long long>(nodes), need / 1e9,
                  budget.text.c_str());
    throw key_error(sc, "topology", msg);
  }
}

void check_routes_fit(const Scenario& sc, int64_t hosts, int64_t nodes,
                      const std::string& default_routing) {
  if (sc.mode == "flow") return;  // the flow mode keeps no hosts x nodes table
  const std::string& name = sc.routing.algorithm == "auto" ? default_routing : sc.routing.algorithm;
  // Any other name is refused later, with the fabric at hand: estimated as the smallest here.
  check_routes_fit(sc, hosts, nodes,
                   name == "up_down" ? RoutingAlgorithm::kUpDown : RoutingAlgorithm::kEcmp);
}

RoutingTable build_routes(const Scenario& sc, const Fabric& fabric) {
  try {
    const RoutingAlgorithm algorithm = resolve_routing(sc.routing.algorithm, fabric);
    check_routes_fit(sc, static_cast<int64_t>(fabric.hosts.size()),
                     static_cast<int64_t>(boost::num_vertices(fabric.graph)), algorithm);
    return RoutingTable(fabric, algorithm);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw key_error(sc, "routing.algorithm", e.what());
  } catch (const std::runtime_error& e) {
    throw key_error(sc, "routing.algorithm", e.what());
  }
}

void register_fabric_family(FabricFamily family) {
  if (family.kind.empty()) throw std::invalid_argument("a fabric family needs a kind");
  if (family.build == nullptr) {
    throw std::invalid_argument("fabric family '" + family.kind + "' has no builder");
  }
  if (find_fabric_family(family.kind) != nullptr) {
    throw std::invalid_argument("fabric family '" + family.kind + "' is registered already");
  }
  register_choice("topology.kind", family.kind);
  families().push_back(std::move(family));
}

const FabricFamily* find_fabric_family(const std::string& kind) {
  for (const FabricFamily& f : families()) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

const FabricFamily& family_of(const Fabric& fabric) {
  const FabricFamily* f = find_fabric_family(fabric.kind);
  if (f == nullptr) throw std::logic_error("no fabric family '" + fabric.kind + "'");
  return *f;
}

std::vector<std::string> fabric_kinds() {
  std::vector<std::string> kinds;
  for (const FabricFamily& f : families()) kinds.push_back(f.kind);
  return kinds;
}

}  // namespace fabricsim
