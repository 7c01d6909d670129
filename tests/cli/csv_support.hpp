// CSV tables of fabricsim's outputs, for the CLI tests.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cli_testing {

/// A CSV file as rows of cells, header included, with RFC 4180 quoting ("[3,4]" is one cell).
inline std::vector<std::vector<std::string>> csv_table(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(ss.str());
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char ch = line[i];
      if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = !quoted;
      } else if (ch == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += ch;
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

/// The cell of `row` under header `column` of a csv_table.
inline const std::string& cell(const std::vector<std::vector<std::string>>& t, size_t row,
                               const std::string& column) {
  const auto& h = t.at(0);
  const auto it = std::find(h.begin(), h.end(), column);
  REQUIRE(it != h.end());
  return t.at(row).at(static_cast<size_t>(it - h.begin()));
}

}  // namespace cli_testing
