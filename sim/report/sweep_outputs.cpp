#include "sim/report/sweep_outputs.hpp"

#include <algorithm>
#include <system_error>
#include <utility>

namespace fabricsim {

std::vector<OutputError> write_sweep_tables(const std::filesystem::path& dir,
                                            const std::string& csv, const std::string& md,
                                            const std::string& perf) {
  std::vector<OutputError> failures;
  for (const auto& [name, text] : {std::pair<const char*, const std::string&>{"sweep.csv", csv},
                                   {"sweep.md", md},
                                   {"sweep_perf.csv", perf}}) {
    try {
      write_output_file((dir / name).string(), text);
    } catch (const OutputError& e) {
      failures.push_back(e);
      remove_output_file((dir / name).string());  // an earlier version is not this sweep's
    }
  }
  return failures;
}

void print_sweep_wrote(std::ostream& out, const std::filesystem::path& dir, size_t point_dirs,
                       const std::string& first_point_dir,
                       const std::vector<OutputError>& table_failures, int64_t points_unwritten,
                       size_t plot_failures) {
  std::string tables;
  for (const char* name : {"sweep.csv", "sweep.md", "sweep_perf.csv"}) {
    const bool failed = std::any_of(
        table_failures.begin(), table_failures.end(),
        [&](const OutputError& e) { return std::filesystem::path(e.path()).filename() == name; });
    if (!failed) tables += tables.empty() ? (dir / name).string() : ", " + std::string(name);
  }
  out << "# wrote      : " << (tables.empty() ? "" : tables + " and ") << point_dirs
      << " point director" << (point_dirs == 1 ? "y" : "ies") << " (" << first_point_dir
      << " ...: results.json, perf.json, ports.csv, queues.csv, flows.csv)";
  if (!table_failures.empty() || points_unwritten > 0 || plot_failures > 0) {
    out << "; not written: ";
    for (const OutputError& e : table_failures)
      out << std::filesystem::path(e.path()).filename().string() << ", ";
    if (points_unwritten > 0) out << "files of " << points_unwritten << " points, ";
    if (plot_failures > 0) out << plot_failures << " plots, ";
    out << "see stderr";
  }
  out << "\n";
}

void remove_temporary_files(const std::filesystem::path& dir,
                            const std::vector<std::string>& names) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    for (const std::string& f : names) {
      if (name.rfind(f + ".tmp-", 0) == 0) remove_output_file(it->path().string());
    }
  }
}

}  // namespace fabricsim
