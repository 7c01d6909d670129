// Output formats: the nccl-tests table, the run summary, results.json, perf.json, ports.csv,
// queues.csv, flows.csv (trace.json: trace.hpp).
//
// This library formats; it computes nothing (DESIGN.md §2). Field names follow DESIGN.md §4 and
// are a contract with users' scripts: extend, never rename.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/core/quantile_histogram.hpp"
#include "sim/report/fct_slowdown.hpp"

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
  int channels = 0;       ///< NCCL channels the collective ran on
  /// NCCL's own cost-model prediction for the chosen algorithm and protocol, µs; -1 where it
  /// has none (halving_doubling, p2p). Not the simulated time: what NCCL expects.
  double nccl_model_time_us = -1;
};

/// JobRow::row.collective of a job that runs a training step: the row has its time, no busbw.
inline constexpr const char* kTrainingStep = "training_step";

/// One job of `jobs:` (results.json `jobs`): where it ran and how long its collective took
/// beside the other jobs, and alone on the same servers.
struct JobRow {
  std::string name;
  std::string placement;     ///< packed, spread, random, or servers (a list given)
  std::vector<int> servers;  ///< its servers, in rank order
  int leaves = 0;            ///< distinct leaves (first-tier switches) its servers hang off
  /// Its collective (nccl-tests' columns); time_ps, algbw and busbw of one iteration: the mean
  /// over its iterations, as nccl-tests averages -n iterations.
  CollectiveRow row;
  int iterations = 1;
  int64_t start_ps = 0;  ///< when its ranks launched the first iteration
  int64_t end_ps = -1;   ///< its last rank's last completion; -1 = not finished
  bool complete = false;
  /// The same job alone on the same servers (the scenario without the other jobs): its mean
  /// iteration time and busbw; -1 / 0 when that run did not finish (alone_note says why).
  int64_t alone_time_ps = -1;
  double alone_busbw_GBps = 0;
  std::string alone_note;
  /// time_ps / alone_time_ps: 1 = no interference; 0 when either is missing.
  double slowdown = 0;
  /// The share of its time (start to end) during which another job was running, 0 … 1; -1 when
  /// there is no other job or it did not finish. A slowdown is that of the overlap.
  double overlap = -1;
};

/// The cost proxy of a fabric (scenario `cost_model:`; topologies/metrics.hpp fabric_cost), US
/// dollars: the figures `fabricsim topo --json` prints under `cost_usd`.
struct FabricCost {
  double switch_ports_usd = 0;  ///< switch ports × switch_port_usd
  double nics_usd = 0;          ///< NIC ports × nic_usd
  double host_links_usd = 0;    ///< host links × host_link_usd
  double fabric_links_usd = 0;  ///< switch-switch links × fabric_link_usd
  double total_usd = 0;         ///< the sum of the four
  std::string prices;           ///< the scenario's cost_model, as written (relative to its folder)
};

/// `c` as the JSON object results.json `fabric.cost_breakdown_usd` and `fabricsim topo --json`
/// `cost_usd` print: switch_ports, nics, host_links, fabric_links, total (USD), prices.
nlohmann::ordered_json fabric_cost_json(const FabricCost& c);

struct FabricSummary {
  std::string kind;
  int gpus = 0, switches = 0, links = 0;
  double oversubscription = 1.0;
  int64_t bisection_bandwidth_bps = 0;  ///< the design figure (every link up, nominal rate)
  /// With failed or degraded links: the max-flow between the host halves as the fabric is
  /// (what `topo` checks); -1 without faults, or for a fabric too large for the max-flow.
  int64_t bisection_available_bps = -1;
  int64_t host_rate_bps = 0;
  /// The scenario's server.profile as it names it (configs/servers/*.yaml); "" = none, written
  /// as null.
  std::string server_profile;
  /// The cost proxy; nullopt when the scenario has no `cost_model:`. results.json `fabric`
  /// writes its total as `cost_usd` and the whole as `cost_breakdown_usd` (null without).
  std::optional<FabricCost> cost;
};

