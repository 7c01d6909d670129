#include "calibration/simulated/through_simulation.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "calibration/net_transport.hpp"
#include "calibration/report_json.hpp"
#include "collectives/nccl_tests.hpp"
#include "collectives/nccl_versions/nccl_tuning.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

using calibration_text::f2;
using calibration_text::optional_json;
using calibration_text::ordered_json;

namespace {

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
  const RunOptions& scenario;  ///< --scenario FILE and --set: the fabric to fit through
  int64_t max_sim_bytes;       ///< sizes above this are not simulated
  const std::atomic<bool>* interrupt;
  int64_t base_host_rate_bps;    ///< the scenario's link.host_rate
  int64_t base_fabric_rate_bps;  ///< and link.fabric_rate, scaled with it
  int gpus_per_server;           ///< the scenario's GPUs per server
  int servers;                   ///< and servers
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
  RunOptions run = ctx.scenario;
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
  // NCCL's tuning tables: the fitted log's NCCL version, unless the scenario sets one (load()
  // took the scenario's own measured log's, which is not the log fitted here).
  if (sc.nccl.version.empty() || sc.nccl.version_from_log) {
    sc.nccl.version = nccl_version_of(log);
    sc.nccl.version_from_log = !sc.nccl.version.empty();
  }
  // The scenario's own measured log and training step are for `run`, not this fit (its
  // traffic flows stay: background load the collective shares the fabric with).
  sc.measured_nccl_tests.clear();
  sc.measured_perftest.clear();
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

/// The sizes to simulate: the log's powers-of-two run within [lo, hi] (the sweep visits
/// lo, 2lo, …; rows off that grid are not compared).
std::vector<int64_t> sim_sizes(const std::map<int64_t, const NcclLogRow*>& rows, int64_t lo,
                               int64_t hi) {
  std::vector<int64_t> s;
  for (int64_t v = lo; v <= hi && v > 0; v *= 2) s.push_back(v);
  (void)rows;
  return s;
}

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
void compare_with_log(const SimContext& ctx, const NcclLog& log, const Placement& where,
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
  compare_with_log(ctx, log, where, all_sizes, heldout_from, f);
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
    if (bytes > ctx.max_sim_bytes) continue;
    all_sizes.push_back(bytes);
    if (heldout_from == 0 || bytes < heldout_from) fit_sizes.push_back(bytes);
  }
  if (fit_sizes.size() < 2) {
    f.skipped = "fewer than 2 sizes up to " + format_size(ctx.max_sim_bytes) + " to fit";
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

/// The NCCL version and tuning table `log`'s simulations use on `base` (see simulate_log).
void set_tuning(SimFit& s, const Scenario& base, const NcclLog& log) {
  s.nccl_version = !base.nccl.version.empty() && !base.nccl.version_from_log ? base.nccl.version
                                                                             : nccl_version_of(log);
  s.nccl_tuning = s.nccl_version.empty() ? newest_nccl_tuning().name
                                         : nccl_tuning_nearest(s.nccl_version).tuning->name;
}

SimulatedLogs simulate_logs(const RunOptions& scenario, int64_t max_sim_bytes,
                            const std::atomic<bool>* interrupt, const std::vector<NcclLog>& nccls,
                            const Holdout& holdout, ClosedFormFits& cf, ordered_json& report,
                            std::ostream& out) {
  SimulatedLogs result;
  std::string& interrupted_in = result.interrupted_in;
  std::optional<SimFit>& chosen = result.chosen;
  std::vector<SimFit>& sims = result.sims;
  const std::optional<double>& link_rate_Gbps = cf.link_rate_Gbps;
  std::vector<HealthHint>& hints = cf.hints;
  std::vector<PlotSeries>& plots = cf.plots;
  const std::map<std::string, size_t>& plot_of = cf.plot_of;
  const std::string& heldout_file = holdout.file;
  const auto heldout_of = [&](const NcclLog& log, int64_t cap) {
    return holdout.first_heldout(log, cap);
  };
  Scenario base = load(scenario);
  base.measured_nccl_tests.clear();
  base.measured_perftest.clear();
  base.training = TrainingConfig{};
  const Prepared prepared = prepare(base);
  const int hosts = static_cast<int>(prepared.fabric.hosts.size());
  const int64_t start_rate =
      link_rate_Gbps ? static_cast<int64_t>(*link_rate_Gbps * 1e9) : base.link.host_rate_bps;
  const int gpus_per_server = std::max(1, prepared.fabric.gpus_per_server);
  const SimContext ctx{scenario,
                       max_sim_bytes,
                       interrupt,
                       base.link.host_rate_bps,
                       base.link.fabric_rate_bps,
                       gpus_per_server,
                       hosts / gpus_per_server};
  // The closed-form fits above are shown before simulations that may take minutes.
  out << "# simulating : the nccl-tests logs on " << scenario.scenario_path
      << " (Ctrl-C writes what is fitted so far)" << std::endl;
  for (const NcclLog& log : nccls) {
    if (log.path == heldout_file) continue;
    SimFit s;
    if (const NetTransport net = classify_net_transport(log);
        net.support == NetTransportSupport::kNotModelled) {
      s.path = log.path;
      s.skipped = "not fitted: " + not_modelled_reason(net);
      sims.push_back(std::move(s));
      continue;
    }
    if (!interrupted_in.empty()) {  // Ctrl-C: the logs after it are not simulated
      s.path = log.path;
      s.skipped = "not simulated: interrupted during " + interrupted_in;
      sims.push_back(std::move(s));
      continue;
    }
    try {
      s = calibrate_through_simulation(ctx, log, heldout_of(log, max_sim_bytes), start_rate);
      set_tuning(s, base, log);
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
      set_tuning(s, base, log);
      const Placement where = place(ctx, log);
      s.layout_note = where.note;
      std::vector<int64_t> sizes;
      for (const auto& [bytes, row] : rows_by_size(log)) {
        if (bytes <= max_sim_bytes) sizes.push_back(bytes);
      }
      const NetTransport net = classify_net_transport(log);
      if (net.support == NetTransportSupport::kNotModelled) {
        s.skipped = "not predicted: " + not_modelled_reason(net);
      } else if (!where.skipped.empty()) {
        s.skipped = where.skipped;
      } else if (sizes.empty()) {
        s.skipped = "no size up to " + format_size(max_sim_bytes) + " to predict";
      } else {
        try {
          compare_with_log(ctx, log, where, sizes, 1, s);  // every size held out
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
    out << "# simulated " << s.path << ": ";
    if (!s.skipped.empty()) {
      out << "skipped (" << s.skipped << ")\n";
      sim_json.push_back({{"path", s.path}, {"skipped", s.skipped}});
      continue;
    }
    out << "link.host_rate " << format_rate(s.params.rate_bps) << ", nccl.launch_latency "
        << format_time(s.params.launch_ps) << ", nccl.step_latency "
        << (s.params.step_ps < 0 ? std::string("NCCL's") : format_time(s.params.step_ps))
        << (s.simulations > 0 ? " (" + std::to_string(s.simulations) + " simulations)"
                              : std::string(" (predicted)"))
        << "\n";
    out << "#   NCCL's tuning: " << s.nccl_tuning
        << (s.nccl_version.empty() ? " (the newest: the log names no version)"
                                   : " (NCCL " + s.nccl_version + ")")
        << "\n";
    if (!s.warning.empty()) {
      out << "#   not used for the fragment: " << s.warning << "\n";
      hints.push_back({s.path, s.warning});
    }
    if (!s.layout_note.empty()) {
      out << "#   note: " << s.layout_note << "\n";
      hints.push_back({s.path, s.layout_note});
    }
    if (s.simulations > 0 && s.params.launch_ps == 0 && s.params.step_ps > 0) {
      const std::string bound =
          "nccl.launch_latency is at its bound, 0: the fit puts the log's fixed cost into "
          "nccl.step_latency, which every step pays; the two trade off where the log has few "
          "steps, so read them together";
      out << "#   note: " << bound << "\n";
      hints.push_back({s.path, bound});
    }
    out << "#        bytes  busbw measured  busbw simulated\n";
    ordered_json pts = ordered_json::array();
    for (const auto& p : s.points) {
      char buf[112];
      std::snprintf(buf, sizeof buf, "  %12lld  %14.2f  %15.2f%s\n",
                    static_cast<long long>(p.bytes), p.measured_busbw, p.simulated_busbw,
                    p.heldout ? "  (held out)" : "");
      out << buf;
      pts.push_back({{"bytes", p.bytes},
                     {"measured_busbw_GBps", p.measured_busbw},
                     {"simulated_busbw_GBps", p.simulated_busbw},
                     {"heldout", p.heldout}});
    }
    if (s.fitted_median) {
      out << "#   fitted sizes: busbw error median " << f2(*s.fitted_median) << " %, worst "
          << f2(*s.fitted_max) << " %\n";
    }
    if (s.heldout_median) {
      out << "#   held out: busbw error median " << f2(*s.heldout_median) << " %, worst "
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
    sim_json.push_back({{"path", s.path},
                        {"host_rate_bps", s.params.rate_bps},
                        {"launch_latency_ps", s.params.launch_ps},
                        {"step_latency_ps", s.params.step_ps < 0 ? ordered_json(nullptr)
                                                                 : ordered_json(s.params.step_ps)},
                        {"simulations", s.simulations},
                        {"nccl_tuning", s.nccl_tuning},
                        {"nccl_version", s.nccl_version.empty() ? ordered_json(nullptr)
                                                                : ordered_json(s.nccl_version)},
                        {"points", pts},
                        {"fitted_median_abs_pct_error", optional_json(s.fitted_median)},
                        {"fitted_max_abs_pct_error", optional_json(s.fitted_max)},
                        {"heldout_median_abs_pct_error", optional_json(s.heldout_median)},
                        {"heldout_max_abs_pct_error", optional_json(s.heldout_max)}});
  }
  report["simulated"] = sim_json;
  return result;
}

}  // namespace fabricsim
