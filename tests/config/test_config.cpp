// sim/config: scenario YAML -> Scenario. One SECTION per kind of mistake, each asserting the
// line, column, key path and message (with its suggestion) that the user will see.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collectives/algorithm_registry.hpp"
#include "sim/config/loader.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/units.hpp"
#include "topologies/registry.hpp"

using fabricsim::ConfigError;
using fabricsim::load_scenario;
using fabricsim::Scenario;

namespace {

namespace fs = std::filesystem;

std::string source_path(const std::string& relative) {
  return std::string(FABRICSIM_SOURCE_DIR) + "/" + relative;
}

/// A scenario written to a private temporary file, removed when it goes out of scope.
class TempScenario {
 public:
  explicit TempScenario(const std::string& text, const std::string& stem = "scenario") {
    static int counter = 0;
    dir_ = fs::temp_directory_path() / ("fabricsim_test_config_" + std::to_string(::getpid()) +
                                        "_" + std::to_string(counter++));
    fs::create_directories(dir_);
    path_ = (dir_ / (stem + ".yaml")).string();
    std::ofstream(path_) << text;
  }
  ~TempScenario() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  TempScenario(const TempScenario&) = delete;
  TempScenario& operator=(const TempScenario&) = delete;
  const std::string& path() const { return path_; }
  /// Writes another file next to the scenario (e.g. a switch profile) and returns its path.
  std::string add(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

 private:
  fs::path dir_;
  std::string path_;
};

// A valid scenario with every key set. The line numbers matter: tests point at them.
const std::string kBase =
    "name: base\n"                  //  1
    "seed: 7\n"                     //  2
    "transport: roce\n"             //  3
    "topology:\n"                   //  4
    "  kind: spine-leaf\n"          //  5
    "  leaves: 4\n"                 //  6
    "  spines: 2\n"                 //  7
    "  hosts_per_leaf: 8\n"         //  8
    "  oversubscription: 2\n"       //  9
    "link:\n"                       // 10
    "  host_rate: 400Gbps\n"        // 11
    "  fabric_rate: 800Gbps\n"      // 12
    "  propagation_delay: 500ns\n"  // 13
    "switch:\n"                     // 14
    "  latency: 600ns\n"            // 15
    "  buffer_per_port: 2MiB\n"     // 16
    "nic:\n"                        // 17
    "  mtu: 4096B\n"                // 18
    "workload:\n"                   // 19
    "  collective: all_reduce\n"    // 20
    "  algorithm: ring\n"           // 21
    "  protocol: simple\n"          // 22
    "  datatype: float\n"           // 23
    "  redop: sum\n"                // 24
    "  minbytes: 8KiB\n"            // 25
    "  maxbytes: 256MiB\n"          // 26
    "  stepfactor: 2\n";            // 27

/// `base` with the line `old_line` (without its newline) replaced by `new_lines`; "" deletes it.
std::string edit(const std::string& old_line, const std::string& new_lines,
                 const std::string& base = kBase) {
  std::string text = base;
  const size_t at = text.find(old_line + "\n");
  REQUIRE(at != std::string::npos);
  text.replace(at, old_line.size() + 1, new_lines.empty() ? "" : new_lines + "\n");
  return text;
}

/// Loads `text` and returns the ConfigError it must raise.
ConfigError error_for(const std::string& text, const std::vector<std::string>& overrides = {},
                      std::string* path = nullptr) {
  TempScenario file(text);
  if (path) *path = file.path();
  try {
    load_scenario(file.path(), overrides);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for:\n" << text);
  throw std::logic_error("unreachable");
}

/// Asserts a file error's position, key path and message, and that what() is assembled as
/// FILE:LINE:COL: KEY.PATH: MESSAGE.
void check(const std::string& text, int line, int column, const std::string& key_path,
           const std::string& message) {
  std::string path;
  const ConfigError e = error_for(text, {}, &path);
  CHECK(e.where() == path);
  CHECK(e.line() == line);
  CHECK(e.column() == column);
  CHECK(e.key_path() == key_path);
  CHECK(e.message() == message);
  CHECK(std::string(e.what()) == path + ":" + std::to_string(line) + ":" + std::to_string(column) +
                                     ": " + key_path + ": " + message);
}

/// The UnitError message for `text`, to check that it is passed through unchanged.
template <typename Parse>
std::string unit_error(Parse parse, const std::string& text) {
  try {
    parse(text);
  } catch (const fabricsim::UnitError& e) {
    return e.what();
  }
  FAIL("expected a UnitError for " << text);
  return "";
}

}  // namespace

TEST_CASE("quickstart.yaml loads with the values written in it", "[config]") {
  const std::string path = source_path("scenarios/quickstart.yaml");
  const Scenario s = load_scenario(path);
  CHECK(s.name == "quickstart");
  CHECK(s.path == path);
  CHECK(s.seed == 1);
  CHECK(s.transport == "roce");
  CHECK(s.topology.kind == "spine-leaf");
  CHECK(s.topology.leaves == 4);
  CHECK(s.topology.spines == 4);
  CHECK(s.topology.hosts_per_leaf == 4);
  CHECK(s.topology.oversubscription == 1.0);
  CHECK(s.link.host_rate_bps == 400'000'000'000);    // 400Gbps
  CHECK(s.link.fabric_rate_bps == 400'000'000'000);  // 400Gbps
  CHECK(s.link.propagation_delay_ps == 250'000);     // 250ns
  // switch: from configs/switches/broadcom_tomahawk3.yaml, the profile it names
  CHECK(s.sw.latency_ps == 500'000);              // 500ns
  CHECK(s.sw.buffer_model == "shared");           // shared
  CHECK(s.sw.shared_buffer_bytes == 64'000'000);  // 64MB (SI)
  CHECK(s.sw.reserved_per_queue_bytes == 9216);   // 9216B
  CHECK(s.sw.alpha == 1.0);
  CHECK(s.sw.cut_through);
  CHECK(s.sw.radix == 32);
  CHECK(s.nic.mtu_bytes == 4096);  // 4096B
  CHECK(s.workload.collective == "all_reduce");
  CHECK(s.workload.algorithm == "auto");
  CHECK(s.workload.protocol == "auto");
  CHECK(s.workload.datatype == "float");
  CHECK(s.workload.redop == "sum");
  CHECK(s.workload.minbytes == 8 * 1024);           // 8KiB
  CHECK(s.workload.maxbytes == 256 * 1024 * 1024);  // 256MiB
  CHECK(s.workload.stepfactor == 2);
}

TEST_CASE("optional keys take their documented defaults", "[config]") {
  const Scenario s = load_scenario(source_path("tests/data/config/minimal.yaml"));
  CHECK(s.name == "minimal");  // the file's stem
  CHECK(s.seed == 1);
  CHECK(s.transport == "roce");
  CHECK(s.topology.oversubscription == 1.0);
  CHECK(s.link.host_rate_bps == 100'000'000'000);
  CHECK(s.link.fabric_rate_bps == 100'000'000'000);  // = host_rate
  CHECK(s.link.propagation_delay_ps == 0);           // 0 is allowed
  CHECK(s.sw.latency_ps == 0);
  CHECK(s.sw.buffer_per_port_bytes == 1'000'000);
  CHECK(s.nic.mtu_bytes == 4096);
  CHECK(s.workload.collective == "all_reduce");
  CHECK(s.workload.datatype == "float");
  CHECK(s.workload.redop == "sum");
  CHECK(s.workload.stepfactor == 2);
  // The packet-model keys.
  CHECK(s.link.bit_error_rate == 0.0);
  CHECK(s.topology.link_bit_error_rates.empty());
  CHECK(s.sw.buffer_model == "static");
  CHECK(s.sw.shared_buffer_bytes == 0);
  CHECK(s.sw.reserved_per_queue_bytes == 0);
  CHECK(s.sw.alpha == 1.0);
  CHECK_FALSE(s.sw.cut_through);
  CHECK(s.sw.scheduler == "strict");
  CHECK(s.sw.dwrr_weights == std::vector<int>(8, 1));
  CHECK(s.sw.profile.empty());
  CHECK(s.nic.traffic_class == 3);
  CHECK(s.nic.ack_interval == 1);
  CHECK(s.nic.rto_ps == 67'108'864'000);  // 4.096 us x 2^14
  CHECK(s.nic.qp_rate_limit_bps == 0);    // line rate
}

TEST_CASE("every key of the base scenario is read", "[config]") {
  TempScenario file(kBase);
  const Scenario s = load_scenario(file.path());
  CHECK(s.name == "base");
  CHECK(s.seed == 7);
  CHECK(s.topology.spines == 2);
  CHECK(s.topology.hosts_per_leaf == 8);
  CHECK(s.topology.oversubscription == 2.0);
  CHECK(s.link.fabric_rate_bps == 800'000'000'000);
  CHECK(s.sw.latency_ps == 600'000);
  CHECK(s.sw.buffer_per_port_bytes == 2 * 1024 * 1024);
}

TEST_CASE("accepted spellings of values", "[config]") {
  SECTION("oversubscription as a ratio string") {
    TempScenario file(edit("  oversubscription: 2", "  oversubscription: \"3:1\""));
    CHECK(load_scenario(file.path()).topology.oversubscription == 3.0);
  }
  SECTION("a fractional oversubscription") {
    TempScenario file(edit("  oversubscription: 2", "  oversubscription: 1.5"));
    CHECK(load_scenario(file.path()).topology.oversubscription == 1.5);
  }
  SECTION("nccl-tests datatype aliases are stored under the canonical name") {
    TempScenario file(edit("  datatype: float", "  datatype: float16"));
    CHECK(load_scenario(file.path()).workload.datatype == "half");
  }
  SECTION("transport infiniband, algorithm and protocol auto") {
    std::string text = kBase;
    text.replace(text.find("transport: roce"), 15, "transport: infiniband");
    text.replace(text.find("algorithm: ring"), 15, "algorithm: auto");
    text.replace(text.find("protocol: simple"), 16, "protocol: auto");
    TempScenario file(text);
    const Scenario s = load_scenario(file.path());
    CHECK(s.transport == "infiniband");
    CHECK(s.workload.algorithm == "auto");
    CHECK(s.workload.protocol == "auto");
  }
  SECTION("a section left empty takes its defaults") {
    TempScenario file(edit("  mtu: 4096B", ""));  // "nic:" with no value
    CHECK(load_scenario(file.path()).nic.mtu_bytes == 4096);
  }
}

TEST_CASE("workload.algorithm takes every name the algorithm registry holds", "[config]") {
  // ring, tree, halving_doubling and p2p (docs/scenario-reference.md): the loader reads them
  // from the registry (collectives/algorithm_registry.cpp), which writes each once.
  const std::vector<std::string> names = fabricsim::collective_algorithm_names();
  CHECK(names == std::vector<std::string>{"ring", "tree", "halving_doubling", "p2p"});
  for (const std::string& name : names) {
    TempScenario file(kBase);
    CHECK(load_scenario(file.path(), {"workload.algorithm=" + name}).workload.algorithm == name);
  }
}

TEST_CASE("a missing or unreadable file", "[config]") {
  SECTION("missing") {
    const std::string path = source_path("tests/data/config/no_such_file.yaml");
    try {
      load_scenario(path);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) ==
            path + ": cannot open scenario file: No such file or directory");
      CHECK(e.line() == 0);
      CHECK(e.key_path().empty());
    }
  }
  SECTION("a directory") {
    const std::string path = source_path("tests/data/config");
    try {
      load_scenario(path);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) == path + ": cannot read scenario file: Is a directory");
    }
  }
}

TEST_CASE("YAML syntax errors give the parser's line and column", "[config]") {
  SECTION("an unclosed flow sequence") {
    const std::string path = source_path("tests/data/config/syntax_error.yaml");
    try {
      load_scenario(path);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.line() == 5);  // where yaml-cpp notices: the ':' of "link:"
      CHECK(e.column() == 5);
      CHECK(std::string(e.what()) ==
            path + ":5:5: YAML syntax error: end of sequence flow not found");
    }
  }
  SECTION("bad indentation") {
    const ConfigError e = error_for("name: x\n seed: 2\n");
    CHECK(e.line() == 2);
    CHECK(e.column() == 6);
    CHECK(e.message() == "YAML syntax error: illegal map value");
  }
  SECTION("two documents in one file") {
    const ConfigError e = error_for(kBase + "---\n" + kBase);
    CHECK(e.line() == 29);
    CHECK(e.message() == "expected one YAML document, found 2");
  }
  SECTION("an empty file") {
    const ConfigError e = error_for("# nothing but a comment\n");
    CHECK(e.line() == 0);
    CHECK(e.message() ==
          "the scenario is empty; expected a map with the sections topology, link, switch, "
          "nic, routing, ecn, pfc, dcqcn, infiniband, switches, workload, nccl, measured, "
          "traffic and training");
  }
  SECTION("a list at the top level") {
    const ConfigError e = error_for("- topology\n- link\n");
    CHECK(e.line() == 1);
    CHECK(e.column() == 1);
    CHECK(e.message() ==
          "expected a map with the sections topology, link, switch, nic, routing, ecn, pfc, "
          "dcqcn, infiniband, switches, workload, nccl, measured, traffic and training, got a "
          "list");
  }
}

TEST_CASE("unknown keys are rejected with a suggestion", "[config]") {
  SECTION("a misspelt key in a section (data file)") {
    const std::string path = source_path("tests/data/config/leaf_typo.yaml");
    try {
      load_scenario(path);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) ==
            path + ":4:3: topology.leavs: unknown key 'leavs'; did you mean 'leaves'?");
    }
  }
  SECTION("a misspelt key in a section") {
    check(edit("  leaves: 4", "  leavs: 4"), 6, 3, "topology.leavs",
          "unknown key 'leavs'; did you mean 'leaves'?");
  }
  SECTION("a misspelt top-level key") {
    check(edit("seed: 7", "sed: 7"), 2, 1, "sed", "unknown key 'sed'; did you mean 'seed'?");
  }
  SECTION("a misspelt section") {
    check(edit("nic:", "nics:"), 17, 1, "nics", "unknown key 'nics'; did you mean 'nic'?");
  }
  SECTION("no close match: the valid keys are listed") {
    check(edit("  fabric_rate: 800Gbps", "  colour: red"), 12, 3, "link.colour",
          "unknown key 'colour'; valid keys are: host_rate, fabric_rate, propagation_delay, "
          "nvlink_rate, pcie_rate, pcie_latency, bit_error_rate");
  }
  SECTION("a key in the wrong section") {
    check(edit("  fabric_rate: 800Gbps", "  mtu: 9000B"), 12, 3, "link.mtu",
          "unknown key 'mtu'; it belongs in the nic section (nic.mtu)");
  }
  SECTION("a duplicate key") {
    check(edit("  leaves: 4", "  leaves: 4\n  leaves: 5"), 7, 3, "topology.leaves",
          "duplicate key 'leaves' (first given at line 6)");
  }
  SECTION("a duplicate section") {
    check(kBase + "nic:\n  mtu: 9000B\n", 28, 1, "nic",
          "duplicate key 'nic' (first given at line 17)");
  }
}

TEST_CASE("values of the wrong type", "[config]") {
  SECTION("a map where a name is expected") {
    check(edit("  kind: spine-leaf", "  kind: {name: spine-leaf}"), 5, 9, "topology.kind",
          "expected a topology kind name, got a map");
  }
  SECTION("a word for an integer") {
    check(edit("  leaves: 4", "  leaves: abc"), 6, 11, "topology.leaves",
          "expected an integer, got 'abc'");
  }
  SECTION("a fraction for an integer") {
    check(edit("  spines: 2", "  spines: 3.5"), 7, 11, "topology.spines",
          "expected an integer, got '3.5'");
  }
  SECTION("a list for a rate") {
    check(edit("  host_rate: 400Gbps", "  host_rate: [400Gbps]"), 11, 14, "link.host_rate",
          "expected a rate with a unit, e.g. 400Gbps, got a list");
  }
  SECTION("no value: the key's position is given") {
    check(edit("  leaves: 4", "  leaves:"), 6, 3, "topology.leaves",
          "expected an integer from 1 to 1000000, got nothing");
  }
  SECTION("a section that is not a map") {
    check(edit("  mtu: 4096B", "").replace(kBase.find("nic:"), 4, "nic: 4096B"), 17, 6, "nic",
          "expected a map of nic keys (mtu, traffic_class, ack_interval, rto, qp_rate_limit, "
          "congestion_control), got "
          "'4096B'");
  }
  SECTION("a word for the seed") {
    check(edit("seed: 7", "seed: -1"), 2, 7, "seed",
          "expected a non-negative integer (0 to 2^64-1), got '-1'");
  }
  SECTION("a word for the oversubscription") {
    check(edit("  oversubscription: 2", "  oversubscription: three"), 9, 21,
          "topology.oversubscription", "expected a number >= 1 or a ratio like '3:1', got 'three'");
  }
}

TEST_CASE("quantities without a unit", "[config]") {
  SECTION("a rate") {
    check(edit("  host_rate: 400Gbps", "  host_rate: 400"), 11, 14, "link.host_rate",
          "expected a rate with a unit, e.g. 400Gbps, got '400'");
  }
  SECTION("a time") {
    check(edit("  propagation_delay: 500ns", "  propagation_delay: 500"), 13, 22,
          "link.propagation_delay", "expected a time with a unit, e.g. 500ns, got '500'");
  }
  SECTION("a size") {
    check(edit("  maxbytes: 256MiB", "  maxbytes: 1e6"), 26, 13, "workload.maxbytes",
          "expected a size with a unit, e.g. 8KiB, got '1e6'");
  }
}

TEST_CASE("malformed or ambiguous units pass the units parser's message through", "[config]") {
  using fabricsim::parse_rate_bps;
  using fabricsim::parse_size_bytes;
  using fabricsim::parse_time_ps;
  SECTION("ambiguous rate: bits or bytes?") {
    check(edit("  host_rate: 400Gbps", "  host_rate: 400G"), 11, 14, "link.host_rate",
          unit_error(parse_rate_bps, "400G"));
  }
  SECTION("an unknown time unit") {
    check(edit("  latency: 600ns", "  latency: 600 nsec"), 15, 12, "switch.latency",
          unit_error(parse_time_ps, "600 nsec"));
  }
  SECTION("a size that is not a whole number of bytes") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 0.5B"), 16, 20,
          "switch.buffer_per_port", unit_error(parse_size_bytes, "0.5B"));
  }
}

TEST_CASE("negative or zero where a positive value is required", "[config]") {
  SECTION("a negative rate") {
    check(edit("  host_rate: 400Gbps", "  host_rate: -400Gbps"), 11, 14, "link.host_rate",
          "expected a rate from 1Mbps to 3.2Tbps (the fastest NIC and switch ports are 800 Gb/s, "
          "1.6 Tb/s announced), got a negative rate '-400Gbps'");
  }
  SECTION("a zero rate") {
    check(edit("  fabric_rate: 800Gbps", "  fabric_rate: 0Gbps"), 12, 16, "link.fabric_rate",
          "expected a rate from 1Mbps to 3.2Tbps (the fastest NIC and switch ports are 800 Gb/s, "
          "1.6 Tb/s announced), got zero ('0Gbps')");
  }
  SECTION("a negative time") {
    check(edit("  propagation_delay: 500ns", "  propagation_delay: -5ns"), 13, 22,
          "link.propagation_delay",
          "expected a time from 0ns to 1ms (1 ms is 200 km of fibre at 5 ns/m; a data-centre link "
          "is under 1 km, 5 us), got a negative time '-5ns'");
  }
  SECTION("a zero buffer") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 0B"), 16, 20,
          "switch.buffer_per_port",
          "expected a size from 1B to 64GiB (the largest switch buffers are a few GB, e.g. "
          "Broadcom Jericho2's 8 GB of HBM), got zero ('0B')");
  }
  SECTION("zero leaves") {
    check(edit("  leaves: 4", "  leaves: 0"), 6, 11, "topology.leaves",
          "expected an integer from 1 to 1000000, got '0'");
  }
  SECTION("a negative host count") {
    check(edit("  hosts_per_leaf: 8", "  hosts_per_leaf: -8"), 8, 19, "topology.hosts_per_leaf",
          "expected an integer from 1 to 1000000, got '-8'");
  }
}

