#include "sim/report/report.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "sim/core/counter_table.hpp"
#include "sim/core/units.hpp"
#include "sim/report/output_file.hpp"

namespace fabricsim {
namespace {

/// nccl-tests' time column: %7.2f below 100 us, %7.1f below 10 ms… (src/common.cu).
std::string format_time_us(double us) {
  char buf[32];
  if (us >= 10000.0) {
    std::snprintf(buf, sizeof buf, "%7.0f", us);
  } else if (us >= 100.0) {
    std::snprintf(buf, sizeof buf, "%7.1f", us);
  } else {
    std::snprintf(buf, sizeof buf, "%7.2f", us);
  }
  return buf;
}

/// printf-style fixed-point text of a double; "" for NaN or infinity (never "nan" in a CSV).
std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// A double for results.json: null instead of NaN or infinity.
nlohmann::ordered_json json_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

}  // namespace

int64_t counter_value(const Counters& c, uint32_t index) {
  // The built-in counters' members, in BuiltinCounter order.
  static constexpr int64_t Counters::*kMembers[] = {
      &Counters::drops,           &Counters::retransmits,  &Counters::pfc_pause_tx,
      &Counters::pfc_pause_rx,    &Counters::ecn_marked,   &Counters::cnp_tx,
      &Counters::max_queue_bytes, &Counters::tail_drops,   &Counters::corrupt_drops,
      &Counters::nak_tx,          &Counters::rto_timeouts, &Counters::headroom_drops,
      &Counters::watchdog_drops,  &Counters::pfc_storms,   &Counters::paused_ps,
      &Counters::cnp_rx,          &Counters::ce_received};
  static_assert(std::size(kMembers) == kBuiltinCounters, "one member per built-in counter");
  if (index < kBuiltinCounters) return c.*kMembers[index];
  const size_t r = index - kBuiltinCounters;
  return r < c.registered.size() ? c.registered[r] : 0;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  q += '"';
  return q;
}

FctSummary fct_summary(std::vector<int64_t> fct_ps) {
  FctSummary s;
  s.completed = static_cast<int64_t>(fct_ps.size());
  if (fct_ps.empty()) return s;
  std::sort(fct_ps.begin(), fct_ps.end());
  s.p50_ps = nearest_rank(fct_ps, 50, 100);
  s.p99_ps = nearest_rank(fct_ps, 99, 100);
  s.max_ps = fct_ps.back();
  return s;
}

FctSummary fct_summary(const QuantileHistogram& h) {
  FctSummary s;
  s.completed = h.count();
  if (s.completed == 0) return s;
  s.p50_ps = h.percentile(50, 100);
  s.p99_ps = h.percentile(99, 100);
  s.max_ps = h.max();
  return s;
}

std::string format_ps_as_us(int64_t ps) {
  // Magnitude as unsigned, so INT64_MIN has one too.
  const uint64_t mag = ps < 0 ? uint64_t{0} - static_cast<uint64_t>(ps) : static_cast<uint64_t>(ps);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%llu.%06llu", ps < 0 ? "-" : "",
                static_cast<unsigned long long>(mag / 1'000'000),
                static_cast<unsigned long long>(mag % 1'000'000));
  return buf;
}

void print_table_header(std::ostream& out) {
  out << "#\n"
      << "#                                                              out-of-place         "
         "              in-place\n"
      << "#       size         count      type   redop    root     time   algbw   busbw #wrong"
         "     time   algbw   busbw #wrong         algorithm protocol\n"
      << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
         "     (us)  (GB/s)  (GB/s)\n";
}

void print_table_row(std::ostream& out, const CollectiveRow& r) {
  // nccl-tests' columns; in-place repeats out-of-place (the model moves the same bytes either
  // way); then the algorithm and protocol the collective ran with.
  const std::string time = format_time_us(static_cast<double>(r.time_ps) / 1e6);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%12lld  %12lld  %8s  %6s  %6d  %s  %6.2f  %6.2f  %5s  %s  %6.2f  %6.2f  %5s  %16s "
                "%8s\n",
                static_cast<long long>(r.size_bytes), static_cast<long long>(r.count),
                r.datatype.c_str(), r.redop.c_str(), r.root, time.c_str(), r.algbw_GBps,
                r.busbw_GBps, "N/A", time.c_str(), r.algbw_GBps, r.busbw_GBps, "N/A",
                r.algorithm.c_str(), r.protocol.c_str());
  out << buf;
}

