// The sweep table (DIR/sweep.csv, sweep.md and stdout of `fabricsim sweep`): one row per point,
// its columns (DESIGN.md §4 counter names) and the cells of a point's metrics from its run's
// report, written as CSV or as a Markdown table.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/report.hpp"

namespace fabricsim {

/// One --vary KEY=V1,V2,...: a scenario key (the dotted path --set takes) and its values, as
/// written (surrounding blanks trimmed).
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

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

/// One non-empty flow-size bucket of a point's FCT slowdown, for the slowdown plot: results.json
/// `fct_slowdown.buckets[]` (fct_slowdown.hpp).
struct SizeSlowdown {
  int64_t above_bytes = 0;  ///< sizes > this …
  int64_t max_bytes = -1;   ///< … and <= this; -1: the last bucket, no upper edge
  int64_t flows = 0;
  double p50 = 0, p95 = 0, p99 = 0;
};

/// One job of a point with `jobs:`, for its columns: results.json `jobs[]` `name`,
/// `collective.busbw_GBps` (nullopt: it did not finish) and `slowdown` (nullopt: none).
struct JobResult {
  std::string name;
  std::optional<double> time_us, busbw_GBps, slowdown, overlap;
};

/// One row of the sweep table: cells in the table's column order.
struct PointResult {
  int64_t point = 0;  ///< 1-based, as in the `point` column
  Outcome outcome = Outcome::kComplete;
  std::vector<std::string> cells;
  std::string reason;  ///< why it did not complete (stderr), "" when it did
  double wall_s = 0;
  int64_t events = 0;
  std::vector<SizeBusbw> busbw;        ///< the sizes that finished, in the run's order
  std::vector<SizeSlowdown> slowdown;  ///< the traffic flows' non-empty size buckets
  /// results.json `fabric.cost_usd`: the cost proxy; nullopt without a cost_model or a report.
  std::optional<double> cost_usd;
  /// results.json `training.step_ps` and `exposed_comm_ps`; nullopt without a training step.
  std::optional<int64_t> step_ps, exposed_comm_ps;
  /// results.json `jobs`, in its order; empty without jobs.
  std::vector<JobResult> jobs;
  /// Its files in DIR/point-NNN/ that could not be written: "cannot write PATH: REASON".
  std::vector<std::string> unwritten;
};

/// The sweep table: the same columns in sweep.csv, sweep.md and on stdout.
struct SweepTable {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  ///< numbers are right-aligned in the Markdown table
  std::vector<PointResult> rows;
};

/// The fixed columns after `point` and the varied keys (DESIGN.md §4 counter names). A sweep
/// in which some point's scenario has a `cost_model:` has one more, last: kCostColumn.
inline const std::vector<std::string> kMetricColumns = {"status",
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
                                                        "simulated_us",
                                                        "slowdown_p50",
                                                        "slowdown_p95",
                                                        "slowdown_p99"};
/// The cost proxy, results.json `fabric.cost_usd` exactly (shortest round-trip text); empty for
/// a point without a cost_model or without a report.
inline const std::string kCostColumn = "cost_usd";
/// A sweep whose scenarios have a `training:` step has these two after it: results.json
/// `training.step_ps` and `training.exposed_comm_ps` in milliseconds (empty where the step did
/// not finish).
inline const std::vector<std::string> kTrainingColumns = {"step_ms", "exposed_comm_ms"};
/// A sweep whose scenarios have `jobs:` has four columns per job name (in the order the points'
/// scenarios first name them), after the training columns: "jobs.NAME.time_us",
/// "jobs.NAME.busbw_GBps", "jobs.NAME.slowdown" and "jobs.NAME.overlap" (results.json
/// jobs[].collective.time_us and busbw_GBps, jobs[].slowdown and overlap, "%.3f"), empty at a
/// point without that job or where it has none.
inline const std::vector<std::string> kJobColumnSuffixes = {".time_us", ".busbw_GBps", ".slowdown",
                                                            ".overlap"};
/// A sweep with a topology axis has this last: the GPUs (hosts) of each point's fabric.
inline const std::string kGpusColumn = "gpus";

/// The shortest text that reads back as the same double (results.json writes doubles so too).
std::string number_text(double v);

/// "%.3f" of `v`.
std::string fixed3(double v);

/// The cells of one point after `point` and the varied values (kMetricColumns order). `rep` is
/// null when the simulation threw (`error` says what); cells that do not apply are empty.
/// `workload_sizes`: how many message sizes the point's workload has (0 without a workload);
/// the busbw cells are filled only when every one of them finished.
std::vector<std::string> metric_cells(size_t workload_sizes, const RunReport* rep, Outcome outcome,
                                      const std::string& error);

/// sweep.csv: the header, then one row a point.
void write_csv(std::ostream& out, const SweepTable& t);

/// A varied value longer than this is shown in sweep.md's table as "#k" (write_markdown_table).
inline constexpr size_t kLongValueChars = 40;

/// sweep.md's table (and stdout's): the header, then one row a point. A varied key's values
/// longer than kLongValueChars are "#1", "#2" … in the order met, each written out in a list
/// under the table ("- `jobs` #1: `[...]`").
void write_markdown_table(std::ostream& out, const SweepTable& t);

/// A shell word for the command line quoted in sweep.md.
std::string shell_word(const std::string& s);

/// "point-007": the point number zero-padded to the digits of the point count, at least 3.
std::string point_dir_name(int64_t point, int64_t points);

/// "k1=v1 k2=v2", for progress and messages.
std::string describe_values(const std::vector<SweepAxis>& axes,
                            const std::vector<std::string>& values);

}  // namespace fabricsim
