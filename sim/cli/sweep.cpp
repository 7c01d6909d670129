#include "sim/cli/sweep.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "collectives/nccl_tests.hpp"
#include "sim/cli/child_process.hpp"
#include "sim/cli/run_outputs.hpp"
#include "sim/cli/sweep_outputs.hpp"
#include "sim/cli/sweep_report.hpp"
#include "sim/config/cost_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "sim/report/gnuplot_text.hpp"
#include "sim/report/markdown_table.hpp"
#include "sim/report/output_file.hpp"
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
/// kUnbuildable: the point's fabric cannot be built (a ratio a family's switches cannot make,
/// in a sweep over topology keys); it is tabulated with the reason and not run.
/// kLimited: stopped by --max-events (per point) or --max-wall (the whole sweep's).
enum class Outcome {
  kComplete,
  kDeadlock,
  kTransportFailed,  ///< a queue pair gave up (`run` exit 4)
  kFailed,
  kInterrupted,
  kUnbuildable,
  kLimited
};

/// One finished size of a point, for the plots: results.json `collectives[].size_bytes` and
/// `busbw_GBps`.
struct SizeBusbw {
  int64_t size_bytes = 0;
  double busbw_GBps = 0;
};

/// One row of the sweep table: cells in the table's column order.
struct PointResult {
  int64_t point = 0;  ///< 1-based, as in the `point` column
  Outcome outcome = Outcome::kComplete;
  std::vector<std::string> cells;
  std::string reason;  ///< why it did not complete (stderr), "" when it did
  double wall_s = 0;
  int64_t events = 0;
  std::vector<SizeBusbw> busbw;  ///< the sizes that finished, in the run's order
  /// results.json `fabric.cost_usd`: the cost proxy; nullopt without a cost_model or a report.
  std::optional<double> cost_usd;
  /// results.json `training.step_ps` and `exposed_comm_ps`; nullopt without a training step.
  std::optional<int64_t> step_ps, exposed_comm_ps;
  /// Its files in DIR/point-NNN/ that could not be written: "cannot write PATH: REASON".
  std::vector<std::string> unwritten;
};
/// The sweep table: the same columns in sweep.csv, sweep.md and on stdout.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  ///< numbers are right-aligned in the Markdown table
  std::vector<PointResult> rows;
};

/// The fixed columns after `point` and the varied keys (DESIGN.md §4 counter names). A sweep
/// in which some point's scenario has a `cost_model:` has one more, last: kCostColumn.
const std::vector<std::string> kMetricColumns = {"status",
                                                 "avg_busbw_GBps",
                                                 "busbw_at_max_size_GBps",
                                                 "max_queue_bytes",
                                                 "worst_port_p99_queue_bytes",
                                                 "pfc_pause_tx",
                                                 "ecn_marked",
                                                 "cnp_tx",
                                                 "drops",
                                                 "traffic_fct_p50_us",
                                                 "traffic_fct_p99_us",
                                                 "message_fct_p50_us",
                                                 "message_fct_p99_us",
                                                 "simulated_us"};
/// The cost proxy, results.json `fabric.cost_usd` exactly (shortest round-trip text); empty for
/// a point without a cost_model or without a report.
const std::string kCostColumn = "cost_usd";
/// A sweep whose scenarios have a `training:` step has these two after it: results.json
/// `training.step_ps` and `training.exposed_comm_ps` in milliseconds (empty where the step did
/// not finish).
const std::vector<std::string> kTrainingColumns = {"step_ms", "exposed_comm_ms"};
/// A sweep with a topology axis has this last: the GPUs (hosts) of each point's fabric.
const std::string kGpusColumn = "gpus";

/// The shortest text that reads back as the same double (results.json writes doubles so too).
std::string number_text(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

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
    case Outcome::kTransportFailed:
      c.push_back("transport gave up");  // which queue pair and why: stderr, results.json
      break;
    case Outcome::kInterrupted:
      c.push_back("interrupted");
      break;
    case Outcome::kLimited:
      c.push_back("limited");
      break;
    case Outcome::kFailed:
      c.push_back("incomplete: " + (rep ? rep->stop_reason : "internal error: " + error));
      break;
    case Outcome::kUnbuildable:
      c.push_back("unbuildable");
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
  // FCT of the traffic flows and of the collectives' messages, apart (empty where none).
  for (const FctSummary* fct : {&rep->fct_traffic, &rep->fct_messages}) {
    c.push_back(fct->completed > 0 ? format_ps_as_us(fct->p50_ps) : "");
    c.push_back(fct->completed > 0 ? format_ps_as_us(fct->p99_ps) : "");
  }
  c.push_back(format_ps_as_us(rep->simulated_ps));
  return c;
}

void write_csv(std::ostream& out, const Table& t) {
  for (size_t i = 0; i < t.header.size(); ++i) out << (i ? "," : "") << csv_field(t.header[i]);
  out << "\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.cells.size(); ++i) out << (i ? "," : "") << csv_field(row.cells[i]);
    out << "\n";
  }
}

/// sweep.md's table (and stdout's): the header, then one row a point.
void write_markdown_table(std::ostream& out, const Table& t) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(t.rows.size());
  for (const auto& row : t.rows) rows.push_back(row.cells);
  fabricsim::write_markdown_table(out, t.header, rows, t.right_aligned);
}

