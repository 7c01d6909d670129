// A sweep's points run in child processes (sim/pool/process_pool.hpp), `--jobs N` at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/sweep_table.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

/// How long a point process may take to stop after the sweep's interrupt or --max-wall before
/// it is killed (a stopped or hung process would otherwise hold the sweep forever).
inline constexpr int kStopGraceSeconds = 5;

/// Runs the points in child processes, at most `jobs` at once, in point order, filling
/// `results` (point i at i - 1) as they finish and calling `on_finish` after each. Each child
/// (fork: the child has every scenario already loaded and checked) runs its point exactly as the
/// sequential sweep would (run_point), writes its DIR/point-NNN/, sends its row through a pipe
/// and exits with the code `fabricsim run` would. A point with a row already (unbuildable) is
/// not run. When `interrupt` becomes true it starts no more, forwards SIGINT to the running ones
/// and waits for them (each then tabulates itself as interrupted). Past `wall`'s deadline it
/// starts no more either; the running ones stop themselves at the same deadline (limited). One
/// that has not stopped kStopGraceSeconds after either (stopped, hung) is killed and tabulated as
/// interrupted or limited, without results. A child that dies without sending its row (a crash,
/// a kill) is tabulated as failed with the reason, its partial files removed; one interrupted by
/// a signal the sweep did not send, as failed too. Returns how many points were started (points
/// 1 to that number have rows).
int64_t run_parallel(std::vector<Scenario>& scenarios, const std::vector<SweepAxis>& axes,
                     const std::vector<std::vector<std::string>>& values, const RunOptions& opts,
                     const std::atomic<bool>* interrupt, const std::optional<WallLimit>& wall,
                     int64_t jobs, bool progress, std::vector<std::optional<PointResult>>& results,
                     const std::function<void()>& on_finish);

}  // namespace fabricsim