/// DESIGN.md §4 `counters`, extended.
struct Counters {
  int64_t drops = 0;        ///< packets lost anywhere: tail drop + corrupted frames
  int64_t retransmits = 0;  ///< data packets sent again by go-back-N
  int64_t pfc_pause_tx = 0, pfc_pause_rx = 0, ecn_marked = 0, cnp_tx = 0;
  int64_t max_queue_bytes = 0;  ///< peak occupancy of any switch egress queue
  // extensions (results.json `counters` keeps the names above first, then these):
  int64_t tail_drops = 0;      ///< refused by buffer admission
  int64_t corrupt_drops = 0;   ///< frames failing FCS/ICRC at a receiver (bit errors)
  int64_t nak_tx = 0;          ///< go-back-N NAKs (PSN sequence error) sent by receivers
  int64_t rto_timeouts = 0;    ///< retransmission timer expiries
  int64_t headroom_drops = 0;  ///< lossless frames refused: PFC headroom overflow
  int64_t watchdog_drops = 0;  ///< frames the PFC watchdog dropped (action drop)
  int64_t pfc_storms = 0;      ///< queues the PFC watchdog declared stormed
  int64_t paused_ps = 0;       ///< summed over egress queues: time paused by PFC
  int64_t cnp_rx = 0;          ///< DCQCN notifications received by senders
  int64_t ce_received = 0;     ///< CE-marked packets received in sequence
  /// The registered counters (sim/core/counter_table.hpp), by index - kBuiltinCounters: each
  /// the run's total (its ports merged as its CounterDef says). Empty when none is registered.
  std::vector<int64_t> registered;
};

/// The value of counter_table()[index] in `c` (0 for a registered one `c` does not hold).
int64_t counter_value(const Counters& c, uint32_t index);

/// One way to break a deadlock: `--set` values that apply it (KEY=VALUE; empty when it is not
/// a change of keys) and what it does.
struct DeadlockFix {
  std::vector<std::string> sets;
  std::string why;
};

/// results.json `deadlock` (null when none was found).
struct DeadlockRow {
  int64_t detected_at_ps = -1;
  std::vector<std::string> cycle;  ///< "switch:port:priority", in wait-for order
  std::vector<std::string> flows;  ///< "host S -> host D (qp Q)" with packets in the cycle
  std::vector<std::string> links;  ///< per cycle entry: "switch->peer", the link it sends on
  bool broken_by_watchdog = false;
  /// What breaks it, in the order to try (deadlock_fixes).
  std::vector<DeadlockFix> fixes;
};

/// A congestion setting the run's result leans on (results.json `depends_on`, the summary's
/// "depends on" lines): the keys and what the run did that makes them matter.
struct Dependence {
  std::vector<std::string> keys;
  std::string why;
};

/// Something the run's numbers depend on that the model lacks (results.json `limits`, the
/// summary's "not modelled" lines; sim/run/run_limits.hpp says when): what, and why this run
/// depends on it.
struct Limit {
  std::string what;
  std::string why;
};

/// Byte conservation over the run (the invariant the simulator checks at the end of every run):
/// sent_bytes = delivered_bytes + dropped_bytes + in_flight_bytes, all in wire bytes of every
/// packet a NIC injected (data, ACKs, NAKs).
struct Conservation {
  int64_t sent_bytes = 0, delivered_bytes = 0, dropped_bytes = 0, in_flight_bytes = 0;
};

/// One row of ports.csv: one direction of one link; tx and queue figures at its egress, rx
/// figures at the peer's ingress (what arrived over this direction).
struct PortRow {
  std::string node, peer;
  int port = 0;
  int64_t rate_bps = 0;                  ///< as negotiated (a degraded link shows its lower rate)
  int64_t tx_packets = 0, tx_bytes = 0;  ///< wire bytes
  int64_t rx_packets = 0, rx_bytes = 0;  ///< frames received intact by the peer
  int64_t drops = 0, drop_bytes = 0;     ///< tail drops at this egress
  int64_t corrupt_drops = 0;             ///< frames dropped by the peer for bit errors
  int64_t pfc_tx = 0, pfc_rx = 0;        ///< PFC frames sent to / received from the peer
  int64_t headroom_drops = 0;            ///< lossless frames refused: this ingress's headroom
  int64_t max_queue_bytes = 0;           ///< peak occupancy (queued + being serialized)
  double avg_queue_bytes = 0;            ///< time-averaged occupancy over the run
  /// Time-weighted occupancy percentiles: the occupancy the port was at or below for 50 / 99 /
  /// 99.9 % of the run, quoted as the upper edge of a log histogram bucket (4 per octave, so at
  /// most 25 % above the true value), capped at the peak.
  int64_t p50_queue_bytes = 0, p99_queue_bytes = 0, p999_queue_bytes = 0;
  /// The registered per-port counters (CounterScope::kPort), in table order: ports.csv writes
  /// them after its fixed columns.
  std::vector<int64_t> registered;
};