/// Writes `text` to `path` whole or not at all (output_file.hpp), so that a reader (or a sweep
/// killed mid-write) never sees half a table. Throws OutputError.
void write_file(const std::filesystem::path& path, const std::string& text) {
  write_output_file(path.string(), text);
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

/// Removes the files a point writes from its directory (an earlier sweep's, or what a killed
/// point process left half-written), so the directory never holds results its row does not.
void remove_point_outputs(const RunOptions& opts, int64_t index, int64_t points) {
  if (!opts.out_given) return;
  const std::filesystem::path point_dir =
      std::filesystem::path(opts.out_dir) / point_dir_name(index + 1, points);
  const std::vector<std::string> names = {"results.json", "perf.json", "ports.csv",
                                          "queues.csv",   "flows.csv", "trace.json"};
  for (const std::string& f : names) {
    std::error_code ec;
    std::filesystem::remove(point_dir / f, ec);
  }
  remove_temporary_files(point_dir, names);  // a killed point process's
}

/// Runs point `index` (0-based) of `points` exactly as `fabricsim run` would and, with --out,
/// writes its DIR/point-NNN/ (without trace.json; the sweep removed an earlier sweep's files
/// before any point ran); the files that could not be written are in `unwritten`. A point that
/// throws is tabulated as failed.
PointResult run_point(Scenario& sc, int64_t index, int64_t points,
                      const std::vector<std::string>& values, const RunOptions& opts,
                      const std::atomic<bool>* interrupt, bool progress,
                      const std::optional<WallLimit>& wall) {
  const auto wall_start = std::chrono::steady_clock::now();
  PointResult result;
  result.point = index + 1;
  std::optional<RunReport> rep;
  std::string error;
  try {
    const Prepared prepared = prepare(sc);
    rep = simulate_limited(sc, prepared, interrupt, progress, nullptr,
                           opts.max_events > 0 ? opts.max_events : UINT64_MAX, wall);
  } catch (const std::exception& e) {  // the point fails; the sweep goes on
    error = e.what();
  }
  result.outcome = !rep                    ? Outcome::kFailed
                   : rep->complete         ? Outcome::kComplete
                   : rep->interrupted      ? Outcome::kInterrupted
                   : rep->limited          ? Outcome::kLimited
                   : rep->deadlocked       ? Outcome::kDeadlock
                   : rep->transport_failed ? Outcome::kTransportFailed
                                           : Outcome::kFailed;
  if (rep && opts.out_given) {
    const std::filesystem::path point_dir =
        std::filesystem::path(opts.out_dir) / point_dir_name(index + 1, points);
    std::error_code ec;
    std::filesystem::create_directories(point_dir, ec);
    if (ec) {
      result.unwritten.push_back(OutputError(point_dir.string(), ec.value()).what());
    } else {  // no trace.json: `run --trace-events 0`
      for (const OutputError& e : write_run_outputs(point_dir.string(), *rep, opts.flows))
        result.unwritten.push_back(e.what());
    }
  }
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics =
      metric_cells(sc, rep ? &*rep : nullptr, result.outcome, error);
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.events = rep ? rep->events : 0;
  if (result.outcome != Outcome::kComplete) {
    result.reason = rep ? rep->stop_reason : "internal error: " + error;
  }
  if (rep) {
    for (const CollectiveRow& row : rep->rows)
      result.busbw.push_back({row.size_bytes, row.busbw_GBps});
    if (rep->fabric.cost) result.cost_usd = rep->fabric.cost->total_usd;
    if (rep->training) {
      result.step_ps = rep->training->step_ps;
      result.exposed_comm_ps = rep->training->exposed_comm_ps;
    }
  }
  return result;
}

/// The row of a point whose simulation did not produce a report (`error` says why).
PointResult failed_point(const Scenario& sc, int64_t index, const std::vector<std::string>& values,
                         const std::string& error) {
  PointResult result;
  result.point = index + 1;
  result.outcome = Outcome::kFailed;
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics = metric_cells(sc, nullptr, Outcome::kFailed, error);
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.reason = "internal error: " + error;
  return result;
}

/// The row of a point whose process the sweep killed while stopping (`outcome`: kInterrupted
/// or kLimited): its status says so, and it has no results.
PointResult stopped_point(const Scenario& sc, int64_t index, const std::vector<std::string>& values,
                          Outcome outcome) {
  PointResult result;
  result.point = index + 1;
  result.outcome = outcome;
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics = metric_cells(sc, nullptr, outcome, "");
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.reason = "killed: did not stop in time";
  return result;
}

/// The row of a point whose fabric cannot be built (`why`: the builder's message).
PointResult unbuildable_point(const Scenario& sc, int64_t index,
                              const std::vector<std::string>& values, const std::string& why) {
  PointResult result;
  result.point = index + 1;
  result.outcome = Outcome::kUnbuildable;
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics = metric_cells(sc, nullptr, Outcome::kUnbuildable, why);
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.reason = "cannot be built: " + why;
  return result;
}

/// A point process's exit code: `fabricsim run`'s for the same outcome.
int exit_code_of(Outcome outcome) {
  switch (outcome) {
    case Outcome::kComplete:
      return kExitOk;
    case Outcome::kDeadlock:
      return kExitDeadlock;
    case Outcome::kTransportFailed:
      return kExitTransport;
    case Outcome::kInterrupted:
      return kExitInterrupted;
    case Outcome::kLimited:
      return kExitLimit;
    case Outcome::kFailed:
    case Outcome::kUnbuildable:
      break;
  }
  return kExitInternal;
}

// ---- a point's result through a pipe, from the point's process to the sweep's --------------
// Both ends are the same binary: integers and doubles travel as their bytes, strings with
// their length first. The message ends with a marker, so a process that died mid-write is
// told from one that finished.

constexpr uint64_t kResultEnd = 0x66616272'69637377;  // "fabricsw"

void put_u64(std::string& s, uint64_t v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  s.append(b, sizeof v);
}
void put_f64(std::string& s, double v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  put_u64(s, u);
}
void put_str(std::string& s, const std::string& v) {
  put_u64(s, v.size());
  s += v;
}

std::string encode(const PointResult& r) {
  std::string s;
  put_u64(s, static_cast<uint64_t>(r.point));
  put_u64(s, static_cast<uint64_t>(r.outcome));
  put_u64(s, r.cells.size());
  for (const std::string& c : r.cells) put_str(s, c);
  put_str(s, r.reason);
  put_f64(s, r.wall_s);
  put_u64(s, static_cast<uint64_t>(r.events));
  put_u64(s, r.busbw.size());
  for (const SizeBusbw& b : r.busbw) {
    put_u64(s, static_cast<uint64_t>(b.size_bytes));
    put_f64(s, b.busbw_GBps);
  }
  put_u64(s, r.cost_usd ? 1 : 0);
  put_f64(s, r.cost_usd.value_or(0));
  put_u64(s, r.step_ps ? 1 : 0);
  put_u64(s, static_cast<uint64_t>(r.step_ps.value_or(0)));
  put_u64(s, static_cast<uint64_t>(r.exposed_comm_ps.value_or(0)));
  put_u64(s, r.unwritten.size());
  for (const std::string& u : r.unwritten) put_str(s, u);
  put_u64(s, kResultEnd);
  return s;
}

/// Reads what encode() wrote; nullopt for a truncated or malformed message.
std::optional<PointResult> decode(const std::string& s) {
  size_t pos = 0;
  bool ok = true;
  const auto u64 = [&]() -> uint64_t {
    uint64_t v = 0;
    if (!ok || s.size() - pos < sizeof v) {
      ok = false;
      return 0;
    }
    std::memcpy(&v, s.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  };
  const auto f64 = [&] {
    const uint64_t u = u64();
    double v = 0;
    std::memcpy(&v, &u, sizeof v);
    return v;
  };
  const auto str = [&] {
    const uint64_t n = u64();
    if (!ok || s.size() - pos < n) {
      ok = false;
      return std::string();
    }
    std::string v = s.substr(pos, n);
    pos += n;
    return v;
  };
  PointResult r;
  r.point = static_cast<int64_t>(u64());
  const uint64_t outcome = u64();
  if (outcome > static_cast<uint64_t>(Outcome::kLimited) ||
      outcome == static_cast<uint64_t>(Outcome::kUnbuildable)) {
    ok = false;  // not sent by a point's process
  }
  r.outcome = static_cast<Outcome>(outcome);
  const uint64_t cells = u64();
  for (uint64_t i = 0; ok && i < cells; ++i) r.cells.push_back(str());
  r.reason = str();
  r.wall_s = f64();
  r.events = static_cast<int64_t>(u64());
  const uint64_t sizes = u64();
  for (uint64_t i = 0; ok && i < sizes; ++i) {
    SizeBusbw b;
    b.size_bytes = static_cast<int64_t>(u64());
    b.busbw_GBps = f64();
    r.busbw.push_back(b);
  }
  const uint64_t has_cost = u64();
  const double cost = f64();
  if (has_cost > 1) ok = false;
  if (has_cost == 1) r.cost_usd = cost;
  const uint64_t has_step = u64();
  const uint64_t step = u64(), exposed = u64();
  if (has_step > 1) ok = false;
  if (has_step == 1) {
    r.step_ps = static_cast<int64_t>(step);
    r.exposed_comm_ps = static_cast<int64_t>(exposed);
  }
  const uint64_t unwritten = u64();
  for (uint64_t i = 0; ok && i < unwritten; ++i) r.unwritten.push_back(str());
  if (u64() != kResultEnd || pos != s.size()) ok = false;
  if (!ok) return std::nullopt;
  return r;
}

/// Writes all of `data` to `fd`; false when it cannot.
bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// The CPUs this process may run on: the online ones, fewer under a CPU affinity mask.
int64_t usable_cpus() {
  int64_t n = ::sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    n = std::min<int64_t>(n > 0 ? n : CPU_SETSIZE, CPU_COUNT(&set));
  }
  return std::max<int64_t>(1, n);
}

/// "41 s", "2 min", "3 h": a wall-clock duration for the progress line.
std::string rough_duration(double s) {
  if (s < 100) return std::to_string(static_cast<int64_t>(std::lround(s))) + " s";
  if (s < 100 * 60) return std::to_string(static_cast<int64_t>(std::lround(s / 60))) + " min";
  return std::to_string(static_cast<int64_t>(std::lround(s / 3600))) + " h";
}

// ---- plots: gnuplot scripts and data beside sweep.csv -----------------------------------------

/// A file name from a scenario key: letters, digits, '.', '-' and '_' kept, others '_'.
std::string file_stem(const std::string& key) {
  std::string s;
  for (const char ch : key) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
    s += keep ? ch : '_';
  }
  return s;
}

