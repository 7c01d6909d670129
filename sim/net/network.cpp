#include "sim/net/network.hpp"

#include "sim/core/units.hpp"
#include "sim/net/network_hash.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fabricsim {
using net_hash::fmix64;

Network::Network(Simulator& sim, const Fabric& fabric, const RoutingTable& routes,
                 const NetConfig& cfg)
    : sim_(sim),
      fabric_(fabric),
      routes_(routes),
      cfg_(cfg),
      monitor_(sim,
               LosslessMonitor::Settings{cfg.pfc_watchdog, cfg.watchdog_detection_ps,
                                         cfg.watchdog_restoration_ps, cfg.deadlock_check_ps,
                                         cfg.credits},
               &Network::on_check_barrier, this) {
  if (cfg.mtu_bytes <= 0) throw std::invalid_argument("Network: mtu_bytes must be > 0");
  if (cfg.ack_interval < 1) throw std::invalid_argument("Network: ack_interval must be >= 1");
  if (cfg.rto_ps <= 0) throw std::invalid_argument("Network: rto must be > 0");
  if (cfg.traffic_class < 0 || cfg.traffic_class >= kTrafficClasses) {
    throw std::invalid_argument("Network: traffic_class must be 0..7");
  }
  if (cfg.retry_count < 0) throw std::invalid_argument("Network: retry_count must be >= 0");
  ack_wire_bytes_ = cfg.wire.ack_wire_bytes();
  const int64_t mtu_frame = cfg.wire.wire_bytes(cfg.mtu_bytes);
  scheduler_ = EgressScheduler(cfg.scheduler, SchedulerSettings{cfg.dwrr_weights, mtu_frame});
  const FabricGraph& g = fabric.graph;
  const size_t n = boost::num_vertices(g);
  if (n >= Simulator::kMaxLps) {  // nodes 0..n-1 and the control LP n
    throw std::invalid_argument("Network: " + std::to_string(n) +
                                " nodes exceed the engine's logical process ids (at most " +
                                std::to_string(Simulator::kMaxLps - 1) + " nodes)");
  }
  first_port_.resize(n + 1);
  is_switch_.resize(n);
  host_of_node_.assign(n, -1);
  switch_salt_.resize(n);
  RngStream ecmp_rng(cfg.seed, "ecmp");
  ecmp_salt_ = static_cast<uint32_t>(ecmp_rng.next());
  for (size_t h = 0; h < fabric.hosts.size(); ++h)
    host_of_node_[fabric.hosts[h]] = static_cast<int32_t>(h);
  host_pauses_.resize(fabric.hosts.size());

  // Ports: node v's port i is its i-th out-edge (fabric_graph.hpp), both directions of each link.
  for (VertexId v = 0; v < n; ++v) {
    first_port_[v] = static_cast<uint32_t>(ports_.size());
    is_switch_[v] = g[v].kind == NodeKind::kSwitch;
    switch_salt_[v] = static_cast<uint32_t>(ecmp_rng.next());
    uint16_t i = 0;
    for (auto [e, eend] = boost::out_edges(v, g); e != eend; ++e, ++i) {
      Port p;
      p.node = static_cast<uint32_t>(v);
      p.peer_node = static_cast<uint32_t>(boost::target(*e, g));
      p.index = i;
      p.rate_bps = g[*e].rate_bps;
      p.delay_ps = g[*e].delay_ps;
      p.bit_error_rate = g[*e].bit_error_rate;
      p.dim = static_cast<int8_t>(g[*e].dim);
      if (p.dim >= 0) {
        const int a = g[v].coord[p.dim], b = g[p.peer_node].coord[p.dim];
        p.wrap = std::abs(a - b) > 1;
      }
      ports_.push_back(p);
      nic_port_.push_back(host_of_node_[v] >= 0 && !g[*e].nvlink);
    }
  }
  first_port_[n] = static_cast<uint32_t>(ports_.size());
  // Peer port numbers: the matching edge at the far end (parallel edges matched in order).
  for (VertexId v = 0; v < n; ++v) {
    for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid) {
      Port& p = ports_[pid];
      const auto e_here = *std::next(boost::out_edges(v, g).first, p.index);
      uint16_t j = 0;
      for (auto [e, eend] = boost::out_edges(p.peer_node, g); e != eend; ++e, ++j) {
        if (*e == e_here) break;  // undirected: equal descriptors name the same edge
      }
      p.peer_index = j;
      p.peer_port = first_port_[p.peer_node] + j;
      p.peer_ingress_ps = is_switch_[p.peer_node] ? cfg.switch_latency_ps : 0;
      p.peer_cut_through = is_switch_[p.peer_node] && cfg.cut_through;
      p.from_above = g[p.peer_node].tier > g[v].tier;
    }
  }
  // Switch buffers.
  mmus_.resize(n);
  for (VertexId v = 0; v < n; ++v) {
    if (!is_switch_[v]) continue;
    const int64_t nports = first_port_[v + 1] - first_port_[v];
    mmus_[v] = cfg.buffer_model == BufferModel::kStatic
                   ? BufferMmu::static_per_port(cfg.buffer_per_port_bytes)
                   : BufferMmu::shared(cfg.shared_buffer_bytes, cfg.reserved_per_queue_bytes,
                                       cfg.alpha, nports * kTrafficClasses);
  }
  queues_.resize(ports_.size() * kTrafficClasses);
  registered_.assign(size_t{registered_counters()} * ports_.size(), 0);
  port_occ_.resize(ports_.size());
  arrivals_.resize(ports_.size());
  port_hist_.resize(ports_.size());
  ber_rng_.assign(ports_.size(), RngStream(cfg.seed, "ber"));
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
    const Port& p = ports_[pid];
    if (p.bit_error_rate > 0) {
      ber_rng_[pid] = RngStream(cfg.seed, "ber:" + g[p.node].name + ":" + std::to_string(p.index));
    }
  }
  // Per-switch ECN and PFC policy: the fabric-wide settings, or the switch's override.
  ecn_rng_.assign(n, RngStream(cfg.seed, "ecn"));
  policy_.resize(n);
  size_t overrides_used = 0;
  for (VertexId v = 0; v < n; ++v) {
    if (!is_switch_[v]) continue;
    SwitchPolicy& pol = policy_[v];
    pol.ecn = cfg.ecn;
    pol.red = cfg.red;
    pol.ecn_at_dequeue = cfg.ecn_at_dequeue;
    pol.pfc = cfg.pfc;
    if (auto it = cfg.ecn_overrides.find(g[v].name); it != cfg.ecn_overrides.end()) {
      pol.ecn = it->second.enabled;
      pol.red = it->second.red;
      pol.ecn_at_dequeue = it->second.at_dequeue;
      ++overrides_used;
    }
    if (auto it = cfg.pfc_overrides.find(g[v].name); it != cfg.pfc_overrides.end()) {
      pol.pfc = it->second;
    }
    if (pol.ecn) {
      if (const std::string bad = pol.red.check(); !bad.empty()) {
        throw DeviceConfigError(g[v].name, "ecn.kmin", "ECN at " + g[v].name + ": " + bad);
      }
      ecn_rng_[v] = RngStream(cfg.seed, "ecn:" + g[v].name);
    }
    if (pol.pfc.enabled) lossless_any_ = true;
    if (pol.pfc.enabled && pol.pfc.dynamic && cfg.buffer_model != BufferModel::kShared) {
      throw DeviceConfigError(
          g[v].name, "pfc.threshold",
          "PFC at " + g[v].name + ": dynamic thresholds need switch.buffer_model shared");
    }
  }
  if (overrides_used != cfg.ecn_overrides.size()) {
    for (const auto& [name, o] : cfg.ecn_overrides) {
      bool found = false;
      for (VertexId v = 0; v < n && !found; ++v) found = is_switch_[v] && g[v].name == name;
      if (!found) throw std::invalid_argument("Network: no switch named '" + name + "'");
    }
  }
  // Lossless state: PFC thresholds and headroom per switch ingress port, the response delay
  // of every egress, InfiniBand credits.
  lq_.resize(ports_.size() * kTrafficClasses);
  xoff_count_.assign(n, 0);
  headroom_pool_bytes_.assign(n, 0);
  xon_waits_for_pool_.assign(n, 0);
  const auto response_of = [&](uint32_t pid) {
    const Port& p = ports_[pid];
    const int64_t r = is_switch_[p.node] ? policy_[p.node].pfc.response_ps : cfg.pfc.response_ps;
    return r >= 0 ? r : pfc_response_bound_ps(p.rate_bps);
  };
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) ports_[pid].response_ps = response_of(pid);
  for (VertexId v = 0; v < n; ++v) {
    if (!is_switch_[v] || !policy_[v].pfc.enabled) continue;
    const PfcSwitchSettings& s = policy_[v].pfc;
    // The XOFF refresh goes out half a pause after the last PFC frame and may wait behind one
    // MTU frame: a pause shorter than two (MTU frame + PFC frame) times could lapse first.
    const int64_t min_quanta =
        (2 * (mtu_frame + kPfcFrameWireBytes) * 8 + kPauseQuantumBits - 1) / kPauseQuantumBits;
    if (s.pause_quanta < min_quanta) {
      throw DeviceConfigError(
          g[v].name, "pfc.pause_quanta",
          "PFC at " + g[v].name + ": a pause of " + std::to_string(s.pause_quanta) +
              " quanta is shorter than two MTU frames plus PFC frames (" +
              std::to_string(2 * (mtu_frame + kPfcFrameWireBytes)) +
              " B): the refresh, sent at half the pause time behind up to one frame, could "
              "arrive after the pause expired; at least " +
              std::to_string(min_quanta) + " quanta at this MTU");
    }
    const int64_t nports = first_port_[v + 1] - first_port_[v];
    const int64_t share = cfg.buffer_model == BufferModel::kStatic
                              ? cfg.buffer_per_port_bytes
                              : cfg.shared_buffer_bytes / std::max<int64_t>(1, nports);
    for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid) {
      Port& p = ports_[pid];
      HeadroomInputs in;
      in.rate_bps = p.rate_bps;
      in.propagation_ps = p.delay_ps;
      in.mtu_frame_bytes = mtu_frame;
      in.switch_latency_ps = cfg.switch_latency_ps;
      in.response_ps = ports_[p.peer_port].response_ps;
      // Cut-through counts a frame from its head only towards egresses no faster than this
      // port; a frame stored for a faster egress counts at its tail, like store-and-forward.
      int64_t fastest = 0;
      for (uint32_t q = first_port_[v]; q < first_port_[v + 1]; ++q)
        fastest = std::max(fastest, ports_[q].rate_bps);
      in.cut_through = cfg.cut_through && fastest <= p.rate_bps;
      p.headroom_bytes = s.headroom_bytes > 0 ? s.headroom_bytes : pfc_headroom_bytes(in);
      // A static port buffer holds all its lossless priorities: each gets an equal part of it
      // for its XOFF threshold and headroom (a priority group's share, as switch ASICs carve
      // their ingress buffers). A shared buffer's headroom is memory of its own.
      const int64_t classes = std::max(1, std::popcount(s.lossless_mask));
      const int64_t pg_share = cfg.buffer_model == BufferModel::kStatic ? share / classes : share;
      p.xoff_bytes = s.xoff_bytes > 0 ? s.xoff_bytes : pg_share - p.headroom_bytes;
      const int64_t xon_offset = s.xon_offset_bytes > 0 ? s.xon_offset_bytes : 2 * mtu_frame;
      const std::string where = "PFC at " + g[v].name + " port " + std::to_string(p.index) +
                                " (to " + g[p.peer_node].name + "): ";
      const std::string buffer_key = cfg.buffer_model == BufferModel::kStatic
                                         ? "switch.buffer_per_port"
                                         : "switch.shared_buffer";
      const std::string share_text =
          std::to_string(pg_share) + " B" +
          (cfg.buffer_model == BufferModel::kShared ? " (shared buffer / ports)"
           : classes > 1
               ? " (buffer_per_port / " + std::to_string(classes) + " lossless priorities)"
               : "");
      const std::string headroom_text =
          std::to_string(p.headroom_bytes) + " B" +
          (s.headroom_bytes > 0 ? "" : " (802.1Qbb formula: rate, cable, MTU, response time)");
      if (!s.dynamic && s.xoff_bytes <= 0 && p.xoff_bytes <= xon_offset) {
        throw DeviceConfigError(
            g[v].name, s.headroom_bytes > 0 ? "pfc.headroom" : buffer_key,
            where + "the port's buffer " + share_text + " minus the headroom " + headroom_text +
                " leaves an XOFF threshold of " + std::to_string(p.xoff_bytes) +
                " B, not above the XON offset (" + std::to_string(xon_offset) +
                " B); give more buffer, a smaller pfc.headroom or an explicit pfc.xoff");
      }
      if (!s.dynamic && s.xoff_bytes > 0 && p.xoff_bytes <= xon_offset) {
        throw DeviceConfigError(g[v].name, "pfc.xoff",
                                where + "xoff (" + std::to_string(p.xoff_bytes) +
                                    " B) must be above the XON offset (" +
                                    std::to_string(xon_offset) + " B)");
      }
      headroom_pool_bytes_[v] += p.headroom_bytes * classes;
      // (xoff > share - headroom: the sum could overflow for an xoff near 2^63.)
      if (!s.dynamic && s.xoff_bytes > 0 && cfg.buffer_model == BufferModel::kStatic &&
          p.xoff_bytes > pg_share - p.headroom_bytes) {
        throw DeviceConfigError(
            g[v].name, "pfc.xoff",
            where + "xoff (" + std::to_string(p.xoff_bytes) + " B) plus the headroom " +
                headroom_text + " exceed the port's buffer" +
                (classes > 1
                     ? " for each of its " + std::to_string(classes) + " lossless priorities ("
                     : " (") +
                share_text + ", switch.buffer_per_port): lossless frames could overrun it; " +
                "at most " + std::to_string(std::max<int64_t>(0, pg_share - p.headroom_bytes)) +
                " B");
      }
      if (!s.dynamic && s.xoff_bytes > 0 && cfg.buffer_model == BufferModel::kShared &&
          p.xoff_bytes > mmus_[v].limit_bytes()) {
        throw DeviceConfigError(
            g[v].name, "pfc.xoff",
            where + "xoff (" + std::to_string(p.xoff_bytes) + " B) is more than the switch's " +
                "whole shared pool (" + std::to_string(mmus_[v].limit_bytes()) +
                " B: switch.shared_buffer minus the queues' reservations): one port could "
                "never reach it; at most " +
                std::to_string(mmus_[v].limit_bytes()) +
                " B (XOFF also comes when the pool "
                "runs out)");
      }
    }
  }
  if (cfg.credits) {
    lossless_any_ = true;
    credit_fc_.init(ports_.size());
    // Each sender holds credits for its peer's input buffer per VL; hosts (NICs) drain their
    // input at line rate and never withhold credits.
    for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
      const Port& p = ports_[pid];
      int64_t buffer = INT64_MAX / 4;
      if (is_switch_[p.peer_node]) {
        const int64_t nports = first_port_[p.peer_node + 1] - first_port_[p.peer_node];
        buffer = cfg.vl_buffer_bytes > 0 ? cfg.vl_buffer_bytes
                 : cfg.buffer_model == BufferModel::kStatic
                     ? cfg.buffer_per_port_bytes
                     : cfg.shared_buffer_bytes / std::max<int64_t>(1, nports);
        if (buffer / kCreditBytes < credit_blocks(mtu_frame)) {
          throw DeviceConfigError(
              g[p.peer_node].name,
              cfg.vl_buffer_bytes > 0                    ? "infiniband.vl_buffer"
              : cfg.buffer_model == BufferModel::kStatic ? "switch.buffer_per_port"
                                                         : "switch.shared_buffer",
              "the InfiniBand VL buffer of " + std::to_string(buffer) + " B is " +
                  std::to_string(buffer / kCreditBytes) + " credits of 64 B; a " +
                  std::to_string(mtu_frame) + "-byte frame needs " +
                  std::to_string(credit_blocks(mtu_frame)) + " (" +
                  std::to_string(credit_blocks(mtu_frame) * kCreditBytes) +
                  " B), so no packet could ever be sent");
        }
      }
      for (int tc = 0; tc < kTrafficClasses; ++tc) credit_fc_.grant(pid, tc, buffer / kCreditBytes);
    }
  }
  nic_of_port_.assign(ports_.size(), -1);
  for (VertexId v : fabric.hosts) {
    for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid) {
      nic_of_port_[pid] = static_cast<int32_t>(nics_.size());
      Nic nic;
      nic.port = pid;
      nics_.push_back(nic);
    }
  }
  LosslessMonitor::Wiring wiring;
  wiring.port_node.reserve(ports_.size());
  wiring.peer_port.reserve(ports_.size());
  for (const Port& p : ports_) {
    wiring.port_node.push_back(p.node);
    wiring.peer_port.push_back(p.peer_port);
  }
  wiring.first_port = first_port_;
  monitor_.set_wiring(std::move(wiring));
}

