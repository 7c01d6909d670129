// What `run --out DIR` (and each sweep point) writes, in which order, how a file that could not
// be written is told (stderr, results.json `files_not_written`, exit 74), and the files of a
// run stopped by a signal before its simulation started.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/output_file.hpp"
#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

/// Writes results.json first (it is small, and what a user reads first), then the files of the
/// output-writer table (output_writers.hpp: perf.json, ports.csv, queues.csv, flows.csv, then
/// registered ones) into `dir` (which must exist), each whole or not at all
/// (output_file.hpp). A file that cannot be written leaves nothing under its name (neither half
/// of it nor an earlier run's) and the next one is still tried. When one after results.json
/// fails, results.json is written again with `files_not_written` listing it, as it lists from
/// the start what report.files_not_written already held (trace.json); a run whose files were
/// all written has the same results.json as ever. Appends the files not written to
/// report.files_not_written and returns every failure (results.json's own included), in the
/// order tried: empty when every file was written. Never throws OutputError.
/// `flows` (RunOptions::flows): "csv" writes flows.csv, "gz" flows.csv.gz, "none" neither; a
/// table file not written this run (the other form of flows) is removed if an earlier run left
/// it, so the folder holds this run's only.
std::vector<OutputError> write_run_outputs(const std::string& dir, RunReport& report,
                                           const std::string& flows = "csv");

/// Records that trace.json could not be written (`e`): in `unwritten` (what becomes
/// RunReport::files_not_written), in `failures`, and by removing an earlier run's trace.json
/// from `dir`.
void trace_not_written(const std::filesystem::path& dir, const OutputError& e,
                       std::vector<UnwrittenFile>& unwritten, std::vector<OutputError>& failures);

/// The "# wrote      : DIR/results.json, perf.json, …" line of `run`, naming only the files
/// written and then, if any was not, "; not written: flows.csv, … (see stderr)". `trace` is the
/// run's trace (nullptr without one), `trace_cap` its --trace-events.
void print_wrote(std::ostream& out, const std::filesystem::path& dir, const RunReport& report,
                 const ChromeTrace* trace, int64_t trace_cap, const std::string& flows = "csv");

/// One line per failure on `err`: "fabricsim: cannot write PATH: REASON", and whether
/// results.json lists them (files_not_written).
void print_unwritten(std::ostream& err, const std::vector<OutputError>& failures);

/// `run`'s exit code: 130 interrupted (a signal; it wins, so a shell loop stops on it), else 74
/// when an output could not be written (`outputs_failed`), else 124 a limit, 3 a deadlock, 1 any
/// other incomplete run, 0.
int run_exit_code(const RunReport& report, bool outputs_failed);

/// `run` stopped by a signal before its simulation started. `prepared` is nullptr when the
/// signal came before the fabric was built; `how_far` says what was done ("the scenario was
/// loaded and checked"). With --out, writes the files of a run that simulated nothing:
/// results.json with no rows, zero counters, `run.complete` false and `run.stop_reason`
/// "interrupted before the simulation started (HOW_FAR)", the CSVs with their headers only, and
/// no trace.json. Says so on stderr; returns 130.
int stop_before_simulation(const RunOptions& opts, const Scenario& sc, const Prepared* prepared,
                           const std::string& how_far);

}  // namespace fabricsim