/// A value's leading number ("3" -> 3, "400Gbps" -> 400, "1.5us" -> 1.5); nullopt when the value
/// does not start with one ("true", "[2,2]", "auto").
std::optional<double> leading_number(const std::string& v) {
  if (v.empty()) return std::nullopt;
  const char c = v[0];
  if (!((c >= '0' && c <= '9') || c == '-' || c == '.')) return std::nullopt;
  double x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end == v.data() || !std::isfinite(x)) return std::nullopt;
  return x;
}

/// The x positions of a numeric axis: when every value is a quantity of one kind, in one unit
/// (rates in Gb/s, sizes in bytes, times in us) so that "1.6Tbps" lands right of "400Gbps";
/// else each value's leading number. nullopt when a value has no leading number.
struct NumericAxis {
  std::vector<double> x;
  std::string unit;  ///< "" for plain leading numbers
};
std::optional<NumericAxis> numeric_axis(const SweepAxis& axis) {
  NumericAxis a;
  for (const std::string& v : axis.values) {
    const std::optional<double> x = leading_number(v);
    if (!x) return std::nullopt;
    a.x.push_back(*x);
  }
  const auto all = [&](auto parse, double scale, const char* unit) {
    std::vector<double> x;
    try {
      for (const std::string& v : axis.values) x.push_back(static_cast<double>(parse(v)) / scale);
    } catch (const UnitError&) {
      return false;
    }
    a.x = x;
    a.unit = unit;
    return true;
  };
  all(parse_rate_bps, 1e9, "Gb/s") || all(parse_size_bytes, 1.0, "bytes") ||
      all(parse_time_ps, 1e6, "us");
  return a;
}

/// One plot: DIR/STEM.gp draws DIR/STEM.dat into DIR/STEM.svg. `drawable` is false when no
/// point has data for it (the .gp then holds only comments).
struct Plot {
  std::string stem;
  std::string gp, dat;
  bool drawable = false;
};

/// The SVG terminal, taller with more curves: the key goes under the plot.
std::string svg_terminal(int curves) {
  const int height = std::min(1400, 560 + 22 * ((curves + 1) / 2));
  return "set terminal svg size 960," + std::to_string(height) +
         " dynamic noenhanced font 'Helvetica,12' background rgb 'white'\n";
}

/// A completed point with collective sizes: what the plots show. `note` says why not.
bool plottable(const PointResult& p, const std::string& label, std::string& note) {
  if (p.outcome != Outcome::kComplete) {
    note += gp_comment("left out: point " + std::to_string(p.point) + " (" + label +
                       "): did not complete: " + p.reason);
    return false;
  }
  if (p.busbw.empty()) {
    note += gp_comment("left out: point " + std::to_string(p.point) + " (" + label +
                       "): no collective sizes (traffic flows only)");
    return false;
  }
  return true;
}

