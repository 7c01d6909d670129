// The run's report assembled: its header (scenario, fabric, NCCL setup), each size's row, the
// network's counters, per-port, per-queue and flow rows, and the end-of-run accounting check.

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collectives/nccl_model.hpp"
#include "collectives/nccl_tests.hpp"
#include "sim/core/counter_table.hpp"
#include "sim/net/net_config.hpp"
#include "sim/net/network.hpp"
#include "sim/run/run.hpp"
#include "sim/run/run_limits.hpp"
#include "sim/run/run_parts.hpp"

namespace fabricsim {

RunReport report_header(const Scenario& sc, const Prepared& prepared) {
  RunReport rep;
  rep.scenario = sc.name;
  rep.seed = sc.seed;
  rep.mode = sc.mode;
  rep.congestion_control = congestion_control_in_effect(sc);
  rep.fabric = summarize(sc, prepared.fabric);
  if (sc.has_workload) {
    const NcclRunSetup& n = prepared.nccl;
    rep.nccl.ranks = n.layout.ranks;
    rep.nccl.servers = n.layout.servers();
    rep.nccl.gpus_per_server = n.layout.gpus_per_server;
    rep.nccl.channels = n.channels;
    rep.nccl.transport = effective_net(n.settings) == NcclNet::kSocket ? "Socket" : "IB";
    rep.nccl.gdr = !n.staged;
    rep.nccl.algo = sc.nccl.algo;
    rep.nccl.proto = sc.nccl.proto;
    for (NcclProto p : {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple}) {
      rep.nccl.buffsize_bytes.emplace_back(to_string(p), nccl_buffsize_bytes(p, n.settings));
    }
    rep.nccl.min_nchannels = n.settings.min_nchannels;
    rep.nccl.max_nchannels = n.settings.max_nchannels;
    rep.nccl.net_gdr_level = to_string(n.settings.net_gdr_level);
    rep.nccl.step_latency_ps = n.step_latency_ps;
    rep.nccl.launch_latency_ps = n.launch_latency_ps;
    rep.nccl.tuning = tuning_of(n.tune).name;
    rep.nccl.version = sc.nccl.version;
    rep.nccl.version_source = sc.nccl.version.empty()    ? "default"
                              : sc.nccl.version_from_log ? "measured log"
                                                         : "scenario";
    for (const auto& [key, assignment] : sc.nccl.from_env)
      rep.nccl.environment.push_back(assignment);
  }
  rep.has_workload = sc.has_workload;
  rep.has_training = sc.training.enabled;
  rep.limits = run_limits(sc, prepared);
  return rep;
}

/// The message sizes of the workload's sweep (none without a workload).
std::vector<int64_t> workload_sizes(const Scenario& sc) {
  const int elem = datatype_bytes(sc.workload.datatype);
  return sc.has_workload
             ? sweep_sizes(sc.workload.minbytes, sc.workload.maxbytes, sc.workload.stepfactor, elem)
             : std::vector<int64_t>{};
}

/// The row of one size, before it runs: what NCCL would choose and the nccl-tests columns.
CollectiveRow plan_row(const Scenario& sc, const NcclRunSetup& setup, const SizePlan& plan) {
  return plan_row(sc.workload, setup, plan);
}

CollectiveRow plan_row(const WorkloadConfig& workload, const NcclRunSetup& setup,
                       const SizePlan& plan) {
  CollectiveRow row;
  row.collective = workload.collective;
  row.algorithm = plan.algorithm;
  row.protocol = plan.protocol;
  row.nccl_model_time_us = plan.nccl_model_time_us;
  row.channels = plan.spec.channels;
  row.datatype = workload.datatype;
  row.redop = nccl_tests_redop(row.collective, workload.redop);
  row.root = nccl_tests_root(row.collective, setup.root);
  row.ranks = setup.layout.ranks;
  row.size_bytes = plan.size.size_bytes;
  row.count = plan.size.count;
  return row;
}

/// Copies the network's counters, per-port and per-queue statistics and flow records into the
/// report (formatting is sim/report's job).
void fill_counters(const Network& net, RunReport& rep) {
  const NetTotals t = net.totals();
  rep.counters.drops = t.drops;
  rep.counters.retransmits = t.retransmits;
  rep.counters.max_queue_bytes = t.max_queue_bytes;
  rep.counters.tail_drops = t.tail_drops;
  rep.counters.corrupt_drops = t.corrupt_drops;
  rep.counters.nak_tx = t.nak_tx;
  rep.counters.rto_timeouts = t.rto_timeouts;
  rep.counters.ecn_marked = t.ecn_marked;
  rep.counters.pfc_pause_tx = t.pfc_tx;
  rep.counters.pfc_pause_rx = t.pfc_rx;
  rep.counters.cnp_tx = t.cnp_tx;
  rep.counters.cnp_rx = t.cnp_rx;
  rep.counters.ce_received = t.ce_received;
  rep.counters.headroom_drops = t.headroom_drops;
  rep.counters.watchdog_drops = t.watchdog_drops;
  rep.counters.pfc_storms = t.watchdog_storms;
  rep.counters.paused_ps = t.paused_ps;
  rep.counters.registered = t.registered;
  const std::vector<uint32_t> port_counters = registered_counter_indices(CounterScope::kPort);
  const DeadlockReport& d = net.deadlock();
  rep.deadlock = DeadlockRow{d.detected_at_ps, d.cycle, d.flows, d.links, d.broken_by_watchdog, {}};
  rep.packet_hops = t.packet_hops;
  const ByteBalance b = net.byte_balance();
  rep.conservation =
      Conservation{b.sent_bytes, b.delivered_bytes, b.dropped_bytes, b.in_flight_bytes};
  const FabricGraph& g = net.fabric().graph;
  const int64_t now = rep.simulated_ps;
  const auto& ports = net.ports();
  for (uint32_t pid = 0; pid < ports.size(); ++pid) {
    const Port& p = ports[pid];
    PortRow row;
    row.node = g[p.node].name;
    row.peer = g[p.peer_node].name;
    row.port = p.index;
    row.rate_bps = p.rate_bps;
    row.tx_packets = p.counters.tx_packets;
    row.tx_bytes = p.counters.tx_bytes;
    const ArrivalCounters& arrived = net.arrived_from(pid);
    row.rx_packets = arrived.rx_packets;
    row.rx_bytes = arrived.rx_bytes;
    row.drops = p.counters.drops;
    row.drop_bytes = p.counters.drop_bytes;
    row.corrupt_drops = arrived.corrupt_drops;
    row.pfc_tx = p.counters.pfc_tx;
    row.pfc_rx = p.counters.pfc_rx;
    row.headroom_drops = p.counters.headroom_drops;
    row.max_queue_bytes = p.counters.max_queue_bytes;
    row.avg_queue_bytes = net.port_occupancy(pid).average(now);
    const OccupancyHistogram& h = net.port_histogram(pid);
    // A bucket's upper edge can exceed the peak the port reached: quote at most the peak.
    row.p50_queue_bytes = std::min(h.percentile(0.5), row.max_queue_bytes);
    row.p99_queue_bytes = std::min(h.percentile(0.99), row.max_queue_bytes);
    row.p999_queue_bytes = std::min(h.percentile(0.999), row.max_queue_bytes);
    for (uint32_t k : port_counters) row.registered.push_back(net.registered_counter(k, pid));
    rep.ports.push_back(row);
    for (int tc = 0; tc < kTrafficClasses; ++tc) {
      const QueueCounters& q = net.queue(pid, tc);
      if (q.tx_packets == 0 && q.drops == 0 && q.ecn_marked == 0 && q.paused_ps == 0 &&
          q.watchdog_drops == 0) {
        continue;
      }
      QueueRow qr;
      qr.node = row.node;
      qr.peer = row.peer;
      qr.port = p.index;
      qr.traffic_class = tc;
      qr.tx_packets = q.tx_packets;
      qr.tx_bytes = q.tx_bytes;
      qr.drops = q.drops;
      qr.drop_bytes = q.drop_bytes;
      qr.max_queue_bytes = q.occupancy.max_bytes;
      qr.avg_queue_bytes = q.occupancy.average(now);
      qr.mean_sojourn_ps =
          q.tx_packets > 0 ? static_cast<double>(q.sojourn_ps) / static_cast<double>(q.tx_packets)
                           : 0.0;
      qr.ecn_marked = q.ecn_marked;
      qr.paused_ps = q.paused_ps;
      qr.watchdog_drops = q.watchdog_drops;
      rep.queues.push_back(qr);
    }
  }
  rep.flows_unrecorded = net.flows_unrecorded();
  // Completion times over every delivered message: exact from the records while they hold
  // all of a kind, else from the network's histograms (within 0.1 %).
  static_assert(TrafficPlayer::kTagBit == uint64_t{1} << 63, "fct_histogram(true): traffic");
  std::vector<int64_t> fct[2];
  for (const FlowRecord& f : net.flows()) fct[f.tag >> 63].push_back(f.end_ps - f.start_ps);
  QuantileHistogram all = net.fct_histogram(false);
  all.merge(net.fct_histogram(true));
  const auto summary = [](const QuantileHistogram& h, std::vector<int64_t> recorded) {
    return h.count() == static_cast<int64_t>(recorded.size()) ? fct_summary(std::move(recorded))
                                                              : fct_summary(h);
  };
  rep.fct_messages = summary(net.fct_histogram(false), fct[0]);
  rep.fct_traffic = summary(net.fct_histogram(true), fct[1]);
  fct[0].insert(fct[0].end(), fct[1].begin(), fct[1].end());
  rep.fct_all = summary(all, std::move(fct[0]));
  for (const FlowRecord& f : net.flows()) {
    FlowRow fr;
    fr.id = static_cast<int64_t>(f.seq);
    fr.src = f.src;
    fr.dst = f.dst;
    fr.qp = f.qp;
    fr.traffic_class = f.tc;
    fr.bytes = f.bytes;
    fr.start_ps = f.start_ps;
    fr.end_ps = f.end_ps;
    fr.retransmitted_packets = f.retransmitted_packets;
    fr.traffic = (f.tag & TrafficPlayer::kTagBit) != 0;
    if (fr.traffic) fr.traffic_index = static_cast<int64_t>(f.tag & ~TrafficPlayer::kTagBit);
    rep.flows.push_back(fr);
  }
}

/// The end-of-run invariant on the workload: a complete run has a row for every size and the
/// training step's summary; an incomplete one says why. Throws std::logic_error (an internal
/// error, exit 1) otherwise, rather than print a table with sizes silently missing.
void check_accounted(const Scenario& sc, const Prepared& prepared, const RunReport& rep) {
  if (!rep.complete) {
    if (rep.stop_reason.empty() || rep.stop_reason == to_string(StopReason::kWorkloadDone)) {
      throw std::logic_error("the run stopped early without a reason (" +
                             std::to_string(rep.rows.size()) + " sizes finished)");
    }
    return;
  }
  const size_t sizes = workload_sizes(sc).size();
  if (rep.rows.size() != sizes) {
    throw std::logic_error("the run completed with " + std::to_string(rep.rows.size()) + " of " +
                           std::to_string(sizes) + " collective sizes");
  }
  if (prepared.step.has_value() != rep.training.has_value()) {
    throw std::logic_error("the run completed without the training step's summary");
  }
  if (rep.jobs.size() != prepared.jobs.jobs.size() ||
      std::any_of(rep.jobs.begin(), rep.jobs.end(), [](const JobRow& j) { return !j.complete; })) {
    throw std::logic_error("the run completed without every job's time");
  }
}

}  // namespace fabricsim