/// One row of queues.csv: one egress queue (port x traffic class) that carried or dropped
/// traffic.
struct QueueRow {
  std::string node, peer;
  int port = 0;
  int traffic_class = 0;
  int64_t tx_packets = 0, tx_bytes = 0, drops = 0, drop_bytes = 0, max_queue_bytes = 0;
  double avg_queue_bytes = 0;  ///< time-averaged occupancy over the run
  double mean_sojourn_ps = 0;  ///< enqueue to end of serialization, mean over sent packets
  int64_t ecn_marked = 0;      ///< data packets this queue marked CE (ecn.enabled)
  int64_t paused_ps = 0;       ///< time this queue was paused by PFC from its peer
  int64_t watchdog_drops = 0;  ///< frames the PFC watchdog dropped here
};

/// One row of flows.csv: one message (an RDMA write on a queue pair).
struct FlowRow {
  int64_t id = 0;
  int src = 0, dst = 0;  ///< host ids (= ranks)
  int64_t qp = 0;        ///< queue pair index
  int traffic_class = 0;
  int64_t bytes = 0;
  int64_t start_ps = 0;  ///< posted to the NIC
  int64_t end_ps = 0;    ///< last byte received in order at the destination; < start_ps
                         ///< (e.g. -1) if the message had not finished when the run stopped
  /// Packets of this message whose copy the receiver accepted was a resend (each packet once,
  /// however often it was resent); resends the receiver discarded (out of order, duplicates)
  /// count only in counters.retransmits.
  int64_t retransmitted_packets = 0;
  bool traffic = false;  ///< one of the scenario's traffic flows (else a collective's message)
  int64_t traffic_index = -1;  ///< traffic flows: the index in the scenario's traffic list
  bool background = false;     ///< a traffic flow generated by `background:` (fct_slowdown.hpp)
  /// Its FCT alone on the idle fabric (ideal_fct.hpp), ps; -1: not computed (collectives'
  /// messages, or unfinished).
  int64_t ideal_ps = -1;
};

/// How the collectives ran: ranks in servers and NCCL's settings (results.json `nccl`).
struct NcclSummary {
  int ranks = 0, servers = 0, gpus_per_server = 0, channels = 0;
  std::string transport;                 ///< "IB" (RDMA verbs, also RoCE) or "Socket"
  bool gdr = true;                       ///< GPUDirect RDMA used (else staged through host memory)
  std::string algo;                      ///< NCCL_ALGO as given ("" = every algorithm)
  std::string proto;                     ///< NCCL_PROTO as given ("" = NCCL's default set)
  std::vector<std::string> environment;  ///< NCCL_* variables taken from the environment
  /// Buffer per connection for each protocol ("ll", "ll128", "simple"), bytes.
  std::vector<std::pair<std::string, int64_t>> buffsize_bytes;
  int min_nchannels = 0, max_nchannels = 0;  ///< NCCL_MIN/MAX_NCHANNELS; 0 = unset
  std::string net_gdr_level;                 ///< NCCL_NET_GDR_LEVEL in force (PXB unset)
  int64_t step_latency_ps = -1;              ///< nccl.step_latency; -1 = NCCL's per-step constants
  int64_t launch_latency_ps = -1;            ///< nccl.launch_latency; -1 = NCCL's base latencies
  /// The NCCL release line whose tuning tables picked algorithms and protocols ("2.28",
  /// "2.25-2.27"), the version asked for ("" = none: the newest) and where that came from
  /// ("default", "scenario", "measured log").
  std::string tuning, version, version_source;
};