TEST_CASE("values out of range", "[config]") {
  SECTION("a zero MTU") {
    check(edit("  mtu: 4096B", "  mtu: 0B"), 18, 8, "nic.mtu",
          "expected an MTU from 256B to 4096B (the RDMA payload per packet: the IBTA path MTUs of "
          "RoCE and InfiniBand are 256, 512, 1024, 2048 and 4096 B, also over 9000-byte Ethernet "
          "jumbo frames), got zero ('0B')");
  }
  SECTION("an MTU above 64KiB") {
    check(edit("  mtu: 4096B", "  mtu: 128KiB"), 18, 8, "nic.mtu",
          "expected an MTU from 256B to 4096B (the RDMA payload per packet: the IBTA path MTUs of "
          "RoCE and InfiniBand are 256, 512, 1024, 2048 and 4096 B, also over 9000-byte Ethernet "
          "jumbo frames), got '128KiB'");
  }
  SECTION("minbytes > maxbytes") {
    check(edit("  minbytes: 8KiB", "  minbytes: 512MiB"), 26, 13, "workload.maxbytes",
          "maxbytes (256MiB) is less than minbytes (512MiB)");
  }
  SECTION("maxbytes above 64GiB") {
    check(edit("  maxbytes: 256MiB", "  maxbytes: 128GiB"), 26, 13, "workload.maxbytes",
          "expected a size from 1B to 64GiB, got '128GiB'");
  }
  SECTION("stepfactor below 2") {
    check(edit("  stepfactor: 2", "  stepfactor: 1"), 27, 15, "workload.stepfactor",
          "expected an integer >= 2, got '1'");
  }
  SECTION("oversubscription below 1") {
    check(edit("  oversubscription: 2", "  oversubscription: \"1:2\""), 9, 21,
          "topology.oversubscription", "expected a number >= 1 or a ratio like '3:1', got '1:2'");
  }
}

TEST_CASE("missing required keys", "[config]") {
  SECTION("a key: reported at its section") {
    check(edit("  leaves: 4", ""), 4, 1, "topology.leaves",
          "missing required key; topology of kind spine-leaf needs kind, leaves, spines, "
          "hosts_per_leaf");
  }
  SECTION("a key of an empty section") {
    check(edit("  buffer_per_port: 2MiB", "").replace(kBase.find("  latency: 600ns\n"), 17, ""), 14,
          1, "switch.latency", "missing required key; switch needs latency, buffer_per_port");
  }
  SECTION("switch latency has no silent default (regression: it was 0 ns when left out)") {
    check(edit("  latency: 600ns", ""), 14, 1, "switch.latency",
          "missing required key; switch needs latency, buffer_per_port");
  }
  SECTION("physical ranges keep simulated time in int64 (regression: 100000s overflowed)") {
    check(edit("  propagation_delay: 500ns", "  propagation_delay: 100000s"), 13, 22,
          "link.propagation_delay",
          "expected a time from 0ns to 1ms (1 ms is 200 km of fibre at 5 ns/m; a data-centre link "
          "is under 1 km, 5 us), got '100000s'");
    check(edit("  host_rate: 400Gbps", "  host_rate: 1bps"), 11, 14, "link.host_rate",
          "expected a rate from 1Mbps to 3.2Tbps (the fastest NIC and switch ports are 800 Gb/s, "
          "1.6 Tb/s announced), got '1bps'");
  }
  SECTION("a section: no position") {
    std::string path;
    const ConfigError e = error_for(kBase.substr(0, kBase.find("workload:")), {}, &path);
    CHECK(e.line() == 0);
    CHECK(std::string(e.what()) ==
          path +
              ": workload: missing required section (with at least minbytes, maxbytes), or a "
              "traffic section in its place (a list of flows, each a map with src, dst and size, "
              "e.g. [{src: 0, dst: 1, size: 1MiB}]), or a training section");
  }
}

TEST_CASE("names outside a fixed set", "[config]") {
  SECTION("a key of another topology kind is an error, not ignored") {
    // The base file is a spine-leaf; as a fat-tree its `leaves` (line 6) does not apply.
    check(edit("  kind: spine-leaf", "  kind: fat-tree"), 6, 11, "topology.leaves",
          "applies to topology kind spine-leaf, not to this scenario's kind fat-tree; to keep a "
          "shape for each kind in one scenario, put it under topology.spine-leaf "
          "(topology.spine-leaf.leaves)");
  }
  SECTION("a key the kind requires is missing") {
    std::string text = edit("  kind: spine-leaf", "  kind: torus");
    for (const char* line :
         {"  leaves: 4\n", "  spines: 2\n", "  hosts_per_leaf: 8\n", "  oversubscription: 2\n"}) {
      text.erase(text.find(line), std::string(line).size());
    }
    check(text, 4, 1, "topology.dims",
          "missing required key; topology of kind torus needs kind, dims");
  }
  SECTION("a misspelt topology") {
    check(edit("  kind: spine-leaf", "  kind: spine_leaf"), 5, 9, "topology.kind",
          "unknown topology kind 'spine_leaf'; did you mean 'spine-leaf'?");
  }
  SECTION("a misspelt collective") {
    check(edit("  collective: all_reduce", "  collective: all_redcue"), 20, 15,
          "workload.collective", "unknown collective 'all_redcue'; did you mean 'all_reduce'?");
  }
  SECTION("a misspelt algorithm") {
    check(edit("  algorithm: ring", "  algorithm: halving-doubling"), 21, 14, "workload.algorithm",
          "unknown algorithm 'halving-doubling'; did you mean 'halving_doubling'?");
  }
  SECTION("a misspelt protocol") {
    check(edit("  protocol: simple", "  protocol: simpel"), 22, 13, "workload.protocol",
          "unknown protocol 'simpel'; did you mean 'simple'?");
  }
  SECTION("an unknown datatype") {
    check(edit("  datatype: float", "  datatype: flaot"), 23, 13, "workload.datatype",
          "unknown datatype 'flaot'; did you mean 'float'?");
  }
  SECTION("an unknown transport with no close match") {
    check(edit("transport: roce", "transport: ethernet"), 3, 12, "transport",
          "unknown transport 'ethernet'; expected one of: roce, infiniband");
  }
  SECTION("an unknown redop") {
    check(edit("  redop: sum", "  redop: summ"), 24, 10, "workload.redop",
          "unknown redop 'summ'; did you mean 'sum'?");
  }
}