void Network::set_drop_every(uint32_t port_id, uint32_t n) {
  if (port_id >= ports_.size()) throw std::invalid_argument("set_drop_every: bad port id");
  ports_[port_id].drop_every = n;
  ports_[port_id].drop_countdown = n;
}

uint16_t Network::pick(std::span<const uint16_t> choices, uint32_t node, uint32_t flow_hash,
                       uint32_t seq) const {
  if (choices.size() == 1) return choices[0];
  uint64_t key = static_cast<uint64_t>(flow_hash) ^ switch_salt_[node];
  if (cfg_.per_packet_spraying) key ^= static_cast<uint64_t>(seq) * 0x9E3779B97F4A7C15ULL;
  return choices[fmix64(key) % choices.size()];
}

void Network::no_route(uint32_t node, int dst_host) {
  throw std::logic_error("Network: no route at node " + std::to_string(node) + " to host " +
                         std::to_string(dst_host));
}

uint32_t Network::egress_for(uint32_t node, int dst_host, uint32_t flow_hash, uint32_t seq,
                             bool descending) const {
  const auto choices = routes_.next_ports(node, dst_host, descending);
  if (choices.empty()) [[unlikely]]
    no_route(node, dst_host);
  return first_port_[node] + pick(choices, node, flow_hash, seq);
}

