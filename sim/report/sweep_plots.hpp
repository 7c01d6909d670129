// The plots `fabricsim sweep --out DIR` writes beside sweep.csv: gnuplot scripts and their data
// (busbw.gp/.dat, slowdown.gp/.dat, vs-KEY.gp/.dat, step-vs-KEY.gp/.dat), drawn into SVGs when
// gnuplot is on PATH.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sim/report/output_file.hpp"
#include "sim/report/sweep_table.hpp"

namespace fabricsim {

/// Writes the plots of a sweep into `dir`, drawing the SVGs when gnuplot is on PATH: busbw.gp /
/// .dat (busbw against message size, one curve per completed point) and, per varied key whose
/// values all start with a number, vs-KEY.gp / .dat (busbw at the largest size against the key,
/// one curve per combination of the other keys; step-vs-KEY for the training step time when the
/// points have one), and with traffic flows slowdown.gp / .dat (the FCT slowdown's p50, p95
/// and p99 against flow size, one curve per completed point). `values`: every point's varied
/// values (point i at i - 1); `rows`: the
/// points tabulated, in point order. Returns the line for sweep.md and the line for stdout. A
/// plot whose script or data cannot be written is left out (neither file left behind), its
/// failure appended to `failures`; a gnuplot that fails is a note on stderr.
std::pair<std::string, std::string> write_sweep_plots(
    const std::filesystem::path& dir, const std::string& scenario,
    const std::vector<SweepAxis>& axes, const std::vector<std::vector<std::string>>& values,
    const std::vector<const PointResult*>& rows, std::vector<OutputError>& failures);

}  // namespace fabricsim
