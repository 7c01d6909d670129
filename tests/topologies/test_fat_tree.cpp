// topologies/fat_tree: counts, wiring and bisection of the (oversubscribed) k-ary fat-tree
// against closed forms written out here, and one section per input that cannot be built.
#include <boost/graph/connected_components.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/config/loader.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/metrics.hpp"
#include "topology_support.hpp"

using fabricsim::build_fat_tree;
using fabricsim::ConfigError;
using fabricsim::Fabric;
using fabricsim::FabricGraph;
using fabricsim::NodeKind;
using fabricsim::Role;
using fabricsim::Scenario;
using fabricsim::VertexId;

using fabricsim::testing::config_error;
using fabricsim::testing::max_flow_bps;

namespace {

constexpr int64_t kGbps = 1'000'000'000;

Scenario fat_tree(int k, double o_e = 1.0, double o_a = 1.0, int64_t host_rate_bps = 400 * kGbps,
                  int64_t fabric_rate_bps = 400 * kGbps) {
  Scenario sc;
  sc.name = "test";
  sc.path = "test.yaml";
  sc.topology.kind = "fat-tree";
  sc.topology.k = k;
  sc.topology.oversubscription = o_e;
  sc.topology.agg_oversubscription = o_a;
  sc.link.host_rate_bps = host_rate_bps;
  sc.link.fabric_rate_bps = fabric_rate_bps;
  sc.link.propagation_delay_ps = 500'000;
  return sc;
}

/// The expected shape of a fat-tree, from its port counts (derived in the test, not the code):
/// pods = k (each core has k ports, one per pod), edges per pod = d_a, aggs per pod = u_e,
/// cores = u_e·u_a, hosts = k·d_a·h_e; links = hosts (host) + k·d_a·u_e (edge-agg: each edge
/// has one link to each of the u_e aggs of its pod) + k·u_e·u_a (agg-core).
struct Shape {
  int k, h_e, u_e, d_a, u_a;
  int hosts() const { return k * d_a * h_e; }
  int edges() const { return k * d_a; }
  int aggs() const { return k * u_e; }
  int cores() const { return u_e * u_a; }
  int links() const { return hosts() + k * d_a * u_e + k * u_e * u_a; }
};

/// Checks counts, roles, tiers, pods, degrees, the wiring of every switch, unique names and
/// connectivity against `s`; host links at host_bps, switch links at fabric_bps.
void check_shape(const Fabric& f, const Shape& s, int64_t host_bps = 400 * kGbps,
                 int64_t fabric_bps = 400 * kGbps) {
  const FabricGraph& g = f.graph;
  REQUIRE(f.kind == "fat-tree");
  REQUIRE(f.default_routing == "up_down");
  REQUIRE(static_cast<int>(f.hosts.size()) == s.hosts());
  REQUIRE(f.switches == s.edges() + s.aggs() + s.cores());
  REQUIRE(f.links == s.links());
  REQUIRE(static_cast<int>(boost::num_edges(g)) == s.links());
  REQUIRE(static_cast<int>(boost::num_vertices(g)) == s.hosts() + f.switches);

  std::map<Role, int> by_role;
  std::set<std::string> names;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const auto& p = g[*v];
    ++by_role[p.role];
    names.insert(p.name);
    std::vector<VertexId> nbrs;
    for (auto [e, eend] = boost::out_edges(*v, g); e != eend; ++e) {
      nbrs.push_back(boost::target(*e, g));
      const auto& link = g[*e];
      REQUIRE(link.delay_ps == 500'000);
      const bool host_link =
          g[boost::target(*e, g)].kind == NodeKind::kHost || p.kind == NodeKind::kHost;
      REQUIRE(link.rate_bps == (host_link ? host_bps : fabric_bps));
    }
    const int index = std::stoi(p.name.substr(p.name.find_first_of("0123456789")));
    switch (p.role) {
      case Role::kGpu: {
        REQUIRE(p.kind == NodeKind::kHost);
        REQUIRE(p.name == "host" + std::to_string(index));
        REQUIRE(p.tier == 0);
        REQUIRE(p.su == index / (s.h_e * s.d_a));
        REQUIRE(nbrs.size() == 1);
        REQUIRE(g[nbrs[0]].name == "edge" + std::to_string(index / s.h_e));
        break;
      }
      case Role::kEdge: {
        REQUIRE(p.tier == 1);
        REQUIRE(p.su == index / s.d_a);
        REQUIRE(static_cast<int>(nbrs.size()) == s.h_e + s.u_e);
        std::set<std::string> aggs;
        int hosts = 0;
        for (VertexId n : nbrs) {
          if (g[n].role == Role::kGpu) {
            ++hosts;
          } else {
            REQUIRE(g[n].role == Role::kAgg);
            REQUIRE(g[n].su == p.su);
            aggs.insert(g[n].name);
          }
        }
        REQUIRE(hosts == s.h_e);
        REQUIRE(static_cast<int>(aggs.size()) == s.u_e);  // one link to each agg of the pod
        break;
      }
      case Role::kAgg: {
        REQUIRE(p.tier == 2);
        REQUIRE(p.su == index / s.u_e);
        REQUIRE(static_cast<int>(nbrs.size()) == s.d_a + s.u_a);
        std::set<int> cores;
        int edges = 0;
        for (VertexId n : nbrs) {
          if (g[n].role == Role::kEdge) {
            REQUIRE(g[n].su == p.su);
            ++edges;
          } else {
            REQUIRE(g[n].role == Role::kCore);
            cores.insert(std::stoi(g[n].name.substr(4)));
          }
        }
        REQUIRE(edges == s.d_a);
        // Local agg a links to cores a·u_a … a·u_a + u_a − 1.
        std::set<int> expected;
        for (int j = 0; j < s.u_a; ++j) expected.insert((index % s.u_e) * s.u_a + j);
        REQUIRE(cores == expected);
        break;
      }
      case Role::kCore: {
        REQUIRE(p.tier == 3);
        REQUIRE(static_cast<int>(nbrs.size()) == s.k);
        std::set<int> pods;
        for (VertexId n : nbrs) {
          REQUIRE(g[n].role == Role::kAgg);
          pods.insert(g[n].su);
        }
        REQUIRE(static_cast<int>(pods.size()) == s.k);  // one link to every pod
        break;
      }
      default:
        FAIL("unexpected role " << fabricsim::to_string(p.role));
    }
    if (p.role != Role::kGpu) REQUIRE(p.kind == NodeKind::kSwitch);
  }
  REQUIRE(by_role[Role::kGpu] == s.hosts());
  REQUIRE(by_role[Role::kEdge] == s.edges());
  REQUIRE(by_role[Role::kAgg] == s.aggs());
  REQUIRE(by_role[Role::kCore] == s.cores());
  REQUIRE(names.size() == boost::num_vertices(g));

  std::vector<int> component(boost::num_vertices(g));
  REQUIRE(boost::connected_components(g, component.data()) == 1);
}

/// Pods 0 … k/2 − 1 (hosts 0 … H/2 − 1) on one side.
std::vector<bool> first_half(const Fabric& f) {
  std::vector<bool> in_a(f.hosts.size());
  for (size_t i = 0; i < in_a.size(); ++i) in_a[i] = i < in_a.size() / 2;
  return in_a;
}

}  // namespace