void Network::occupancy_change(uint32_t port_id, int tc, int64_t delta) {
  const int64_t now = sim_.now().ps();
  Occupancy& po = port_occ_[port_id];
  po.change(now, delta);
  Port& port = ports_[port_id];
  // The histogram is written only when the occupancy moves to another bucket: its array is
  // 1.3 KB per port, and touching it on every change was a cache miss per packet hop.
  if (const int b = OccupancyHistogram::bucket(po.bytes); b != port.hist_bucket) {
    port_hist_[port_id].ps[port.hist_bucket] += now - port.hist_since_ps;
    port.hist_bucket = static_cast<int16_t>(b);
    port.hist_since_ps = now;
  }
  QueueCounters& q = queues_[static_cast<size_t>(port_id) * kTrafficClasses + tc];
  q.occupancy.change(now, delta);
  port.occupancy_bytes = po.bytes;
  port.counters.max_queue_bytes = po.max_bytes;
  if (observer_ != nullptr && is_switch_[port.node]) {
    observer_->queue_changed(port_id, tc, q.occupancy.bytes, now);
  }
}

void Network::settle_statistics() {
  const int64_t now = sim_.now().ps();
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
    Occupancy& po = port_occ_[pid];
    Port& port = ports_[pid];
    port_hist_[pid].ps[port.hist_bucket] += now - port.hist_since_ps;
    port.hist_since_ps = now;
    po.change(now, 0);
    for (int tc = 0; tc < kTrafficClasses; ++tc) {
      QueueCounters& q = queues_[static_cast<size_t>(pid) * kTrafficClasses + tc];
      q.occupancy.change(now, 0);
      LosslessQueue& l = lq(pid, tc);
      if (l.paused_since_ps >= 0) {  // close the open pause interval (a new one starts now)
        q.paused_ps += now - l.paused_since_ps;
        l.paused_since_ps = now;
      }
    }
  }
}

