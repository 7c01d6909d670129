// topologies/metrics and sim/config/cost_model: every figure `fabricsim topo` prints, checked
// against a formula written out here (never against a number the code produced), and one
// SECTION per kind of mistake in a cost file.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../support.hpp"
#include "sim/config/cost_model.hpp"
#include "sim/config/loader.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/metrics.hpp"
#include "topologies/rail_optimized.hpp"
#include "topologies/torus.hpp"

using namespace fabricsim;

namespace {

namespace fs = std::filesystem;

constexpr int64_t kGbps = 1'000'000'000;

/// A spine-leaf scenario with its own fabric rate and oversubscription.
Scenario spine_leaf(int leaves, int spines, int hosts_per_leaf, double oversubscription,
                    int64_t host_rate_bps = 100 * kGbps, int64_t fabric_rate_bps = 100 * kGbps) {
  Scenario sc =
      testing::spine_leaf(leaves, spines, hosts_per_leaf, host_rate_bps, 1000, 0, 1 << 20, 4096);
  sc.topology.oversubscription = oversubscription;
  sc.link.fabric_rate_bps = fabric_rate_bps;
  return sc;
}

/// The spine-leaf closed form, from the scenario alone:
///   uplinks per leaf = hosts_per_leaf × host_rate / (o × fabric_rate)
///   B = floor(leaves / 2) × min(hosts_per_leaf × host_rate, uplinks × fabric_rate)
int64_t uplinks_per_leaf(const Scenario& sc) {
  return static_cast<int64_t>(sc.topology.hosts_per_leaf * sc.link.host_rate_bps /
                              (sc.topology.oversubscription * sc.link.fabric_rate_bps));
}
int64_t spine_leaf_bisection_bps(const Scenario& sc) {
  const int64_t host_cap = sc.topology.hosts_per_leaf * sc.link.host_rate_bps;
  const int64_t uplink_cap = uplinks_per_leaf(sc) * sc.link.fabric_rate_bps;
  return (sc.topology.leaves / 2) * std::min(host_cap, uplink_cap);
}

struct Built {
  explicit Built(const Scenario& sc) : fabric(build_fabric(sc)), routes(build_routes(sc, fabric)) {}
  Fabric fabric;
  RoutingTable routes;
};

/// A file written to a private temporary directory, removed when it goes out of scope.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    dir_ = fs::temp_directory_path() / ("fabricsim_test_metrics_" + std::to_string(::getpid()) +
                                        "_" + std::to_string(counter++));
    fs::create_directories(dir_);
    path_ = (dir_ / "cost.yaml").string();
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  fs::path dir_;
  std::string path_;
};

const std::string kCost =
    "switch_port_usd: 1\n"      // 1
    "nic_usd: 10\n"             // 2
    "host_link_usd: 100\n"      // 3
    "fabric_link_usd: 1000\n";  // 4

/// kCost with the line `old_line` (without its newline) replaced by `new_lines`; "" deletes it.
std::string edit(const std::string& text, const std::string& old_line,
                 const std::string& new_lines) {
  std::string out = text;
  const size_t at = out.find(old_line + "\n");
  REQUIRE(at != std::string::npos);
  out.replace(at, old_line.size() + 1, new_lines.empty() ? "" : new_lines + "\n");
  return out;
}

/// The ConfigError loading `text` must raise; `path` receives the file's path.
ConfigError cost_error(const std::string& text, std::string& path) {
  TempFile file(text);
  path = file.path();
  try {
    load_cost_model(file.path());
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for:\n" << text);
  throw std::logic_error("unreachable");
}

/// Asserts the error's position, key path and message, and that what() reads
/// FILE:LINE:COL: KEY: MESSAGE (without LINE:COL when line is 0, without KEY when it is "").
void check_cost_error(const std::string& text, int line, int column, const std::string& key,
                      const std::string& message) {
  std::string path;
  const ConfigError e = cost_error(text, path);
  CHECK(e.line() == line);
  CHECK(e.column() == column);
  CHECK(e.key_path() == key);
  CHECK(e.message() == message);
  const std::string at =
      line > 0 ? ":" + std::to_string(line) + ":" + std::to_string(column) : std::string();
  CHECK(std::string(e.what()) == path + at + ": " + (key.empty() ? "" : key + ": ") + message);
}

}  // namespace