TEST_CASE("overrides (--set KEY=VALUE) apply before validation", "[config]") {
  const std::string quickstart = source_path("scenarios/quickstart.yaml");
  SECTION("oversubscription and maxbytes") {
    const Scenario s =
        load_scenario(quickstart, {"topology.oversubscription=3", "workload.maxbytes=1MiB"});
    CHECK(s.topology.oversubscription == 3.0);
    CHECK(s.workload.maxbytes == 1024 * 1024);
    CHECK(s.workload.minbytes == 8 * 1024);  // untouched
  }
  SECTION("applied in order: the last one wins") {
    const Scenario s = load_scenario(quickstart, {"seed=5", "seed=9", "name=other"});
    CHECK(s.seed == 9);
    CHECK(s.name == "other");
  }
  SECTION("a key absent from the file, in a section absent from the file") {
    const Scenario s = load_scenario(source_path("tests/data/config/minimal.yaml"),
                                     {"nic.mtu=2048B", "link.fabric_rate=400Gbps"});
    CHECK(s.nic.mtu_bytes == 2048);
    CHECK(s.link.fabric_rate_bps == 400'000'000'000);
  }
  SECTION("a ratio string as the value") {
    CHECK(load_scenario(quickstart, {"topology.oversubscription=4:1"}).topology.oversubscription ==
          4.0);
  }
}

TEST_CASE("bad --set overrides name the override", "[config]") {
  const std::string quickstart = source_path("scenarios/quickstart.yaml");
  const auto error = [&](const std::string& override_text) {
    try {
      load_scenario(quickstart, {override_text});
    } catch (const ConfigError& e) {
      CHECK(e.where() == "--set " + override_text);
      CHECK(e.line() == 0);
      return std::string(e.what());
    }
    FAIL("expected a ConfigError for --set " << override_text);
    return std::string();
  };
  SECTION("an unknown key, with a suggestion") {
    CHECK(error("topology.leavs=4") ==
          "--set topology.leavs=4: topology.leavs: unknown key; did you mean "
          "'topology.leaves'?");
  }
  SECTION("a bad value names the override, not the file") {
    CHECK(error("link.host_rate=400") ==
          "--set link.host_rate=400: link.host_rate: expected a rate with a unit, e.g. "
          "400Gbps, got '400'");
    CHECK(error("nic.mtu=0B") ==
          "--set nic.mtu=0B: nic.mtu: expected an MTU from 256B to 4096B (the RDMA payload per "
          "packet: the IBTA path MTUs of RoCE and InfiniBand are 256, 512, 1024, 2048 and 4096 B, "
          "also over 9000-byte Ethernet jumbo frames), got zero ('0B')");
  }
  SECTION("a cross-field error blames the override") {
    CHECK(error("workload.maxbytes=1KiB") ==
          "--set workload.maxbytes=1KiB: workload.maxbytes: maxbytes (1KiB) is less than "
          "minbytes (8KiB)");
    CHECK(error("workload.minbytes=1GiB") ==
          "--set workload.minbytes=1GiB: workload.minbytes: minbytes (1GiB) is greater than "
          "maxbytes (256MiB)");
  }
  SECTION("a missing '='") {
    CHECK(error("topology.leaves") ==
          "--set topology.leaves: topology.leaves: expected KEY=VALUE, e.g. "
          "topology.oversubscription=3");
  }
  SECTION("an empty value") {
    CHECK(error("topology.leaves=") ==
          "--set topology.leaves=: topology.leaves: expected a value after '='");
  }
  SECTION("a value that is not a scalar") {
    CHECK(error("topology.leaves={a: 1}") ==
          "--set topology.leaves={a: 1}: topology.leaves: expected an integer from 1 to 1000000, "
          "got a map");
  }
  SECTION("a whole section") {
    CHECK(error("topology=3") ==
          "--set topology=3: topology: 'topology' is a section; set one of its keys, e.g. "
          "topology.kind, or give the whole section as a map, e.g. topology={kind: ...}");
  }
  SECTION("a key under a value") {
    CHECK(error("topology.kind.name=x") ==
          "--set topology.kind.name=x: topology.kind.name: cannot set a key under "
          "'topology.kind': it is a value, not a map");
  }
  SECTION("a key under a section that the file gives as a scalar") {
    std::string text = edit("  mtu: 4096B", "");
    text.replace(text.find("nic:"), 4, "nic: 4096B");
    TempScenario file(text);
    try {
      load_scenario(file.path(), {"nic.mtu=9000B"});
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) ==
            "--set nic.mtu=9000B: nic.mtu: cannot set a key under "
            "'nic': in " +
                file.path() + ":17 it is '4096B', not a map");
    }
  }
}

TEST_CASE("closest_match uses the documented threshold", "[config]") {
  using fabricsim::closest_match;
  const std::vector<std::string> keys = {"kind", "leaves", "spines", "hosts_per_leaf"};
  CHECK(closest_match("leavs", keys) == "leaves");
  CHECK(closest_match("spine", keys) == "spines");
  CHECK(closest_match("hosts-per-leaf", keys) == "hosts_per_leaf");  // 2 edits
  CHECK(closest_match("host_per_leafs", keys) == "hosts_per_leaf");  // 2 edits
  CHECK(closest_match("colour", keys).empty());
  CHECK(closest_match("k", keys).empty());  // 3 edits from "kind", limit 2
  // Limit max(2, size / 3): 12 letters allow 4 edits.
  CHECK(closest_match("abcdefghijkl", {"abcdefghwxyz"}) == "abcdefghwxyz");  // 4 edits
  CHECK(closest_match("abcdefghijkl", {"abcdefgvwxyz"}).empty());            // 5 edits
  CHECK(closest_match("anything", {}).empty());
  // Failing that, a word written short: its letters in order, same first letter, >= half long.
  CHECK(closest_match("cut_thru", {"latency", "cut_through"}) == "cut_through");  // 3 edits
  CHECK(closest_match("qp_rl", {"qp_rate_limit"}).empty());  // less than half as long
  CHECK(closest_match("ut_thru", {"cut_through"}).empty());  // another first letter
}

TEST_CASE("datatype_bytes knows the nccl-tests names", "[config]") {
  using fabricsim::datatype_bytes;
  CHECK(datatype_bytes("int8") == 1);
  CHECK(datatype_bytes("uint8") == 1);
  CHECK(datatype_bytes("half") == 2);
  CHECK(datatype_bytes("bfloat16") == 2);
  CHECK(datatype_bytes("float") == 4);
  CHECK(datatype_bytes("int32") == 4);
  CHECK(datatype_bytes("double") == 8);
  CHECK(datatype_bytes("uint64") == 8);
  CHECK(datatype_bytes("float64") == 8);
  CHECK(datatype_bytes("char") == 1);
  CHECK(datatype_bytes("complex") == 0);
}

// ---- the packet-model keys: link BER, switch buffer and scheduler, NIC transport ------------

