#include "sim/cli/calibrate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "calibration/calibrate.hpp"
#include "collectives/nccl_tests.hpp"
#include "sim/cli/calibrate_outputs.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

namespace {

using ordered_json = nlohmann::ordered_json;

std::string f2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

ordered_json estimate_json(const Estimate& e) {
  return {{"value", e.value},
          {"ci95", std::isnan(e.ci95) ? ordered_json(nullptr) : ordered_json(e.ci95)}};
}

ordered_json optional_json(const std::optional<double>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

/// One simulation of `base` with the log's collective, ranks and sizes, and the calibrated
/// rate and launch latency: busbw and time per simulated size.
struct SimPoint {
  double busbw_GBps, time_us;
};
using SimCurve = std::map<int64_t, SimPoint>;

/// A calibration simulation that did not finish (interrupted, deadlocked, stopped).
struct SimStopped {
  bool interrupted;
  std::string reason;
};

struct SimContext {
  const CalibrateOptions& opts;
  const std::atomic<bool>* interrupt;
  int64_t base_host_rate_bps;    ///< the scenario's link.host_rate
  int64_t base_fabric_rate_bps;  ///< and link.fabric_rate, scaled with it
  int gpus_per_server;           ///< the scenario's GPUs per server
  int servers;                   ///< and servers
};

/// What the simulation fits: the NIC rate, NCCL's launch latency and its per-step latency.
struct SimParams {
  int64_t rate_bps = 0;   ///< link.host_rate (link.fabric_rate scales with it)
  int64_t launch_ps = 0;  ///< nccl.launch_latency
  int64_t step_ps = -1;   ///< nccl.step_latency; -1 = NCCL's per-algorithm/protocol constants
};

/// Where a log's ranks go in the scenario.
struct Placement {
  int ranks_per_server = 0;  ///< workload.ranks_per_server to set; 0 = the scenario's default
  std::string note;          ///< the scenario cannot hold the log's layout: what it does instead
  std::string skipped;       ///< the scenario cannot hold the log at all: why
};

/// The log's layout (nodes × ranks per node, from its header or rank lines) on the scenario's
/// servers: the same when the scenario has the nodes and the GPUs per node, else ranks fill
/// its servers and the note says so.
Placement place(const SimContext& ctx, const NcclLog& log) {
  Placement p;
  const int g = ctx.gpus_per_server;
  if (log.collective.empty()) {
    p.skipped =
        "the log names no collective (no '<name>_perf' command line, '## tool' header "
        "or nccl-tests banner)";
    return p;
  }
  if (log.nranks < 2 || log.nranks > ctx.servers * g) {
    p.skipped = "the log has " + std::to_string(log.nranks) + " ranks and the scenario " +
                std::to_string(ctx.servers * g) +
                " GPUs; pass a scenario (or --set its topology) with at least " +
                std::to_string(std::max(2, log.nranks)) + " GPUs";
    return p;
  }
  if (log.nodes == 1) {
    p.skipped = "the log ran on one node: its busbw is NVLink's (or PCIe's), not the network's";
    return p;
  }
  if (log.nodes <= 0) return p;  // unknown: ranks fill servers, as a job with no -npernode
  const int per_node = log.nranks % log.nodes == 0 ? log.nranks / log.nodes : 0;
  if (per_node > 0 && per_node <= g && log.nodes <= ctx.servers) {
    if (per_node < g) p.ranks_per_server = per_node;
    return p;
  }
  const int servers = (log.nranks + g - 1) / g;
  p.note = "the log's " + std::to_string(log.nranks) + " ranks ran on " +
           std::to_string(log.nodes) + " node" + (log.nodes == 1 ? "" : "s") +
           ", the scenario has " + std::to_string(ctx.servers) + " server" +
           (ctx.servers == 1 ? "" : "s") + " of " + std::to_string(g) + " GPU" +
           (g == 1 ? "" : "s") + ", so the ranks fill " + std::to_string(servers) + " of them" +
           ": the fitted values absorb the difference";
  return p;
}

SimCurve simulate_log(const SimContext& ctx, const NcclLog& log, const Placement& where,
                      const std::vector<int64_t>& sizes, const SimParams& params) {
  RunOptions run = ctx.opts.scenario;
  const std::string type = log.rows.empty() ? "float" : log.rows.front().type;
  run.sets.push_back("workload.collective=" + log.collective);
  run.sets.push_back("workload.ngpus=" + std::to_string(log.nranks));
  if (where.ranks_per_server > 0) {
    run.sets.push_back("workload.ranks_per_server=" + std::to_string(where.ranks_per_server));
  }
  run.sets.push_back("workload.datatype=" + type);
  run.sets.push_back("workload.minbytes=" + std::to_string(sizes.front()) + "B");
  run.sets.push_back("workload.maxbytes=" + std::to_string(sizes.back()) + "B");
  run.sets.push_back("workload.stepfactor=2");
  // The fabric links scale with the host links, so the scenario's oversubscription (uplink
  // counts from the rates) stays buildable and the same.
  const double k =
      static_cast<double>(params.rate_bps) / static_cast<double>(ctx.base_host_rate_bps);
  run.sets.push_back("link.host_rate=" + std::to_string(params.rate_bps) + "bps");
  run.sets.push_back(
      "link.fabric_rate=" + std::to_string(std::llround(ctx.base_fabric_rate_bps * k)) + "bps");
  run.sets.push_back("nccl.launch_latency=" + std::to_string(params.launch_ps) + "ps");
  if (params.step_ps >= 0) {
    run.sets.push_back("nccl.step_latency=" + std::to_string(params.step_ps) + "ps");
  }
  Scenario sc = load(run);
  // The scenario's own measured log and training step are for `run`, not this fit (its
  // traffic flows stay: background load the collective shares the fabric with).
  sc.measured_nccl_tests.clear();
  sc.training = TrainingConfig{};
  const Prepared prepared = prepare(sc);
  const RunReport rep = simulate(sc, prepared, ctx.interrupt, false);
  if (!rep.complete) throw SimStopped{rep.interrupted, rep.stop_reason};
  SimCurve curve;
  for (const CollectiveRow& r : rep.rows) {
    if (r.time_ps > 0) curve[r.size_bytes] = SimPoint{r.busbw_GBps, r.time_ps / 1e6};
  }
  return curve;
}

/// The log's out-of-place rows by size.
std::map<int64_t, const NcclLogRow*> rows_by_size(const NcclLog& log) {
  std::map<int64_t, const NcclLogRow*> m;
  for (const NcclLogRow& r : log.rows) {
    if (r.oop_time_us > 0 && r.size_bytes > 0) m.emplace(r.size_bytes, &r);
  }
  return m;
}

/// The sizes to simulate: the log's powers-of-two run within [lo, hi] (the sweep visits
/// lo, 2lo, …; rows off that grid are not compared).
std::vector<int64_t> sim_sizes(const std::map<int64_t, const NcclLogRow*>& rows, int64_t lo,
                               int64_t hi) {
  std::vector<int64_t> s;
  for (int64_t v = lo; v <= hi && v > 0; v *= 2) s.push_back(v);
  (void)rows;
  return s;
}

/// Calibration of one log through the simulator.
struct SimFit {
  std::string path;
  SimParams params;
  int64_t fabric_rate_bps = 0;
  struct Point {
    int64_t bytes;
    double measured_busbw, simulated_busbw;
    bool heldout;
  };
  std::vector<Point> points;
  std::optional<double> fitted_median, fitted_max, heldout_median, heldout_max;
  int simulations = 0;      ///< runs the fit took
  std::string skipped;      ///< why the log was not simulated ("" = it was)
  std::string warning;      ///< a fit the scenario cannot really make ("" = none)
  std::string layout_note;  ///< the scenario's layout differs from the log's
};

void errors_of(SimFit& f) {
  std::vector<std::pair<double, double>> in, out;
  for (const auto& p : f.points) {
    (p.heldout ? out : in).emplace_back(p.measured_busbw, p.simulated_busbw);
  }
  if (!in.empty()) std::tie(f.fitted_median, f.fitted_max) = abs_pct_errors(in);
  if (!out.empty()) std::tie(f.heldout_median, f.heldout_max) = abs_pct_errors(out);
}

/// Simulates every size of `sizes` with `params` and compares them with the log (sizes at or
/// above `heldout_from` > 0 are marked held out).
void compare(const SimContext& ctx, const NcclLog& log, const Placement& where,
             const std::vector<int64_t>& sizes, int64_t heldout_from, SimFit& f) {
  const auto rows = rows_by_size(log);
  const SimCurve curve =
      simulate_log(ctx, log, where, sim_sizes(rows, sizes.front(), sizes.back()), f.params);
  ++f.simulations;
  f.points.clear();
  for (const int64_t bytes : sizes) {
    if (!curve.count(bytes)) continue;
    f.points.push_back({bytes, nccl_row_busbw_GBps(log, *rows.at(bytes)),
                        curve.at(bytes).busbw_GBps, heldout_from > 0 && bytes >= heldout_from});
  }
  errors_of(f);
}

/// With the per-step latency fixed (-1 = NCCL's), fits link.host_rate to the busbw at the
/// largest fitted size (the bandwidth term) and nccl.launch_latency to the time at the smallest
/// (the latency term), then compares every size.
SimFit fit_at_step(const SimContext& ctx, const NcclLog& log, const Placement& where,
                   const std::vector<int64_t>& fit_sizes, const std::vector<int64_t>& all_sizes,
                   int64_t heldout_from, int64_t start_rate_bps, int64_t step_ps) {
  SimFit f;
  f.path = log.path;
  f.params.step_ps = step_ps;
  const auto rows = rows_by_size(log);
  const int64_t small = fit_sizes.front(), large = fit_sizes.back();
  int64_t rate = start_rate_bps, launch = 0;
  const double target_busbw = nccl_row_busbw_GBps(log, *rows.at(large));
  // The launch latency also costs the largest size a little (5 % of a 16 MiB all_gather's
  // time at 400 Gb/s): the two are fitted in turn, twice.
  for (int pass = 0; pass < 2; ++pass) {
    for (int round = 0; round < 4; ++round) {
      const SimCurve c = simulate_log(ctx, log, where, sim_sizes(rows, large, large),
                                      SimParams{rate, launch, step_ps});
      ++f.simulations;
      if (!c.count(large) || !(c.at(large).busbw_GBps > 0)) break;
      const double ratio = std::clamp(target_busbw / c.at(large).busbw_GBps, 0.25, 4.0);
      // Within 1/64 to 64 times where it started (and the loader's range): a size that does not
      // follow the NIC must not run the rate away.
      const int64_t lo = std::max<int64_t>(1'000'000, start_rate_bps / 64);
      const int64_t hi = std::max(lo, std::min<int64_t>(3'200'000'000'000, start_rate_bps * 64));
      rate = std::clamp<int64_t>(static_cast<int64_t>(std::llround(rate * ratio)), lo, hi);
      if (std::abs(ratio - 1) < 0.002) break;
    }
    const SimCurve c0 =
        simulate_log(ctx, log, where, sim_sizes(rows, small, small), SimParams{rate, 0, step_ps});
    ++f.simulations;
    if (c0.count(small)) {
      const double gap_us = rows.at(small)->oop_time_us - c0.at(small).time_us;
      launch = std::max<int64_t>(0, std::llround(gap_us * 1e6));
    }
  }
  f.params.rate_bps = rate;
  f.params.launch_ps = launch;
  f.fabric_rate_bps = std::llround(ctx.base_fabric_rate_bps * static_cast<double>(rate) /
                                   static_cast<double>(ctx.base_host_rate_bps));
  compare(ctx, log, where, all_sizes, heldout_from, f);
  for (const auto& p : f.points) {
    if (p.bytes == large && std::abs(p.simulated_busbw / target_busbw - 1) > 0.02) {
      f.warning = "busbw at " + format_size(large) + " does not follow link.host_rate here (" +
                  f2(p.simulated_busbw) + " GB/s simulated at best against " + f2(target_busbw) +
                  " measured): another link (NVLink, the fabric) limits it in this scenario";
    }
  }
  return f;
}

/// Fits link.host_rate, nccl.launch_latency and nccl.step_latency so that simulating the log's
/// collective on the scenario matches it: for each per-step latency (NCCL's own constants, then
/// 0, 1, 4, 16 and 64 µs, then a golden-section refinement between the best one's neighbours;
/// only with at least 4 fitted sizes, else NCCL's constants stay) the rate and
/// launch latency are fitted as in fit_at_step, and the step latency whose simulated busbw has
/// the smallest median absolute % error over the fitted sizes wins (NCCL's constants on a tie).
SimFit calibrate_through_simulation(const SimContext& ctx, const NcclLog& log, int64_t heldout_from,
                                    int64_t start_rate_bps) {
  SimFit f;
  f.path = log.path;
  const Placement where = place(ctx, log);
  if (!where.skipped.empty()) {
    f.skipped = where.skipped;
    return f;
  }
  const auto rows = rows_by_size(log);
  std::vector<int64_t> fit_sizes, all_sizes;
  for (const auto& [bytes, row] : rows) {
    if (bytes > ctx.opts.max_sim_bytes) continue;
    all_sizes.push_back(bytes);
    if (heldout_from == 0 || bytes < heldout_from) fit_sizes.push_back(bytes);
  }
  if (fit_sizes.size() < 2) {
    f.skipped = "fewer than 2 sizes up to " + format_size(ctx.opts.max_sim_bytes) + " to fit";
    return f;
  }
  int simulations = 0;
  int64_t rate = start_rate_bps;
  const bool progress = isatty(STDERR_FILENO) != 0;
  const auto at = [&](int64_t step_ps) {
    if (progress) {
      std::fprintf(stderr, "\r%-100.100s",
                   ("fabricsim calibrate: " + log.path + ": " + std::to_string(simulations) +
                    " simulations, trying nccl.step_latency " +
                    (step_ps < 0 ? "NCCL's" : format_time(step_ps)))
                       .c_str());
    }
    SimFit t = fit_at_step(ctx, log, where, fit_sizes, all_sizes, heldout_from, rate, step_ps);
    simulations += t.simulations;
    if (t.warning.empty()) rate = t.params.rate_bps;  // the next step latency starts from here
    return t;
  };
  const auto error = [](const SimFit& t) {
    return t.fitted_median.value_or(std::numeric_limits<double>::infinity());
  };
  SimFit best = at(-1);
  double best_us = -1;
  // The step latency shows between the smallest and the largest size: with fewer than two
  // sizes in between there is nothing to fit it to, and NCCL's constants stay.
  const std::vector<double> grid_us = fit_sizes.size() >= 4
                                          ? std::vector<double>{0.0, 1.0, 4.0, 16.0, 64.0}
                                          : std::vector<double>{};
  for (const double us : grid_us) {
    SimFit t = at(std::llround(us * 1e6));
    if (error(t) < error(best)) {
      best = std::move(t);
      best_us = us;
    }
  }
  if (best_us > 0) {  // golden section on log2(step) within the grid points around the best
    const double phi = (std::sqrt(5.0) - 1) / 2;
    double a = std::log2(best_us) - 2, b = std::log2(best_us) + 2;
    for (int i = 0; i < 6; ++i) {  // the bracket shrinks to 4 x 0.618^6 = 0.22 octave
      const double m1 = b - phi * (b - a), m2 = a + phi * (b - a);
      SimFit t1 = at(std::llround(std::exp2(m1) * 1e6));
      SimFit t2 = at(std::llround(std::exp2(m2) * 1e6));
      if (error(t1) <= error(t2)) {
        b = m2;
      } else {
        a = m1;
      }
      for (SimFit* t : {&t1, &t2}) {
        if (error(*t) < error(best)) best = std::move(*t);
      }
    }
  }
  if (progress) std::fprintf(stderr, "\r%100s\r", "");
  if (best.warning.empty() && best.params.rate_bps > 2 * ctx.base_host_rate_bps) {
    best.warning = "the fitted NIC rate (" + format_rate(best.params.rate_bps) +
                   ") is more than twice the scenario's link.host_rate (" +
                   format_rate(ctx.base_host_rate_bps) +
                   "): the log's busbw does not come from NICs like the scenario's (NVLink, "
                   "more NICs per GPU, in-network reduction)";
  }
  best.simulations = simulations;
  best.layout_note = where.note;
  return best;
}

}  // namespace

int cmd_calibrate(const CalibrateOptions& opts, const std::atomic<bool>* interrupt) {
  const std::string where = "fabricsim calibrate";
  if (opts.perftest.empty() && opts.nccl_tests.empty()) {
    throw ConfigError(where, 0, 0, "", "give at least one --perftest or --nccl-tests log");
  }
  if (opts.out.empty()) throw ConfigError(where, 0, 0, "--out", "expected --out FILE.yaml");
  int64_t heldout_from = 0;
  int heldout_largest = 0;  ///< --holdout largest=N
  std::string heldout_file;
  if (!opts.holdout.empty()) {
    const size_t eq = opts.holdout.find('=');
    const std::string kind = opts.holdout.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : opts.holdout.substr(eq + 1);
    if (kind == "above" && !value.empty()) {
      try {
        heldout_from = parse_size_bytes(value);
      } catch (const std::exception& e) {
        throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout", e.what());
      }
      if (heldout_from <= 0) {  // 0 is "nothing held out" inside: above=0B was silent
        throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                          "expected above=SIZE with a SIZE above 0B (the sizes from SIZE up are "
                          "held out, e.g. above=64MiB), got '" +
                              value + "'");
      }
    } else if (kind == "largest" && !value.empty()) {
      if (value.find_first_not_of("0123456789") != std::string::npos || value.size() > 6 ||
          std::stoi(value) < 1) {
        throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                          "expected largest=N with N a whole number >= 1 (the N largest sizes of "
                          "each log are held out), got '" +
                              value + "'");
      }
      heldout_largest = std::stoi(value);
    } else if (kind == "file" && !value.empty()) {
      const auto same = [&](const std::string& a) {
        std::error_code e1, e2;
        return std::filesystem::weakly_canonical(a, e1) ==
               std::filesystem::weakly_canonical(value, e2);
      };
      if (std::count_if(opts.nccl_tests.begin(), opts.nccl_tests.end(), same) != 1) {
        throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                          "the held-out file must be exactly one of the --nccl-tests logs");
      }
      if (opts.nccl_tests.size() < 2) {
        throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                          "holding out the only --nccl-tests log leaves nothing to fit");
      }
      heldout_file = *std::find_if(opts.nccl_tests.begin(), opts.nccl_tests.end(), same);
    } else {
      throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                        "expected above=SIZE (e.g. above=64MiB), largest=N (e.g. largest=4) or "
                        "file=PATH");
    }
  }
  if (opts.scenario.scenario_path.empty() && !opts.scenario.sets.empty()) {
    throw ConfigError(where, 0, 0, "--set", "--set changes the --scenario; give one");
  }
  if (!heldout_file.empty() && opts.scenario.scenario_path.empty()) {
    throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                      "predicting a held-out file needs --scenario (the fabric to simulate it on)");
  }
  const CalibrateFiles files = check_calibrate_out(opts.out);  // before any log is read
  const std::filesystem::path& report_path = files.report;
  const auto interrupted = [&] {
    if (interrupt == nullptr || !interrupt->load()) return false;
    std::cerr << "fabricsim: calibrate interrupted: nothing written\n";
    return true;
  };

  // The first held-out size of a log (0 = none): --holdout above=SIZE, or its N-th largest size
  // (among those up to `cap`) with --holdout largest=N.
  const auto heldout_of = [&](const NcclLog& log, int64_t cap) -> int64_t {
    if (heldout_largest == 0) return heldout_from;
    std::vector<int64_t> sizes;
    for (const auto& [bytes, row] : rows_by_size(log)) {
      if (bytes <= cap) sizes.push_back(bytes);
    }
    if (sizes.empty()) return 0;
    return sizes[sizes.size() - std::min<size_t>(sizes.size(), heldout_largest)];
  };

  // Parse every log first: a bad one stops the run before anything is fitted or written.
  std::vector<PerftestLog> perftests;
  for (const std::string& p : opts.perftest) {
    perftests.push_back(parse_perftest_file(p));
    if (interrupted()) return kExitInterrupted;
  }
  std::vector<NcclLog> nccls;
  for (const std::string& p : opts.nccl_tests) {
    nccls.push_back(parse_nccl_tests_file(p));
    if (interrupted()) return kExitInterrupted;
  }
  if ((heldout_from > 0 || heldout_largest > 0) && nccls.empty()) {
    throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                      "holds out sizes of --nccl-tests logs, and none is given (perftest logs "
                      "are fitted whole)");
  }
  if (heldout_from > 0) {
    // above=SIZE beyond every log's largest size would hold out nothing, silently.
    int64_t largest = 0;
    for (const NcclLog& log : nccls) {
      for (const auto& [bytes, row] : rows_by_size(log)) largest = std::max(largest, bytes);
    }
    if (heldout_from > largest) {
      throw ConfigError("--holdout " + opts.holdout, 0, 0, "--holdout",
                        "holds out nothing: the largest size in the --nccl-tests logs is " +
                            format_size(largest) + "; expected above=SIZE with SIZE at most " +
                            format_size(largest) + ", or largest=N");
    }
  }
  // A bad scenario is refused before anything is fitted or printed.
  if (!opts.scenario.scenario_path.empty()) {
    Scenario check = load(opts.scenario);
    check.measured_nccl_tests.clear();
    check.training = TrainingConfig{};
    (void)prepare(check);
  }

  ordered_json report = {{"inputs", ordered_json::array()}};
  std::vector<std::string> not_fitted;  ///< why each log that could not be fitted was not
  std::vector<HealthHint> hints;
  std::optional<double> link_rate_Gbps, link_GBps;
  std::vector<PlotSeries> plots;
  std::map<std::string, size_t> plot_of;  ///< nccl-tests log path -> its series

  for (const PerftestLog& log : perftests) {
    ordered_json in = {{"path", log.path},
                       {"kind", "perftest"},
                       {"tool", log.tool},
                       {"link_type", log.link_type},
                       {"mtu_bytes", log.mtu_bytes},
                       {"num_qps", log.num_qps},
                       {"bidirectional", log.bidirectional},
                       {"gpu_memory", log.gpu_memory},
                       {"meta", log.meta},
                       {"notes", log.notes}};
    std::cout << "# perftest " << log.path << " (" << (log.tool.empty() ? "?" : log.tool) << ", "
              << (log.link_type.empty() ? "link ?" : log.link_type)
              << (log.gpu_memory ? ", GPU memory" : "") << ")\n";
    if (log.latency) {
      const PerftestLatFit f = fit_perftest_lat(log);
      std::cout << "#   base latency (t_typical, smallest message) " << f2(f.base_latency_us)
                << " us\n";
      in["fit"] = {{"base_latency_us", f.base_latency_us},
                   {"per_kib_us", f.per_kib_us ? estimate_json(*f.per_kib_us) : nullptr}};
    } else {
      PerftestBwFit f;
      try {
        f = fit_perftest_bw(log);
      } catch (const std::invalid_argument& e) {  // e.g. every size the same after filtering
        std::cout << "#   not fitted (" << e.what() << ")\n";
        not_fitted.push_back(e.what());
        in["fit"] = nullptr;
        in["not_fitted"] = e.what();
        report["inputs"].push_back(in);
        continue;
      }
      if (std::isnan(f.bandwidth_Gbps.ci95)) {  // one message size: no line to fit
        std::cout << "#   one size: B = " << f2(f.bandwidth_Gbps.value)
                  << " Gb/s payload (line rate " << f2(f.line_rate_Gbps)
                  << " Gb/s); no per-message overhead or interval without a sweep (-a)\n";
      } else {
        std::cout << "#   t(s) = a + s/B: a = " << f2(f.overhead_ns.value) << " +- "
                  << f2(f.overhead_ns.ci95) << " ns, B = " << f2(f.bandwidth_Gbps.value) << " +- "
                  << f2(f.bandwidth_Gbps.ci95) << " Gb/s payload (line rate "
                  << f2(f.line_rate_Gbps) << " Gb/s), R2 " << f2(f.r2) << "\n";
      }
      std::cout << "#        bytes   measured Gb/s   fitted Gb/s\n";
      ordered_json pts = ordered_json::array();
      for (const auto& p : f.points) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  %12lld  %14.2f  %12.2f\n",
                      static_cast<long long>(p.bytes), p.measured_Gbps, p.fitted_Gbps);
        std::cout << buf;
        pts.push_back({{"bytes", p.bytes},
                       {"measured_Gbps", p.measured_Gbps},
                       {"fitted_Gbps", p.fitted_Gbps}});
      }
      PlotSeries ps{log.path + " (" + log.tool + ")", "bandwidth (Gb/s)", {}, {}, {}, {}};
      for (const auto& p : f.points) {
        ps.bytes.push_back(p.bytes);
        ps.measured.push_back(p.measured_Gbps);
        ps.fitted.push_back(p.fitted_Gbps);
        ps.simulated.push_back(std::nan(""));
      }
      plots.push_back(std::move(ps));
      in["fit"] = {{"overhead_ns", estimate_json(f.overhead_ns)},
                   {"bandwidth_Gbps", estimate_json(f.bandwidth_Gbps)},
                   {"line_rate_Gbps", f.line_rate_Gbps},
                   {"r2", std::isnan(f.r2) ? ordered_json(nullptr) : ordered_json(f.r2)},
                   {"points", pts}};
      const auto h = health_hints(log, f, nominal_rate_Gbps(log.meta));
      hints.insert(hints.end(), h.begin(), h.end());
      // An undetermined bandwidth (a sweep that stops before its plateau) is not a link rate.
      if (!(f.bandwidth_Gbps.ci95 > 0.25 * f.bandwidth_Gbps.value)) {
        if (link_rate_Gbps &&
            std::abs(*link_rate_Gbps - f.line_rate_Gbps) > 0.1 * f.line_rate_Gbps) {
          hints.push_back({log.path, "its link rate (" + f2(f.line_rate_Gbps) +
                                         " Gb/s) differs from another perftest log's (" +
                                         f2(*link_rate_Gbps) + "): the fragment takes the larger"});
        }
        link_rate_Gbps = std::max(link_rate_Gbps.value_or(0), f.line_rate_Gbps);
        link_GBps = std::max(link_GBps.value_or(0), f.bandwidth_Gbps.value / 8);
      }
    }
    report["inputs"].push_back(in);
  }

  std::vector<NcclFit> fits;
  for (const NcclLog& log : nccls) {
    const bool held = log.path == heldout_file;
    ordered_json in = {
        {"path", log.path},           {"kind", "nccl-tests"}, {"collective", log.collective},
        {"nranks", log.nranks},       {"nodes", log.nodes},   {"nccl_version", log.nccl_version},
        {"transport", log.transport}, {"gdr", log.gdr},       {"channels", log.channels},
        {"meta", log.meta},           {"notes", log.notes},   {"heldout", held}};
    NcclFit f;
    try {
      f = fit_nccl(log, held ? 0 : heldout_of(log, std::numeric_limits<int64_t>::max()));
    } catch (const std::invalid_argument& e) {
      std::cout << "# nccl-tests " << log.path << ": not fitted (" << e.what() << ")\n";
      not_fitted.push_back(e.what());
      in["fit"] = nullptr;
      in["not_fitted"] = e.what();
      report["inputs"].push_back(in);
      continue;
    }
    std::cout << "# nccl-tests " << log.path << " (" << log.collective << ", " << log.nranks
              << " ranks on " << log.nodes << (log.nodes == 1 ? " node" : " nodes")
              << (held ? ", held out" : "") << ")\n";
    ordered_json regimes = ordered_json::array();
    for (const NcclRegime& r : f.regimes) {
      std::cout << "#   " << format_size(r.first_bytes) << " .. " << format_size(r.last_bytes)
                << ": t = " << f2(r.latency_us.value) << " +- " << f2(r.latency_us.ci95)
                << " us + S / (" << f2(r.algbw_GBps.value) << " +- " << f2(r.algbw_GBps.ci95)
                << " GB/s), R2 " << f2(r.r2) << "\n";
      regimes.push_back({{"first_bytes", r.first_bytes},
                         {"last_bytes", r.last_bytes},
                         {"latency_us", estimate_json(r.latency_us)},
                         {"algbw_GBps", estimate_json(r.algbw_GBps)},
                         {"r2", r.r2}});
    }
    std::cout << "#        bytes  busbw measured  busbw fitted\n";
    ordered_json pts = ordered_json::array();
    for (const auto& p : f.points) {
      char buf[112];
      std::snprintf(buf, sizeof buf, "  %12lld  %14.2f  %12.2f%s\n",
                    static_cast<long long>(p.bytes), p.measured_busbw_GBps, p.fitted_busbw_GBps,
                    p.heldout ? "  (held out)" : "");
      std::cout << buf;
      pts.push_back({{"bytes", p.bytes},
                     {"measured_busbw_GBps", p.measured_busbw_GBps},
                     {"fitted_busbw_GBps", p.fitted_busbw_GBps},
                     {"heldout", p.heldout}});
    }
    if (f.heldout_median_abs_pct_error) {
      std::cout << "#   held out: busbw error median " << f2(*f.heldout_median_abs_pct_error)
                << " %, worst " << f2(*f.heldout_max_abs_pct_error) << " %\n";
    }
    PlotSeries ps{log.path + " (" + log.collective + ", " + std::to_string(log.nranks) + " ranks)",
                  "busbw (GB/s)",
                  {},
                  {},
                  {},
                  {}};
    for (const auto& p : f.points) {
      ps.bytes.push_back(p.bytes);
      ps.measured.push_back(p.measured_busbw_GBps);
      ps.fitted.push_back(p.fitted_busbw_GBps);
      ps.simulated.push_back(std::nan(""));
    }
    plot_of[log.path] = plots.size();
    plots.push_back(std::move(ps));
    in["fit"] = {{"regimes", regimes},
                 {"busbw_asymptote_GBps", f.busbw_asymptote_GBps},
                 {"points", pts},
                 {"heldout_median_abs_pct_error", optional_json(f.heldout_median_abs_pct_error)},
                 {"heldout_max_abs_pct_error", optional_json(f.heldout_max_abs_pct_error)}};
    const auto h = health_hints(log, f, link_GBps);
    hints.insert(hints.end(), h.begin(), h.end());
    report["inputs"].push_back(in);
    fits.push_back(std::move(f));
  }

  if (interrupted()) return kExitInterrupted;
  // Through the simulator: the scenario's fabric with each log's collective and ranks.
  std::string interrupted_in;  // the log whose simulation a SIGINT/SIGTERM stopped
  std::optional<SimFit> chosen;
  std::vector<SimFit> sims;
  if (!opts.scenario.scenario_path.empty() && !nccls.empty()) {
    Scenario base = load(opts.scenario);
    base.measured_nccl_tests.clear();
    base.training = TrainingConfig{};
    const Prepared prepared = prepare(base);
    const int hosts = static_cast<int>(prepared.fabric.hosts.size());
    const int64_t start_rate =
        link_rate_Gbps ? static_cast<int64_t>(*link_rate_Gbps * 1e9) : base.link.host_rate_bps;
    const int gpus_per_server = std::max(1, prepared.fabric.gpus_per_server);
    const SimContext ctx{opts,
                         interrupt,
                         base.link.host_rate_bps,
                         base.link.fabric_rate_bps,
                         gpus_per_server,
                         hosts / gpus_per_server};
    // The closed-form fits above are shown before simulations that may take minutes.
    std::cout << "# simulating : the nccl-tests logs on " << opts.scenario.scenario_path
              << " (Ctrl-C writes what is fitted so far)" << std::endl;
    for (const NcclLog& log : nccls) {
      if (log.path == heldout_file) continue;
      SimFit s;
      if (!interrupted_in.empty()) {  // Ctrl-C: the logs after it are not simulated
        s.path = log.path;
        s.skipped = "not simulated: interrupted during " + interrupted_in;
        sims.push_back(std::move(s));
        continue;
      }
      try {
        s = calibrate_through_simulation(ctx, log, heldout_of(log, opts.max_sim_bytes), start_rate);
      } catch (const SimStopped& stop) {
        s.path = log.path;
        if (stop.interrupted) {
          // What was fitted so far is written (the closed-form fits, the logs simulated
          // before this one), and the exit code says it was interrupted.
          interrupted_in = log.path;
          s.skipped =
              "interrupted during its simulation by a signal (SIGINT, SIGTERM, SIGHUP or SIGQUIT)";
        } else {
          s.skipped = "the simulation did not finish: " + stop.reason;
        }
      }
      if (s.skipped.empty() && s.warning.empty() && !chosen) chosen = s;
      sims.push_back(std::move(s));
    }
    if (!heldout_file.empty() && chosen && interrupted_in.empty()) {
      for (const NcclLog& log : nccls) {
        if (log.path != heldout_file) continue;
        SimFit s;
        s.path = log.path;
        s.params = chosen->params;
        s.fabric_rate_bps = chosen->fabric_rate_bps;
        const Placement where = place(ctx, log);
        s.layout_note = where.note;
        std::vector<int64_t> sizes;
        for (const auto& [bytes, row] : rows_by_size(log)) {
          if (bytes <= opts.max_sim_bytes) sizes.push_back(bytes);
        }
        if (!where.skipped.empty()) {
          s.skipped = where.skipped;
        } else if (sizes.empty()) {
          s.skipped = "no size up to " + format_size(opts.max_sim_bytes) + " to predict";
        } else {
          try {
            compare(ctx, log, where, sizes, 1, s);  // every size held out
          } catch (const SimStopped& stop) {
            if (stop.interrupted) interrupted_in = log.path;
            s.skipped = stop.interrupted ? "interrupted during its prediction by a signal (SIGINT, "
                                           "SIGTERM, SIGHUP or SIGQUIT)"
                                         : "the simulation did not finish: " + stop.reason;
          }
        }
        sims.push_back(std::move(s));
      }
    }
    ordered_json sim_json = ordered_json::array();
    for (const SimFit& s : sims) {
      std::cout << "# simulated " << s.path << ": ";
      if (!s.skipped.empty()) {
        std::cout << "skipped (" << s.skipped << ")\n";
        sim_json.push_back({{"path", s.path}, {"skipped", s.skipped}});
        continue;
      }
      std::cout << "link.host_rate " << format_rate(s.params.rate_bps) << ", nccl.launch_latency "
                << format_time(s.params.launch_ps) << ", nccl.step_latency "
                << (s.params.step_ps < 0 ? std::string("NCCL's") : format_time(s.params.step_ps))
                << (s.simulations > 0 ? " (" + std::to_string(s.simulations) + " simulations)"
                                      : std::string(" (predicted)"))
                << "\n";
      if (!s.warning.empty()) {
        std::cout << "#   not used for the fragment: " << s.warning << "\n";
        hints.push_back({s.path, s.warning});
      }
      if (!s.layout_note.empty()) {
        std::cout << "#   note: " << s.layout_note << "\n";
        hints.push_back({s.path, s.layout_note});
      }
      std::cout << "#        bytes  busbw measured  busbw simulated\n";
      ordered_json pts = ordered_json::array();
      for (const auto& p : s.points) {
        char buf[112];
        std::snprintf(buf, sizeof buf, "  %12lld  %14.2f  %15.2f%s\n",
                      static_cast<long long>(p.bytes), p.measured_busbw, p.simulated_busbw,
                      p.heldout ? "  (held out)" : "");
        std::cout << buf;
        pts.push_back({{"bytes", p.bytes},
                       {"measured_busbw_GBps", p.measured_busbw},
                       {"simulated_busbw_GBps", p.simulated_busbw},
                       {"heldout", p.heldout}});
      }
      if (s.fitted_median) {
        std::cout << "#   fitted sizes: busbw error median " << f2(*s.fitted_median) << " %, worst "
                  << f2(*s.fitted_max) << " %\n";
      }
      if (s.heldout_median) {
        std::cout << "#   held out: busbw error median " << f2(*s.heldout_median) << " %, worst "
                  << f2(*s.heldout_max) << " %\n";
      }
      if (const auto it = plot_of.find(s.path); it != plot_of.end()) {
        PlotSeries& ps = plots[it->second];
        for (const auto& p : s.points) {
          const auto k = std::find(ps.bytes.begin(), ps.bytes.end(), p.bytes);
          if (k != ps.bytes.end())
            ps.simulated[static_cast<size_t>(k - ps.bytes.begin())] = p.simulated_busbw;
        }
      }
      sim_json.push_back(
          {{"path", s.path},
           {"host_rate_bps", s.params.rate_bps},
           {"launch_latency_ps", s.params.launch_ps},
           {"step_latency_ps",
            s.params.step_ps < 0 ? ordered_json(nullptr) : ordered_json(s.params.step_ps)},
           {"simulations", s.simulations},
           {"points", pts},
           {"fitted_median_abs_pct_error", optional_json(s.fitted_median)},
           {"fitted_max_abs_pct_error", optional_json(s.fitted_max)},
           {"heldout_median_abs_pct_error", optional_json(s.heldout_median)},
           {"heldout_max_abs_pct_error", optional_json(s.heldout_max)}});
    }
    report["simulated"] = sim_json;
  }

  // Held-out error over everything held out: the simulation's when there was one, else the
  // curve fits'.
  std::vector<double> medians, maxima;
  for (const SimFit& s : sims) {
    if (s.heldout_median) {
      medians.push_back(*s.heldout_median);
      maxima.push_back(*s.heldout_max);
    }
  }
  if (sims.empty()) {
    for (const NcclFit& f : fits) {
      if (f.heldout_median_abs_pct_error) {
        medians.push_back(*f.heldout_median_abs_pct_error);
        maxima.push_back(*f.heldout_max_abs_pct_error);
      }
    }
  }
  std::optional<double> heldout_median, heldout_max;
  if (!medians.empty()) {
    std::sort(medians.begin(), medians.end());
    heldout_median = medians[medians.size() / 2];
    heldout_max = *std::max_element(maxima.begin(), maxima.end());
    if (medians.size() > 1) {  // one log's is printed with its table
      std::cout << "# held-out busbw error over " << medians.size() << " logs: median of medians "
                << f2(*heldout_median) << " %, worst " << f2(*heldout_max) << " %\n";
    }
  }
  report["heldout_median_abs_pct_error"] = optional_json(heldout_median);
  report["heldout_max_abs_pct_error"] = optional_json(heldout_max);
  ordered_json hints_json = ordered_json::array();
  for (const HealthHint& h : hints) {
    std::cout << "# hint: " << h.path << ": " << h.message << "\n";
    hints_json.push_back({{"path", h.path}, {"message", h.message}});
  }
  report["hints"] = hints_json;

  // The calibrated fragment: what `fabricsim run --set` (or an include) takes.
  std::ostringstream yaml;
  yaml << "# fabricsim calibrate: fitted from";
  for (const auto& p : opts.perftest) yaml << " " << p;
  for (const auto& p : opts.nccl_tests) yaml << " " << p;
  yaml << "\n# report: " << report_path.string() << "\n";
  if (chosen) yaml << "# fitted through the simulation of " << chosen->path << "\n";
  ordered_json fragment = ordered_json::object();
  const int64_t rate = chosen ? chosen->params.rate_bps
                              : (link_rate_Gbps ? static_cast<int64_t>(*link_rate_Gbps * 1e9) : 0);
  if (rate > 0) {
    yaml << "link:\n  host_rate: " << rate << "bps   # " << format_rate(rate)
         << (chosen ? ", fitted through the simulator" : ", perftest's bandwidth as a line rate")
         << "\n";
    fragment["link.host_rate"] = std::to_string(rate) + "bps";
    if (chosen) {
      yaml << "  fabric_rate: " << chosen->fabric_rate_bps << "bps   # scaled with it\n";
      fragment["link.fabric_rate"] = std::to_string(chosen->fabric_rate_bps) + "bps";
    }
  }
  if (chosen) {
    yaml << "nccl:\n  launch_latency: " << chosen->params.launch_ps << "ps   # "
         << format_time(chosen->params.launch_ps) << "\n";
    fragment["nccl.launch_latency"] = std::to_string(chosen->params.launch_ps) + "ps";
    if (chosen->params.step_ps >= 0) {
      yaml << "  step_latency: " << chosen->params.step_ps << "ps   # "
           << format_time(chosen->params.step_ps)
           << " per step, for every algorithm and protocol\n";
      fragment["nccl.step_latency"] = std::to_string(chosen->params.step_ps) + "ps";
    }
  }
  report["fragment"] = fragment;
  report["interrupted"] = !interrupted_in.empty();
  if (!interrupted_in.empty()) {
    yaml << "# interrupted during the simulation of " << interrupted_in
         << ": fitted from the logs before it only\n";
  }
  // nccl-tests or perftest latency fits alone set no scenario key: say so rather than leave a
  // fragment of comments that reads as a calibration with nothing to change.
  const std::string empty_fragment =
      "no scenario key fitted (the fits are in the report): add --scenario SCENARIO.yaml to fit "
      "link.host_rate and the NCCL latencies through the simulation, or a perftest bandwidth "
      "sweep (--perftest) for the line rate";
  const std::string no_keys = interrupted_in.empty()
                                  ? empty_fragment
                                  : "no scenario key fitted: interrupted before a log was fitted";
  if (fragment.empty()) yaml << "# " << no_keys << "\n";
  if (interrupted_in.empty() && fragment.empty() && !not_fitted.empty() &&
      not_fitted.size() == opts.perftest.size() + opts.nccl_tests.size()) {
    // No log fitted: exit 0 with an empty fragment would read as a calibration that worked.
    // (When some log fitted, its fits are in the report and the others' reasons beside them.)
    std::string why;
    for (const std::string& w : not_fitted) why += (why.empty() ? "" : "; ") + w;
    throw ConfigError(where, 0, 0, "",
                      "no log could be fitted, nothing written: " + why +
                          "; a fit needs a perftest bandwidth sweep (ib_write_bw -a) or an "
                          "nccl-tests log with at least 3 sizes with a time (and --scenario to "
                          "fit the simulator's parameters)");
  }
  const CalibrateWritten written =
      write_calibrate_outputs(files, yaml.str(), report.dump(2) + "\n", plots);
  if (!written.wrote.empty()) std::cout << "# wrote      : " << written.wrote << "\n";
  if (fragment.empty()) std::cout << "# fragment   : " << no_keys << "\n";
  if (!fragment.empty()) {
    std::cout << "# use        : fabricsim run SCENARIO.yaml";
    for (const auto& [k, v] : fragment.items())
      std::cout << " --set " << k << "=" << v.get<std::string>();
    std::cout << "\n";
  }
  for (const OutputError& e : written.failures) std::cerr << "fabricsim: " << e.what() << "\n";
  if (!written.failures.empty()) {
    std::cerr << "fabricsim: calibrate: no file was left half-written\n";
  }
  if (!interrupted_in.empty()) {
    std::cerr << "fabricsim: calibrate interrupted during the simulation of " << interrupted_in
              << ": wrote what was fitted before it\n";
    return kExitInterrupted;
  }
  return written.failures.empty() ? kExitOk : kExitOutput;
}

}  // namespace fabricsim
