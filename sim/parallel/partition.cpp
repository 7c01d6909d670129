#include "sim/parallel/partition.hpp"

#include "topologies/family.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <utility>

#ifdef FABRICSIM_HAVE_METIS
#include <metis.h>
#endif

namespace fabricsim {
namespace {

/// Unit `index` of `count` split contiguously over `parts`: floor(index·parts/count).
int spread(int64_t index, int64_t count, int parts) {
  return static_cast<int>(index * parts / count);
}

/// The switch a host's NIC reaches first: the far end of its first port that is not an NVLink
/// (hosts list network ports before NVLinks); std::nullopt for a host with no network port.
std::optional<VertexId> first_hop(const FabricGraph& g, VertexId host) {
  for (auto [e, end] = boost::out_edges(host, g); e != end; ++e) {
    if (!g[*e].nvlink) return boost::target(*e, g);
  }
  return std::nullopt;
}

/// The family's topology-aware split (FabricSplit; count 0 when the family has none).
FabricSplit topology_units(const Fabric& f) {
  const FabricFamily* family = find_fabric_family(f.kind);
  if (family == nullptr || family->split == nullptr) return {};
  return family->split(f);
}

/// Gives every vertex still at -1 a part: an NVSwitch its first GPU's, a host its first hop's,
/// anything else spread in index order among the others left (cores, spines).
void place_rest(const FabricGraph& g, std::vector<int>& part_of, int parts) {
  std::vector<VertexId> rest;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (part_of[*v] < 0 && g[*v].kind == NodeKind::kSwitch && !is_server_switch(g[*v].role)) {
      rest.push_back(*v);
    }
  }
  for (size_t i = 0; i < rest.size(); ++i) {
    part_of[rest[i]] = spread(static_cast<int64_t>(i), static_cast<int64_t>(rest.size()), parts);
  }
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (part_of[*v] >= 0 || g[*v].kind != NodeKind::kHost) continue;
    const auto hop = first_hop(g, *v);
    part_of[*v] = hop ? part_of[*hop] : 0;
  }
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (part_of[*v] >= 0) continue;
    part_of[*v] = 0;
    for (auto [e, eend] = boost::out_edges(*v, g); e != eend; ++e) {
      if (g[boost::target(*e, g)].kind == NodeKind::kHost) {
        part_of[*v] = part_of[boost::target(*e, g)];
        break;
      }
    }
  }
}

/// The topology-aware split of the header; `units` from topology_units, count >= parts.
std::vector<int> topology_split(const Fabric& f, const FabricSplit& units, int parts) {
  const FabricGraph& g = f.graph;
  std::vector<int> part_of(boost::num_vertices(g), -1);
  for (size_t v = 0; v < units.unit_of.size(); ++v) {
    const auto [index, of] = units.unit_of[v];
    if (of > 0) part_of[v] = spread(index, of, parts);
  }
  place_rest(g, part_of, parts);
  return part_of;
}

