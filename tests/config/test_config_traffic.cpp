// sim/config: traffic, routing and topology.KIND blocks, with the line, column, key path and
// message a mistake gets.
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace config_testing;

// ---- traffic: explicit flows, and the torus dateline class -----------------------------------

namespace {

/// kBase without its workload section (lines 1-18): `lines` appended start at line 19.
std::string without_workload(const std::string& lines) {
  return kBase.substr(0, kBase.find("workload:")) + lines;
}

/// The ConfigError resolve_traffic raises for `s`.
ConfigError resolve_error(Scenario& s, const std::vector<std::string>& host_names) {
  try {
    fabricsim::resolve_traffic(s, host_names);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError from resolve_traffic");
  throw std::logic_error("unreachable");
}

/// "host0" … "host<n-1>".
std::vector<std::string> host_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("host" + std::to_string(i));
  return names;
}

/// The host names of the fabric built from `s`, host i at index i (as the CLI passes them).
std::vector<std::string> fabric_host_names(const Scenario& s) {
  const fabricsim::Fabric f = fabricsim::build_fabric(s);
  std::vector<std::string> names;
  for (const auto v : f.hosts) names.push_back(f.graph[v].name);
  return names;
}

// A 4 x 4 torus with wraparound, PFC lossless on classes 3 and 4. Lines matter.
const std::string kTorus =
    "topology:\n"                 //  1
    "  kind: torus\n"             //  2
    "  dims: [4, 4]\n"            //  3
    "  wraparound: true\n"        //  4
    "link:\n"                     //  5
    "  host_rate: 400Gbps\n"      //  6
    "  propagation_delay: 0ns\n"  //  7
    "switch:\n"                   //  8
    "  latency: 300ns\n"          //  9
    "  buffer_per_port: 1MiB\n"   // 10
    "pfc:\n"                      // 11
    "  enabled: true\n"           // 12
    "  priorities: [3, 4]\n"      // 13
    "workload:\n"                 // 14
    "  minbytes: 1KiB\n"          // 15
    "  maxbytes: 1MiB\n"          // 16
    "routing:\n";                 // 17; "  dateline_class: N" is line 18, N at column 19

}  // namespace