namespace {

/// kBase with a shared buffer: switch lines 14-17 are switch:, latency, buffer_model,
/// shared_buffer; nic: is line 18.
std::string shared_base() {
  return edit("  buffer_per_port: 2MiB", "  buffer_model: shared\n  shared_buffer: 32MiB");
}

/// Asserts an error's file, position, key path and message (for errors in another file).
void check_error(const ConfigError& e, const std::string& where, int line, int column,
                 const std::string& key_path, const std::string& message) {
  CHECK(e.where() == where);
  CHECK(e.line() == line);
  CHECK(e.column() == column);
  CHECK(e.key_path() == key_path);
  CHECK(e.message() == message);
  CHECK(std::string(e.what()) == where + ":" + std::to_string(line) + ":" + std::to_string(column) +
                                     ": " + key_path + ": " + message);
}

/// The ConfigError that loading `path` (with `overrides`) raises.
ConfigError load_error(const std::string& path, const std::vector<std::string>& overrides = {}) {
  try {
    load_scenario(path, overrides);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for " << path);
  throw std::logic_error("unreachable");
}

/// The ConfigError build_fabric raises for `s`.
ConfigError build_error(const Scenario& s) {
  try {
    fabricsim::build_fabric(s);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected build_fabric to raise a ConfigError");
  throw std::logic_error("unreachable");
}

const std::string kBerExpected = "a bit error rate from 0 to 1e-3, e.g. 1e-12";
const std::string kAlphaExpected = "a number from 1/128 to 64, e.g. 1, 0.5 or 1/8";
const std::string kWeightsExpected =
    "a list of 8 weights from 1 to 255, one per traffic class 0..7, e.g. [1, 1, 1, 4, 1, 1, 1, 1]";

}  // namespace

TEST_CASE("packet-model keys parse, with their units", "[config]") {
  std::string text =
      edit("  propagation_delay: 500ns", "  propagation_delay: 500ns\n  bit_error_rate: 1e-12");
  text = edit("  oversubscription: 2",
              "  oversubscription: 2\n  link_bit_error_rates: {leaf0-spine1: 1e-8, "
              "leaf1-spine0#0: 2.5E-9}",
              text);
  text = edit("  buffer_per_port: 2MiB",
              "  radix: 64\n  buffer_model: shared\n  shared_buffer: 32MiB\n"
              "  reserved_per_queue: 4KiB\n  alpha: 1/8\n  cut_through: true\n"
              "  scheduler: dwrr\n  dwrr_weights: [1, 2, 3, 4, 5, 6, 7, 255]",
              text);
  text = edit("  mtu: 4096B",
              "  mtu: 4096B\n  traffic_class: 5\n  ack_interval: 4\n  rto: 2ms\n"
              "  qp_rate_limit: 100Gbps",
              text);
  TempScenario file(text);
  const Scenario s = load_scenario(file.path());
  CHECK(s.link.bit_error_rate == 1e-12);
  REQUIRE(s.topology.link_bit_error_rates.size() == 2);
  CHECK(s.topology.link_bit_error_rates[0].first == "leaf0-spine1");
  CHECK(s.topology.link_bit_error_rates[0].second == 1e-8);
  CHECK(s.topology.link_bit_error_rates[1].first == "leaf1-spine0#0");
  CHECK(s.topology.link_bit_error_rates[1].second == 2.5e-9);
  CHECK(s.sw.radix == 64);
  CHECK(s.sw.buffer_model == "shared");
  CHECK(s.sw.shared_buffer_bytes == 32 * 1024 * 1024);
  CHECK(s.sw.reserved_per_queue_bytes == 4096);
  CHECK(s.sw.alpha == 0.125);
  CHECK(s.sw.cut_through);
  CHECK(s.sw.scheduler == "dwrr");
  CHECK(s.sw.dwrr_weights == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 255});
  CHECK(s.nic.traffic_class == 5);
  CHECK(s.nic.ack_interval == 4);
  CHECK(s.nic.rto_ps == 2'000'000'000);  // 2ms
  CHECK(s.nic.qp_rate_limit_bps == 100'000'000'000);
  // Each entry of link_bit_error_rates has its own origin, for build_fabric's errors.
  CHECK(s.origins.at("topology.link_bit_error_rates.leaf1-spine0#0").line == 10);

  SECTION("alpha as a decimal, a whole number or a fraction; the range ends included") {
    for (const auto& [written, value] : std::vector<std::pair<std::string, double>>{
             {"0.5", 0.5}, {"2", 2.0}, {"1/128", 1.0 / 128}, {"64", 64.0}, {"3/2", 1.5}}) {
      TempScenario f(shared_base());
      const Scenario a = load_scenario(f.path(), {"switch.alpha=" + written});
      CHECK(a.sw.alpha == value);
    }
  }
  SECTION("bit error rates as plain or scientific numbers, 0 and 1e-3 included") {
    for (const auto& [written, value] : std::vector<std::pair<std::string, double>>{
             {"0", 0.0}, {"1e-3", 1e-3}, {"0.000001", 1e-6}, {"1E-15", 1e-15}, {"+2e-9", 2e-9}}) {
      CHECK(load_scenario(file.path(), {"link.bit_error_rate=" + written}).link.bit_error_rate ==
            value);
    }
  }
  SECTION("reserved_per_queue may be 0; 8 of them just under shared_buffer is fine") {
    TempScenario f(edit("  shared_buffer: 32MiB",
                        "  shared_buffer: 32KiB\n  reserved_per_queue: 0B", shared_base()));
    CHECK(load_scenario(f.path()).sw.reserved_per_queue_bytes == 0);
    CHECK(
        load_scenario(f.path(), {"switch.reserved_per_queue=4095B"}).sw.reserved_per_queue_bytes ==
        4095);
  }
}

TEST_CASE("packet-model keys: bad values say where and what was expected", "[config]") {
  // link: bit_error_rate is line 14 (column 19 for its value).
  const auto with_ber = [](const std::string& value) {
    return edit("  propagation_delay: 500ns",
                "  propagation_delay: 500ns\n  bit_error_rate: " + value);
  };
  SECTION("link.bit_error_rate: negative, too high, not a number") {
    check(with_ber("-1e-9"), 14, 19, "link.bit_error_rate",
          "expected " + kBerExpected + ", got a negative number '-1e-9'");
    check(with_ber("0.01"), 14, 19, "link.bit_error_rate",
          "expected " + kBerExpected +
              ", got '0.01': above 1e-3 almost no frame would arrive intact");
    check(with_ber("low"), 14, 19, "link.bit_error_rate",
          "expected " + kBerExpected + ", got 'low'");
    check(with_ber("1e-12/s"), 14, 19, "link.bit_error_rate",
          "expected " + kBerExpected + ", got '1e-12/s'");
    check(with_ber(".nan"), 14, 19, "link.bit_error_rate",
          "expected " + kBerExpected + ", got '.nan'");
    check(with_ber("[1e-12]"), 14, 19, "link.bit_error_rate",
          "expected " + kBerExpected + ", got a list");
  }
  SECTION("topology.link_bit_error_rates: not a map; a bad rate names its link") {
    check(edit("  oversubscription: 2",
               "  oversubscription: 2\n  link_bit_error_rates: [leaf0-spine1]"),
          10, 25, "topology.link_bit_error_rates",
          "expected a map of links to bit error rates, e.g. {leaf0-spine1: 1e-8}, got a list");
    check(
        edit("  oversubscription: 2",
             "  oversubscription: 2\n  link_bit_error_rates: {leaf0-spine1: 0.5}"),
        10, 40, "topology.link_bit_error_rates.leaf0-spine1",
        "expected " + kBerExpected + ", got '0.5': above 1e-3 almost no frame would arrive intact");
  }

  // switch (kBase): latency line 15, buffer_per_port line 16; nic: line 17.
  SECTION("switch.buffer_model: an unknown model") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_model: sharde"), 16, 17, "switch.buffer_model",
          "unknown buffer model 'sharde'; did you mean 'shared'?");
  }
  SECTION("a key of the other buffer model is an error naming why") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  shared_buffer: 32MiB"), 17,
          18, "switch.shared_buffer",
          "applies to buffer_model shared, not to this scenario's buffer_model static (the "
          "default)");
    check(edit("  buffer_per_port: 2MiB",
               "  buffer_model: static\n  buffer_per_port: 2MiB\n  alpha: 2"),
          18, 10, "switch.alpha",
          "applies to buffer_model shared, not to this scenario's buffer_model static");
    check(edit("  shared_buffer: 32MiB", "  shared_buffer: 32MiB\n  buffer_per_port: 2MiB",
               shared_base()),
          18, 20, "switch.buffer_per_port",
          "applies to buffer_model static, not to this scenario's buffer_model shared");
  }
  SECTION("the buffer key the model needs is required; buffer_per_port only for static") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_model: shared"), 14, 1, "switch.shared_buffer",
          "missing required key; switch with buffer_model shared needs latency, shared_buffer");
    check(edit("  buffer_per_port: 2MiB", ""), 14, 1, "switch.buffer_per_port",
          "missing required key; switch with buffer_model static needs latency, buffer_per_port");
    TempScenario shared(shared_base());
    CHECK(load_scenario(shared.path()).sw.buffer_per_port_bytes == 0);
  }
  SECTION("switch.shared_buffer and reserved_per_queue: sizes with units") {
    check(edit("  shared_buffer: 32MiB", "  shared_buffer: 0B", shared_base()), 17, 18,
          "switch.shared_buffer",
          "expected a size from 1B to 64GiB (the largest switch buffers are a few GB, e.g. "
          "Broadcom Jericho2's 8 GB of HBM), got zero ('0B')");
    check(edit("  shared_buffer: 32MiB", "  shared_buffer: 32MiB\n  reserved_per_queue: -4KiB",
               shared_base()),
          18, 23, "switch.reserved_per_queue",
          "expected a size >= 0B, got a negative size '-4KiB'");
    check(edit("  shared_buffer: 32MiB", "  shared_buffer: 32MiB\n  reserved_per_queue: 4096",
               shared_base()),
          18, 23, "switch.reserved_per_queue",
          "expected a size with a unit, e.g. 4KiB, got '4096'");
  }
  SECTION("8 x reserved_per_queue must be less than shared_buffer") {
    const std::string text =
        edit("  shared_buffer: 32MiB", "  shared_buffer: 32KiB\n  reserved_per_queue: 4KiB",
             shared_base());
    check(text, 18, 23, "switch.reserved_per_queue",
          "8 x reserved_per_queue (4KiB) must be less than shared_buffer (32KiB): the 8 traffic "
          "classes of a single port would reserve all of it");
    // A --set of the pool is blamed rather than the file's reservation.
    const ConfigError e = error_for(edit("  shared_buffer: 32KiB", "  shared_buffer: 1MiB", text),
                                    {"switch.shared_buffer=16KiB"});
    CHECK(std::string(e.what()) ==
          "--set switch.shared_buffer=16KiB: switch.shared_buffer: shared_buffer (16KiB) must be "
          "more than 8 x reserved_per_queue (4KiB): the 8 traffic classes of a single port would "
          "reserve all of it");
  }
  SECTION("switch.alpha: out of 1/128 … 64, or not a number") {
    const auto with_alpha = [](const std::string& value) {
      return edit("  shared_buffer: 32MiB", "  shared_buffer: 32MiB\n  alpha: " + value,
                  shared_base());
    };
    for (const char* bad : {"100", "65", "1/256", "0", "-1", "half", "1/0", "1:8", "1e-2", "''"}) {
      const std::string shown = std::string(bad) == "''" ? "" : bad;
      check(with_alpha(bad), 18, 10, "switch.alpha",
            "expected " + kAlphaExpected + ", got '" + shown + "'");
    }
  }
  SECTION("switch.cut_through is a boolean") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  cut_through: yes"), 17, 16,
          "switch.cut_through", "expected true or false, got 'yes'");
  }
  SECTION("switch.scheduler: strict or dwrr") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  scheduler: wrr"), 17, 14,
          "switch.scheduler", "unknown scheduler 'wrr'; did you mean 'dwrr'?");
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  scheduler: fifo"), 17, 14,
          "switch.scheduler", "unknown scheduler 'fifo'; expected one of: strict, dwrr");
  }
  SECTION("switch.dwrr_weights: only with dwrr; exactly 8 integers 1..255") {
    check(edit("  buffer_per_port: 2MiB",
               "  buffer_per_port: 2MiB\n  dwrr_weights: [1, 1, 1, 1, 1, 1, 1, 1]"),
          17, 17, "switch.dwrr_weights",
          "applies to scheduler dwrr, not to this scenario's scheduler strict (the default)");
    check(edit("  buffer_per_port: 2MiB",
               "  buffer_per_port: 2MiB\n  scheduler: strict\n  dwrr_weights: [1, 1, 1, 1, 1, 1, "
               "1, 1]"),
          18, 17, "switch.dwrr_weights",
          "applies to scheduler dwrr, not to this scenario's scheduler strict");
    const auto with_weights = [](const std::string& list) {
      return edit("  buffer_per_port: 2MiB",
                  "  buffer_per_port: 2MiB\n  scheduler: dwrr\n  dwrr_weights: " + list);
    };
    check(with_weights("[1, 1, 1, 1, 1, 1, 1]"), 18, 17, "switch.dwrr_weights",
          "expected " + kWeightsExpected + ", got 7 entries");
    check(with_weights("4"), 18, 17, "switch.dwrr_weights",
          "expected " + kWeightsExpected + ", got '4'");
    check(with_weights("[1, 1, 0, 1, 1, 1, 1, 1]"), 18, 24, "switch.dwrr_weights[2]",
          "expected an integer from 1 to 255, got '0'");
    check(with_weights("[1, 1, 1, 1, 1, 1, 1, 256]"), 18, 39, "switch.dwrr_weights[7]",
          "expected an integer from 1 to 255, got '256'");
  }

  // nic (kBase): mtu line 18; the new key goes on line 19.
  const auto with_nic = [](const std::string& line) {
    return edit("  mtu: 4096B", "  mtu: 4096B\n  " + line);
  };
  SECTION("nic.traffic_class: 0 … 7") {
    check(with_nic("traffic_class: 8"), 19, 18, "nic.traffic_class",
          "expected an integer from 0 to 7, got '8'");
    check(with_nic("traffic_class: -1"), 19, 18, "nic.traffic_class",
          "expected an integer from 0 to 7, got '-1'");
  }
  SECTION("nic.ack_interval: 1 … 65536") {
    check(with_nic("ack_interval: 0"), 19, 17, "nic.ack_interval",
          "expected an integer from 1 to 65536, got '0'");
    check(with_nic("ack_interval: 65537"), 19, 17, "nic.ack_interval",
          "expected an integer from 1 to 65536, got '65537'");
  }
  SECTION("nic.rto: a positive time up to 1s") {
    check(with_nic("rto: 0ms"), 19, 8, "nic.rto",
          "expected a positive time up to 1s, got zero ('0ms')");
    check(with_nic("rto: 2s"), 19, 8, "nic.rto", "expected a positive time up to 1s, got '2s'");
    check(with_nic("rto: -1ms"), 19, 8, "nic.rto",
          "expected a positive time up to 1s, got a negative time '-1ms'");
    check(with_nic("rto: 5"), 19, 8, "nic.rto", "expected a time with a unit, e.g. 4ms, got '5'");
  }
  SECTION("nic.qp_rate_limit: a rate; zero is refused with the way to get line rate") {
    check(with_nic("qp_rate_limit: 0Gbps"), 19, 18, "nic.qp_rate_limit",
          "expected a rate from 1Mbps to 3.2Tbps (at most link.host_rate, the NIC's line rate), "
          "got zero ('0Gbps'); leave qp_rate_limit out for "
          "line rate");
    check(with_nic("qp_rate_limit: 200Tbps"), 19, 18, "nic.qp_rate_limit",
          "expected a rate from 1Mbps to 3.2Tbps (at most link.host_rate, the NIC's line rate), "
          "got '200Tbps'");
    check(with_nic("qp_rate_limit: -1Gbps"), 19, 18, "nic.qp_rate_limit",
          "expected a rate from 1Mbps to 3.2Tbps (at most link.host_rate, the NIC's line rate), "
          "got a negative rate '-1Gbps'");
  }
}

TEST_CASE("misspelt packet-model keys get a suggestion", "[config]") {
  SECTION("switch.cut_thru") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  cut_thru: true"), 17, 3,
          "switch.cut_thru", "unknown key 'cut_thru'; did you mean 'cut_through'?");
  }
  SECTION("switch.bufer_model, nic.ack_intervall, link.bit_eror_rate") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  bufer_model: static"), 17, 3,
          "switch.bufer_model", "unknown key 'bufer_model'; did you mean 'buffer_model'?");
    check(edit("  mtu: 4096B", "  ack_intervall: 2"), 18, 3, "nic.ack_intervall",
          "unknown key 'ack_intervall'; did you mean 'ack_interval'?");
    check(edit("  propagation_delay: 500ns", "  propagation_delay: 500ns\n  bit_eror_rate: 0"), 14,
          3, "link.bit_eror_rate", "unknown key 'bit_eror_rate'; did you mean 'bit_error_rate'?");
  }
  SECTION("a BER key put in the link section instead of topology") {
    check(edit("  propagation_delay: 500ns",
               "  propagation_delay: 500ns\n  link_bit_error_rates: {leaf0-spine1: 1e-8}"),
          14, 3, "link.link_bit_error_rates",
          "unknown key 'link_bit_error_rates'; it belongs in the topology section "
          "(topology.link_bit_error_rates)");
  }
  SECTION("--set switch.cut_thru=true") {
    const ConfigError e = error_for(kBase, {"switch.cut_thru=true"});
    CHECK(std::string(e.what()) ==
          "--set switch.cut_thru=true: switch.cut_thru: unknown key; did you mean "
          "'switch.cut_through'?");
  }
}

