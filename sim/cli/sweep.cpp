#include "sim/cli/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "sim/pool/process_pool.hpp"
#include "sim/report/output_file.hpp"
#include "sim/report/sweep_outputs.hpp"
#include "sim/report/sweep_plots.hpp"
#include "sim/report/sweep_report.hpp"
#include "sim/report/sweep_table.hpp"
#include "sim/sweep/sweep_parallel.hpp"
#include "sim/sweep/sweep_plan.hpp"
#include "sim/sweep/sweep_point.hpp"
#include "sim/sweep/sweep_tabulate.hpp"

namespace fabricsim {

int cmd_sweep(const RunOptions& opts, const std::vector<std::string>& varies,
              const std::atomic<bool>* interrupt, int64_t jobs, bool report) {
  // --max-wall bounds the whole sweep, from here: no point starts after the deadline, and the
  // running ones stop at it.
  std::optional<WallLimit> wall;
  if (opts.max_wall_ps > 0) {
    wall = WallLimit{
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(opts.max_wall_ps / 1000),
        opts.max_wall_ps};
  }
  const auto past_deadline = [&] {
    return wall && std::chrono::steady_clock::now() >= wall->deadline;
  };
  SweepPlan plan;
  if (const std::optional<int> code = plan_sweep(opts, varies, interrupt, plan)) return *code;
  const std::vector<SweepAxis>& axes = plan.axes;
  const int64_t points = plan.points;
  const std::string& shape = plan.shape;
  const std::map<int64_t, std::string>& unbuildable = plan.unbuildable;
  std::vector<Scenario>& scenarios = plan.scenarios;
  const std::vector<std::vector<std::string>>& values = plan.values;
  const std::filesystem::path dir(opts.out_dir);
  clear_sweep_dir(opts, points);

  SweepColumns columns;
  SweepTable table = sweep_table_header(plan, columns);

  std::string command = "fabricsim sweep " + shell_word(opts.scenario_path);
  for (const std::string& v : varies) command += " --vary " + shell_word(v);
  for (const std::string& s : opts.sets) command += " --set " + shell_word(s);
  if (opts.seed) command += " --seed " + std::to_string(*opts.seed);
  const Scenario& first = scenarios.front();
  bool one_seed = true;
  for (const Scenario& sc : scenarios) one_seed = one_seed && sc.seed == first.seed;
  std::cout << "# fabricsim sweep " << first.name << ": " << points << " point"
            << (points == 1 ? "" : "s") << (axes.size() > 1 ? " (" + shape + ")" : "") << ", "
            << (one_seed ? "seed " + std::to_string(first.seed) : std::string("seeds varied"))
            << "\n";

  // Points run at most `jobs` at once; 1 = one after another in this process.
  if (jobs <= 0) jobs = usable_cpus();
  jobs = std::min(jobs, points);

  std::vector<std::optional<PointResult>> results(static_cast<size_t>(points));
  for (const auto& [i, why] : unbuildable) {
    results[static_cast<size_t>(i)] = unbuildable_point(i, values[static_cast<size_t>(i)], why);
  }
  std::string plots_line;  // under the table of sweep.md, once the plots are written
  // The tables' and plots' files not written at the end (a failure before it is tried again
  // after the next point; the tables' last writing is what stays).
  std::vector<OutputError> unwritten;
  bool tables_noted = false;  // a failure to write the tables during the sweep was said
  // The rows of the points finished so far, in point order.
  const auto finished_rows = [&] {
    std::vector<const PointResult*> rows;
    for (const auto& r : results) {
      if (r) rows.push_back(&*r);
    }
    return rows;
  };
  const auto tabulate = [&] { tabulate_points(table, finished_rows(), plan, columns); };
  const auto write_tables = [&] {
    tabulate();
    std::ostringstream csv, md, perf;
    write_csv(csv, table);
    md << "# fabricsim sweep: " << first.name << "\n\n`" << command << "`\n\n";
    write_markdown_table(md, table);
    if (!plots_line.empty()) md << "\n" << plots_line << "\n";
    perf << sweep_perf_csv(table);
    return write_sweep_tables(dir, csv.str(), md.str(), perf.str());
  };
  // After each point: a failure is said once, and tried again after the next point.
  const auto write_tables_during = [&] {
    const std::vector<OutputError> failures = write_tables();
    if (failures.empty() || tables_noted) return;
    tables_noted = true;
    std::cerr << "fabricsim sweep: note: " << failures.front().what()
              << "; trying again after each point\n";
  };

  const bool progress = opts.progress && isatty(STDERR_FILENO);
  int64_t started = 0;  // points 1..started have run or are running
  if (jobs == 1) {
    for (int64_t i = 0; i < points; ++i) {
      if ((interrupt != nullptr && interrupt->load()) || past_deadline()) break;
      started = i + 1;
      if (results[static_cast<size_t>(i)]) continue;  // unbuildable: tabulated, not run
      if (progress) {
        std::fprintf(stderr, "[sweep] point %lld/%lld: %s\n", static_cast<long long>(i + 1),
                     static_cast<long long>(points), describe_values(axes, values[i]).c_str());
      }
      const auto k = static_cast<size_t>(i);
      results[k] = run_point(scenarios[k], i, points, values[k], opts, interrupt, progress, wall);
      if (opts.out_given) write_tables_during();
      if (results[k]->outcome == Outcome::kInterrupted) break;
    }
  } else {
    started =
        run_parallel(scenarios, axes, values, opts, interrupt, wall, jobs, progress, results, [&] {
          if (opts.out_given) write_tables_during();
        });
  }
  // Points left unstarted: by an interrupt, or by the --max-wall deadline.
  bool interrupted = started < points && interrupt != nullptr && interrupt->load();
  bool limited = started < points && !interrupted;
  for (const PointResult* p : finished_rows()) {
    interrupted = interrupted || p->outcome == Outcome::kInterrupted;
    limited = limited || p->outcome == Outcome::kLimited;
  }

  std::string plots_out;
  std::vector<OutputError> table_failures;
  if (opts.out_given) {
    std::tie(plots_line, plots_out) =
        write_sweep_plots(dir, first.name, axes, values, finished_rows(), unwritten);
    table_failures = write_tables();
  } else {
    tabulate();
  }
  std::string report_out;  // --report: the fabric comparison beside the tables
  std::vector<OutputError> report_failures;
  if (opts.out_given && report) {
    std::vector<SweepReportRow> rows;
    for (const PointResult& p : table.rows) {
      rows.push_back({p.point, p.cells, p.reason, p.outcome == Outcome::kComplete,
                      dir / point_dir_name(p.point, points) / "results.json"});
    }
    report_out = write_sweep_report(dir, first.name, command, axes, values, table.header, rows,
                                    columns.training, report_failures);
  }

  std::cout << "#\n";
  write_markdown_table(std::cout, table);
  // Point files not written, by point (each point's results.json lists its own).
  int64_t points_unwritten = 0;
  for (const PointResult& p : table.rows) points_unwritten += p.unwritten.empty() ? 0 : 1;
  if (opts.out_given) {
    print_sweep_wrote(std::cout, dir, table.rows.size(), point_dir_name(1, points), table_failures,
                      points_unwritten, unwritten.size());
    std::cout << plots_out << "\n";
    if (!report_out.empty()) std::cout << report_out << "\n";
  }
  std::cout.flush();
  unwritten.insert(unwritten.end(), table_failures.begin(), table_failures.end());
  unwritten.insert(unwritten.end(), report_failures.begin(), report_failures.end());
  for (const PointResult& p : table.rows) {
    for (const std::string& u : p.unwritten) {
      std::cerr << "fabricsim sweep: point " << p.point << "/" << points << " ("
                << describe_values(axes, values[static_cast<size_t>(p.point - 1)]) << "): " << u
                << "\n";
    }
  }
  for (const OutputError& e : unwritten) std::cerr << "fabricsim sweep: " << e.what() << "\n";
  const bool outputs_failed = points_unwritten > 0 || !unwritten.empty();
  if (outputs_failed) {
    std::cerr << "fabricsim sweep: no file was left half-written"
              << (points_unwritten > 0 ? "; a point's results.json lists its files not written "
                                         "(files_not_written)"
                                       : "")
              << "\n";
  }

  bool failed = false, deadlocked = false, transport = false;
  for (const PointResult& p : table.rows) {
    if (p.outcome == Outcome::kComplete || p.outcome == Outcome::kInterrupted ||
        p.outcome == Outcome::kLimited) {
      continue;
    }
    failed = failed || p.outcome == Outcome::kFailed;
    deadlocked = deadlocked || p.outcome == Outcome::kDeadlock;
    transport = transport || p.outcome == Outcome::kTransportFailed;
    std::cerr << "fabricsim sweep: point " << p.point << "/" << points << " ("
              << describe_values(axes, values[static_cast<size_t>(p.point - 1)])
              << "): " << p.reason << "\n";
  }
  if (interrupted) {
    std::cerr << "fabricsim sweep: interrupted; " << table.rows.size() << " of " << points
              << " points tabulated\n";
    return kExitInterrupted;
  }
  if (limited) {  // said even when a failure or a deadlock decides the exit code
    int64_t stopped = 0;
    for (const PointResult& p : table.rows) stopped += p.outcome == Outcome::kLimited ? 1 : 0;
    std::cerr << "fabricsim sweep: stopped at ";
    if (opts.max_wall_ps > 0) std::cerr << "--max-wall " << format_time(opts.max_wall_ps);
    if (opts.max_wall_ps > 0 && opts.max_events > 0) std::cerr << " / ";
    if (opts.max_events > 0) std::cerr << "--max-events " << opts.max_events << " per point";
    std::cerr << "; " << table.rows.size() << " of " << points << " points tabulated, " << stopped
              << " of them stopped before the end (status limited)\n";
  }
  // A failure (1) or a deadlock (3) is a finding; a limit (124) only cut the sweep short. Files
  // not written (74) come first, as for `run`: what a script would read is missing.
  if (outputs_failed) return kExitOutput;
  return failed       ? kExitInternal
         : deadlocked ? kExitDeadlock
         : transport  ? kExitTransport
         : limited    ? kExitLimit
                      : kExitOk;
}

}  // namespace fabricsim
