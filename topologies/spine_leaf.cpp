#include "topologies/spine_leaf.hpp"

#include <algorithm>

#include <cmath>
#include <numeric>
#include <sstream>

#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "topologies/metrics.hpp"
#include "topologies/oversubscription.hpp"
#include "topologies/registry.hpp"
#include "topologies/servers.hpp"
#include "topologies/uplinks.hpp"

namespace fabricsim {

Fabric build_spine_leaf(const Scenario& sc) {
  const TopologyConfig& t = sc.topology;
  const LinkConfig& l = sc.link;
  const int64_t fabric_rate = l.fabric_rate_bps > 0 ? l.fabric_rate_bps : l.host_rate_bps;
  const double host_cap_bps = static_cast<double>(t.hosts_per_leaf) * l.host_rate_bps;
  // Refuse before building anything (the fat-tree and torus builders cap hosts the same way).
  if (int64_t{t.leaves} * t.hosts_per_leaf > 1'000'000) {
    throw key_error(sc, "topology.leaves",
                    std::to_string(int64_t{t.leaves} * t.hosts_per_leaf) +
                        " hosts (leaves x hosts_per_leaf): at most 1000000");
  }
  if (t.spines < 1) throw key_error(sc, "topology.spines", "a spine-leaf needs >= 1 spine");
  {
    const int64_t hosts = int64_t{t.leaves} * t.hosts_per_leaf;
    const int64_t nvswitches = t.gpus_per_server > 1 ? hosts / t.gpus_per_server : 0;
    check_routes_fit(sc, hosts, hosts + t.leaves + t.spines + nvswitches, "up_down");
  }

  check_derived_uplinks(sc, UplinkDerivation{"leaf", t.hosts_per_leaf, l.host_rate_bps, fabric_rate,
                                             t.oversubscription, t.spines, t.leaves});
  // Uplinks that give the requested ratio, as a whole number spread evenly over the spines.
  const double exact_uplinks = host_cap_bps / (t.oversubscription * fabric_rate);
  const long uplinks = std::lround(exact_uplinks);
  if (uplinks < 1 || std::abs(exact_uplinks - uplinks) > 1e-9 * exact_uplinks ||
      uplinks % t.spines != 0) {
    std::ostringstream msg;
    msg << "oversubscription " << ratio_text(t.oversubscription) << " cannot be built: it needs "
        << exact_uplinks << " uplinks of " << format_rate(fabric_rate) << " per leaf ("
        << t.hosts_per_leaf << " hosts x " << format_rate(l.host_rate_bps)
        << " / ratio), which must be a whole multiple of the " << t.spines
        << " spines; ratios that can be built here:";
    msg << " "
        << nearest_buildable_ratios(t.hosts_per_leaf, l.host_rate_bps, t.spines, fabric_rate,
                                    t.oversubscription);
    throw key_error(sc, "topology.oversubscription", msg.str());
  }

  if (int64_t{t.leaves} * uplinks > 10'000'000) {
    throw key_error(
        sc, "topology.oversubscription",
        std::to_string(int64_t{t.leaves} * uplinks) + " leaf-spine links: at most 10000000");
  }

  Fabric f;
  f.kind = "spine-leaf";
  f.default_routing = "up_down";
  auto& g = f.graph;
  const int hosts = t.leaves * t.hosts_per_leaf;
  for (int h = 0; h < hosts; ++h) {
    f.hosts.push_back(boost::add_vertex(
        NodeProps{NodeKind::kHost, Role::kGpu, "host" + std::to_string(h), 0}, g));
  }
  std::vector<VertexId> leaves, spines;
  for (int i = 0; i < t.leaves; ++i) {
    leaves.push_back(boost::add_vertex(
        NodeProps{NodeKind::kSwitch, Role::kLeaf, "leaf" + std::to_string(i), 1}, g));
  }
  for (int i = 0; i < t.spines; ++i) {
    spines.push_back(boost::add_vertex(
        NodeProps{NodeKind::kSwitch, Role::kSpine, "spine" + std::to_string(i), 2}, g));
  }
  const EdgeProps host_link{l.host_rate_bps, l.propagation_delay_ps};
  const EdgeProps fabric_link{fabric_rate, l.propagation_delay_ps};
  for (int h = 0; h < hosts; ++h)
    boost::add_edge(f.hosts[h], leaves[h / t.hosts_per_leaf], host_link, g);
  const long per_spine = uplinks / t.spines;
  for (int i = 0; i < t.leaves; ++i) {
    for (int s = 0; s < t.spines; ++s) {
      for (long k = 0; k < per_spine; ++k) boost::add_edge(leaves[i], spines[s], fabric_link, g);
    }
  }

  f.switches = t.leaves + t.spines;
  f.links = static_cast<int>(boost::num_edges(g));
  add_servers(sc, f, t.hosts_per_leaf, "leaf");  // NVLinks: not network links
  const double uplink_cap_bps = static_cast<double>(uplinks) * fabric_rate;
  f.oversubscription = host_cap_bps / uplink_cap_bps;
  if (t.leaves % 2 == 0) {
    f.bisection_bandwidth_bps = static_cast<int64_t>(t.leaves / 2) *
                                static_cast<int64_t>(std::min(host_cap_bps, uplink_cap_bps));
  } else {
    // The host halves split one leaf, whose two halves meet inside it: no simple closed form.
    f.bisection_bandwidth_bps = host_halves_max_flow_bps(f);
  }
  return f;
}

FabricSplit split_spine_leaf(const Fabric& f) {
  const FabricGraph& g = f.graph;
  FabricSplit s;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) s.count += g[*v].role == Role::kLeaf;
  s.units = "leaves";
  s.scheme = "by leaf (" + std::to_string(s.count) + " leaves, spines spread)";
  s.unit_of.assign(boost::num_vertices(g), {0, 0});
  int leaf = 0;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (g[*v].role == Role::kLeaf) s.unit_of[*v] = {leaf++, s.count};
  }
  return s;
}

}  // namespace fabricsim