TEST_CASE("spine-leaf: max-flow across the host halves equals the closed-form bisection") {
  // {leaves, spines, hosts_per_leaf, o, host rate, fabric rate}: shapes the builder accepts
  // (uplinks a whole multiple of the spines).
  struct Shape {
    int leaves, spines, hosts_per_leaf;
    double o;
    int64_t host_rate_bps, fabric_rate_bps;
  };
  const Shape shapes[] = {
      {4, 2, 6, 1.0, 100 * kGbps, 100 * kGbps},   // 6 uplinks, 3 per spine
      {4, 2, 6, 3.0, 100 * kGbps, 100 * kGbps},   // 2 uplinks, 1 per spine
      {4, 3, 6, 2.0, 100 * kGbps, 100 * kGbps},   // 3 uplinks, 1 per spine
      {4, 2, 12, 1.0, 100 * kGbps, 100 * kGbps},  // 12 uplinks
      {4, 2, 12, 2.0, 100 * kGbps, 100 * kGbps},  // 6 uplinks
      {4, 2, 12, 3.0, 100 * kGbps, 100 * kGbps},  // 4 uplinks
      {6, 2, 4, 2.0, 100 * kGbps, 100 * kGbps},   // 2 uplinks; 3 leaves a side
      {4, 2, 8, 1.0, 100 * kGbps, 400 * kGbps},   // 2 uplinks of 400G
      {2, 1, 3, 3.0, 100 * kGbps, 100 * kGbps},   // 1 uplink
  };
  for (const Shape& s : shapes) {
    const Scenario sc =
        spine_leaf(s.leaves, s.spines, s.hosts_per_leaf, s.o, s.host_rate_bps, s.fabric_rate_bps);
    const Built b(sc);
    const FabricMetrics m = compute_metrics(b.fabric, b.routes);
    INFO(s.leaves << " leaves x " << s.hosts_per_leaf << " hosts, " << s.spines << " spines, "
                  << s.o << ":1");
    CHECK(m.bisection_bandwidth_bps == spine_leaf_bisection_bps(sc));
    CHECK(m.bisection_maxflow_bps == spine_leaf_bisection_bps(sc));
    CHECK(host_halves_max_flow_bps(b.fabric) == spine_leaf_bisection_bps(sc));
  }
}

