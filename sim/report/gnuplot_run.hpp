// gnuplot, found on PATH and started on a script, waited for. Used by the sweep's plots and its
// report.
#pragma once

#include <filesystem>
#include <string>

namespace fabricsim {

/// The gnuplot executable on PATH, as a shell finds it; "" when there is none.
std::string find_gnuplot();

/// Runs `EXE SCRIPT` (gnuplot) in `dir`, stdin and stdout on /dev/null, and waits for it.
/// Returns "" when it exited 0, else how it ended and the first non-blank line it wrote to
/// stderr ("exit 1: line 3: undefined variable: x").
std::string run_gnuplot(const std::string& exe, const std::filesystem::path& dir,
                        const std::string& script);

}  // namespace fabricsim
