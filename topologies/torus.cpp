#include "topologies/torus.hpp"

#include "topologies/metrics.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.hpp"

namespace fabricsim {
namespace {

constexpr int64_t kMaxNodes = 1'000'000;

std::string dims_text(const std::vector<int>& dims) {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
  return s + "]";
}

}  // namespace

Fabric build_torus(const Scenario& sc) {
  const TopologyConfig& t = sc.topology;
  const LinkConfig& l = sc.link;
  const std::vector<int>& dims = t.dims;
  const int n = static_cast<int>(dims.size());
  const auto fail = [&sc](const char* key, const std::string& message) {
    throw key_error(sc, key, message);
  };
  if (n < 2 || n > 3) {
    fail("topology.dims",
         "a torus has 2 or 3 dimensions, got " + std::to_string(n) + " " + dims_text(dims));
  }
  int64_t nodes64 = 1;
  for (int k : dims) {
    if (k < 2) fail("topology.dims", "a torus dimension must be >= 2, got " + dims_text(dims));
    if (k > std::numeric_limits<int16_t>::max()) {
      fail("topology.dims", "a torus dimension must be <= 32767, got " + dims_text(dims));
    }
    nodes64 *= k;
  }
  if (nodes64 > kMaxNodes) {
    fail("topology.dims", dims_text(dims) + " gives " + std::to_string(nodes64) +
                              " routers; at most " + std::to_string(kMaxNodes) + " are supported");
  }
  if (!t.dim_rates_bps.empty() && static_cast<int>(t.dim_rates_bps.size()) != n) {
    fail("topology.dim_rates", "needs one rate per dimension: " + std::to_string(n) +
                                   " dimensions " + dims_text(dims) + ", but it has " +
                                   std::to_string(t.dim_rates_bps.size()));
  }
  if (std::any_of(t.dim_rates_bps.begin(), t.dim_rates_bps.end(),
                  [](int64_t r) { return r <= 0; })) {
    fail("topology.dim_rates", "every rate must be positive");
  }
  const int nodes = static_cast<int>(nodes64);
  const int64_t fabric_rate = l.fabric_rate_bps > 0 ? l.fabric_rate_bps : l.host_rate_bps;
  std::vector<int64_t> rate_bps(n, fabric_rate);
  if (!t.dim_rates_bps.empty()) rate_bps = t.dim_rates_bps;
  std::vector<int> stride(n, 1);  // node index step along dimension d
  for (int d = 1; d < n; ++d) stride[d] = stride[d - 1] * dims[d - 1];
  const auto coord = [&](int i, int d) { return (i / stride[d]) % dims[d]; };

  Fabric f;
  f.kind = "torus";
  f.default_routing = "dimension_order";
  f.dims = dims;
  f.wraparound = t.wraparound;
  auto& g = f.graph;
  for (int pass = 0; pass < 2; ++pass) {  // hosts, then routers
    for (int i = 0; i < nodes; ++i) {
      NodeProps p;
      std::string suffix;
      for (int d = 0; d < n; ++d) {
        p.coord[d] = static_cast<int16_t>(coord(i, d));
        if (d > 0) suffix += '_';  // (not `(d ? "_" : "") + …`: GCC 12 -Wrestrict false positive)
        suffix += std::to_string(coord(i, d));
      }
      if (pass == 0) {
        p.name = "host" + std::to_string(i);
        f.hosts.push_back(boost::add_vertex(std::move(p), g));
      } else {
        p.kind = NodeKind::kSwitch;
        p.role = Role::kRouter;
        p.tier = 1;
        p.name = "r" + suffix;
        boost::add_vertex(std::move(p), g);
      }
    }
  }
  const auto router = [nodes](int i) { return static_cast<VertexId>(nodes + i); };

  EdgeProps host_link;
  host_link.rate_bps = l.host_rate_bps;
  host_link.delay_ps = l.propagation_delay_ps;
  for (int i = 0; i < nodes; ++i) boost::add_edge(f.hosts[i], router(i), host_link, g);
  for (int d = 0; d < n; ++d) {
    EdgeProps link;
    link.rate_bps = rate_bps[d];
    link.delay_ps = l.propagation_delay_ps;
    link.dim = d;
    for (int i = 0; i < nodes; ++i) {
      if (coord(i, d) + 1 < dims[d]) {
        boost::add_edge(router(i), router(i + stride[d]), link, g);
      } else if (t.wraparound && dims[d] > 2) {  // size 2: the direct link is the ring
        boost::add_edge(router(i), router(i - (dims[d] - 1) * stride[d]), link, g);
      }
    }
  }

  f.switches = nodes;
  f.links = static_cast<int>(boost::num_edges(g));
  f.oversubscription = 1.0;
  const bool all_even = std::all_of(dims.begin(), dims.end(), [](int k) { return k % 2 == 0; });
  int64_t bisection_bps = int64_t{nodes / 2} * l.host_rate_bps;
  for (int d = 0; d < n; ++d) {
    const int64_t per_line = t.wraparound && dims[d] > 2 ? 2 : 1;
    bisection_bps = std::min(bisection_bps, per_line * (nodes / dims[d]) * rate_bps[d]);
  }
  // With an odd dimension a balanced cut cannot follow a plane: no closed form; the max-flow
  // across the host-number halves is exact for that cut (an upper bound on the bisection).
  if (!all_even) bisection_bps = host_halves_max_flow_bps(f);
  f.bisection_bandwidth_bps = bisection_bps;
  return f;
}

FabricSplit split_torus(const Fabric& f) {
  FabricSplit s;
  if (f.dims.empty()) return s;
  const FabricGraph& g = f.graph;
  int dim = 0;
  for (int d = 1; d < static_cast<int>(f.dims.size()); ++d) {
    if (f.dims[d] >= f.dims[dim]) dim = d;
  }
  s.count = f.dims[dim];
  s.units = "layers along dim " + std::to_string(dim);
  s.scheme = "slabs along dim " + std::to_string(dim) + " (size " + std::to_string(s.count) + ")";
  s.unit_of.assign(boost::num_vertices(g), {0, 0});
  // Routers and hosts both carry their coordinates.
  for (auto [v, end] = boost::vertices(g); v != end; ++v)
    s.unit_of[*v] = {g[*v].coord[dim], s.count};
  return s;
}

}  // namespace fabricsim
