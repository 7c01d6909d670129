// The output-writer table: the files a run writes into its --out folder after results.json, each
// declared once (file name, the condition under which it is written, the function that writes
// it from the finished run's report, and what the `# wrote` line adds after its name).
// write_run_outputs() and print_wrote() (run_outputs.hpp) walk it, in its order.
//
// Two files are not in it, as they are not written from the finished report: results.json,
// written first and amended when a later file fails (`files_not_written`), and trace.json,
// streamed while the run goes (ChromeTrace).
//
// A new output is one writer and one register_output_writer() call: in the built-in table
// (output_writers.cpp) or from outside the library, before the run writes its files.
#pragma once

#include <deque>
#include <functional>
#include <string>

#include "sim/report/report.hpp"

namespace fabricsim {

/// The run's choices that decide which files it writes (from RunOptions).
struct OutputSettings {
  std::string flows = "csv";  ///< RunOptions::flows: "csv", "gz" or "none"
};

/// One file a run writes after results.json.
struct OutputWriter {
  /// Its name in the --out folder ("ports.csv"): unique in the table.
  std::string file;
  /// Whether this run writes it (null: always). When not, an earlier run's file of this name is
  /// removed, so the folder holds this run's files only.
  std::function<bool(const OutputSettings& settings, const RunReport& report)> enabled;
  /// Writes it to `path` whole or not at all (sim/report/output_file.hpp); throws OutputError
  /// (the path and the system's reason) when it cannot. Never throws anything else for a
  /// finished report.
  std::function<void(const std::string& path, const RunReport& report)> write;
  /// Text the `# wrote` line adds after the file's name, with its leading space ("" or null:
  /// nothing): flows.csv says when it holds only the first messages.
  std::function<std::string(const RunReport& report)> wrote_note;
};

/// The writers, built-in first (perf.json, ports.csv, queues.csv, flows.csv, flows.csv.gz,
/// slowdown.csv, perftest.txt),
/// then the registered ones in the order they were registered. A deque: a reference into it
/// stays valid when a writer registers later.
const std::deque<OutputWriter>& output_writers();

/// Adds `writer` after those in the table and returns its index. Throws std::invalid_argument
/// for an empty file name, a missing write function, results.json, trace.json or a name
/// already in the table. Not thread-safe: register before any run writes its files.
size_t register_output_writer(OutputWriter writer);

/// Whether `w` is written for `settings` and `report`.
inline bool output_enabled(const OutputWriter& w, const OutputSettings& settings,
                           const RunReport& report) {
  return !w.enabled || w.enabled(settings, report);
}

}  // namespace fabricsim