TEST_CASE("spine-leaf: counts, oversubscription, diameter and path diversity") {
  SECTION("4 leaves x 6 hosts, 2 spines, 1:1") {
    const Scenario sc = spine_leaf(4, 2, 6, 1.0);
    const Built b(sc);
    const FabricMetrics m = compute_metrics(b.fabric, b.routes);
    const int hosts = 4 * 6, uplinks = 6;
    REQUIRE(m.nodes_by_role.size() == 3);
    CHECK(m.nodes_by_role[0].role == "gpu");
    CHECK(m.nodes_by_role[0].count == hosts);
    CHECK(m.nodes_by_role[1].role == "leaf");
    CHECK(m.nodes_by_role[1].count == 4);
    CHECK(m.nodes_by_role[2].role == "spine");
    CHECK(m.nodes_by_role[2].count == 2);
    REQUIRE(m.links_by_class.size() == 2);
    CHECK(m.links_by_class[0].ends == "gpu-leaf");
    CHECK(m.links_by_class[0].count == hosts);
    CHECK(m.links_by_class[0].rate_bps == 100 * kGbps);
    CHECK(m.links_by_class[0].failed == 0);
    CHECK(m.links_by_class[1].ends == "leaf-spine");
    CHECK(m.links_by_class[1].count == 4 * uplinks);
    CHECK(m.links_by_class[1].rate_bps == 100 * kGbps);
    CHECK(m.links_by_class[1].failed == 0);
    REQUIRE(m.oversubscription_by_tier.size() == 1);  // spines have no uplinks
    CHECK(m.oversubscription_by_tier[0].first == "leaf");
    CHECK(m.oversubscription_by_tier[0].second == 1.0);
    CHECK(m.diameter_hops == 4);  // host-leaf-spine-leaf-host
    // Host 0 to the last host (leaf 3): through either spine, on any of the 3 parallel links up
    // and, independently, any of the 3 parallel links down: 2 × 3 × 3 port sequences.
    CHECK(m.path_diversity == 2 * (uplinks / 2) * (uplinks / 2));
    CHECK(m.path_diversity_pair == "host0-host23");
  }
  SECTION("3:1 and 2:1: the leaf ratio as built; spines × parallel links² paths") {
    for (const auto& [spines, hosts_per_leaf, o] :
         {std::tuple{2, 6, 3.0}, std::tuple{3, 6, 2.0}, std::tuple{2, 12, 3.0}}) {
      const Scenario sc = spine_leaf(4, spines, hosts_per_leaf, o);
      const Built b(sc);
      const FabricMetrics m = compute_metrics(b.fabric, b.routes);
      REQUIRE(m.oversubscription_by_tier.size() == 1);
      CHECK(m.oversubscription_by_tier[0].first == "leaf");
      CHECK(m.oversubscription_by_tier[0].second == Approx(o).epsilon(1e-12));
      CHECK(m.links_by_class[1].count == 4 * uplinks_per_leaf(sc));
      const int64_t parallel = uplinks_per_leaf(sc) / spines;
      CHECK(m.path_diversity == spines * parallel * parallel);
    }
  }
  SECTION("different host and fabric rates: the ratio is in capacity, not ports") {
    const Scenario sc = spine_leaf(4, 1, 8, 2.0, 100 * kGbps, 400 * kGbps);  // 1 uplink of 400G
    const Built b(sc);
    const FabricMetrics m = compute_metrics(b.fabric, b.routes);
    CHECK(m.oversubscription_by_tier[0].second == 8.0 * 100 / (1 * 400));
    CHECK(m.links_by_class[1].rate_bps == 400 * kGbps);
    CHECK(m.path_diversity == 1);
  }
  SECTION("one leaf: diameter 2, one path through the leaf") {
    const Scenario sc = spine_leaf(1, 2, 6, 3.0);
    const Built b(sc);
    const FabricMetrics m = compute_metrics(b.fabric, b.routes);
    CHECK(m.diameter_hops == 2);
    CHECK(m.path_diversity == 1);
    CHECK(m.path_diversity_pair == "host0-host5");
    // The host halves (hosts 0-2 and 3-5) share the one leaf: only their own links bound the
    // flow, 3 × 100G. The builder reports the max-flow for an odd number of leaves.
    CHECK(m.bisection_maxflow_bps == 3 * 100 * kGbps);
    CHECK(m.bisection_bandwidth_bps == 3 * 100 * kGbps);
  }
  SECTION("an odd number of leaves: the host halves split a leaf") {
    // 5 leaves x 6 hosts, 1:1: hosts 0-14 are leaves 0, 1 and half of leaf 2. Leaves 0 and 1
    // send 600G each up to leaves 3 and 4 (600G of downlinks each); leaf 2's three first-half
    // hosts reach its three second-half hosts through the leaf. Every source host link is then
    // full: 15 × 100G, above the closed form's floor(5/2) × 600G = 1.2T.
    const Scenario sc = spine_leaf(5, 2, 6, 1.0);
    const Built b(sc);
    const FabricMetrics m = compute_metrics(b.fabric, b.routes);
    CHECK(m.bisection_maxflow_bps == 15 * 100 * kGbps);
    CHECK(m.bisection_bandwidth_bps == 15 * 100 * kGbps);  // regression: was floor(5/2) × 600G
  }
  SECTION("the max-flow is skipped above the node limit") {
    const Scenario sc = spine_leaf(4, 2, 6, 1.0);
    const Built b(sc);
    const size_t vertices = 4 * 6 + 4 + 2;
    CHECK(compute_metrics(b.fabric, b.routes, vertices).bisection_maxflow_bps ==
          spine_leaf_bisection_bps(sc));
    CHECK(compute_metrics(b.fabric, b.routes, vertices - 1).bisection_maxflow_bps == -1);
  }
}

TEST_CASE("spine-leaf: a failed uplink") {
  const int64_t rate = 100 * kGbps;
  SECTION("1:1, three parallel links to each spine") {
    // 4 leaves x 6 hosts, 2 spines, 1:1: each leaf has 3 parallel 100G links to each spine.
    Scenario sc = spine_leaf(4, 2, 6, 1.0);
    sc.topology.failed_links = {"leaf0-spine0"};
    const Built b(sc);
    const FabricMetrics m = compute_metrics(b.fabric, b.routes);
    // At 1:1 leaf 0's 6 host links and 6 uplinks are equal, so its uplinks are a bottleneck:
    // losing one leaves it 5 × 100G to send. The cut around {hosts 0-11, leaf 0, leaf 1} crosses
    // leaf 0's 5 working uplinks and leaf 1's 6: 1.1T. No more fits: leaf 1's own hosts already
    // fill its uplinks, so leaf 0 cannot borrow them, and the flow is exactly the closed form
    // less one link.
    CHECK(m.bisection_maxflow_bps == spine_leaf_bisection_bps(sc) - rate);
    // The closed form is the design figure; it does not see faults.
    CHECK(m.bisection_bandwidth_bps == spine_leaf_bisection_bps(sc));
    // Host 0 -> host 23: via spine 0, 2 working links up × 3 down; via spine 1, 3 × 3. One
    // uplink fewer removes the 3 paths that went up it.
    CHECK(m.path_diversity == 2 * 3 + 3 * 3);
    CHECK(m.path_diversity_pair == "host0-host23");
    CHECK(m.diameter_hops == 4);
    REQUIRE(m.links_by_class.size() == 2);
    CHECK(m.links_by_class[1].ends == "leaf-spine");
    CHECK(m.links_by_class[1].count == 4 * 6);  // still counted
    CHECK(m.links_by_class[1].failed == 1);
    // The worst leaf, over working links (regression: was the average, as built, = 1.0):
    // leaf0 has 6 hosts x 100G over 5 working 100G uplinks.
    CHECK(m.oversubscription_by_tier[0].second == Approx(6.0 / 5.0));
  }
  SECTION("3:1, one link to each spine") {
    // 4 leaves x 6 hosts, 2 spines, 3:1: 2 uplinks per leaf (one per spine), 200G against 600G
    // of hosts, so the uplinks are the bottleneck. With leaf0-spine0 down the cut around
    // {hosts 0-11, leaf 0, leaf 1} crosses 1 + 2 working uplinks: 300G, one link below 400G.
    Scenario sc = spine_leaf(4, 2, 6, 3.0);
    const Built before(sc);
    sc.topology.failed_links = {"leaf0-spine0"};
    const Built after(sc);
    const FabricMetrics m0 = compute_metrics(before.fabric, before.routes);
    const FabricMetrics m1 = compute_metrics(after.fabric, after.routes);
    CHECK(m0.bisection_maxflow_bps == 2 * 2 * rate);
    CHECK(m1.bisection_maxflow_bps == m0.bisection_maxflow_bps - rate);
    // One path per spine before; the one through spine 0 is gone.
    CHECK(m0.path_diversity == 2);
    CHECK(m1.path_diversity == m0.path_diversity - 1);
  }
}

