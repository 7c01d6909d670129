// topologies/rail_optimized: counts, wiring and bisection of the rail-optimized fabric against
// closed forms written out here (DGX SuperPOD numbers), a max-flow between the host halves on
// small instances, routes through NVLink, and one section per input that cannot be built.
#include <boost/graph/connected_components.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sim/config/loader.hpp"
#include "topologies/rail_optimized.hpp"
#include "topologies/routing.hpp"

using fabricsim::build_rail_optimized;
using fabricsim::ConfigError;
using fabricsim::Fabric;
using fabricsim::FabricGraph;
using fabricsim::NodeKind;
using fabricsim::Role;
using fabricsim::Scenario;
using fabricsim::VertexId;

namespace {

constexpr int64_t kGbps = 1'000'000'000;

/// G GPUs per server, S servers per SU, SU units, K spines per plane; 400G NICs and fabric,
/// 3600 Gb/s NVLink (H100, 450 GB/s per direction).
Scenario rail(int G, int S, int SU, int K, double o = 1.0) {
  Scenario sc;
  sc.name = "test";
  sc.path = "test.yaml";
  sc.transport = "infiniband";
  sc.topology.kind = "rail-optimized";
  sc.topology.gpus_per_server = G;
  sc.topology.servers_per_su = S;
  sc.topology.scalable_units = SU;
  sc.topology.spines = K;
  sc.topology.oversubscription = o;
  sc.link.host_rate_bps = 400 * kGbps;
  sc.link.fabric_rate_bps = 400 * kGbps;
  sc.link.propagation_delay_ps = 250'000;
  sc.link.nvlink_rate_bps = 3600 * kGbps;
  sc.sw.latency_ps = 330'000;
  sc.sw.buffer_per_port_bytes = 1 << 20;
  sc.nic.mtu_bytes = 4096;
  return sc;
}

int count_role(const Fabric& f, Role r) {
  int n = 0;
  for (auto [v, end] = boost::vertices(f.graph); v != end; ++v) n += f.graph[*v].role == r;
  return n;
}

int count_nvlinks(const Fabric& f) {
  int n = 0;
  for (auto [e, end] = boost::edges(f.graph); e != end; ++e) n += f.graph[*e].nvlink;
  return n;
}

/// Edges between a vertex of role a and one of role b.
int count_links(const Fabric& f, Role a, Role b) {
  const FabricGraph& g = f.graph;
  int n = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const Role x = g[boost::source(*e, g)].role, y = g[boost::target(*e, g)].role;
    n += (x == a && y == b) || (x == b && y == a);
  }
  return n;
}

bool names_unique(const Fabric& f) {
  std::set<std::string> names;
  for (auto [v, end] = boost::vertices(f.graph); v != end; ++v) names.insert(f.graph[*v].name);
  return names.size() == boost::num_vertices(f.graph);
}

int components(const Fabric& f) {
  std::vector<int> c(boost::num_vertices(f.graph));
  return boost::connected_components(f.graph, c.data());
}

/// The network (non-NVLink) neighbours of vertex v, one per link.
std::vector<VertexId> network_peers(const Fabric& f, VertexId v) {
  std::vector<VertexId> out;
  for (auto [e, end] = boost::out_edges(v, f.graph); e != end; ++e) {
    if (!f.graph[*e].nvlink) out.push_back(boost::target(*e, f.graph));
  }
  return out;
}

/// Max flow, one direction, from hosts [0, H/2) to hosts [H/2, H): a super-source arc to each
/// first-half host and an arc from each second-half host to a super-sink, each capped at the
/// host's network link capacity; every link two opposite arcs of its rate.
int64_t host_halves_max_flow(const Fabric& f) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Flow = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<
          boost::edge_capacity_t, int64_t,
          boost::property<boost::edge_residual_capacity_t, int64_t,
                          boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const FabricGraph& g = f.graph;
  const size_t n = boost::num_vertices(g), src = n, dst = n + 1;
  Flow fg(n + 2);
  auto cap = boost::get(boost::edge_capacity, fg);
  auto rev = boost::get(boost::edge_reverse, fg);
  auto arc = [&](size_t u, size_t v, int64_t c) {
    const auto a = boost::add_edge(u, v, fg).first;
    const auto b = boost::add_edge(v, u, fg).first;
    cap[a] = c;
    cap[b] = 0;
    rev[a] = b;
    rev[b] = a;
  };
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    arc(boost::source(*e, g), boost::target(*e, g), g[*e].rate_bps);
    arc(boost::target(*e, g), boost::source(*e, g), g[*e].rate_bps);
  }
  const size_t hosts = f.hosts.size();
  for (size_t i = 0; i < hosts; ++i) {
    int64_t nic_bps = 0;
    for (auto [e, end] = boost::out_edges(f.hosts[i], g); e != end; ++e) {
      if (!g[*e].nvlink) nic_bps += g[*e].rate_bps;
    }
    if (i < hosts / 2) {
      arc(src, f.hosts[i], nic_bps);
    } else {
      arc(f.hosts[i], dst, nic_bps);
    }
  }
  return boost::push_relabel_max_flow(fg, src, dst);
}

