// compare_document(): the comparison as a page of text tables (compare.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/core/units.hpp"
#include "sim/report/compare.hpp"

namespace fabricsim {
namespace {

/// Marks a number the tool cannot stand behind (from a point that did not complete).
const char* const kMark = " \u2020";  // " †"

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// 1282240 -> "1,282,240" (rounded to a whole number).
std::string grouped(double v) {
  const long long n = std::llround(v);
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

/// Bytes in decimal units, as queue depths are read: "740 B", "18.4 KB", "11.22 MB".
std::string bytes_text(double b) {
  if (b < 1e3) return fixed(b, 0) + " B";
  if (b < 1e6) return fixed(b / 1e3, 1) + " KB";
  return fixed(b / 1e6, 2) + " MB";
}

/// A message size as nccl-tests users read it: "16 MiB", "64 KiB", "1000 B".
std::string size_text(int64_t bytes) {
  return format_size(bytes);
}

enum class Better { kHigher, kLower };

/// A value's cell: the number as `format` writes it (marked when doubtful), or why it is missing.
template <class Format>
CompareCell value_cell(const CompareValue& v, Format format) {
  if (!v.value) return {v.missing, 0};
  return {format(*v.value) + (v.doubtful ? kMark : ""), 0};
}

/// The difference of `v` from the first fabric's value `base`, "+3.2 %", toned by `better`.
CompareCell delta_cell(const CompareValue& v, const CompareValue& base, Better better) {
  if (!v.value) return {"", 0};
  if (!v.delta_pct) return {"n/a", 0};
  const double d = *v.delta_pct;
  std::string t = fixed(d, 1);
  if (t == "-0.0") t = "0.0";
  if (t[0] != '-' && t != "0.0") t = "+" + t;
  t += " %";
  if (v.doubtful || base.doubtful) t += kMark;
  int tone = 0;
  // Under 1 % the runs are read as equal (ECMP's hash and the packets' interleaving move
  // numbers by that much between fabrics that do not differ where it matters).
  if (std::fabs(d) >= 1.0) tone = ((d > 0) == (better == Better::kHigher)) ? 1 : -1;
  return {t, tone};
}

/// The value and difference cells of fabric `f` in `row`.
template <class Format>
void value_and_delta(std::vector<CompareCell>& cells, const std::vector<CompareValue>& row,
                     size_t f, Format format, Better better) {
  cells.push_back(value_cell(row[f], format));
  cells.push_back(f == 0 ? CompareCell{"", 0} : delta_cell(row[f], row[0], better));
}

/// The best value of a row, among numbers of points that completed.
struct Best {
  std::string names;  ///< the fabrics that have it (ties: the same text under the format)
  size_t at = 0;      ///< the first of them
  std::string near;   ///< the other fabrics within 1 % of it ("" none): read as equal
};

/// The fabrics with the best value of `row`; nullopt when none has a number to stand behind.
template <class Format>
std::optional<Best> best_of(const CompareData& d, const std::vector<CompareValue>& row,
                            Better better, Format format) {
  std::optional<double> best;
  for (const CompareValue& v : row) {
    if (!v.value || v.doubtful) continue;
    if (!best || (better == Better::kHigher ? *v.value > *best : *v.value < *best)) best = v.value;
  }
  if (!best) return std::nullopt;
  Best b;
  b.at = row.size();
  for (size_t f = 0; f < row.size(); ++f) {
    if (!row[f].value || row[f].doubtful) continue;
    if (format(*row[f].value) == format(*best)) {
      b.names += (b.names.empty() ? "" : ", ") + d.fabrics[f].label;
      if (b.at == row.size()) b.at = f;
    } else if (std::fabs(*row[f].value - *best) <= 0.01 * std::fabs(*best)) {
      b.near += (b.near.empty() ? "" : ", ") + d.fabrics[f].label;
    }
  }
  return b;
}

/// "; within 1 % of it: X, Y" when other fabrics are that close.
std::string near_text(const Best& b) {
  return b.near.empty() ? "" : "; within 1 % of it: " + b.near;
}

/// ", +1.2 % against FIRST" for a glance line; "" when `base` (the first fabric's value in the
/// same row) is from a point that did not complete: the glance lines stand on complete points.
std::string pct_against(const CompareValue& v, const CompareValue& base, const std::string& first) {
  if (!v.delta_pct || base.doubtful || v.doubtful) return "";
  std::string t = fixed(*v.delta_pct, 1);
  if (t == "-0.0") t = "0.0";
  if (t[0] != '-' && t != "0.0") t = "+" + t;
  return ", " + t + " % against " + first;
}

}  // namespace

CompareDocument compare_document(const CompareData& d) {
  CompareDocument doc;
  const std::string first =
      d.fabrics.empty() ? std::string("the first fabric") : d.fabrics.front().label;
  doc.title = "Fabric comparison: " + d.scenario;
  doc.intro.push_back("`" + d.command + " --out DIR --report`");
  std::string what = "Scenario " + d.scenario + (d.seed.empty() ? "" : ", seed " + d.seed) + ", " +
                     std::to_string(d.points) + " point" + (d.points == 1 ? "" : "s") + ": " +
                     std::to_string(d.fabrics.size()) + " fabric" +
                     (d.fabrics.size() == 1 ? "" : "s");
  if (d.fabric_axes.empty()) {
    what += " (the scenario's own: no --vary axis outside workload.*, training.*, seed and mode)";
  } else {
    std::string keys;
    for (const std::string& k : d.fabric_axes) keys += (keys.empty() ? "`" : "` x `") + k;
    what += " (each combination of " + keys + "`)";
  }
  if (!d.measured_axes.empty()) {
    std::string keys;
    for (const std::string& k : d.measured_axes) keys += (keys.empty() ? "`" : "`, `") + k;
    what += ", each measured on every value of " + keys + "`";
  }
  what += ". Every difference in % is against the first fabric, " + first + ".";
  if (d.mode == "flow") {
    what += " Flow mode: links shared max-min fair; queues, PFC and drops are not modelled.";
  }
  doc.intro.push_back(what);

  const auto usd = [](double v) { return grouped(v); };
  const auto gbps = [](double v) { return fixed(v, 2); };
  const auto ms = [](double v) { return fixed(v, 3); };
  const auto pct = [](double v) { return fixed(v, 1); };
  const auto bytes = [](double v) { return bytes_text(v); };
  const auto count = [](double v) { return grouped(v); };
  const auto us = [](double v) { return fixed(v, 1); };

  // ---- at a glance
  {
    std::vector<CompareValue> costs;
    for (const CompareFabric& f : d.fabrics) costs.push_back(f.cost_usd);
    if (const auto cheapest = best_of(d, costs, Better::kLower, usd)) {
      doc.glance.push_back("Lowest cost proxy: " + cheapest->names + " (USD " +
                           usd(*costs[cheapest->at].value) +
                           pct_against(costs[cheapest->at], costs.front(), first) + ").");
    } else {
      doc.glance.push_back(
          "No cost proxy: the scenario has no `cost_model:` (see `fabricsim topo`).");
    }
    for (const CompareBusbw& b : d.busbw) {
      if (!b.largest) continue;
      const auto best = best_of(d, b.busbw_GBps, Better::kHigher, gbps);
      if (!best) continue;
      const CompareValue& v = b.busbw_GBps[best->at];
      doc.glance.push_back("Highest " + b.workload + " busbw at " + size_text(b.size_bytes) + ": " +
                           best->names + " (" + gbps(*v.value) + " GB/s" +
                           pct_against(v, b.busbw_GBps.front(), first) + ")" + near_text(*best) +
                           ".");
    }
    for (const CompareJob& j : d.jobs) {
      if (j.collective == "training_step") {  // no busbw: its step time
        const auto best = best_of(d, j.time_us, Better::kLower, us);
        if (!best) continue;
        const CompareValue& v = j.time_us[best->at];
        doc.glance.push_back("Shortest step of training job " + j.job + " (" + j.workload +
                             "): " + best->names + " (" + us(*v.value) + " us" +
                             pct_against(v, j.time_us.front(), first) + ")" + near_text(*best) +
                             ".");
        continue;
      }
      const auto best = best_of(d, j.busbw_GBps, Better::kHigher, gbps);
      if (!best) continue;
      const CompareValue& v = j.busbw_GBps[best->at];
      const CompareValue& slow = j.slowdown[best->at];
      doc.glance.push_back("Highest busbw of job " + j.job + " (" + j.workload +
                           "): " + best->names + " (" + gbps(*v.value) + " GB/s" +
                           pct_against(v, j.busbw_GBps.front(), first) +
                           (slow.value ? ", " + fixed(*slow.value, 2) + "x its time alone" : "") +
                           ")" + near_text(*best) + ".");
    }
    for (const CompareStep& s : d.steps) {
      const auto best = best_of(d, s.step_ms, Better::kLower, ms);
      if (!best) continue;
      doc.glance.push_back("Shortest training step" +
                           (s.training.empty() ? std::string() : " (" + s.training + ")") + ": " +
                           best->names + " (" + ms(*s.step_ms[best->at].value) + " ms" +
                           pct_against(s.step_ms[best->at], s.step_ms.front(), first) +
                           ", GPU utilization " + pct(*s.gpu_utilization_pct[best->at].value) +
                           " %)" + near_text(*best) + ".");
    }
    if (!d.problems.empty()) {
      doc.glance.push_back(std::to_string(d.problems.size()) + " of " + std::to_string(d.points) +
                           " points did not complete: their numbers are missing or marked" + kMark +
                           " (last table).");
    }
  }

  // ---- fabrics and cost
  {
    CompareTable t;
    t.id = "cost";
    t.title = "Fabrics and cost proxy";
    const bool costs = std::any_of(d.fabrics.begin(), d.fabrics.end(),
                                   [](const CompareFabric& f) { return f.cost_usd.value; });
    t.how_to_read =
        costs ? "Lower cost is better: the unit prices of the scenario's `cost_model:` times the "
                "fabric's switch ports, NICs and cables (as `fabricsim topo` prints it); the % "
                "column compares each fabric with " +
                    first + "."
              : "The scenario has no `cost_model:`, so there is no cost proxy; the table lists "
                "what each fabric is built from.";
    t.header = {"fabric",           "points",           "GPUs",     "switches", "links",
                "bisection (Tb/s)", "cost proxy (USD)", "vs first", "settings"};
    t.numeric = {false, false, true, true, true, true, true, true, false};
    std::vector<CompareValue> costs_row;
    for (const CompareFabric& f : d.fabrics) costs_row.push_back(f.cost_usd);
    for (size_t f = 0; f < d.fabrics.size(); ++f) {
      const CompareFabric& fab = d.fabrics[f];
      std::string points;
      for (const int64_t p : fab.points) points += (points.empty() ? "" : ", ") + std::to_string(p);
      std::vector<CompareCell> row = {{fab.label, 0}, {points, 0}};
      if (fab.built) {
        row.push_back({std::to_string(fab.gpus), 0});
        row.push_back({std::to_string(fab.switches), 0});
        row.push_back({std::to_string(fab.links), 0});
        row.push_back({fixed(static_cast<double>(fab.bisection_bandwidth_bps) / 1e12, 1), 0});
      } else {
        for (int i = 0; i < 4; ++i) row.push_back({i == 0 ? fab.cost_usd.missing : "", 0});
      }
      value_and_delta(row, costs_row, f, usd, Better::kLower);
      row.push_back({fab.settings, 0});
      t.rows.push_back(row);
    }
    doc.tables.push_back(t);
  }

  // ---- busbw
  if (!d.busbw.empty()) {
    CompareTable t;
    t.id = "busbw";
    t.title = "Collective bus bandwidth";
    t.how_to_read =
        "Higher busbw is better (nccl-tests' bus bandwidth, GB = 10^9 B; NCCL's algorithm and "
        "protocol as it chose them); the % column compares each fabric with " +
        first + " on the same workload and message size.";
    if (!d.problems.empty()) {
      t.notes.push_back(
          "A size that no fabric's point finished has no row: the points that "
          "stopped, and where, are in the last table.");
    }
    t.header = {"workload", "size", "fabric", "NCCL algorithm", "busbw (GB/s)", "vs first"};
    t.numeric = {false, true, false, false, true, true};
    for (const CompareBusbw& b : d.busbw) {
      for (size_t f = 0; f < d.fabrics.size(); ++f) {
        std::vector<CompareCell> row = {{b.workload, 0},
                                        {size_text(b.size_bytes), 0},
                                        {d.fabrics[f].label, 0},
                                        {b.algorithm[f], 0}};
        value_and_delta(row, b.busbw_GBps, f, gbps, Better::kHigher);
        t.rows.push_back(row);
      }
    }
    doc.tables.push_back(t);
  }

  // ---- jobs
  if (!d.jobs.empty()) {
    CompareTable t;
    t.id = "jobs";
    t.title = "Jobs sharing the fabric";
    t.how_to_read =
        "Each job's time and busbw beside the other jobs of its list (one iteration, the mean; "
        "a training job has a step time and no busbw), and its slowdown: its time there over "
        "its time alone on the same servers (1.00x: the others cost it nothing; lower is "
        "better). Overlap is the share of its time another job was running: a slowdown is that "
        "of the overlap, so compare jobs that overlap about as much (iterations lengthen a "
        "short job). The % columns compare each fabric with " +
        first + " on the same jobs.";
    t.header = {"jobs",         "job",      "collective", "fabric",   "time (us)", "vs first",
                "busbw (GB/s)", "vs first", "slowdown",   "vs first", "overlap"};
    t.numeric = {false, false, false, false, true, true, true, true, true, true, true};
    const auto times = [](double v) { return fixed(v, 2) + "x"; };
    for (const CompareJob& j : d.jobs) {
      // A training job has no size: its step's collectives are NCCL's to size.
      const std::string what =
          (j.collective == "training_step" ? std::string("training step")
                                           : j.collective + " " + size_text(j.size_bytes)) +
          ", " + std::to_string(j.ranks) + " GPUs";
      for (size_t f = 0; f < d.fabrics.size(); ++f) {
        std::vector<CompareCell> row = {
            {j.workload, 0}, {j.job, 0}, {what, 0}, {d.fabrics[f].label, 0}};
        value_and_delta(row, j.time_us, f, us, Better::kLower);
        value_and_delta(row, j.busbw_GBps, f, gbps, Better::kHigher);
        value_and_delta(row, j.slowdown, f, times, Better::kLower);
        row.push_back(value_cell(j.overlap[f], [](double v) { return fixed(100 * v, 0) + " %"; }));
        t.rows.push_back(row);
      }
    }
    doc.tables.push_back(t);
  }

  // ---- training step
  if (!d.steps.empty()) {
    CompareTable t;
    t.id = "step";
    t.title = "Training step";
    const bool variants = std::any_of(d.steps.begin(), d.steps.end(),
                                      [](const CompareStep& s) { return !s.training.empty(); });
    std::string shapes;
    for (const CompareStep& s : d.steps) {
      if (!s.shape.empty() && shapes.find(s.shape) == std::string::npos)
        shapes += (shapes.empty() ? "" : "; ") + s.shape;
    }
    t.how_to_read =
        "One training step (" + (shapes.empty() ? std::string("it did not finish") : shapes) +
        ") replayed on each fabric: a shorter step, less exposed communication and a higher GPU "
        "utilization are better; the % columns compare with " +
        first + " (relative differences, utilization too).";
    t.header = {"fabric",   "step (ms)",           "vs first", "exposed communication (ms)",
                "vs first", "GPU utilization (%)", "vs first"};
    t.numeric = {false, true, true, true, true, true, true};
    if (variants) {
      t.header.insert(t.header.begin(), "training");
      t.numeric.insert(t.numeric.begin(), false);
    }
    for (const CompareStep& s : d.steps) {
      for (size_t f = 0; f < d.fabrics.size(); ++f) {
        std::vector<CompareCell> row;
        if (variants) row.push_back({s.training, 0});
        row.push_back({d.fabrics[f].label, 0});
        value_and_delta(row, s.step_ms, f, ms, Better::kLower);
        value_and_delta(row, s.exposed_comm_ms, f, ms, Better::kLower);
        value_and_delta(row, s.gpu_utilization_pct, f, pct, Better::kHigher);
        t.rows.push_back(row);
      }
      t.notes.insert(t.notes.end(), s.notes.begin(), s.notes.end());
    }
    doc.tables.push_back(t);
  }

  // ---- queues and PFC
  if (!d.queues.empty()) {
    CompareTable t;
    t.id = "queues";
    t.title = "Queues and PFC";
    t.how_to_read =
        "Lower is better: the deepest switch egress queue of each point's whole run (its "
        "collective sizes and training step), the worst port's time-weighted p99 occupancy, the "
        "PFC pause frames sent and the time egress queues spent paused (summed over queues); the "
        "% columns compare with " +
        first + ", n/a where its value is 0 and the other's is not.";
    if (d.mode == "flow") t.notes.push_back("Flow mode: queues and PFC are not modelled (0).");
    const bool variants = std::any_of(d.queues.begin(), d.queues.end(),
                                      [](const CompareQueues& q) { return !q.workload.empty(); });
    t.header = {"fabric",   "max queue",        "vs first", "worst port p99",
                "vs first", "PFC pause frames", "vs first", "PFC pause time (us)",
                "vs first"};
    t.numeric = {false, true, true, true, true, true, true, true, true};
    if (variants) {
      t.header.insert(t.header.begin(), "workload");
      t.numeric.insert(t.numeric.begin(), false);
    }
    for (const CompareQueues& q : d.queues) {
      for (size_t f = 0; f < d.fabrics.size(); ++f) {
        std::vector<CompareCell> row;
        if (variants) row.push_back({q.workload, 0});
        row.push_back({d.fabrics[f].label, 0});
        value_and_delta(row, q.max_queue_bytes, f, bytes, Better::kLower);
        value_and_delta(row, q.worst_port_p99_bytes, f, bytes, Better::kLower);
        value_and_delta(row, q.pfc_pause_frames, f, count, Better::kLower);
        value_and_delta(row, q.pfc_paused_us, f, us, Better::kLower);
        t.rows.push_back(row);
      }
    }
    doc.tables.push_back(t);
  }

  // ---- points that did not complete
  {
    CompareTable t;
    t.id = "problems";
    t.title = "Points that did not complete";
    t.how_to_read =
        d.problems.empty()
            ? "None: every point ran its whole workload, so every number above is one the "
              "simulator stands behind."
            : "Every point that did not run to the end, and why (sweep.csv has its row); what it "
              "measured before it stopped is marked" +
                  std::string(kMark) + " above, what it did not measure names its status.";
    t.header = {"point", "fabric", "workload", "status", "reason"};
    t.numeric = {true, false, false, false, false};
    for (const CompareProblem& p : d.problems) {
      t.rows.push_back({{std::to_string(p.point), 0},
                        {p.fabric, 0},
                        {p.workload.empty() ? "-" : p.workload, 0},
                        {p.status, 0},
                        {p.reason, 0}});
    }
    doc.tables.push_back(t);
  }

  if (d.doubtful) {
    doc.notes.push_back(
        std::string(kMark + 1) +
        " from a point that did not complete (status limited, deadlock, interrupted, …): the "
        "run stopped before its workload was done, so the simulator cannot stand behind the "
        "number; a difference computed from it is marked too.");
  }
  doc.notes.push_back(
      "In report.html a difference of 1 % or more is green where it is better than the first "
      "fabric and red where it is worse; under 1 %, read the fabrics as equal.");
  doc.notes.push_back(
      "Numbers from each point's results.json (DIR/point-NNN/); sweep.csv has every point's row. "
      "Same sweep and seed, same report.");
  doc.plots = compare_plots(d);
  return doc;
}

}  // namespace fabricsim