TEST_CASE("cost proxy: part counts times prices") {
  const CostModel prices{1, 10, 100, 1000, "test"};
  // 4 leaves x 6 hosts, 2 spines, 1:1: 24 host links, 4 × 6 leaf-spine links.
  //   switch ports = 24 (leaf ends of host links) + 2 × 24 (both ends of leaf-spine links) = 72
  //   NICs = host links = 24; fabric links = 24
  const int64_t host_links = 4 * 6, fabric_links = 4 * 6;
  const int64_t switch_ports = host_links + 2 * fabric_links;
  const double expected =
      switch_ports * 1.0 + host_links * 10.0 + host_links * 100.0 + fabric_links * 1000.0;
  SECTION("all links up") {
    const Built b(spine_leaf(4, 2, 6, 1.0));
    const CostBreakdown c = fabric_cost(b.fabric, prices);
    CHECK(c.switches_usd == switch_ports * 1.0);
    CHECK(c.nics_usd == host_links * 10.0);
    CHECK(c.host_links_usd == host_links * 100.0);
    CHECK(c.fabric_links_usd == fabric_links * 1000.0);
    CHECK(c.total_usd == expected);
  }
  SECTION("a failed link is still costed") {
    Scenario sc = spine_leaf(4, 2, 6, 1.0);
    sc.topology.failed_links = {"leaf0-spine0"};
    const Built b(sc);
    CHECK(fabric_cost(b.fabric, prices).total_usd == expected);
  }
  SECTION("3:1: fewer uplinks, fewer ports and cables") {
    const Built b(spine_leaf(4, 2, 6, 3.0));  // 2 uplinks per leaf
    const CostBreakdown c = fabric_cost(b.fabric, prices);
    CHECK(c.switches_usd == (24 + 2 * 4 * 2) * 1.0);
    CHECK(c.fabric_links_usd == 4 * 2 * 1000.0);
  }
  SECTION("at the example prices: an InfiniBand and an Ethernet switch port apart") {
    const CostModel example =
        load_cost_model(std::string(FABRICSIM_SOURCE_DIR) + "/configs/cost_example.yaml");
    const Built b(spine_leaf(4, 2, 6, 1.0));
    // 72 ports x 656.25 (QM9700) + 24 x (2400 + 320) + 24 x 320 = 47,250 + 65,280 + 7,680
    const CostBreakdown ib = fabric_cost(b.fabric, for_transport(example, "infiniband"));
    CHECK(ib.switches_usd == 47250.0);
    CHECK(ib.total_usd == 120210.0);
    // 72 ports x 522.95 (the Ethernet port) = 37,652.4; the rest as above: 110,612.4
    const CostBreakdown roce = fabric_cost(b.fabric, for_transport(example, "roce"));
    CHECK(roce.switches_usd == Approx(37652.4).epsilon(1e-12));
    CHECK(roce.total_usd == Approx(110612.4).epsilon(1e-12));
    CHECK(roce.nics_usd == ib.nics_usd);
  }
}

