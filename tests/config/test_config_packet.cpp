// sim/config: the packet model's keys (switch, nic, link), switch profiles and per-link bit
// error rates, with the line, column, key path and message a mistake gets.
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace config_testing;

// ---- the packet-model keys: link BER, switch buffer and scheduler, NIC transport ------------

namespace {

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
  SECTION("switch.alpha: out of 1/128 … 64, or not a number; scientific notation read") {
    const auto with_alpha = [](const std::string& value) {
      return edit("  shared_buffer: 32MiB", "  shared_buffer: 32MiB\n  alpha: " + value,
                  shared_base());
    };
    for (const char* bad : {"100", "65", "1/256", "0", "-1", "half", "1/0", "1:8", "1e-3", "''"}) {
      const std::string shown = std::string(bad) == "''" ? "" : bad;
      check(with_alpha(bad), 18, 10, "switch.alpha",
            "expected " + kAlphaExpected + ", got '" + shown + "'");
    }
    // Scientific notation is the number it writes (a fraction key once refused it as not a
    // number): 5e-1 is 0.5.
    TempScenario file(with_alpha("5e-1"));
    CHECK(load_scenario(file.path()).sw.alpha == 0.5);
    TempScenario quotient(with_alpha("1e0/4"));
    CHECK(load_scenario(quotient.path()).sw.alpha == 0.25);
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
  SECTION("nic.rto: a positive time up to 3600s (NCCL's own 4.29 s fits)") {
    check(with_nic("rto: 0ms"), 19, 8, "nic.rto",
          "expected a positive time up to 3600s, got zero ('0ms')");
    check(with_nic("rto: 3601s"), 19, 8, "nic.rto",
          "expected a positive time up to 3600s, got '3601s'");
    check(with_nic("rto: -1ms"), 19, 8, "nic.rto",
          "expected a positive time up to 3600s, got a negative time '-1ms'");
    check(with_nic("rto: 5"), 19, 8, "nic.rto", "expected a time with a unit, e.g. 67ms, got '5'");
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
