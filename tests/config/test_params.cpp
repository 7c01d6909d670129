// The params table (`fabricsim params`) against the loader: every key the loader accepts is a
// row, and every row is a key the loader accepts. Both directions are derived, not listed: the
// loader's --set paths and the keys of every shipped scenario and switch profile on one side,
// the loader's verdict on each row's key on the other.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/algorithm_registry.hpp"
#include "sim/config/loader.hpp"
#include "sim/config/params.hpp"
#include "topologies/family.hpp"

namespace fs = std::filesystem;
using namespace fabricsim;

namespace {

const fs::path kSource = FABRICSIM_SOURCE_DIR;

std::set<std::string> table_paths() {
  std::set<std::string> paths;
  for (const ParamInfo& p : param_table()) paths.insert(p.path);
  return paths;
}

std::set<std::string> table_sections() {
  std::set<std::string> sections;
  for (const ParamInfo& p : param_table()) {
    sections.insert(p.section);
    // A list's items (traffic[]) are keys of the section `traffic`.
    if (p.section.size() > 2 && p.section.compare(p.section.size() - 2, 2, "[]") == 0) {
      sections.insert(p.section.substr(0, p.section.size() - 2));
    }
  }
  return sections;
}

/// The topology kinds, as the table's topology.kind row lists them ("a | b | c").
std::vector<std::string> topology_kinds() {
  for (const ParamInfo& p : param_table()) {
    if (p.path != "topology.kind") continue;
    std::vector<std::string> kinds;
    std::istringstream words(p.range);
    for (std::string w; words >> w;) {
      if (w != "|") kinds.push_back(w);
    }
    return kinds;
  }
  return {};
}

/// Every key path under `node` (at `path`) that is not a row of `table`, into `missing`. A row's
/// value is not looked into, except the maps of a list (training.layers[]); `switches:` holds
/// switch names and topology a block per kind, each over rows of their own.
void walk(const YAML::Node& node, const std::string& path, const std::set<std::string>& table,
          const std::vector<std::string>& kinds, std::vector<std::string>& missing) {
  const bool is_row = table.count(path) > 0;
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) {
      if (item.IsMap() || !is_row) walk(item, path + "[]", table, kinds, missing);
    }
    return;
  }
  if (is_row) return;
  if (!node.IsMap()) {
    missing.push_back(path);
    return;
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (path == "switches") {
      walk(entry.second, "", table, kinds, missing);  // NAME: {pfc: {...}, ecn: {...}}
    } else if (path == "topology" && std::count(kinds.begin(), kinds.end(), key)) {
      walk(entry.second, "topology", table, kinds, missing);
    } else {
      walk(entry.second, path.empty() ? key : path + "." + key, table, kinds, missing);
    }
  }
}

}  // namespace

TEST_CASE("Every path --set takes is a key of the params table or a section of it") {
  const std::set<std::string> table = table_paths();
  const std::set<std::string> sections = table_sections();
  const std::vector<std::string> kinds = topology_kinds();
  REQUIRE(kinds.size() >= 2);
  const std::vector<std::string> paths = override_paths();
  REQUIRE(paths.size() > table.size() / 2);
  for (std::string path : paths) {
    // switches.NAME.pfc.xoff is pfc.xoff for one switch; topology.KIND.k is topology.k.
    if (path.rfind("switches.", 0) == 0) {
      const size_t key_dot = path.rfind('.');
      path = path.substr(path.rfind('.', key_dot - 1) + 1);
    }
    for (const std::string& kind : kinds) {
      const std::string block = "topology." + kind;
      if (path == block) path = "topology";
      if (path.rfind(block + ".", 0) == 0) path = "topology" + path.substr(block.size());
    }
    INFO(path);
    CHECK((table.count(path) > 0 || sections.count(path) > 0));
  }
}

TEST_CASE(
    "Every key of the shipped scenarios and switch and server profiles is a key of the params "
    "table") {
  const std::set<std::string> table = table_paths();
  const std::vector<std::string> kinds = topology_kinds();
  int files = 0;
  for (const auto& f : fs::directory_iterator(kSource / "scenarios")) {
    if (f.path().extension() != ".yaml") continue;
    std::vector<std::string> missing;
    walk(YAML::LoadFile(f.path().string()), "", table, kinds, missing);
    INFO(f.path().filename().string());
    CHECK(missing == std::vector<std::string>{});
    ++files;
  }
  for (const auto& f : fs::directory_iterator(kSource / "configs" / "switches")) {
    if (f.path().extension() != ".yaml") continue;
    std::vector<std::string> missing;
    walk(YAML::LoadFile(f.path().string())["switch"], "switch", table, kinds, missing);
    INFO(f.path().filename().string());
    CHECK(missing == std::vector<std::string>{});
    ++files;
  }
  for (const auto& f : fs::directory_iterator(kSource / "configs" / "servers")) {
    if (f.path().extension() != ".yaml") continue;
    std::vector<std::string> missing;
    const YAML::Node profile = YAML::LoadFile(f.path().string());
    for (const char* section : {"topology", "link", "nic", "pcie", "nccl"}) {
      if (profile[section]) walk(profile[section], section, table, kinds, missing);
    }
    INFO(f.path().filename().string());
    CHECK(missing == std::vector<std::string>{});
    ++files;
  }
  CHECK(files >= 10);
}