/// The ConfigError `sc` must raise.
ConfigError error_for(const Scenario& sc) {
  try {
    build_rail_optimized(sc);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError");
  return ConfigError("", 0, 0, "", "");
}

}  // namespace

TEST_CASE("one DGX SuperPOD H100 scalable unit: 32 servers x 8 GPUs, 8 rail leaves, 4 spines") {
  // HARDWARE.md §4.1 (SuperPOD H100 compute fabric, Table 4): 1 SU = 8 leaves, 4 spines,
  // 256 leaf-spine cables; each QM9700 leaf 32 ports down, 32 up.
  const int G = 8, S = 32, K = 4;
  const Fabric f = build_rail_optimized(rail(G, S, 1, K));
  const int H = S * G;                      // 256 GPUs
  const int leaves = 1 * 1 * G;             // SU x planes x rails
  const int uplinks = S * 400 / (1 * 400);  // S x h / (o x f) = 32 per leaf
  REQUIRE(f.kind == "rail-optimized");
  REQUIRE(f.hosts.size() == size_t(H));
  CHECK(count_role(f, Role::kGpu) == H);
  CHECK(count_role(f, Role::kNvSwitch) == S);
  CHECK(count_role(f, Role::kLeaf) == leaves);
  CHECK(count_role(f, Role::kSpine) == K);
  CHECK(f.switches == leaves + K);  // NVSwitches not counted
  CHECK(count_links(f, Role::kGpu, Role::kLeaf) == H);
  CHECK(count_links(f, Role::kLeaf, Role::kSpine) == leaves * uplinks);  // 256, as Table 4
  CHECK(f.links == H + leaves * uplinks);                                // 512
  CHECK(count_nvlinks(f) == H);
  CHECK(count_links(f, Role::kGpu, Role::kNvSwitch) == H);
  CHECK(boost::num_edges(f.graph) == size_t(f.links + H));
  CHECK(f.gpus_per_server == G);
  CHECK_FALSE(f.hosts_forward);
  CHECK(f.default_routing == "up_down");
  CHECK(f.oversubscription == 1.0);
  // SU = 1, S even: the middle SU is cut through its host links, N x S/2 x h = 51.2 Tb/s.
  CHECK(f.bisection_bandwidth_bps == int64_t{G} * (S / 2) * 400 * kGbps);
  CHECK(f.bisection_bandwidth_bps == 51'200 * kGbps);
  CHECK(names_unique(f));
  CHECK(components(f) == 1);

  const FabricGraph& g = f.graph;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const auto& p = g[*v];
    switch (p.role) {
      case Role::kGpu:
        CHECK((p.kind == NodeKind::kHost && p.tier == 0 && p.su == 0));
        CHECK(boost::out_degree(*v, g) == 2);  // one NIC, one NVLink
        break;
      case Role::kNvSwitch:
        CHECK((p.kind == NodeKind::kSwitch && p.tier == 1 && p.server >= 0 && p.su == 0));
        CHECK(boost::out_degree(*v, g) == size_t(G));
        break;
      case Role::kLeaf:  // 64 ports of a QM9700: 32 down, 32 up
        CHECK((p.kind == NodeKind::kSwitch && p.tier == 1 && p.plane == 0 && p.su == 0));
        CHECK(boost::out_degree(*v, g) == size_t(S + uplinks));
        break;
      case Role::kSpine:  // 8 leaves x 8 parallel links
        CHECK((p.kind == NodeKind::kSwitch && p.tier == 2 && p.plane == 0));
        CHECK(boost::out_degree(*v, g) == size_t(leaves * uplinks / K));
        break;
      default:
        FAIL("unexpected role " << fabricsim::to_string(p.role));
    }
  }
  // Host i is GPU i % G of server i / G; its NIC goes to the rail-(i % G) leaf, its NVLink to
  // nvswitch(i / G).
  for (int i = 0; i < H; ++i) {
    const VertexId h = f.hosts[i];
    CHECK(g[h].name == "host" + std::to_string(i));
    CHECK(g[h].server == i / G);
    CHECK(g[h].rail == i % G);
    const auto peers = network_peers(f, h);
    REQUIRE(peers.size() == 1);
    CHECK(g[peers[0]].role == Role::kLeaf);
    CHECK(g[peers[0]].rail == i % G);
    for (auto [e, end] = boost::out_edges(h, g); e != end; ++e) {
      if (!g[*e].nvlink) continue;
      CHECK(g[boost::target(*e, g)].name == "nvswitch" + std::to_string(i / G));
      // NVLinks carry link.nvlink_efficiency (default 0.8) x link.nvlink_rate: 2880 Gb/s.
      CHECK(g[*e].rate_bps == 2880 * kGbps);
      CHECK(g[*e].delay_ps == 0);
    }
  }
}

