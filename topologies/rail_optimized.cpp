#include "topologies/rail_optimized.hpp"

#include "topologies/oversubscription.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "sim/config/loader.hpp"
#include "topologies/uplinks.hpp"

namespace fabricsim {
namespace {

int64_t gbps(int64_t bps) {
  return bps / 1'000'000'000;
}

/// The shape after defaults and checks (symbols as in the header).
struct Shape {
  int G, N, P, R, S, SU, K;
  long U;  // uplinks per leaf (0 when rail_only)
  int64_t h, f, nv;
};

Shape validate(const Scenario& sc) {
  const TopologyConfig& t = sc.topology;
  const LinkConfig& l = sc.link;
  auto fail = [&](const char* key, const std::string& message) {
    throw key_error(sc, key, message);
  };
  Shape s{};
  s.G = t.gpus_per_server;
  s.S = t.servers_per_su;
  s.SU = t.scalable_units;
  s.P = t.planes;
  s.K = t.rail_only ? 0 : t.spines;
  s.h = l.host_rate_bps;
  s.f = l.fabric_rate_bps > 0 ? l.fabric_rate_bps : l.host_rate_bps;
  s.nv = l.nvlink_data_rate_bps();
  if (s.G < 1)
    fail("topology.gpus_per_server", "a rail-optimized fabric needs >= 1 GPU per server");
  if (s.S < 1) fail("topology.servers_per_su", "a scalable unit needs >= 1 server");
  if (s.SU < 1) fail("topology.scalable_units", "a fabric needs >= 1 scalable unit");
  if (s.P < 1) fail("topology.planes", "a fabric needs >= 1 plane");
  // Refuse before building anything (the fat-tree and torus builders cap hosts the same way).
  if (int64_t{s.SU} * s.S * s.G > 1'000'000) {
    fail("topology.scalable_units",
         std::to_string(int64_t{s.SU} * s.S * s.G) +
             " GPUs (scalable_units x servers_per_su x gpus_per_server): at most 1000000");
  }
  if (s.h <= 0) fail("link.host_rate", "required: the NIC port rate, e.g. 400Gbps");
  if (s.nv <= 0) {
    fail("link.nvlink_rate",
         "required for kind rail-optimized: the GPU <-> NVSwitch rate per direction, e.g. "
         "3600Gbps (H100: 450 GB/s)");
  }

  s.N = t.nics_per_server > 0 ? t.nics_per_server : s.G;
  if (s.N % s.P != 0) {
    fail("topology.planes", std::to_string(s.P) + " planes do not divide the " +
                                std::to_string(s.N) +
                                " NICs of a server evenly (each plane gets the same rails)");
  }
  if (s.N % s.G != 0) {
    fail("topology.nics_per_server",
         std::to_string(s.N) + " NICs per server is not a multiple of the " + std::to_string(s.G) +
             " GPUs: every GPU needs the same number of NICs of its own " +
             "(GPUs sharing a NIC are not modelled)");
  }
  s.R = s.N / s.P;
  if (t.rails > 0 && t.rails != s.R) {
    fail("topology.nics_per_server",
         std::string(s.R > t.rails ? "a server with more NICs than rails"
                                   : "a server with fewer NICs than rails") +
             ": " + std::to_string(s.N) + " NICs over " + std::to_string(s.P) +
             " plane(s) need exactly " + std::to_string(s.R) + " rails per plane, rails is " +
             std::to_string(t.rails));
  }

  if (t.rail_only) {
    if (t.spines > 0) {
      fail("topology.spines", "a rail-only fabric has no spines; remove spines or rail_only");
    }
    if (t.oversubscription != 1.0) {
      fail("topology.oversubscription",
           "a rail-only fabric has no uplinks to oversubscribe; remove oversubscription");
    }
    s.U = 0;
    return s;
  }
  if (s.K < 1) {
    fail("topology.spines", "required (>= 1 per plane) unless rail_only is true");
  }

  check_derived_uplinks(sc, UplinkDerivation{"rail leaf", s.S, s.h, s.f, t.oversubscription, s.K,
                                             int64_t{s.SU} * s.N});
  // Uplinks that give the requested ratio, as a whole number spread evenly over the spines.
  const double host_cap_bps = static_cast<double>(s.S) * static_cast<double>(s.h);
  const double exact_uplinks = host_cap_bps / (t.oversubscription * static_cast<double>(s.f));
  s.U = std::lround(exact_uplinks);
  if (s.U < 1 || std::abs(exact_uplinks - static_cast<double>(s.U)) > 1e-9 * exact_uplinks ||
      s.U % s.K != 0) {
    std::ostringstream msg;
    msg << "oversubscription " << ratio_text(t.oversubscription) << " cannot be built: it needs "
        << exact_uplinks << " uplinks of " << gbps(s.f) << " Gb/s per rail leaf (" << s.S
        << " servers x " << gbps(s.h) << " Gb/s / ratio), which must be a whole multiple of the "
        << s.K << " spines per plane; ratios that can be built here:";
    msg << " " << nearest_buildable_ratios(s.S, s.h, s.K, s.f, sc.topology.oversubscription);
    fail("topology.oversubscription", msg.str());
  }
  return s;
}

/// The bisection closed form of the header: the minimum cut between hosts [0, H/2) and the
/// rest, switches, spine sides and the split server's NVSwitch placed where cheapest.
int64_t bisection_bps(const Shape& s) {
  const int64_t per_su = static_cast<int64_t>(s.S) * s.G;
  const int64_t half = per_su * s.SU / 2;
  const int64_t k = half / per_su, rem = half % per_su;
  const int64_t s_a = rem / s.G, g_a = rem % s.G;
  const int64_t m = s.N / s.G;
  const int64_t uplink_bps = static_cast<int64_t>(s.U) * s.f;
  // A leaf with `a` side-A hosts, its plane's spines on side A or B.
  auto leaf = [&](int64_t a, bool spines_on_a) {
    return spines_on_a ? std::min(a * s.h + uplink_bps, (s.S - a) * s.h)
                       : std::min(a * s.h, (s.S - a) * s.h + uplink_bps);
  };
  enum Mode { kEachGpu, kAllStay, kAllMove };
  // The split server's NVSwitch on side A or B; its GPUs on the other side either stay (their
  // NVLinks cross) or move (their host arcs are cut, they count on the NVSwitch's side).
  auto cut = [&](bool nvswitch_on_a, Mode mode) {
    int64_t total = 0;
    for (int p = 0; p < s.P; ++p) {
      int64_t best = INT64_MAX;
      for (bool spines_on_a : {false, true}) {
        int64_t sum = 0;
        for (int64_t su = 0; su < s.SU; ++su) {
          for (int n = p * s.R; n < (p + 1) * s.R; ++n) {
            if (su != k || rem == 0) {
              sum += leaf(su < k ? s.S : 0, spines_on_a);
              continue;
            }
            const bool on_a = n % s.G < g_a;
            const int64_t stay = leaf(s_a + on_a, spines_on_a);
            const int64_t move = leaf(s_a + !on_a, spines_on_a);
            if (g_a == 0 || on_a == nvswitch_on_a) {
              sum += stay;
            } else if (mode == kEachGpu) {  // m = 1: the GPU's only NIC is on this leaf
              sum += std::min(s.nv + stay, s.h + move);
            } else {
              sum += mode == kAllStay ? stay : move;
            }
          }
        }
        best = std::min(best, sum);
      }
      total += best;
    }
    const int64_t movable = g_a == 0 ? 0 : nvswitch_on_a ? s.G - g_a : g_a;
    if (mode == kAllStay) total += movable * s.nv;
    if (mode == kAllMove) total += movable * m * s.h;
    return total;
  };
  int64_t best = INT64_MAX;
  for (bool nvswitch_on_a : {false, true}) {
    if (m == 1) {
      best = std::min(best, cut(nvswitch_on_a, kEachGpu));
    } else {
      best = std::min({best, cut(nvswitch_on_a, kAllStay), cut(nvswitch_on_a, kAllMove)});
    }
  }
  return best;
}

}  // namespace

Fabric build_rail_optimized(const Scenario& sc) {
  const Shape s = validate(sc);
  const int64_t delay = sc.link.propagation_delay_ps;

  Fabric f;
  f.kind = "rail-optimized";
  f.gpus_per_server = s.G;
  // A GPU not on every plane (one NIC per GPU over several planes) reaches the other planes
  // through a peer GPU's NVLink, as NCCL's PXN does; so does every cross-rail hop of rail-only.
  f.hosts_forward = sc.topology.rail_only || s.N < s.P * s.G;
  f.default_routing = f.hosts_forward ? "ecmp" : "up_down";
  auto& g = f.graph;

  const int servers = s.SU * s.S;
  for (int v = 0; v < servers; ++v) {
    for (int gpu = 0; gpu < s.G; ++gpu) {
      NodeProps p;
      p.kind = NodeKind::kHost;
      p.role = Role::kGpu;
      p.name = "host" + std::to_string(v * s.G + gpu);
      p.tier = 0;
      p.server = v;
      p.rail = gpu;
      p.su = v / s.S;
      f.hosts.push_back(boost::add_vertex(p, g));
    }
  }
  std::vector<VertexId> nvswitches, leaves, spines;
  for (int v = 0; v < servers; ++v) {
    NodeProps p;
    p.kind = NodeKind::kSwitch;
    p.role = Role::kNvSwitch;
    p.name = "nvswitch" + std::to_string(v);
    p.tier = 1;
    p.server = v;
    p.su = v / s.S;
    nvswitches.push_back(boost::add_vertex(p, g));
  }
  for (int su = 0; su < s.SU; ++su) {
    for (int plane = 0; plane < s.P; ++plane) {
      for (int rail = 0; rail < s.R; ++rail) {
        NodeProps p;
        p.kind = NodeKind::kSwitch;
        p.role = Role::kLeaf;
        p.name = "leaf" + std::to_string(leaves.size());
        p.tier = 1;
        p.rail = rail;
        p.plane = plane;
        p.su = su;
        leaves.push_back(boost::add_vertex(p, g));
      }
    }
  }
  for (int plane = 0; plane < s.P; ++plane) {
    for (int k = 0; k < s.K; ++k) {
      NodeProps p;
      p.kind = NodeKind::kSwitch;
      p.role = Role::kSpine;
      p.name = "spine" + std::to_string(spines.size());
      p.tier = 2;
      p.plane = plane;
      spines.push_back(boost::add_vertex(p, g));
    }
  }

  // Network links first, so a GPU's NIC ports come before its NVLink port.
  const EdgeProps host_link{s.h, delay};
  const EdgeProps fabric_link{s.f, delay};
  EdgeProps nvlink{s.nv, 0};
  nvlink.nvlink = true;
  for (int v = 0; v < servers; ++v) {
    const int su = v / s.S;
    for (int n = 0; n < s.N; ++n) {
      const int plane = n / s.R, rail = n % s.R;
      const VertexId leaf = leaves[(static_cast<size_t>(su) * s.P + plane) * s.R + rail];
      boost::add_edge(f.hosts[static_cast<size_t>(v) * s.G + n % s.G], leaf, host_link, g);
    }
  }
  const long per_spine = s.K > 0 ? s.U / s.K : 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const int plane = g[leaves[i]].plane;
    for (int k = 0; k < s.K; ++k) {
      for (long j = 0; j < per_spine; ++j) {
        boost::add_edge(leaves[i], spines[static_cast<size_t>(plane) * s.K + k], fabric_link, g);
      }
    }
  }
  for (int v = 0; v < servers; ++v) {
    for (int gpu = 0; gpu < s.G; ++gpu) {
      boost::add_edge(f.hosts[static_cast<size_t>(v) * s.G + gpu], nvswitches[v], nvlink, g);
    }
  }