/// busbw.gp / busbw.dat: busbw against message size, one curve per completed point.
Plot busbw_plot(const std::string& scenario, const std::vector<SweepAxis>& axes,
                const std::vector<std::vector<std::string>>& values,
                const std::vector<const PointResult*>& rows) {
  Plot plot;
  plot.stem = "busbw";
  std::string notes, curves, dat;
  std::set<int64_t> sizes;
  std::vector<std::string> labels;      // the plotted points' labels, in block order
  std::vector<std::string> bar_labels;  // their values only, for one-size bars
  int block = 0;
  dat += gp_comment("fabricsim sweep " + scenario +
                    ": busbw per message size, one block per completed point");
  dat +=
      "# blocks are separated by two blank lines (gnuplot `index`); columns: size_bytes "
      "busbw_GBps\n";
  for (const PointResult* p : rows) {
    const std::string label = describe(axes, values[static_cast<size_t>(p->point - 1)]);
    if (!plottable(*p, label, notes)) continue;
    dat += "\n\n" + gp_comment("point " + std::to_string(p->point) + ": " + label);
    for (const SizeBusbw& b : p->busbw) {
      dat += std::to_string(b.size_bytes) + " " + number_text(b.busbw_GBps) + "\n";
      sizes.insert(b.size_bytes);
    }
    // A bar's label (one-size plots): the point's values; the x label names the keys.
    std::string short_label;
    for (const std::string& v : values[static_cast<size_t>(p->point - 1)]) {
      short_label += (short_label.empty() ? "" : " ") + v;
    }
    labels.push_back(label);
    bar_labels.push_back(short_label);
    ++block;
  }
  plot.dat = dat;
  std::string& gp = plot.gp;
  gp += gp_comment("fabricsim sweep " + scenario +
                   (sizes.size() == 1
                        ? ": busbw (GB/s) at the one message size, one bar per completed point"
                        : ": busbw (GB/s) against message size, one curve per completed point"));
  gp += "# data: busbw.dat; run `gnuplot busbw.gp` in this folder to draw busbw.svg\n";
  gp += notes;
  plot.drawable = block > 0;
  if (!plot.drawable) {
    gp += "# no point completed with collective sizes: nothing to plot\n";
    return plot;
  }
  if (sizes.size() == 1) {
    // One size in every point: a curve per point would be a column of dots, so draw one bar
    // per point, labelled with its varied values.
    gp += svg_terminal(2) + "set output 'busbw.svg'\n";
    gp +=
        "set title " +
        gp_string("fabricsim sweep " + scenario + ": busbw at " + format_size_tick(*sizes.begin()) +
                  " (" + std::to_string(*sizes.begin()) + " bytes), one bar per point") +
        "\n";
    std::string keys;
    for (const SweepAxis& a : axes) keys += (keys.empty() ? "" : " ") + a.key;
    gp += "set xlabel " + gp_string(keys) + "\n";
    gp += "set ylabel 'busbw (GB/s)'\nset yrange [0:*]\nset grid ytics\nunset key\n";
    gp += "set style fill solid 0.6 border -1\nset boxwidth 0.6\n";
    gp += "set xrange [-0.6:" + std::to_string(block - 1) + ".6]\n";
    std::string tics;
    for (size_t i = 0; i < labels.size(); ++i) {
      tics += (i ? ", " : "") + gp_string(bar_labels[i]) + " " + std::to_string(i);
    }
    gp += "set xtics (" + tics + ")" + (labels.size() > 4 ? " rotate by 30 right" : "") + "\n";
    for (int i = 0; i < block; ++i) {
      gp += std::string(i == 0 ? "plot " : ", \\\n     ") + "'busbw.dat' index " +
            std::to_string(i) + " using (" + std::to_string(i) + "):2 with boxes lc " +
            std::to_string(i % 8 + 1) + " notitle";
    }
    gp += "\n";
    return plot;
  }
  for (int i = 0; i < block; ++i) {
    curves += std::string(i == 0 ? "plot " : ", \\\n     ") + "'busbw.dat' index " +
              std::to_string(i) + " using 1:2 with linespoints title " +
              gp_string(labels[static_cast<size_t>(i)]);
  }
  gp += svg_terminal(block);
  gp += "set output 'busbw.svg'\n";
  gp += "set title " + gp_string("fabricsim sweep " + scenario + ": busbw per message size") + "\n";
  gp += "set xlabel 'message size (bytes)'\nset ylabel 'busbw (GB/s)'\n";
  // Log2 sizes, with half a factor of 2 of room at each end so the end points' tics show.
  if (*sizes.begin() > 0) {
    gp += "set logscale x 2\nset xrange [" +
          number_text(static_cast<double>(*sizes.begin()) / 1.5) + ":" +
          number_text(static_cast<double>(*sizes.rbegin()) * 1.5) + "]\n";
  } else {
    gp += "set offsets graph 0.05, graph 0.05, 0, 0\n";
  }
  std::string tics;
  for (const int64_t s : sizes) {
    tics += (tics.empty() ? "" : ", ") + gp_string(format_size_tick(s)) + " " + std::to_string(s);
  }
  gp += "set xtics (" + tics + ")" + (sizes.size() > 6 ? " rotate by -45" : "") + "\n";
  gp += "set yrange [0:*]\nset grid\nset key below\n";
  gp += curves + "\n";
  return plot;
}

/// What a vs-KEY plot draws on its left axis, for one point (nullopt: the point has none).
struct VsMetric {
  std::string stem_prefix;  ///< "vs-" (busbw), "step-vs-" (training step time)
  std::string column;       ///< .dat column: busbw_GBps, step_ms
  std::string what;         ///< "busbw", "training step time"
  std::string unit;         ///< "GB/s", "ms"
  bool busbw = true;        ///< busbw at each point's largest size (else the step time)
  std::optional<double> value(const PointResult& p) const {
    if (!busbw) {
      return p.step_ps ? std::optional<double>(static_cast<double>(*p.step_ps) / 1e9)
                       : std::nullopt;
    }
    if (p.busbw.empty()) return std::nullopt;
    return std::max_element(
               p.busbw.begin(), p.busbw.end(),
               [](const SizeBusbw& a, const SizeBusbw& b) { return a.size_bytes < b.size_bytes; })
        ->busbw_GBps;
  }
};
const VsMetric kBusbwMetric{"vs-", "busbw_GBps", "busbw", "GB/s", true};
const VsMetric kStepMetric{"step-vs-", "step_ms", "training step time", "ms", false};

