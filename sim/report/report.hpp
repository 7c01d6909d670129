// Output formats: the nccl-tests table, the run summary, results.json, perf.json, ports.csv.
//
// This library formats; it computes nothing (DESIGN.md §2). Field names follow DESIGN.md §4 and
// are a contract with users' scripts: extend, never rename.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace fabricsim {

/// One size of the sweep, as nccl-tests prints it and results.json stores it.
struct CollectiveRow {
  std::string collective;  ///< nccl-tests name: all_reduce, …
  std::string algorithm;   ///< ring, …
  std::string protocol;    ///< simple, …
  std::string datatype;    ///< float, …
  std::string redop;       ///< sum, …
  int root = -1;           ///< -1 for rootless collectives, as nccl-tests prints
  int ranks = 0;
  int64_t size_bytes = 0;
  int64_t count = 0;      ///< elements
  int64_t time_ps = 0;    ///< collective time, first send to last receive
  double algbw_GBps = 0;  ///< size / time, GB = 10⁹ B
  double busbw_GBps = 0;  ///< algbw × nccl-tests' factor for the collective
};

struct FabricSummary {
  std::string kind;
  int gpus = 0, switches = 0, links = 0;
  double oversubscription = 1.0;
  int64_t bisection_bandwidth_bps = 0;
  int64_t host_rate_bps = 0;
};

/// DESIGN.md §4 `counters`. Mechanisms not modelled yet (PFC, ECN, DCQCN, go-back-N) report 0
/// because nothing in the run can produce them.
struct Counters {
  int64_t drops = 0, retransmits = 0, pfc_pause_tx = 0, pfc_pause_rx = 0, ecn_marked = 0,
          cnp_tx = 0, max_queue_bytes = 0;
};

/// One row of ports.csv: one direction of one link, counted at its egress.
struct PortRow {
  std::string node, peer;
  int port = 0;
  int64_t rate_bps = 0, tx_packets = 0, tx_bytes = 0, drops = 0, drop_bytes = 0,
          max_queue_bytes = 0;
};

struct RunReport {
  std::string scenario;
  uint64_t seed = 0;
  FabricSummary fabric;
  std::vector<CollectiveRow> rows;
  Counters counters;
  int64_t events = 0;
  int64_t simulated_ps = 0;
  bool complete = true;      ///< false when the run stopped before the whole sweep finished
  bool interrupted = false;  ///< stopped by SIGINT/SIGTERM (complete is false too)
  std::string stop_reason;   ///< "workload done", "interrupted", "stalled: …"
  // perf.json only (wall-clock values never enter results.json):
  double wall_s = 0;
  int64_t packet_hops = 0;
  int64_t peak_rss_bytes = 0;
  std::vector<PortRow> ports;
};

/// The nccl-tests header line block ("#  size  count  type  redop  root  time  algbw  busbw
/// #wrong" with units), printed once before the rows.
void print_table_header(std::ostream& out);
/// One row, in nccl-tests' column widths and time precision; #wrong is "N/A" (nothing to check).
void print_table_row(std::ostream& out, const CollectiveRow& row);
/// "# Avg bus bandwidth : X" and the fabric / counters / time summary.
void print_summary(std::ostream& out, const RunReport& report);

/// results.json as DESIGN.md §4 (deterministic: same scenario and seed, same bytes).
/// Throws std::runtime_error if the file cannot be written.
void write_results_json(const std::string& path, const RunReport& report);
/// perf.json: wall_s, events_per_s, packet_hops_per_s, peak_rss_bytes.
void write_perf_json(const std::string& path, const RunReport& report);
/// ports.csv: one line per port with its counters.
void write_ports_csv(const std::string& path, const RunReport& report);

/// Peak resident set size of this process in bytes (Linux getrusage), 0 if unknown.
int64_t peak_rss_bytes();

}  // namespace fabricsim