/// A real nccl-tests log beside the simulated sweep (scenario `measured.nccl_tests`): busbw at
/// the sizes both have, the measured one from the log's out-of-place time column with
/// nccl-tests' busbw factor.
struct MeasuredComparison {
  std::string path;  ///< measured.nccl_tests as written (relative to the scenario's folder)
  struct Point {
    int64_t size_bytes;
    double measured_busbw_GBps, simulated_busbw_GBps;
    double error_pct;  ///< (simulated − measured) / measured × 100
    std::string simulated_algorithm, simulated_protocol;  ///< what the run used at this size
    /// NCCL's own choice at this size where the log prints it (NcclLog::choices), else "".
    std::string log_algorithm, log_protocol;
  };
  std::vector<Point> points;
  /// The communicator's channels: the log's (its "Channel xx/yy" lines; 0 when it has none)
  /// and the model's (NcclRunSetup::channels).
  int log_channels = 0, model_channels = 0;
  /// Sizes where the log prints NCCL's choice, and of those, where the run used the same
  /// algorithm and protocol.
  int choices_compared = 0, choices_same = 0;
  /// Median and worst |error_pct| over the points; -1 when no size is in both.
  double median_abs_pct_error = -1, max_abs_pct_error = -1;
  /// The log's network transport (calibration/net_transport.hpp): "modelled", "not_modelled",
  /// "none" (one node) or "unknown"; its name, and the line of the log that shows it (0: none)
  /// with that line's text.
  std::string transport_support = "unknown";
  std::string transport_name;
  int transport_line = 0;
  std::string transport_evidence;
};

/// A real perftest log beside the simulated perftest run (scenario `measured.perftest`), at the
/// message sizes both have: a bw test's BW average in the log's unit, a latency test's median
/// latency t_typical (t_avg when the log lacks it), microseconds.
struct PerftestComparison {
  std::string path;    ///< measured.perftest as written (relative to the scenario's folder)
  std::string test;    ///< the perftest section's test, e.g. "ib_write_bw"
  std::string metric;  ///< "bw_average", "t_typical" or "t_avg"
  std::string unit;    ///< "Gb/sec" or "MB/sec" (2^20 B/s), as the log prints it; "usec"
  struct Row {
    int64_t bytes;
    double measured, simulated;  ///< in `unit`
    double error_pct;            ///< (simulated − measured) / measured × 100
  };
  std::vector<Row> rows;
  /// Sizes skipped: the log's without a simulated row (or without a positive value), and the
  /// run's without a row in the log.
  int only_measured = 0, only_simulated = 0;
  /// Median and worst |error_pct| over the rows, and the size of the worst; -1 when no size is
  /// in both.
  double median_abs_pct_error = -1, max_abs_pct_error = -1;
  int64_t max_error_bytes = -1;
  /// What the log ran that the model does not (a UD connection, GPU memory), one line each.
  std::vector<std::string> warnings;
};

/// One training step (scenario `training:`), replayed on the fabric (collectives/
/// step_model.hpp). Times in picoseconds.
struct TrainingSummary {
  int dp = 0, tp = 0, pp = 0, microbatches = 0, ranks = 0, layers = 0, buckets = 0;
  int64_t step_ps = 0;          ///< first task to last
  int64_t compute_ps = 0;       ///< max over GPUs of pure compute
  int64_t exposed_comm_ps = 0;  ///< step − compute of the GPU that finished last
  double gpu_utilization = 0;   ///< mean over GPUs of compute / step
  int critical_rank = 0;
  /// The critical path: compute, NCCL software latency (launch, per step), link transfer (each
  /// transfer's bytes at its first link's full rate: NVLink inside a server, the NIC across)
  /// and the rest of its network time (sharing the link with the collective's other channels
  /// and flows, queueing, PFC pauses, headers, propagation and switching).
  int64_t cp_compute_ps = 0, cp_software_ps = 0, cp_link_ps = 0, cp_waiting_ps = 0;
  /// Of cp_waiting_ps: the time the sending GPU's NIC was held by PFC pause frames while each
  /// critical transfer was in flight (Network::host_paused_ps over the transfer's post to
  /// completion, at most its time beyond link transfer); cp_queueing_ps is the remainder
  /// (sharing, queueing in switches, headers, propagation, switching).
  int64_t cp_pfc_pause_ps = 0, cp_queueing_ps = 0;
};