TEST_CASE("fat-tree 1:1 for k = 2, 4, 8, 16 matches k^3/4 hosts, 5k^2/4 switches, 3k^3/4 links") {
  for (int k : {2, 4, 8, 16}) {
    INFO("k = " << k);
    const Fabric f = build_fat_tree(fat_tree(k));
    check_shape(f, Shape{k, k / 2, k / 2, k / 2, k / 2});
    // Al-Fares et al.: k pods of k/2 edge + k/2 agg switches, (k/2)^2 cores, k^3/4 hosts.
    // Links: k^3/4 host links + k·(k/2)·(k/2) = k^3/4 edge-agg + (k/2)^2·k = k^3/4 agg-core.
    REQUIRE(static_cast<int>(f.hosts.size()) == k * k * k / 4);
    REQUIRE(f.switches == 5 * k * k / 4);
    REQUIRE(f.links == k * k * k / 4 + k * k * k / 2);
    REQUIRE(f.oversubscription == 1.0);
    // Bisection: all k^3/8 hosts of one half at full rate.
    REQUIRE(f.bisection_bandwidth_bps == int64_t{k} * k * k / 8 * 400 * kGbps);
  }
  // Spelled out for k = 4: 16 hosts, 8 edges + 8 aggs + 4 cores, 16 + 16 + 16 links.
  const Fabric f4 = build_fat_tree(fat_tree(4));
  REQUIRE(f4.hosts.size() == 16);
  REQUIRE(f4.switches == 20);
  REQUIRE(f4.links == 48);
}

