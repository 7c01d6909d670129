// `fabricsim sweep ... --out DIR --report`: the fabric comparison (sim/report/compare.hpp)
// written beside the sweep's tables: DIR/report.md, DIR/report.html and the plots'
// DIR/report-*.{gp,dat,svg}. It reads the points' results.json, hands them to the comparison,
// runs gnuplot and writes the files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/report/output_file.hpp"
#include "sim/report/sweep_table.hpp"

namespace fabricsim {

/// One tabulated point of the sweep, as the report reads it.
struct SweepReportRow {
  int64_t point = 0;               ///< 1-based
  std::vector<std::string> cells;  ///< its sweep.csv cells, in the header's order
  std::string reason;              ///< why it did not complete ("" when it did)
  bool complete = false;           ///< status complete
  std::filesystem::path results;   ///< its results.json (absent when it wrote none)
};

/// Removes the files write_sweep_report writes from `dir` (an earlier sweep's report must not
/// sit beside this sweep's tables).
void remove_sweep_report(const std::filesystem::path& dir);

/// Writes the comparison of the sweep's points into `dir`: report-*.gp and .dat for each plot,
/// the SVGs when gnuplot is on PATH (else the report says they are missing, and why), then
/// report.md (the plots linked) and report.html (self-contained: the plots inline). `axes` and
/// `values` are the sweep's (values: every point's, also those not run), `header` and `rows`
/// its table (rows: the points tabulated, in point order); `training`: some point has a
/// training step. Files that could not be written are appended to `failures` (none is left
/// half-written). Returns the line for stdout: "# report     : DIR/report.md, report.html …".
std::string write_sweep_report(const std::filesystem::path& dir, const std::string& scenario,
                               const std::string& command, const std::vector<SweepAxis>& axes,
                               const std::vector<std::vector<std::string>>& values,
                               const std::vector<std::string>& header,
                               const std::vector<SweepReportRow>& rows, bool training,
                               std::vector<OutputError>& failures);

}  // namespace fabricsim