void Network::enqueue(uint32_t port_id, Packet* p) {
  Port& port = ports_[port_id];
  const int tc = p->tc;
  p->next = nullptr;
  p->enqueue_ps = sim_.now().ps();
  if (port.tail[tc] == nullptr) {
    port.head[tc] = port.tail[tc] = p;
  } else {
    port.tail[tc]->next = p;
    port.tail[tc] = p;
  }
  port.nonempty |= static_cast<uint8_t>(1u << tc);
  occupancy_change(port_id, tc, p->wire_bytes);
  if (!port.transmitting) kick(port_id);
}

uint8_t Network::eligible(const Port& port, uint32_t port_id) const {
  uint8_t ok = port.nonempty & static_cast<uint8_t>(~(port.paused & ~port.storm));
  if (cfg_.credits) {
    for (uint32_t m = ok; m != 0; m &= m - 1) {
      const int tc = std::countr_zero(m);
      if (!credit_fc_.may_send(port_id, tc, port.head[tc]->wire_bytes)) {
        ok &= static_cast<uint8_t>(~(1u << tc));
      }
    }
  }
  return ok;
}

void Network::kick(uint32_t port_id) {
  Port& port = ports_[port_id];
  if (port.transmitting) return;
  if (port.pfc_pending != 0) {
    send_pfc_frame(port_id);
    return;
  }
  const uint8_t ok = eligible(port, port_id);
  if (ok != 0) {
    start_tx(port_id, ok);
  } else if (port.nonempty != 0) {
    monitor_.schedule_check();  // blocked (paused or out of credits): watch for a deadlock
  }
}

void Network::port_idle(uint32_t port_id) {
  kick(port_id);
  if (!ports_[port_id].transmitting && nic_of_port_[port_id] >= 0) {
    nic_fill(static_cast<uint32_t>(nic_of_port_[port_id]));
  }
}

void Network::ecn_mark(Packet* p, uint32_t port_id, int64_t queue_bytes) {
  if (p->flags & Packet::kEcnCe) return;  // already marked upstream
  const uint32_t node = ports_[port_id].node;
  if (!policy_[node].red.mark(queue_bytes, ecn_rng_[node])) return;
  p->flags |= Packet::kEcnCe;
  queues_[static_cast<size_t>(port_id) * kTrafficClasses + p->tc].ecn_marked += 1;
}

void Network::drop(Packet* p, uint32_t port_id, DropCause cause) {
  Port& port = ports_[port_id];
  const bool corrupt = cause == DropCause::kCorrupt;
  QueueCounters& q = queues_[static_cast<size_t>(port_id) * kTrafficClasses + p->tc];
  switch (cause) {
    case DropCause::kCorrupt:
      if (!(p->flags & Packet::kStomped)) arrivals_[port.peer_port].corrupt_drops += 1;
      break;
    case DropCause::kTail:
      port.counters.drops += 1;
      port.counters.drop_bytes += p->wire_bytes;
      q.drops += 1;
      q.drop_bytes += p->wire_bytes;
      break;
    case DropCause::kHeadroom:
      port.counters.headroom_drops += 1;
      break;
    case DropCause::kWatchdog:
      q.watchdog_drops += 1;
      break;
  }
  dropped_bytes_ += p->wire_bytes;
  ++dropped_packets_;
  if (observer_ != nullptr) observer_->packet_dropped(port_id, p->tc, corrupt, sim_.now().ps());
  pool_.put(p);
}