void print_summary(std::ostream& out, const RunReport& r) {
  double avg = 0;
  for (const auto& row : r.rows) avg += row.busbw_GBps;
  if (!r.rows.empty()) avg /= static_cast<double>(r.rows.size());
  char buf[512];
  if (r.has_workload) {  // (a traffic-only run has no collective)
    std::snprintf(buf, sizeof buf, "# Avg bus bandwidth    : %g \n#\n", avg);
    out << buf;
  }
  const auto& f = r.fabric;
  const auto& c = r.counters;
  std::snprintf(buf, sizeof buf,
                "# fabric     : %s, %d GPUs, %d switches, %d links, host links %s, "
                "oversubscription %g:1, bisection bandwidth %s%s\n",
                f.kind.c_str(), f.gpus, f.switches, f.links, format_rate(f.host_rate_bps).c_str(),
                f.oversubscription, format_rate(f.bisection_bandwidth_bps).c_str(),
                f.bisection_available_bps >= 0
                    ? (" as designed, " + format_rate(f.bisection_available_bps) +
                       " with the failed/degraded links")
                          .c_str()
                    : "");
  out << buf;
  if (r.flow_stats) {  // the counters below are not modelled: say so instead of printing 0s
    char batched[96] = "";
    if (r.flow_stats->batched_ends > 0) {
      std::snprintf(batched, sizeof batched, " (%lld ends batched, flow.batch_tolerance %g)",
                    static_cast<long long>(r.flow_stats->batched_ends),
                    r.flow_stats->batch_tolerance);
    }
    std::snprintf(buf, sizeof buf,
                  "# flow mode  : %lld flows, %lld rate computations%s, at most %lld flows at "
                  "once; queues, PFC, ECN, drops and retransmissions are not modelled\n",
                  static_cast<long long>(r.flow_stats->flows),
                  static_cast<long long>(r.flow_stats->reallocations), batched,
                  static_cast<long long>(r.flow_stats->max_active));
    out << buf;
  } else {
    std::snprintf(buf, sizeof buf,
                  "# counters   : drops %lld, retransmits %lld, PFC pause tx/rx %lld/%lld, "
                  "ECN marked %lld, CNP tx %lld, max queue %lld B\n",
                  static_cast<long long>(c.drops), static_cast<long long>(c.retransmits),
                  static_cast<long long>(c.pfc_pause_tx), static_cast<long long>(c.pfc_pause_rx),
                  static_cast<long long>(c.ecn_marked), static_cast<long long>(c.cnp_tx),
                  static_cast<long long>(c.max_queue_bytes));
    out << buf;
    std::snprintf(buf, sizeof buf,
                  "# losses     : drops %lld (tail drop %lld, corrupt %lld, PFC headroom %lld, "
                  "watchdog %lld), retransmits %lld (NAKs %lld, timeouts %lld)\n",
                  static_cast<long long>(c.drops), static_cast<long long>(c.tail_drops),
                  static_cast<long long>(c.corrupt_drops), static_cast<long long>(c.headroom_drops),
                  static_cast<long long>(c.watchdog_drops), static_cast<long long>(c.retransmits),
                  static_cast<long long>(c.nak_tx), static_cast<long long>(c.rto_timeouts));
    if (r.link_events) {  // the breakdown then names the links' losses too
      std::string line = buf;
      line.insert(line.find("), retransmits"),
                  ", link down " + std::to_string(r.link_events->lost_packets));
      out << line;
    } else {
      out << buf;
    }
    if (!c.registered.empty()) {  // counters registered from outside the library, if any
      out << "# registered :";
      const auto& table = counter_table();
      for (uint32_t k = kBuiltinCounters; k < table.size(); ++k) {
        out << (k > kBuiltinCounters ? ", " : " ") << table[k].name << ' ' << counter_value(c, k);
      }
      out << '\n';
    }
  }
  if (r.link_events) print_link_events(out, *r.link_events);
  if (c.pfc_pause_tx > 0 || c.pfc_storms > 0) {
    std::snprintf(buf, sizeof buf,
                  "# PFC        : %lld frames sent, %lld received, queues paused %s in total, "
                  "watchdog storms %lld\n",
                  static_cast<long long>(c.pfc_pause_tx), static_cast<long long>(c.pfc_pause_rx),
                  format_time(c.paused_ps).c_str(), static_cast<long long>(c.pfc_storms));
    out << buf;
  }
  for (const Dependence& d : r.depends_on) {
    out << "# depends on : ";
    for (size_t i = 0; i < d.keys.size(); ++i) out << (i ? ", " : "") << d.keys[i];
    out << " (" << d.why << ")\n";
  }
  for (const Limit& l : r.limits) out << "# not modelled: " << l.what << " (" << l.why << ")\n";
  if (r.deadlock.detected_at_ps >= 0) {
    out << "# DEADLOCK   : at " << format_time(r.deadlock.detected_at_ps) << ", cycle ";
    for (size_t i = 0; i < r.deadlock.cycle.size(); ++i) {
      out << r.deadlock.cycle[i];
      if (i < r.deadlock.links.size()) out << " (" << r.deadlock.links[i] << ")";
      out << " -> ";
    }
    out << (r.deadlock.cycle.empty() ? std::string() : r.deadlock.cycle.front()) << " ("
        << r.deadlock.flows.size() << " flows in it"
        << (r.deadlock.broken_by_watchdog ? "; broken by the PFC watchdog" : "") << ")\n";
    for (const DeadlockFix& fix : r.deadlock.fixes) {
      out << "# fix        : ";
      for (const std::string& set : fix.sets)
        out << "--set '" << set << "'"
            << " ";
      if (!fix.sets.empty()) out << "(";
      out << fix.why << (fix.sets.empty() ? "" : ")") << "\n";
    }
  }
  // The traffic flows' completion times (a collective's messages are in results.json).
  const bool traffic = r.fct_traffic.completed > 0;
  if (traffic || (!r.has_workload && !r.training && r.fct_messages.completed > 0)) {
    const FctSummary& fct = traffic ? r.fct_traffic : r.fct_messages;
    if (fct.completed > 0) {
      // Without traffic flows, the messages are those of the training step's collectives and
      // pipeline sends (a run stopped before the step's summary), or of a collective.
      const char* what = traffic          ? "traffic flows"
                         : r.has_training ? "training-step messages"
                                          : "collective messages";
      std::snprintf(buf, sizeof buf,
                    "# flows      : %lld %s delivered, FCT p50 %.3f us, p99 %.3f us, max %.3f us\n",
                    static_cast<long long>(fct.completed), what,
                    static_cast<double>(fct.p50_ps) / 1e6, static_cast<double>(fct.p99_ps) / 1e6,
                    static_cast<double>(fct.max_ps) / 1e6);
      out << buf;
    }
  }
  if (const SlowdownBucket& s = r.slowdown.all; s.count > 0 || r.fct_traffic.completed > 0) {
    // What the slowdown leaves out: finished flows beyond the flow records' bound, and flows
    // a stopped run did not finish (the slowest ones: its percentiles are then low).
    std::string caveat;
    if (s.count < r.fct_traffic.completed) {
      caveat += "; " + std::to_string(r.fct_traffic.completed - s.count) +
                " finished traffic flows without one (beyond the first " +
                std::to_string(r.flows.size()) + " messages recorded, or no path)";
    }
    if (!r.complete) caveat += "; the run stopped: unfinished flows are left out";
    if (s.count > 0) {
      std::snprintf(buf, sizeof buf,
                    "# slowdown   : p50 %.2f, p95 %.2f, p99 %.2f over %lld traffic flows", s.p50,
                    s.p95, s.p99, static_cast<long long>(s.count));
      out << buf << " (FCT / FCT alone on the idle fabric; per size in slowdown.csv" << caveat
          << ")\n";
    } else {
      out << "# slowdown   : none" << caveat << "\n";
    }
  }
  const double eps = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
  const double hps = r.wall_s > 0 ? static_cast<double>(r.packet_hops) / r.wall_s : 0.0;
  std::snprintf(buf, sizeof buf,
                "# time       : simulated %.3f us, wall %.2f s, %lld events (%.2f M events/s, "
                "%.2f M packet-hops/s)\n",
                static_cast<double>(r.simulated_ps) / 1e6, r.wall_s,
                static_cast<long long>(r.events), eps / 1e6, hps / 1e6);
  out << buf;
  out << "# run        : " << (r.complete ? "complete" : "INCOMPLETE") << " (" << r.stop_reason
      << ")\n";
}

