// sim/config: server profiles (server.profile, configs/servers/): their keys as defaults, the
// scenario's and --set's winning, keys of another topology kind left out, and errors pointing
// into the profile file.
#include <fstream>
#include <iterator>

#include "config_support.hpp"

using namespace config_testing;

namespace {

/// A rail-optimized scenario whose server section names `profile` (line 6, value at column 12).
std::string rail_scenario(const std::string& profile) {
  return "topology:\n"               //  1
         "  kind: rail-optimized\n"  //  2
         "  servers_per_su: 2\n"     //  3
         "  spines: 1\n"             //  4
         "server:\n"                 //  5
         "  profile: " +
         profile +
         "\n"                            //  6
         "link:\n"                       //  7
         "  propagation_delay: 100ns\n"  //  8
         "switch:\n"                     //  9
         "  latency: 0ns\n"              // 10
         "  buffer_per_port: 1MiB\n"     // 11
         "workload:\n"                   // 12
         "  minbytes: 1KiB\n"            // 13
         "  maxbytes: 1MiB\n";           // 14
}

/// kBase (spine-leaf) with a server section naming `profile` before nic: (line 18, column 12).
std::string base_naming(const std::string& profile) {
  return edit("nic:", "server:\n  profile: " + profile + "\nnic:");
}

}  // namespace