TEST_CASE("cost file: the example loads") {
  const std::string path = std::string(FABRICSIM_SOURCE_DIR) + "/configs/cost_example.yaml";
  const CostModel m = load_cost_model(path);
  // InfiniBand: QM9700 price / NDR ports (HARDWARE.md §7, §3.1). RoCE: that port scaled by §7's
  // "Switch cost trend" USD per Gb/s, SN5610 1.02 over QM9700 1.28, rounded to the cent.
  CHECK(m.switch_port_usd_by_transport.size() == 2);
  CHECK(for_transport(m, "infiniband").switch_port_usd == 42000.0 / 64);
  CHECK(for_transport(m, "roce").switch_port_usd ==
        Approx(42000.0 / 64 * 1.02 / 1.28).margin(0.005));
  CHECK(for_transport(m, "roce").switch_port_usd == 522.95);
  CHECK(m.nic_usd == 2400);       // ConnectX-7 NDR400 OSFP
  CHECK(m.host_link_usd == 320);  // 200G QSFP56 AOC as a cable proxy
  CHECK(m.fabric_link_usd == 320);
  CHECK(m.source == path);
}

TEST_CASE("cost file: switch_port_usd per transport, or one number for every transport") {
  SECTION("one number prices every transport's ports alike (the older form)") {
    TempFile file(kCost);
    const CostModel m = load_cost_model(file.path());
    CHECK(m.switch_port_usd_by_transport.empty());
    CHECK(for_transport(m, "roce").switch_port_usd == 1);
    CHECK(for_transport(m, "infiniband").switch_port_usd == 1);
  }
  SECTION("a map gives each transport its own") {
    TempFile file(edit(kCost, "switch_port_usd: 1", "switch_port_usd: {infiniband: 3, roce: 2}"));
    const CostModel m = load_cost_model(file.path());
    CHECK(for_transport(m, "infiniband").switch_port_usd == 3);
    CHECK(for_transport(m, "roce").switch_port_usd == 2);
    CHECK(for_transport(m, "roce").nic_usd == 10);
    CHECK_THROWS_AS(for_transport(m, "ethernet"), std::invalid_argument);
  }
  SECTION("a block map works too") {
    TempFile file(
        edit(kCost, "switch_port_usd: 1", "switch_port_usd:\n  infiniband: 3\n  roce: 2"));
    CHECK(for_transport(load_cost_model(file.path()), "roce").switch_port_usd == 2);
  }
  SECTION("a misspelt transport, with a suggestion") {
    check_cost_error(
        edit(kCost, "switch_port_usd: 1", "switch_port_usd: {infiniband: 3, rocev2: 2}"), 1, 34,
        "switch_port_usd.rocev2",
        "unknown transport 'rocev2'; did you mean 'roce'? (the transports are "
        "infiniband and roce)");
  }
  SECTION("a transport left out would cost nothing: refused") {
    check_cost_error(edit(kCost, "switch_port_usd: 1", "switch_port_usd: {infiniband: 3}"), 1, 18,
                     "switch_port_usd",
                     "no price for transport roce; a per-transport switch_port_usd prices "
                     "infiniband and roce, e.g. {infiniband: 656.25, roce: 522.95}");
  }
  SECTION("a price in the map is checked as any price") {
    check_cost_error(
        edit(kCost, "switch_port_usd: 1", "switch_port_usd: {infiniband: -3, roce: 2}"), 1, 31,
        "switch_port_usd.infiniband",
        "expected a non-negative number of US dollars, e.g. 656, got '-3'");
  }
  SECTION("a transport given twice") {
    check_cost_error(edit(kCost, "switch_port_usd: 1",
                          "switch_port_usd:\n  roce: 2\n  infiniband: 3\n  roce: 4"),
                     4, 3, "switch_port_usd.roce",
                     "duplicate transport 'roce' (first given at line 2)");
  }
}