  f.switches = static_cast<int>(leaves.size() + spines.size());
  f.links = static_cast<int>(boost::num_edges(g)) - servers * s.G;
  f.oversubscription = sc.topology.rail_only ? 1.0
                                             : static_cast<double>(s.S) * static_cast<double>(s.h) /
                                                   (static_cast<double>(s.U) * s.f);
  f.bisection_bandwidth_bps = bisection_bps(s);
  return f;
}

FabricSplit split_rail_optimized(const Fabric& f) {
  const FabricGraph& g = f.graph;
  FabricSplit s;
  for (VertexId h : f.hosts) s.count = std::max(s.count, g[h].server + 1);
  s.units = "servers";
  s.scheme = "by server (" + std::to_string(s.count) + " servers, rail leaves with their SU, " +
             "spines spread)";
  s.unit_of.assign(boost::num_vertices(g), {0, 0});
  int leaves = 0;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) leaves += g[*v].role == Role::kLeaf;
  int leaf = 0;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const NodeProps& p = g[*v];
    if ((p.role == Role::kGpu || is_server_switch(p.role)) && p.server >= 0) {
      s.unit_of[*v] = {p.server, s.count};
    } else if (p.role == Role::kLeaf) {
      s.unit_of[*v] = {leaf++, leaves};
    }
  }
  return s;
}

}  // namespace fabricsim
