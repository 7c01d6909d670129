// The fabric comparison of a sweep (`fabricsim sweep ... --out DIR --report`): report.md and
// report.html, one page per sweep.
//
// A sweep's points are grouped into fabrics and measurements. A fabric is one combination of
// the values of the --vary axes that are not workload.*, training.*, jobs, seed or mode
// (topology.kind x topology.oversubscription, say); those are what is measured on
// each fabric. Every number is set beside the first fabric's (the fabric of point 1, or of the
// first point that completed when that fabric has none) as a difference in %.
//
// Three steps, each testable alone:
//   compare_points()   the points' results.json values, by fabric and measurement
//                      (CompareData: numbers, their source point, why one is missing);
//   compare_document() the page: tables of text cells with their one-line "how to read",
//                      the "at a glance" lines, the notes (compare_document.cpp);
//   compare_plots()    gnuplot scripts and data for the plots (compare_plots.cpp);
//   compare_markdown() / compare_html() render the page (compare_render.cpp).
// Nothing here computes a result (DESIGN.md §2): the numbers are the points' own, and the
// differences are arithmetic on them. The output is deterministic: the same points give the
// same bytes (no time of day, no wall time, no folder names).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim {

/// One point of the sweep, as the comparison reads it.
struct ComparePoint {
  int64_t point = 0;                ///< 1-based, as sweep.csv's `point`
  std::vector<std::string> values;  ///< one per --vary axis, as written
  /// sweep.csv's `status` (complete, limited, deadlock, unbuildable, incomplete: …), or
  /// "not run" for a point the sweep stopped before starting.
  std::string status;
  std::string reason;     ///< why it did not complete ("" when it did)
  bool complete = false;  ///< it ran its whole workload: the tool stands behind its numbers
  std::optional<nlohmann::json> results;  ///< its results.json; nullopt when it wrote none
  /// sweep.csv `cost_usd`: known for every built point, also one that wrote no results.json.
  std::optional<double> cost_usd;
  /// sweep.csv `worst_port_p99_queue_bytes`: over every port (results.json lists at most
  /// kResultsJsonMaxPorts of them).
  std::optional<int64_t> worst_port_p99_queue_bytes;
};

/// What compare_points() reads.
struct CompareInput {
  std::string scenario;              ///< the scenario's name
  std::string command;               ///< the sweep's command line, as sweep.md quotes it
  std::vector<std::string> axes;     ///< the --vary keys, in order
  std::vector<ComparePoint> points;  ///< every point of the sweep, in point order
  bool training = false;             ///< some point's scenario has a `training:` step
};

/// One number of one fabric, and how it compares with the first fabric's.
struct CompareValue {
  std::optional<double> value;  ///< nullopt: not measured (`missing` says why)
  /// Why there is no value: the short status of the point that should have given it
  /// ("unbuildable", "limited", "deadlock", "incomplete", "not run"), or "not measured".
  std::string missing;
  bool doubtful = false;  ///< from a point that did not complete: the report marks it
  int64_t point = 0;      ///< the point it comes from (0: none)
  /// (value − first) / first × 100, first = the first fabric's value in the same row; nullopt
  /// for the first fabric itself, when either is missing, or when the first is 0 and this is
  /// not (a difference from 0 is not a percentage).
  std::optional<double> delta_pct;
};

/// One fabric: its --vary values and its parts, from its first point's results.json `fabric`.
struct CompareFabric {
  std::string label;            ///< "rail-optimized 1:1": the values, short
  std::string settings;         ///< "topology.kind=rail-optimized, topology.oversubscription=1"
  std::vector<int64_t> points;  ///< its points, in point order
  bool built = false;           ///< some point of it has a results.json
  std::string kind;
  int64_t gpus = 0, switches = 0, links = 0, bisection_bandwidth_bps = 0;
  double oversubscription = 0;
  CompareValue cost_usd;  ///< results.json fabric.cost_usd (the cost proxy); never doubtful
};

/// One size of one collective of one workload: busbw on every fabric.
struct CompareBusbw {
  std::string workload;  ///< the collective and the other workload.* values: "all_reduce"
  int64_t size_bytes = 0;
  bool largest = false;                  ///< the largest size of this workload
  std::vector<CompareValue> busbw_GBps;  ///< per fabric: results.json collectives[].busbw_GBps
  std::vector<std::string> algorithm;    ///< per fabric: "tree/ll128", as NCCL chose ("" none)
};

/// One job of the points with `jobs:` (per combination of the workload values, the jobs list
/// among them, and the job's name): its busbw beside the other jobs and its slowdown against
/// itself alone, on every fabric.
struct CompareJob {
  std::string workload;  ///< the workload values: "allreduce + alltoall" for a jobs list
  std::string job;       ///< its name
  std::string collective;
  int64_t ranks = 0, size_bytes = 0;
  std::vector<CompareValue> time_us;     ///< per fabric: results.json jobs[].collective.time_us
  std::vector<CompareValue> busbw_GBps;  ///< per fabric: results.json jobs[].collective.busbw_GBps
  std::vector<CompareValue> slowdown;    ///< per fabric: results.json jobs[].slowdown
  std::vector<CompareValue> overlap;     ///< per fabric: results.json jobs[].overlap (0 … 1)
};

