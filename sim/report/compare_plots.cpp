// compare_plots(): gnuplot scripts and data for the comparison's plots (compare.hpp). gnuplot
// draws each STEM.svg from STEM.gp and STEM.dat in the report's folder.
#include <algorithm>
#include <charconv>

#include "sim/core/units.hpp"
#include "sim/report/compare.hpp"
#include "sim/report/gnuplot_text.hpp"

namespace fabricsim {
namespace {

/// The shortest text that reads back as the same double.
std::string num(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

/// A value the plots draw: measured by a point that completed (the tables mark the others).
bool drawable(const CompareValue& v) {
  return v.value && !v.doubtful;
}

/// A drawable value's number, else "NaN" (gnuplot leaves it out: `set datafile missing 'NaN'`).
std::string num(const CompareValue& v) {
  return drawable(v) ? num(*v.value) : "NaN";
}

std::string size_text(int64_t bytes) {
  return format_size(bytes);
}

/// The SVG terminal: a fixed size (the HTML scales it), labels as written (no enhanced text:
/// names have underscores).
std::string terminal(int width, int height) {
  return "set terminal svg size " + std::to_string(width) + "," + std::to_string(height) +
         " noenhanced font 'Helvetica,12' background rgb 'white'\n";
}

/// The top of the y axis: the largest value and room above it for the value labels.
std::string yrange(double largest) {
  return "set yrange [0:" + num(largest > 0 ? largest * 1.15 : 1.0) + "]\n";
}

std::string head(const std::string& scenario, const std::string& what, const std::string& stem) {
  return gp_comment("fabricsim sweep " + scenario + " --report: " + what) +
         gp_comment("data: " + stem + ".dat; run `gnuplot " + stem +
                    ".gp` in this folder to draw " + stem + ".svg");
}

/// What the busbw plots draw: each workload at its largest size, then each job beside the
/// others of its list.
struct BusbwGroup {
  std::string label;  ///< "all_reduce 16 MiB", "job allreduce (allreduce + alltoall)"
  const std::vector<CompareValue>* busbw_GBps;
};
std::vector<BusbwGroup> busbw_groups(const CompareData& d) {
  std::vector<BusbwGroup> out;
  for (const CompareBusbw& b : d.busbw) {
    if (b.largest) out.push_back({b.workload + " " + size_text(b.size_bytes), &b.busbw_GBps});
  }
  for (const CompareJob& j : d.jobs) {
    out.push_back({"job " + j.job + " (" + j.workload + ")", &j.busbw_GBps});
  }
  return out;
}

/// The table a busbw plot follows: the collectives', else the jobs'.
std::string busbw_table(const CompareData& d) {
  return d.busbw.empty() ? "jobs" : "busbw";
}

/// Grouped bars: busbw at each workload's largest size, one bar per fabric.
std::optional<ComparePlot> busbw_plot(const CompareData& d) {
  std::vector<BusbwGroup> rows;
  for (const BusbwGroup& b : busbw_groups(d)) {
    if (std::any_of(b.busbw_GBps->begin(), b.busbw_GBps->end(), drawable)) rows.push_back(b);
  }
  if (rows.empty()) return std::nullopt;
  ComparePlot p;
  p.stem = "report-busbw";
  p.after_table = busbw_table(d);
  p.title = "busbw per fabric at each workload's largest message size";
  p.how_to_read =
      "Taller bars are better: one group per workload (a job: its busbw beside the other jobs "
      "of its list), one bar per fabric in the order of the tables, the busbw on top of each "
      "bar (the plots draw only numbers of points that completed).";
  const size_t n = d.fabrics.size();
  p.dat = gp_comment("fabricsim sweep " + d.scenario + " --report: " + p.title);
  p.dat += "# columns: workload and size, then busbw_GBps of each fabric (NaN: not measured):";
  for (const CompareFabric& f : d.fabrics) {
    p.dat += ' ';
    p.dat += dat_string(f.label);
  }
  p.dat += "\n";
  double largest = 0;
  for (const BusbwGroup& b : rows) {
    p.dat += dat_string(b.label);
    for (const CompareValue& v : *b.busbw_GBps) {
      p.dat += ' ';
      p.dat += num(v);
      if (drawable(v)) largest = std::max(largest, *v.value);
    }
    p.dat += "\n";
  }
  std::string& gp = p.gp;
  gp += head(d.scenario, p.title, p.stem);
  gp += terminal(900, 440);
  gp += "set output '" + p.stem + ".svg'\n";
  gp += "set title " + gp_string(p.title) + "\n";
  gp += "set datafile missing 'NaN'\n";
  gp += "set style data histograms\nset style histogram clustered gap 1\n";
  gp += "set style fill solid 0.85 border rgb 'black'\nset boxwidth 1\n";
  gp += "set ylabel 'busbw (GB/s)'\n" + yrange(largest);
  gp += "set grid ytics\nset key below\nset xtics nomirror\n";
  // Groups at x = 0, 1, ...; each n / (n + 1) wide: a margin of 0.1 beyond the outer bars.
  gp += "set xrange [-0.6:" + num(static_cast<double>(rows.size()) - 0.4) + "]\n";
  // Clustered bars: group j at x = j, bar i of n at j + (i - (n-1)/2) / (n + gap), gap 1.
  std::string plots;
  for (size_t f = 0; f < n; ++f) {
    const std::string col = std::to_string(f + 2);
    plots += std::string(plots.empty() ? "plot " : ", \\\n     ") + "'" + p.stem + ".dat' using " +
             col + (f == 0 ? ":xtic(1)" : "") + " title " + gp_string(d.fabrics[f].label);
  }
  for (size_t f = 0; f < n; ++f) {
    std::string col = "$";
    col += std::to_string(f + 2);
    const double offset =
        (static_cast<double>(f) - (static_cast<double>(n) - 1) / 2) / (static_cast<double>(n) + 1);
    plots += ", \\\n     '" + p.stem + ".dat' using ($0" + (offset < 0 ? "" : "+") + num(offset) +
             "):(" + col + "):(sprintf('%.1f', " + col +
             ")) with labels offset 0,0.7 font ',10' notitle";
  }
  gp += plots + "\n";
  return p;
}

/// Cost against busbw: one panel per workload (at its largest size, on its own busbw scale),
/// one marker per fabric in the fabric's colour of the bar plot.
std::optional<ComparePlot> cost_plot(const CompareData& d) {
  std::vector<double> costs;
  for (const CompareFabric& f : d.fabrics) {
    if (f.cost_usd.value && std::find(costs.begin(), costs.end(), *f.cost_usd.value) == costs.end())
      costs.push_back(*f.cost_usd.value);
  }
  if (costs.size() < 2) return std::nullopt;  // one price: nothing to weigh against
  ComparePlot p;
  p.stem = "report-cost";
  p.after_table = busbw_table(d);
  p.title = "cost proxy against busbw at each workload's largest message size";
  p.how_to_read =
      "Up and to the left is better: more bandwidth for less money; one panel per workload, on "
      "its own busbw scale, one marker per fabric in the colours of the bars above.";
  p.dat = gp_comment("fabricsim sweep " + d.scenario + " --report: " + p.title);
  p.dat +=
      "# one block per workload (gnuplot `index`), one row per fabric in the tables' order; "
      "columns: cost_musd (cost proxy, million USD) busbw_GBps fabric (NaN: not drawn)\n";
  std::vector<std::string> panels;  // each panel's plot command
  for (const BusbwGroup& b : busbw_groups(d)) {
    std::string rows;
    bool any = false;
    for (size_t f = 0; f < d.fabrics.size(); ++f) {
      const CompareValue& v = (*b.busbw_GBps)[f];
      const CompareValue& c = d.fabrics[f].cost_usd;
      const bool drawn = drawable(v) && c.value;
      any = any || drawn;
      rows += (drawn ? num(*c.value / 1e6) + " " + num(v) : std::string("NaN NaN")) + " " +
              dat_string(d.fabrics[f].label) + "\n";
    }
    if (!any) continue;  // gnuplot refuses a panel without a point
    const std::string& what = b.label;
    p.dat += "\n\n" + gp_comment(what) + rows;
    std::string plot = "set title " + gp_string(what) + "\nplot ";
    const int point_types[] = {7, 5, 9, 11, 13, 15};
    for (size_t f = 0; f < d.fabrics.size(); ++f) {
      plot += std::string(f == 0 ? "" : ", \\\n     ") + "'" + p.stem + ".dat' index " +
              std::to_string(panels.size()) + " every ::" + std::to_string(f) +
              "::" + std::to_string(f) + " using 1:2 with points lt " + std::to_string(f + 1) +
              " pt " + std::to_string(point_types[f % 6]) + " ps 2 title " +
              gp_string(d.fabrics[f].label);
    }
    panels.push_back(plot + "\n");
  }
  if (panels.empty()) return std::nullopt;
  const size_t cols = std::min<size_t>(panels.size(), 3);
  const size_t rows = (panels.size() + cols - 1) / cols;
  std::string& gp = p.gp;
  gp += head(d.scenario, p.title, p.stem);
  gp += terminal(900, static_cast<int>(440 * rows));
  gp += "set output '" + p.stem + ".svg'\n";
  gp += "set datafile missing 'NaN'\n";
  gp += "set multiplot layout " + std::to_string(rows) + "," + std::to_string(cols) + " title " +
        gp_string(p.title) + "\n";
  gp += "set xlabel 'cost proxy (million USD)'\nset ylabel 'busbw (GB/s)'\n";
  gp += "set offsets graph 0.15, graph 0.15, graph 0.15, graph 0.15\nset grid\nset key below\n";
  for (const std::string& panel : panels) gp += panel;
  gp += "unset multiplot\n";
  return p;
}

/// Stacked bars: each fabric's step time, its compute below and its exposed communication above.
std::optional<ComparePlot> step_plot(const CompareData& d) {
  bool any = false;
  for (const CompareStep& s : d.steps) {
    any = any || std::any_of(s.step_ms.begin(), s.step_ms.end(), drawable);
  }
  if (!any) return std::nullopt;
  ComparePlot p;
  p.stem = "report-step";
  p.after_table = "step";
  p.title = "training step time per fabric";
  p.how_to_read =
      "Shorter bars are better: the step's compute below (step minus exposed "
      "communication) and its exposed communication above, the step time on top.";
  p.dat = gp_comment("fabricsim sweep " + d.scenario + " --report: " + p.title);
  p.dat +=
      "# columns: fabric, compute_ms (step - exposed communication), exposed_comm_ms "
      "(NaN: no step)\n";
  double largest = 0;
  for (const CompareStep& s : d.steps) {
    for (size_t f = 0; f < d.fabrics.size(); ++f) {
      const CompareValue& step = s.step_ms[f];
      const CompareValue& exposed = s.exposed_comm_ms[f];
      const std::string label =
          d.fabrics[f].label + (s.training.empty() ? std::string() : " " + s.training);
      p.dat += dat_string(label) + " ";
      if (drawable(step) && drawable(exposed)) {
        largest = std::max(largest, *step.value);
        p.dat += num(*step.value - *exposed.value) + " " + num(exposed) + "\n";
      } else {
        p.dat += "NaN NaN\n";
      }
    }
  }
  std::string& gp = p.gp;
  gp += head(d.scenario, p.title, p.stem);
  gp += terminal(900, 420);
  gp += "set output '" + p.stem + ".svg'\n";
  gp += "set title " + gp_string(p.title) + "\n";
  gp += "set datafile missing 'NaN'\n";
  gp += "set style data histograms\nset style histogram rowstacked\n";
  gp += "set style fill solid 0.85 border rgb 'black'\nset boxwidth 0.6\n";
  gp += "set ylabel 'time (ms)'\n" + yrange(largest);
  gp += "set grid ytics\nset key below\nset xtics nomirror\n";
  // Colours of their own: the bar plot's colours stand for fabrics.
  gp += "plot '" + p.stem + ".dat' using 2:xtic(1) lc rgb '#a0a0a0' title 'compute', \\\n     '" +
        p.stem + ".dat' using 3 lc rgb '#c0392b' title 'exposed communication', \\\n     '" +
        p.stem +
        ".dat' using 0:($2+$3):(sprintf('%.3f ms', $2+$3)) with labels offset 0,0.7 font ',10' "
        "notitle\n";
  return p;
}

}  // namespace

std::vector<ComparePlot> compare_plots(const CompareData& d) {
  std::vector<ComparePlot> plots;
  for (auto plot : {busbw_plot(d), cost_plot(d), step_plot(d)}) {
    if (plot) plots.push_back(*plot);
  }
  return plots;
}

}  // namespace fabricsim
