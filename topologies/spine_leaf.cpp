#include "topologies/spine_leaf.hpp"

#include <cmath>
#include <numeric>
#include <sstream>

#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "topologies/metrics.hpp"

namespace fabricsim {
namespace {

std::string ratio_text(double o) {
  std::ostringstream s;
  s << o << ":1";
  return s.str();
}

/// host capacity : uplink capacity as a reduced fraction ("4:3"), which the loader reads back
/// exactly; `host_units` hosts at `host_rate`, `uplinks` at `fabric_rate`.
std::string capacity_ratio(int64_t host_units, int64_t host_rate, int64_t uplinks,
                           int64_t fabric_rate) {
  const int64_t g = std::gcd(host_rate, fabric_rate);
  __int128 a = static_cast<__int128>(host_units) * (host_rate / g);
  __int128 b = static_cast<__int128>(uplinks) * (fabric_rate / g);
  for (__int128 x = a, y = b; y != 0;) {  // gcd of the two
    const __int128 r = x % y;
    x = y;
    y = r;
    if (y == 0) {
      a /= x;
      b /= x;
    }
  }
  return std::to_string(static_cast<long long>(a)) + ":" +
         std::to_string(static_cast<long long>(b));
}

}  // namespace

Fabric build_spine_leaf(const Scenario& sc) {
  const TopologyConfig& t = sc.topology;
  const LinkConfig& l = sc.link;
  const int64_t fabric_rate = l.fabric_rate_bps > 0 ? l.fabric_rate_bps : l.host_rate_bps;
  const double host_cap_bps = static_cast<double>(t.hosts_per_leaf) * l.host_rate_bps;

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
    int shown = 0;
    for (long k = 1; shown < 4; ++k) {
      const double o = host_cap_bps / static_cast<double>(k * t.spines * fabric_rate);
      if (o < 1.0) break;
      msg << (shown ? ", " : " ")
          << capacity_ratio(t.hosts_per_leaf, l.host_rate_bps, k * t.spines, fabric_rate);
      ++shown;
    }
    if (shown == 0) msg << " none (even one uplink per spine is more than the host capacity)";
    throw key_error(sc, "topology.oversubscription", msg.str());
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

}  // namespace fabricsim