TEST_CASE("traffic: flows with their defaults and units — workload becomes optional", "[config]") {
  const std::string path = source_path("tests/data/config/traffic.yaml");
  const Scenario s = load_scenario(path);
  CHECK_FALSE(s.has_workload);
  REQUIRE(s.traffic.size() == 2);
  const fabricsim::TrafficFlow& a = s.traffic[0];
  CHECK(a.src == "0");
  CHECK(a.dst == "3");
  CHECK(a.bytes == 4'194'304);  // 4MiB
  CHECK(a.start_ps == 0);       // default
  CHECK(a.priority == -1);      // default: nic.traffic_class
  CHECK(a.flow == -1);          // default: the item's index
  CHECK(a.src_host == -1);      // resolved later, against the fabric
  CHECK(a.dst_host == -1);
  const fabricsim::TrafficFlow& b = s.traffic[1];
  CHECK(b.src == "host1");
  CHECK(b.dst == "host2");
  CHECK(b.bytes == 67'108'864);     // 64MiB
  CHECK(b.start_ps == 10'000'000);  // 10us
  CHECK(b.priority == 3);
  CHECK(b.flow == 7);
  // Origins: each item, and each key given.
  CHECK(s.origins.at("traffic[0]").line == 17);
  CHECK(s.origins.at("traffic[0]").column == 5);
  CHECK(s.origins.at("traffic[0].dst").line == 17);
  CHECK(s.origins.at("traffic[0].dst").column == 19);
  CHECK(s.origins.at("traffic[1]").line == 18);
  CHECK(s.origins.at("traffic[1].src").column == 10);
  CHECK(s.origins.at("traffic[1].start").line == 21);
  CHECK(s.origins.at("traffic[1].start").column == 12);
  CHECK_FALSE(s.origins.count("traffic[0].start"));
  CHECK(std::string(fabricsim::key_error(s, "traffic[1].dst", "busy").what()) ==
        path + ":19:10: traffic[1].dst: busy");

  SECTION("beside a workload: both are kept") {
    TempScenario file(kBase + "traffic:\n  - {src: 1, dst: 2, size: 1B}\n");
    const Scenario t = load_scenario(file.path());
    CHECK(t.has_workload);
    CHECK(t.workload.maxbytes == 256 * 1024 * 1024);
    REQUIRE(t.traffic.size() == 1);
    CHECK(t.traffic[0].bytes == 1);
  }
  SECTION("without traffic the workload is there as before") {
    CHECK(load_scenario(source_path("tests/data/config/minimal.yaml")).has_workload);
    CHECK(load_scenario(source_path("tests/data/config/minimal.yaml")).traffic.empty());
  }
  SECTION("the ends of the ranges") {
    TempScenario file(
        without_workload("traffic:\n  - {src: +0, dst: host9, size: 1B, start: 3600s, priority: 7, "
                         "flow: 1073741823}\n  - {src: a, dst: b, size: 1B, priority: 0, flow: "
                         "0, start: 0ns}\n"));
    const Scenario t = load_scenario(file.path());
    CHECK(t.traffic[0].src == "+0");  // as written
    CHECK(t.traffic[0].start_ps == 3'600'000'000'000'000);
    CHECK(t.traffic[0].priority == 7);
    CHECK(t.traffic[0].flow == 1'073'741'823);
    CHECK(t.traffic[1].priority == 0);
    CHECK(t.traffic[1].flow == 0);
  }
  SECTION("a workload given with traffic is still checked in full") {
    check(edit("  minbytes: 8KiB", "") + "traffic:\n  - {src: 0, dst: 1, size: 1MiB}\n", 19, 1,
          "workload.minbytes", "missing required key; workload needs minbytes, maxbytes");
  }
}

TEST_CASE("traffic: bad lists, items and values say where and what", "[config]") {
  const std::string list_expected =
      "expected a list of flows, each a map with src, dst and size, e.g. [{src: 0, dst: 1, "
      "size: 1MiB}]";
  // "traffic:" is line 19; items from line 20.
  const auto flows = [](const std::string& items) {
    return without_workload("traffic:\n" + items);
  };
  SECTION("not a list, an empty list, nothing") {
    check(without_workload("traffic: {src: 0, dst: 1, size: 1MiB}\n"), 19, 10, "traffic",
          list_expected + ", got a map");
    check(without_workload("traffic: []\n"), 19, 10, "traffic",
          list_expected + ", got an empty list");
    check(without_workload("traffic:\n"), 19, 1, "traffic", list_expected + ", got nothing");
    check(without_workload("traffic: 3\n"), 19, 10, "traffic", list_expected + ", got '3'");
  }
  SECTION("an item that is not a map") {
    check(flows("  - {src: 0, dst: 1, size: 1MiB}\n  - 3\n"), 21, 5, "traffic[1]",
          "expected a flow: a map with src, dst, size, start, priority, flow, e.g. {src: 0, dst: "
          "1, size: 1MiB}, got '3'");
    check(flows("  - [0, 1, 1MiB]\n"), 20, 5, "traffic[0]",
          "expected a flow: a map with src, dst, size, start, priority, flow, e.g. {src: 0, dst: "
          "1, size: 1MiB}, got a list");
  }
  SECTION("unknown keys: did you mean, also for other tools' names") {
    check(flows("  - {src: 0, dst: 1, sise: 1MiB}\n"), 20, 22, "traffic[0].sise",
          "unknown key 'sise'; did you mean 'size'?");
    check(flows("  - {src: 0, dst: 1, size: 1MiB}\n  - {src: 0, dst: 1, bytes: 1MiB}\n"), 21, 22,
          "traffic[1].bytes", "unknown key 'bytes'; did you mean 'size'?");
    check(flows("  - {src: 0, dst: 1, size: 1MiB, pg: 3}\n"), 20, 34, "traffic[0].pg",
          "unknown key 'pg'; did you mean 'priority'?");
    check(flows("  - {src: 0, dst: 1, size: 1MiB, colour: red}\n"), 20, 34, "traffic[0].colour",
          "unknown key 'colour'; a flow has only src, dst, size, start, priority, flow");
  }
  SECTION("a required key missing: at the item") {
    check(flows("  - {src: 0, size: 1MiB}\n"), 20, 5, "traffic[0].dst",
          "missing required key; a flow needs src, dst, size");
    check(flows("  - {src: 0, dst: 1, size: 1MiB}\n  - src: 0\n    dst: 1\n"), 21, 5,
          "traffic[1].size", "missing required key; a flow needs src, dst, size");
  }
  SECTION("a key twice") {
    check(flows("  - src: 0\n    dst: 1\n    src: 2\n    size: 1MiB\n"), 22, 5, "traffic[0].src",
          "duplicate key 'src' (first given at line 20)");
  }
  SECTION("src and dst: a host index >= 0 or a name") {
    check(flows("  - {src: -1, dst: 1, size: 1MiB}\n"), 20, 11, "traffic[0].src",
          "expected a host index (an integer >= 0) or a host name, e.g. 3 or host3, got a "
          "negative index '-1'");
    check(flows("  - {src: 0, dst: [1, 2], size: 1MiB}\n"), 20, 19, "traffic[0].dst",
          "expected a host index (an integer >= 0) or a host name, e.g. 3 or host3, got a list");
    check(flows("  - {src: '', dst: 1, size: 1MiB}\n"), 20, 11, "traffic[0].src",
          "expected a host index (an integer >= 0) or a host name, e.g. 3 or host3, got ''");
    check(flows("  - src: 0\n    dst:\n    size: 1MiB\n"), 21, 5, "traffic[0].dst",
          "expected a host index (an integer >= 0) or a host name, e.g. 3 or host3, got "
          "nothing");
  }
  SECTION("size: a positive size with its unit") {
    check(flows("  - {src: 0, dst: 1, size: 4096}\n"), 20, 28, "traffic[0].size",
          "expected a size with a unit, e.g. 8KiB, got '4096'");
    check(flows("  - {src: 0, dst: 1, size: 0B}\n"), 20, 28, "traffic[0].size",
          "expected a size from 1B to 64GiB, got zero ('0B')");
    check(flows("  - {src: 0, dst: 1, size: -1KiB}\n"), 20, 28, "traffic[0].size",
          "expected a size from 1B to 64GiB, got a negative size '-1KiB'");
    check(flows("  - {src: 0, dst: 1, size: 4Mib}\n"), 20, 28, "traffic[0].size",
          unit_error(fabricsim::parse_size_bytes, "4Mib"));
  }
  SECTION("start: a time >= 0 with its unit") {
    check(flows("  - {src: 0, dst: 1, size: 1MiB, start: 10}\n"), 20, 41, "traffic[0].start",
          "expected a time with a unit, e.g. 10us, got '10'");
    check(flows("  - {src: 0, dst: 1, size: 1MiB, start: -1us}\n"), 20, 41, "traffic[0].start",
          "expected a time from 0s to 3600s, got a negative time '-1us'");
    check(flows("  - {src: 0, dst: 1, size: 1MiB, start: 2d}\n"), 20, 41, "traffic[0].start",
          unit_error(fabricsim::parse_time_ps, "2d"));
    check(flows("  - {src: 0, dst: 1, size: 1MiB, start: 3601s}\n"), 20, 41, "traffic[0].start",
          "expected a time from 0s to 3600s, got '3601s'");
  }
  SECTION("priority 0..7, flow 0..2^30-1 (bit 30 marks NIC loopbacks)") {
    check(flows("  - {src: 0, dst: 1, size: 1MiB, priority: 8}\n"), 20, 44, "traffic[0].priority",
          "expected an integer from 0 to 7, got '8'");
    check(flows("  - {src: 0, dst: 1, size: 1MiB, flow: 1073741824}\n"), 20, 40, "traffic[0].flow",
          "expected an integer from 0 to 1073741823, got '1073741824'");
    check(flows("  - {src: 0, dst: 1, size: 1MiB, flow: x}\n"), 20, 40, "traffic[0].flow",
          "expected an integer, got 'x'");
  }
  SECTION("neither workload nor traffic: the workload is missing, traffic named as the other way") {
    std::string path;
    const ConfigError e = error_for(without_workload(""), {}, &path);
    CHECK(e.line() == 0);
    CHECK(e.key_path() == "workload");
    CHECK(e.message() ==
          "missing required section (with at least minbytes, maxbytes), or a traffic section in "
          "its place (" +
              list_expected.substr(std::string("expected ").size()) +
              "), or a training section, or a jobs section");
  }
  SECTION("a misspelt section name") {
    check(without_workload("trafic:\n  - {src: 0, dst: 1, size: 1MiB}\n"), 19, 1, "trafic",
          "unknown key 'trafic'; did you mean 'traffic'?");
  }
  SECTION("--set cannot reach into the list") {
    for (const std::string o : {"traffic=3", "traffic[0].src=3", "traffic.0.src=3"}) {
      const ConfigError e = error_for(kBase, {o});
      CHECK(e.where() == "--set " + o);
      CHECK(e.key_path() == o.substr(0, o.find('=')));
      CHECK(e.message() == "traffic is a list; edit it in the file");
    }
  }
}

TEST_CASE("resolve_traffic: host indices and names against the fabric", "[config]") {
  using fabricsim::resolve_traffic;
  SECTION("by index and by name, with the fabric's names") {
    Scenario s = load_scenario(source_path("tests/data/config/traffic.yaml"));
    const std::vector<std::string> names = fabric_host_names(s);
    REQUIRE(names == host_names(4));
    resolve_traffic(s, names);
    CHECK(s.traffic[0].src_host == 0);
    CHECK(s.traffic[0].dst_host == 3);
    CHECK(s.traffic[1].src_host == 1);
    CHECK(s.traffic[1].dst_host == 2);
  }
  // Items from line 19 of kBase without its workload (32 hosts).
  const auto loaded = [](const std::string& items, std::string* path) {
    TempScenario file(without_workload("traffic:\n" + items));
    *path = file.path();
    return load_scenario(file.path());
  };
  SECTION("an index beyond the hosts: at the value, with the fabric's range") {
    std::string path;
    Scenario s = loaded(
        "  - {src: 0, dst: 1, size: 1MiB}\n  - {src: 2, dst: 3, size: 1MiB}\n"
        "  - {src: host4, dst: 17, size: 1MiB}\n",
        &path);
    check_error(resolve_error(s, host_names(16)), path, 22, 23, "traffic[2].dst",
                "host 17 does not exist: the fabric has 16 hosts (0 … 15)");
    check_error(resolve_error(s, host_names(1)), path, 20, 19, "traffic[0].dst",
                "host 1 does not exist: the fabric has 1 host (0)");
    check_error(resolve_error(s, {}), path, 20, 11, "traffic[0].src",
                "host 0 does not exist: the fabric has no hosts");
    Scenario big = loaded("  - {src: 99999999999999999999, dst: 1, size: 1MiB}\n", &path);
    check_error(resolve_error(big, host_names(16)), path, 20, 11, "traffic[0].src",
                "host 99999999999999999999 does not exist: the fabric has 16 hosts (0 … 15)");
  }
  SECTION("a name that is not a host: did you mean, or what is expected") {
    std::string path;
    Scenario s = loaded("  - {src: hots3, dst: 1, size: 1MiB}\n", &path);
    check_error(resolve_error(s, fabric_host_names(s)), path, 20, 11, "traffic[0].src",
                "no host named 'hots3'; did you mean 'host3'?");
    Scenario far = loaded("  - src: 0\n    dst: gpu7\n    size: 1MiB\n", &path);
    check_error(resolve_error(far, fabric_host_names(far)), path, 21, 10, "traffic[0].dst",
                "no host named 'gpu7'; expected a host name such as 'host0' or an index from 0 "
                "to 31");
    Scenario switch_name = loaded("  - {src: 0, dst: leaf1, size: 1MiB}\n", &path);
    CHECK(resolve_error(switch_name, fabric_host_names(switch_name)).message() ==
          "no host named 'leaf1'; expected a host name such as 'host0' or an index from 0 to 31");
  }
  SECTION("src and dst the same host, by index or by name: at dst") {
    std::string path;
    Scenario s =
        loaded("  - {src: 0, dst: 1, size: 1MiB}\n  - {src: 3, dst: host3, size: 1MiB}\n", &path);
    check_error(resolve_error(s, host_names(8)), path, 21, 19, "traffic[1].dst",
                "dst is host 3 (host3), the same host as src; a flow goes between two different "
                "hosts");
    CHECK(s.traffic[0].dst_host == 1);  // the flows before it are resolved
  }
}

TEST_CASE("routing.dateline_class: a torus with wraparound, not the class packets start in",
          "[config]") {
  SECTION("accepted on a torus; default off; by --set") {
    TempScenario file(kTorus + "  dateline_class: 4\n");
    const Scenario s = load_scenario(file.path());
    CHECK(s.routing.dateline_class == 4);
    CHECK(s.origins.at("routing.dateline_class").line == 18);
    CHECK(s.origins.at("routing.dateline_class").column == 19);
    CHECK(load_scenario(file.path(), {"routing.dateline_class=0"}).routing.dateline_class == 0);
    CHECK(load_scenario(source_path("tests/data/config/minimal.yaml")).routing.dateline_class ==
          -1);
    // wraparound is true by default.
    TempScenario implicit(edit("  wraparound: true", "", kTorus) + "  dateline_class: 4\n");
    CHECK(load_scenario(implicit.path()).routing.dateline_class == 4);
  }
  SECTION("an integer 0..7") {
    check(kTorus + "  dateline_class: 8\n", 18, 19, "routing.dateline_class",
          "expected an integer from 0 to 7, got '8'");
    check(kTorus + "  dateline_class: -1\n", 18, 19, "routing.dateline_class",
          "expected an integer from 0 to 7, got '-1'");
  }
  SECTION("only on a torus") {
    check(kBase + "routing:\n  dateline_class: 4\n", 29, 19, "routing.dateline_class",
          "applies to topology kind torus, not to this scenario's kind spine-leaf");
  }
  SECTION("only with wraparound") {
    const std::string note =
        "; a mesh (topology.wraparound: false) has no wraparound links for a dateline to cut";
    check(edit("  wraparound: true", "  wraparound: false", kTorus) + "  dateline_class: 4\n", 18,
          19, "routing.dateline_class",
          "applies to wraparound true, not to this scenario's wraparound false" + note);
    TempScenario file(kTorus + "  dateline_class: 4\n");
    const ConfigError e = load_error(file.path(), {"topology.wraparound=false"});
    CHECK(e.line() == 18);
    CHECK(e.message() ==
          "applies to wraparound true, not to this scenario's wraparound false" + note);
  }
  SECTION("not nic.traffic_class: a suggestion among the lossless classes") {
    check(kTorus + "  dateline_class: 3\n", 18, 19, "routing.dateline_class",
          "dateline_class 3 is the class packets start in (nic.traffic_class); pick another "
          "lossless class, e.g. 4");
    // pfc lists another class: that one.
    check(edit("  priorities: [3, 4]", "  priorities: [3, 2]", kTorus) + "  dateline_class: 3\n",
          18, 19, "routing.dateline_class",
          "dateline_class 3 is the class packets start in (nic.traffic_class); pick another "
          "lossless class, e.g. 2");
    // No other listed: the next class up, skipping the CNPs' class (6).
    check(edit("  priorities: [3, 4]", "", kTorus) +
              "  dateline_class: 5\nnic:\n  traffic_class: 5\n",
          17, 19, "routing.dateline_class",
          "dateline_class 5 is the class packets start in (nic.traffic_class); pick another "
          "lossless class, e.g. 7");
    const ConfigError e = error_for(kTorus + "  dateline_class: 4\n", {"nic.traffic_class=4"});
    CHECK(e.line() == 18);
    CHECK(e.message() ==
          "dateline_class 4 is the class packets start in (nic.traffic_class); pick another "
          "lossless class, e.g. 3");
  }
  SECTION("a flow may not start in the dateline class either") {
    check(kTorus + "  dateline_class: 4\ntraffic:\n  - {src: 0, dst: 5, size: 1MiB, priority: 4}\n",
          20, 44, "traffic[0].priority",
          "priority 4 is routing.dateline_class, the class packets move to at a wraparound link; "
          "a flow must start in another class");
    TempScenario file(
        kTorus + "  dateline_class: 4\ntraffic:\n  - {src: 0, dst: 5, size: 1MiB, priority: 3}\n");
    CHECK(load_scenario(file.path()).traffic[0].priority == 3);
  }
}

namespace {

// One scenario with a shape for two kinds (topology.KIND blocks). Line numbers matter.
const std::string kBlocks =
    "name: blocks\n"                // 1
    "topology:\n"                   // 2
    "  kind: spine-leaf\n"          // 3
    "  oversubscription: 1\n"       // 4
    "  spine-leaf:\n"               // 5
    "    leaves: 4\n"               // 6
    "    spines: 2\n"               // 7
    "    hosts_per_leaf: 8\n"       // 8
    "  fat-tree:\n"                 // 9
    "    k: 8\n"                    // 10
    "    pods: 2\n"                 // 11
    "    oversubscription: 3\n"     // 12
    "link:\n"                       // 13
    "  host_rate: 400Gbps\n"        // 14
    "  propagation_delay: 500ns\n"  // 15
    "switch:\n"                     // 16
    "  latency: 600ns\n"            // 17
    "  buffer_per_port: 2MiB\n"     // 18
    "workload:\n"                   // 19
    "  minbytes: 8KiB\n"            // 20
    "  maxbytes: 1MiB\n";           // 21

/// The Scenario `text` loads to with `overrides`.
Scenario load_text(const std::string& text, const std::vector<std::string>& overrides = {}) {
  TempScenario file(text);
  return load_scenario(file.path(), overrides);
}

}  // namespace

TEST_CASE("topology.KIND blocks: the chosen kind's block stands for the plain keys", "[config]") {
  const fabricsim::TopologyConfig defaults;
  SECTION("spine-leaf: its block's keys, the plain ratio; the fat-tree block is not applied") {
    const Scenario s = load_text(kBlocks);
    CHECK(s.topology.kind == "spine-leaf");
    CHECK(s.topology.leaves == 4);
    CHECK(s.topology.spines == 2);
    CHECK(s.topology.hosts_per_leaf == 8);
    CHECK(s.topology.oversubscription == 1.0);  // line 4: the spine-leaf block has none
    CHECK(s.topology.k == defaults.k);
    CHECK(s.topology.pods == defaults.pods);
    // 4 leaves x 8 hosts, from the block.
    CHECK(fabricsim::build_fabric(s).hosts.size() == 4 * 8);
  }
  SECTION("fat-tree: its block's keys; its block's ratio overrides the plain one in the file") {
    const Scenario s = load_text(kBlocks, {"topology.kind=fat-tree"});
    CHECK(s.topology.kind == "fat-tree");
    CHECK(s.topology.k == 8);
    CHECK(s.topology.pods == 2);
    CHECK(s.topology.oversubscription == 3.0);  // line 12 over line 4
    CHECK(s.topology.leaves == defaults.leaves);
    CHECK(s.topology.hosts_per_leaf == defaults.hosts_per_leaf);
    // k = 8 at 3:1: h_e = 6, u_e = 2, d_a = 4 (1:1 aggs); 2 pods x 4 edges x 6 hosts.
    CHECK(fabricsim::build_fabric(s).hosts.size() == 2 * 4 * 6);
  }
  SECTION("a --set of the plain key overrides the block") {
    CHECK(load_text(kBlocks, {"topology.kind=fat-tree", "topology.oversubscription=7"})
              .topology.oversubscription == 7.0);
    CHECK(load_text(kBlocks, {"topology.leaves=6"}).topology.leaves == 6);
    // ... whichever order the --set options come in.
    CHECK(load_text(kBlocks, {"topology.oversubscription=7", "topology.kind=fat-tree"})
              .topology.oversubscription == 7.0);
  }
  SECTION("--set topology.KIND.KEY sets a block key") {
    CHECK(load_text(kBlocks, {"topology.spine-leaf.leaves=16"}).topology.leaves == 16);
    const Scenario ft =
        load_text(kBlocks, {"topology.kind=fat-tree", "topology.fat-tree.k=4",
                            "topology.fat-tree.oversubscription=1", "topology.fat-tree.pods=3"});
    CHECK(ft.topology.k == 4);
    CHECK(ft.topology.pods == 3);
    CHECK(ft.topology.oversubscription == 1.0);
    // A block key of the kind not chosen changes nothing.
    const Scenario sl = load_text(kBlocks, {"topology.fat-tree.k=4"});
    CHECK(sl.topology.k == defaults.k);
    CHECK(sl.topology.leaves == 4);
    // A block the file does not have.
    std::string no_ft = kBlocks;
    no_ft.erase(no_ft.find("  fat-tree:\n"), std::string("  fat-tree:\n    k: 8\n    pods: 2\n"
                                                         "    oversubscription: 3\n")
                                                 .size());
    const Scenario added = load_text(
        no_ft, {"topology.kind=fat-tree", "topology.fat-tree.k=2", "topology.fat-tree.pods=1"});
    CHECK(added.topology.k == 2);
    CHECK(added.topology.pods == 1);
    // A whole block in one --set replaces the file's (before: it was refused).
    const Scenario whole =
        load_text(kBlocks, {"topology.kind=fat-tree", "topology.fat-tree={k: 6, pods: 5}"});
    CHECK(whole.topology.k == 6);
    CHECK(whole.topology.pods == 5);
    CHECK(whole.topology.oversubscription == 1.0);  // the block's 3 went with the block
    CHECK_THROWS_WITH(load_text(kBlocks, {"topology.fat-tree={k: 6, podz: 5}"}),
                      Catch::Contains("topology.fat-tree.podz: unknown key 'podz'; did you mean "
                                      "'pods'?"));
    CHECK_THROWS_WITH(load_text(kBlocks, {"topology.fat-tree=3"}),
                      Catch::Contains("expected a map of fat-tree topology keys"));
  }
  SECTION("an empty block is allowed") {
    const Scenario s = load_text(edit("  fat-tree:", "  torus:\n  fat-tree:", kBlocks));
    CHECK(s.topology.leaves == 4);
  }
  SECTION("a bad value in the chosen block names the block key, line and column") {
    check(edit("    leaves: 4", "    leaves: 0", kBlocks), 6, 13, "topology.spine-leaf.leaves",
          "expected an integer from 1 to 1000000, got '0'");
  }
  SECTION("a builder's error points at the block key that gave the value") {
    // 8 hosts x 400G at 5:1 need 1.6 uplinks per leaf: not a whole number.
    TempScenario file(edit("    leaves: 4", "    leaves: 4\n    oversubscription: 5", kBlocks));
    const ConfigError e = build_error(load_scenario(file.path()));
    CHECK(e.where() == file.path());
    CHECK(e.line() == 7);
    CHECK(e.column() == 23);
    // Named as written (before: the plain topology.oversubscription was named).
    CHECK(e.key_path() == "topology.spine-leaf.oversubscription");
    // topology.pods beyond k (k = 8: at most 8 pods), at line 11.
    TempScenario pods(edit("    pods: 2", "    pods: 9", kBlocks));
    const ConfigError p = build_error(load_scenario(pods.path(), {"topology.kind=fat-tree"}));
    CHECK(p.line() == 11);
    CHECK(p.column() == 11);
    CHECK(p.key_path() == "topology.fat-tree.pods");
    // A --set of the plain key overrides the block's value and is named as given.
    const ConfigError q =
        build_error(load_scenario(pods.path(), {"topology.kind=fat-tree", "topology.pods=10"}));
    CHECK(q.key_path() == "topology.pods");
    CHECK(q.where() == "--set topology.pods=10");
  }
}

TEST_CASE("topology.KIND blocks: every block is checked, chosen or not", "[config]") {
  SECTION("an unknown key, with a suggestion") {
    check(edit("    k: 8", "    kk: 8", kBlocks), 10, 5, "topology.fat-tree.kk",
          "unknown key 'kk'; did you mean 'k'?");
    check(edit("    pods: 2", "    pod: 2", kBlocks), 11, 5, "topology.fat-tree.pod",
          "unknown key 'pod'; did you mean 'pods'?");
  }
  SECTION("an unknown key with no close match lists the topology keys") {
    TempScenario file(edit("    pods: 2", "    colour: red", kBlocks));
    const ConfigError e = load_error(file.path());
    CHECK(e.line() == 11);
    CHECK(e.column() == 5);
    CHECK(e.key_path() == "topology.fat-tree.colour");
    CHECK_THAT(e.message(), Catch::StartsWith("unknown key 'colour'; valid keys are: kind, "));
    CHECK_THAT(e.message(), Catch::Contains("hosts_per_leaf"));
    CHECK_THAT(e.message(), Catch::Contains("pods"));
  }
  SECTION("a topology key of another kind") {
    check(edit("    pods: 2", "    leaves: 2", kBlocks), 11, 5, "topology.fat-tree.leaves",
          "applies to topology kind spine-leaf, not to fat-tree");
    check(edit("    spines: 2", "    spines: 2\n    k: 4", kBlocks), 8, 5, "topology.spine-leaf.k",
          "applies to topology kind fat-tree, not to spine-leaf");
    check(edit("  fat-tree:", "  torus:\n    gpus_per_server: 8\n  fat-tree:", kBlocks), 10, 5,
          "topology.torus.gpus_per_server",
          "applies to topology kind spine-leaf fat-tree rail-optimized, not to torus");
  }
  SECTION("kind inside a block") {
    check(edit("    k: 8", "    kind: torus\n    k: 8", kBlocks), 10, 5, "topology.fat-tree.kind",
          "a kind block cannot change the kind; set topology.kind");
  }
  SECTION("a block that is not a map") {
    std::string text = kBlocks;
    text.replace(
        text.find("  fat-tree:\n    k: 8\n    pods: 2\n    oversubscription: 3\n"),
        std::string("  fat-tree:\n    k: 8\n    pods: 2\n    oversubscription: 3\n").size(),
        "  fat-tree: 8\n");
    std::string path;
    const ConfigError e = error_for(text, {}, &path);
    CHECK(e.where() == path);
    CHECK(e.line() == 9);
    CHECK(e.key_path() == "topology.fat-tree");
    CHECK_THAT(e.message(),
               Catch::StartsWith("expected a map of fat-tree topology keys, e.g. {k: 8}, got "));
    std::string listed = kBlocks;
    const std::string block =
        "  spine-leaf:\n    leaves: 4\n    spines: 2\n    hosts_per_leaf: 8\n";
    listed.replace(listed.find(block), block.size(), "  spine-leaf: [4, 2]\n");
    const ConfigError list = error_for(listed);
    CHECK(list.line() == 5);
    CHECK(list.key_path() == "topology.spine-leaf");
    CHECK_THAT(list.message(),
               Catch::StartsWith("expected a map of spine-leaf topology keys, e.g. {spines: 4}"));
  }
  SECTION("a bad value in a block not chosen (before: validate passed it)") {
    CHECK_THROWS_WITH(load_text(kBlocks, {"topology.fat-tree.k=eight"}),
                      Catch::Contains("topology.fat-tree.k: expected an integer"));
    CHECK_THROWS_WITH(load_text(edit("    k: 8", "    k: [16]", kBlocks)),
                      Catch::Contains(":10:") && Catch::Contains("topology.fat-tree.k:"));
  }
  SECTION("a duplicate key") {
    check(edit("    pods: 2", "    pods: 2\n    pods: 4", kBlocks), 12, 5, "topology.fat-tree.pods",
          "duplicate key 'pods' (first given at line 11)");
  }
  SECTION("a plain key of another kind names the block it could go in") {
    check(edit("  oversubscription: 1", "  oversubscription: 1\n  k: 8", kBlocks), 5, 6,
          "topology.k",
          "applies to topology kind fat-tree, not to this scenario's kind spine-leaf; to keep a "
          "shape for each kind in one scenario, put it under topology.fat-tree "
          "(topology.fat-tree.k)");
  }
  SECTION("--set topology.KIND.KEY: unknown keys and kind are refused") {
    TempScenario file(kBlocks);
    const auto set_error = [&](const std::string& override_text) {
      const ConfigError e = load_error(file.path(), {override_text});
      CHECK(e.where() == "--set " + override_text);
      CHECK(e.line() == 0);
      return std::string(e.what());
    };
    CHECK(set_error("topology.fat-tree.kk=8") ==
          "--set topology.fat-tree.kk=8: topology.fat-tree.kk: unknown key; did you mean "
          "'topology.fat-tree.k'?");
    // A misspelt block name finds its block (before: it suggested topology.spines).
    CHECK(set_error("topology.spine_leaf={leaves: 8}") ==
          "--set topology.spine_leaf={leaves: 8}: topology.spine_leaf: unknown key; did you "
          "mean 'topology.spine-leaf'?");
    CHECK(set_error("topology.spinleaf.leaves=8") ==
          "--set topology.spinleaf.leaves=8: topology.spinleaf.leaves: unknown key; did you mean "
          "'topology.spine-leaf.leaves'?");
    CHECK(set_error("topology.spine-leaf.kind=torus") ==
          "--set topology.spine-leaf.kind=torus: topology.spine-leaf.kind: a kind block cannot "
          "change the kind; set topology.kind");
  }
}

TEST_CASE("config: every path override_paths() lists is a key --set knows") {
  // The --set fuzzer (fuzz/fuzz_set.cpp) draws its keys from override_paths(): each must reach
  // its key's own parser (which may refuse the value), never "unknown key".
  const std::vector<std::string> paths = fabricsim::override_paths();
  REQUIRE(paths.size() > 100);
  for (const std::string& path : paths) {
    INFO(path);
    try {
      fabricsim::load_scenario(source_path("scenarios/quickstart.yaml"), {path + "=1"});
    } catch (const ConfigError& e) {
      CHECK(e.message().find("unknown key") == std::string::npos);
    }
  }
}