namespace {

/// A port's class queues as a scheduler reads them (schedulers/egress_scheduler.hpp).
struct PortHeads {
  const Port& port;
  bool empty(int tc) const { return port.head[tc] == nullptr; }
  int32_t wire_bytes(int tc) const { return port.head[tc]->wire_bytes; }
};

}  // namespace

void Network::start_tx(uint32_t port_id, uint8_t eligible) {
  Port& port = ports_[port_id];
  const int tc = scheduler_.pick(eligible, port.sched, PortHeads{port});
  Packet* p = port.head[tc];
  port.head[tc] = p->next;
  if (port.head[tc] == nullptr) {
    port.tail[tc] = nullptr;
    port.nonempty &= static_cast<uint8_t>(~(1u << tc));
    queue_emptied(port.sched, tc);  // DRR: a class that empties keeps no credit
  }
  p->next = nullptr;
  if (is_switch_[port.node] && policy_[port.node].ecn && policy_[port.node].ecn_at_dequeue &&
      p->kind == PacketKind::kData) {
    // The bytes behind it: the queue's occupancy still counts this packet.
    ecn_mark(p, port_id,
             queues_[static_cast<size_t>(port_id) * kTrafficClasses + tc].occupancy.bytes -
                 p->wire_bytes);
  }
  port.transmitting = true;
  port.in_tx_tc = p->tc;
  port.in_tx_wire_bytes = p->wire_bytes;
  port.in_tx_enqueue_ps = p->enqueue_ps;
  port.in_tx_ingress = is_switch_[port.node] ? first_port_[port.node] + p->in_port : UINT32_MAX;
  port.in_tx_in_tc = p->in_tc;
  if (cfg_.credits && !credit_fc_.consume(port_id, tc, p->wire_bytes)) {
    throw std::logic_error("Network: a port sent without InfiniBand credits");
  }
  const int64_t now = sim_.now().ps();
  if (p->wire_bytes != port.ser_memo_bytes) {  // frames come in few sizes: skip the division
    port.ser_memo_bytes = p->wire_bytes;
    port.ser_memo_ps = serialization_ps(p->wire_bytes, port.rate_bps);
  }
  const int64_t ser_ps = port.ser_memo_ps;
  p->node = port.peer_node;
  p->in_port = port.peer_index;
  p->flags &= static_cast<uint8_t>(~(Packet::kHeadFirst | Packet::kStored));
  if (port.bit_error_rate > 0) {
    // P(frame corrupted) = 1 - (1 - BER)^bits, computed without cancellation.
    const double bits = 8.0 * p->wire_bytes;
    const double p_err = -std::expm1(bits * std::log1p(-port.bit_error_rate));
    if (ber_rng_[port_id].uniform01() < p_err) p->flags |= Packet::kCorrupt;
  }
  if (port.drop_every > 0 && --port.drop_countdown == 0) {
    port.drop_countdown = port.drop_every;
    p->flags |= Packet::kCorrupt;  // the fixed loss pattern: lost on this link
  }
  sim_.after<&Network::on_tx_done>(SimTime(ser_ps), node_lp(port.node), this, port_id);
  if (port.peer_cut_through) {
    // First bit in at now + delay; forwarded `latency` later. The tail arrives ser_ps after.
    p->flags |= Packet::kHeadFirst;
    p->tail_ps = now + ser_ps + port.delay_ps;
    sim_.after<&Network::on_arrival>(SimTime(port.delay_ps + port.peer_ingress_ps),
                                     node_lp(port.peer_node), this, reinterpret_cast<uint64_t>(p));
  } else {
    sim_.after<&Network::on_arrival>(SimTime(ser_ps + port.delay_ps + port.peer_ingress_ps),
                                     node_lp(port.peer_node), this, reinterpret_cast<uint64_t>(p));
  }
}

void Network::on_tx_done(uint64_t port_id) {
  Port& port = ports_[port_id];
  if (port.in_tx_control) {  // a PFC frame: no queue, no buffer
    port.in_tx_control = false;
    port.transmitting = false;
    port_idle(static_cast<uint32_t>(port_id));
    return;
  }
  const int tc = port.in_tx_tc;
  const int64_t bytes = port.in_tx_wire_bytes;
  QueueCounters& q = queues_[port_id * kTrafficClasses + tc];
  q.tx_packets += 1;  // port and queue count a frame once it is fully serialized
  q.tx_bytes += bytes;
  port.counters.tx_packets += 1;
  port.counters.tx_bytes += bytes;
  q.sojourn_ps += sim_.now().ps() - port.in_tx_enqueue_ps;
  if (is_switch_[port.node]) mmus_[port.node].on_dequeue(q.occupancy.bytes, bytes);
  occupancy_change(static_cast<uint32_t>(port_id), tc, -bytes);
  port.transmitting = false;
  if (xoff_count_[port.node] > 0 &&
      (policy_[port.node].pfc.dynamic || xon_waits_for_pool_[port.node])) {
    recheck_dynamic_xon(port.node);
  }
  if (port.in_tx_ingress != UINT32_MAX && lossless(port.node, port.in_tx_in_tc)) {
    // The frame has left the switch: its ingress port's count falls (PFC XON), its credits go
    // back upstream (InfiniBand).
    ingress_change(port.in_tx_ingress, port.in_tx_in_tc, -bytes);
    if (cfg_.credits) return_credits(port.in_tx_ingress, port.in_tx_in_tc, bytes);
  }
  port_idle(static_cast<uint32_t>(port_id));
}