/// One training step (per training.* combination): its time on every fabric.
struct CompareStep {
  std::string training;  ///< the training.* values ("" when none is varied)
  std::string shape;     ///< "dp 64 x tp 8 x pp 1 = 512 GPUs, 1 layer, 1 microbatch, 3 DDP buckets"
  std::vector<CompareValue> step_ms, exposed_comm_ms, gpu_utilization_pct;  ///< per fabric
  /// Points of one fabric whose step times differ (the table shows the first one's).
  std::vector<std::string> notes;
};

/// One measurement (per combination of the workload.* and training.* values): the queue and PFC
/// counters of each fabric's point, over its whole run.
struct CompareQueues {
  std::string workload;  ///< the measured values ("" when none is varied)
  std::vector<CompareValue> max_queue_bytes, worst_port_p99_bytes, pfc_pause_frames,
      pfc_paused_us;  ///< per fabric: counters.max_queue_bytes, sweep.csv's worst port p99,
                      ///< counters.pfc_pause_tx, counters.paused_ps in µs
};

/// A point that did not complete, or never ran.
struct CompareProblem {
  int64_t point = 0;
  std::string fabric, workload, status, reason;
};

/// The comparison, numbers only (compare_document() makes it text).
struct CompareData {
  std::string scenario, command;
  std::vector<std::string> fabric_axes, measured_axes;  ///< the --vary keys of each kind
  int64_t points = 0;
  std::string seed;  ///< the points' seed ("1"), "varied", or "" when no point has results
  std::string mode;  ///< "packet" or "flow" (results.json `mode`), "" when unknown
  std::vector<CompareFabric> fabrics;  ///< in the order of their first point
  std::vector<CompareBusbw> busbw;     ///< by workload in first-seen order, sizes ascending
  std::vector<CompareJob> jobs;        ///< empty when no point's scenario has jobs
  std::vector<CompareStep> steps;      ///< empty when no point's scenario has a training step
  std::vector<CompareQueues> queues;
  std::vector<CompareProblem> problems;
  bool doubtful = false;  ///< some value shown is from a point that did not complete
};

/// Groups the points into fabrics and measurements and reads their numbers. A fabric's number
/// is its first point's (in point order) that has it; a point that did not complete still
/// gives the numbers its results.json has, marked doubtful. Throws nothing for odd results
/// files: a field missing or of the wrong type counts as not measured.
CompareData compare_points(const CompareInput& in);

/// A table cell: text, and how it compares with the first fabric (for the HTML's colours).
struct CompareCell {
  std::string text;
  int tone = 0;  ///< +1 better than the first fabric, -1 worse, 0 neither or not a difference
};

/// A table of the page with its one-line "how to read it".
struct CompareTable {
  std::string id;           ///< "cost", "busbw", "step", "queues", "problems"
  std::string title;        ///< the section heading
  std::string how_to_read;  ///< one sentence under the heading
  std::vector<std::string> header;
  std::vector<bool> numeric;  ///< per column: right-aligned
  std::vector<std::vector<CompareCell>> rows;
  std::vector<std::string> notes;  ///< lines under the table
};

/// A plot: gnuplot draws STEM.svg from STEM.gp and STEM.dat in the report's folder.
struct ComparePlot {
  std::string stem;         ///< "report-busbw"
  std::string after_table;  ///< the id of the table it is drawn under
  std::string title;
  std::string how_to_read;  ///< one sentence under it
  std::string gp, dat;
};

/// The page, as text: rendered alike in Markdown and HTML.
struct CompareDocument {
  std::string title;
  std::vector<std::string> intro;   ///< paragraphs; `code` spans in backquotes
  std::vector<std::string> glance;  ///< the "at a glance" lines
  std::vector<CompareTable> tables;
  std::vector<ComparePlot> plots;
  std::vector<std::string> notes;  ///< the page's footnotes
};

/// The page of `d`: the cost, busbw, training step, queue and problem tables, the glance lines.
CompareDocument compare_document(const CompareData& d);

/// The plots of `d` (busbw bars per fabric and workload, cost against busbw, the step time of
/// each fabric), each with its gnuplot script and data; none for data without the numbers.
std::vector<ComparePlot> compare_plots(const CompareData& d);

/// The SVGs gnuplot drew, by plot stem, for the renderers; a plot without one is said to be
/// missing, with `missing[stem]` the reason ("gnuplot is not on PATH").
struct CompareFigures {
  std::map<std::string, std::string> svg;
  std::map<std::string, std::string> missing;
};

/// report.md: the page in GitHub Markdown, the plots as links to STEM.svg beside it.
std::string compare_markdown(const CompareDocument& doc, const CompareFigures& figures);

/// report.html: the page as one self-contained HTML file, the plots inline as SVG (ids made
/// unique per plot), no scripts and nothing loaded from elsewhere.
std::string compare_html(const CompareDocument& doc, const CompareFigures& figures);

}  // namespace fabricsim