#ifdef FABRICSIM_HAVE_METIS
/// Root of x, halving paths; roots are the smallest vertex of their set (deterministic).
VertexId find_root(std::vector<VertexId>& parent, VertexId x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

void unite(std::vector<VertexId>& parent, VertexId a, VertexId b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  if (a != b) parent[std::max(a, b)] = std::min(a, b);
}

std::vector<int> metis_split(const Fabric& f, int parts, std::string& scheme) {
  const FabricGraph& g = f.graph;
  const size_t n = boost::num_vertices(g);
  std::vector<VertexId> parent(n);
  std::iota(parent.begin(), parent.end(), VertexId{0});
  // Zero-delay links can never be cut (the lookahead would be 0): contract them (NVLinks).
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (!g[*e].failed && g[*e].delay_ps == 0) {
      unite(parent, boost::source(*e, g), boost::target(*e, g));
    }
  }
  // A host (or a whole server) joins the switch its NICs reach first, when there is one such
  // switch for all of its GPUs.
  std::map<VertexId, std::vector<VertexId>> hops;  // group root -> first hops of its hosts
  for (VertexId h : f.hosts) {
    const auto hop = first_hop(g, h);
    if (hop) hops[find_root(parent, h)].push_back(*hop);
  }
  for (auto& [root, list] : hops) {
    std::sort(list.begin(), list.end());
    if (list.front() == list.back()) unite(parent, root, list.front());
  }
  // Groups numbered by their smallest vertex.
  std::vector<idx_t> group(n, -1);
  std::vector<idx_t> id_of_root(n, -1);
  idx_t groups = 0;
  for (size_t v = 0; v < n; ++v) {
    const VertexId r = find_root(parent, v);
    if (id_of_root[r] < 0) id_of_root[r] = groups++;
    group[v] = id_of_root[r];
  }
  if (groups < parts) {
    throw std::invalid_argument(
        std::to_string(parts) + " parts, but the fabric has only " + std::to_string(groups) +
        " group(s) that can be separated (vertices joined by zero-delay links such as NVLinks, "
        "and hosts with their switch, stay together); use at most " +
        std::to_string(groups) + " parts");
  }
  std::vector<idx_t> vwgt(groups, 0);
  for (size_t v = 0; v < n; ++v) vwgt[group[v]] += static_cast<idx_t>(boost::out_degree(v, g));
  std::map<std::pair<idx_t, idx_t>, int64_t> weight;  // parallel links summed, Gb/s
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (g[*e].failed) continue;
    const idx_t a = group[boost::source(*e, g)], b = group[boost::target(*e, g)];
    if (a == b) continue;
    int64_t& w = weight[{std::min(a, b), std::max(a, b)}];
    w = std::min<int64_t>(w + std::max<int64_t>(1, g[*e].rate_bps / 1'000'000'000), 1'000'000);
  }
  std::vector<std::vector<std::pair<idx_t, idx_t>>> adj(groups);
  for (const auto& [ends, w] : weight) {
    adj[ends.first].emplace_back(ends.second, static_cast<idx_t>(w));
    adj[ends.second].emplace_back(ends.first, static_cast<idx_t>(w));
  }
  std::vector<idx_t> xadj{0}, adjncy, adjwgt;
  for (const auto& list : adj) {
    for (const auto& [to, w] : list) {
      adjncy.push_back(to);
      adjwgt.push_back(w);
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
  }
  // The heaviest part's weight of a candidate, or -1 when a part is empty.
  const auto heaviest = [&](const std::vector<idx_t>& part) {
    std::vector<int64_t> w(parts, 0);
    std::vector<int> count(parts, 0);
    for (idx_t s = 0; s < groups; ++s) {
      w[part[s]] += vwgt[s];
      ++count[part[s]];
    }
    if (std::find(count.begin(), count.end(), 0) != count.end()) return int64_t{-1};
    return *std::max_element(w.begin(), w.end());
  };
  // A split whose heaviest part exceeds the mean by at most the heaviest group always exists
  // (fill the lightest part group by group): accept METIS's when it is no worse than that.
  const int64_t total = std::accumulate(vwgt.begin(), vwgt.end(), int64_t{0});
  const int64_t bound = (total + parts - 1) / parts + *std::max_element(vwgt.begin(), vwgt.end());
  const auto acceptable = [&](int64_t w) { return w >= 0 && w <= bound; };
  const auto run = [&](bool kway) {
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;  // fixed: the same fabric always gives the same partition
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t nvtxs = groups, ncon = 1, nparts = parts, edgecut = 0;
    std::vector<idx_t> part(groups, 0);
    const int status = (kway ? METIS_PartGraphKway : METIS_PartGraphRecursive)(
        &nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(), &nparts,
        nullptr, nullptr, options, &edgecut, part.data());
    if (status != METIS_OK) {
      throw std::runtime_error(
          std::string(kway ? "METIS_PartGraphKway" : "METIS_PartGraphRecursive") +
          " failed with status " + std::to_string(status));
    }
    return part;
  };
  // k-way first. On small graphs METIS 5.1 k-way may put every vertex in one part (known:
  // KarypisLab/METIS issues 29 and 81); recursive bisection is then tried, and the candidate
  // with the lighter heaviest part kept.
  std::vector<idx_t> part = run(true);
  scheme = "METIS k-way";
  if (!acceptable(heaviest(part))) {
    std::vector<idx_t> rb = run(false);
    const int64_t w_kway = heaviest(part), w_rb = heaviest(rb);
    if (w_rb >= 0 && (w_kway < 0 || w_rb < w_kway)) {
      part = std::move(rb);
      scheme = "METIS recursive bisection (k-way left the parts unbalanced)";
    }
  }
  // Still a part empty (more parts than METIS could fill): give it the last group of the part
  // with the most groups, so every rank owns something.
  std::vector<int> count(parts, 0);
  for (idx_t p : part) ++count[p];
  for (int p = 0; p < parts; ++p) {
    if (count[p] > 0) continue;
    const int donor =
        static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
    for (idx_t s = groups - 1; s >= 0; --s) {
      if (part[s] == donor) {
        part[s] = p;
        --count[donor];
        ++count[p];
        break;
      }
    }
  }
  scheme += ", ports as vertex weights, Gb/s as edge weights";
  std::vector<int> part_of(n);
  for (size_t v = 0; v < n; ++v) part_of[v] = static_cast<int>(part[group[v]]);
  return part_of;
}
#endif

/// Loads, cut links and lookahead of `p.part_of`; throws on a zero-delay cut link.
void summarize(const Fabric& f, Partition& p) {
  const FabricGraph& g = f.graph;
  p.loads.assign(p.parts, PartLoad{});
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    PartLoad& load = p.loads[p.part_of[*v]];
    ++load.nodes;
    load.hosts += g[*v].kind == NodeKind::kHost;
    load.ports += static_cast<int64_t>(boost::out_degree(*v, g));
  }
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const VertexId a = boost::source(*e, g), b = boost::target(*e, g);
    if (g[*e].failed || p.part_of[a] == p.part_of[b]) continue;
    if (g[*e].delay_ps <= 0) {
      throw std::invalid_argument(
          "link " + g[a].name + " - " + g[b].name + " crosses parts " +
          std::to_string(p.part_of[a]) + " and " + std::to_string(p.part_of[b]) +
          " with zero propagation delay: the lookahead (the smallest delay of a link between "
          "parts) would be 0 and a conservative parallel simulation could never advance; give "
          "link.propagation_delay a positive value or use another split");
    }
    ++p.cut_links;
    p.lookahead_ps = std::min(p.lookahead_ps.value_or(g[*e].delay_ps), g[*e].delay_ps);
  }
  int64_t total = 0, largest = 0;
  for (const PartLoad& load : p.loads) {
    total += load.ports;
    largest = std::max(largest, load.ports);
  }
  p.imbalance =
      total > 0 ? static_cast<double>(largest) * p.parts / static_cast<double>(total) : 1.0;
}

}  // namespace