void Network::on_arrival(uint64_t packet_addr) {
  Packet* p = reinterpret_cast<Packet*>(packet_addr);
  if (p->kind == PacketKind::kPfc) {
    on_pfc_arrival(p);
    return;
  }
  const uint32_t in_pid = first_port_[p->node] + p->in_port;
  const uint32_t from_pid = ports_[in_pid].peer_port;  // the port that sent it
  const bool at_switch = is_switch_[p->node];
  const bool head_first = (p->flags & Packet::kHeadFirst) != 0;
  if ((p->flags & Packet::kCorrupt) && !head_first) {
    // FCS / ICRC check of a stored frame fails: dropped here, counted against the link.
    if (cfg_.credits && at_switch) return_credits(in_pid, p->tc, p->wire_bytes);
    drop(p, from_pid, DropCause::kCorrupt);
    return;
  }
  if ((p->flags & Packet::kCorrupt) && !(p->flags & Packet::kStomped)) {
    // A cut-through switch sees the bad FCS only as the frame ends, after forwarding began:
    // it counts the error on this link and the frame is dropped further on.
    arrivals_[in_pid].corrupt_drops += 1;
    p->flags |= Packet::kStomped;
  }
  if (!(p->flags & (Packet::kStored | Packet::kCorrupt))) {  // intact frames, counted once
    arrivals_[in_pid].rx_packets += 1;
    arrivals_[in_pid].rx_bytes += p->wire_bytes;
  }
  if (at_switch || host_of_node_[p->node] != p->dst_host) {
    forward(p);  // a switch, or a host relaying (rail-only PXN)
    return;
  }
  deliver(p);
}

void Network::forward(Packet* p) {
  const uint32_t in_pid = first_port_[p->node] + p->in_port;
  const bool descending = ports_[in_pid].from_above;
  const uint32_t out_pid = egress_for(p->node, p->dst_host, p->flow_hash, p->psn, descending);
  Port& out = ports_[out_pid];
  if ((p->flags & Packet::kHeadFirst) && out.rate_bps > ports_[in_pid].rate_bps) {
    // Cut-through cannot feed a faster egress: store the frame, forward `latency` after its
    // last bit (the same as a store-and-forward switch).
    const int64_t at = p->tail_ps + cfg_.switch_latency_ps;
    p->flags = static_cast<uint8_t>((p->flags & ~Packet::kHeadFirst) | Packet::kStored);
    sim_.at<&Network::on_arrival>(SimTime(at), node_lp(p->node), this,
                                  reinterpret_cast<uint64_t>(p));
    return;
  }
  p->in_tc = p->tc;
  // Only lossless traffic changes class (lossy classes have no buffer dependency to break).
  if (cfg_.dateline_class >= 0 && out.dim >= 0 && lossless(p->node, p->qp_tc)) {
    // Dateline: each dimension starts on the QP's class and moves to the dateline class when
    // it crosses the wraparound link.
    if (ports_[in_pid].dim != out.dim) p->tc = p->qp_tc;
    if (out.wrap) p->tc = static_cast<uint8_t>(cfg_.dateline_class);
  }
  if (cfg_.bounce_class >= 0 && ports_[in_pid].from_above && out.from_above &&
      lossless(p->node, p->tc)) {
    p->tc = static_cast<uint8_t>(cfg_.bounce_class);  // a bounce: came down, goes up again
  }
  if (is_switch_[p->node]) {
    if ((out.storm >> p->tc & 1) && cfg_.watchdog_drop) {  // PFC watchdog: stormed queue
      drop(p, out_pid, DropCause::kWatchdog);
      return;
    }
    BufferMmu& mmu = mmus_[p->node];
    const QueueCounters& q = queues_[static_cast<size_t>(out_pid) * kTrafficClasses + p->tc];
    if (lossless(p->node, p->in_tc)) {
      // Lossless: egress limits do not apply; PFC refuses a frame only when the ingress port's
      // headroom overflows; with credits the sender never overruns the input buffer.
      const LosslessQueue& in = lq_[static_cast<size_t>(in_pid) * kTrafficClasses + p->in_tc];
      const Port& in_port = ports_[in_pid];
      if (!cfg_.credits) {
        // A full shared pool pauses the ingress at once, whatever its threshold: this frame
        // and what follows it go to the headroom.
        if (!(in_port.xoff >> p->in_tc & 1) && !mmu.pool_fits(q.occupancy.bytes, p->wire_bytes)) {
          assert_xoff(in_pid, p->in_tc);
        }
        // Beyond the headroom, or beyond the buffer itself (a port's own with static buffers;
        // the shared buffer and the headroom pool beside it), a frame is refused.
        const bool beyond_buffer =
            mmu.model() == BufferModel::kStatic
                ? in_port.lossless_in_bytes + p->wire_bytes > mmu.limit_bytes()
                : mmu.total_bytes() + p->wire_bytes >
                      mmu.buffer_bytes() + headroom_pool_bytes_[p->node];
        if (beyond_buffer ||
            ((in_port.xoff >> p->in_tc & 1) &&
             in.ingress_bytes + p->wire_bytes > in.xoff_level_bytes + in_port.headroom_bytes)) {
          drop(p, in_pid, DropCause::kHeadroom);
          return;
        }
      }
      mmu.on_enqueue(q.occupancy.bytes, p->wire_bytes);
      ingress_change(in_pid, p->in_tc, p->wire_bytes);
    } else {
      if (!mmu.admit(out.occupancy_bytes, q.occupancy.bytes, p->wire_bytes)) {
        drop(p, out_pid, DropCause::kTail);
        return;
      }
      mmu.on_enqueue(q.occupancy.bytes, p->wire_bytes);
    }
    const SwitchPolicy& pol = policy_[p->node];
    if (pol.ecn && !pol.ecn_at_dequeue && p->kind == PacketKind::kData) {
      ecn_mark(p, out_pid, q.occupancy.bytes);  // the bytes ahead of it
    }
  }
  enqueue(out_pid, p);
}

