// `fabricsim sweep`: one scenario run over the cartesian product of --vary value lists
// (DESIGN.md §4). Wiring only: every point is loaded and prepared as `fabricsim run` would
// (sim/cli/run.hpp), then simulated; sweep.csv / sweep.md tabulate one row per point.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cli/run.hpp"

namespace fabricsim {

/// A sweep of more points than this is refused before anything is loaded (exit 2).
inline constexpr int64_t kMaxSweepPoints = 10'000;

/// One --vary KEY=V1,V2,...: a scenario key (the dotted path --set takes) and its values, as
/// written (surrounding blanks trimmed).
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

/// Splits a --vary value list on the commas that are not inside [] or {} or a quoted string, so
/// "[3],[3,4]" is two values and "{a: 1, b: 2}" one. Blanks around each value are trimmed.
/// Throws ConfigError naming `where` for an empty value or an unbalanced bracket or quote.
std::vector<std::string> split_vary_values(const std::string& list, const std::string& where);

/// Parses the --vary options in order. Throws ConfigError ("--vary TEXT: KEY: what", exit 2)
/// for a missing '=', an empty key, an empty value, or a key given by an earlier --vary.
std::vector<SweepAxis> parse_vary(const std::vector<std::string>& varies);

/// `fabricsim sweep`: loads and prepares every point (the --set list of `opts`, then the
/// point's KEY=VALUE pairs as further --set overrides, then --seed) before any runs, so bad
/// input anywhere is exit 2 with nothing run or written; then simulates the points one after
/// another, each exactly as `fabricsim run` would. With opts.out_given, point i (1-based)
/// writes DIR/point-NNN/ (write_run_outputs, no trace.json), and DIR/sweep.csv, DIR/sweep.md
/// and DIR/sweep_perf.csv (wall-clock time per point) are rewritten after every point. The
/// table of sweep.md is printed to stdout at the end.
/// Returns 0 when every point completed, 3 when the points that did not complete deadlocked,
/// 1 when one stopped for another reason (the sweep still runs the rest), 130 when `interrupt`
/// became true (the points done so far are tabulated, the interrupted one marked so).
int cmd_sweep(const RunOptions& opts, const std::vector<std::string>& varies,
              const std::atomic<bool>* interrupt);

}  // namespace fabricsim
