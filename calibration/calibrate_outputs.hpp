// The files `fabricsim calibrate --out FILE.yaml` writes: where they go, the check of --out
// before any work, and writing them whole or not at all (output_file.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/report/output_file.hpp"

namespace fabricsim {

/// One input's curves for gnuplot: measured and fitted (and simulated, when there is a
/// scenario) against the message size.
struct PlotSeries {
  std::string title, ylabel;
  std::vector<int64_t> bytes;
  std::vector<double> measured, fitted, simulated;  ///< simulated: NaN where not simulated
};

/// FILE.yaml and what goes beside it: FILE.report.json, FILE.plot.dat, FILE.plot.gp and
/// FILE-N.svg per input (drawn by gnuplot when it is on the PATH).
struct CalibrateFiles {
  std::filesystem::path yaml, report, plot_stem;
};

/// --out FILE.yaml, checked before any work: a path for a regular file (not a directory, nor a
/// device such as /dev/full or /dev/null, nor a pipe: the report and plots go beside it), in a
/// folder (created when missing) where FILE.yaml and FILE.report.json can be written. Throws
/// ConfigError naming --out (exit 2).
CalibrateFiles check_calibrate_out(const std::string& out);

/// What write_calibrate_outputs wrote and could not.
struct CalibrateWritten {
  std::string wrote;                  ///< for "# wrote      : …": the files written
  std::vector<OutputError> failures;  ///< the files not written (none left half-written)
};

/// Writes FILE.report.json, then FILE.yaml (`yaml`: its line "# report: FILE.report.json" then
/// says why the report is missing, if it is), then the plots of `plots`; each whole or not at
/// all, one failing not stopping the others. Never throws OutputError.
CalibrateWritten write_calibrate_outputs(const CalibrateFiles& files, std::string yaml,
                                         const std::string& report_json,
                                         const std::vector<PlotSeries>& plots);

}  // namespace fabricsim
