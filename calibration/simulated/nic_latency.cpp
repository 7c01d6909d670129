#include "calibration/simulated/nic_latency.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include "calibration/printf_format.hpp"
#include "perftest/perftest.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

namespace {

/// The scenario's perftest run of `test` at `bytes` with both NIC latencies `nic_ns`: its
/// t_typical in microseconds.
double simulated_t_typical_us(const RunOptions& scenario, const std::string& test, int64_t bytes,
                              int nic_ns) {
  RunOptions opts = scenario;
  for (const std::string& set :
       {"perftest.test=" + test, std::string("perftest.all=false"),
        // A BW scenario's options that a latency test refuses or runs otherwise.
        std::string("perftest.qps=1"), std::string("perftest.bidirectional=false"),
        std::string("perftest.tx_depth=1"), "perftest.size=" + std::to_string(bytes) + "B",
        std::string("perftest.iterations=4"), "nic.tx_latency=" + std::to_string(nic_ns) + "ns",
        "nic.rx_latency=" + std::to_string(nic_ns) + "ns"}) {
    opts.sets.push_back(set);
  }
  Scenario sc = load(opts);
  // The fabric only: the scenario's collectives, flows and measured logs are not what is fitted.
  sc.measured_nccl_tests.clear();
  sc.measured_perftest.clear();
  sc.training = TrainingConfig{};
  sc.traffic.clear();
  sc.has_workload = false;
  const Prepared prepared = prepare(sc);
  const RunReport rep = simulate(sc, prepared, nullptr, false);
  const PerftestLog sim = parse_perftest(rep.perftest, scenario.scenario_path);
  if (!rep.complete || sim.lat_rows.empty()) {
    throw std::runtime_error("the scenario's " + test + " run did not complete (" +
                             rep.stop_reason + ")");
  }
  return sim.lat_rows.front().t_typical_us;
}

}  // namespace

std::vector<NicKeyFit> fit_nic_latency(const RunOptions& scenario, const PerftestLog& log) {
  std::vector<NicKeyFit> keys(2);
  keys[0].key = "nic.tx_latency";
  keys[1].key = "nic.rx_latency";
  for (NicKeyFit& k : keys) k.path = log.path;
  const auto fail = [&](const std::string& why) {
    for (NicKeyFit& k : keys) k.reason = why;
    return keys;
  };
  const PerftestTest* test = find_perftest(log.tool);
  if (!log.latency || log.lat_rows.empty()) return fail("not a latency log");
  if (test == nullptr || !test->latency) {
    return fail("the perftest workload does not simulate " +
                (log.tool.empty() ? std::string("this log's test") : log.tool));
  }
  const auto smallest = std::min_element(
      log.lat_rows.begin(), log.lat_rows.end(),
      [](const PerftestLatRow& a, const PerftestLatRow& b) { return a.bytes < b.bytes; });
  const double measured_us = smallest->t_typical_us;
  if (!(measured_us > 0)) return fail("the smallest size has no t_typical");
  double t0 = 0, t1 = 0;
  try {
    t0 = simulated_t_typical_us(scenario, log.tool, smallest->bytes, 0);
    t1 = simulated_t_typical_us(scenario, log.tool, smallest->bytes, 1000);
  } catch (const std::exception& e) {
    return fail(std::string("the scenario cannot run ") + log.tool + ": " + e.what());
  }
  // NIC sends and receives in the timed span: 2 (half a round trip) or 4 (a read's round trip).
  const double per_us = std::round(t1 - t0);
  if (!(per_us >= 1)) return fail("the scenario's run does not depend on the NIC latencies");
  const std::string model = printf_format("%.2f", t0) + " us for " + format_size(smallest->bytes) +
                            " on " + scenario.scenario_path +
                            "'s fabric without NIC latencies (its wire, propagation, switches" +
                            (test->read ? ", the response's DMA read" : "") + ")";
  if (measured_us <= t0) {
    return fail("the log's t_typical at " + format_size(smallest->bytes) + " (" +
                printf_format("%.2f", measured_us) + " us) is not above the model's " + model +
                ": the scenario's fabric is slower than the log's");
  }
  const double x_us = (measured_us - t0) / per_us;
  for (NicKeyFit& k : keys) {
    k.fitted = true;
    k.value = x_us * 1e3;
    k.unit = "ns";
    k.yaml = std::to_string(std::llround(x_us * 1e6)) + "ps";
    k.rows = "t_typical " + printf_format("%.2f", measured_us) + " us at " +
             format_size(smallest->bytes) + " less the model's " + model + ", over the " +
             printf_format("%.0f", per_us) +
             " NIC sends and receives it times, split evenly between the send and the receive "
             "side: (" +
             printf_format("%.2f", measured_us) + " - " + printf_format("%.2f", t0) + ") / " +
             printf_format("%.0f", per_us);
  }
  return keys;
}

}  // namespace fabricsim