// ---- lossless: PFC, credits, watchdog, deadlock detection --------------------------------

int64_t Network::xoff_threshold(uint32_t in_pid) const {
  const Port& port = ports_[in_pid];
  const PfcSwitchSettings& s = policy_[port.node].pfc;
  if (!s.dynamic) return port.xoff_bytes;
  // Dynamic: alpha x the free shared buffer (lossless bytes use the pool too).
  const BufferMmu& mmu = mmus_[port.node];
  const int64_t free_bytes = std::max<int64_t>(0, mmu.limit_bytes() - mmu.shared_used_bytes());
  return static_cast<int64_t>(s.alpha * static_cast<double>(free_bytes));
}

void Network::ingress_change(uint32_t in_pid, int tc, int64_t bytes) {
  LosslessQueue& q = lq(in_pid, tc);
  q.ingress_bytes += bytes;
  Port& port = ports_[in_pid];
  port.lossless_in_bytes += bytes;
  port.peak_lossless_in_bytes = std::max(port.peak_lossless_in_bytes, port.lossless_in_bytes);
  if (cfg_.credits) return;
  const uint8_t bit = static_cast<uint8_t>(1u << tc);
  if (bytes > 0 && !(port.xoff & bit) && q.ingress_bytes >= xoff_threshold(in_pid)) {
    assert_xoff(in_pid, tc);
  } else if (bytes < 0 && (port.xoff & bit)) {
    maybe_xon(in_pid, tc);
  }
}

void Network::assert_xoff(uint32_t in_pid, int tc) {
  Port& port = ports_[in_pid];
  LosslessQueue& q = lq(in_pid, tc);
  const uint8_t bit = static_cast<uint8_t>(1u << tc);
  port.xoff |= bit;  // XOFF: pause the upstream port for this priority
  ++xoff_count_[port.node];
  q.xoff_level_bytes = q.ingress_bytes;
  port.pfc_pending |= bit;
  if (observer_ != nullptr)
    observer_->pfc_decided(in_pid, tc, true, q.ingress_bytes, sim_.now().ps());
  kick(in_pid);
}

void Network::maybe_xon(uint32_t in_pid, int tc) {
  Port& port = ports_[in_pid];
  const PfcSwitchSettings& s = policy_[port.node].pfc;
  const LosslessQueue& q = lq(in_pid, tc);
  const int64_t offset =
      s.xon_offset_bytes > 0 ? s.xon_offset_bytes : 2 * cfg_.wire.wire_bytes(cfg_.mtu_bytes);
  if (q.ingress_bytes > std::max<int64_t>(0, xoff_threshold(in_pid) - offset)) return;
  const BufferMmu& mmu = mmus_[port.node];
  if (!s.dynamic && mmu.model() == BufferModel::kShared && mmu.pool_free_bytes() < offset) {
    // A static threshold in a shared buffer: XOFF also came from the pool running out, and XON
    // waits until the pool has the XON offset free again (a dynamic threshold has its own).
    xon_waits_for_pool_[port.node] = 1;
    return;
  }
  port.xoff &= static_cast<uint8_t>(~(1u << tc));  // XON: resume it
  --xoff_count_[port.node];
  port.pfc_pending |= static_cast<uint8_t>(1u << tc);
  if (observer_ != nullptr)
    observer_->pfc_decided(in_pid, tc, false, q.ingress_bytes, sim_.now().ps());
  kick(in_pid);
}

void Network::recheck_dynamic_xon(uint32_t node) {
  xon_waits_for_pool_[node] = 0;  // set again by maybe_xon for an XON still waiting
  // A dynamic threshold rises whenever the shared buffer frees up, whoever's bytes left: an
  // ingress in XOFF may now be below XON although none of its own frames moved.
  for (uint32_t pid = first_port_[node]; pid < first_port_[node + 1] && xoff_count_[node] > 0;
       ++pid) {
    for (uint32_t m = ports_[pid].xoff; m != 0; m &= m - 1) {
      maybe_xon(pid, std::countr_zero(m));
    }
  }
}

void Network::send_pfc_frame(uint32_t port_id) {
  Port& port = ports_[port_id];
  const uint8_t enable = port.pfc_pending;
  const uint8_t xoff = port.xoff & enable;
  const int quanta = policy_[port.node].pfc.pause_quanta;
  port.pfc_pending = 0;
  Packet* p = pool_.get();
  p->kind = PacketKind::kPfc;
  p->psn = enable | static_cast<uint32_t>(xoff) << 8 | static_cast<uint32_t>(quanta) << 16;
  p->wire_bytes = static_cast<int32_t>(kPfcFrameWireBytes);
  p->payload_bytes = 0;
  p->tc = 7;
  p->node = port.peer_node;
  p->in_port = port.peer_index;
  port.transmitting = true;
  port.in_tx_control = true;
  port.counters.pfc_tx += 1;
  const int64_t ser_ps = serialization_ps(kPfcFrameWireBytes, port.rate_bps);
  sim_.after<&Network::on_tx_done>(SimTime(ser_ps), node_lp(port.node), this, port_id);
  // It takes effect at the peer after its response delay.
  sim_.after<&Network::on_arrival>(
      SimTime(ser_ps + port.delay_ps + ports_[port.peer_port].response_ps), node_lp(port.peer_node),
      this, reinterpret_cast<uint64_t>(p));
  if (xoff != 0 && !port.refresh_timer) {
    // Sent again at half the pause time while XOFF lasts, so the peer never resumes early.
    port.refresh_timer = true;
    sim_.after<&Network::on_xoff_refresh>(SimTime(pause_time_ps(quanta, port.rate_bps) / 2),
                                          node_lp(port.node), this, port_id);
  }
}