TEST_CASE("cost file: mistakes name the line, column and key") {
  SECTION("a misspelt key, with a suggestion") {
    check_cost_error(edit(kCost, "nic_usd: 10", "nic_us: 10"), 2, 1, "nic_us",
                     "unknown key 'nic_us'; did you mean 'nic_usd'?");
  }
  SECTION("an unknown key with no close match lists the keys") {
    check_cost_error(kCost + "rack_usd: 5\n", 5, 1, "rack_usd",
                     "unknown key 'rack_usd'; valid keys are: switch_port_usd, nic_usd, "
                     "host_link_usd and fabric_link_usd");
  }
  SECTION("a missing key: no position, the key is named") {
    check_cost_error(edit(kCost, "host_link_usd: 100", ""), 0, 0, "host_link_usd",
                     "missing required key; a cost file needs switch_port_usd, nic_usd, "
                     "host_link_usd and fabric_link_usd");
  }
  SECTION("a negative price") {
    check_cost_error(edit(kCost, "nic_usd: 10", "nic_usd: -10"), 2, 10, "nic_usd",
                     "expected a non-negative number of US dollars, e.g. 656, got '-10'");
  }
  SECTION("not a number") {
    check_cost_error(edit(kCost, "fabric_link_usd: 1000", "fabric_link_usd: $1,000"), 4, 18,
                     "fabric_link_usd",
                     "expected a non-negative number of US dollars, e.g. 656, got '$1,000'");
  }
  SECTION("a number with a trailing word") {
    check_cost_error(edit(kCost, "nic_usd: 10", "nic_usd: 10 USD"), 2, 10, "nic_usd",
                     "expected a non-negative number of US dollars, e.g. 656, got '10 USD'");
  }
  SECTION("not finite") {
    check_cost_error(edit(kCost, "nic_usd: 10", "nic_usd: inf"), 2, 10, "nic_usd",
                     "expected a non-negative number of US dollars, e.g. 656, got 'inf'");
  }
  SECTION("finite but no unit's price: 1e308 made every total inf (null in results.json)") {
    check_cost_error(edit(kCost, "nic_usd: 10", "nic_usd: 1e308"), 2, 10, "nic_usd",
                     "a unit price of at most 10000000 US dollars (one switch port, NIC or "
                     "cable), got '1e308'");
  }
  SECTION("a list") {
    check_cost_error(edit(kCost, "nic_usd: 10", "nic_usd: [1, 2]"), 2, 10, "nic_usd",
                     "expected a non-negative number of US dollars, e.g. 656, got a list");
  }
  SECTION("no value: the key's position is given") {
    check_cost_error(edit(kCost, "nic_usd: 10", "nic_usd:"), 2, 1, "nic_usd",
                     "expected a non-negative number of US dollars, e.g. 656, got nothing");
  }
  SECTION("a duplicate key") {
    check_cost_error(kCost + "nic_usd: 20\n", 5, 1, "nic_usd",
                     "duplicate key 'nic_usd' (first given at line 2)");
  }
  SECTION("positions in the example file, comments and all") {
    // The example with one price broken: the error points at that line of the real file.
    std::ifstream in(std::string(FABRICSIM_SOURCE_DIR) + "/configs/cost_example.yaml");
    std::stringstream text;
    text << in.rdbuf();
    const std::string example = text.str();
    const size_t at = example.find("\nnic_usd: 2400\n");
    REQUIRE(at != std::string::npos);
    const int line = 2 + static_cast<int>(std::count(example.begin(), example.begin() + at, '\n'));
    check_cost_error(edit(example, "nic_usd: 2400", "nic_usd: 2400x"), line, 10, "nic_usd",
                     "expected a non-negative number of US dollars, e.g. 656, got '2400x'");
    check_cost_error(edit(example, "nic_usd: 2400", "nicusd: 2400"), line, 1, "nicusd",
                     "unknown key 'nicusd'; did you mean 'nic_usd'?");
  }
  SECTION("a YAML syntax error") {
    std::string path;
    const ConfigError e = cost_error("nic_usd: [1, 2\nhost_link_usd: 3\n", path);
    CHECK(e.line() > 0);
    CHECK(e.message().rfind("YAML syntax error: ", 0) == 0);
  }
  SECTION("an empty file") {
    check_cost_error("# nothing\n", 0, 0, "",
                     "the cost file is empty; expected the keys switch_port_usd, nic_usd, "
                     "host_link_usd and fabric_link_usd");
  }
  SECTION("a missing file") {
    const std::string path = std::string(FABRICSIM_SOURCE_DIR) + "/configs/no_such_cost.yaml";
    try {
      load_cost_model(path);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) == path + ": cannot open cost file: No such file or directory");
    }
  }
}

TEST_CASE("fat-tree and torus: max-flow across the host halves equals the closed form") {
  const int64_t rate = 100 * kGbps;
  SECTION("k=4 fat-tree, 1:1: k³/4 hosts, half of them at full rate") {
    Scenario sc = spine_leaf(1, 1, 1, 1.0);
    sc.topology = TopologyConfig{};
    sc.topology.kind = "fat-tree";
    sc.topology.k = 4;
    const Fabric f = build_fat_tree(sc);
    const int k = 4;
    CHECK(host_halves_max_flow_bps(f) == int64_t{k * k * k / 4} * rate / 2);
    CHECK(f.bisection_bandwidth_bps == int64_t{k * k * k / 4} * rate / 2);
    const RoutingTable routes(f, RoutingAlgorithm::kUpDown);
    const FabricMetrics m = compute_metrics(f, routes);
    CHECK(m.diameter_hops == 6);  // host-edge-agg-core-agg-edge-host
    // Across pods: (k/2 aggs) × (k/2 cores each) routes from host 0 to the last host.
    CHECK(m.path_diversity == (k / 2) * (k / 2));
  }
  SECTION("4x4 torus: 2·N/k links cross the cut") {
    Scenario sc = spine_leaf(1, 1, 1, 1.0);
    sc.topology = TopologyConfig{};
    sc.topology.kind = "torus";
    sc.topology.dims = {4, 4};
    sc.topology.wraparound = true;
    const Fabric f = build_torus(sc);
    const int n = 16, k = 4;
    CHECK(host_halves_max_flow_bps(f) == int64_t{2 * n / k} * rate);
    CHECK(f.bisection_bandwidth_bps == int64_t{2 * n / k} * rate);
  }
}

