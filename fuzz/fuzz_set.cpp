// libFuzzer target: --set and --vary values, as `fabricsim validate SCENARIO --set KEY=VALUE...`
// and a sweep's points take them: load_scenario(path, overrides, varied) (sim/config/loader.hpp)
// applies each KEY=VALUE to one of the repository's scenarios, then prepare() (sim/run/run.hpp)
// builds, routes and plans it. Bad input must end in a ConfigError or UnitError (exit 2);
// anything else escaping (the CLI's "internal error", exit 1), a crash, a hang or a runaway
// allocation is a finding.
//
// The input is a list of records separated by NUL bytes. The first byte of the input picks the
// scenario (kScenarios). In each record, the first byte says what the rest is:
//   0x00 … 0xEF  a value for a real key: bytes 1 and 2 (little-endian) pick the key among
//                override_paths(), the rest is the value; the first byte's lowest bit makes it
//                a --vary rather than a --set;
//   0xF0 … 0xFF  the whole KEY=VALUE text as written (misspelt keys, no '=', …), as a --set.
// So the fuzzer explores the values of every real key, and keys too, through the same path
// --set takes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/fabric_size.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "sim/run/run.hpp"

namespace {

/// Scenarios of the repository the overrides apply to: one of each fabric family, traffic
/// flows, and a training step.
const char* const kScenarios[] = {
    "scenarios/quickstart.yaml",
    "scenarios/pfc-victim-flow.yaml",
    "scenarios/fat_tree_k8.yaml",
    "scenarios/torus_4x4x4.yaml",
    "scenarios/rail_optimized_h100_su.yaml",
    "scenarios/pfc-deadlock-clos-bounce.yaml",
    "scenarios/training_step_h100.yaml",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> keys = [] {
    // validate refuses what would take over half of the machine's memory; the fuzzer's is 2 GB
    // of RSS (fuzz/run.sh), so the machine is said to have 1 GiB.
    setenv("FABRICSIM_MAX_MEMORY", "1GiB", 0);
    return fabricsim::override_paths();
  }();
  if (size == 0) return 0;
  const std::string scenario = std::string(FABRICSIM_SOURCE_DIR) + "/" +
                               kScenarios[data[0] % (sizeof kScenarios / sizeof *kScenarios)];
  std::vector<std::string> sets, varies;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (size_t start = 0; start <= input.size();) {
    size_t end = input.find('\0', start);
    if (end == std::string::npos) end = input.size();
    const std::string record = input.substr(start, end - start);
    start = end + 1;
    if (record.empty()) continue;
    const auto tag = static_cast<uint8_t>(record[0]);
    if (tag >= 0xF0) {
      sets.push_back(record.substr(1));
      continue;
    }
    if (record.size() < 3) continue;
    const size_t index =
        (static_cast<uint8_t>(record[1]) | static_cast<uint8_t>(record[2]) << 8) % keys.size();
    (tag & 1 ? varies : sets).push_back(keys[index] + "=" + record.substr(3));
  }
  try {
    fabricsim::Scenario sc = fabricsim::load_scenario(scenario, sets, varies);
    if (fuzzing::small_enough(sc)) (void)fabricsim::prepare(sc);
  } catch (const fabricsim::ConfigError&) {
  } catch (const fabricsim::UnitError&) {
  }
  return 0;
}
