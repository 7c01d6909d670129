// What `sweep --out DIR` writes beside its point directories, whole or not at all
// (output_file.hpp), and how the files it could not write are told.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/output_file.hpp"

namespace fabricsim {

/// Writes sweep.csv, sweep.md and sweep_perf.csv (the texts given) into `dir`, each whole or
/// not at all: one that fails leaves nothing under its name (nor an earlier sweep's) and does
/// not stop the others. Returns the failures, empty when all three were written.
std::vector<OutputError> write_sweep_tables(const std::filesystem::path& dir,
                                            const std::string& csv, const std::string& md,
                                            const std::string& perf);

/// The sweep's "# wrote      : DIR/sweep.csv, sweep.md, sweep_perf.csv and N point directories
/// (FIRST ...: …)" line, naming only the tables written, then "; not written: …, see stderr"
/// for `table_failures`, the `points_unwritten` points with files not written and the
/// `plot_failures` plots.
void print_sweep_wrote(std::ostream& out, const std::filesystem::path& dir, size_t point_dirs,
                       const std::string& first_point_dir,
                       const std::vector<OutputError>& table_failures, int64_t points_unwritten,
                       size_t plot_failures);

/// Removes from `dir` the temporary files (NAME.tmp-PID) that a killed process left of the
/// files `names`.
void remove_temporary_files(const std::filesystem::path& dir,
                            const std::vector<std::string>& names);

}  // namespace fabricsim