TEST_CASE("Every key of the params table is one the loader reads, not an unknown key") {
  // A value no key takes (a list holding an empty list: not a scalar, not a map, and no list key
  // takes lists as items): the loader must refuse it naming that key, or (a key of another kind or
  // transport) say where it applies; never call it unknown.
  const std::string scenario = (kSource / "scenarios" / "quickstart.yaml").string();
  const fs::path tmp = fs::temp_directory_path() / "fabricsim_test_params.yaml";
  int rows = 0;
  for (const ParamInfo& p : param_table()) {
    INFO(p.path);
    std::string message, key_path;
    try {
      if (p.path.find("[]") == std::string::npos) {
        load_scenario(scenario, {p.path + "=[[]]"});
      } else {
        // A list item's key: in the file, beside the item's other required keys.
        const bool flow = p.path.rfind("traffic[].", 0) == 0;
        const bool event = p.path.rfind("topology.link_events[].", 0) == 0;
        const bool job = p.path.rfind("jobs[].", 0) == 0;
        const std::string key = p.path.substr(p.path.rfind('.') + 1);
        std::string item;
        for (const char* k : flow    ? std::vector<const char*>{"src", "dst", "size"}
                             : event ? std::vector<const char*>{"at", "link", "state"}
                             : job   ? std::vector<const char*>{"gpus", "size"}
                                     : std::vector<const char*>{"fwd_time"}) {
          if (key != k) {
            item += std::string(k) + ": " +
                    (std::string(k) == "src" || std::string(k) == "gpus" ? (job ? "2" : "0")
                     : std::string(k) == "dst"                           ? "1"
                     : std::string(k) == "size"                          ? "1MiB"
                     : std::string(k) == "link"                          ? "leaf0-spine0"
                     : std::string(k) == "state"                         ? "down"
                                                                         : "1ms") +
                    ", ";
          }
        }
        item += key + ": [[]]";
        std::ofstream(tmp) << "topology: {kind: spine-leaf, leaves: 2, spines: 1, hosts_per_leaf: 2"
                           << (event ? ", link_events: [{" + item + "}]" : "") << "}\n"
                           << "link: {host_rate: 100Gbps, propagation_delay: 500ns}\n"
                              "switch: {latency: 500ns, buffer_per_port: 1MiB}\n"
                           << (flow    ? "traffic: [{" + item + "}]\n"
                               : event ? "workload: {collective: all_reduce}\n"
                               : job   ? "jobs: [{" + item + "}]\n"
                                       : "training: {layers: [{" + item + "}]}\n");
        load_scenario(tmp.string());
      }
    } catch (const ConfigError& e) {
      message = e.message();
      key_path = e.key_path();
    }
    CHECK(message.find("unknown key") == std::string::npos);
    CHECK(message != "");
    ++rows;
  }
  fs::remove(tmp);
  CHECK(rows > 100);
}

TEST_CASE("params --markdown has one table row per key, under a heading per section") {
  const std::vector<ParamInfo> table = param_table();
  std::set<std::string> groups;
  for (const ParamInfo& p : table) groups.insert(p.section);
  const std::string md = params_markdown(table);
  std::istringstream lines(md);
  size_t rows = 0, headings = 0;
  for (std::string line; std::getline(lines, line);) {
    rows += line.rfind("| `", 0) == 0;
    headings += line.rfind("### ", 0) == 0;
  }
  CHECK(rows == table.size());
  CHECK(headings == groups.size());
  // The text form: a header line, then per section a blank line, a title and its rows.
  const std::string text = params_text(table);
  CHECK(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) ==
        1 + table.size() + 2 * groups.size());
}

TEST_CASE("topology.kind and workload.algorithm list the names their registries hold") {
  // The built-in fabric families and collective algorithms, as docs/scenario-reference.md lists
  // them; each is written once, in its registry's table, and the loader reads it from there.
  std::string kinds, algorithms;
  for (const ParamInfo& p : param_table()) {
    if (p.path == "topology.kind") kinds = p.range;
    if (p.path == "workload.algorithm") algorithms = p.range;
  }
  CHECK(kinds == "spine-leaf | fat-tree | rail-optimized | torus");
  CHECK(algorithms ==
        "auto | ring | tree | halving_doubling | p2p | nvls | nvls_tree | pat | collnet_direct | "
        "collnet_chain");
  std::vector<std::string> expected_kinds = {"spine-leaf", "fat-tree", "rail-optimized", "torus"};
  CHECK(fabric_kinds() == expected_kinds);
  std::vector<std::string> expected_algorithms = {"ring", "tree",           "halving_doubling",
                                                  "p2p",  "nvls",           "nvls_tree",
                                                  "pat",  "collnet_direct", "collnet_chain"};
  CHECK(collective_algorithm_names() == expected_algorithms);
}