nlohmann::ordered_json fabric_cost_json(const FabricCost& c) {
  return {{"switch_ports", c.switch_ports_usd},
          {"nics", c.nics_usd},
          {"host_links", c.host_links_usd},
          {"fabric_links", c.fabric_links_usd},
          {"total", c.total_usd},
          {"prices", c.prices}};
}

nlohmann::ordered_json collective_row_json(const CollectiveRow& row) {
  using nlohmann::ordered_json;
  return ordered_json(
      {{"collective", row.collective},
       {"algorithm", row.algorithm},
       {"protocol", row.protocol},
       {"ranks", row.ranks},
       {"size_bytes", row.size_bytes},
       {"count", row.count},
       {"type", row.datatype},
       {"redop", row.redop},
       {"root", row.root},
       {"time_ps", row.time_ps},
       {"time_us", static_cast<double>(row.time_ps) / 1e6},
       {"algbw_GBps", row.algbw_GBps},
       {"busbw_GBps", row.busbw_GBps},
       {"channels", row.channels},
       {"nccl_model_time_us", row.nccl_model_time_us >= 0 ? ordered_json(row.nccl_model_time_us)
                                                          : ordered_json(nullptr)}});
}

void write_results_json(const std::string& path, const RunReport& r) {
  write_output_file(path, results_json_text(r));
}