/// The flow mode's own figures (results.json `flow_model`).
struct FlowStats {
  int64_t flows = 0;           ///< flows completed
  int64_t reallocations = 0;   ///< max-min rate computations (per start or end instant; ends
                               ///< within flow.batch_tolerance share one)
  int64_t max_active = 0;      ///< most flows sharing the fabric at once
  double link_bytes = 0;       ///< wire bytes × hops summed over flows
  int64_t batched_ends = 0;    ///< flows ended inside a batch window, without a computation
  double batch_tolerance = 0;  ///< flow.batch_tolerance of the run
};

/// Flow completion times (delivery - post) of every delivered message of a kind, however many
/// flows.csv records: nearest-rank p50 and p99 (the value at rank ceil(p × N), 1-based), exact
/// while flows.csv holds every message of the kind, else to within 0.1 % (QuantileHistogram:
/// 1024 buckets per power of two, the bucket's largest value), and the largest exactly, as
/// results.json `flows` and the run summary quote them. The three are -1 when none completed.
struct FctSummary {
  int64_t completed = 0;
  int64_t p50_ps = -1, p99_ps = -1, max_ps = -1;
};
/// The FctSummary of the values in `h`.
FctSummary fct_summary(const QuantileHistogram& h);
/// The FctSummary of `fct_ps`, exact (flows.csv holds every message: the percentiles are
/// nearest-rank values of the list).
FctSummary fct_summary(std::vector<int64_t> fct_ps);
/// An output file of a run that could not be written (results.json `files_not_written`).
struct UnwrittenFile {
  std::string file;   ///< its name in the --out folder: "flows.csv", "trace.json"
  std::string error;  ///< why: strerror of the errno ("No space left on device")
};

/// A queue pair's longest wait for its acknowledged PSN to advance (Network::longest_stall).
struct QpStallRow {
  int64_t stall_ps = 0;  ///< 0: no queue pair waited
  int64_t from_ps = 0;
  int src_host = -1, dst_host = -1;
};

/// One link change of topology.link_events as it ran.
struct LinkEventRow {
  int64_t at_ps = 0;
  std::string link;        ///< "leaf0-spine1" (#i for one of parallel links)
  std::string state;       ///< "down", "up" or "rate"
  int64_t rate_bps = 0;    ///< the rate from then on; 0 = unchanged (down: none)
  int64_t routes_ps = -1;  ///< when every node's routes took it into account; -1 = never
  bool ran = true;         ///< false: after the run's end, it did not happen
};

/// results.json `link_events` (only when the scenario has topology.link_events).
struct LinkEventsReport {
  int64_t reconvergence_delay_ps = 0;
  int64_t end_ps = 0;  ///< when the run ended
  std::vector<LinkEventRow> events;
  /// Per link that changed, in order of its first change: packets lost because it was down.
  std::vector<std::pair<std::string, int64_t>> links;
  /// Packets lost to the changes: on `links`, plus `lost_without_route`.
  int64_t lost_packets = 0;
  /// Lost at a node whose new routes had no way left to their destination (in flight towards
  /// it when the routes changed).
  int64_t lost_without_route = 0;
  /// Why routes could not avoid the links down at some time ("host3 cannot reach host0"),
  /// the first such; empty when they always could.
  std::string cut;
  QpStallRow longest_stall;
};

