#include "sim/cli/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "collectives/nccl_tests.hpp"
#include "sim/config/loader.hpp"
#include "sim/report/report.hpp"

namespace fabricsim {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

/// How a point ended, for the status column and the exit code.
enum class Outcome { kComplete, kDeadlock, kFailed, kInterrupted };

/// One row of the sweep table: cells in the table's column order.
struct PointResult {
  Outcome outcome = Outcome::kComplete;
  std::vector<std::string> cells;
  std::string reason;  ///< why it did not complete (stderr), "" when it did
  double wall_s = 0;
  int64_t events = 0;
};

/// The sweep table: the same columns in sweep.csv, sweep.md and on stdout.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  ///< numbers are right-aligned in the Markdown table
  std::vector<PointResult> rows;
};

/// The fixed columns after `point` and the varied keys (DESIGN.md §4 counter names).
const std::vector<std::string> kMetricColumns = {"status",
                                                 "avg_busbw_GBps",
                                                 "busbw_at_max_size_GBps",
                                                 "max_queue_bytes",
                                                 "worst_port_p99_queue_bytes",
                                                 "pfc_pause_tx",
                                                 "ecn_marked",
                                                 "cnp_tx",
                                                 "drops",
                                                 "fct_p50_us",
                                                 "fct_p99_us",
                                                 "simulated_us"};

std::string fixed3(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

/// The cells of one point after `point` and the varied values (kMetricColumns order). `rep` is
/// null when the simulation threw (`error` says what); cells that do not apply are empty.
std::vector<std::string> metric_cells(const Scenario& sc, const RunReport* rep, Outcome outcome,
                                      const std::string& error) {
  std::vector<std::string> c;
  switch (outcome) {
    case Outcome::kComplete:
      c.push_back("complete");
      break;
    case Outcome::kDeadlock:
      c.push_back("deadlock");
      break;
    case Outcome::kInterrupted:
      c.push_back("interrupted");
      break;
    case Outcome::kFailed:
      c.push_back("incomplete: " + (rep ? rep->stop_reason : "internal error: " + error));
      break;
  }
  if (rep == nullptr) {
    c.resize(kMetricColumns.size());
    return c;
  }
  // busbw only when every size of the workload finished: a partial sweep's mean is not
  // comparable with a full one's (nccl-tests' "Avg bus bandwidth" is over all sizes).
  bool all_sizes = false;
  if (sc.has_workload && !rep->rows.empty()) {
    const auto sizes = sweep_sizes(sc.workload.minbytes, sc.workload.maxbytes,
                                   sc.workload.stepfactor, datatype_bytes(sc.workload.datatype));
    all_sizes = rep->rows.size() == sizes.size();
  }
  if (all_sizes) {
    double avg = 0;
    const CollectiveRow* largest = &rep->rows.front();
    for (const auto& row : rep->rows) {
      avg += row.busbw_GBps;
      if (row.size_bytes > largest->size_bytes) largest = &row;
    }
    c.push_back(fixed3(avg / static_cast<double>(rep->rows.size())));
    c.push_back(fixed3(largest->busbw_GBps));
  } else {
    c.insert(c.end(), {"", ""});
  }
  const Counters& k = rep->counters;
  c.push_back(std::to_string(k.max_queue_bytes));
  if (rep->ports.empty()) {
    c.push_back("");
  } else {
    int64_t worst = 0;
    for (const auto& p : rep->ports) worst = std::max(worst, p.p99_queue_bytes);
    c.push_back(std::to_string(worst));
  }
  for (int64_t v : {k.pfc_pause_tx, k.ecn_marked, k.cnp_tx, k.drops}) {
    c.push_back(std::to_string(v));
  }
  // FCT of the traffic flows when the scenario has them, else of every message.
  const bool traffic =
      std::any_of(rep->flows.begin(), rep->flows.end(), [](const FlowRow& f) { return f.traffic; });
  const FctSummary fct = fct_summary(rep->flows, traffic);
  c.push_back(fct.completed > 0 ? format_ps_as_us(fct.p50_ps) : "");
  c.push_back(fct.completed > 0 ? format_ps_as_us(fct.p99_ps) : "");
  c.push_back(format_ps_as_us(rep->simulated_ps));
  return c;
}

/// A Markdown table cell: '|' escaped, line breaks as blanks.
std::string md_cell(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

/// Width in terminal columns of UTF-8 text (code points; the values are ASCII in practice).
size_t text_width(const std::string& s) {
  size_t n = 0;
  for (const char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

void write_csv(std::ostream& out, const Table& t) {
  for (size_t i = 0; i < t.header.size(); ++i) out << (i ? "," : "") << csv_field(t.header[i]);
  out << "\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.cells.size(); ++i) out << (i ? "," : "") << csv_field(row.cells[i]);
    out << "\n";
  }
}

/// A Markdown (GFM) table, cells padded so that it reads as a table in a terminal too.
void write_markdown_table(std::ostream& out, const Table& t) {
  std::vector<std::vector<std::string>> cells;
  cells.reserve(t.rows.size() + 1);
  std::vector<std::string> head;
  for (const auto& h : t.header) head.push_back(md_cell(h));
  cells.push_back(head);
  for (const auto& row : t.rows) {
    std::vector<std::string> r;
    for (const auto& c : row.cells) r.push_back(md_cell(c));
    cells.push_back(r);
  }
  std::vector<size_t> width(t.header.size(), 3);
  for (const auto& r : cells) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], text_width(r[i]));
  }
  const auto line = [&](const std::vector<std::string>& r) {
    out << "|";
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - text_width(r[i]), ' ');
      out << " " << (t.right_aligned[i] ? pad + r[i] : r[i] + pad) << " |";
    }
    out << "\n";
  };
  line(cells[0]);
  out << "|";
  for (size_t i = 0; i < width.size(); ++i) {
    out << " "
        << (t.right_aligned[i] ? std::string(width[i] - 1, '-') + ":" : std::string(width[i], '-'))
        << " |";
  }
  out << "\n";
  for (size_t r = 1; r < cells.size(); ++r) line(cells[r]);
}

