// Routing: every route is a real path over links that are up; Clos routes are valley-free;
// torus routes are dimension-ordered and take the shorter way round; ECMP spreads flows evenly;
// failed links are avoided, and a fabric they cut is refused.
#include <catch2/catch.hpp>
#include <cmath>

#include "../support.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/rng.hpp"

using namespace fabricsim;

namespace {

Scenario fat_tree(int k, double edge_o = 1.0, double agg_o = 1.0) {
  auto sc = testing::spine_leaf(1, 1, 1, 100'000'000'000, 1000, 0, 1 << 20, 4096);
  sc.topology = TopologyConfig{};
  sc.topology.kind = "fat-tree";
  sc.topology.k = k;
  sc.topology.oversubscription = edge_o;
  sc.topology.agg_oversubscription = agg_o;
  return sc;
}

Scenario torus(std::vector<int> dims, bool wrap) {
  auto sc = testing::spine_leaf(1, 1, 1, 100'000'000'000, 1000, 0, 1 << 20, 4096);
  sc.topology = TopologyConfig{};
  sc.topology.kind = "torus";
  sc.topology.dims = std::move(dims);
  sc.topology.wraparound = wrap;
  return sc;
}

/// The edge a walked hop took (the first non-failed one between the two nodes is what a port
/// picked; with parallel links any of them proves adjacency).
bool hop_is_up(const FabricGraph& g, VertexId a, VertexId b) {
  for (auto [e, end] = boost::out_edges(a, g); e != end; ++e) {
    if (boost::target(*e, g) == b && !g[*e].failed) return true;
  }
  return false;
}

/// Walks every host pair with random ECMP choices and checks the properties every routing
/// must have; returns the paths for further checks.
std::vector<std::vector<VertexId>> all_routes(const Fabric& f, const RoutingTable& r) {
  RngStream rng(7, "test_routing");
  std::vector<std::vector<VertexId>> paths;
  const FabricGraph& g = f.graph;
  for (size_t s = 0; s < f.hosts.size(); ++s) {
    for (size_t d = 0; d < f.hosts.size(); ++d) {
      if (s == d) continue;
      auto path =
          walk_route(f, r, int(s), int(d), [&](VertexId, size_t n) { return rng.next() % n; });
      REQUIRE(path.front() == f.hosts[s]);
      REQUIRE(path.back() == f.hosts[d]);
      CHECK(int(path.size()) - 1 == r.host_distance(int(s), int(d)));
      for (size_t i = 1; i < path.size(); ++i) REQUIRE(hop_is_up(g, path[i - 1], path[i]));
      for (size_t i = 1; i + 1 < path.size(); ++i) {
        if (!f.hosts_forward) REQUIRE(g[path[i]].kind == NodeKind::kSwitch);  // no host transit
      }
      paths.push_back(std::move(path));
    }
  }
  return paths;
}

bool valley_free(const FabricGraph& g, const std::vector<VertexId>& path) {
  bool descending = false;
  for (size_t i = 1; i < path.size(); ++i) {
    const int up = g[path[i]].tier - g[path[i - 1]].tier;
    if (up < 0) descending = true;
    if (up > 0 && descending) return false;
    if (up == 0) return false;  // no same-tier hops in a Clos
  }
  return true;
}

}  // namespace

TEST_CASE("spine-leaf: up-down routes are real, shortest and valley-free") {
  const auto sc = testing::spine_leaf(4, 3, 3, 100'000'000'000, 1000, 0, 1 << 20, 4096);
  const Fabric f = build_fabric(sc);
  const RoutingTable r = build_routes(sc, f);
  REQUIRE(r.algorithm() == RoutingAlgorithm::kUpDown);
  for (const auto& path : all_routes(f, r)) {
    CHECK(valley_free(f.graph, path));
    // Same leaf: host-leaf-host (hosts h and h' with h/3 == h'/3); else host-leaf-spine-leaf-host.
    const bool same_leaf = path.front() / 3 == path.back() / 3;  // hosts are vertices 0..11
    CHECK(path.size() == (same_leaf ? 3u : 5u));
  }
}

TEST_CASE("fat-tree: up-down routes are valley-free and 2, 4 or 6 hops (edge, pod, core)") {
  for (int k : {4, 6}) {
    const auto sc = fat_tree(k);
    const Fabric f = build_fabric(sc);
    const RoutingTable r = build_routes(sc, f);
    for (const auto& path : all_routes(f, r)) {
      CHECK(valley_free(f.graph, path));
      const size_t hops = path.size() - 1;
      CHECK((hops == 2 || hops == 4 || hops == 6));
    }
  }
}

TEST_CASE("a routing table holds one byte per destination and node, and 2 per host pair") {
  // k = 8 fat-tree, up-down: 128 hosts and 208 nodes. Each node has a handful of kinds of cells
  // (a down port per destination below it, the uplinks, none), so a byte per (destination,
  // node) whatever the two phases, and the hop counts take 2 bytes per host pair. The rest
  // (about 10 port sets and kinds per node: 8-byte sets, 4-byte kind entries per phase, a few
  // 2-byte ports, a 16-byte record per node) stays under 32 KiB. A table of 8-byte offsets per
  // (destination, node, phase) would hold 426 KB of cells alone.
  const auto sc = fat_tree(8);
  const Fabric f = build_fabric(sc);
  const RoutingTable r = build_routes(sc, f);
  REQUIRE(r.algorithm() == RoutingAlgorithm::kUpDown);
  const size_t hosts = 128, nodes = 128 + 80;
  REQUIRE(f.hosts.size() == hosts);
  REQUIRE(boost::num_vertices(f.graph) == nodes);
  const size_t cells_and_distances = hosts * nodes + hosts * hosts * 2;
  CHECK(r.memory_bytes() >= cells_and_distances);
  CHECK(r.memory_bytes() <= cells_and_distances + 32 * 1024);
}

TEST_CASE("torus and mesh: dimension-order routes correct dims in order, the short way round") {
  for (const auto& [dims, wrap] :
       {std::pair{std::vector<int>{4, 4}, true}, std::pair{std::vector<int>{3, 5}, false},
        std::pair{std::vector<int>{4, 3, 2}, true}}) {
    const auto sc = torus(dims, wrap);
    const Fabric f = build_fabric(sc);
    const RoutingTable r = build_routes(sc, f);
    REQUIRE(r.algorithm() == RoutingAlgorithm::kDimensionOrder);
    const FabricGraph& g = f.graph;
    for (const auto& path : all_routes(f, r)) {
      const auto a = g[path.front()].coord, b = g[path.back()].coord;
      // Hop count: 2 host links + per dimension the ring (or line) distance.
      int expected = 2;
      for (size_t k = 0; k < dims.size(); ++k) {
        const int delta = std::abs(a[k] - b[k]);
        expected += wrap ? std::min(delta, dims[k] - delta) : delta;
      }
      CHECK(int(path.size()) - 1 == expected);
      // Router-to-router hops change one coordinate, in non-decreasing dimension order.
      int last_dim = -1;
      for (size_t i = 2; i + 1 < path.size(); ++i) {
        const auto p = g[path[i - 1]].coord, q = g[path[i]].coord;
        int changed = -1, n_changed = 0;
        for (size_t k = 0; k < dims.size(); ++k) {
          if (p[k] != q[k]) changed = int(k), ++n_changed;
        }
        REQUIRE(n_changed == 1);
        CHECK(changed >= last_dim);
        last_dim = changed;
      }
    }
  }
}

TEST_CASE("ECMP hash spreads flows over equal-cost uplinks within 10%") {
  // 2 leaves x 1 host, 4 spines at a quarter of the host rate (1:1); 8000 one-packet flows.
  auto sc = testing::spine_leaf(2, 4, 1, 400'000'000'000, 0, 0, 64 << 20, 4096);
  sc.link.fabric_rate_bps = 100'000'000'000;
  testing::Bed bed(sc);
  const int flows = 8000;
  for (int i = 0; i < flows; ++i) bed.net->send(0, 1, 0, uint32_t(i), uint64_t(i));
  bed.sim.run();
  const VertexId leaf0 = 2;
  int uplinks = 0;
  for (const Port& p : bed.net->ports()) {
    if (p.node != leaf0 || bed.fabric.graph[p.peer_node].role != Role::kSpine) continue;
    ++uplinks;
    // Binomial(8000, 1/4): mean 2000, sd 38.7; 10% = 200 is over 5 sd.
    CHECK(std::abs(p.counters.tx_packets - flows / 4) <= flows / 4 / 10);
  }
  CHECK(uplinks == 4);
}

TEST_CASE("per-packet spraying spreads one flow's packets — per-flow keeps them on one path") {
  for (const char* mode : {"per_flow", "per_packet"}) {
    auto sc = testing::spine_leaf(2, 4, 1, 400'000'000'000, 0, 0, 64 << 20, 4096);
    sc.link.fabric_rate_bps = 100'000'000'000;
    sc.routing.load_balancing = mode;
    testing::Bed bed(sc);
    bed.net->send(0, 1, 4000 * 4096, 0, 0);
    bed.sim.run();
    int used = 0;
    for (const Port& p : bed.net->ports()) {
      if (p.node == 2 && bed.fabric.graph[p.peer_node].role == Role::kSpine)
        used += p.counters.tx_packets > 0;
    }
    CHECK(used == (std::string(mode) == "per_flow" ? 1 : 4));
  }
}

TEST_CASE("a failed link is avoided by routes and by traffic — a cut fabric is refused") {
  auto sc = testing::spine_leaf(2, 2, 2, 100'000'000'000, 0, 0, 64 << 20, 4096);
  sc.topology.failed_links = {"leaf0-spine0"};
  testing::Bed bed(sc);
  const FabricGraph& g = bed.fabric.graph;
  for (const auto& path : all_routes(bed.fabric, bed.routes)) {
    for (size_t i = 1; i < path.size(); ++i) {
      CHECK(!(g[path[i - 1]].name == "leaf0" && g[path[i]].name == "spine0"));
      CHECK(!(g[path[i - 1]].name == "spine0" && g[path[i]].name == "leaf0"));
    }
  }
  for (uint32_t flow = 0; flow < 64; ++flow) {
    bed.net->send(0, 2, 4096, flow, flow);
    bed.net->send(2, 0, 4096, flow, 64 + flow);
  }
  bed.sim.run();
  for (const Port& p : bed.net->ports()) {
    const bool on_failed = (g[p.node].name == "leaf0" && g[p.peer_node].name == "spine0") ||
                           (g[p.node].name == "spine0" && g[p.peer_node].name == "leaf0");
    if (on_failed) CHECK(p.counters.tx_packets == 0);
  }
  CHECK(bed.net->flows().size() == 128);  // every message delivered (ACKs go the other way)

  sc.topology.failed_links = {"leaf0-spine0", "leaf0-spine1"};
  CHECK_THROWS_WITH(build_fabric(sc),
                    Catch::Contains("topology.failed_links") && Catch::Contains("cut"));
  sc.topology.failed_links = {"leaf0-spnie1"};
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("did you mean 'spine1'"));
  sc.topology.failed_links = {"leaf0-host3"};
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("no link between leaf0 and host3"));
}

TEST_CASE("dimension-order routing refuses a failed link on its only path — ECMP goes around") {
  auto sc = torus({4, 4}, true);
  const Fabric f0 = build_fabric(sc);
  // Fail one ring link, named by its routers.
  sc.topology.failed_links = {"r0_0-r1_0"};
  const Fabric f = build_fabric(sc);
  CHECK_THROWS_WITH(build_routes(sc, f),
                    Catch::Contains("routing.algorithm") && Catch::Contains("failed link"));
  sc.routing.algorithm = "ecmp";
  const RoutingTable r = build_routes(sc, f);
  for (const auto& path : all_routes(f, r)) (void)path;  // all real, none over the failed link
}

TEST_CASE("a degraded link runs at its negotiated rate — above nominal is refused") {
  auto sc = testing::spine_leaf(2, 1, 1, 400'000'000'000, 0, 0, 64 << 20, 4096);
  sc.topology.degraded_links = {{"leaf0-spine0", 200'000'000'000}};
  const Fabric f = build_fabric(sc);
  int degraded = 0;
  for (auto [e, end] = boost::edges(f.graph); e != end; ++e)
    degraded += f.graph[*e].rate_bps == 200'000'000'000;
  CHECK(degraded == 1);
  sc.topology.degraded_links = {{"leaf0-spine0", 800'000'000'000}};
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("below its nominal rate"));
}

TEST_CASE("switch.radix: every network switch must fit, whatever the family") {
  // 4 leaves x 8 hosts at 1:1 with 2 spines: a leaf has 8 down + 8 up = 16 ports, a spine 4 x 4.
  auto sc = testing::spine_leaf(4, 2, 8, 100'000'000'000, 0, 0, 1 << 20, 4096);
  sc.sw.radix = 16;
  CHECK_NOTHROW(build_fabric(sc));
  sc.sw.radix = 15;
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("switch.radix") &&
                                          Catch::Contains("leaf0 needs 16 ports (8 down, 8 up)"));
  // A k = 8 fat-tree is built of radix-8 switches.
  auto ft = fat_tree(8);
  ft.sw.radix = 8;
  CHECK_NOTHROW(build_fabric(ft));
  ft.sw.radix = 6;
  CHECK_THROWS_WITH(build_fabric(ft), Catch::Contains("needs 8 ports"));
  // A 3D torus router has 6 neighbours and its accelerator.
  auto t = torus({4, 4, 4}, true);
  t.sw.radix = 6;
  CHECK_THROWS_WITH(build_fabric(t), Catch::Contains("needs 7 ports (1 down, 0 up, 6 across)"));
}

TEST_CASE("a link named twice, or 'degraded' to its nominal rate, is refused") {
  auto sc = testing::spine_leaf(2, 1, 1, 400'000'000'000, 0, 0, 64 << 20, 4096);
  sc.topology.failed_links = {"leaf0-spine0", "spine0-leaf0"};
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("names the same link as 'leaf0-spine0'"));
  sc.topology.failed_links = {"leaf0-spine0"};
  sc.topology.degraded_links = {{"leaf0-spine0", 100'000'000'000}};
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("names the same link"));
  sc.topology.failed_links = {};
  // Regression: a repeated key reported the first entry's rate as the nominal one.
  sc.topology.degraded_links = {{"leaf0-spine0", 100'000'000'000},
                                {"leaf0-spine0", 200'000'000'000}};
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("names the same link"));
  sc.topology.degraded_links = {{"leaf0-spine0", 400'000'000'000}};
  CHECK_THROWS_WITH(build_fabric(sc), Catch::Contains("below its nominal rate (400 Gb/s)"));
}

namespace {

/// Every route walk_route can take from host `s` to host `d`: each sequence of ECMP choices,
/// enumerated like an odometer.
std::vector<std::vector<VertexId>> every_route(const Fabric& f, const RoutingTable& r, int s,
                                               int d) {
  std::vector<std::vector<VertexId>> paths;
  std::vector<size_t> pick;
  for (;;) {
    std::vector<size_t> choices;
    auto path = walk_route(f, r, s, d, [&](VertexId, size_t n) {
      const size_t step = choices.size();
      choices.push_back(n);
      return step < pick.size() ? pick[step] : size_t{0};
    });
    paths.push_back(std::move(path));
    pick.resize(choices.size(), 0);
    size_t i = choices.size();
    while (i > 0 && pick[i - 1] + 1 == choices[i - 1]) --i;
    if (i == 0) break;
    ++pick[i - 1];
    pick.resize(i);
  }
  return paths;
}

}  // namespace

TEST_CASE("servers on spine-leaf and fat-tree: one server's GPUs meet on NVLink only") {
  constexpr int64_t kNv = 3'600'000'000'000;
  struct Case {
    const char* what;
    Scenario sc;
    int G;
  };
  std::vector<Case> cases;
  for (int G : {2, 4}) {  // 2 leaves x 4 GPUs, 2 spines: one leaf holds 2 or 1 whole servers
    cases.push_back(
        {"spine-leaf", testing::spine_leaf(2, 2, 4, 100'000'000'000, 1000, 0, 1 << 20, 4096), G});
  }
  for (int G : {2, 4}) {  // k = 4: 2 GPUs an edge, 4 a pod; G = 4 spans both edges of a pod
    cases.push_back({"fat-tree", fat_tree(4), G});
  }
  for (int G : {3, 6}) {  // k = 4, edge 3:1: 3 GPUs an edge, 6 a pod
    cases.push_back({"fat-tree 3:1", fat_tree(4, 3.0), G});
  }
  for (Case& c : cases) {
    c.sc.topology.gpus_per_server = c.G;
    c.sc.link.nvlink_rate_bps = kNv;
    for (const char* algorithm : {"auto", "ecmp", "up_down"}) {
      INFO(c.what << ", G = " << c.G << ", routing " << algorithm);
      c.sc.routing.algorithm = algorithm;
      const Fabric f = build_fabric(c.sc);
      const RoutingTable r = build_routes(c.sc, f);
      const FabricGraph& g = f.graph;
      const int H = static_cast<int>(f.hosts.size());
      for (int s = 0; s < H; ++s) {
        for (int d = 0; d < H; ++d) {
          if (s == d) continue;
          const auto paths = every_route(f, r, s, d);
          REQUIRE(!paths.empty());
          if (s / c.G == d / c.G) {  // host i is a GPU of server i / G
            CHECK(r.host_distance(s, d) == 2);
            CHECK(paths.size() == 1);  // the one NVSwitch, never the leaf or edge
            for (const auto& p : paths) {
              REQUIRE(p.size() == 3);
              CHECK(g[p[1]].role == Role::kNvSwitch);
              CHECK(g[p[1]].name == "nvswitch" + std::to_string(s / c.G));
            }
          } else {
            for (const auto& p : paths) {
              CHECK(int(p.size()) - 1 == r.host_distance(s, d));
              for (size_t i = 1; i + 1 < p.size(); ++i) {
                CHECK(g[p[i]].role != Role::kNvSwitch);
                CHECK(g[p[i]].kind == NodeKind::kSwitch);
              }
            }
          }
        }
      }
    }
  }
}
