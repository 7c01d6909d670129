// A measured perftest log (scenario `measured.perftest`) read, checked to be the perftest
// section's test, and set beside the simulated rows (results.json `measured.perftest`).

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "calibration/calibrate.hpp"
#include "calibration/parse_error.hpp"
#include "sim/config/loader.hpp"
#include "sim/run/run_parts.hpp"

namespace fabricsim {

namespace {

constexpr const char* kKey = "measured.perftest";

/// What the log ran, in words: "ib_read_lat (line 12: 'RDMA_Read Latency Test'), a latency
/// table".
std::string log_test(const PerftestLog& log) {
  std::string s = log.tool.empty() ? "an unnamed perftest" : log.tool;
  if (!log.title.empty()) {
    s += " (line " + std::to_string(log.tool_line) + ": '" + log.title + "')";
  } else if (log.tool_line > 0) {
    s += " (its command, line " + std::to_string(log.tool_line) + ")";
  }
  const char* kind = log.latency         ? "latency"
                     : log.bidirectional ? "bidirectional BW"
                     : log.title.empty() ? "BW"
                                         : "one-way BW";
  return s + ", a " + kind + " table";
}

/// What the scenario runs, in the same words.
std::string scenario_test(const PerftestConfig& c, bool latency) {
  const char* kind = latency ? "latency" : c.bidirectional ? "bidirectional BW" : "one-way BW";
  return c.test + ", a " + kind + " test";
}

}  // namespace

PerftestLog measured_perftest_log(const Scenario& sc) {
  if (!sc.perftest.enabled) {
    throw key_error(sc, kKey,
                    "a measured perftest log is compared with the scenario's perftest run, and "
                    "this scenario has none; expected a perftest section, or no "
                    "measured.perftest");
  }
  const std::string path = scenario_relative_path(sc, sc.measured_perftest);
  PerftestLog log;
  try {
    log = parse_perftest_file(path);
  } catch (const ParseError& e) {
    throw key_error(sc, kKey, e.what());
  }
  const PerftestTest* t = find_perftest(sc.perftest.test);
  const bool latency = t != nullptr && t->latency;
  // The program (its title or command), the kind of table, and the direction where the log
  // states it: "Bidirectional" in the title or -b on the command is a bidirectional run, a
  // title without it a one-way one (a log with neither says nothing).
  const bool other_tool = !log.tool.empty() && log.tool != sc.perftest.test;
  const bool other_kind = log.latency != latency;
  const bool other_direction =
      !latency && (log.bidirectional ? !sc.perftest.bidirectional
                                     : sc.perftest.bidirectional && !log.title.empty());
  if (other_tool || other_kind || other_direction) {
    throw key_error(sc, kKey,
                    path + " is " + log_test(log) + "; the scenario's perftest runs " +
                        scenario_test(sc.perftest, latency) +
                        "; expected a log of the same test (perftest.test" +
                        (latency ? "" : ", perftest.bidirectional") + ")");
  }
  return log;
}

PerftestComparison compare_measured_perftest(const Scenario& sc, const PerftestLog& log,
                                             const std::vector<PerftestResult>& results) {
  PerftestComparison m;
  m.path = sc.measured_perftest;  // as written: not how the scenario's own path was typed
  m.test = sc.perftest.test;
  const PerftestTest* t = find_perftest(sc.perftest.test);
  const bool latency = t != nullptr && t->latency;
  // The log's value of each size, in its unit; the simulated one in the same unit.
  std::map<int64_t, double> measured;
  int measured_sizes = 0;
  double per_unit = 1;  // bytes per second per unit (bw)
  bool typical = true;  // latency: t_typical, or t_avg where the log has no median
  if (latency) {
    for (const PerftestLatRow& r : log.lat_rows) typical = typical && !std::isnan(r.t_typical_us);
    m.metric = typical ? "t_typical" : "t_avg";
    m.unit = "usec";
    for (const PerftestLatRow& r : log.lat_rows) {
      const double v = typical ? r.t_typical_us : r.t_avg_us;
      if (measured.count(r.bytes) == 0) ++measured_sizes;
      if (std::isfinite(v) && v > 0) measured.emplace(r.bytes, v);
    }
  } else {
    // perftest's format_factor (src/perftest_parameters.c print_report_bw): MB/sec is 2^20 B/s.
    per_unit = log.report_gbits ? 1.25e8 : 1048576.0;
    m.metric = "bw_average";
    m.unit = log.report_gbits ? "Gb/sec" : "MB/sec";
    for (const PerftestBwRow& r : log.bw_rows) {
      const double v = r.bw_avg_Bps / per_unit;
      if (measured.count(r.bytes) == 0) ++measured_sizes;
      if (std::isfinite(v) && v > 0) measured.emplace(r.bytes, v);
    }
  }
  std::vector<std::pair<double, double>> pairs;
  int matched = 0;
  for (const PerftestResult& r : results) {
    const auto it = measured.find(r.bytes);
    if (it == measured.end()) {
      ++m.only_simulated;
      continue;
    }
    const double sim = latency ? (typical ? r.t_typical_us : r.t_avg_us) : r.bw_avg_Bps / per_unit;
    ++matched;
    m.rows.push_back({r.bytes, it->second, sim, (sim - it->second) / it->second * 100.0});
    pairs.emplace_back(it->second, sim);
  }
  m.only_measured = measured_sizes - matched;
  if (!pairs.empty()) {
    std::tie(m.median_abs_pct_error, m.max_abs_pct_error) = abs_pct_errors(pairs);
    double worst = -1;
    for (const auto& row : m.rows) {
      if (std::abs(row.error_pct) > worst) {
        worst = std::abs(row.error_pct);
        m.max_error_bytes = row.bytes;
      }
    }
  }
  // What the log ran that the scenario or the model does not: said, not refused.
  if (!log.connection_type.empty() && log.connection_type != "RC") {
    m.warnings.push_back("the log ran a " + log.connection_type +
                         " connection; the model runs RC queue pairs (ACKed, go-back-N)");
  }
  if (log.gpu_memory) {
    m.warnings.push_back(
        "the log's buffers are in GPU memory; the model's NIC reads and writes host memory, with "
        "no GPU-to-NIC PCIe path");
  }
  const std::string link = sc.transport == "infiniband" ? "IB" : "Ethernet";
  if (!log.link_type.empty() && log.link_type != link) {
    m.warnings.push_back("the log's link type is " + log.link_type + ", the scenario's transport " +
                         sc.transport);
  }
  if (log.mtu_bytes > 0 && log.mtu_bytes != sc.nic.mtu_bytes) {
    m.warnings.push_back("the log's MTU is " + std::to_string(log.mtu_bytes) +
                         " B, the scenario's nic.mtu " + std::to_string(sc.nic.mtu_bytes) + " B");
  }
  if (!latency && log.num_qps > 0 && log.num_qps != sc.perftest.qps) {
    m.warnings.push_back("the log ran " + std::to_string(log.num_qps) + " QPs, the scenario's " +
                         "perftest.qps " + std::to_string(sc.perftest.qps));
  }
  return m;
}

}  // namespace fabricsim