TEST_CASE("a switch profile supplies defaults — the scenario's keys win", "[config]") {
  const std::string dir = source_path("tests/data/config");
  const std::string profile = dir + "/profile_shared.yaml";
  SECTION("profile keys fill the section; the scenario overrides alpha") {
    const Scenario s = load_scenario(dir + "/with_profile.yaml");
    CHECK(s.sw.profile == "profile_shared.yaml");
    CHECK(s.sw.latency_ps == 300'000);  // required, and given only by the profile
    CHECK(s.sw.radix == 16);
    CHECK(s.sw.buffer_model == "shared");
    CHECK(s.sw.shared_buffer_bytes == 4 * 1024 * 1024);
    CHECK(s.sw.reserved_per_queue_bytes == 2048);
    CHECK(s.sw.alpha == 2.0);  // the scenario's, not the profile's 1/2
    CHECK(s.sw.cut_through);
    CHECK(s.sw.scheduler == "dwrr");
    CHECK(s.sw.dwrr_weights == std::vector<int>{1, 1, 1, 4, 1, 1, 1, 2});
    // Origins: a profile value points into the profile file, the override into the scenario.
    CHECK(s.origins.at("switch.shared_buffer").where == profile);
    CHECK(s.origins.at("switch.shared_buffer").line == 8);
    CHECK(s.origins.at("switch.alpha").where == dir + "/with_profile.yaml");
    CHECK(s.origins.at("switch.alpha").line == 14);
    CHECK(std::string(fabricsim::key_error(s, "switch.radix", "too few ports").what()) ==
          profile + ":6:10: switch.radix: too few ports");
  }
  SECTION("--set wins over both; --set switch.profile names a profile") {
    CHECK(load_scenario(dir + "/with_profile.yaml", {"switch.alpha=4"}).sw.alpha == 4.0);
    TempScenario file(edit("  buffer_per_port: 2MiB", ""));  // switch: latency only
    const Scenario s = load_scenario(file.path(), {"switch.profile=" + profile});
    CHECK(s.sw.latency_ps == 600'000);  // the scenario's
    CHECK(s.sw.shared_buffer_bytes == 4 * 1024 * 1024);
    CHECK(s.sw.alpha == 0.5);
    // A relative path is resolved against the scenario's folder, and errors show it tidied.
    const Scenario r = load_scenario(dir + "/with_profile.yaml",
                                     {"switch.profile=../../data/config/./profile_shared.yaml"});
    CHECK(r.origins.at("switch.radix").where == profile);
  }
  SECTION("a scenario that picks another buffer model drops the profile's keys for the old one") {
    TempScenario file(edit("  buffer_per_port: 2MiB",
                           "  buffer_model: static\n  buffer_per_port: 2MiB\n"
                           "  profile: " +
                               profile));
    const Scenario s = load_scenario(file.path());
    CHECK(s.sw.buffer_model == "static");
    CHECK(s.sw.buffer_per_port_bytes == 2 * 1024 * 1024);
    CHECK(s.sw.shared_buffer_bytes == 0);
    CHECK(s.sw.alpha == 1.0);
    CHECK(s.origins.count("switch.shared_buffer") == 0);
    CHECK(s.sw.radix == 16);  // keys of no model still come from the profile
    CHECK(s.sw.scheduler == "dwrr");
    // The same by --set (the scenario's switch section has only latency).
    TempScenario latency_only(edit("  buffer_per_port: 2MiB", ""));
    const Scenario t = load_scenario(
        latency_only.path(),
        {"switch.profile=" + profile, "switch.buffer_model=static", "switch.buffer_per_port=1MiB"});
    CHECK(t.sw.buffer_per_port_bytes == 1024 * 1024);
    CHECK(t.sw.shared_buffer_bytes == 0);
  }
  SECTION("a scenario key for another model than the profile's is an error naming the profile") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  profile: " + profile), 16, 20,
          "switch.buffer_per_port",
          "applies to buffer_model static, not to this scenario's buffer_model shared (set in " +
              profile +
              ":7:17); to keep it, set switch.buffer_model to static in the scenario (or --set "
              "switch.buffer_model=static), or delete it to use the profile's buffer_model");
  }
  SECTION("required keys are checked after the merge") {
    TempScenario file(edit("  latency: 600ns", "  profile: no_latency.yaml",
                           edit("  buffer_per_port: 2MiB", "")));
    file.add("no_latency.yaml", "switch:\n  buffer_model: shared\n  shared_buffer: 1MiB\n");
    check_error(load_error(file.path()), file.path(), 14, 1, "switch.latency",
                "missing required key; switch needs latency, shared_buffer (its profile "
                "no_latency.yaml does not set latency either)");
  }
}

TEST_CASE("errors in a switch profile point into the profile file", "[config]") {
  const std::string dir = source_path("tests/data/config");
  /// kBase with its switch section naming `profile` (line 16, value at column 12).
  const auto naming = [](const std::string& profile) {
    return edit("  buffer_per_port: 2MiB", "  profile: " + profile);
  };
  SECTION("a value out of range") {
    const std::string profile = dir + "/profile_bad_alpha.yaml";
    check_error(error_for(naming(profile)), profile, 4, 10, "switch.alpha",
                "expected " + kAlphaExpected + ", got '100'");
  }
  SECTION("a value the scenario overrides is still checked: the profile is wrong") {
    const std::string profile = dir + "/profile_bad_alpha.yaml";
    check_error(error_for(naming(profile), {"switch.alpha=2"}), profile, 4, 10, "switch.alpha",
                "expected " + kAlphaExpected + ", got '100'");
  }
  SECTION("an unknown key, with a suggestion") {
    const std::string profile = dir + "/profile_typo.yaml";
    check_error(error_for(naming(profile)), profile, 4, 3, "switch.cut_thru",
                "unknown key 'cut_thru'; did you mean 'cut_through'?");
  }
  SECTION("a YAML syntax error") {
    const std::string profile = dir + "/profile_syntax_error.yaml";
    const ConfigError e = error_for(naming(profile));
    CHECK(e.where() == profile);
    CHECK(e.line() == 4);
    CHECK(e.message() == "YAML syntax error: end of sequence flow not found");
  }
  SECTION("a missing profile file: at the scenario's switch.profile") {
    const std::string scenario = dir + "/missing_profile.yaml";
    check_error(
        load_error(scenario), scenario, 13, 12, "switch.profile",
        "cannot open switch profile '" + dir + "/no_such_profile.yaml': No such file or directory");
  }
  SECTION("a missing profile file given by --set: names the override") {
    const ConfigError e = error_for(kBase, {"switch.profile=../nowhere/x.yaml"});
    CHECK(e.where() == "--set switch.profile=../nowhere/x.yaml");
    CHECK(e.key_path() == "switch.profile");
    CHECK(e.message().rfind("cannot open switch profile '", 0) == 0);
    CHECK(e.message().find("/nowhere/x.yaml': No such file or directory") != std::string::npos);
  }
  SECTION("a profile that is a directory") {
    const ConfigError e = error_for(naming(dir));
    CHECK(e.line() == 16);
    CHECK(e.message() == "cannot read switch profile '" + dir + "': Is a directory");
  }
  // Profiles written next to the scenario: the scenario names "p.yaml".
  const auto profile_error = [&](const std::string& profile_text) {
    TempScenario file(naming("p.yaml"));
    const std::string profile = file.add("p.yaml", profile_text);
    return std::make_pair(load_error(file.path()), profile);
  };
  SECTION("the profile's top level: switch, name and source") {
    {
      const auto [e, p] = profile_error("name: x\nswich:\n  latency: 1ns\n");
      check_error(e, p, 2, 1, "swich",
                  "unknown key 'swich' in a switch profile; did you mean 'switch'?");
    }
    {
      const auto [e, p] = profile_error("latency: 1ns\n");
      check_error(e, p, 1, 1, "latency",
                  "unknown key 'latency' in a switch profile; it belongs in the switch section "
                  "(switch.latency)");
    }
    {
      const auto [e, p] = profile_error("seed: 3\n");
      check_error(e, p, 1, 1, "seed",
                  "unknown key 'seed' in a switch profile; a switch profile has only switch, "
                  "name, source");
    }
    {
      const auto [e, p] = profile_error("name: [a, b]\nswitch:\n  latency: 1ns\n");
      check_error(e, p, 1, 7, "name", "expected a string, got a list");
    }
    {
      const auto [e, p] = profile_error("name: x\n");
      CHECK(e.where() == p);
      CHECK(e.line() == 0);
      CHECK(e.message() ==
            "missing required section: a switch profile sets its keys under 'switch:'");
    }
    {
      const auto [e, p] = profile_error("# nothing\n");
      CHECK(e.where() == p);
      CHECK(e.message() ==
            "the switch profile is empty; expected a map with a switch section (and optional "
            "name and source)");
    }
    {
      const auto [e, p] = profile_error("switch: 3\n");
      check_error(e, p, 1, 9, "switch",
                  "expected a map of switch keys (latency, radix, buffer_model, buffer_per_port, "
                  "shared_buffer, reserved_per_queue, alpha, cut_through, scheduler, "
                  "dwrr_weights, profile), got '3'");
    }
  }
  SECTION("a profile cannot name another profile") {
    const auto [e, p] = profile_error("switch:\n  latency: 1ns\n  profile: other.yaml\n");
    check_error(e, p, 3, 3, "switch.profile", "a switch profile cannot name another profile");
  }
  SECTION("a profile must be consistent on its own") {
    {
      const auto [e, p] = profile_error(
          "switch:\n  buffer_model: shared\n  shared_buffer: 1MiB\n"
          "  buffer_per_port: 1MiB\n");
      check_error(e, p, 4, 20, "switch.buffer_per_port",
                  "applies to buffer_model static, not to this profile's buffer_model shared");
    }
    {
      const auto [e, p] = profile_error("switch:\n  alpha: 2\n");
      check_error(e, p, 2, 10, "switch.alpha",
                  "applies to buffer_model shared, not to this profile's buffer_model static "
                  "(the default)");
    }
    {
      const auto [e, p] = profile_error(
          "switch:\n  buffer_model: shared\n  shared_buffer: 16KiB\n"
          "  reserved_per_queue: 2KiB\n");
      check_error(e, p, 4, 23, "switch.reserved_per_queue",
                  "8 x reserved_per_queue (2KiB) must be less than shared_buffer (16KiB): the 8 "
                  "traffic classes of a single port would reserve all of it");
    }
    {
      const auto [e, p] = profile_error("switch:\n  latency: 1ns\n  latency: 2ns\n");
      check_error(e, p, 3, 3, "switch.latency", "duplicate key 'latency' (first given at line 2)");
    }
  }
  SECTION("a scenario's reservation too big for the profile's pool is blamed on the scenario") {
    TempScenario file(
        edit("  buffer_per_port: 2MiB",
             "  profile: " + dir + "/profile_shared.yaml\n  reserved_per_queue: 1MiB"));
    check_error(load_error(file.path()), file.path(), 17, 23, "switch.reserved_per_queue",
                "8 x reserved_per_queue (1MiB) must be less than shared_buffer (4MiB): the 8 "
                "traffic classes of a single port would reserve all of it");
  }
}

TEST_CASE("every profile in configs/switches loads through a minimal scenario", "[config]") {
  const fs::path folder = source_path("configs/switches");
  std::ifstream readme_file(folder / "README.md");
  const std::string readme((std::istreambuf_iterator<char>(readme_file)),
                           std::istreambuf_iterator<char>());
  std::vector<fs::path> profiles;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".yaml") profiles.push_back(entry.path());
  }
  std::sort(profiles.begin(), profiles.end());
  REQUIRE(profiles.size() >= 5);
  for (const fs::path& profile : profiles) {
    INFO(profile.string());
    // The switch section holds only the profile: it must supply every required switch key.
    TempScenario file(edit("  latency: 600ns", "  profile: " + profile.string(),
                           edit("  buffer_per_port: 2MiB", "")));
    const Scenario s = load_scenario(file.path());
    CHECK(s.sw.latency_ps > 0);
    CHECK(s.sw.radix >= 32);
    CHECK(s.sw.buffer_model == "shared");
    CHECK(s.sw.shared_buffer_bytes >= 32'000'000);
    CHECK(s.sw.reserved_per_queue_bytes * 8 * s.sw.radix < s.sw.shared_buffer_bytes);
    CHECK(s.origins.at("switch.shared_buffer").where == profile.string());
    // The quickstart fabric fits in each of these switches.
    CHECK_NOTHROW(fabricsim::build_fabric(s));
    // Listed in the README, as `name.yaml`.
    const std::string listed = std::string(1, '`').append(profile.filename().string()).append("`");
    CHECK(readme.find(listed) != std::string::npos);
  }
}

TEST_CASE("link bit error rates reach the fabric, per link by name", "[config]") {
  // kBase's topology: 4 leaves, 2 spines, 8 hosts per leaf; links named as in `topo --dot`.
  const auto with = [](const std::string& link_ber, const std::string& map) {
    std::string text = edit("  propagation_delay: 500ns",
                            "  propagation_delay: 500ns\n  bit_error_rate: " + link_ber);
    if (!map.empty()) {
      text = edit("  oversubscription: 2", "  oversubscription: 2\n  " + map, text);
    }
    return text;
  };
  const auto ber_of = [](const fabricsim::Fabric& f, const std::string& a, const std::string& b) {
    const auto& g = f.graph;
    for (auto [e, end] = boost::edges(g); e != end; ++e) {
      const std::string u = g[boost::source(*e, g)].name, v = g[boost::target(*e, g)].name;
      if ((u == a && v == b) || (u == b && v == a)) return g[*e].bit_error_rate;
    }
    FAIL("no link " << a << "-" << b);
    return -1.0;
  };
  SECTION("link.bit_error_rate on every link, then the named ones; degraded links too") {
    std::string text =
        with("1e-12", "link_bit_error_rates: {leaf0-spine1: 1e-6, spine0-leaf3: 1e-9}");
    text = edit("  oversubscription: 2",
                "  oversubscription: 2\n  degraded_links: {leaf0-spine1: 400Gbps}", text);
    TempScenario file(text);
    const fabricsim::Fabric f = fabricsim::build_fabric(load_scenario(file.path()));
    CHECK(ber_of(f, "leaf0", "spine1") == 1e-6);  // degraded and with its own BER
    CHECK(ber_of(f, "leaf3", "spine0") == 1e-9);
    CHECK(ber_of(f, "leaf1", "spine0") == 1e-12);
    CHECK(ber_of(f, "host0", "leaf0") == 1e-12);
    int named = 0;
    for (auto [e, end] = boost::edges(f.graph); e != end; ++e) {
      named += f.graph[*e].bit_error_rate != 1e-12;
    }
    CHECK(named == 2);
  }
  SECTION("a misspelt node: did you mean, at the entry's line:col") {
    TempScenario file(with("0", "link_bit_error_rates: {leaf0-spnie1: 1e-6}"));
    const Scenario s = load_scenario(file.path());
    check_error(build_error(s), file.path(), 10, 40, "topology.link_bit_error_rates.leaf0-spnie1",
                "'leaf0-spnie1': no node named 'spnie1'; did you mean 'spine1'?");
  }
  SECTION("the same link twice in link_bit_error_rates is refused") {
    TempScenario file(with("0", "link_bit_error_rates: {leaf0-spine1: 1e-6, spine1-leaf0: 1e-7}"));
    check_error(build_error(load_scenario(file.path())), file.path(), 10, 60,
                "topology.link_bit_error_rates.spine1-leaf0",
                "'spine1-leaf0' names the same link as 'leaf0-spine1'");
  }
  SECTION("by --set: the error names the override") {
    const std::string override_text = "topology.link_bit_error_rates={leaf9-spine0: 1e-6}";
    TempScenario file(kBase);
    const ConfigError e = build_error(load_scenario(file.path(), {override_text}));
    CHECK(std::string(e.what()) ==
          "--set " + override_text +
              ": topology.link_bit_error_rates.leaf9-spine0: 'leaf9-spine0': no node named "
              "'leaf9'; did you mean 'leaf0'?");
  }
  SECTION("NVLinks are error-free: a BER on one is refused") {
    const Scenario s = load_scenario(
        source_path("scenarios/rail_optimized_h100_su.yaml"),
        {"link.bit_error_rate=1e-10", "topology.link_bit_error_rates={host0-nvswitch0: 1e-9}"});
    CHECK(build_error(s).message() ==
          "'host0-nvswitch0' is an NVLink; NVLinks are modelled error-free");
    const fabricsim::Fabric f = fabricsim::build_fabric(load_scenario(
        source_path("scenarios/rail_optimized_h100_su.yaml"), {"link.bit_error_rate=1e-10"}));
    for (auto [e, end] = boost::edges(f.graph); e != end; ++e) {
      CHECK(f.graph[*e].bit_error_rate == (f.graph[*e].nvlink ? 0.0 : 1e-10));
    }
  }
}

