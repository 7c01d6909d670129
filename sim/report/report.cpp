#include "sim/report/report.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "sim/core/units.hpp"

namespace fabricsim {
namespace {

std::ofstream open_for_write(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  return out;
}

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

}  // namespace

void print_table_header(std::ostream& out) {
  out << "#\n"
      << "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       \n";
}

void print_table_row(std::ostream& out, const CollectiveRow& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6d  %s  %6.2f  %6.2f  %5s\n",
                static_cast<long long>(r.size_bytes), static_cast<long long>(r.count),
                r.datatype.c_str(), r.redop.c_str(), r.root,
                format_time_us(static_cast<double>(r.time_ps) / 1e6).c_str(), r.algbw_GBps,
                r.busbw_GBps, "N/A");
  out << buf;
}

void print_summary(std::ostream& out, const RunReport& r) {
  double avg = 0;
  for (const auto& row : r.rows) avg += row.busbw_GBps;
  if (!r.rows.empty()) avg /= static_cast<double>(r.rows.size());
  char buf[512];
  std::snprintf(buf, sizeof buf, "# Avg bus bandwidth    : %g \n#\n", avg);
  out << buf;
  const auto& f = r.fabric;
  const auto& c = r.counters;
  std::snprintf(buf, sizeof buf,
                "# fabric     : %s, %d GPUs, %d switches, %d links, host links %s, "
                "oversubscription %g:1, bisection bandwidth %s\n",
                f.kind.c_str(), f.gpus, f.switches, f.links, format_rate(f.host_rate_bps).c_str(),
                f.oversubscription, format_rate(f.bisection_bandwidth_bps).c_str());
  out << buf;
  std::snprintf(buf, sizeof buf,
                "# counters   : drops %lld, retransmits %lld, PFC pause tx/rx %lld/%lld, "
                "ECN marked %lld, CNP tx %lld, max queue %lld B\n",
                static_cast<long long>(c.drops), static_cast<long long>(c.retransmits),
                static_cast<long long>(c.pfc_pause_tx), static_cast<long long>(c.pfc_pause_rx),
                static_cast<long long>(c.ecn_marked), static_cast<long long>(c.cnp_tx),
                static_cast<long long>(c.max_queue_bytes));
  out << buf;
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

void write_results_json(const std::string& path, const RunReport& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["scenario"] = r.scenario;
  j["seed"] = r.seed;
  j["fabric"] = {{"kind", r.fabric.kind},
                 {"gpus", r.fabric.gpus},
                 {"switches", r.fabric.switches},
                 {"links", r.fabric.links},
                 {"oversubscription", r.fabric.oversubscription},
                 {"bisection_bandwidth_bps", r.fabric.bisection_bandwidth_bps},
                 {"host_rate_bps", r.fabric.host_rate_bps}};
  ordered_json rows = ordered_json::array();
  for (const auto& row : r.rows) {
    rows.push_back({{"collective", row.collective},
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
                    {"busbw_GBps", row.busbw_GBps}});
  }
  j["collectives"] = rows;
  const auto& c = r.counters;
  j["counters"] = {{"drops", c.drops},
                   {"retransmits", c.retransmits},
                   {"pfc_pause_tx", c.pfc_pause_tx},
                   {"pfc_pause_rx", c.pfc_pause_rx},
                   {"ecn_marked", c.ecn_marked},
                   {"cnp_tx", c.cnp_tx},
                   {"max_queue_bytes", c.max_queue_bytes}};
  j["deadlock"] = nullptr;
  j["run"] = {{"events", r.events},
              {"simulated_ps", r.simulated_ps},
              {"complete", r.complete},
              {"stop_reason", r.stop_reason}};
  auto out = open_for_write(path);
  // Names come from the user's files: invalid UTF-8 is replaced (U+FFFD), never a throw.
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void write_perf_json(const std::string& path, const RunReport& r) {
  nlohmann::ordered_json j;
  j["wall_s"] = r.wall_s;
  j["events_per_s"] = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
  j["packet_hops_per_s"] = r.wall_s > 0 ? static_cast<double>(r.packet_hops) / r.wall_s : 0.0;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  auto out = open_for_write(path);
  out << j.dump(2) << '\n';
}

void write_ports_csv(const std::string& path, const RunReport& r) {
  auto out = open_for_write(path);
  out << "node,port,peer,rate_bps,tx_packets,tx_bytes,drops,drop_bytes,max_queue_bytes\n";
  for (const auto& p : r.ports) {
    out << p.node << ',' << p.port << ',' << p.peer << ',' << p.rate_bps << ',' << p.tx_packets
        << ',' << p.tx_bytes << ',' << p.drops << ',' << p.drop_bytes << ',' << p.max_queue_bytes
        << '\n';
  }
}

int64_t peak_rss_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace fabricsim