const char* to_string(PartitionMethod method) {
  switch (method) {
    case PartitionMethod::kAuto:
      return "auto";
    case PartitionMethod::kTopology:
      return "topology";
    case PartitionMethod::kMetis:
      return "metis";
  }
  return "?";
}

std::optional<PartitionMethod> parse_partition_method(const std::string& text) {
  for (PartitionMethod m :
       {PartitionMethod::kAuto, PartitionMethod::kTopology, PartitionMethod::kMetis}) {
    if (text == to_string(m)) return m;
  }
  return std::nullopt;
}

bool metis_available() {
#ifdef FABRICSIM_HAVE_METIS
  return true;
#else
  return false;
#endif
}

Partition partition_fabric(const Fabric& fabric, int parts, PartitionMethod method) {
  const int64_t nodes = static_cast<int64_t>(boost::num_vertices(fabric.graph));
  if (parts < 1 || parts > nodes) {
    throw std::invalid_argument(std::to_string(parts) + " parts: expected 1 to the fabric's " +
                                std::to_string(nodes) + " nodes (hosts and switches)");
  }
  Partition p;
  p.parts = parts;
  const FabricSplit units = topology_units(fabric);
  if (parts == 1) {
    p.method =
        method == PartitionMethod::kMetis ? PartitionMethod::kMetis : PartitionMethod::kTopology;
    p.scheme = "one part";
    p.part_of.assign(static_cast<size_t>(nodes), 0);
    summarize(fabric, p);
    return p;
  }
  if (method == PartitionMethod::kAuto) {
    if (units.count > 0 && units.count % parts == 0) {
      method = PartitionMethod::kTopology;
    } else if (metis_available()) {
      method = PartitionMethod::kMetis;
    } else if (units.count >= parts) {
      method = PartitionMethod::kTopology;
    } else {
      throw std::invalid_argument(
          std::to_string(parts) + " parts do not fit the " + fabric.kind + " fabric's " +
          (units.count > 0 ? std::to_string(units.count) + " " + units.units
                           : std::string("structure (no topology-aware split)")) +
          " and this build has no METIS for a graph partition (install libmetis-dev and "
          "rebuild)");
    }
  }
  p.method = method;
  if (method == PartitionMethod::kTopology) {
    if (units.count == 0) {
      throw std::invalid_argument("no topology-aware split for a " + fabric.kind +
                                  " fabric; use the METIS partition");
    }
    if (units.count < parts) {
      throw std::invalid_argument(std::to_string(parts) + " parts but the " + fabric.kind +
                                  " fabric has only " + std::to_string(units.count) + " " +
                                  units.units + " to split by");
    }
    p.scheme = units.scheme;
    p.part_of = topology_split(fabric, units, parts);
  } else {
#ifdef FABRICSIM_HAVE_METIS
    p.part_of = metis_split(fabric, parts, p.scheme);
#else
    throw std::invalid_argument(
        "this build has no METIS (install libmetis-dev and rebuild) for the graph partition");
#endif
  }
  summarize(fabric, p);
  return p;
}

}  // namespace fabricsim