// ---- lossless RoCE and InfiniBand: pfc, dcqcn, infiniband and per-switch switches ------------

namespace {

/// kBase (27 lines) with `lines` appended: the first appended line is line 28.
std::string with_sections(const std::string& lines, const std::string& base = kBase) {
  return base + lines;
}

/// kBase with transport infiniband (line 3, value at column 12).
std::string infiniband_base() {
  return edit("transport: roce", "transport: infiniband");
}

const std::string kRocePfcNote =
    "; InfiniBand uses credit-based flow control per virtual lane, not PFC (set it in the "
    "infiniband section)";

}  // namespace

TEST_CASE("pfc, dcqcn, infiniband and switches take their defaults when absent", "[config]") {
  const Scenario s = load_scenario(source_path("tests/data/config/minimal.yaml"));
  CHECK_FALSE(s.pfc.enabled);
  CHECK(s.pfc.priorities.empty());  // = nic.traffic_class
  CHECK(s.pfc.threshold == "static");
  CHECK(s.pfc.xoff_bytes == 0);  // derived from the buffer
  CHECK(s.pfc.alpha == 1.0);
  CHECK(s.pfc.xon_offset_bytes == 0);   // two MTU frames
  CHECK(s.pfc.headroom_bytes == 0);     // the formula
  CHECK(s.pfc.response_time_ps == -1);  // the IEEE 802.3 Annex 31D bound for the rate
  CHECK(s.pfc.pause_quanta == 65535);
  CHECK_FALSE(s.pfc.watchdog);
  CHECK(s.pfc.watchdog_detection_time_ps == 200'000'000'000);    // 200 ms
  CHECK(s.pfc.watchdog_restoration_time_ps == 200'000'000'000);  // 200 ms
  CHECK(s.pfc.watchdog_action == "drop");
  CHECK(s.pfc.deadlock_check_interval_ps == 100'000'000);  // 100 us
  const fabricsim::DcqcnConfig defaults;
  CHECK_FALSE(s.dcqcn.enabled);
  CHECK(s.dcqcn.preset == "paper");
  CHECK(s.dcqcn.g == defaults.g);
  CHECK(s.dcqcn.rai_bps == defaults.rai_bps);
  CHECK(s.dcqcn.min_rate_bps == defaults.min_rate_bps);
  CHECK(s.infiniband.vl_buffer_bytes == 0);
  CHECK(s.switches.empty());
  for (const char* section : {"pfc", "dcqcn", "infiniband", "switches"}) {
    CHECK(s.origins.count(section) == 0);
  }
}

TEST_CASE("the pfc section parses, with its units", "[config]") {
  const std::string text = with_sections(
      "pfc:\n"                               // 28
      "  enabled: true\n"                    // 29
      "  priorities: [3, 4]\n"               // 30
      "  threshold: static\n"                // 31
      "  xoff: 200KB\n"                      // 32
      "  xon_offset: 1KiB\n"                 // 33
      "  headroom: 100KB\n"                  // 34
      "  response_time: 1.5us\n"             // 35
      "  pause_quanta: 1000\n"               // 36
      "  watchdog: true\n"                   // 37
      "  watchdog_detection_time: 100ms\n"   // 38
      "  watchdog_restoration_time: 2s\n"    // 39
      "  watchdog_action: forward\n"         // 40
      "  deadlock_check_interval: 50us\n");  // 41
  TempScenario file(text);
  const Scenario s = load_scenario(file.path());
  CHECK(s.pfc.enabled);
  CHECK(s.pfc.priorities == std::vector<int>{3, 4});
  CHECK(s.pfc.threshold == "static");
  CHECK(s.pfc.xoff_bytes == 200'000);     // 200KB: SI
  CHECK(s.pfc.xon_offset_bytes == 1024);  // 1KiB: binary
  CHECK(s.pfc.headroom_bytes == 100'000);
  CHECK(s.pfc.response_time_ps == 1'500'000);  // 1.5us
  CHECK(s.pfc.pause_quanta == 1000);
  CHECK(s.pfc.watchdog);
  CHECK(s.pfc.watchdog_detection_time_ps == 100'000'000'000);      // 100ms
  CHECK(s.pfc.watchdog_restoration_time_ps == 2'000'000'000'000);  // 2s
  CHECK(s.pfc.watchdog_action == "forward");
  CHECK(s.pfc.deadlock_check_interval_ps == 50'000'000);  // 50us
  CHECK(s.origins.at("pfc").line == 29);                  // the section's first key
  CHECK(s.origins.at("pfc.xoff").line == 32);
  CHECK(s.origins.at("pfc.xoff").column == 9);
  CHECK(std::string(fabricsim::key_error(s, "pfc.xoff", "too small").what()) ==
        file.path() + ":32:9: pfc.xoff: too small");

  SECTION("threshold dynamic with its alpha, on a shared buffer") {
    TempScenario f(with_sections("pfc:\n  threshold: dynamic\n  alpha: 1/8\n", shared_base()));
    const Scenario d = load_scenario(f.path());
    CHECK(d.pfc.threshold == "dynamic");
    CHECK(d.pfc.alpha == 0.125);
    CHECK(d.pfc.xoff_bytes == 0);
  }
  SECTION("--set of the flat keys, in a section the file does not have") {
    TempScenario f(kBase);
    const Scenario o =
        load_scenario(f.path(), {"pfc.enabled=true", "pfc.xoff=100KB", "pfc.priorities=[0, 3]",
                                 "pfc.watchdog_action=drop", "pfc.response_time=0ns"});
    CHECK(o.pfc.enabled);
    CHECK(o.pfc.xoff_bytes == 100'000);
    CHECK(o.pfc.priorities == std::vector<int>{0, 3});
    CHECK(o.origins.at("pfc.xoff").where == "--set pfc.xoff=100KB");
    // And over the file's value.
    CHECK(load_scenario(file.path(), {"pfc.xoff=300KB"}).pfc.xoff_bytes == 300'000);
  }
  SECTION("the ends of the ranges") {
    const Scenario e =
        load_scenario(file.path(), {"pfc.pause_quanta=1", "pfc.priorities=[7, 6, 5, 4, 3, 2, 1, 0]",
                                    "pfc.watchdog_restoration_time=60s"});
    CHECK(e.pfc.pause_quanta == 1);
    CHECK(e.pfc.priorities.size() == 8);
    CHECK(e.pfc.watchdog_restoration_time_ps == 60'000'000'000'000);
    CHECK(load_scenario(file.path(), {"pfc.pause_quanta=65535"}).pfc.pause_quanta == 65535);
  }
}

TEST_CASE("pfc: bad values and broken rules say where and what was expected", "[config]") {
  // The appended pfc section: "pfc:" line 28, its keys from line 29.
  const auto pfc = [](const std::string& lines, const std::string& base = kBase) {
    return with_sections("pfc:\n" + lines, base);
  };
  SECTION("pfc keys under transport infiniband: InfiniBand uses credit flow control") {
    check(pfc("  enabled: true\n", infiniband_base()), 29, 12, "pfc.enabled",
          "applies to transport roce, not to this scenario's transport infiniband" + kRocePfcNote);
    const ConfigError e = error_for(kBase, {"transport=infiniband", "pfc.xoff=100KB"});
    CHECK(std::string(e.what()) ==
          "--set pfc.xoff=100KB: pfc.xoff: applies to transport roce, not to this scenario's "
          "transport infiniband" +
              kRocePfcNote);
  }
  SECTION("threshold dynamic needs switch.buffer_model shared") {
    check(pfc("  threshold: dynamic\n"), 29, 14, "pfc.threshold",
          "threshold dynamic needs switch.buffer_model shared (XOFF at alpha x the free shared "
          "buffer), not static (the default)");
    std::string path;
    const std::string text =
        pfc("  threshold: dynamic\n",
            edit("  buffer_per_port: 2MiB", "  buffer_model: static\n  buffer_per_port: 2MiB"));
    const ConfigError e = error_for(text, {}, &path);
    CHECK(e.line() == 30);
    CHECK(e.message() ==
          "threshold dynamic needs switch.buffer_model shared (XOFF at alpha x the free shared "
          "buffer), not static (set in " +
              path + ":16:17)");
  }
  SECTION("xoff only with threshold static, alpha only with dynamic") {
    check(pfc("  threshold: dynamic\n  xoff: 100KB\n", shared_base()), 31, 9, "pfc.xoff",
          "applies to threshold static, not to this scenario's threshold dynamic");
    check(pfc("  alpha: 2\n"), 29, 10, "pfc.alpha",
          "applies to threshold dynamic, not to this scenario's threshold static (the default)");
  }
  SECTION("xon_offset must be less than xoff") {
    check(pfc("  xoff: 100KB\n  xon_offset: 100KB\n"), 30, 15, "pfc.xon_offset",
          "xon_offset (100KB) must be less than xoff (100KB): XON = xoff - xon_offset must be "
          "above 0");
    // A --set of xoff is blamed rather than the file's xon_offset.
    const ConfigError e = error_for(pfc("  xoff: 100KB\n  xon_offset: 10KB\n"), {"pfc.xoff=10KB"});
    CHECK(std::string(e.what()) ==
          "--set pfc.xoff=10KB: pfc.xoff: xoff (10KB) must be more than xon_offset (10KB): XON = "
          "xoff - xon_offset must be above 0");
    // Without xoff (derived) there is nothing to compare yet.
    TempScenario f(pfc("  xon_offset: 1MB\n"));
    CHECK(load_scenario(f.path()).pfc.xon_offset_bytes == 1'000'000);
  }
  SECTION("priorities: 1 to 8 distinct integers 0..7") {
    const std::string expected = "a list of 1 to 8 distinct priorities from 0 to 7, e.g. [3]";
    check(pfc("  priorities: [3, 3]\n"), 29, 19, "pfc.priorities[1]",
          "priority 3 is listed twice; expected distinct priorities");
    check(pfc("  priorities: [8]\n"), 29, 16, "pfc.priorities[0]",
          "expected an integer from 0 to 7, got '8'");
    check(pfc("  priorities: []\n"), 29, 15, "pfc.priorities",
          "expected " + expected + ", got 0 entries");
    check(pfc("  priorities: 3\n"), 29, 15, "pfc.priorities", "expected " + expected + ", got '3'");
  }
  SECTION("sizes and times with units; zero where the default is meant") {
    check(pfc("  xoff: 200\n"), 29, 9, "pfc.xoff",
          "expected a size with a unit, e.g. 200KB, got '200'");
    check(pfc("  xoff: 0B\n"), 29, 9, "pfc.xoff",
          "expected a positive size, got zero ('0B'); leave xoff out to derive it from the "
          "buffer");
    check(pfc("  xon_offset: 0B\n"), 29, 15, "pfc.xon_offset",
          "expected a positive size, got zero ('0B'); leave xon_offset out for two MTU frames");
    check(pfc("  headroom: -1KB\n"), 29, 13, "pfc.headroom",
          "expected a positive size, got a negative size '-1KB'");
    check(pfc("  response_time: 2s\n"), 29, 18, "pfc.response_time",
          "expected a time from 0ns to 1s, got '2s'");
    check(pfc("  watchdog_detection_time: 0ms\n"), 29, 28, "pfc.watchdog_detection_time",
          "expected a positive time up to 60s, got zero ('0ms')");
    check(pfc("  watchdog_restoration_time: 61s\n"), 29, 30, "pfc.watchdog_restoration_time",
          "expected a positive time up to 60s, got '61s'");
    check(pfc("  deadlock_check_interval: 0us\n"), 29, 28, "pfc.deadlock_check_interval",
          "expected a time from 1us to 1s, got zero ('0us')");
  }
  SECTION("pause_quanta, booleans and names") {
    check(pfc("  pause_quanta: 0\n"), 29, 17, "pfc.pause_quanta",
          "expected an integer from 1 to 65535, got '0'");
    check(pfc("  pause_quanta: 65536\n"), 29, 17, "pfc.pause_quanta",
          "expected an integer from 1 to 65535, got '65536'");
    check(pfc("  watchdog: on\n"), 29, 13, "pfc.watchdog", "expected true or false, got 'on'");
    check(pfc("  threshold: dinamic\n"), 29, 14, "pfc.threshold",
          "unknown threshold model 'dinamic'; did you mean 'dynamic'?");
    check(pfc("  watchdog_action: dorp\n"), 29, 20, "pfc.watchdog_action",
          "unknown watchdog action 'dorp'; did you mean 'drop'?");
    check(pfc("  xof: 100KB\n"), 29, 3, "pfc.xof", "unknown key 'xof'; did you mean 'xoff'?");
    check(pfc("  kmin: 5KB\n"), 29, 3, "pfc.kmin",
          "unknown key 'kmin'; it belongs in the ecn section (ecn.kmin)");
    check(pfc("  alpha: 2\n  alpha: 3\n", shared_base()), 31, 3, "pfc.alpha",
          "duplicate key 'alpha' (first given at line 30)");  // shared_base has 28 lines
  }
  SECTION("a pfc key in the switch section is pointed to its section") {
    check(edit("  buffer_per_port: 2MiB", "  buffer_per_port: 2MiB\n  xoff: 1KB"), 17, 3,
          "switch.xoff", "unknown key 'xoff'; it belongs in the pfc section (pfc.xoff)");
    check(edit("  mtu: 4096B", "  mtu: 4096B\n  enabled: true"), 19, 3, "nic.enabled",
          "unknown key 'enabled'; it belongs in the ecn section, the pfc section or the dcqcn "
          "section (ecn.enabled, pfc.enabled or dcqcn.enabled)");
  }
}

TEST_CASE("dcqcn: a preset, then the keys given override it", "[config]") {
  using fabricsim::dcqcn_preset;
  const std::string ecn = "ecn:\n  enabled: true\n";  // lines 28-29; dcqcn: line 30
  SECTION("every key, with its units") {
    TempScenario file(with_sections(ecn + "dcqcn:\n"                     // 30
                                          "  enabled: true\n"            // 31
                                          "  g: 1/256\n"                 // 32
                                          "  initial_alpha: 0.5\n"       // 33
                                          "  alpha_timer: 55us\n"        // 34
                                          "  rate_timer: 300us\n"        // 35
                                          "  byte_counter: 10MB\n"       // 36
                                          "  fast_recovery_steps: 5\n"   // 37
                                          "  rai: 40Mbps\n"              // 38
                                          "  rhai: 0.4Gbps\n"            // 39
                                          "  min_rate: 10Mbps\n"         // 40
                                          "  max_decrease: 1/2\n"        // 41
                                          "  cnp_interval: 50us\n"       // 42
                                          "  cnp_traffic_class: 6\n"));  // 43
    const Scenario s = load_scenario(file.path());
    CHECK(s.dcqcn.enabled);
    CHECK(s.dcqcn.preset == "paper");
    CHECK(s.dcqcn.g == 1.0 / 256);
    CHECK(s.dcqcn.initial_alpha == 0.5);
    CHECK(s.dcqcn.alpha_timer_ps == 55'000'000);
    CHECK(s.dcqcn.rate_timer_ps == 300'000'000);
    CHECK(s.dcqcn.byte_counter_bytes == 10'000'000);
    CHECK(s.dcqcn.fast_recovery_steps == 5);
    CHECK(s.dcqcn.rai_bps == 40'000'000);
    CHECK(s.dcqcn.rhai_bps == 400'000'000);
    CHECK(s.dcqcn.min_rate_bps == 10'000'000);
    CHECK(s.dcqcn.max_decrease == 0.5);
    CHECK(s.dcqcn.cnp_interval_ps == 50'000'000);
    CHECK(s.dcqcn.cnp_traffic_class == 6);
    CHECK(s.origins.at("dcqcn.min_rate").line == 40);
  }
  SECTION("preset connectx: its values, except the key given (written before or after)") {
    const fabricsim::DcqcnConfig connectx = dcqcn_preset("connectx");
    for (const std::string& keys : {std::string("  preset: connectx\n  rai: 7Mbps\n"),
                                    std::string("  rai: 7Mbps\n  preset: connectx\n")}) {
      TempScenario file(with_sections(ecn + "dcqcn:\n  enabled: true\n" + keys));
      const Scenario s = load_scenario(file.path());
      CHECK(s.dcqcn.enabled);
      CHECK(s.dcqcn.preset == "connectx");
      CHECK(s.dcqcn.rai_bps == 7'000'000);           // the key
      CHECK(s.dcqcn.rhai_bps == connectx.rhai_bps);  // the preset
      CHECK(s.dcqcn.g == connectx.g);
      CHECK(s.dcqcn.min_rate_bps == connectx.min_rate_bps);
      CHECK(s.dcqcn.rate_timer_ps == connectx.rate_timer_ps);
      CHECK(s.dcqcn.byte_counter_bytes == connectx.byte_counter_bytes);
      CHECK(s.dcqcn.cnp_interval_ps == connectx.cnp_interval_ps);
      CHECK(s.dcqcn.cnp_traffic_class == connectx.cnp_traffic_class);
    }
  }
  SECTION("a section without preset starts from the paper's; enabled stays the scenario's") {
    const fabricsim::DcqcnConfig paper = dcqcn_preset("paper");
    TempScenario file(with_sections("dcqcn:\n  rai: 7Mbps\n"));
    const Scenario s = load_scenario(file.path());
    CHECK_FALSE(s.dcqcn.enabled);
    CHECK(s.dcqcn.preset == "paper");
    CHECK(s.dcqcn.rai_bps == 7'000'000);
    CHECK(s.dcqcn.rhai_bps == paper.rhai_bps);
    CHECK(s.dcqcn.alpha_timer_ps == paper.alpha_timer_ps);
  }
  SECTION("by --set: the preset, and a key over it") {
    TempScenario file(kBase);
    const Scenario s =
        load_scenario(file.path(), {"ecn.enabled=true", "dcqcn.enabled=true",
                                    "dcqcn.preset=connectx", "dcqcn.min_rate=100Mbps"});
    CHECK(s.dcqcn.enabled);
    CHECK(s.dcqcn.preset == "connectx");
    CHECK(s.dcqcn.min_rate_bps == 100'000'000);
    CHECK(s.dcqcn.rhai_bps == dcqcn_preset("connectx").rhai_bps);
  }
}

TEST_CASE("dcqcn: bad values and broken rules say where and what was expected", "[config]") {
  // "dcqcn:" on line 28, its keys from line 29.
  const auto dcqcn = [](const std::string& lines, const std::string& base = kBase) {
    return with_sections("dcqcn:\n" + lines, base);
  };
  SECTION("dcqcn.enabled needs ecn.enabled") {
    check(dcqcn("  enabled: true\n"), 29, 12, "dcqcn.enabled",
          "DCQCN reacts to ECN marks: set ecn.enabled: true");
    check(with_sections("ecn:\n  enabled: false\ndcqcn:\n  enabled: true\n"), 31, 12,
          "dcqcn.enabled", "DCQCN reacts to ECN marks: set ecn.enabled: true");
    const ConfigError e = error_for(kBase, {"dcqcn.enabled=true"});
    CHECK(std::string(e.what()) ==
          "--set dcqcn.enabled=true: dcqcn.enabled: DCQCN reacts to ECN marks: set ecn.enabled: "
          "true");
    // ECN marking on some switches only is enough.
    TempScenario file(dcqcn("  enabled: true\n") +
                      "switches:\n  leaf0:\n    ecn: {enabled: true}\n");
    CHECK(load_scenario(file.path()).dcqcn.enabled);
  }
  SECTION("dcqcn keys under transport infiniband") {
    check(dcqcn("  g: 1/16\n", infiniband_base()), 29, 6, "dcqcn.g",
          "applies to transport roce, not to this scenario's transport infiniband; DCQCN is "
          "congestion control for RoCE");
  }
  SECTION("a misspelt preset") {
    check(dcqcn("  preset: conectx\n"), 29, 11, "dcqcn.preset",
          "unknown DCQCN preset 'conectx'; did you mean 'connectx'?");
    check(dcqcn("  preset: dctcp\n"), 29, 11, "dcqcn.preset",
          "unknown DCQCN preset 'dctcp'; expected one of: paper, connectx");
  }
  SECTION("numbers, rates, times and sizes out of range") {
    check(dcqcn("  g: 0\n"), 29, 6, "dcqcn.g",
          "expected a number above 0 and at most 1, e.g. 1/256, got '0'");
    check(dcqcn("  g: 2\n"), 29, 6, "dcqcn.g",
          "expected a number above 0 and at most 1, e.g. 1/256, got '2'");
    check(dcqcn("  initial_alpha: 1.5\n"), 29, 18, "dcqcn.initial_alpha",
          "expected a number from 0 to 1, e.g. 1, got '1.5'");
    check(dcqcn("  max_decrease: 0\n"), 29, 17, "dcqcn.max_decrease",
          "expected a number above 0 and at most 1, e.g. 0.5 or 1/2, got '0'");
    check(dcqcn("  rai: 40\n"), 29, 8, "dcqcn.rai",
          "expected a rate with a unit, e.g. 40Mbps, got '40'");
    check(dcqcn("  min_rate: 0Mbps\n"), 29, 13, "dcqcn.min_rate",
          "expected a rate from 1Mbps to 100Tbps, got zero ('0Mbps')");
    check(dcqcn("  rate_timer: 0us\n"), 29, 15, "dcqcn.rate_timer",
          "expected a positive time up to 1s, got zero ('0us')");
    check(dcqcn("  alpha_timer: 55\n"), 29, 16, "dcqcn.alpha_timer",
          "expected a time with a unit, e.g. 4ms, got '55'");
    check(dcqcn("  byte_counter: 0B\n"), 29, 17, "dcqcn.byte_counter",
          "expected a positive size, got zero ('0B')");
    check(dcqcn("  cnp_interval: -1us\n"), 29, 17, "dcqcn.cnp_interval",
          "expected a time from 0ns to 1s, got a negative time '-1us'");
    check(dcqcn("  fast_recovery_steps: 0\n"), 29, 24, "dcqcn.fast_recovery_steps",
          "expected an integer from 1 to 255, got '0'");
    check(dcqcn("  cnp_traffic_class: 8\n"), 29, 22, "dcqcn.cnp_traffic_class",
          "expected an integer from 0 to 7, got '8'");
    check(dcqcn("  min_rte: 1Gbps\n"), 29, 3, "dcqcn.min_rte",
          "unknown key 'min_rte'; did you mean 'min_rate'?");
  }
}

TEST_CASE("infiniband: vl_buffer, only with transport infiniband", "[config]") {
  SECTION("a size with its unit") {
    TempScenario file(with_sections("infiniband:\n  vl_buffer: 128KiB\n", infiniband_base()));
    const Scenario s = load_scenario(file.path());
    CHECK(s.infiniband.vl_buffer_bytes == 128 * 1024);
    CHECK(s.origins.at("infiniband.vl_buffer").line == 29);
    TempScenario by_set(infiniband_base());
    CHECK(load_scenario(by_set.path(), {"infiniband.vl_buffer=64KB"}).infiniband.vl_buffer_bytes ==
          64'000);
  }
  SECTION("with transport roce: an error naming the transport") {
    const std::string why = "; RoCE's flow control is PFC (the pfc section)";
    check(with_sections("infiniband:\n  vl_buffer: 128KiB\n"), 29, 14, "infiniband.vl_buffer",
          "applies to transport infiniband, not to this scenario's transport roce" + why);
    check(with_sections("infiniband:\n  vl_buffer: 128KiB\n", edit("transport: roce", "")), 28, 14,
          "infiniband.vl_buffer",
          "applies to transport infiniband, not to this scenario's transport roce (the default)" +
              why);
  }
  SECTION("a positive size") {
    check(with_sections("infiniband:\n  vl_buffer: 0B\n", infiniband_base()), 29, 14,
          "infiniband.vl_buffer", "expected a positive size, got zero ('0B')");
    check(with_sections("infiniband:\n  vl_bufer: 1MiB\n", infiniband_base()), 29, 3,
          "infiniband.vl_bufer", "unknown key 'vl_bufer'; did you mean 'vl_buffer'?");
  }
}

TEST_CASE("lossless_roce.yaml: sections in any order, switches override the top level",
          "[config]") {
  const std::string path = source_path("tests/data/config/lossless_roce.yaml");
  const Scenario s = load_scenario(path);
  CHECK(s.pfc.enabled);
  CHECK(s.pfc.priorities == std::vector<int>{3});
  CHECK(s.pfc.xoff_bytes == 200'000);
  CHECK(s.ecn.kmin_bytes == 10'000);
  CHECK(s.dcqcn.preset == "connectx");
  CHECK(s.dcqcn.rai_bps == 40'000'000);
  REQUIRE(s.switches.size() == 2);
  const fabricsim::SwitchOverride& leaf0 = s.switches.at("leaf0");
  CHECK(leaf0.pfc.xoff_bytes == 50'000);  // its own
  CHECK(leaf0.pfc.enabled);               // the rest from the top-level pfc
  CHECK(leaf0.pfc.priorities == std::vector<int>{3});
  CHECK(leaf0.pfc.xon_offset_bytes == 1024);
  CHECK(leaf0.pfc.headroom_bytes == 100'000);
  CHECK(leaf0.ecn.kmax_bytes == 100'000);  // its own
  CHECK(leaf0.ecn.enabled);                // the top-level ecn
  CHECK(leaf0.ecn.kmin_bytes == 10'000);
  const fabricsim::SwitchOverride& spine1 = s.switches.at("spine1");
  CHECK_FALSE(spine1.pfc.enabled);
  CHECK(spine1.pfc.xoff_bytes == 200'000);
  CHECK(spine1.ecn.kmax_bytes == s.ecn.kmax_bytes);
  // Origins: the name, and each key given.
  CHECK(s.origins.at("switches.leaf0").line == 4);
  CHECK(s.origins.at("switches.leaf0").column == 3);
  CHECK(s.origins.at("switches.leaf0.pfc.xoff").line == 5);
  CHECK(s.origins.at("switches.leaf0.pfc.xoff").column == 17);
  CHECK(s.origins.at("switches.spine1.pfc.enabled").line == 9);
  CHECK(std::string(fabricsim::key_error(s, "switches.leaf0.ecn.kmax", "too big").what()) ==
        path + ":6:17: switches.leaf0.ecn.kmax: too big");

  SECTION("--set of a switch's key, over the file's or for a switch the file does not name") {
    const Scenario o = load_scenario(
        path, {"switches.leaf0.pfc.xoff=20KB", "switches.leaf1.ecn.kmin=1KB", "pfc.xoff=300KB"});
    CHECK(o.switches.at("leaf0").pfc.xoff_bytes == 20'000);
    CHECK(o.switches.at("leaf1").ecn.kmin_bytes == 1000);
    CHECK(o.switches.at("leaf1").pfc.xoff_bytes == 300'000);  // the top-level --set
    CHECK(o.switches.at("spine1").pfc.xoff_bytes == 300'000);
    CHECK(o.origins.at("switches.leaf1").where == "--set switches.leaf1.ecn.kmin=1KB");
    CHECK(o.origins.at("switches.leaf0.pfc.xoff").where == "--set switches.leaf0.pfc.xoff=20KB");
    CHECK(o.origins.at("switches.leaf0").line == 4);  // the file names it
  }
}

TEST_CASE("switches: errors point at the switch's key, with the switch's path", "[config]") {
  // Top-level pfc and ecn on lines 28-33; "switches:" line 34, "  leaf0:" line 35, its line 36.
  const std::string top =
      "ecn:\n"                // 28
      "  enabled: true\n"     // 29
      "pfc:\n"                // 30
      "  enabled: true\n"     // 31
      "  xoff: 200KB\n"       // 32
      "  xon_offset: 10KB\n"  // 33
      "switches:\n"           // 34
      "  leaf0:\n";           // 35
  const auto leaf0 = [&](const std::string& line, const std::string& base = kBase) {
    return with_sections(top + line, base);
  };
  SECTION("an unknown section under a switch, or a pfc key put directly under it") {
    check(leaf0("    pfcc: {xoff: 50KB}\n"), 36, 5, "switches.leaf0.pfcc",
          "unknown key 'pfcc'; did you mean 'pfc'?");
    check(leaf0("    xoff: 50KB\n"), 36, 5, "switches.leaf0.xoff",
          "unknown key 'xoff'; it belongs in a section under leaf0 (switches.leaf0.pfc.xoff)");
    check(leaf0("    buffer_per_port: 1MiB\n"), 36, 5, "switches.leaf0.buffer_per_port",
          "unknown key 'buffer_per_port'; a switch overrides only pfc and ecn keys");
    check(leaf0("    pfc: {}\n    pfc: {}\n"), 37, 5, "switches.leaf0.pfc",
          "duplicate key 'pfc' (first given at line 36)");
  }
  SECTION("an unknown key in a switch's pfc or ecn: did you mean, or its section") {
    check(leaf0("    pfc: {xof: 50KB}\n"), 36, 11, "switches.leaf0.pfc.xof",
          "unknown key 'xof'; did you mean 'xoff'?");
    check(leaf0("    pfc: {kmin: 5KB}\n"), 36, 11, "switches.leaf0.pfc.kmin",
          "unknown key 'kmin'; it belongs in the ecn section (switches.leaf0.ecn.kmin)");
    check(leaf0("    ecn: {mtu: 9000B}\n"), 36, 11, "switches.leaf0.ecn.mtu",
          "unknown key 'mtu'; valid keys are: enabled, kmin, kmax, pmax, mark_at");
  }
  SECTION("the same validation as the top-level keys") {
    check(leaf0("    pfc: {xoff: 50}\n"), 36, 17, "switches.leaf0.pfc.xoff",
          "expected a size with a unit, e.g. 200KB, got '50'");
    check(leaf0("    ecn: {pmax: 2}\n"), 36, 17, "switches.leaf0.ecn.pmax",
          "expected a probability above 0 and at most 1, e.g. 0.01 or 1/100, got '2'");
    check(leaf0("    pfc: {priorities: [1, 1]}\n"), 36, 27, "switches.leaf0.pfc.priorities[1]",
          "priority 1 is listed twice; expected distinct priorities");
    check(leaf0("    pfc: 3\n"), 36, 10, "switches.leaf0.pfc",
          "expected a map of pfc keys (enabled, priorities, threshold, xoff, alpha, xon_offset, "
          "headroom, response_time, pause_quanta, watchdog, watchdog_detection_time, "
          "watchdog_restoration_time, watchdog_action, deadlock_check_interval), got '3'");
  }
  SECTION("xon_offset < xoff with the switch's xoff and the inherited xon_offset") {
    check(leaf0("    pfc: {xoff: 5KB}\n"), 36, 17, "switches.leaf0.pfc.xoff",
          "xoff (5KB) must be more than xon_offset (10KB): XON = xoff - xon_offset must be above "
          "0");
    check(leaf0("    pfc: {xon_offset: 300KB}\n"), 36, 23, "switches.leaf0.pfc.xon_offset",
          "xon_offset (300KB) must be less than xoff (200KB): XON = xoff - xon_offset must be "
          "above 0");
  }
  SECTION("threshold conditions: the switch's own threshold, or the inherited one") {
    check(leaf0("    pfc: {alpha: 2}\n"), 36, 18, "switches.leaf0.pfc.alpha",
          "applies to threshold dynamic, not to switch leaf0's threshold static (the default)");
    std::string path;
    const ConfigError e = error_for(
        with_sections("pfc:\n  threshold: static\nswitches:\n  leaf0:\n    pfc: {alpha: 2}\n"), {},
        &path);
    CHECK(e.line() == 32);
    CHECK(e.message() ==
          "applies to threshold dynamic, not to switch leaf0's threshold static (from the "
          "top-level pfc.threshold at " +
              path + ":29:14)");
    // A switch's own threshold dynamic (on a shared buffer) with its alpha.
    TempScenario file(leaf0("    pfc: {threshold: dynamic, alpha: 1/4}\n", shared_base()));
    const fabricsim::Scenario loaded = load_scenario(file.path());  // (not a temporary)
    const fabricsim::PfcConfig& own = loaded.switches.at("leaf0").pfc;
    CHECK(own.threshold == "dynamic");
    CHECK(own.alpha == 0.25);
  }
  SECTION("a switch's threshold dynamic needs a shared buffer") {
    check(leaf0("    pfc: {threshold: dynamic}\n"), 36, 22, "switches.leaf0.pfc.threshold",
          "threshold dynamic needs switch.buffer_model shared (XOFF at alpha x the free shared "
          "buffer), not static (the default)");
  }
  SECTION("a switch's pfc keys under transport infiniband") {
    check(with_sections("switches:\n  leaf0:\n    pfc: {enabled: false}\n", infiniband_base()), 30,
          20, "switches.leaf0.pfc.enabled",
          "applies to transport roce, not to this scenario's transport infiniband" + kRocePfcNote);
    // ecn overrides are fine there.
    TempScenario file(
        with_sections("switches:\n  leaf0:\n    ecn: {enabled: true}\n", infiniband_base()));
    CHECK(load_scenario(file.path()).switches.at("leaf0").ecn.enabled);
  }
  SECTION("the section and each switch must be maps; a name only once") {
    check(with_sections("switches: [leaf0]\n"), 28, 11, "switches",
          "expected a map of switch names to their pfc and ecn keys, e.g. {leaf0: {pfc: {xoff: "
          "100KB}, ecn: {kmin: 10KB}}}, got a list");
    check(with_sections("switches:\n  leaf0: 3\n"), 29, 10, "switches.leaf0",
          "expected a map with the sections a switch overrides (pfc and ecn), e.g. {pfc: {xoff: "
          "100KB}}, got '3'");
    check(with_sections("switches:\n  leaf0: {}\n  leaf0: {}\n"), 30, 3, "switches.leaf0",
          "duplicate switch 'leaf0' (first given at line 29)");
    // An empty entry: the switch keeps the top-level values.
    TempScenario file(with_sections("switches:\n  leaf0:\n"));
    const Scenario s = load_scenario(file.path());
    CHECK(s.switches.at("leaf0").pfc.xoff_bytes == 0);
  }
  SECTION("bad --set of a switch's key") {
    const auto error = [&](const std::string& override_text) {
      const ConfigError e = error_for(kBase, {override_text});
      CHECK(e.where() == "--set " + override_text);
      return std::string(e.what());
    };
    CHECK(error("switches.leaf0.pfc.xoff=50") ==
          "--set switches.leaf0.pfc.xoff=50: switches.leaf0.pfc.xoff: expected a size with a "
          "unit, e.g. 200KB, got '50'");
    CHECK(error("switches.leaf0.pfc.xof=50KB") ==
          "--set switches.leaf0.pfc.xof=50KB: switches.leaf0.pfc.xof: unknown key; did you mean "
          "'switches.leaf0.pfc.xoff'?");
    CHECK(error("switches.leaf0.xoff=50KB") ==
          "--set switches.leaf0.xoff=50KB: switches.leaf0.xoff: expected switches.SWITCH.pfc.KEY "
          "or switches.SWITCH.ecn.KEY, e.g. switches.leaf0.pfc.xoff=100KB");
    CHECK(error("switches=3") ==
          "--set switches=3: switches: 'switches' is a section; set a switch's key, e.g. "
          "switches.leaf0.pfc.xoff");
    TempScenario file(with_sections("switches:\n  leaf0: 3\n"));
    const ConfigError e = load_error(file.path(), {"switches.leaf0.pfc.xoff=50KB"});
    CHECK(e.message() == "cannot set a key under 'switches.leaf0': in " + file.path() +
                             ":29 it is '3', not a map");
  }
}

TEST_CASE("check_switch_overrides: names that are not switches, with did you mean", "[config]") {
  using fabricsim::check_switch_overrides;
  const std::vector<std::string> names = {"leaf0", "leaf1", "spine0", "spine1"};
  const std::string path = source_path("tests/data/config/lossless_roce.yaml");
  CHECK_NOTHROW(check_switch_overrides(load_scenario(path), names));
  SECTION("a misspelt name: at the name, with a suggestion") {
    TempScenario file(with_sections("switches:\n  leaf0: {}\n  spnie1:\n    ecn: {kmin: 1KB}\n"));
    const Scenario s = load_scenario(file.path());
    try {
      check_switch_overrides(s, names);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      check_error(e, file.path(), 30, 3, "switches.spnie1",
                  "no switch named 'spnie1'; did you mean 'spine1'?");
    }
  }
  SECTION("no close name; the first in the file is reported") {
    TempScenario file(with_sections("switches:\n  zz7: {}\n  aa7: {}\n"));
    try {
      check_switch_overrides(load_scenario(file.path()), names);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      check_error(e, file.path(), 29, 3, "switches.zz7",
                  "no switch named 'zz7' (fabricsim topo --dot shows the names)");
    }
  }
  SECTION("a name given by --set names the override") {
    try {
      check_switch_overrides(load_scenario(path, {"switches.leaf9.pfc.xoff=10KB"}), names);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) ==
            "--set switches.leaf9.pfc.xoff=10KB: switches.leaf9: no switch named 'leaf9'; did you "
            "mean 'leaf0'?");
    }
  }
  SECTION("the names of a fabric built from the scenario") {
    const Scenario s = load_scenario(path);
    const fabricsim::Fabric f = fabricsim::build_fabric(s);
    std::vector<std::string> switches;
    for (auto [v, end] = boost::vertices(f.graph); v != end; ++v) {
      const std::string& n = f.graph[*v].name;
      if (n.rfind("host", 0) != 0) switches.push_back(n);
    }
    CHECK_NOTHROW(check_switch_overrides(s, switches));
  }
}

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
                         "flow: 4294967295}\n  - {src: a, dst: b, size: 1B, priority: 0, flow: "
                         "0, start: 0ns}\n"));
    const Scenario t = load_scenario(file.path());
    CHECK(t.traffic[0].src == "+0");  // as written
    CHECK(t.traffic[0].start_ps == 3'600'000'000'000'000);
    CHECK(t.traffic[0].priority == 7);
    CHECK(t.traffic[0].flow == 4'294'967'295);
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
  SECTION("priority 0..7, flow 0..2^32-1") {
    check(flows("  - {src: 0, dst: 1, size: 1MiB, priority: 8}\n"), 20, 44, "traffic[0].priority",
          "expected an integer from 0 to 7, got '8'");
    check(flows("  - {src: 0, dst: 1, size: 1MiB, flow: 4294967296}\n"), 20, 40, "traffic[0].flow",
          "expected an integer from 0 to 4294967295, got '4294967296'");
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
              list_expected.substr(std::string("expected ").size()) + "), or a training section");
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
