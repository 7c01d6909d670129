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
#include "calibration/calibrate_outputs.hpp"
#include "calibration/calibrate_tables.hpp"
#include "calibration/holdout.hpp"
#include "calibration/report_json.hpp"
#include "calibration/simulated/nic_latency.hpp"
#include "calibration/simulated/through_simulation.hpp"
#include "collectives/nccl_tests.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

using calibration_text::f2;
using calibration_text::optional_json;
using calibration_text::ordered_json;

int cmd_calibrate(const CalibrateOptions& opts, const std::atomic<bool>* interrupt) {
  const std::string where = "fabricsim calibrate";
  if (opts.perftest.empty() && opts.nccl_tests.empty()) {
    throw ConfigError(where, 0, 0, "", "give at least one --perftest or --nccl-tests log");
  }
  if (opts.out.empty()) throw ConfigError(where, 0, 0, "--out", "expected --out FILE.yaml");
  const Holdout holdout = parse_holdout(opts.holdout, opts.nccl_tests);
  const int64_t heldout_from = holdout.from;
  const int heldout_largest = holdout.largest;
  const std::string& heldout_file = holdout.file;
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
  ClosedFormFits cf;
  if (!opts.scenario.scenario_path.empty()) {
    Scenario check = load(opts.scenario);
    // Its link.host_rate is the port a perftest plateau is held against (nic.pcie_rate).
    cf.port_Gbps = static_cast<double>(check.link.host_rate_bps) * 1e-9;
    cf.port_source = "the scenario";
    check.measured_nccl_tests.clear();
    check.measured_perftest.clear();
    check.training = TrainingConfig{};
    (void)prepare(check);
    if (nccls.empty()) {
      // Only nccl-tests logs are simulated; a scenario beside perftest logs alone fits nothing.
      std::cout << "# scenario   : " << opts.scenario.scenario_path
                << ": its link.host_rate is the port a perftest plateau is held against "
                   "(nic.pcie_rate), its perftest run of a latency log's test gives what the "
                   "NIC latencies add to; only --nccl-tests logs are simulated through it (for "
                   "link.host_rate and the NCCL latencies)\n";
    }
  }

  ordered_json report = {{"inputs", ordered_json::array()}};
  const std::vector<std::string>& not_fitted = cf.not_fitted;
  std::vector<HealthHint>& hints = cf.hints;
  const std::optional<double>& link_rate_Gbps = cf.link_rate_Gbps;
  const std::vector<NcclFit>& fits = cf.fits;
  fit_perftest_logs(perftests, report, cf, std::cout);
  // The NIC latencies of each latency log: through the scenario's perftest run (the model's
  // wire, propagation and switches taken out), so only with --scenario.
  for (size_t i = 0; i < perftests.size(); ++i) {
    const PerftestLog& log = perftests[i];
    if (!log.latency) continue;
    std::vector<NicKeyFit> keys;
    if (opts.scenario.scenario_path.empty()) {
      for (const char* key : {"nic.tx_latency", "nic.rx_latency"}) {
        NicKeyFit k;
        k.key = key;
        k.path = log.path;
        k.reason =
            "needs --scenario: the fabric whose wire, propagation and switches the model "
            "takes out of the log's latency";
        keys.push_back(k);
      }
    } else {
      keys = fit_nic_latency(opts.scenario, log);
    }
    std::cout << "# perftest " << log.path << ": NIC latencies\n";
    ordered_json nic = ordered_json::array();
    for (const NicKeyFit& k : keys) {
      print_nic_key(std::cout, k);
      nic.push_back(nic_key_json(k));
      cf.nic_keys.push_back(k);
    }
    report["inputs"][i]["nic"] = nic;
    if (interrupted()) return kExitInterrupted;
  }
  fit_nccl_logs(nccls, holdout, report, cf, std::cout);

  if (interrupted()) return kExitInterrupted;
  // Through the simulator: the scenario's fabric with each log's collective and ranks.
  std::string interrupted_in;  // the log whose simulation a SIGINT/SIGTERM stopped
  std::optional<SimFit> chosen;
  std::vector<SimFit> sims;
  if (!opts.scenario.scenario_path.empty() && !nccls.empty()) {
    SimulatedLogs simulated = simulate_logs(opts.scenario, opts.max_sim_bytes, interrupt, nccls,
                                            holdout, cf, report, std::cout);
    sims = std::move(simulated.sims);
    chosen = std::move(simulated.chosen);
    interrupted_in = std::move(simulated.interrupted_in);
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
  // Two logs that fit one NIC key apart: the fragment takes the first (below); say so.
  for (size_t i = 0; i < cf.nic_keys.size(); ++i) {
    const NicKeyFit& k = cf.nic_keys[i];
    if (!k.fitted) continue;
    for (size_t j = 0; j < i; ++j) {
      const NicKeyFit& first = cf.nic_keys[j];
      if (!first.fitted || first.key != k.key) continue;
      const double apart = std::abs(k.value - first.value) / first.value;
      if (apart > 0.1) {
        hints.push_back({k.path, "its " + k.key + " (" + k.yaml + ") is " + f2(100 * apart) +
                                     " % from " + first.path + "'s (" + first.yaml +
                                     "): the fragment takes the first; a scenario "
                                     "has one kind of NIC, so calibrate each NIC's logs apart"});
      }
      break;
    }
  }
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
    yaml << "nccl:\n";
    if (!chosen->nccl_version.empty()) {  // the tables the values were fitted under
      yaml << "  version: " << chosen->nccl_version << "   # NCCL " << chosen->nccl_tuning
           << "'s tuning, which the fit used\n";
      fragment["nccl.version"] = chosen->nccl_version;
    }
    yaml << "  launch_latency: " << chosen->params.launch_ps << "ps   # "
         << format_time(chosen->params.launch_ps) << "\n";
    fragment["nccl.launch_latency"] = std::to_string(chosen->params.launch_ps) + "ps";
    if (chosen->params.step_ps >= 0) {
      yaml << "  step_latency: " << chosen->params.step_ps << "ps   # "
           << format_time(chosen->params.step_ps)
           << " per step, for every algorithm and protocol\n";
      fragment["nccl.step_latency"] = std::to_string(chosen->params.step_ps) + "ps";
    }
  }
  // The NIC keys: each from the first log that fitted it; all of them, fitted or not, in the
  // report.
  ordered_json nic_fitted = ordered_json::array(), nic_not_fitted = ordered_json::array();
  std::vector<const NicKeyFit*> nic_chosen;
  for (const NicKeyFit& k : cf.nic_keys) {
    (k.fitted ? nic_fitted : nic_not_fitted).push_back(nic_key_json(k));
    if (k.fitted && !fragment.contains(k.key)) {
      fragment[k.key] = k.yaml;
      nic_chosen.push_back(&k);
    }
  }
  if (!nic_chosen.empty()) {
    yaml << "nic:\n";
    for (const NicKeyFit* k : nic_chosen) {
      yaml << "  " << k->key.substr(4) << ": " << k->yaml << "   # " << k->path << ": " << k->rows
           << "\n";
    }
  }
  report["nic_keys"] = {{"fitted", nic_fitted}, {"not_fitted", nic_not_fitted}};
  if (!cf.nic_keys.empty()) {
    std::string fitted, skipped;
    for (const NicKeyFit& k : cf.nic_keys) {
      std::string& list = k.fitted ? fitted : skipped;
      if (list.find(k.key) == std::string::npos) list += (list.empty() ? "" : ", ") + k.key;
    }
    std::cout << "# nic keys   : fitted " << (fitted.empty() ? "none" : fitted);
    if (!skipped.empty()) std::cout << "; not fitted from some log: " << skipped << " (why above)";
    std::cout << "\n";
  }
  report["fragment"] = fragment;
  report["interrupted"] = !interrupted_in.empty();
  if (!interrupted_in.empty()) {
    yaml << "# interrupted during the simulation of " << interrupted_in
         << ": fitted from the logs before it only\n";
  }
  // nccl-tests or perftest latency fits alone set no scenario key: say so rather than leave a
  // fragment of comments that reads as a calibration with nothing to change.
  const std::string fitted_nothing = "no scenario key fitted (the fits are in the report)";
  const std::string empty_fragment =
      opts.scenario.scenario_path.empty()
          ? fitted_nothing +
                ": add --scenario SCENARIO.yaml to fit link.host_rate and the NCCL latencies "
                "through the simulation (and a perftest latency log's nic.tx_latency and "
                "nic.rx_latency), or a perftest bandwidth sweep (--perftest) for the line rate"
      : nccls.empty() ? fitted_nothing +
                            ": add an nccl-tests log (--nccl-tests) to fit link.host_rate and the "
                            "NCCL latencies through the simulation of --scenario, or a perftest "
                            "bandwidth sweep (--perftest) for the line rate"
                      : fitted_nothing;
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
                          "nccl-tests log with at least 3 sizes with a time, run over NET/IB "
                          "or NET/Socket (and --scenario to fit the simulator's parameters)");
  }
  const CalibrateWritten written =
      write_calibrate_outputs(files, yaml.str(), report.dump(2) + "\n", cf.plots);
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
