// One point of a sweep: run as `fabricsim run` would run its scenario (sim/run/run.hpp), its
// DIR/point-NNN/ written, and its row of the sweep table (sim/report/sweep_table.hpp); the rows
// of points that did not run; and a row's message through a pipe from a point's process.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/sweep_table.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

/// Removes the files a point writes from its directory (an earlier sweep's, or what a killed
/// point process left half-written), so the directory never holds results its row does not.
/// Nothing without opts.out_given.
void remove_point_outputs(const RunOptions& opts, int64_t index, int64_t points);

/// Runs point `index` (0-based) of `points` exactly as `fabricsim run` would and, with --out,
/// writes its DIR/point-NNN/ (without trace.json; the sweep removed an earlier sweep's files
/// before any point ran); the files that could not be written are in `unwritten`. A point that
/// throws is tabulated as failed.
PointResult run_point(Scenario& sc, int64_t index, int64_t points,
                      const std::vector<std::string>& values, const RunOptions& opts,
                      const std::atomic<bool>* interrupt, bool progress,
                      const std::optional<WallLimit>& wall);

/// The row of a point whose simulation did not produce a report (`error` says why).
PointResult failed_point(int64_t index, const std::vector<std::string>& values,
                         const std::string& error);

/// The row of a point whose process the sweep killed while stopping (`outcome`: kInterrupted
/// or kLimited): its status says so, and it has no results.
PointResult stopped_point(int64_t index, const std::vector<std::string>& values, Outcome outcome);

/// The row of a point whose fabric cannot be built (`why`: the builder's message).
PointResult unbuildable_point(int64_t index, const std::vector<std::string>& values,
                              const std::string& why);

/// A point process's exit code: `fabricsim run`'s for the same outcome.
int exit_code_of(Outcome outcome);

/// A point's row as a message for the pipe from its process to the sweep's
/// (sim/pool/pipe_codec.hpp), ending with a marker so a process that died mid-write is told
/// from one that finished.
std::string encode_point(const PointResult& r);

/// Reads what encode_point() wrote; nullopt for a truncated or malformed message.
std::optional<PointResult> decode_point(const std::string& s);

}  // namespace fabricsim