TEST_CASE("rail-optimized: NVLinks are their own class and are not costed") {
  // 2 SUs × 2 servers × 2 GPUs (one NIC each, 2 rails), 1 spine, 1:1, all network links 100G:
  //   H = 8 hosts, leaves = SU × N = 4 with S = 2 host links each,
  //   U = S × h / (o × f) = 2 uplinks per leaf (2 parallel links to the one spine),
  //   2 NVSwitches with one NVLink per GPU.
  const int64_t rate = 100 * kGbps;
  Scenario sc = spine_leaf(1, 1, 1, 1.0);
  sc.topology = TopologyConfig{};
  sc.topology.kind = "rail-optimized";
  sc.topology.gpus_per_server = 2;
  sc.topology.servers_per_su = 2;
  sc.topology.scalable_units = 2;
  sc.topology.spines = 1;
  sc.link.nvlink_rate_bps = 400 * kGbps;
  const Fabric f = build_rail_optimized(sc);
  const RoutingTable routes(f, RoutingAlgorithm::kUpDown);
  const FabricMetrics m = compute_metrics(f, routes);
  const int hosts = 8, leaves = 4, uplinks = 2;

  REQUIRE(m.nodes_by_role.size() == 4);  // Role enum order
  CHECK(m.nodes_by_role[0].role == "gpu");
  CHECK(m.nodes_by_role[0].count == hosts);
  CHECK(m.nodes_by_role[1].role == "leaf");
  CHECK(m.nodes_by_role[1].count == leaves);
  CHECK(m.nodes_by_role[2].role == "spine");
  CHECK(m.nodes_by_role[2].count == 1);
  CHECK(m.nodes_by_role[3].role == "nvswitch");
  CHECK(m.nodes_by_role[3].count == 4);  // one per server: SU × S
  REQUIRE(m.links_by_class.size() == 3);
  CHECK(m.links_by_class[0].ends == "gpu-leaf");
  CHECK(m.links_by_class[0].count == hosts);
  CHECK(m.links_by_class[1].ends == "leaf-spine");
  CHECK(m.links_by_class[1].count == leaves * uplinks);
  CHECK(m.links_by_class[2].ends == "nvlink");
  CHECK(m.links_by_class[2].count == hosts);
  CHECK(m.links_by_class[2].rate_bps == 320 * kGbps);  // 400G x nvlink_efficiency 0.8
  // NVSwitches have only NVLinks: no ratio for them.
  REQUIRE(m.oversubscription_by_tier.size() == 1);
  CHECK(m.oversubscription_by_tier[0] == std::pair<std::string, double>{"leaf", 1.0});
  // SU even: SU/2 × N × U × f = H/2 × h at 1:1.
  CHECK(m.bisection_maxflow_bps == 1 * 2 * uplinks * rate);
  CHECK(m.bisection_maxflow_bps == m.bisection_bandwidth_bps);
  // host0 (SU 0, rail 0) -> host7 (SU 1, rail 1): 2 links up × 2 down through the spine.
  CHECK(m.path_diversity_pair == "host0-host7");
  CHECK(m.path_diversity == uplinks * uplinks);
  CHECK(m.diameter_hops == 4);

  const CostBreakdown c = fabric_cost(f, CostModel{1, 10, 100, 1000, "test"});
  CHECK(c.switches_usd == (hosts + 2 * leaves * uplinks) * 1.0);  // no NVSwitch ports
  CHECK(c.nics_usd == hosts * 10.0);
  CHECK(c.host_links_usd == hosts * 100.0);  // NVLinks are not cables
  CHECK(c.fabric_links_usd == leaves * uplinks * 1000.0);
}