TEST_CASE("fat-tree with oversubscribed edge and aggregation tiers has the derived port counts") {
  SECTION("k = 8, edge 3:1: 6 host ports + 2 uplinks per edge") {
    const Fabric f = build_fat_tree(fat_tree(8, 3.0));
    // h_e = 8·3/4 = 6, u_e = 2; d_a = u_a = 4. Hosts 8·4·6 = 192; edges 32, aggs 16, cores 8;
    // links 192 + 8·4·2 + 8·2·4 = 320.
    check_shape(f, Shape{8, 6, 2, 4, 4});
    REQUIRE(f.hosts.size() == 192);
    REQUIRE(f.switches == 32 + 16 + 8);
    REQUIRE(f.links == 320);
    REQUIRE(f.oversubscription == 3.0);
    // (k/2) × min(4·6, 4·2, 2·4) × 400G = 4 × 8 × 400G
    REQUIRE(f.bisection_bandwidth_bps == 4 * 8 * 400 * kGbps);
  }
  SECTION("k = 8, edge 3:1 and agg 3:1") {
    const Fabric f = build_fat_tree(fat_tree(8, 3.0, 3.0));
    // h_e = 6, u_e = 2, d_a = 6, u_a = 2. Hosts 8·6·6 = 288; edges 48, aggs 16, cores 4;
    // links 288 + 8·6·2 + 8·2·2 = 416.
    check_shape(f, Shape{8, 6, 2, 6, 2});
    REQUIRE(f.hosts.size() == 288);
    REQUIRE(f.switches == 48 + 16 + 4);
    REQUIRE(f.links == 416);
    // End to end (regression: was the edge tier only, 3): a pod's 36 host ports over the 4 uplinks
    // its aggregation tier has to the cores = 9:1, the product of the two tiers.
    REQUIRE(f.oversubscription == 9.0);
    // 4 × min(6·6, 6·2, 2·2) × 400G = 4 × 4 × 400G
    REQUIRE(f.bisection_bandwidth_bps == 4 * 4 * 400 * kGbps);
  }
  SECTION("k = 8, edge 5:3 (a ratio that is not n:1), given exactly or at 6 digits") {
    for (double o : {5.0 / 3.0, 1.66667}) {
      const Fabric f = build_fat_tree(fat_tree(8, o));
      // h_e = 5, u_e = 3, d_a = u_a = 4. Hosts 8·4·5 = 160; edges 32, aggs 24, cores 12;
      // links 160 + 8·4·3 + 8·3·4 = 352.
      check_shape(f, Shape{8, 5, 3, 4, 4});
      REQUIRE(f.links == 352);
      REQUIRE(f.oversubscription == Approx(5.0 / 3.0));
      // 4 × min(4·5, 4·3, 3·4) × 400G = 4 × 12 × 400G
      REQUIRE(f.bisection_bandwidth_bps == 4 * 12 * 400 * kGbps);
    }
  }
}

TEST_CASE("fat-tree host and fabric rates: oversubscription in capacity, bisection per tier") {
  // k = 4 at 1:1 ports, hosts at 400G, switch links at 100G: the edge tier is 2·400 : 2·100.
  Scenario sc = fat_tree(4, 1.0, 1.0, 400 * kGbps, 100 * kGbps);
  const Fabric f = build_fat_tree(sc);
  check_shape(f, Shape{4, 2, 2, 2, 2}, 400 * kGbps, 100 * kGbps);
  REQUIRE(f.oversubscription == 4.0);
  // 2 × min(2·2·400G, 2·2·100G, 2·2·100G) = 800G
  REQUIRE(f.bisection_bandwidth_bps == 800 * kGbps);
  // fabric_rate 0 means host_rate: 2 × 4·400G = 3.2T, all k^3/8 = 8 hosts of a half at 400G.
  sc.link.fabric_rate_bps = 0;
  REQUIRE(build_fat_tree(sc).bisection_bandwidth_bps == 8 * 400 * kGbps);
}