struct RunReport {
  std::string scenario;
  uint64_t seed = 0;
  /// "packet" or "flow" (scenario key `mode`): in the flow mode the queue, PFC, ECN, drop and
  /// per-port counters are not modelled and stay 0.
  std::string mode = "packet";
  /// The per-queue-pair congestion control the run's NICs ran (nic.congestion_control, with
  /// auto resolved: "dcqcn" when dcqcn.enabled on RoCE, else "none"); the flow mode runs none
  /// (its `limits` say so) and reports the scenario's choice.
  std::string congestion_control = "none";
  std::optional<FlowStats> flow_stats;  ///< flow mode only
  FabricSummary fabric;
  NcclSummary nccl;
  std::vector<CollectiveRow> rows;
  std::optional<MeasuredComparison> measured;  ///< measured.nccl_tests, when the scenario names one
  std::optional<TrainingSummary> training;     ///< training:, when the scenario has one
  /// jobs:, when the scenario has them: one row each, in the scenario's order.
  std::vector<JobRow> jobs;
  /// measured.perftest beside the perftest run, when the scenario names a log.
  std::optional<PerftestComparison> measured_perftest;
  /// perftest:, when the scenario has one: perftest's own report of the simulated run
  /// (perftest/perftest.hpp: format_perftest), printed as perftest prints it.
  std::string perftest;
  Counters counters;
  DeadlockRow deadlock;
  /// Events simulated; with jobs, the alone runs' too (as are wall_s and packet_hops), while
  /// simulated_ps and the counters are the run with every job's.
  int64_t events = 0;
  int64_t simulated_ps = 0;
  bool complete = true;           ///< false when the run stopped before the whole sweep finished
  bool interrupted = false;       ///< stopped by SIGINT/SIGTERM (complete is false too)
  bool deadlocked = false;        ///< stopped by the deadlock detector (complete is false too)
  bool limited = false;           ///< stopped at --max-wall or --max-events (complete is false too)
  bool transport_failed = false;  ///< a queue pair gave up (retry count exceeded; complete false)
  bool has_workload = true;       ///< a collective sweep ran (false: traffic flows only)
  bool has_training = false;      ///< the scenario has a training step (run or not, see `training`)
  std::string stop_reason;        ///< "workload done", "interrupted", "stalled: …"
  /// Packet mode: the mean over hosts of the fraction of the simulated time their NIC port
  /// was paused by PFC in the data class; the queue pairs the run opened.
  double mean_host_paused_fraction = 0;
  int64_t queue_pairs = 0;
  /// Congestion settings the result depends on (congestion_dependence).
  std::vector<Dependence> depends_on;
  /// What the numbers depend on that the model lacks (run_limits).
  std::vector<Limit> limits;
  /// topology.link_events as they ran (packet mode), when the scenario has any.
  std::optional<LinkEventsReport> link_events;
  // perf.json only (wall-clock values never enter results.json):
  double wall_s = 0;
  int64_t packet_hops = 0;
  int64_t peak_rss_bytes = 0;
  int64_t packet_pool_packets = 0;  ///< packet mode: the pool's high-water mark
  int64_t packet_struct_bytes = 0;  ///< sizeof(Packet)
  Conservation conservation;
  std::vector<PortRow> ports;
  std::vector<QueueRow> queues;
  std::vector<FlowRow> flows;
  int64_t flows_unrecorded = 0;  ///< delivered messages beyond the flow-record bound
  /// Completion times of every delivered message: all of them, the scenario's traffic flows,
  /// the collectives' (and training step's) messages.
  FctSummary fct_all, fct_traffic, fct_messages;
  /// The traffic flows' FCT slowdown per size bucket (results.json `fct_slowdown`,
  /// slowdown.csv); no flows when there is no traffic or no ideal could be computed.
  FctSlowdown slowdown;
  /// The run's output files that could not be written whole (none were left half-written):
  /// results.json ends with `files_not_written` only when this is not empty.
  std::vector<UnwrittenFile> files_not_written;
};

/// A CSV text field, quoted (RFC 4180) only when it holds a comma, quote or line break.
std::string csv_field(const std::string& s);

/// The nccl-tests header line block ("#  size  count  type  redop  root  time  algbw  busbw
/// #wrong" with units), printed once before the rows.
void print_table_header(std::ostream& out);
/// One row, in nccl-tests' column widths and time precision; #wrong is "N/A" (nothing to check).
void print_table_row(std::ostream& out, const CollectiveRow& row);
/// "# Avg bus bandwidth : X" and the fabric / counters / time summary.
void print_summary(std::ostream& out, const RunReport& report);