void Network::on_xoff_refresh(uint64_t port_id) {
  Port& port = ports_[port_id];
  port.refresh_timer = false;
  if (port.xoff == 0) return;
  port.pfc_pending |= port.xoff;
  kick(static_cast<uint32_t>(port_id));  // (behind a frame: sent, and re-armed, when it ends)
}

void Network::on_pfc_arrival(Packet* p) {
  const uint32_t egress = first_port_[p->node] + p->in_port;  // the port this frame pauses
  Port& port = ports_[egress];
  port.counters.pfc_rx += 1;
  const uint32_t enable = p->psn & 0xFF, xoff = (p->psn >> 8) & 0xFF, quanta = p->psn >> 16;
  const int64_t now = sim_.now().ps();
  pool_.put(p);
  for (uint32_t m = enable; m != 0; m &= m - 1) {
    const int tc = std::countr_zero(m);
    if (xoff >> tc & 1) {
      lq(egress, tc).last_pfc_rx_ps = now;
      pause_queue(egress, tc, now + pause_time_ps(quanta, port.rate_bps));
    } else {
      resume_queue(egress, tc);
    }
  }
}

void Network::pause_queue(uint32_t port_id, int tc, int64_t until_ps) {
  Port& port = ports_[port_id];
  LosslessQueue& q = lq(port_id, tc);
  q.paused_until_ps = until_ps;
  if (!(port.paused >> tc & 1)) {
    port.paused |= static_cast<uint8_t>(1u << tc);
    // Paused time is not counted while the watchdog has the queue ignore PAUSE.
    q.paused_since_ps = (port.storm >> tc & 1) ? -1 : sim_.now().ps();
    if (observer_ != nullptr) observer_->pause_changed(port_id, tc, true, sim_.now().ps());
  }
  if (!port.pause_timer) {
    port.pause_timer = true;
    sim_.at<&Network::on_pause_expiry>(SimTime(until_ps), node_lp(port.node), this, port_id);
  }
  monitor_.schedule_check();
}

void Network::resume_queue(uint32_t port_id, int tc) {
  Port& port = ports_[port_id];
  if (!(port.paused >> tc & 1)) return;
  LosslessQueue& q = lq(port_id, tc);
  port.paused &= static_cast<uint8_t>(~(1u << tc));
  if (q.paused_since_ps >= 0) {  // (not counted while the watchdog ignores the pause)
    queues_[static_cast<size_t>(port_id) * kTrafficClasses + tc].paused_ps +=
        sim_.now().ps() - q.paused_since_ps;
    if (const int32_t host = host_of_node_[port.node];
        host >= 0 && nic_port_[port_id] && tc == cfg_.traffic_class) {
      host_pauses_[static_cast<size_t>(host)].emplace_back(q.paused_since_ps, sim_.now().ps());
    }
  }
  q.paused_since_ps = -1;
  q.stuck_since_ps = -1;
  if (observer_ != nullptr) observer_->pause_changed(port_id, tc, false, sim_.now().ps());
  port_idle(port_id);
}

int64_t Network::host_paused_ps(int host, int64_t from_ps, int64_t to_ps) const {
  std::vector<std::pair<int64_t, int64_t>> spans;
  const auto clip = [&](int64_t a, int64_t b) {
    a = std::max(a, from_ps);
    b = std::min(b, to_ps);
    if (a < b) spans.emplace_back(a, b);
  };
  for (const auto& [a, b] : host_pauses_.at(static_cast<size_t>(host))) clip(a, b);
  // Pauses still running: each NIC port of the host in the data class.
  const VertexId v = fabric_.hosts[static_cast<size_t>(host)];
  for (uint32_t id = first_port_[v]; id < first_port_[v + 1]; ++id) {
    const LosslessQueue& q = lq_[static_cast<size_t>(id) * kTrafficClasses + cfg_.traffic_class];
    if (nic_port_[id] && (ports_[id].paused >> cfg_.traffic_class & 1) && q.paused_since_ps >= 0) {
      clip(q.paused_since_ps, sim_.now().ps());
    }
  }
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, end = std::numeric_limits<int64_t>::min();
  for (const auto& [a, b] : spans) {  // the union's length
    if (b <= end) continue;
    total += b - std::max(a, end);
    end = b;
  }
  return total;
}

void Network::on_pause_expiry(uint64_t port_id) {
  Port& port = ports_[port_id];
  port.pause_timer = false;
  const int64_t now = sim_.now().ps();
  int64_t next = -1;
  for (uint32_t m = port.paused; m != 0; m &= m - 1) {
    const int tc = std::countr_zero(m);
    const int64_t until = lq(static_cast<uint32_t>(port_id), tc).paused_until_ps;
    if (until <= now) {
      resume_queue(static_cast<uint32_t>(port_id), tc);
    } else if (next < 0 || until < next) {
      next = until;
    }
  }
  if (next >= 0 && !port.pause_timer) {
    port.pause_timer = true;
    sim_.at<&Network::on_pause_expiry>(SimTime(next), node_lp(port.node), this, port_id);
  }
}

void Network::return_credits(uint32_t in_pid, int tc, int64_t wire_bytes) {
  const Port& in = ports_[in_pid];
  const uint64_t packed = static_cast<uint64_t>(in.peer_port) << 24 |
                          static_cast<uint64_t>(tc) << 21 |
                          static_cast<uint64_t>(credit_blocks(wire_bytes));
  sim_.after<&Network::on_credit>(SimTime(in.delay_ps), node_lp(in.peer_node), this, packed);
}

void Network::on_credit(uint64_t packed) {
  const uint32_t port_id = static_cast<uint32_t>(packed >> 24);
  const int tc = static_cast<int>(packed >> 21 & 7);
  credit_fc_.restore(port_id, tc, static_cast<int64_t>(packed & 0x1FFFFF));
  if (!ports_[port_id].transmitting) port_idle(port_id);
}

Network::~Network() = default;

}  // namespace fabricsim