TEST_CASE("fat-tree bisection equals the max flow between the two halves of the pods") {
  struct Case {
    int k;
    double o_e, o_a;
    int64_t host_bps, fabric_bps;
  };
  for (const Case& c :
       {Case{2, 1, 1, 400 * kGbps, 400 * kGbps}, Case{4, 1, 1, 400 * kGbps, 400 * kGbps},
        Case{8, 1, 1, 400 * kGbps, 400 * kGbps}, Case{8, 3, 1, 400 * kGbps, 400 * kGbps},
        Case{8, 3, 3, 400 * kGbps, 400 * kGbps}, Case{8, 1, 3, 400 * kGbps, 400 * kGbps},
        Case{8, 5.0 / 3.0, 7, 200 * kGbps, 400 * kGbps}, Case{4, 1, 3, 400 * kGbps, 100 * kGbps}}) {
    INFO("k = " << c.k << ", o_e = " << c.o_e << ", o_a = " << c.o_a);
    const Fabric f = build_fat_tree(fat_tree(c.k, c.o_e, c.o_a, c.host_bps, c.fabric_bps));
    REQUIRE(f.bisection_bandwidth_bps == max_flow_bps(f, first_half(f)));
  }
}

TEST_CASE("fat-tree inputs that cannot be built throw ConfigError naming the key") {
  SECTION("odd k") {
    const std::string what = config_error([] { build_fat_tree(fat_tree(5)); });
    REQUIRE_THAT(what, Catch::Contains("topology.k: k must be even"));
  }
  SECTION("k below 2") {
    const std::string what = config_error([] { build_fat_tree(fat_tree(0)); });
    REQUIRE_THAT(what, Catch::Contains("topology.k: k must be even and >= 2"));
  }
  SECTION("edge ratio that does not divide the radix names the ratios k allows") {
    // k = 8: u_e = 8/(1+o) must be 1…4: o = 7:1, 3:1, 5:3, 1:1. 2:1 needs 8/3 uplinks.
    const std::string what = config_error([] { build_fat_tree(fat_tree(8, 2.0)); });
    REQUIRE_THAT(what, Catch::StartsWith("test.yaml: topology.oversubscription: 2:1"));
    REQUIRE_THAT(what, Catch::Contains("with k = 8: 1:1, 5:3, 3:1, 7:1"));
  }
  SECTION("aggregation ratio that does not divide the radix names the ratios k allows") {
    const std::string what = config_error([] { build_fat_tree(fat_tree(4, 1.0, 2.0)); });
    REQUIRE_THAT(what, Catch::StartsWith("test.yaml: topology.agg_oversubscription: 2:1"));
    REQUIRE_THAT(what, Catch::Contains("with k = 4: 1:1, 3:1"));
  }
  SECTION("a ratio below 1 is not offered") {
    const std::string what = config_error([] { build_fat_tree(fat_tree(8, 1.0 / 3.0)); });
    REQUIRE_THAT(what, Catch::Contains("topology.oversubscription"));
  }
  SECTION("large k lists the ratios nearest the request") {
    // k = 64, 2:1 needs 64/3 uplinks; the nearest buildable are 43:21 (u = 21), 21:11 (u = 22).
    const std::string what = config_error([] { build_fat_tree(fat_tree(64, 2.0)); });
    REQUIRE_THAT(what, Catch::Contains("topology.oversubscription"));
    REQUIRE_THAT(what, Catch::Contains("21:11, 43:21"));
    REQUIRE_THAT(what, Catch::Contains("..."));
  }
  SECTION("too many hosts") {
    // k = 200 at 1:1: 200^3/4 = 2,000,000 hosts
    const std::string what = config_error([] { build_fat_tree(fat_tree(200)); });
    REQUIRE_THAT(what, Catch::Contains("topology.k: k = 200 gives 2000000 hosts"));
  }
}

namespace {

/// Links of `f` with `nvlink` set.
int count_nvlinks(const Fabric& f) {
  int n = 0;
  for (auto [e, end] = boost::edges(f.graph); e != end; ++e) n += f.graph[*e].nvlink;
  return n;
}

}  // namespace

