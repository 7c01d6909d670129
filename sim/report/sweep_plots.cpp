#include "sim/report/sweep_plots.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "sim/core/units.hpp"
#include "sim/report/gnuplot_run.hpp"
#include "sim/report/gnuplot_text.hpp"

namespace fabricsim {
namespace {

/// Writes `text` to `path` whole or not at all (output_file.hpp), so that a reader (or a sweep
/// killed mid-write) never sees half a table. Throws OutputError.
void write_file(const std::filesystem::path& path, const std::string& text) {
  write_output_file(path.string(), text);
}

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
    note += gp_comment(
        "left out: point " + std::to_string(p.point) + " (" + label + "): " +
        (p.jobs.empty() ? std::string("no collective sizes (traffic flows only)")
                        : std::string("jobs, not a sweep of sizes: their busbw is in sweep.csv's "
                                      "jobs.* columns, their plots in --report's")));
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
    const std::string label = describe_values(axes, values[static_cast<size_t>(p->point - 1)]);
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

/// A decimal size for a slowdown tic: 1000 -> "1KB", 3000000 -> "3MB" (the buckets' edges are
/// decimal, fct_slowdown.hpp).
std::string decimal_size_tick(int64_t bytes) {
  const auto text = [](double v, const char* unit) {
    char t[32];
    std::snprintf(t, sizeof t, "%g%s", v, unit);
    return std::string(t);
  };
  if (bytes >= 1'000'000) return text(static_cast<double>(bytes) / 1e6, "MB");
  if (bytes >= 1'000) return text(static_cast<double>(bytes) / 1e3, "KB");
  return text(static_cast<double>(bytes), "B");
}

/// slowdown.gp / slowdown.dat: each completed point's FCT slowdown against flow size, p50, p95
/// and p99 in three panels on log axes, one curve per point, as the congestion-control papers
/// draw it (HPCC, Li et al., SIGCOMM 2019, Figure 11). A bucket is drawn at its upper edge; the
/// last one, which has none, at 3 x its lower edge (labelled ">30MB").
Plot slowdown_plot(const std::string& scenario, const std::vector<SweepAxis>& axes,
                   const std::vector<std::vector<std::string>>& values,
                   const std::vector<const PointResult*>& rows) {
  Plot plot;
  plot.stem = "slowdown";
  std::string notes, dat;
  std::vector<std::string> labels;
  std::map<int64_t, std::string> tics;  // x -> its label
  dat += gp_comment("fabricsim sweep " + scenario +
                    ": FCT slowdown per flow-size bucket, one block per completed point");
  dat +=
      "# blocks are separated by two blank lines (gnuplot `index`); columns: size_bytes (the "
      "bucket's upper edge; the last bucket: 3 x its lower edge) flows p50 p95 p99\n";
  for (const PointResult* p : rows) {
    const std::string label = describe_values(axes, values[static_cast<size_t>(p->point - 1)]);
    if (p->outcome != Outcome::kComplete) {
      notes += gp_comment("left out: point " + std::to_string(p->point) + " (" + label +
                          "): did not complete: " + p->reason);
      continue;
    }
    if (p->slowdown.empty()) {
      notes += gp_comment("left out: point " + std::to_string(p->point) + " (" + label +
                          "): no traffic flows finished");
      continue;
    }
    dat += "\n\n" + gp_comment("point " + std::to_string(p->point) + ": " + label);
    for (const SizeSlowdown& b : p->slowdown) {
      const int64_t x = b.max_bytes > 0 ? b.max_bytes : 3 * std::max<int64_t>(b.above_bytes, 1);
      std::string tic = decimal_size_tick(b.max_bytes > 0 ? x : b.above_bytes);
      if (b.max_bytes <= 0) tic.insert(tic.begin(), '>');
      tics[x] = tic;
      char line[128];
      std::snprintf(line, sizeof line, "%lld %lld %.4f %.4f %.4f\n", static_cast<long long>(x),
                    static_cast<long long>(b.flows), b.p50, b.p95, b.p99);
      dat += line;
    }
    labels.push_back(label);
  }
  plot.dat = dat;
  std::string& gp = plot.gp;
  gp += gp_comment("fabricsim sweep " + scenario +
                   ": FCT slowdown (p50, p95, p99) against flow size, one curve per completed "
                   "point");
  gp += "# data: slowdown.dat; run `gnuplot slowdown.gp` in this folder to draw slowdown.svg\n";
  gp += notes;
  plot.drawable = !labels.empty();
  if (!plot.drawable) {
    gp += "# no point completed with traffic flows: nothing to plot\n";
    return plot;
  }
  const int curves = static_cast<int>(labels.size());
  gp += "set terminal svg size 960," + std::to_string(1500 + 22 * ((curves + 1) / 2)) +
        " dynamic noenhanced font 'Helvetica,12' background rgb 'white'\n";
  gp += "set output 'slowdown.svg'\n";
  gp += "set multiplot layout 3,1 title " +
        gp_string("fabricsim sweep " + scenario + ": FCT slowdown by flow size") + "\n";
  gp += "set logscale x 10\nset logscale y 10\nset grid\n";
  gp += "set xrange [" + number_text(static_cast<double>(tics.begin()->first) / 1.5) + ":" +
        number_text(static_cast<double>(tics.rbegin()->first) * 1.5) + "]\n";
  std::string xtics;
  for (const auto& [x, text] : tics) {
    xtics += (xtics.empty() ? "" : ", ") + gp_string(text) + " " + std::to_string(x);
  }
  gp += "set xtics (" + xtics + ")\n";
  const char* panels[][2] = {{"3", "p50"}, {"4", "p95"}, {"5", "p99"}};
  for (size_t k = 0; k < 3; ++k) {
    gp += std::string("set ylabel 'slowdown ") + panels[k][1] + "'\n";
    gp += k == 2 ? "set xlabel 'flow size (bytes; a bucket at its upper edge)'\nset key below\n"
                 : "unset xlabel\nunset key\n";
    for (int i = 0; i < curves; ++i) {
      gp += std::string(i == 0 ? "plot " : ", \\\n     ") + "'slowdown.dat' index " +
            std::to_string(i) + " using 1:" + panels[k][0] + " with linespoints title " +
            gp_string(labels[static_cast<size_t>(i)]);
    }
    gp += "\n";
  }
  gp += "unset multiplot\n";
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
      if (!plottable(*p, describe_values(axes, v), notes)) continue;
    } else if (p->outcome != Outcome::kComplete || !metric.value(*p)) {
      notes += gp_comment("left out: point " + std::to_string(p->point) + " (" +
                          describe_values(axes, v) + "): no training step time: " +
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
    const std::string label = others.empty() ? metric.what : describe_values(others_axes, others);
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
  gp +=
      with_cost ? "# dashed, right axis: the cost proxy (results.json fabric.cost_usd; `fabricsim "
                  "topo`), column 5 of the data\n"
      : block == 0 ? ""
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

}  // namespace

std::pair<std::string, std::string> write_sweep_plots(
    const std::filesystem::path& dir, const std::string& scenario,
    const std::vector<SweepAxis>& axes, const std::vector<std::vector<std::string>>& values,
    const std::vector<const PointResult*>& rows, std::vector<OutputError>& failures) {
  std::vector<Plot> plots;
  const bool steps = std::any_of(rows.begin(), rows.end(),
                                 [](const PointResult* p) { return p->step_ps.has_value(); });
  // A sweep of training steps without collective sizes has no busbw to plot (there were
  // empty busbw plots written for it).
  const bool busbw = !steps || std::any_of(rows.begin(), rows.end(),
                                           [](const PointResult* p) { return !p->busbw.empty(); });
  if (busbw) plots.push_back(busbw_plot(scenario, axes, values, rows));
  if (std::any_of(rows.begin(), rows.end(),
                  [](const PointResult* p) { return !p->slowdown.empty(); })) {
    plots.push_back(slowdown_plot(scenario, axes, values, rows));
  }
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

}  // namespace fabricsim