TEST_CASE("four scalable units: 1,024 GPUs, 32 leaves, 16 spines, GPU g of an SU on one leaf") {
  // HARDWARE.md §4.1, Table 4 at 4 SU: 32 leaves, 16 spines, 1,024 leaf-spine cables.
  const int G = 8, S = 32, SU = 4, K = 16;
  const Fabric f = build_rail_optimized(rail(G, S, SU, K));
  const int H = SU * S * G, leaves = SU * G, uplinks = S;
  CHECK(f.hosts.size() == size_t(H));
  CHECK(count_role(f, Role::kNvSwitch) == SU * S);
  CHECK(count_role(f, Role::kLeaf) == leaves);
  CHECK(count_role(f, Role::kSpine) == K);
  CHECK(f.switches == leaves + K);
  CHECK(count_links(f, Role::kLeaf, Role::kSpine) == leaves * uplinks);  // 1,024
  CHECK(f.links == H + leaves * uplinks);
  CHECK(count_nvlinks(f) == H);
  for (auto [v, end] = boost::vertices(f.graph); v != end; ++v) {
    if (f.graph[*v].role == Role::kSpine) CHECK(boost::out_degree(*v, f.graph) == 64);
    if (f.graph[*v].role == Role::kLeaf) CHECK(boost::out_degree(*v, f.graph) == 64);
  }
  // SU even: the two halves meet only in the spines, SU/2 x N x U x f = H/2 x h.
  CHECK(f.bisection_bandwidth_bps == int64_t{SU / 2} * G * uplinks * 400 * kGbps);
  CHECK(f.bisection_bandwidth_bps == int64_t{H / 2} * 400 * kGbps);
  CHECK(names_unique(f));
  CHECK(components(f) == 1);

  // GPU g of every server of SU u reaches the same leaf, and no other (SU, g) reaches it.
  std::set<VertexId> all;
  for (int u = 0; u < SU; ++u) {
    for (int gpu = 0; gpu < G; ++gpu) {
      std::set<VertexId> seen;
      for (int s = 0; s < S; ++s) {
        for (VertexId l : network_peers(f, f.hosts[(u * S + s) * G + gpu])) seen.insert(l);
      }
      REQUIRE(seen.size() == 1);
      const auto& leaf = f.graph[*seen.begin()];
      CHECK((leaf.su == u && leaf.rail == gpu && leaf.plane == 0));
      all.insert(*seen.begin());
    }
  }
  CHECK(all.size() == size_t(leaves));
}