/// vs-KEY.gp / .dat: busbw at the largest size against a numeric varied key, one curve per
/// combination of the other varied keys; step-vs-KEY the same for the training step time
/// (results.json training.step_ps, in ms) when the points have one. When a plotted point has a
/// cost proxy, the .dat has a fifth column, cost_usd (NaN for a point without), and the .gp
/// draws it dashed on the right axis (y2): one cost curve per distinct series of (x, cost), so
/// curves that differ only in the workload share one.
Plot vs_plot(const std::string& scenario, const std::vector<SweepAxis>& axes, size_t key,
             const NumericAxis& numeric, const std::vector<std::vector<std::string>>& values,
             const std::vector<const PointResult*>& rows, const VsMetric& metric) {
  Plot plot;
  plot.stem = metric.stem_prefix + file_stem(axes[key].key);
  const std::string& name = axes[key].key;
  const std::string dat_file = plot.stem + ".dat";
  std::string notes;
  // Curves in the order their first point comes; each curve's points in point order, which is
  // the order of the key's values.
  std::vector<std::string> curve_order;
  std::map<std::string, std::vector<std::pair<const PointResult*, size_t>>> curves;
  std::set<int64_t> largest_sizes;
  bool with_cost = false;
  for (const PointResult* p : rows) {
    const std::vector<std::string>& v = values[static_cast<size_t>(p->point - 1)];
    if (metric.busbw) {
      if (!plottable(*p, describe(axes, v), notes)) continue;
    } else if (p->outcome != Outcome::kComplete || !metric.value(*p)) {
      notes += gp_comment("left out: point " + std::to_string(p->point) + " (" + describe(axes, v) +
                          "): no training step time: " +
                          (p->outcome != Outcome::kComplete ? p->reason : "not finished"));
      continue;
    }
    with_cost = with_cost || p->cost_usd.has_value();
    std::vector<SweepAxis> others_axes;
    std::vector<std::string> others;
    for (size_t a = 0; a < axes.size(); ++a) {
      if (a == key) continue;
      others_axes.push_back(axes[a]);
      others.push_back(v[a]);
    }
    const std::string label = others.empty() ? metric.what : describe(others_axes, others);
    if (!curves.count(label)) curve_order.push_back(label);
    const auto value_index =
        static_cast<size_t>(std::find(axes[key].values.begin(), axes[key].values.end(), v[key]) -
                            axes[key].values.begin());
    curves[label].emplace_back(p, value_index);
    if (metric.busbw) {
      const auto largest = std::max_element(
          p->busbw.begin(), p->busbw.end(),
          [](const SizeBusbw& a, const SizeBusbw& b) { return a.size_bytes < b.size_bytes; });
      largest_sizes.insert(largest->size_bytes);
    }
  }
  const std::string at = largest_sizes.size() == 1 ? format_size_tick(*largest_sizes.begin())
                                                   : std::string("each point's largest size");
  // "busbw at 16 MiB", "training step time"
  const std::string what = metric.busbw ? metric.what + " at " + at : metric.what;
  const std::string what_long =
      metric.busbw ? "busbw at the largest message size (" + at + ")" : metric.what;
  const std::string x_text =
      numeric.unit.empty() ? name + " (the value's leading number)" : name + " in " + numeric.unit;
  std::string& dat = plot.dat;
  dat += gp_comment("fabricsim sweep " + scenario + ": " + what_long + " against " + name);
  dat += gp_comment("x = " + x_text +
                    "; one block per combination of the other varied keys "
                    "(gnuplot `index`, separated by two blank lines)");
  dat += "# columns: x " + metric.column + " point value" + (with_cost ? " cost_usd" : "") + "\n";
  std::string plots;
  std::vector<double> xs;
  std::vector<std::vector<std::pair<double, double>>> cost_series;  // distinct (x, cost) series
  std::vector<std::pair<int, std::string>> cost_curves;             // block and curve label
  int block = 0;
  for (const std::string& label : curve_order) {
    dat += "\n\n" + gp_comment("curve: " + label);
    std::vector<std::pair<double, double>> series;
    for (const auto& [p, value_index] : curves[label]) {
      const double x = numeric.x[value_index];
      xs.push_back(x);
      dat += number_text(x) + " " + number_text(*metric.value(*p)) + " " +
             std::to_string(p->point) + " " + dat_string(axes[key].values[value_index]);
      if (with_cost) {
        dat += ' ';
        dat += p->cost_usd ? number_text(*p->cost_usd) : std::string("NaN");
      }
      dat += "\n";
      if (p->cost_usd) series.emplace_back(x, *p->cost_usd);
    }
    plots += std::string(plots.empty() ? "plot " : ", \\\n     ") + gp_string(dat_file) +
             " index " + std::to_string(block) +
             " using 1:2:xticlabels(4) with linespoints title " + gp_string(label);
    if (!series.empty() &&
        std::find(cost_series.begin(), cost_series.end(), series) == cost_series.end()) {
      cost_series.push_back(series);
      cost_curves.emplace_back(block, label);
    }
    ++block;
  }
  std::string cost_plots;  // a curve's label only when the costs differ between curves
  for (const auto& [b, label] : cost_curves) {
    cost_plots += ", \\\n     " + gp_string(dat_file) + " index " + std::to_string(b) +
                  " using 1:5 axes x1y2 with linespoints dashtype 2 title " +
                  gp_string("cost proxy, USD (right axis)" +
                            (cost_curves.size() > 1 ? ": " + label : std::string()));
  }
  std::string& gp = plot.gp;
  gp += gp_comment("fabricsim sweep " + scenario + ": " + what_long + " against " + name +
                   ", one curve per combination of the other varied keys");
  gp += gp_comment("data: " + dat_file + "; run `gnuplot " + plot.stem +
                   ".gp` in this folder to draw " + plot.stem + ".svg");
  gp += with_cost
            ? "# dashed, right axis: the cost proxy (results.json fabric.cost_usd; `fabricsim "
              "topo`), column 5 of the data\n"
            : "# no cost curve: the points' results carry no cost proxy (add cost_model: to "
              "the scenario; see `fabricsim topo`)\n";
  gp += notes;
  plot.drawable = block > 0;
  if (!plot.drawable) {
    gp += metric.busbw ? "# no point completed with collective sizes: nothing to plot\n"
                       : "# no point completed a training step: nothing to plot\n";
    return plot;
  }
  gp += svg_terminal(block + static_cast<int>(cost_curves.size()));
  gp += "set output " + gp_string(plot.stem + ".svg") + "\n";
  gp +=
      "set title " + gp_string("fabricsim sweep " + scenario + ": " + what + " vs " + name) + "\n";
  gp += "set xlabel " + gp_string(numeric.unit.empty() ? name : name + " (" + numeric.unit + ")") +
        "\n";
  gp += "set ylabel " + gp_string(what + " (" + metric.unit + ")") + "\n";
  if (!cost_plots.empty()) {
    gp += "set y2label 'cost proxy (USD)'\nset ytics nomirror\nset y2tics\nset y2range [0:*]\n";
  }
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  if (*lo > 0 && *hi / *lo >= 100) gp += "set logscale x\n";
  gp += "set offsets graph 0.05, graph 0.05, 0, 0\n";
  gp += "set yrange [0:*]\nset grid\nset key below\n";
  gp += plots + cost_plots + "\n";
  return plot;
}

