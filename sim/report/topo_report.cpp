#include "sim/report/topo_report.hpp"

#include <cstdio>
#include <sstream>

#include "sim/core/units.hpp"

namespace fabricsim {

namespace {

/// topo --partitions: the split, one line per part, then what it costs a parallel run.
void print_partition(std::ostream& os, const Partition& p) {
  char buf[64];
  os << "partition           : " << p.parts << " part" << (p.parts == 1 ? "" : "s") << ", method "
     << to_string(p.method) << ": " << p.scheme << "\n";
  for (int i = 0; i < p.parts; ++i) {
    const PartLoad& l = p.loads[i];
    std::snprintf(buf, sizeof buf, "  part %-12d : ", i);
    os << buf << l.nodes << " nodes, " << l.hosts << " hosts, " << l.ports << " ports\n";
  }
  os << "cut links           : " << p.cut_links << "\n";
  if (p.lookahead_ps) {
    std::ostringstream ns;
    ns << static_cast<double>(*p.lookahead_ps) / 1000.0;
    os << "lookahead           : " << ns.str()
       << " ns (smallest propagation delay of a cut link)\n";
  } else {
    os << "lookahead           : none (no link crosses parts)\n";
  }
  std::snprintf(buf, sizeof buf, "%.3f", p.imbalance);
  os << "imbalance           : " << buf << " (largest part's ports / mean)\n";
}

}  // namespace

nlohmann::ordered_json topo_json(const FabricSummary& s, const FabricMetrics& m,
                                 const std::string& routing,
                                 const std::optional<Partition>& partition) {
  const std::optional<FabricCost>& cost = s.cost;
  nlohmann::ordered_json j = {{"kind", s.kind},
                              {"gpus", s.gpus},
                              {"switches", s.switches},
                              {"links", s.links},
                              {"oversubscription", s.oversubscription},
                              {"bisection_bandwidth_bps", s.bisection_bandwidth_bps},
                              {"bisection_maxflow_bps", m.bisection_maxflow_bps},
                              {"diameter_hops", m.diameter_hops},
                              {"path_diversity", m.path_diversity},
                              {"path_diversity_pair", m.path_diversity_pair},
                              {"routing", routing}};
  nlohmann::ordered_json roles = nlohmann::ordered_json::object();
  for (const auto& t : m.nodes_by_role) roles[t.role] = t.count;
  j["nodes_by_role"] = roles;
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const auto& l : m.links_by_class) {
    links.push_back(
        {{"ends", l.ends}, {"count", l.count}, {"rate_bps", l.rate_bps}, {"failed", l.failed}});
  }
  j["links_by_class"] = links;
  nlohmann::ordered_json tiers = nlohmann::ordered_json::object();
  for (const auto& [role, ratio] : m.oversubscription_by_tier) tiers[role] = ratio;
  j["oversubscription_by_tier"] = tiers;
  if (cost) {
    j["cost_usd"] = fabric_cost_json(*cost);
  } else {
    j["cost_usd"] = nullptr;
  }
  if (partition) {
    nlohmann::ordered_json loads = nlohmann::ordered_json::array();
    for (const PartLoad& l : partition->loads) {
      loads.push_back({{"nodes", l.nodes}, {"hosts", l.hosts}, {"ports", l.ports}});
    }
    j["partition"] = {
        {"parts", partition->parts},
        {"method", to_string(partition->method)},
        {"scheme", partition->scheme},
        {"cut_links", partition->cut_links},
        {"lookahead_ps", partition->lookahead_ps ? nlohmann::ordered_json(*partition->lookahead_ps)
                                                 : nlohmann::ordered_json(nullptr)},
        {"imbalance", partition->imbalance},
        {"per_part", loads}};
  }
  return j;
}

void print_topo(std::ostream& os, const FabricSummary& s, const FabricMetrics& m,
                const std::string& routing, const std::optional<Partition>& partition) {
  const std::optional<FabricCost>& cost = s.cost;
  std::ostringstream nodes, links, tiers;
  for (const auto& t : m.nodes_by_role)
    nodes << (nodes.tellp() ? ", " : "") << t.role << " " << t.count;
  for (const auto& l : m.links_by_class) {
    links << (links.tellp() ? "; " : "") << l.ends << " " << l.count << " x "
          << format_rate(l.rate_bps);
    if (l.failed) links << " (" << l.failed << " failed)";
  }
  for (const auto& [role, ratio] : m.oversubscription_by_tier) {
    tiers << (tiers.tellp() ? ", " : "") << role << " " << ratio << ":1";
  }
  int nvlinks = 0, pcie_links = 0;
  for (const auto& l : m.links_by_class) {
    nvlinks += l.ends == "nvlink" ? l.count : 0;
    pcie_links += l.ends == "pcie" ? l.count : 0;
  }
  os << "fabric              : " << s.kind << ", " << s.gpus << " GPUs, " << s.switches
     << " switches, " << s.links << " network links"
     << (nvlinks ? " (+" + std::to_string(nvlinks) + " NVLinks)" : std::string())
     << (pcie_links ? " (+" + std::to_string(pcie_links) + " PCIe links)" : std::string())
     << "; routing " << routing << "\n"
     << "nodes               : " << nodes.str() << "\n"
     << "links               : " << links.str() << "\n"
     << "oversubscription    : " << s.oversubscription << ":1 as built"
     << (m.oversubscription_by_tier.empty() ? "" : "; by tier: " + tiers.str()) << "\n"
     << "bisection bandwidth : " << format_rate(s.bisection_bandwidth_bps) << " (closed form), "
     << (m.bisection_maxflow_bps < 0 ? std::string("max-flow check skipped (large fabric)")
                                     : format_rate(m.bisection_maxflow_bps) + " (max-flow check)")
     << "\n"
     << "diameter            : " << m.diameter_hops << " hops\n"
     << "path diversity      : " << m.path_diversity << " routed paths " << m.path_diversity_pair
     << "\n";
  if (cost) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "cost proxy          : USD %.0f (switch ports %.0f, NICs %.0f, host links %.0f, "
                  "fabric links %.0f) at the prices in %s\n",
                  cost->total_usd, cost->switch_ports_usd, cost->nics_usd, cost->host_links_usd,
                  cost->fabric_links_usd, cost->prices.c_str());
    os << buf;
  } else {
    os << "cost proxy          : none (add cost_model: ../configs/cost_example.yaml)\n";
  }
  if (partition) print_partition(os, *partition);
}

}  // namespace fabricsim