TEST_CASE("planes: the NICs split over the planes, leaves = SU x planes x rails") {
  SECTION("one NIC per GPU, 2 planes: GPU g on plane g / 4, rail g % 4") {
    const int G = 8, S = 4, SU = 2, K = 2, P = 2, R = G / P;
    Scenario sc = rail(G, S, SU, K);
    sc.topology.planes = P;
    const Fabric f = build_rail_optimized(sc);
    const int uplinks = S;  // S x h / (o x f)
    CHECK(count_role(f, Role::kLeaf) == SU * P * R);
    CHECK(count_role(f, Role::kSpine) == P * K);
    CHECK(f.switches == SU * P * R + P * K);
    CHECK(f.links == SU * S * G + SU * P * R * uplinks);
    CHECK(count_nvlinks(f) == SU * S * G);
    for (int i = 0; i < SU * S * G; ++i) {
      const auto peers = network_peers(f, f.hosts[i]);
      REQUIRE(peers.size() == 1);
      const auto& leaf = f.graph[peers[0]];
      CHECK((leaf.plane == i % G / R && leaf.rail == i % G % R && leaf.su == i / (S * G)));
    }
    // Uplinks stay in their plane.
    for (auto [e, end] = boost::edges(f.graph); e != end; ++e) {
      const auto& a = f.graph[boost::source(*e, f.graph)];
      const auto& b = f.graph[boost::target(*e, f.graph)];
      if (a.role == Role::kLeaf && b.role == Role::kSpine) CHECK(a.plane == b.plane);
    }
    CHECK(f.bisection_bandwidth_bps == int64_t{SU / 2} * G * uplinks * 400 * kGbps);
    CHECK(names_unique(f));
    CHECK(components(f) == 1);
  }
  SECTION("two NICs per GPU on two planes (DGX B300 twin-plane): GPU g on rail g of each") {
    const int G = 8, N = 16, S = 4, K = 2, P = 2, R = N / P;
    Scenario sc = rail(G, S, 1, K);
    sc.topology.nics_per_server = N;
    sc.topology.planes = P;
    const Fabric f = build_rail_optimized(sc);
    CHECK(count_role(f, Role::kLeaf) == P * R);
    CHECK(count_role(f, Role::kSpine) == P * K);
    CHECK(f.links == S * N + P * R * S);  // host links + S uplinks per leaf
    CHECK(count_nvlinks(f) == S * G);
    for (int i = 0; i < S * G; ++i) {
      const auto peers = network_peers(f, f.hosts[i]);
      REQUIRE(peers.size() == 2);
      CHECK(f.graph[peers[0]].plane == 0);
      CHECK(f.graph[peers[1]].plane == 1);
      CHECK(f.graph[peers[0]].rail == i % G);
      CHECK(f.graph[peers[1]].rail == i % G);
    }
    // SU = 1, S even: N x S/2 x h = H/2 x 2 NICs x h.
    CHECK(f.bisection_bandwidth_bps == int64_t{N} * (S / 2) * 400 * kGbps);
    CHECK(f.bisection_bandwidth_bps == int64_t{S * G / 2} * 2 * 400 * kGbps);
    CHECK(components(f) == 1);
  }
}

TEST_CASE("rail-only: no spines, cross-rail traffic crosses an NVSwitch and a GPU") {
  const int G = 8, S = 4;
  SECTION("one scalable unit is connected through NVLink") {
    Scenario sc = rail(G, S, 1, 0);
    sc.topology.rail_only = true;
    const Fabric f = build_rail_optimized(sc);
    CHECK(count_role(f, Role::kSpine) == 0);
    CHECK(count_role(f, Role::kLeaf) == G);
    CHECK(f.switches == G);
    CHECK(f.links == S * G);  // host links only
    CHECK(count_nvlinks(f) == S * G);
    CHECK(f.hosts_forward);
    CHECK(f.default_routing == "ecmp");
    CHECK(f.oversubscription == 1.0);
    CHECK(f.bisection_bandwidth_bps == int64_t{G} * (S / 2) * 400 * kGbps);  // N x S/2 x h
    CHECK(names_unique(f));
    CHECK(components(f) == 1);
    // host0 (server 0, GPU 0) to host9 (server 1, GPU 1): 4 hops through host1 or host8.
    const fabricsim::RoutingTable routes(f, fabricsim::RoutingAlgorithm::kEcmp);
    CHECK(routes.host_distance(0, 9) == 4);
    CHECK(routes.host_distance(0, 1) == 2);  // same server: over the NVSwitch
    CHECK(routes.host_distance(0, 8) == 2);  // same rail: over the rail leaf
    const auto path = fabricsim::walk_route(f, routes, 0, 9, [](VertexId, size_t) { return 0; });
    REQUIRE(path.size() == 5);
    CHECK(f.graph[path[2]].kind == NodeKind::kHost);
  }
  SECTION("two scalable units are not connected to each other: bisection 0") {
    const int SU = 2;
    Scenario sc = rail(G, S, SU, 0);
    sc.topology.rail_only = true;
    const Fabric f = build_rail_optimized(sc);
    CHECK(count_role(f, Role::kLeaf) == SU * G);
    CHECK(f.links == SU * S * G);
    CHECK(components(f) == SU);
    CHECK(f.bisection_bandwidth_bps == 0);
  }
}