/// Writes `text` to `path` through a temporary file and a rename, so that a reader (or a sweep
/// killed mid-write) never sees half a table. Throws std::runtime_error when it cannot.
void write_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out || !(out << text) || !out.flush()) {
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot write " + path.string() + ": " + ec.message());
}

/// A shell word for the command line quoted in sweep.md.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789._/=:,+-@%") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (const char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

/// "point-007": the point number zero-padded to the digits of the point count, at least 3.
std::string point_dir_name(int64_t point, int64_t points) {
  const std::string digits = std::to_string(point);
  const size_t width = std::max<size_t>(3, std::to_string(points).size());
  return "point-" + std::string(width - std::min(width, digits.size()), '0') + digits;
}

/// The values of point `index` (0-based): the first axis outermost, the last fastest.
std::vector<std::string> point_values(const std::vector<SweepAxis>& axes, int64_t index) {
  std::vector<std::string> v(axes.size());
  for (size_t a = axes.size(); a-- > 0;) {
    const auto n = static_cast<int64_t>(axes[a].values.size());
    v[a] = axes[a].values[static_cast<size_t>(index % n)];
    index /= n;
  }
  return v;
}

/// "k1=v1 k2=v2", for progress and messages.
std::string describe(const std::vector<SweepAxis>& axes, const std::vector<std::string>& values) {
  std::string s;
  for (size_t a = 0; a < axes.size(); ++a) s += (a ? " " : "") + axes[a].key + "=" + values[a];
  return s;
}

}  // namespace

std::vector<std::string> split_vary_values(const std::string& list, const std::string& where) {
  std::vector<std::string> values;
  std::vector<char> open;  // brackets not yet closed, innermost last
  char quote = 0;
  std::string current;
  const auto take = [&] {
    const std::string v = trim(current);
    if (v.empty()) {
      throw ConfigError(where, 0, 0, "",
                        "empty value in the list (value " + std::to_string(values.size() + 1) +
                            "); expected KEY=V1,V2,..., e.g. ecn.kmin=10KB,50KB");
    }
    values.push_back(v);
    current.clear();
  };
  for (const char ch : list) {
    if (quote != 0) {
      if (ch == quote) quote = 0;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == '[' || ch == '{') {
      open.push_back(ch == '[' ? ']' : '}');
    } else if (ch == ']' || ch == '}') {
      if (open.empty() || open.back() != ch) {
        throw ConfigError(where, 0, 0, "",
                          std::string("unbalanced '") + ch + "' in the list of values");
      }
      open.pop_back();
    } else if (ch == ',' && open.empty()) {
      take();
      continue;
    }
    current += ch;
  }
  if (quote != 0) {
    throw ConfigError(where, 0, 0, "", std::string("unterminated ") + quote + " in the values");
  }
  if (!open.empty()) {
    throw ConfigError(
        where, 0, 0, "",
        std::string("unclosed '") + (open.back() == ']' ? '[' : '{') + "' in the list of values");
  }
  take();
  return values;
}

