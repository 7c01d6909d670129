// The sweep table's columns and rows (sim/report/sweep_table.hpp) for a planned sweep: the
// columns its points call for, and each finished point's row with them.
#pragma once

#include <string>
#include <vector>

#include "sim/report/sweep_table.hpp"
#include "sim/sweep/sweep_plan.hpp"

namespace fabricsim {

/// The columns after the metrics that a sweep's points call for.
struct SweepColumns {
  bool cost = false;      ///< kCostColumn: some point's scenario has a `cost_model:`
  bool training = false;  ///< kTrainingColumns: some point's scenario has a `training:` step
  bool gpus = false;      ///< kGpusColumn: the sweep varies a topology key
  /// The job names of the points' scenarios, first named first: kJobColumnSuffixes each.
  std::vector<std::string> jobs;
};

/// The table's header: `point`, the varied keys, kMetricColumns, then the columns of `columns`
/// (set here from the plan's scenarios), right-aligned but for the keys and `status`.
SweepTable sweep_table_header(const SweepPlan& plan, SweepColumns& columns);

/// Replaces the rows of `table` with `finished` (in point order), each with the cells of
/// `columns` appended: the cost proxy (the point's own, else the one the plan computed), the
/// training step and exposed communication in ms, the GPUs of its fabric.
void tabulate_points(SweepTable& table, const std::vector<const PointResult*>& finished,
                     const SweepPlan& plan, const SweepColumns& columns);

/// sweep_perf.csv: point,wall_s,events,events_per_s, one line per row of `table`.
std::string sweep_perf_csv(const SweepTable& table);

}  // namespace fabricsim
