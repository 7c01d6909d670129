// A measured nccl-tests log (scenario `measured.nccl_tests`) read and set beside the simulated
// rows (results.json `measured`).

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "calibration/calibrate.hpp"
#include "calibration/net_transport.hpp"
#include "calibration/parse_error.hpp"
#include "collectives/nccl_tests.hpp"
#include "sim/config/loader.hpp"
#include "sim/run/run_parts.hpp"

namespace fabricsim {

/// The scenario's `measured.nccl_tests` log, resolved against the scenario's folder and parsed;
/// its collective and rank count must be the workload's. Throws ConfigError (exit 2) at the key
/// for a log that cannot be read or does not match.
std::string scenario_relative_path(const Scenario& sc, const std::string& path) {
  const std::filesystem::path p(path);
  return p.is_absolute()
             ? p.string()
             : (std::filesystem::path(sc.path).parent_path() / p).lexically_normal().string();
}

void take_measured_nccl_version(Scenario& sc) {
  if (sc.measured_nccl_tests.empty()) return;
  NcclLog log;
  try {
    log = parse_nccl_tests_file(scenario_relative_path(sc, sc.measured_nccl_tests));
  } catch (const ParseError&) {
    return;
  }
  const std::string version = nccl_version_of(log);
  if (version.empty()) return;
  const std::string where =
      log.nccl_version_line > 0 ? " (line " + std::to_string(log.nccl_version_line) + ")" : "";
  if (sc.origins.count("nccl.version")) {  // the scenario's wins; say when they differ
    const auto minor = [](const std::string& v) { return v.substr(0, v.find('.', 2)); };
    if (minor(version) != minor(sc.nccl.version)) {
      std::fprintf(stderr,
                   "fabricsim: note: nccl.version %s is used, not the measured log's NCCL %s%s\n",
                   sc.nccl.version.c_str(), version.c_str(), where.c_str());
    }
    return;
  }
  for (const std::string& n : log.notes) {
    if (n.find("different NCCL versions") != std::string::npos) {
      std::fprintf(stderr,
                   "fabricsim: note: the measured log prints %s; the first, %s%s, is used\n",
                   n.substr(0, n.find(" in the log")).c_str(), version.c_str(), where.c_str());
    }
  }
  sc.nccl.version = version;
  sc.nccl.version_from_log = true;
}

NcclLog measured_log(const Scenario& sc, const NcclRunSetup& setup) {
  const std::string key = "measured.nccl_tests";
  if (!sc.has_workload) {
    throw key_error(sc, key,
                    "a measured log is compared with the workload's sweep, and this "
                    "scenario has none; expected a workload section, or no measured log");
  }
  const std::string path = scenario_relative_path(sc, sc.measured_nccl_tests);
  NcclLog log;
  try {
    log = parse_nccl_tests_file(path);
  } catch (const ParseError& e) {
    throw key_error(sc, key, e.what());
  }
  if (log.collective != sc.workload.collective || log.nranks != setup.layout.ranks) {
    throw key_error(sc, key,
                    path + " ran " +
                        (log.collective.empty() ? "an unnamed collective" : log.collective) +
                        " on " + std::to_string(log.nranks) + " ranks, the workload runs " +
                        sc.workload.collective + " on " + std::to_string(setup.layout.ranks) +
                        "; expected the same collective and rank count (workload.collective, "
                        "workload.ngpus)");
  }
  return log;
}

MeasuredComparison compare_measured(const Scenario& sc, const NcclLog& log,
                                    const std::vector<CollectiveRow>& rows, int model_channels) {
  MeasuredComparison m;
  m.log_channels = log.channels;
  m.model_channels = model_channels;
  std::map<int64_t, const NcclLog::Choice*> choice_at;  // the first line printed for a size
  for (const NcclLog::Choice& c : log.choices) choice_at.emplace(c.bytes, &c);
  m.path = sc.measured_nccl_tests;  // as written: not how the scenario's own path was typed
  const NetTransport net = classify_net_transport(log);
  m.transport_support = to_string(net.support);
  m.transport_name = net.name;
  m.transport_line = net.line;
  m.transport_evidence = net.evidence;
  std::map<int64_t, const NcclLogRow*> by_size;
  for (const NcclLogRow& r : log.rows) {
    if (r.oop_time_us > 0 && r.size_bytes > 0) by_size.emplace(r.size_bytes, &r);
  }
  std::vector<std::pair<double, double>> pairs;
  for (const CollectiveRow& row : rows) {
    const auto it = by_size.find(row.size_bytes);
    if (it == by_size.end() || row.time_ps <= 0) continue;
    const double measured = nccl_row_busbw_GBps(log, *it->second);
    MeasuredComparison::Point p{row.size_bytes,
                                measured,
                                row.busbw_GBps,
                                (row.busbw_GBps - measured) / measured * 100.0,
                                row.algorithm,
                                row.protocol,
                                "",
                                ""};
    const auto choice = choice_at.find(row.size_bytes);
    if (choice != choice_at.end()) {
      p.log_algorithm = nccl_algo_name(choice->second->algo);
      p.log_protocol = nccl_proto_name(choice->second->proto);
      ++m.choices_compared;
      if (p.log_algorithm == row.algorithm && p.log_protocol == row.protocol) ++m.choices_same;
    }
    m.points.push_back(p);
    pairs.emplace_back(measured, row.busbw_GBps);
  }
  if (!pairs.empty()) std::tie(m.median_abs_pct_error, m.max_abs_pct_error) = abs_pct_errors(pairs);
  return m;
}

}  // namespace fabricsim