std::string results_json_text(const RunReport& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["scenario"] = r.scenario;
  j["seed"] = r.seed;
  j["fabric"] = {
      {"kind", r.fabric.kind},
      {"gpus", r.fabric.gpus},
      {"switches", r.fabric.switches},
      {"links", r.fabric.links},
      {"oversubscription", r.fabric.oversubscription},
      {"bisection_bandwidth_bps", r.fabric.bisection_bandwidth_bps},
      {"bisection_available_bps", r.fabric.bisection_available_bps >= 0
                                      ? ordered_json(r.fabric.bisection_available_bps)
                                      : ordered_json(nullptr)},
      {"host_rate_bps", r.fabric.host_rate_bps},
      {"server_profile", r.fabric.server_profile.empty() ? ordered_json(nullptr)
                                                         : ordered_json(r.fabric.server_profile)},
      {"cost_usd", nullptr},
      {"cost_breakdown_usd", nullptr}};
  if (r.fabric.cost) {  // the keys and numbers of `fabricsim topo --json`'s cost_usd
    const FabricCost& c = *r.fabric.cost;
    j["fabric"]["cost_usd"] = c.total_usd;
    j["fabric"]["cost_breakdown_usd"] = fabric_cost_json(c);
  }
  ordered_json rows = ordered_json::array();
  for (const auto& row : r.rows) rows.push_back(collective_row_json(row));
  j["collectives"] = rows;
  if (r.has_workload) {
    const NcclSummary& n = r.nccl;
    j["nccl"] = {{"ranks", n.ranks},
                 {"servers", n.servers},
                 {"gpus_per_server", n.gpus_per_server},
                 {"channels", n.channels},
                 {"transport", n.transport},
                 {"gdr", n.gdr},
                 {"algo", n.algo},
                 {"proto", n.proto},
                 {"buffsize_bytes", ordered_json::object()},
                 {"min_nchannels", n.min_nchannels},
                 {"max_nchannels", n.max_nchannels},
                 {"net_gdr_level", n.net_gdr_level},
                 {"step_latency_ps",
                  n.step_latency_ps >= 0 ? ordered_json(n.step_latency_ps) : ordered_json(nullptr)},
                 {"launch_latency_ps", n.launch_latency_ps >= 0 ? ordered_json(n.launch_latency_ps)
                                                                : ordered_json(nullptr)},
                 {"environment", n.environment},
                 {"tuning", n.tuning},
                 {"version", n.version.empty() ? ordered_json(nullptr) : ordered_json(n.version)},
                 {"version_source", n.version_source}};
    for (const auto& [proto, bytes] : n.buffsize_bytes) j["nccl"]["buffsize_bytes"][proto] = bytes;
  }
  if (r.training) {  // only when the scenario has a training section
    const TrainingSummary& t = *r.training;
    j["training"] = {{"dp", t.dp},
                     {"tp", t.tp},
                     {"pp", t.pp},
                     {"microbatches", t.microbatches},
                     {"ranks", t.ranks},
                     {"layers", t.layers},
                     {"buckets", t.buckets},
                     {"step_ps", t.step_ps},
                     {"compute_ps", t.compute_ps},
                     {"exposed_comm_ps", t.exposed_comm_ps},
                     {"gpu_utilization", t.gpu_utilization},
                     {"critical_rank", t.critical_rank},
                     {"critical_path",
                      {{"compute_ps", t.cp_compute_ps},
                       {"software_ps", t.cp_software_ps},
                       {"link_transfer_ps", t.cp_link_ps},
                       {"queueing_pause_other_ps", t.cp_waiting_ps},
                       {"pfc_pause_ps", t.cp_pfc_pause_ps},
                       {"queueing_other_ps", t.cp_queueing_ps}}}};
  }
  if (r.measured) {  // only when the scenario names a log (measured.nccl_tests)
    const MeasuredComparison& m = *r.measured;
    ordered_json pts = ordered_json::array();
    for (const auto& p : m.points) {
      ordered_json pt = {{"size_bytes", p.size_bytes},
                         {"measured_busbw_GBps", p.measured_busbw_GBps},
                         {"simulated_busbw_GBps", p.simulated_busbw_GBps},
                         {"error_pct", p.error_pct}};
      if (!p.log_algorithm.empty()) {
        pt["nccl_choice"] = {{"algorithm", p.log_algorithm},
                             {"protocol", p.log_protocol},
                             {"same_as_run", p.log_algorithm == p.simulated_algorithm &&
                                                 p.log_protocol == p.simulated_protocol}};
      }
      pts.push_back(pt);
    }
    const auto opt = [](double v) { return v >= 0 ? ordered_json(v) : ordered_json(nullptr); };
    j["measured"] = {
        {"nccl_tests", m.path},
        {"points", pts},
        {"median_abs_pct_error", opt(m.median_abs_pct_error)},
        {"max_abs_pct_error", opt(m.max_abs_pct_error)},
        {"channels",
         {{"log", m.log_channels > 0 ? ordered_json(m.log_channels) : ordered_json(nullptr)},
          {"model", m.model_channels}}},
        {"nccl_choices", {{"compared", m.choices_compared}, {"same", m.choices_same}}},
        {"network_transport",
         {{"support", m.transport_support},
          {"name", m.transport_name},
          {"line", m.transport_line},
          {"evidence", m.transport_evidence}}}};
  }
  if (r.measured_perftest) {  // only when the scenario names a perftest log
    const PerftestComparison& m = *r.measured_perftest;
    ordered_json rows = ordered_json::array();
    for (const auto& p : m.rows) {
      rows.push_back({{"bytes", p.bytes},
                      {"measured", p.measured},
                      {"simulated", p.simulated},
                      {"error_pct", p.error_pct}});
    }
    const auto opt = [](double v) { return v >= 0 ? ordered_json(v) : ordered_json(nullptr); };
    if (!j.contains("measured")) j["measured"] = ordered_json::object();
    j["measured"]["perftest"] = {
        {"path", m.path},
        {"test", m.test},
        {"metric", m.metric},
        {"unit", m.unit},
        {"rows", rows},
        {"sizes_only_measured", m.only_measured},
        {"sizes_only_simulated", m.only_simulated},
        {"median_abs_pct_error", opt(m.median_abs_pct_error)},
        {"max_abs_pct_error", opt(m.max_abs_pct_error)},
        {"max_error_bytes",
         m.max_error_bytes >= 0 ? ordered_json(m.max_error_bytes) : ordered_json(nullptr)},
        {"warnings", m.warnings}};
  }
  const auto& c = r.counters;
  ordered_json counters = ordered_json::object();
  const auto& table = counter_table();
  for (uint32_t k = 0; k < table.size(); ++k) counters[table[k].name] = counter_value(c, k);
  j["counters"] = std::move(counters);
  const auto& cons = r.conservation;
  j["conservation"] = {{"sent_bytes", cons.sent_bytes},
                       {"delivered_bytes", cons.delivered_bytes},
                       {"dropped_bytes", cons.dropped_bytes},
                       {"in_flight_bytes", cons.in_flight_bytes}};
  int64_t retransmitted = 0;
  for (const auto& f : r.flows) retransmitted += f.retransmitted_packets;
  // count: every delivered message; recorded: those in flows.csv (the first ones, up to a
  // bound). The completion times are over every delivered message (fct_summary).
  const auto fct_json = [](const FctSummary& f, ordered_json& us, ordered_json& ps) {
    us = {{"p50", nullptr}, {"p99", nullptr}, {"max", nullptr}};
    ps = us;
    if (f.completed == 0) return;
    us = {{"p50", static_cast<double>(f.p50_ps) / 1e6},
          {"p99", static_cast<double>(f.p99_ps) / 1e6},
          {"max", static_cast<double>(f.max_ps) / 1e6}};
    ps = {{"p50", f.p50_ps}, {"p99", f.p99_ps}, {"max", f.max_ps}};
  };
  ordered_json fct_us, fct_ps_json;
  fct_json(r.fct_all, fct_us, fct_ps_json);
  j["flows"] = {{"count", static_cast<int64_t>(r.flows.size()) + r.flows_unrecorded},
                {"recorded", r.flows.size()},
                {"completed", r.fct_all.completed},
                {"fct_us", fct_us},
                {"fct_ps", fct_ps_json},
                {"retransmitted_packets", retransmitted}};
  // The scenario's traffic flows alone, and the collectives' messages alone (null without).
  int64_t traffic_recorded = 0;
  for (const auto& f : r.flows) traffic_recorded += f.traffic ? 1 : 0;
  for (const bool traffic : {true, false}) {
    const FctSummary& f = traffic ? r.fct_traffic : r.fct_messages;
    const int64_t recorded =
        traffic ? traffic_recorded : static_cast<int64_t>(r.flows.size()) - traffic_recorded;
    const char* key = traffic ? "traffic" : "messages";
    if (f.completed == 0) {
      j["flows"][key] = nullptr;
      continue;
    }
    ordered_json us, ps;
    fct_json(f, us, ps);
    j["flows"][key] = {
        {"recorded", recorded}, {"completed", f.completed}, {"fct_us", us}, {"fct_ps", ps}};
  }
  j["fct_slowdown"] = fct_slowdown_json(r.slowdown);
  if (r.deadlock.detected_at_ps >= 0) {
    j["deadlock"] = {{"detected_at_ps", r.deadlock.detected_at_ps},
                     {"cycle", r.deadlock.cycle},
                     {"flows", r.deadlock.flows},
                     {"links", r.deadlock.links},
                     {"broken_by_watchdog", r.deadlock.broken_by_watchdog},
                     {"fixes", ordered_json::array()}};
    for (const DeadlockFix& fix : r.deadlock.fixes) {
      j["deadlock"]["fixes"].push_back({{"set", fix.sets}, {"why", fix.why}});
    }
  } else {
    j["deadlock"] = nullptr;
  }
  j["run"] = {{"events", r.events},
              {"simulated_ps", r.simulated_ps},
              {"complete", r.complete},
              {"stop_reason", r.stop_reason}};
  // Ports that carried or lost traffic; the rest are all zeros and would only bloat the file.
  ordered_json ports = ordered_json::array();
  bool ports_truncated = false;
  for (const auto& p : r.ports) {
    if (p.tx_packets == 0 && p.drops == 0 && p.corrupt_drops == 0) continue;
    if (ports.size() == kResultsJsonMaxPorts) {
      ports_truncated = true;
      break;
    }
    ports.push_back({{"node", p.node},
                     {"port", p.port},
                     {"peer", p.peer},
                     {"rate_bps", p.rate_bps},
                     {"tx_packets", p.tx_packets},
                     {"tx_bytes", p.tx_bytes},
                     {"rx_packets", p.rx_packets},
                     {"rx_bytes", p.rx_bytes},
                     {"drops", p.drops},
                     {"drop_bytes", p.drop_bytes},
                     {"corrupt_drops", p.corrupt_drops},
                     {"max_queue_bytes", p.max_queue_bytes},
                     {"avg_queue_bytes", json_number(p.avg_queue_bytes)},
                     {"p50_queue_bytes", p.p50_queue_bytes},
                     {"p99_queue_bytes", p.p99_queue_bytes},
                     {"p999_queue_bytes", p.p999_queue_bytes},
                     {"pfc_tx", p.pfc_tx},
                     {"pfc_rx", p.pfc_rx},
                     {"headroom_drops", p.headroom_drops}});
  }
  j["ports_truncated"] = ports_truncated;
  j["ports"] = std::move(ports);
  // Extensions after DESIGN's names: the simulation mode, and the flow model's own figures.
  j["mode"] = r.mode;
  j["congestion_control"] = r.congestion_control;
  j["depends_on"] = ordered_json::array();
  for (const Dependence& d : r.depends_on) {
    j["depends_on"].push_back({{"keys", d.keys}, {"why", d.why}});
  }
  j["limits"] = ordered_json::array();
  for (const Limit& l : r.limits) j["limits"].push_back({{"what", l.what}, {"why", l.why}});
  if (r.link_events) j["link_events"] = link_events_json(*r.link_events);
  if (!r.jobs.empty()) j["jobs"] = jobs_json(r.jobs);
  if (r.flow_stats) {
    j["flow_model"] = {{"flows", r.flow_stats->flows},
                       {"rate_computations", r.flow_stats->reallocations},
                       {"batched_ends", r.flow_stats->batched_ends},
                       {"batch_tolerance", r.flow_stats->batch_tolerance},
                       {"max_active_flows", r.flow_stats->max_active},
                       {"not_modelled", "queues, PFC, ECN/DCQCN, drops, retransmissions"}};
  }
  if (!r.files_not_written
           .empty()) {  // only then: results.json of a run fully written is unchanged
    ordered_json unwritten = ordered_json::array();
    for (const UnwrittenFile& f : r.files_not_written)
      unwritten.push_back({{"file", f.file}, {"error", f.error}});
    j["files_not_written"] = std::move(unwritten);
  }
  // Names come from the user's files: invalid UTF-8 is replaced (U+FFFD), never a throw.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n';
}

