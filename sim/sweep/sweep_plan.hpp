// A sweep's points loaded and checked before any runs (`fabricsim sweep`), and its output
// folder cleared of what an earlier sweep left there.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/sweep_table.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

/// Every point of a sweep, loaded (its scenario with the point's values as --set overrides).
struct SweepPlan {
  std::vector<SweepAxis> axes;
  int64_t points = 0;
  std::string shape;                           ///< "3 x 2": the value counts of the axes
  bool topology_axes = false;                  ///< some varied key is topology or under it
  std::map<int64_t, std::string> unbuildable;  ///< point index -> the builder's message
  std::vector<int64_t> gpus;                   ///< per point: hosts of its fabric (0: unbuildable)
  /// per point: results.json fabric.cost_usd, for the rows of points that wrote none (killed)
  std::vector<std::optional<double>> costs;
  std::vector<Scenario> scenarios;               ///< per point (empty for an unloadable one)
  std::vector<std::vector<std::string>> values;  ///< per point: its varied values
};

/// Parses the --vary lists and loads and prepares every point (the --set list of `opts`, then
/// the point's KEY=VALUE pairs as further --set overrides, then --seed) before any runs, so bad
/// input anywhere is exit 2 with nothing run or written. Fabrics are not kept (a large one takes
/// gigabytes): each is prepared again, identically, just before its point runs. In a sweep over
/// topology keys a point whose fabric cannot be built is kept as unbuildable (with the builder's
/// reason). The points' scenario warnings are said on stderr, once each. Throws ConfigError
/// (exit 2) for bad --vary lists, too many points or a point's bad input. Returns an exit code
/// when the sweep must stop here (said on stderr): 2 when no point can be built or a point's
/// scenario is bad, 130 when `interrupt` became true; nullopt to go on with `plan` filled.
std::optional<int> plan_sweep(const RunOptions& opts, const std::vector<std::string>& varies,
                              const std::atomic<bool>* interrupt, SweepPlan& plan);

/// With opts.out_given: checks --out DIR (check_out_dir), notes point directories of an earlier,
/// larger sweep, removes what an earlier sweep left in this one's point directories and, in a
/// folder a sweep wrote, its plots and report. Throws ConfigError (exit 2) for a bad DIR.
void clear_sweep_dir(const RunOptions& opts, int64_t points);

}  // namespace fabricsim
