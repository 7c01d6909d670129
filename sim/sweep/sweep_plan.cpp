#include "sim/sweep/sweep_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <system_error>
#include <utility>

#include "sim/config/loader.hpp"
#include "sim/report/sweep_report.hpp"
#include "sim/sweep/sweep_point.hpp"
#include "sim/sweep/vary.hpp"

namespace fabricsim {

std::optional<int> plan_sweep(const RunOptions& opts, const std::vector<std::string>& varies,
                              const std::atomic<bool>* interrupt, SweepPlan& plan) {
  if (varies.empty()) {
    throw ConfigError("fabricsim sweep", 0, 0, "",
                      "expected at least one --vary KEY=V1,V2,..., e.g. --vary ecn.kmin=10KB,50KB");
  }
  plan = SweepPlan{};
  plan.axes = parse_vary(varies);
  const std::vector<SweepAxis>& axes = plan.axes;
  int64_t& points = plan.points;
  points = 1;
  std::string& shape = plan.shape;
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
  plan.topology_axes = std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) {
    return a.key == "topology" || a.key.rfind("topology.", 0) == 0;
  });
  const bool topology_axes = plan.topology_axes;
  std::map<int64_t, std::string>& unbuildable = plan.unbuildable;
  std::vector<int64_t>& gpus = plan.gpus;
  // per point: results.json fabric.cost_usd, for the rows of points that wrote none (killed)
  plan.costs.assign(static_cast<size_t>(points), std::nullopt);
  std::vector<std::optional<double>>& costs = plan.costs;
  std::vector<Scenario>& scenarios = plan.scenarios;
  std::vector<std::vector<std::string>>& values = plan.values;
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
                << describe_values(axes, values[i]) << "); nothing was run\n";
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
                << describe_values(axes, values[static_cast<size_t>(i)])
                << "): cannot be built: " << why << "\n";
    }
    std::cerr << "fabricsim sweep: no point can be built; nothing was run\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

void clear_sweep_dir(const RunOptions& opts, int64_t points) {
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
            (stem == "busbw" || stem == "slowdown" || stem.rfind("vs-", 0) == 0 ||
             stem.rfind("step-vs-", 0) == 0)) {
          std::error_code ec;
          std::filesystem::remove(entry.path(), ec);
        }
      }
    }
  }
}

}  // namespace fabricsim