/// Writes the plots of a sweep into `dir`, drawing the SVGs when gnuplot is on PATH. Returns
/// the line for sweep.md and the line for stdout. A plot whose script or data cannot be written
/// is left out (neither file left behind), its failure appended to `failures`.
std::pair<std::string, std::string> write_plots(const std::filesystem::path& dir,
                                                const std::string& scenario,
                                                const std::vector<SweepAxis>& axes,
                                                const std::vector<std::vector<std::string>>& values,
                                                const std::vector<const PointResult*>& rows,
                                                std::vector<OutputError>& failures) {
  std::vector<Plot> plots;
  const bool steps = std::any_of(rows.begin(), rows.end(),
                                 [](const PointResult* p) { return p->step_ps.has_value(); });
  // A sweep of training steps without collective sizes has no busbw to plot (there were
  // empty busbw plots written for it).
  const bool busbw = !steps || std::any_of(rows.begin(), rows.end(),
                                           [](const PointResult* p) { return !p->busbw.empty(); });
  if (busbw) plots.push_back(busbw_plot(scenario, axes, values, rows));
  for (size_t a = 0; a < axes.size(); ++a) {
    if (const std::optional<NumericAxis> numeric = numeric_axis(axes[a])) {
      if (busbw) plots.push_back(vs_plot(scenario, axes, a, *numeric, values, rows, kBusbwMetric));
      if (steps) plots.push_back(vs_plot(scenario, axes, a, *numeric, values, rows, kStepMetric));
    }
  }
  const std::string gnuplot = find_gnuplot();
  const size_t failed_before = failures.size();
  std::string md, drawn, undrawn;
  for (const Plot& p : plots) {
    std::error_code ec;  // an SVG of an earlier sweep must not pass for this one's
    std::filesystem::remove(dir / (p.stem + ".svg"), ec);
    try {
      write_file(dir / (p.stem + ".gp"), p.gp);
      write_file(dir / (p.stem + ".dat"), p.dat);
    } catch (const OutputError& e) {  // a script without its data (or an old one's) is no plot
      failures.push_back(e);
      remove_output_file((dir / (p.stem + ".gp")).string());
      remove_output_file((dir / (p.stem + ".dat")).string());
      continue;
    }
    bool svg = false;
    if (!gnuplot.empty() && p.drawable) {
      const std::string failure = run_gnuplot(gnuplot, dir, p.stem + ".gp");
      svg = failure.empty() && std::filesystem::exists(dir / (p.stem + ".svg"));
      if (!failure.empty()) {
        std::filesystem::remove(dir / (p.stem + ".svg"), ec);  // perhaps half drawn
        std::cerr << "fabricsim sweep: note: gnuplot " << p.stem << ".gp failed (" << failure
                  << "); " << p.stem << ".gp and " << p.stem << ".dat are written\n";
      }
    }
    md += (md.empty() ? "" : ", ") + p.stem + (svg ? ".{gp,dat,svg}" : ".{gp,dat}");
    (svg ? drawn : undrawn) += ((svg ? drawn : undrawn).empty() ? "" : ", ") + p.stem;
  }
  std::string out = "# plots      : ";
  if (!drawn.empty()) out += "SVG, gnuplot script and data: " + drawn + " (.svg, .gp, .dat)";
  if (!undrawn.empty()) {
    out += std::string(drawn.empty() ? "" : "; ") + "gnuplot script and data: " + undrawn +
           " (.gp, .dat)";
    if (gnuplot.empty()) {
      out +=
          "; note: gnuplot is not on PATH, so no SVG (install gnuplot-nox, then run `gnuplot "
          "FILE.gp` in " +
          dir.string() + ")";
    }
  }
  if (drawn.empty() && undrawn.empty() && failures.size() > failed_before) {
    out += "none written (see stderr)";
  }
  return {"Plots: " + md + (gnuplot.empty() ? " (gnuplot was not on PATH: no SVG)" : ""), out};
}

/// A point running in a process of its own.
struct RunningPoint {
  pid_t pid = -1;
  int fd = -1;       ///< read end of the pipe its result comes through
  size_t index = 0;  ///< 0-based point
  std::string data;  ///< what it has sent so far
  std::chrono::steady_clock::time_point start;
  bool killed = false;  ///< SIGKILLed for not stopping within kStopGrace
};

/// How long a point process may take to stop after the sweep's interrupt or --max-wall before
/// it is killed (a stopped or hung process would otherwise hold the sweep forever).
constexpr std::chrono::seconds kStopGrace{5};

/// Starts point `index` in a child process (fork: the child has every scenario already loaded
/// and checked). The child runs it exactly as the sequential sweep would, writes its
/// DIR/point-NNN/, sends its row through a pipe and exits with the code `fabricsim run` would.
/// Returns "" or why the process could not be started.
std::string start_point(std::vector<Scenario>& scenarios,
                        const std::vector<std::vector<std::string>>& values, const RunOptions& opts,
                        const std::atomic<bool>* interrupt, const std::optional<WallLimit>& wall,
                        size_t index, std::vector<RunningPoint>& running) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  std::cout.flush();  // the child must not write the parent's buffered output again
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("fork: ") + std::strerror(e);
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (const RunningPoint& r : running) ::close(r.fd);
    int code = kExitInternal;
    const auto points = static_cast<int64_t>(scenarios.size());
    const auto i = static_cast<int64_t>(index);
    try {
      const PointResult r =
          run_point(scenarios[index], i, points, values[index], opts, interrupt, false, wall);
      if (write_all(fds[1], encode(r))) code = exit_code_of(r.outcome);
    } catch (const std::exception& e) {  // an internal error outside the simulation
      write_all(fds[1], encode(failed_point(scenarios[index], i, values[index], e.what())));
    } catch (...) {
    }
    ::_exit(code);  // no atexit handlers, no flush of buffers inherited from the parent
  }
  ::close(fds[1]);
  RunningPoint r;
  r.pid = pid;
  r.fd = fds[0];
  r.index = index;
  r.start = std::chrono::steady_clock::now();
  running.push_back(std::move(r));
  return "";
}

