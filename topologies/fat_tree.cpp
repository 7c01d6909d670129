#include "topologies/fat_tree.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <utility>
#include <vector>

#include "sim/config/loader.hpp"
#include "topologies/metrics.hpp"
#include "topologies/registry.hpp"
#include "topologies/servers.hpp"

namespace fabricsim {
namespace {

constexpr int64_t kMaxHosts = 1'000'000;

/// Up ports u of a radix-k switch whose down:up port ratio is `ratio`: u with (k − u) / u equal
/// to the ratio (relative tolerance 1e-5, so a ratio copied at 6 digits still matches), or 0.
int up_ports_for(int k, double ratio) {
  for (int u = 1; u <= k / 2; ++u) {
    const double candidate = static_cast<double>(k - u) / u;
    if (std::abs(ratio - candidate) <= 1e-5 * candidate) return u;
  }
  return 0;
}

/// "5:3": the exact port ratio (k − u):u, reduced.
std::string port_ratio_text(int k, int u) {
  const int g = std::gcd(k - u, u);
  return std::to_string((k - u) / g) + ":" + std::to_string(u / g);
}

[[noreturn]] void throw_unbuildable(const Scenario& sc, const std::string& key, double ratio,
                                    const char* tier, const char* down_ports) {
  const int k = sc.topology.k;
  std::ostringstream msg;
  msg << ratio << ":1 cannot be built with k = " << k << ": " << tier << " switch splits its " << k
      << " ports into " << down_ports << " and uplinks, down/up = ratio, so it needs k/(1 + "
      << "ratio) = " << k / (1.0 + ratio) << " uplinks, which must be a whole number from 1 to "
      << k / 2 << "; ratios that can be built with k = " << k << ":";
  // Ratios in ascending order are u = k/2 … 1; show at most 8, those nearest the request.
  std::vector<int> ups;
  for (int u = k / 2; u >= 1; --u) ups.push_back(u);
  const auto distance = [&](size_t i) { return std::abs(double(k - ups[i]) / ups[i] - ratio); };
  size_t nearest = 0;
  for (size_t i = 1; i < ups.size(); ++i) {
    if (distance(i) < distance(nearest)) nearest = i;
  }
  constexpr size_t kShown = 8;
  const size_t first = ups.size() <= kShown
                           ? 0
                           : std::min(nearest - std::min(nearest, kShown / 2), ups.size() - kShown);
  const size_t last = std::min(ups.size(), first + kShown);
  if (first > 0) msg << " ...";
  for (size_t i = first; i < last; ++i)
    msg << (i > first ? ", " : " ") << port_ratio_text(k, ups[i]);
  if (last < ups.size()) msg << ", ...";
  throw key_error(sc, key, msg.str());
}

}  // namespace

Fabric build_fat_tree(const Scenario& sc) {
  const TopologyConfig& t = sc.topology;
  const LinkConfig& l = sc.link;
  const int k = t.k;
  if (k < 2 || k % 2 != 0) {
    throw key_error(sc, "topology.k", "k must be even and >= 2, got " + std::to_string(k));
  }
  const int u_e = up_ports_for(k, t.oversubscription);
  if (u_e == 0) {
    throw_unbuildable(sc, "topology.oversubscription", t.oversubscription, "an edge", "host ports");
  }
  const int u_a = up_ports_for(k, t.agg_oversubscription);
  if (u_a == 0) {
    throw_unbuildable(sc, "topology.agg_oversubscription", t.agg_oversubscription, "an aggregation",
                      "down ports");
  }
  const int h_e = k - u_e;  // host ports per edge
  const int d_a = k - u_a;  // down ports per agg = edges per pod
  // Every core has one port per pod: k pods at most, fewer when topology.pods says so.
  if (t.pods > k) {
    throw key_error(sc, "topology.pods",
                    std::to_string(t.pods) + " pods: a core switch has one port per pod, so k = " +
                        std::to_string(k) + " allows at most " + std::to_string(k));
  }
  const int pods = t.pods > 0 ? t.pods : k;
  const int64_t hosts64 = int64_t{pods} * d_a * h_e;
  if (hosts64 > kMaxHosts) {
    throw key_error(sc, "topology.k",
                    "k = " + std::to_string(k) + " gives " + std::to_string(hosts64) +
                        " hosts; at most " + std::to_string(kMaxHosts) + " are supported");
  }
  const int hosts = static_cast<int>(hosts64);
  const int edges = pods * d_a;
  const int aggs = pods * u_e;
  const int cores = u_e * u_a;
  const int64_t fabric_rate = l.fabric_rate_bps > 0 ? l.fabric_rate_bps : l.host_rate_bps;
  const int64_t nvswitches = t.gpus_per_server > 1 ? hosts / t.gpus_per_server : 0;
  check_routes_fit(sc, hosts, int64_t{hosts} + edges + aggs + cores + nvswitches, "up_down");

  Fabric f;
  f.kind = "fat-tree";
  f.default_routing = "up_down";
  auto& g = f.graph;
  const auto add = [&g](Role role, const char* prefix, int index, int tier, int pod) {
    NodeProps p;
    p.kind = role == Role::kGpu ? NodeKind::kHost : NodeKind::kSwitch;
    p.role = role;
    p.name = prefix + std::to_string(index);
    p.tier = tier;
    p.su = pod;
    return boost::add_vertex(std::move(p), g);
  };
  for (int h = 0; h < hosts; ++h) f.hosts.push_back(add(Role::kGpu, "host", h, 0, h / h_e / d_a));
  std::vector<VertexId> edge_v, agg_v, core_v;
  for (int e = 0; e < edges; ++e) edge_v.push_back(add(Role::kEdge, "edge", e, 1, e / d_a));
  for (int a = 0; a < aggs; ++a) agg_v.push_back(add(Role::kAgg, "agg", a, 2, a / u_e));
  for (int c = 0; c < cores; ++c) core_v.push_back(add(Role::kCore, "core", c, 3, -1));

  EdgeProps host_link;
  host_link.rate_bps = l.host_rate_bps;
  host_link.delay_ps = l.propagation_delay_ps;
  EdgeProps fabric_link = host_link;
  fabric_link.rate_bps = fabric_rate;
  for (int h = 0; h < hosts; ++h) boost::add_edge(f.hosts[h], edge_v[h / h_e], host_link, g);
  for (int p = 0; p < pods; ++p) {
    for (int e = 0; e < d_a; ++e) {
      for (int a = 0; a < u_e; ++a) {
        boost::add_edge(edge_v[p * d_a + e], agg_v[p * u_e + a], fabric_link, g);
      }
    }
  }
  for (int p = 0; p < pods; ++p) {
    for (int a = 0; a < u_e; ++a) {
      for (int j = 0; j < u_a; ++j) {
        boost::add_edge(agg_v[p * u_e + a], core_v[a * u_a + j], fabric_link, g);
      }
    }
  }

  f.switches = edges + aggs + cores;
  f.links = static_cast<int>(boost::num_edges(g));
  add_servers(sc, f, int64_t{d_a} * h_e, "pod");  // NVLinks: not network links
  const int64_t pod_host_bps = int64_t{d_a} * h_e * l.host_rate_bps;
  const int64_t pod_edge_up_bps = int64_t{d_a} * u_e * fabric_rate;
  const int64_t pod_agg_up_bps = int64_t{u_e} * u_a * fabric_rate;
  // End to end: a pod's host capacity over the narrower of its two uplink tiers, i.e. the
  // product of the tier ratios when rates are equal (3:1 edge over 3:1 agg is 9:1).
  f.oversubscription = static_cast<double>(pod_host_bps) /
                       static_cast<double>(std::min(pod_edge_up_bps, pod_agg_up_bps));
  // An odd number of pods puts one pod across the cut: no simple closed form.
  f.bisection_bandwidth_bps =
      pods % 2 == 0 ? int64_t{pods / 2} * std::min({pod_host_bps, pod_edge_up_bps, pod_agg_up_bps})
                    : host_halves_max_flow_bps(f);
  return f;
}

FabricSplit split_fat_tree(const Fabric& f) {
  const FabricGraph& g = f.graph;
  FabricSplit s;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (g[*v].role == Role::kEdge) s.count = std::max(s.count, g[*v].su + 1);
  }
  s.units = "pods";
  s.scheme = "by pod (" + std::to_string(s.count) + " pods, cores spread)";
  s.unit_of.assign(boost::num_vertices(g), {0, 0});
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const NodeProps& p = g[*v];
    const bool in_pod = p.role == Role::kGpu || p.role == Role::kEdge || p.role == Role::kAgg;
    if (in_pod && p.su >= 0) s.unit_of[*v] = {p.su, s.count};
  }
  return s;
}

}  // namespace fabricsim