TEST_CASE(
    "fat-tree pods: pods x d_a x h_e hosts, the same u_e x u_a cores, fewer pods fewer links") {
  struct Case {
    int k;
    double o_e, o_a;
    int pods;
    Shape s;  // the port counts, derived by hand from k and the ratios
  };
  for (const Case& c :
       {Case{4, 1, 1, 2, Shape{4, 2, 2, 2, 2}}, Case{4, 1, 1, 1, Shape{4, 2, 2, 2, 2}},
        Case{4, 1, 1, 3, Shape{4, 2, 2, 2, 2}}, Case{8, 3, 1, 2, Shape{8, 6, 2, 4, 4}},
        Case{8, 3, 1, 6, Shape{8, 6, 2, 4, 4}}, Case{8, 1, 3, 5, Shape{8, 4, 4, 6, 2}},
        Case{16, 1, 1, 4, Shape{16, 8, 8, 8, 8}}}) {
    INFO("k = " << c.k << ", o_e = " << c.o_e << ", o_a = " << c.o_a << ", pods = " << c.pods);
    Scenario sc = fat_tree(c.k, c.o_e, c.o_a);
    sc.topology.pods = c.pods;
    const Fabric f = build_fat_tree(sc);
    const Shape& s = c.s;
    const int hosts = c.pods * s.d_a * s.h_e;
    CHECK(static_cast<int>(f.hosts.size()) == hosts);
    CHECK(f.switches == c.pods * s.d_a + c.pods * s.u_e + s.u_e * s.u_a);
    CHECK(f.links == hosts + c.pods * s.d_a * s.u_e + c.pods * s.u_e * s.u_a);
    CHECK(static_cast<int>(boost::num_edges(f.graph)) == f.links);
    std::map<Role, int> by_role;
    for (auto [v, end] = boost::vertices(f.graph); v != end; ++v) {
      const auto& p = f.graph[*v];
      ++by_role[p.role];
      if (p.role == Role::kCore) {
        // One port used per built pod: k - pods left free.
        CHECK(static_cast<int>(boost::out_degree(*v, f.graph)) == c.pods);
      }
      if (p.role == Role::kGpu) CHECK(p.su < c.pods);
    }
    CHECK(by_role[Role::kCore] == s.u_e * s.u_a);
    CHECK(by_role[Role::kEdge] == c.pods * s.d_a);
    CHECK(by_role[Role::kAgg] == c.pods * s.u_e);
    // A pod's capacities by tier (host ports, edge uplinks, agg uplinks), all links at 400G.
    const int64_t tier_min =
        std::min({int64_t{s.d_a} * s.h_e, int64_t{s.d_a} * s.u_e, int64_t{s.u_e} * s.u_a}) * 400 *
        kGbps;
    if (c.pods % 2 == 0) {
      CHECK(f.bisection_bandwidth_bps == c.pods / 2 * tier_min);
      CHECK(fabricsim::host_halves_max_flow_bps(f) == c.pods / 2 * tier_min);
    }
    if (c.pods % 2 == 1) {  // no closed form: the builder takes the max-flow
      CHECK(f.bisection_bandwidth_bps == fabricsim::host_halves_max_flow_bps(f));
    }
    // Even or odd: the test's own max-flow across the host halves.
    CHECK(f.bisection_bandwidth_bps == max_flow_bps(f, first_half(f)));
    std::vector<int> component(boost::num_vertices(f.graph));
    CHECK(boost::connected_components(f.graph, component.data()) == 1);
  }
}

TEST_CASE("fat-tree pods: hand-counted bisections of one and three pods of a 1:1 k = 4") {
  // One pod: 4 hosts under 2 edges; the halves are the two edges, joined by 2 uplinks each:
  // 2 x 400G.
  Scenario one = fat_tree(4);
  one.topology.pods = 1;
  CHECK(build_fat_tree(one).bisection_bandwidth_bps == 2 * 400 * kGbps);
  // Three pods, 12 hosts: pod 0 and the first edge of pod 1 against the rest. 1:1 at every
  // tier, so all 6 hosts of a half send at full rate: 6 x 400G.
  Scenario three = fat_tree(4);
  three.topology.pods = 3;
  CHECK(build_fat_tree(three).bisection_bandwidth_bps == 6 * 400 * kGbps);
  // pods = k is the default, the full fat-tree.
  Scenario full = fat_tree(4);
  full.topology.pods = 4;
  const Fabric f = build_fat_tree(full);
  check_shape(f, Shape{4, 2, 2, 2, 2});
  CHECK(f.bisection_bandwidth_bps == 8 * 400 * kGbps);
}

TEST_CASE("fat-tree pods beyond k throw ConfigError at topology.pods") {
  Scenario sc = fat_tree(4);
  sc.topology.pods = 5;
  try {
    build_fat_tree(sc);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "topology.pods");
    CHECK_THAT(std::string(e.what()), Catch::Contains("at most 4"));
  }
}

