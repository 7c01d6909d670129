// A fabric family defined and registered in this file alone: a star of eight hosts on one
// switch. Loading a scenario that names it, building it, routing it and simulating an AllReduce
// on it go through the same registry as the built-in families, with no library file edited.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/loader.hpp"
#include "sim/config/params.hpp"
#include "sim/run/run.hpp"
#include "topologies/family.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {
namespace {

constexpr int kStarHosts = 8;

/// Eight hosts (tier 0), each on its own port of one switch (tier 1), at link.host_rate.
Fabric build_star(const Scenario& sc) {
  Fabric f;
  f.kind = "star";
  f.default_routing = "up_down";
  FabricGraph& g = f.graph;
  for (int h = 0; h < kStarHosts; ++h) {
    f.hosts.push_back(boost::add_vertex(
        NodeProps{NodeKind::kHost, Role::kGpu, "host" + std::to_string(h), 0}, g));
  }
  const VertexId hub = boost::add_vertex(NodeProps{NodeKind::kSwitch, Role::kLeaf, "hub", 1}, g);
  for (const VertexId h : f.hosts) {
    boost::add_edge(h, hub, EdgeProps{sc.link.host_rate_bps, sc.link.propagation_delay_ps}, g);
  }
  f.switches = 1;
  f.links = kStarHosts;
  // Half the hosts talk to the other half through the hub: 4 host links one way.
  f.bisection_bandwidth_bps = kStarHosts / 2 * sc.link.host_rate_bps;
  return f;
}

/// Registers the star once per test process (the registry refuses a second registration).
void register_star() {
  if (find_fabric_family("star") == nullptr) {
    register_fabric_family(FabricFamily{"star", &build_star, false, nullptr});
  }
}

/// A scenario file on the star: RoCE at 400 Gb/s, quickstart.yaml's Tomahawk 3 switch, ring
/// AllReduce with Simple at `size`.
std::string star_scenario(const std::string& size) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("fabricsim_test_star_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "name: star\n"
                         "transport: roce\n"
                         "topology: {kind: star}\n"
                         "link: {host_rate: 400Gbps, propagation_delay: 250ns}\n"
                         "switch: {profile: "
                      << FABRICSIM_SOURCE_DIR
                      << "/configs/switches/broadcom_tomahawk3.yaml}\n"
                         "nic: {mtu: 4096B}\n"
                         "workload: {collective: all_reduce, algorithm: ring, protocol: simple,\n"
                         "           minbytes: "
                      << size << ", maxbytes: " << size << "}\n";
  return path.string();
}

TEST_CASE("the loader's built-in topology kinds are the registry's built-in families") {
  // The loader lists the built-in kinds itself (sim/config does not depend on topologies):
  // `fabricsim params` prints them as topology.kind's range, in the registry's order.
  std::string range;
  for (const ParamInfo& p : param_table()) {
    if (p.path == "topology.kind") range = p.range;
  }
  std::string kinds;
  for (const std::string& k : fabric_kinds()) {
    if (k != "star") kinds += (kinds.empty() ? "" : " | ") + k;
  }
  CHECK(range == kinds);
}

TEST_CASE("a fabric family registered from outside the library is loaded by its kind") {
  const std::string path = star_scenario("64MiB");
  register_star();
  const Scenario sc = load_scenario(path);
  CHECK(sc.topology.kind == "star");
  const Fabric f = build_fabric(sc);
  CHECK(f.hosts.size() == kStarHosts);
  CHECK(fabric_kinds().back() == "star");
  // The family is a Clos (not dimension-ordered): dimension-order routing is refused for it,
  // as for a spine-leaf.
  CHECK_THROWS_WITH(resolve_routing("dimension_order", f),
                    Catch::Contains("dimension_order routing needs a torus"));
  CHECK_THROWS_AS(register_fabric_family(FabricFamily{"star", &build_star, false, nullptr}),
                  std::invalid_argument);
  std::filesystem::remove(path);
}

TEST_CASE("a registered fabric family runs an AllReduce end to end at the link's goodput") {
  register_star();
  RunOptions opts;
  opts.scenario_path = star_scenario("64MiB");
  Scenario sc = load(opts);
  const Prepared prepared = prepare(sc);
  const RunReport rep = simulate(sc, prepared, nullptr, false);
  std::filesystem::remove(opts.scenario_path);
  REQUIRE(rep.complete);
  REQUIRE(rep.rows.size() == 1);
  CHECK(rep.rows[0].algorithm == "ring");
  // Ring AllReduce busbw is bounded by one host link's RoCEv2 goodput with the reverse
  // direction's ACKs on it: 400e9/8 x 4096 / (4096 + 82 + 86) B = 48.03 GB/s (82 B of
  // Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble and gap per 4096 B packet, one 86 B ACK per
  // packet coming back). At 64 MiB NCCL's per-step latencies keep it a few percent below.
  const double goodput_GBps = 400e9 / 8 * 4096.0 / (4096 + 82 + 86) / 1e9;
  CHECK(rep.rows[0].busbw_GBps <= goodput_GBps);
  CHECK(rep.rows[0].busbw_GBps >= 0.9 * goodput_GBps);
}

}  // namespace
}  // namespace fabricsim
