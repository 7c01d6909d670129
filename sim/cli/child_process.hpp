// Helper processes of the CLI: gnuplot, started on a script and waited for, and how a child
// process ended, in words. Used by `sweep` (its plots and point processes) and its report.
#pragma once

#include <filesystem>
#include <string>

namespace fabricsim {

/// Why process `who` ended without a result, from its waitpid() status: "WHO was killed by
/// signal 9 (Killed)", "WHO exited with code 3 without a result".
std::string describe_wait_status(const std::string& who, int status);

/// The gnuplot executable on PATH, as a shell finds it; "" when there is none.
std::string find_gnuplot();

/// Runs `EXE SCRIPT` (gnuplot) in `dir`, stdin and stdout on /dev/null, and waits for it.
/// Returns "" when it exited 0, else how it ended and the first non-blank line it wrote to
/// stderr ("exit 1: line 3: undefined variable: x").
std::string run_gnuplot(const std::string& exe, const std::filesystem::path& dir,
                        const std::string& script);

}  // namespace fabricsim