std::vector<SweepAxis> parse_vary(const std::vector<std::string>& varies) {
  std::vector<SweepAxis> axes;
  for (const std::string& text : varies) {
    const std::string where = "--vary " + text;
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
      throw ConfigError(where, 0, 0, "", "expected KEY=V1,V2,..., e.g. ecn.kmin=10KB,50KB");
    }
    SweepAxis axis;
    axis.key = trim(text.substr(0, eq));
    if (axis.key.empty()) {
      throw ConfigError(where, 0, 0, "",
                        "expected a key before '=', e.g. ecn.kmin=10KB,50KB (the paths --set "
                        "takes)");
    }
    for (const SweepAxis& earlier : axes) {
      if (earlier.key == axis.key) {
        throw ConfigError(
            where, 0, 0, axis.key,
            "varied twice; give all its values in one --vary " + axis.key + "=V1,V2,...");
      }
    }
    axis.values = split_vary_values(text.substr(eq + 1), where);
    axes.push_back(std::move(axis));
  }
  return axes;
}

int cmd_sweep(const RunOptions& opts, const std::vector<std::string>& varies,
              const std::atomic<bool>* interrupt) {
  if (varies.empty()) {
    throw ConfigError("fabricsim sweep", 0, 0, "",
                      "expected at least one --vary KEY=V1,V2,..., e.g. --vary ecn.kmin=10KB,50KB");
  }
  const std::vector<SweepAxis> axes = parse_vary(varies);
  int64_t points = 1;
  std::string shape;
  for (const SweepAxis& a : axes) {
    // Multiplied with a cap, so a product beyond int64 cannot wrap under it.
    points = std::min(points * static_cast<int64_t>(a.values.size()), kMaxSweepPoints + 1);
    shape += (shape.empty() ? "" : " x ") + std::to_string(a.values.size());
  }
  if (points > kMaxSweepPoints) {
    long double exact = 1;
    for (const SweepAxis& a : axes) exact *= static_cast<long double>(a.values.size());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0Lf", exact);
    const std::string count = buf;
    throw ConfigError("fabricsim sweep", 0, 0, "",
                      "--vary lists make " + count + " points (" + shape + "), more than the " +
                          std::to_string(kMaxSweepPoints) +
                          " a sweep may have; split it into several sweeps");
  }
  if (opts.seed) {
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].key == "seed") {
        throw ConfigError("--vary " + varies[a], 0, 0, "seed",
                          "--seed " + std::to_string(*opts.seed) +
                              " fixes the seed of every point; drop --seed to vary it");
      }
    }
  }

  // Every point is loaded and prepared before any runs: bad input anywhere is exit 2 with
  // nothing run or written. Fabrics are not kept (a large one takes gigabytes): each is
  // prepared again, identically, just before its point runs.
  std::vector<Scenario> scenarios;
  std::vector<std::vector<std::string>> values;
  scenarios.reserve(static_cast<size_t>(points));
  for (int64_t i = 0; i < points; ++i) {
    values.push_back(point_values(axes, i));
    RunOptions o = opts;
    for (size_t a = 0; a < axes.size(); ++a) o.sets.push_back(axes[a].key + "=" + values[i][a]);
    try {
      Scenario sc = load(o);
      prepare(sc);
      scenarios.push_back(std::move(sc));
    } catch (const ConfigError& e) {
      std::cerr << e.what() << "\n"
                << "fabricsim sweep: in point " << i + 1 << "/" << points << " ("
                << describe(axes, values[i]) << "); nothing was run\n";
      return kExitBadInput;
    }
    if (interrupt != nullptr && interrupt->load()) {
      std::cerr << "fabricsim sweep: interrupted while checking the points; nothing was run\n";
      return kExitInterrupted;
    }
  }
  const std::filesystem::path dir(opts.out_dir);
  if (opts.out_given) {
    check_out_dir(opts.out_dir);
    // Point directories of an earlier, larger sweep are left alone, but said.
    std::set<std::string> ours;
    for (int64_t i = 1; i <= points; ++i) ours.insert(point_dir_name(i, points));
    int64_t stale = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_directory() && name.rfind("point-", 0) == 0 && !ours.count(name)) ++stale;
    }
    if (stale > 0) {
      std::cerr << "fabricsim sweep: note: " << dir.string() << " holds " << stale
                << " point director" << (stale == 1 ? "y" : "ies")
                << " from an earlier sweep that this one does not write; sweep.csv lists "
                   "this sweep's\n";
    }
  }

  Table table;
  table.header.push_back("point");
  table.right_aligned.push_back(true);
  for (const SweepAxis& a : axes) {
    table.header.push_back(a.key);
    table.right_aligned.push_back(false);
  }
  for (const std::string& c : kMetricColumns) {
    table.header.push_back(c);
    table.right_aligned.push_back(c != "status");
  }

  std::string command = "fabricsim sweep " + shell_word(opts.scenario_path);
  for (const std::string& v : varies) command += " --vary " + shell_word(v);
  for (const std::string& s : opts.sets) command += " --set " + shell_word(s);
  if (opts.seed) command += " --seed " + std::to_string(*opts.seed);
  const Scenario& first = scenarios.front();
  bool one_seed = true;
  for (const Scenario& sc : scenarios) one_seed = one_seed && sc.seed == first.seed;
  std::cout << "# fabricsim sweep " << first.name << ": " << points << " point"
            << (points == 1 ? "" : "s") << " (" << shape << "), "
            << (one_seed ? "seed " + std::to_string(first.seed) : std::string("seeds varied"))
            << "\n";

  const auto write_tables = [&] {
    std::ostringstream csv, md, perf;
    write_csv(csv, table);
    md << "# fabricsim sweep: " << first.name << "\n\n`" << command << "`\n\n";
    write_markdown_table(md, table);
    perf << "point,wall_s,events,events_per_s\n";
    for (size_t r = 0; r < table.rows.size(); ++r) {
      const PointResult& p = table.rows[r];
      char buf[128];
      std::snprintf(buf, sizeof buf, "%zu,%.3f,%lld,%.0f\n", r + 1, p.wall_s,
                    static_cast<long long>(p.events),
                    p.wall_s > 0 ? static_cast<double>(p.events) / p.wall_s : 0.0);
      perf << buf;
    }
    write_file(dir / "sweep.csv", csv.str());
    write_file(dir / "sweep.md", md.str());
    write_file(dir / "sweep_perf.csv", perf.str());
  };

  const bool progress = opts.progress && isatty(STDERR_FILENO);
  bool interrupted = false;
  for (int64_t i = 0; i < points; ++i) {
    if (interrupt != nullptr && interrupt->load()) {
      interrupted = true;
      break;
    }
    if (progress) {
      std::fprintf(stderr, "[sweep] point %lld/%lld: %s\n", static_cast<long long>(i + 1),
                   static_cast<long long>(points), describe(axes, values[i]).c_str());
    }
    const auto wall_start = std::chrono::steady_clock::now();
    Scenario& sc = scenarios[static_cast<size_t>(i)];
    PointResult result;
    std::optional<RunReport> rep;
    std::string error;
    try {
      const Prepared prepared = prepare(sc);
      rep = simulate(sc, prepared, interrupt, progress);
    } catch (const std::exception& e) {  // the point fails; the sweep goes on
      error = e.what();
    }
    result.outcome = !rep               ? Outcome::kFailed
                     : rep->complete    ? Outcome::kComplete
                     : rep->interrupted ? Outcome::kInterrupted
                     : rep->deadlocked  ? Outcome::kDeadlock
                                        : Outcome::kFailed;
    if (rep && opts.out_given) {
      const std::filesystem::path point_dir = dir / point_dir_name(i + 1, points);
      std::filesystem::create_directories(point_dir);
      write_run_outputs(point_dir.string(), *rep);
      std::error_code ec;  // as `run --trace-events 0`: no trace.json of an earlier run
      std::filesystem::remove(point_dir / "trace.json", ec);
    }
    result.cells.push_back(std::to_string(i + 1));
    for (const std::string& v : values[static_cast<size_t>(i)]) result.cells.push_back(v);
    const std::vector<std::string> metrics =
        metric_cells(sc, rep ? &*rep : nullptr, result.outcome, error);
    result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
    result.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    result.events = rep ? rep->events : 0;
    if (result.outcome != Outcome::kComplete) {
      result.reason = rep ? rep->stop_reason : "internal error: " + error;
    }
    table.rows.push_back(std::move(result));
    if (opts.out_given) write_tables();
    if (table.rows.back().outcome == Outcome::kInterrupted) {
      interrupted = true;
      break;
    }
  }

  std::cout << "#\n";
  write_markdown_table(std::cout, table);
  if (opts.out_given) {
    std::cout << "# wrote      : " << (dir / "sweep.csv").string()
              << ", sweep.md, sweep_perf.csv and " << table.rows.size() << " point director"
              << (table.rows.size() == 1 ? "y" : "ies") << " (" << point_dir_name(1, points)
              << " ...: results.json, perf.json, ports.csv, "
              << "queues.csv, flows.csv)\n";
  }
  std::cout.flush();

  bool failed = false, deadlocked = false;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const PointResult& p = table.rows[r];
    if (p.outcome == Outcome::kComplete || p.outcome == Outcome::kInterrupted) continue;
    failed = failed || p.outcome == Outcome::kFailed;
    deadlocked = deadlocked || p.outcome == Outcome::kDeadlock;
    std::cerr << "fabricsim sweep: point " << r + 1 << "/" << points << " ("
              << describe(axes, values[r]) << "): " << p.reason << "\n";
  }
  if (interrupted) {
    std::cerr << "fabricsim sweep: interrupted; " << table.rows.size() << " of " << points
              << " points tabulated\n";
    return kExitInterrupted;
  }
  return failed ? kExitInternal : deadlocked ? kExitDeadlock : kExitOk;
}

}  // namespace fabricsim
