#include "sim/sweep/sweep_tabulate.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace fabricsim {

SweepTable sweep_table_header(const SweepPlan& plan, SweepColumns& columns) {
  SweepTable table;
  const std::vector<SweepAxis>& axes = plan.axes;
  const std::vector<Scenario>& scenarios = plan.scenarios;
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
  columns.cost = std::any_of(scenarios.begin(), scenarios.end(),
                             [](const Scenario& sc) { return !sc.cost_model.empty(); });
  if (columns.cost) {
    table.header.push_back(kCostColumn);
    table.right_aligned.push_back(true);
  }
  columns.training = std::any_of(scenarios.begin(), scenarios.end(),
                                 [](const Scenario& sc) { return sc.training.enabled; });
  if (columns.training) {
    for (const std::string& c : kTrainingColumns) {
      table.header.push_back(c);
      table.right_aligned.push_back(true);
    }
  }
  for (const Scenario& sc : scenarios) {
    for (const JobConfig& j : sc.jobs) {
      if (std::find(columns.jobs.begin(), columns.jobs.end(), j.name) == columns.jobs.end())
        columns.jobs.push_back(j.name);
    }
  }
  for (const std::string& name : columns.jobs) {
    for (const std::string& suffix : kJobColumnSuffixes) {
      table.header.push_back("jobs." + name + suffix);
      table.right_aligned.push_back(true);
    }
  }
  // Families and ratios do not all hold the same GPUs (a fat-tree's edge ratio changes its
  // host ports): the size of each point's cluster is part of reading its row.
  columns.gpus = plan.topology_axes;
  if (columns.gpus) {
    table.header.push_back(kGpusColumn);
    table.right_aligned.push_back(true);
  }
  return table;
}

void tabulate_points(SweepTable& table, const std::vector<const PointResult*>& finished,
                     const SweepPlan& plan, const SweepColumns& columns) {
  table.rows.clear();
  for (const PointResult* p : finished) {
    table.rows.push_back(*p);
    if (columns.cost) {
      const std::optional<double> cost =
          p->cost_usd ? p->cost_usd : plan.costs[static_cast<size_t>(p->point - 1)];
      table.rows.back().cells.push_back(cost ? number_text(*cost) : "");
    }
    if (columns.training) {
      const auto ms = [](const std::optional<int64_t>& ps) {
        return ps ? number_text(static_cast<double>(*ps) / 1e9) : std::string();
      };
      table.rows.back().cells.push_back(ms(p->step_ps));
      table.rows.back().cells.push_back(ms(p->exposed_comm_ps));
    }
    for (const std::string& name : columns.jobs) {
      const auto j = std::find_if(p->jobs.begin(), p->jobs.end(),
                                  [&](const JobResult& r) { return r.name == name; });
      for (const auto member : {&JobResult::time_us, &JobResult::busbw_GBps, &JobResult::slowdown,
                                &JobResult::overlap}) {
        const std::optional<double> v = j == p->jobs.end() ? std::nullopt : (*j).*member;
        table.rows.back().cells.push_back(v ? fixed3(*v) : std::string());
      }
    }
    if (columns.gpus) {
      const int64_t n = plan.gpus[static_cast<size_t>(p->point - 1)];
      table.rows.back().cells.push_back(n > 0 ? std::to_string(n) : std::string());
    }
  }
}

std::string sweep_perf_csv(const SweepTable& table) {
  std::ostringstream out;
  out << "point,wall_s,events,events_per_s\n";
  for (const PointResult& p : table.rows) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%lld,%.3f,%lld,%.0f\n", static_cast<long long>(p.point),
                  p.wall_s, static_cast<long long>(p.events),
                  p.wall_s > 0 ? static_cast<double>(p.events) / p.wall_s : 0.0);
    out << buf;
  }
  return out.str();
}

}  // namespace fabricsim