void write_perf_json(const std::string& path, const RunReport& r) {
  nlohmann::ordered_json j;
  j["wall_s"] = r.wall_s;
  j["events_per_s"] = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
  j["packet_hops_per_s"] = r.wall_s > 0 ? static_cast<double>(r.packet_hops) / r.wall_s : 0.0;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  if (r.packet_pool_packets > 0) {  // memory per packet in flight: pool high-water, struct size
    j["peak_packets_in_flight"] = r.packet_pool_packets;
    j["packet_struct_bytes"] = r.packet_struct_bytes;
  }
  if (r.flow_stats) {  // the flow mode moves link bytes, not packets
    j["flows_per_s"] = r.wall_s > 0 ? static_cast<double>(r.flow_stats->flows) / r.wall_s : 0.0;
    j["link_bytes_per_s"] = r.wall_s > 0 ? r.flow_stats->link_bytes / r.wall_s : 0.0;
  }
  write_output_file(path, j.dump(2) + '\n');
}

void write_ports_csv(const std::string& path, const RunReport& r) {
  OutputFile file(path);
  std::ostream& out = file.stream();
  out << "node,port,peer,rate_bps,tx_packets,tx_bytes,rx_packets,rx_bytes,drops,drop_bytes,"
         "corrupt_drops,max_queue_bytes,avg_queue_bytes,p50_queue_bytes,p99_queue_bytes,"
         "p999_queue_bytes,pfc_tx,pfc_rx,headroom_drops";
  for (uint32_t k : registered_counter_indices(CounterScope::kPort)) {
    out << ',' << csv_field(counter_table()[k].name);
  }
  out << '\n';
  for (const auto& p : r.ports) {
    out << csv_field(p.node) << ',' << p.port << ',' << csv_field(p.peer) << ',' << p.rate_bps
        << ',' << p.tx_packets << ',' << p.tx_bytes << ',' << p.rx_packets << ',' << p.rx_bytes
        << ',' << p.drops << ',' << p.drop_bytes << ',' << p.corrupt_drops << ','
        << p.max_queue_bytes << ',' << fixed(p.avg_queue_bytes, 1) << ',' << p.p50_queue_bytes
        << ',' << p.p99_queue_bytes << ',' << p.p999_queue_bytes << ',' << p.pfc_tx << ','
        << p.pfc_rx << ',' << p.headroom_drops;
    for (int64_t v : p.registered) out << ',' << v;
    out << '\n';
  }
  file.commit();
}

