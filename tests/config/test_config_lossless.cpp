// sim/config: lossless RoCE and InfiniBand (pfc, ecn, dcqcn, infiniband, per-switch overrides),
// with the line, column, key path and message a mistake gets.
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace config_testing;

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