/// results.json as DESIGN.md §4 (deterministic: same scenario and seed, same bytes), in this key
/// order: scenario, seed, fabric, collectives, counters (DESIGN's seven, then tail_drops,
/// corrupt_drops, nak_tx, rto_timeouts), conservation {sent_bytes, delivered_bytes,
/// dropped_bytes, in_flight_bytes}, flows {count, completed, fct_us {p50, p99, max}, fct_ps {p50,
/// p99, max}, retransmitted_packets}, deadlock, run, ports_truncated, ports [PortRow objects].
/// FCT percentiles are nearest-rank over completed flows (end_ps >= start_ps), null when there is
/// none. Non-finite doubles are written as null. Ends with `files_not_written` [{file, error}]
/// when report.files_not_written is not empty. Every writer below writes its file whole or not at
/// all (output_file.hpp) and throws OutputError (path and errno) when it cannot.
void write_results_json(const std::string& path, const RunReport& report);
/// The text write_results_json writes.
std::string results_json_text(const RunReport& report);
/// One collectives[] object of results.json: collective, algorithm, protocol, ranks,
/// size_bytes, count, type, redop, root, time_ps, time_us, algbw_GBps, busbw_GBps, channels,
/// nccl_model_time_us (null where NCCL's model has none).
nlohmann::ordered_json collective_row_json(const CollectiveRow& row);
/// results.json's `jobs` array (jobs_report.cpp): per job name, placement, servers, leaves,
/// iterations, start_ps, end_ps (null = not finished), complete, collective (as
/// collective_row_json, time the mean iteration), alone {time_ps, busbw_GBps} or null,
/// alone_note (null = none), slowdown (null = not known), overlap (the share of its time
/// another job ran; null = no other job or not finished). A training job's collective is
/// "training_step" with its step time and null algorithm, protocol, type, redop and bandwidths.
nlohmann::ordered_json jobs_json(const std::vector<JobRow>& jobs);
/// The jobs' table of the summary ("# jobs ...").
void print_jobs(std::ostream& out, const std::vector<JobRow>& jobs);
/// results.json's `link_events` object (link_events_report.cpp): reconvergence_delay_ps,
/// lost_packets, lost_without_route, longest_stall {stall_ps, from_ps, src, dst} or null,
/// routes_cut (null or why), events [{at_ps, link, state, rate_bps (null = unchanged), routes_ps
/// (null = never), ran}], links [{link, lost_packets}].
nlohmann::ordered_json link_events_json(const LinkEventsReport& r);
/// The summary's lines about them ("# link events: ...").
void print_link_events(std::ostream& out, const LinkEventsReport& r);
/// perf.json: wall_s, events_per_s, packet_hops_per_s, peak_rss_bytes.
void write_perf_json(const std::string& path, const RunReport& report);
/// ports.csv: one line per PortRow, columns node,port,peer,rate_bps,tx_packets,tx_bytes,
/// rx_packets,rx_bytes,drops,drop_bytes,corrupt_drops,max_queue_bytes,avg_queue_bytes (%.1f),
/// p50_queue_bytes,p99_queue_bytes,p999_queue_bytes. Text fields are quoted as RFC 4180 asks
/// when they hold a comma, quote or line break.
void write_ports_csv(const std::string& path, const RunReport& report);
/// queues.csv: one line per QueueRow, columns node,port,peer,traffic_class,tx_packets,tx_bytes,
/// drops,drop_bytes,max_queue_bytes,avg_queue_bytes (%.1f),mean_sojourn_ns (%.3f),ecn_marked.
void write_queues_csv(const std::string& path, const RunReport& report);
/// flows.csv: one line per FlowRow, columns id,src,dst,qp,traffic_class,bytes,start_us,end_us,
/// fct_us,retransmitted_packets; times exact from picoseconds (format_ps_as_us), fct = end - start.
/// A flow with end_ps < start_ps (not finished when the run stopped) has end_us and fct_us empty.
void write_flows_csv(const std::string& path, const RunReport& report);
/// flows.csv compressed as gzip (RFC 1952, zlib's default level): `zcat` gives flows.csv's
/// bytes. Throws OutputError as write_flows_csv does.
void write_flows_csv_gz(const std::string& path, const RunReport& report);

/// results.json lists at most this many ports (those with traffic: tx_packets, drops or
/// corrupt_drops > 0, in RunReport::ports order) and sets "ports_truncated" when it left some out.
inline constexpr std::size_t kResultsJsonMaxPorts = 4096;

/// Picoseconds as exact decimal microseconds, "<int>.<6 digits>" (1 -> "0.000001",
/// 1'500'000 -> "1.500000", -1 -> "-0.000001"), by integer arithmetic: no rounding, ever.
std::string format_ps_as_us(int64_t ps);

/// Peak resident set size of this process in bytes (Linux getrusage), 0 if unknown.
int64_t peak_rss_bytes();

}  // namespace fabricsim