TEST_CASE("up-down routes: same server over NVLink, same rail over one leaf, else a spine") {
  const Fabric f = build_rail_optimized(rail(8, 4, 1, 2));
  const fabricsim::RoutingTable routes(f, fabricsim::RoutingAlgorithm::kUpDown);
  CHECK(routes.host_distance(0, 1) == 2);
  CHECK(routes.host_distance(0, 8) == 2);
  CHECK(routes.host_distance(0, 9) == 4);
  const auto path = fabricsim::walk_route(f, routes, 0, 9, [](VertexId, size_t) { return 0; });
  REQUIRE(path.size() == 5);
  CHECK(f.graph[path[2]].role == Role::kSpine);
}

TEST_CASE("oversubscription 2:1 halves the uplinks and the bisection") {
  const int G = 8, S = 32, SU = 2, K = 4;
  const Fabric f = build_rail_optimized(rail(G, S, SU, K, 2.0));
  const int uplinks = S / 2;  // S x h / (2 x f)
  CHECK(count_links(f, Role::kLeaf, Role::kSpine) == SU * G * uplinks);
  CHECK(f.oversubscription == 2.0);
  CHECK(f.bisection_bandwidth_bps == int64_t{SU / 2} * G * uplinks * 400 * kGbps);
  CHECK(f.bisection_bandwidth_bps == int64_t{SU * S * G / 2} * 200 * kGbps);  // H/2 x h / o
}

TEST_CASE("bisection equals a max-flow between the host halves on small instances") {
  struct Case {
    int G, N, P, S, SU, K;
    double o;
    bool rail_only;
    int64_t h_gbps, f_gbps, nv_gbps;
  };
  // clang-format off
  const Case cases[] = {
    {2, 0, 1, 2, 1, 1, 1, false, 100, 100, 900},   // whole servers
    {2, 0, 1, 3, 1, 1, 1, false, 100, 100, 900},   // split server
    {4, 0, 1, 3, 3, 3, 1, false, 100, 100, 900},   // SU odd, S odd
    {2, 0, 1, 4, 3, 2, 2, false, 100, 100, 900},   // SU odd, S even, 2:1
    {4, 0, 1, 3, 1, 1, 3, false, 100, 100, 900},   // split server, 3:1
    {4, 0, 1, 3, 1, 0, 1, true, 100, 100, 900},    // rail-only, split server
    {2, 0, 1, 2, 3, 0, 1, true, 100, 100, 900},    // rail-only, 3 SUs
    {2, 0, 1, 2, 4, 0, 1, true, 100, 100, 900},    // rail-only, 4 SUs: 0
    {4, 4, 2, 3, 3, 1, 3, false, 100, 100, 900},   // 2 planes
    {2, 4, 2, 3, 1, 1, 1, false, 100, 100, 900},   // 2 NICs per GPU, 2 planes
    {2, 4, 1, 3, 3, 3, 1, false, 100, 100, 900},   // 2 NICs per GPU, 1 plane
    {4, 0, 1, 3, 1, 1, 3, false, 100, 100, 50},    // NVLink slower than a NIC
    {2, 0, 1, 5, 3, 5, 1, false, 100, 100, 150},   // NVLink between h and 2h
    {4, 0, 2, 5, 1, 1, 5, false, 100, 100, 150},   // same, 2 planes
    {3, 0, 1, 3, 1, 3, 1, false, 100, 100, 900},   // H odd
    {3, 0, 3, 5, 3, 1, 5, false, 100, 100, 120},   // H odd, 3 planes, slow NVLink
    {2, 0, 1, 4, 3, 2, 1, false, 100, 200, 900},   // fabric links 2 x host links
  };
  // clang-format on
  for (const Case& c : cases) {
    Scenario sc = rail(c.G, c.S, c.SU, c.K, c.o);
    sc.topology.nics_per_server = c.N;
    sc.topology.planes = c.P;
    sc.topology.rail_only = c.rail_only;
    sc.link.host_rate_bps = c.h_gbps * kGbps;
    sc.link.fabric_rate_bps = c.f_gbps * kGbps;
    sc.link.nvlink_rate_bps = c.nv_gbps * kGbps;
    const Fabric f = build_rail_optimized(sc);
    INFO("G=" << c.G << " N=" << c.N << " P=" << c.P << " S=" << c.S << " SU=" << c.SU << " K="
              << c.K << " o=" << c.o << " rail_only=" << c.rail_only << " nv=" << c.nv_gbps);
    CHECK(f.bisection_bandwidth_bps == host_halves_max_flow(f));
  }
}