/// Runs the points in child processes, at most `jobs` at once, in point order, filling
/// `results` (point i at i - 1) as they finish and calling `on_finish` after each. When
/// `interrupt` becomes true it starts no more, forwards SIGINT to the running ones and waits
/// for them (each then tabulates itself as interrupted). Past `wall`'s deadline it starts no
/// more either; the running ones stop themselves at the same deadline (limited). One that has not
/// stopped kStopGrace after either (stopped, hung) is killed and tabulated as interrupted or
/// limited, without results. A child that dies without sending its row (a crash, a kill) is
/// tabulated as failed with the reason, its partial files removed; one interrupted by a signal
/// the sweep did not send, as failed too. Returns how many points were started (points 1 to that
/// number have rows).
int64_t run_parallel(std::vector<Scenario>& scenarios, const std::vector<SweepAxis>& axes,
                     const std::vector<std::vector<std::string>>& values, const RunOptions& opts,
                     const std::atomic<bool>* interrupt, const std::optional<WallLimit>& wall,
                     int64_t jobs, bool progress, std::vector<std::optional<PointResult>>& results,
                     const std::function<void()>& on_finish) {
  const size_t points = scenarios.size();
  std::vector<RunningPoint> running;
  size_t next = 0, done = 0;
  bool forwarded = false;
  const auto start = std::chrono::steady_clock::now();
  auto drawn = start - std::chrono::seconds(10);
  const auto draw = [&](bool final) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    std::string line = "sweep: " + std::to_string(done) + "/" + std::to_string(points) +
                       " points done, " + std::to_string(running.size()) + " running, elapsed " +
                       rough_duration(elapsed);
    if (!final && done > 0 && done < points) {
      line += ", ETA ~" + rough_duration(elapsed * static_cast<double>(points - done) /
                                         static_cast<double>(done));
    }
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
    std::fflush(stderr);
    drawn = now;
  };
  bool noted = false, changed = true;
  std::optional<std::chrono::steady_clock::time_point> stopping_since;
  for (;;) {
    const bool interrupted = interrupt != nullptr && interrupt->load();
    const auto now = std::chrono::steady_clock::now();
    const bool stop = interrupted || (wall && now >= wall->deadline);
    if (interrupted && !forwarded) {
      for (const RunningPoint& r : running) ::kill(r.pid, SIGINT);
      forwarded = true;
    }
    if (stop && !stopping_since) stopping_since = now;
    if (stopping_since && now - *stopping_since >= kStopGrace) {
      for (RunningPoint& r : running) {
        if (r.killed) continue;
        ::kill(r.pid, SIGKILL);  // also ends a stopped (SIGSTOP) process
        r.killed = true;
        std::cerr << "fabricsim sweep: point " << r.index + 1 << "/" << points << " ("
                  << describe(axes, values[r.index]) << ") did not stop within "
                  << kStopGrace.count() << " s of "
                  << (interrupted ? "the interrupt" : "--max-wall") << ": killed\n";
      }
    }
    while (!stop && next < points && static_cast<int64_t>(running.size()) < jobs) {
      if (results[next]) {  // unbuildable: tabulated already, not run
        ++next;
        ++done;
        continue;
      }
      const std::string failure =
          start_point(scenarios, values, opts, interrupt, wall, next, running);
      if (failure.empty()) {
        ++next;
        continue;
      }
      if (running.empty()) {  // not even one: the point fails, the sweep goes on
        results[next] = failed_point(scenarios[next], static_cast<int64_t>(next), values[next],
                                     "cannot start a process for the point: " + failure);
        ++next;
        ++done;
        on_finish();
        continue;
      }
      if (!noted) {  // e.g. a process limit: carry on with the processes that run
        std::cerr << "fabricsim sweep: note: cannot start more than " << running.size()
                  << " points at once (" << failure << ")\n";
        noted = true;
      }
      jobs = static_cast<int64_t>(running.size());
    }
    if (running.empty()) break;
    if (progress &&
        (changed || std::chrono::steady_clock::now() - drawn > std::chrono::seconds(1))) {
      draw(false);  // after the finished points' successors started
      changed = false;
    }

    std::vector<pollfd> fds;
    for (const RunningPoint& r : running) fds.push_back(pollfd{r.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 250);  // EINTR: a signal; look again
    for (size_t k = running.size(); ready > 0 && k-- > 0;) {
      if (fds[k].revents == 0) continue;
      RunningPoint& r = running[k];
      char buf[65536];
      const ssize_t n = ::read(r.fd, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n > 0) {
        r.data.append(buf, static_cast<size_t>(n));
        continue;
      }
      // End of the pipe: the child has exited (or is exiting).
      ::close(r.fd);
      int status = 0;
      while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::optional<PointResult> result = decode(r.data);
      const auto index = static_cast<int64_t>(r.index);
      if (!result || result->point != index + 1) {
        // Died without its row: whatever it wrote is partial.
        remove_point_outputs(opts, index, static_cast<int64_t>(points));
        if (r.killed) {  // by the sweep, stopping: tabulated as stopped, with no results
          const bool by_interrupt = interrupt != nullptr && interrupt->load();
          result = stopped_point(scenarios[r.index], index, values[r.index],
                                 by_interrupt ? Outcome::kInterrupted : Outcome::kLimited);
        } else {
          result = failed_point(scenarios[r.index], index, values[r.index],
                                describe_wait_status("the point's process", status));
        }
        result->wall_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
      } else if (result->outcome == Outcome::kInterrupted &&
                 !(interrupt != nullptr && interrupt->load())) {
        // A signal to the point's process alone: the sweep was not interrupted. Its row is
        // failed, so its partial files go as a dead process's do.
        remove_point_outputs(opts, index, static_cast<int64_t>(points));
        result = failed_point(scenarios[r.index], index, values[r.index],
                              "the point's process was interrupted by a signal the sweep did "
                              "not send (SIGINT, SIGTERM, SIGHUP or SIGQUIT to it alone)");
      }
      results[r.index] = std::move(result);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      ++done;
      on_finish();
      changed = true;
    }
  }
  if (progress) draw(true);
  return static_cast<int64_t>(next);
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
  // A sweep over topology keys crosses families and ratios, and not every family's switches
  // make every ratio: such a point is tabulated as unbuildable (with the builder's reason), not
  // a reason to run nothing. Any other bad input, and every point unbuildable, is exit 2.
  const bool topology_axes = std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) {
    return a.key == "topology" || a.key.rfind("topology.", 0) == 0;
  });
  std::map<int64_t, std::string> unbuildable;  // point index -> the builder's message
  std::vector<int64_t> gpus;                   // per point: hosts of its fabric (0: unbuildable)
  // per point: results.json fabric.cost_usd, for the rows of points that wrote none (killed)
  std::vector<std::optional<double>> costs(static_cast<size_t>(points));
  std::vector<Scenario> scenarios;
  std::vector<std::vector<std::string>> values;
  scenarios.reserve(static_cast<size_t>(points));
  for (int64_t i = 0; i < points; ++i) {
    values.push_back(point_values(axes, i));
    RunOptions o = opts;
    for (size_t a = 0; a < axes.size(); ++a) o.varied.push_back(axes[a].key + "=" + values[i][a]);
    try {
      Scenario sc;
      try {
        sc = load(o);
      } catch (const ConfigError& e) {
        // A key of some families only (oversubscription on a torus) in a sweep across
        // families: that point cannot be built, like a ratio a family's switches cannot make.
        if (!topology_axes || e.key_path().rfind("topology.", 0) != 0 ||
            e.message().find("applies to topology kind") == std::string::npos) {
          throw;
        }
        unbuildable[i] = e.key_path() + ": " + e.message();
        gpus.push_back(0);
        scenarios.emplace_back();
        continue;
      }
      std::optional<Prepared> prepared;
      try {
        prepared.emplace(prepare(sc));
        gpus.push_back(static_cast<int64_t>(prepared->fabric.hosts.size()));
      } catch (const ConfigError& e) {
        if (!topology_axes || e.key_path().rfind("topology.", 0) != 0) throw;
        unbuildable[i] = e.message();
        gpus.push_back(0);
        scenarios.push_back(std::move(sc));
        continue;
      }
      if (!sc.cost_model.empty()) {  // its prices file reads; the cost proxy, as `run` has it
        const FabricSummary summary = summarize(sc, prepared->fabric);
        if (summary.cost) costs[static_cast<size_t>(i)] = summary.cost->total_usd;
      }
      prepared.reset();  // a large fabric takes gigabytes: each point prepares its own again
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
  {
    // Each point's scenario is parsed on its own: a warning shared by several points is said
    // once, with the points it concerns when that is not all of them.
    std::vector<std::pair<std::string, std::vector<int64_t>>> warnings;  // in first-seen order
    for (int64_t i = 0; i < points; ++i) {
      for (const std::string& w : scenarios[static_cast<size_t>(i)].warnings) {
        auto it = std::find_if(warnings.begin(), warnings.end(),
                               [&](const auto& x) { return x.first == w; });
        if (it == warnings.end()) it = warnings.insert(warnings.end(), {w, {}});
        it->second.push_back(i + 1);
      }
    }
    for (const auto& [w, at] : warnings) {
      std::cerr << w;
      if (static_cast<int64_t>(at.size()) < points) {
        std::cerr << " (sweep point" << (at.size() == 1 ? " " : "s ");
        for (size_t k = 0; k < at.size(); ++k) std::cerr << (k > 0 ? ", " : "") << at[k];
        std::cerr << " of " << points << ")";
      }
      std::cerr << "\n";
    }
  }
  if (static_cast<int64_t>(unbuildable.size()) == points) {
    for (const auto& [i, why] : unbuildable) {
      std::cerr << "fabricsim sweep: point " << i + 1 << "/" << points << " ("
                << describe(axes, values[static_cast<size_t>(i)]) << "): cannot be built: " << why
                << "\n";
    }
    std::cerr << "fabricsim sweep: no point can be built; nothing was run\n";
    return kExitBadInput;
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
    // Results an earlier sweep left in this one's point directories go before any point runs:
    // a point never started (past --max-wall, Ctrl-C) or unbuildable has none of its own.
    for (int64_t i = 0; i < points; ++i) remove_point_outputs(opts, i, points);
    // An earlier sweep's plots go: this one writes its own, and a vs-KEY plot of a key it does
    // not vary would sit beside its tables as if it did (only in a directory a sweep wrote).
    if (std::filesystem::exists(dir / "sweep.csv")) {
      remove_sweep_report(dir);
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string ext = entry.path().extension().string();
        const std::string stem = entry.path().stem().string();
        if (entry.is_regular_file() && (ext == ".gp" || ext == ".dat" || ext == ".svg") &&
            (stem == "busbw" || stem.rfind("vs-", 0) == 0 || stem.rfind("step-vs-", 0) == 0)) {
          std::error_code ec;
          std::filesystem::remove(entry.path(), ec);
        }
      }
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
  const bool cost_column = std::any_of(scenarios.begin(), scenarios.end(),
                                       [](const Scenario& sc) { return !sc.cost_model.empty(); });
  if (cost_column) {
    table.header.push_back(kCostColumn);
    table.right_aligned.push_back(true);
  }
  const bool training_columns = std::any_of(scenarios.begin(), scenarios.end(),
                                            [](const Scenario& sc) { return sc.training.enabled; });
  if (training_columns) {
    for (const std::string& c : kTrainingColumns) {
      table.header.push_back(c);
      table.right_aligned.push_back(true);
    }
  }
  // Families and ratios do not all hold the same GPUs (a fat-tree's edge ratio changes its
  // host ports): the size of each point's cluster is part of reading its row.
  if (topology_axes) {
    table.header.push_back(kGpusColumn);
    table.right_aligned.push_back(true);
  }

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
    results[static_cast<size_t>(i)] = unbuildable_point(scenarios[static_cast<size_t>(i)], i,
                                                        values[static_cast<size_t>(i)], why);
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
  const auto tabulate = [&] {
    table.rows.clear();
    for (const PointResult* p : finished_rows()) {
      table.rows.push_back(*p);
      if (cost_column) {
        const std::optional<double> cost =
            p->cost_usd ? p->cost_usd : costs[static_cast<size_t>(p->point - 1)];
        table.rows.back().cells.push_back(cost ? number_text(*cost) : "");
      }
      if (training_columns) {
        const auto ms = [](const std::optional<int64_t>& ps) {
          return ps ? number_text(static_cast<double>(*ps) / 1e9) : std::string();
        };
        table.rows.back().cells.push_back(ms(p->step_ps));
        table.rows.back().cells.push_back(ms(p->exposed_comm_ps));
      }
      if (topology_axes) {
        const int64_t n = gpus[static_cast<size_t>(p->point - 1)];
        table.rows.back().cells.push_back(n > 0 ? std::to_string(n) : std::string());
      }
    }
  };
  const auto write_tables = [&] {
    tabulate();
    std::ostringstream csv, md, perf;
    write_csv(csv, table);
    md << "# fabricsim sweep: " << first.name << "\n\n`" << command << "`\n\n";
    write_markdown_table(md, table);
    if (!plots_line.empty()) md << "\n" << plots_line << "\n";
    perf << "point,wall_s,events,events_per_s\n";
    for (const PointResult& p : table.rows) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%lld,%.3f,%lld,%.0f\n", static_cast<long long>(p.point),
                    p.wall_s, static_cast<long long>(p.events),
                    p.wall_s > 0 ? static_cast<double>(p.events) / p.wall_s : 0.0);
      perf << buf;
    }
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
                     static_cast<long long>(points), describe(axes, values[i]).c_str());
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
        write_plots(dir, first.name, axes, values, finished_rows(), unwritten);
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
                                    training_columns, report_failures);
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
                << describe(axes, values[static_cast<size_t>(p.point - 1)]) << "): " << u << "\n";
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
              << describe(axes, values[static_cast<size_t>(p.point - 1)]) << "): " << p.reason
              << "\n";
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