TEST_CASE("spine-leaf servers: an NVSwitch per G GPUs, NVLinks not counted or costed") {
  // 4 leaves x 6 GPUs, 2 spines, 1:1, 100G: 24 host links, 6 uplinks per leaf (24 leaf-spine);
  // G = 3: 8 servers, 8 NVSwitches, one 900G NVLink per GPU.
  const int leaves = 4, per_leaf = 6, G = 3, hosts = leaves * per_leaf, uplinks = 6;
  Scenario sc = spine_leaf(leaves, 2, per_leaf, 1.0);
  sc.topology.gpus_per_server = G;
  sc.link.nvlink_rate_bps = 900 * kGbps;
  const Built b(sc);
  const Fabric& f = b.fabric;
  CHECK(static_cast<int>(f.hosts.size()) == hosts);
  CHECK(f.links == hosts + leaves * uplinks);  // network links only
  CHECK(f.switches == leaves + 2);             // NVSwitches not counted
  CHECK(f.gpus_per_server == G);
  CHECK(f.bisection_bandwidth_bps == spine_leaf_bisection_bps(sc));
  const FabricMetrics m = compute_metrics(f, b.routes);
  REQUIRE(m.nodes_by_role.size() == 4);
  CHECK(m.nodes_by_role[0].role == "gpu");
  CHECK(m.nodes_by_role[0].count == hosts);
  CHECK(m.nodes_by_role[1].role == "leaf");
  CHECK(m.nodes_by_role[1].count == leaves);
  CHECK(m.nodes_by_role[2].role == "spine");
  CHECK(m.nodes_by_role[2].count == 2);
  CHECK(m.nodes_by_role[3].role == "nvswitch");
  CHECK(m.nodes_by_role[3].count == hosts / G);
  REQUIRE(m.links_by_class.size() == 3);
  CHECK(m.links_by_class[0].ends == "gpu-leaf");
  CHECK(m.links_by_class[0].count == hosts);
  CHECK(m.links_by_class[1].ends == "leaf-spine");
  CHECK(m.links_by_class[1].count == leaves * uplinks);
  CHECK(m.links_by_class[2].ends == "nvlink");
  CHECK(m.links_by_class[2].count == hosts);
  CHECK(m.links_by_class[2].rate_bps == 720 * kGbps);  // 900G x nvlink_efficiency 0.8
  // Servers are whole on each side of the halves (leaves 0-1 | 2-3): the NVLinks add nothing.
  CHECK(m.bisection_maxflow_bps == spine_leaf_bisection_bps(sc));
  // Same prices as "cost proxy: part counts times prices" for this network: no NVSwitch ports.
  const CostBreakdown c = fabric_cost(f, CostModel{1, 10, 100, 1000, "test"});
  CHECK(c.switches_usd == (hosts + 2 * leaves * uplinks) * 1.0);
  CHECK(c.nics_usd == hosts * 10.0);
  CHECK(c.host_links_usd == hosts * 100.0);
  CHECK(c.fabric_links_usd == leaves * uplinks * 1000.0);
  // Every NVSwitch joins exactly the G consecutive GPUs of its server, at delay 0.
  const FabricGraph& g = f.graph;
  for (int i = 0; i < hosts; ++i) {
    const VertexId h = f.hosts[static_cast<size_t>(i)];
    CHECK(g[h].server == i / G);
    int nvlinks = 0;
    for (auto [e, end] = boost::out_edges(h, g); e != end; ++e) {
      if (!g[*e].nvlink) {
        CHECK(g[boost::target(*e, g)].name == "leaf" + std::to_string(i / per_leaf));
        continue;
      }
      ++nvlinks;
      CHECK(g[boost::target(*e, g)].role == Role::kNvSwitch);
      CHECK(g[boost::target(*e, g)].name == "nvswitch" + std::to_string(i / G));
      CHECK(g[*e].delay_ps == 0);
    }
    CHECK(nvlinks == 1);
  }
}

TEST_CASE("spine-leaf servers: G must divide hosts_per_leaf, and needs link.nvlink_rate") {
  Scenario sc = spine_leaf(2, 1, 6, 1.0);
  sc.link.nvlink_rate_bps = 900 * kGbps;
  for (int G : {4, 12}) {
    INFO("G = " << G);
    sc.topology.gpus_per_server = G;
    try {
      build_fabric(sc);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.key_path() == "topology.gpus_per_server");
    }
  }
  for (int G : {1, 2, 3, 6}) {
    sc.topology.gpus_per_server = G;
    const Fabric f = build_fabric(sc);
    int nvswitches = 0;
    for (auto [v, end] = boost::vertices(f.graph); v != end; ++v) {
      nvswitches += f.graph[*v].role == Role::kNvSwitch;
    }
    CHECK(nvswitches == (G > 1 ? 12 / G : 0));
  }
  sc.topology.gpus_per_server = 2;
  sc.link.nvlink_rate_bps = 0;
  try {
    build_fabric(sc);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "link.nvlink_rate");
  }
}
