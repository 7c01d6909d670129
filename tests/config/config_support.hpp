// Shared by the sim/config test files (test_config*.cpp): the base scenario, temporary
// scenario files and the error-message helpers.
#pragma once

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
#include "topologies/family.hpp"

namespace config_testing {

namespace fs = std::filesystem;

inline std::string source_path(const std::string& relative) {
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
inline const std::string kBase =
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
inline std::string edit(const std::string& old_line, const std::string& new_lines,
                        const std::string& base = kBase) {
  std::string text = base;
  const size_t at = text.find(old_line + "\n");
  REQUIRE(at != std::string::npos);
  text.replace(at, old_line.size() + 1, new_lines.empty() ? "" : new_lines + "\n");
  return text;
}

/// Loads `text` and returns the ConfigError it must raise.
inline ConfigError error_for(const std::string& text,
                             const std::vector<std::string>& overrides = {},
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
inline void check(const std::string& text, int line, int column, const std::string& key_path,
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
inline std::string unit_error(Parse parse, const std::string& text) {
  try {
    parse(text);
  } catch (const fabricsim::UnitError& e) {
    return e.what();
  }
  FAIL("expected a UnitError for " << text);
  return "";
}

/// kBase with a shared buffer: switch lines 14-17 are switch:, latency, buffer_model,
/// shared_buffer; nic: is line 18.
inline std::string shared_base() {
  return edit("  buffer_per_port: 2MiB", "  buffer_model: shared\n  shared_buffer: 32MiB");
}

/// Asserts an error's file, position, key path and message (for errors in another file).
inline void check_error(const ConfigError& e, const std::string& where, int line, int column,
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
inline ConfigError load_error(const std::string& path,
                              const std::vector<std::string>& overrides = {}) {
  try {
    load_scenario(path, overrides);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for " << path);
  throw std::logic_error("unreachable");
}

/// The ConfigError build_fabric raises for `s`.
inline ConfigError build_error(const Scenario& s) {
  try {
    fabricsim::build_fabric(s);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected build_fabric to raise a ConfigError");
  throw std::logic_error("unreachable");
}

/// The registries register their names (topology.kind, workload.algorithm) when their code is
/// linked: referencing them here links them into every test executable that loads scenarios.
inline const bool kRegistriesLinked =
    !fabricsim::fabric_kinds().empty() && !fabricsim::collective_algorithm_names().empty();

}  // namespace config_testing