void write_queues_csv(const std::string& path, const RunReport& r) {
  OutputFile file(path);
  std::ostream& out = file.stream();
  out << "node,port,peer,traffic_class,tx_packets,tx_bytes,drops,drop_bytes,max_queue_bytes,"
         "avg_queue_bytes,mean_sojourn_ns,ecn_marked,paused_us,watchdog_drops\n";
  for (const auto& q : r.queues) {
    out << csv_field(q.node) << ',' << q.port << ',' << csv_field(q.peer) << ',' << q.traffic_class
        << ',' << q.tx_packets << ',' << q.tx_bytes << ',' << q.drops << ',' << q.drop_bytes << ','
        << q.max_queue_bytes << ',' << fixed(q.avg_queue_bytes, 1) << ','
        << fixed(q.mean_sojourn_ps / 1e3, 3) << ',' << q.ecn_marked << ','
        << format_ps_as_us(q.paused_ps) << ',' << q.watchdog_drops << '\n';
  }
  file.commit();
}

namespace {

/// flows.csv's rows, `rows_per_call` at a time, into `sink(text)`: the header first.
template <class Sink>
void flows_csv_chunks(const RunReport& r, Sink&& sink) {
  std::ostringstream out;
  out << "id,src,dst,qp,traffic_class,bytes,start_us,end_us,fct_us,retransmitted_packets,source,"
         "ideal_fct_us,slowdown\n";
  size_t n = 0;
  for (const auto& f : r.flows) {
    const bool done = f.end_ps >= f.start_ps;
    out << f.id << ',' << f.src << ',' << f.dst << ',' << f.qp << ',' << f.traffic_class << ','
        << f.bytes << ',' << format_ps_as_us(f.start_ps) << ','
        << (done ? format_ps_as_us(f.end_ps) : "") << ','
        << (done ? format_ps_as_us(f.end_ps - f.start_ps) : "") << ',' << f.retransmitted_packets
        << ','
        << (f.background ? "background"
            : f.traffic  ? "traffic"
                         : "collective")
        << ',';
    if (done && f.ideal_ps > 0 && f.end_ps > f.start_ps) {
      char slowdown[32];
      std::snprintf(slowdown, sizeof slowdown, "%.4f",
                    static_cast<double>(f.end_ps - f.start_ps) / static_cast<double>(f.ideal_ps));
      out << format_ps_as_us(f.ideal_ps) << ',' << slowdown;
    } else {
      out << ',';
    }
    out << '\n';
    if (++n % 16384 == 0) {
      sink(out.str());
      out.str({});
    }
  }
  sink(out.str());
}

}  // namespace

void write_flows_csv(const std::string& path, const RunReport& r) {
  OutputFile file(path);
  flows_csv_chunks(r, [&](const std::string& text) { file.write(text); });
  file.commit();
}

void write_flows_csv_gz(const std::string& path, const RunReport& r) {
  OutputFile file(path);
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper (RFC 1952), readable by gzip, zcat and pandas.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, deflateEnd);
  std::vector<unsigned char> out(1 << 16);
  const auto pump = [&](const std::string& text, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      if (deflate(&z, flush) == Z_STREAM_ERROR) throw std::runtime_error("zlib: deflate failed");
      file.write(
          std::string_view(reinterpret_cast<const char*>(out.data()), out.size() - z.avail_out));
    } while (z.avail_out == 0);
  };
  flows_csv_chunks(r, [&](const std::string& text) { pump(text, Z_NO_FLUSH); });
  pump(std::string(), Z_FINISH);
  file.commit();
}

int64_t peak_rss_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace fabricsim