TEST_CASE("2 NICs per GPU, a split server, NVLink below 2 x its NICs: an upper bound") {
  {
    Scenario sc = rail(2, 3, 1, 1);
    sc.topology.nics_per_server = 4;
    sc.topology.planes = 2;
    sc.link.host_rate_bps = 100 * kGbps;
    sc.link.fabric_rate_bps = 100 * kGbps;
    sc.link.nvlink_rate_bps = 300 * kGbps;
    const Fabric f = build_rail_optimized(sc);
    CHECK(f.bisection_bandwidth_bps >= host_halves_max_flow(f));
  }
}

TEST_CASE("inputs that cannot be built throw ConfigError naming the key") {
  SECTION("more NICs than rails") {
    Scenario sc = rail(8, 32, 1, 4);
    sc.topology.rails = 4;
    const ConfigError e = error_for(sc);
    CHECK(e.key_path() == "topology.nics_per_server");
    CHECK_THAT(e.message(), Catch::Contains("more NICs than rails"));
  }
  SECTION("fewer NICs than rails") {
    Scenario sc = rail(8, 32, 1, 4);
    sc.topology.rails = 16;
    CHECK(error_for(sc).key_path() == "topology.nics_per_server");
  }
  SECTION("NICs not a whole number per GPU") {
    Scenario sc = rail(8, 32, 1, 4);
    sc.topology.nics_per_server = 4;
    CHECK(error_for(sc).key_path() == "topology.nics_per_server");
    sc.topology.nics_per_server = 12;
    CHECK(error_for(sc).key_path() == "topology.nics_per_server");
  }
  SECTION("missing nvlink_rate") {
    Scenario sc = rail(8, 32, 1, 4);
    sc.link.nvlink_rate_bps = 0;
    CHECK(error_for(sc).key_path() == "link.nvlink_rate");
  }
  SECTION("unbuildable oversubscription: 32 x 400G / 3 is not a whole number of uplinks") {
    const ConfigError e = error_for(rail(8, 32, 1, 4, 3.0));
    CHECK(e.key_path() == "topology.oversubscription");
    // Buildable with 4 spines: 32 / (4 k) = 8, 4, 8/3, 2, 8/5, 4/3 … ; the four nearest 3:1
    // (by log ratio), largest first: 4:1, 8:3, 2:1, 8:5.
    CHECK_THAT(e.message(), Catch::Contains("ratios that can be built here: 4:1, 8:3, 2:1, 8:5"));
  }
  SECTION("uplinks not a multiple of the spines") {
    CHECK(error_for(rail(8, 32, 1, 5)).key_path() == "topology.oversubscription");
  }
  SECTION("planes not dividing the NICs") {
    Scenario sc = rail(8, 32, 1, 4);
    sc.topology.planes = 3;
    CHECK(error_for(sc).key_path() == "topology.planes");
  }
  SECTION("spines missing without rail_only") {
    CHECK(error_for(rail(8, 32, 1, 0)).key_path() == "topology.spines");
  }
  SECTION("spines given with rail_only") {
    Scenario sc = rail(8, 32, 1, 4);
    sc.topology.rail_only = true;
    CHECK(error_for(sc).key_path() == "topology.spines");
  }
  SECTION("oversubscription given with rail_only") {
    Scenario sc = rail(8, 32, 1, 0, 2.0);
    sc.topology.rail_only = true;
    CHECK(error_for(sc).key_path() == "topology.oversubscription");
  }
  SECTION("no servers") {
    CHECK(error_for(rail(8, 0, 1, 4)).key_path() == "topology.servers_per_su");
  }
}
