// A sweep's points (`fabricsim sweep`, DESIGN.md §4): the --vary lists parsed into axes, and the
// values of each point of their cartesian product.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/report/sweep_table.hpp"

namespace fabricsim {

/// A sweep of more points than this is refused before anything is loaded (exit 2).
inline constexpr int64_t kMaxSweepPoints = 10'000;

/// Splits a --vary value list on the commas that are not inside [] or {} or a quoted string, so
/// "[3],[3,4]" is two values and "{a: 1, b: 2}" one. Blanks around each value are trimmed.
/// Throws ConfigError naming `where` for an empty value or an unbalanced bracket or quote.
std::vector<std::string> split_vary_values(const std::string& list, const std::string& where);

/// Parses the --vary options in order. Throws ConfigError ("--vary TEXT: KEY: what", exit 2)
/// for a missing '=', an empty key, an empty value, or a key given by an earlier --vary.
std::vector<SweepAxis> parse_vary(const std::vector<std::string>& varies);

/// The values of point `index` (0-based): the first axis outermost, the last fastest.
std::vector<std::string> point_values(const std::vector<SweepAxis>& axes, int64_t index);

}  // namespace fabricsim
