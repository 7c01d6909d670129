// The fabricsim binary run as a user runs it, shared by the end-to-end test files
// (test_cli*.cpp): exit code, stdout, stderr, scratch directories, CSV rows.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_support.hpp"

namespace cli_end_to_end {

namespace fs = std::filesystem;

using cli_testing::cell;
using cli_testing::csv_table;
using cli_testing::fabricsim_then;
using cli_testing::Result;
using cli_testing::slurp;

inline fs::path scratch(const std::string& name) {
  return cli_testing::scratch_dir("fabricsim_test_cli_", name);
}

/// Runs `fabricsim ARGS` from the source directory, capturing stdout, stderr and the exit code.
inline Result fabricsim(const std::string& args) {
  const fs::path dir = scratch("io");
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && " + FABRICSIM_BINARY +
                          " " + args + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"),
                slurp(dir / "err")};
}

inline const std::string kSmall = " --set workload.maxbytes=256KiB";

/// The rows of a CSV file without quoted fields (fabricsim's node names have no commas), header
/// skipped.
inline std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(slurp(p));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream cs(line);
    std::string cell;
    while (std::getline(cs, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace cli_end_to_end