TEST_CASE("fat-tree servers: one NVSwitch per G consecutive hosts, network counts unchanged") {
  for (const auto& [o_e, G] :
       {std::pair{1.0, 2}, std::pair{1.0, 4}, std::pair{3.0, 3}, std::pair{3.0, 6}}) {
    // k = 4: 1:1 pods of 2 edges x 2 hosts; 3:1 pods of 2 edges x 3 hosts. G = 4 and 6 put a
    // server's GPUs under two edges of one pod.
    INFO("o_e = " << o_e << ", G = " << G);
    Scenario sc = fat_tree(4, o_e);
    sc.topology.pods = 2;
    const Fabric plain = build_fat_tree(sc);
    sc.topology.gpus_per_server = G;
    sc.link.nvlink_rate_bps = 3600 * kGbps;
    const Fabric f = build_fat_tree(sc);
    const FabricGraph& g = f.graph;
    const int H = static_cast<int>(f.hosts.size());
    REQUIRE(H == static_cast<int>(plain.hosts.size()));
    CHECK(f.links == plain.links);
    CHECK(f.switches == plain.switches);
    CHECK(f.bisection_bandwidth_bps == plain.bisection_bandwidth_bps);
    CHECK(f.gpus_per_server == G);
    CHECK(count_nvlinks(f) == H);
    CHECK(static_cast<int>(boost::num_vertices(g)) ==
          static_cast<int>(boost::num_vertices(plain.graph)) + H / G);
    CHECK(static_cast<int>(boost::num_edges(g)) == plain.links + H);
    int nvswitches = 0;
    for (auto [v, end] = boost::vertices(g); v != end; ++v) {
      if (g[*v].role != Role::kNvSwitch) continue;
      ++nvswitches;
      CHECK(g[*v].kind == NodeKind::kSwitch);
      CHECK(g[*v].name == "nvswitch" + std::to_string(g[*v].server));
      CHECK(static_cast<int>(boost::out_degree(*v, g)) == G);
    }
    CHECK(nvswitches == H / G);
    for (int i = 0; i < H; ++i) {
      const VertexId h = f.hosts[static_cast<size_t>(i)];
      CHECK(g[h].server == i / G);
      int nv = 0, net = 0;
      for (auto [e, end] = boost::out_edges(h, g); e != end; ++e) {
        const VertexId peer = boost::target(*e, g);
        if (g[*e].nvlink) {
          ++nv;
          CHECK(g[peer].name == "nvswitch" + std::to_string(i / G));
          // NVLinks carry link.nvlink_efficiency (default 0.8) x link.nvlink_rate.
          CHECK(g[*e].rate_bps == 2880 * kGbps);
          CHECK(g[*e].delay_ps == 0);
        } else {
          ++net;
          CHECK(g[peer].role == Role::kEdge);
        }
      }
      CHECK(nv == 1);
      CHECK(net == 1);
    }
  }
}

TEST_CASE("fat-tree servers: G must divide a pod's hosts, and needs link.nvlink_rate") {
  Scenario sc = fat_tree(4);  // 4 hosts a pod
  sc.link.nvlink_rate_bps = 3600 * kGbps;
  for (int G : {3, 8}) {
    INFO("G = " << G);
    sc.topology.gpus_per_server = G;
    try {
      build_fat_tree(sc);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.key_path() == "topology.gpus_per_server");
    }
  }
  sc.topology.gpus_per_server = 2;
  sc.link.nvlink_rate_bps = 0;
  try {
    build_fat_tree(sc);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "link.nvlink_rate");
  }
  sc.topology.gpus_per_server = 1;  // no servers: no NVLink rate needed
  CHECK(count_nvlinks(build_fat_tree(sc)) == 0);
}

TEST_CASE("fat-tree servers: odd pods, whole servers on each side keep the network's bisection") {
  // k = 4, edge 3:1: pods of 2 edges x 3 GPUs, 1 uplink an edge. 3 pods: 18 GPUs, halves
  // 0-8 | 9-17 split pod 1 between its edges (GPUs 6-8 | 9-11). Counted by hand: pod 0 sends
  // its aggregation's 2 core links' worth into pod 2, edge 2 its 1 uplink to edge 3:
  // 3 x 400G. With G = 3 every server is under one edge, on one side: NVLinks add nothing.
  Scenario sc = fat_tree(4, 3.0);
  sc.topology.pods = 3;
  CHECK(build_fat_tree(sc).bisection_bandwidth_bps == 3 * 400 * kGbps);
  sc.link.nvlink_rate_bps = 3600 * kGbps;
  sc.topology.gpus_per_server = 3;
  const Fabric f = build_fat_tree(sc);
  CHECK(f.bisection_bandwidth_bps == 3 * 400 * kGbps);
  CHECK(f.bisection_bandwidth_bps == max_flow_bps(f, first_half(f)));
}