TEST_CASE("a server profile's keys are the scenario's defaults - its own keys win", "[config]") {
  const std::string dir = source_path("tests/data/config");
  const std::string profile = dir + "/server_profile.yaml";
  const std::string scenario = dir + "/with_server_profile.yaml";
  SECTION("profile keys fill topology, link, nic and nccl; the scenario's nvlink_efficiency wins") {
    const Scenario s = load_scenario(scenario);
    CHECK(s.server.profile == "server_profile.yaml");
    CHECK(s.topology.gpus_per_server == 4);
    CHECK(s.topology.gpu_interconnect == "nvswitch");
    CHECK(s.link.host_rate_bps == 200'000'000'000);    // required, given only by the profile
    CHECK(s.link.fabric_rate_bps == 200'000'000'000);  // = host_rate, the profile's
    CHECK(s.link.nvlink_rate_bps == 2'400'000'000'000);
    CHECK(s.link.nvlink_efficiency == 0.75);  // the scenario's, not the profile's 0.5
    CHECK(s.nic.mtu_bytes == 2048);
    CHECK(s.nic.message_rate == 100e6);
    CHECK(s.nccl.compute_capability == 80);
    // Origins: a profile value points into the profile file, the scenario's into the scenario.
    CHECK(s.origins.at("link.host_rate").where == profile);
    CHECK(s.origins.at("link.host_rate").line == 9);
    CHECK(s.origins.at("link.nvlink_efficiency").where == scenario);
    CHECK(std::string(fabricsim::key_error(s, "topology.gpus_per_server", "too many").what()) ==
          profile + ":5:20: topology.gpus_per_server: too many");
  }
  SECTION("--set wins over both") {
    const Scenario s = load_scenario(
        scenario,
        {"link.host_rate=100Gbps", "nccl.compute_capability=90", "link.nvlink_efficiency=0.9"});
    CHECK(s.link.host_rate_bps == 100'000'000'000);
    CHECK(s.link.fabric_rate_bps == 100'000'000'000);
    CHECK(s.nccl.compute_capability == 90);
    CHECK(s.link.nvlink_efficiency == 0.9);
    CHECK(s.nic.mtu_bytes == 2048);  // still the profile's
  }
  SECTION("--set server.profile names a profile for a scenario without a server section") {
    const Scenario s = load_scenario(source_path("tests/data/config/minimal.yaml"),
                                     {"server.profile=server_profile.yaml"});
    CHECK(s.topology.gpus_per_server == 4);
    CHECK(s.link.host_rate_bps == 100'000'000'000);  // minimal.yaml's own
    CHECK(s.nic.mtu_bytes == 2048);
    CHECK(s.origins.at("nic.mtu").where == profile);
  }
  SECTION("keys of another topology kind are left out, not refused") {
    // spine-leaf has no nics_per_server: the profile's 2 is not used.
    const Scenario spine_leaf = load_scenario(scenario);
    CHECK(spine_leaf.topology.nics_per_server == 0);
    CHECK(spine_leaf.origins.count("topology.nics_per_server") == 0);
    // rail-optimized uses nics_per_server and has no gpu_interconnect (always NVSwitch).
    TempScenario rail(rail_scenario(profile));
    const Scenario r = load_scenario(rail.path());
    CHECK(r.topology.nics_per_server == 2);
    CHECK(r.topology.gpus_per_server == 4);
    CHECK(r.link.nvlink_rate_bps == 2'400'000'000'000);
    CHECK(r.origins.count("topology.gpu_interconnect") == 0);
    CHECK(r.warnings.empty());
    // A torus has no servers: none of the topology keys nor NVLink apply; the NIC's still do.
    TempScenario torus(edit("  kind: rail-optimized\n  servers_per_su: 2\n  spines: 1",
                            "  kind: torus\n  dims: [2, 2]", rail_scenario(profile)));
    const Scenario t = load_scenario(torus.path());
    CHECK(t.topology.gpus_per_server == 0);
    CHECK(t.link.nvlink_rate_bps == 0);
    CHECK(t.link.host_rate_bps == 200'000'000'000);
    CHECK(t.nic.mtu_bytes == 2048);
    // The profile's server is lost on a torus (one GPU a node): said, at the profile's line.
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0].find("topology.gpus_per_server: not used: a torus fabric") !=
          std::string::npos);
    CHECK(t.warnings[0].find(profile) != std::string::npos);
    // So is a PCIe server's interconnect on a rail-optimized fabric (always an NVSwitch).
    TempScenario rtx(rail_scenario(source_path("configs/servers/rtx4090_4gpu_pcie.yaml")));
    const Scenario p =
        load_scenario(rtx.path(), {"link.nvlink_rate=1000Gbps", "link.host_rate=200Gbps"});
    REQUIRE(p.warnings.size() == 1);
    CHECK(p.warnings[0].find("topology.gpu_interconnect: not used: a rail-optimized fabric") !=
          std::string::npos);
  }
  SECTION("a scenario's own choice of PCIe leaves the profile's NVLink keys quietly unused") {
    // The scenario's own nvlink_efficiency is said to do nothing; the profile's nvlink_rate not.
    const Scenario s = load_scenario(scenario, {"topology.gpu_interconnect=pcie"});
    CHECK(s.topology.gpu_interconnect == "pcie");
    REQUIRE(s.warnings.size() == 1);
    CHECK(s.warnings[0].find("link.nvlink_efficiency: not used") != std::string::npos);
  }
  SECTION("required keys are checked after the merge, naming the profile that lacks one") {
    TempScenario rail(rail_scenario("p.yaml"));
    rail.add("p.yaml", "topology:\n  gpus_per_server: 8\nlink:\n  host_rate: 400Gbps\n");
    const ConfigError e = load_error(rail.path());
    CHECK(e.where() == rail.path());
    CHECK(e.key_path() == "link.nvlink_rate");
    CHECK(e.message().find("(its server profile p.yaml does not set nvlink_rate either)") !=
          std::string::npos);
  }
}

TEST_CASE("errors in a server profile point into the profile file", "[config]") {
  // Profiles written next to the scenario: the scenario names "p.yaml".
  const auto profile_error = [&](const std::string& profile_text,
                                 const std::vector<std::string>& overrides = {}) {
    TempScenario file(base_naming("p.yaml"));
    const std::string profile = file.add("p.yaml", profile_text);
    return std::make_pair(load_error(file.path(), overrides), profile);
  };
  SECTION("a fabric key is refused: it belongs in the scenario") {
    const auto [e, p] = profile_error("topology:\n  gpus_per_server: 8\n  leaves: 4\n");
    check_error(e, p, 3, 3, "topology.leaves",
                "topology.leaves describes the fabric or the run, not a server: set it in the "
                "scenario (a server profile's topology keys are gpus_per_server, "
                "gpu_interconnect and nics_per_server)");
  }
  SECTION("link.propagation_delay and nic.traffic_class are the scenario's too") {
    const auto [e, p] = profile_error("link:\n  propagation_delay: 1ns\n");
    CHECK(e.where() == p);
    CHECK(e.line() == 2);
    CHECK(e.message().rfind("link.propagation_delay describes the fabric or the run", 0) == 0);
    const auto [f, q] = profile_error("nic:\n  traffic_class: 3\n");
    CHECK(f.key_path() == "nic.traffic_class");
    CHECK(f.line() == 2);
  }
  SECTION("an unknown key, with a suggestion") {
    const auto [e, p] = profile_error("link:\n  nvlink_rte: 3600Gbps\n");
    check_error(e, p, 2, 3, "link.nvlink_rte",
                "unknown key 'nvlink_rte'; did you mean 'nvlink_rate'?");
  }
  SECTION("a server key in the wrong section says where it belongs") {
    const auto [e, p] = profile_error("link:\n  mtu: 4096B\n");
    check_error(e, p, 2, 3, "link.mtu",
                "unknown key 'mtu'; it belongs in the nic section (nic.mtu)");
  }
  SECTION("a value out of range, even where the scenario overrides it") {
    const auto [e, p] =
        profile_error("link:\n  nvlink_efficiency: 2\n", {"link.nvlink_efficiency=0.8"});
    CHECK(e.where() == p);
    CHECK(e.line() == 2);
    CHECK(e.column() == 22);
    CHECK(e.key_path() == "link.nvlink_efficiency");
    CHECK(e.message() == "expected a fraction from 0.05 to 1, e.g. 0.824, got '2'");
  }
  SECTION("a value of a key the scenario's kind does not use is still checked") {
    const auto [e, p] = profile_error("topology:\n  nics_per_server: 0\n");
    check_error(e, p, 2, 20, "topology.nics_per_server",
                "expected an integer from 1 to 1024, got '0'");
  }
  SECTION("the pcie section's own checks run on the profile") {
    const auto [e, p] = profile_error("pcie:\n  lanes: 3\n");
    check_error(e, p, 2, 10, "pcie.lanes", "expected 1, 2, 4, 8 or 16 lanes, got 3");
  }
  SECTION("a profile cannot name another profile") {
    const auto [e, p] = profile_error("server:\n  profile: q.yaml\nlink:\n  host_rate: 1Gbps\n");
    check_error(e, p, 1, 1, "server", "a server profile cannot name another profile");
  }
  SECTION("the profile's top level: name, source and the server sections") {
    {
      const auto [e, p] = profile_error("switch:\n  latency: 1ns\n");
      check_error(e, p, 1, 1, "switch",
                  "unknown key 'switch' in a server profile; switches are the fabric's: set them "
                  "in the scenario, or name a switch profile there (switch.profile)");
    }
    {
      const auto [e, p] = profile_error("workload:\n  ngpus: 8\n");
      check_error(e, p, 1, 1, "workload",
                  "unknown key 'workload' in a server profile; the workload section describes "
                  "the fabric or the run, not a server: set it in the scenario");
    }
    {
      const auto [e, p] = profile_error("lnk:\n  host_rate: 1Gbps\n");
      check_error(e, p, 1, 1, "lnk", "unknown key 'lnk' in a server profile; did you mean 'link'?");
    }
    {
      const auto [e, p] = profile_error("nvlink_rate: 1Gbps\n");
      check_error(e, p, 1, 1, "nvlink_rate",
                  "unknown key 'nvlink_rate' in a server profile; it belongs in the link section "
                  "(link.nvlink_rate)");
    }
    {
      const auto [e, p] = profile_error("name: x\n");
      CHECK(e.where() == p);
      CHECK(e.message() ==
            "a server profile sets its keys under topology, link, nic, pcie or nccl; this one "
            "has none");
    }
    {
      const auto [e, p] = profile_error("link: 3\n");
      check_error(e, p, 1, 7, "link",
                  "expected a map of link keys (a server profile's link keys are host_rate, "
                  "nvlink_rate, nvlink_efficiency, pcie_rate and pcie_latency), got '3'");
    }
    {
      const auto [e, p] = profile_error("link:\n  host_rate: 1Gbps\n  host_rate: 2Gbps\n");
      check_error(e, p, 3, 3, "link.host_rate",
                  "duplicate key 'host_rate' (first given at line 2)");
    }
  }
  SECTION("a missing profile file: at the scenario's server.profile") {
    TempScenario file(base_naming("no_such_server.yaml"));
    const std::string missing =
        (fs::path(file.path()).parent_path() / "no_such_server.yaml").string();
    check_error(load_error(file.path()), file.path(), 18, 12, "server.profile",
                "cannot open server profile '" + missing + "': No such file or directory");
  }
  SECTION("a missing profile file given by --set: names the override") {
    const ConfigError e = error_for(kBase, {"server.profile=../nowhere/x.yaml"});
    CHECK(e.where() == "--set server.profile=../nowhere/x.yaml");
    CHECK(e.key_path() == "server.profile");
    CHECK(e.message().rfind("cannot open server profile '", 0) == 0);
  }
  SECTION("a profile that is not a map") {
    const auto [e, p] = profile_error("- 1\n");
    CHECK(e.where() == p);
    CHECK(e.message() ==
          "expected a map with the sections topology, link, nic, pcie and nccl (and optional "
          "name and source), got a list");
  }
}

TEST_CASE("every profile in configs/servers loads, is listed, and has NCCL's NVLink share",
          "[config]") {
  const fs::path folder = source_path("configs/servers");
  std::ifstream readme_file(folder / "README.md");
  const std::string readme((std::istreambuf_iterator<char>(readme_file)),
                           std::istreambuf_iterator<char>());
  // NCCL src/graph/topo.h: GB/s NCCL counts per NVLink link (SM80_NVLINK_BW 20.0,
  // SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1), of the link's 25 GB/s (NVLink3, NVLink4) or
  // 50 GB/s (NVLink5) a direction; links per GPU: A100 12, H100/H200 18, B200 and GB200 18
  // (NVIDIA's NVLink figures: 600, 900 and 1800 GB/s bidirectional).
  struct Nvlink {
    int links;
    double nccl_GBps_per_link;
  };
  const std::map<std::string, Nvlink> nvlink = {
      {"nvidia_dgx_a100.yaml", {12, 20.0}},    {"nvidia_dgx_h100.yaml", {18, 20.6}},
      {"nvidia_hgx_h200.yaml", {18, 20.6}},    {"nvidia_dgx_b200.yaml", {18, 40.1}},
      {"gcp_a3_ultra.yaml", {18, 20.6}},       {"gcp_a4.yaml", {18, 40.1}},
      {"nvidia_gb200_nvl72.yaml", {18, 40.1}},
  };
  std::vector<fs::path> profiles;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".yaml") profiles.push_back(entry.path());
  }
  std::sort(profiles.begin(), profiles.end());
  REQUIRE(profiles.size() >= 8);
  for (const fs::path& profile : profiles) {
    const std::string name = profile.filename().string();
    INFO(name);
    // Through a spine-leaf scenario (every kind of server) with its own host rate; 72 hosts a
    // leaf hold whole servers of 4, 8 or 72 GPUs.
    const Scenario s =
        load_scenario(source_path("tests/data/config/minimal.yaml"),
                      {"server.profile=" + profile.string(), "topology.hosts_per_leaf=72"});
    CHECK(s.topology.gpus_per_server >= 4);
    CHECK(s.nccl.compute_capability >= 80);
    CHECK(s.warnings.empty());
    CHECK_NOTHROW(fabricsim::build_fabric(s));
    // PCIe Gen4 x16 or Gen5 x16 to host memory: 16 x 16 or 32 GT/s x 128/130, to the bit.
    CHECK((s.link.pcie_rate_bps == 252'061'538'461 || s.link.pcie_rate_bps == 504'123'076'923));
    if (const auto it = nvlink.find(name); it != nvlink.end()) {
      CHECK(s.topology.gpu_interconnect == "nvswitch");
      const double per_link_GBps = double(s.link.nvlink_rate_bps) / 8e9 / it->second.links;
      CHECK(s.link.nvlink_efficiency * per_link_GBps ==
            Approx(it->second.nccl_GBps_per_link).epsilon(1e-9));
      // Rail-optimized, one NIC a GPU: the profile supplies every server key the kind needs.
      TempScenario rail(rail_scenario(profile.string()));
      const Scenario r = load_scenario(rail.path());
      CHECK(r.topology.nics_per_server == r.topology.gpus_per_server);
      CHECK(r.link.host_rate_bps >= 200'000'000'000);
      CHECK_NOTHROW(fabricsim::build_fabric(r));
    } else {
      CHECK(s.topology.gpu_interconnect == "pcie");
    }
    const std::string listed = std::string(1, '`').append(name).append("`");
    CHECK(readme.find(listed) != std::string::npos);
  }
}
