// sim/config: scenario YAML -> Scenario. One SECTION per kind of mistake, each asserting the
// line, column, key path and message (with its suggestion) that the user will see.
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace config_testing;

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
  // ring, tree, halving_doubling, p2p and nvls (docs/scenario-reference.md): the loader reads them
  // from the registry (collectives/algorithm_registry.cpp), which writes each once.
  const std::vector<std::string> names = fabricsim::collective_algorithm_names();
  CHECK(names == std::vector<std::string>{"ring", "tree", "halving_doubling", "p2p", "nvls",
                                          "nvls_tree", "pat", "collnet_direct", "collnet_chain"});
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
    CHECK(
        e.message() ==
        "the scenario is empty; expected a map with the sections topology, link, switch, "
        "nic, routing, ecn, pfc, dcqcn, timely, hpcc, infiniband, flow, switches, workload, nccl, "
        "measured, "
        "traffic, training, jobs, perftest, background, pcie and server");
  }
  SECTION("a list at the top level") {
    const ConfigError e = error_for("- topology\n- link\n");
    CHECK(e.line() == 1);
    CHECK(e.column() == 1);
    CHECK(e.message() ==
          "expected a map with the sections topology, link, switch, nic, routing, ecn, pfc, "
          "dcqcn, timely, hpcc, infiniband, flow, switches, workload, nccl, measured, traffic, "
          "training, "
          "jobs, perftest, background, pcie and server, got a list");
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
          "nvlink_rate, nvlink_efficiency, pcie_rate, pcie_latency, bit_error_rate");
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
          "expected a map of nic keys (mtu, traffic_class, ack_interval, loss_recovery, "
          "reorder_threshold, rto, qp_rate_limit, message_rate, tx_latency, rx_latency, "
          "dma_read_latency, pcie_rate, congestion_control), got '4096B'");
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
              "e.g. [{src: 0, dst: 1, size: 1MiB}]), or a training section, or a jobs section");
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
