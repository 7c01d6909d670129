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
  if (cfg.cc.needs_rtt()) {
    rtt_stamps_ = true;
    tx_stamp_ = pool_.add_side<int64_t>();
  }
  if (cfg.cc.needs_int()) {
    int_records_ = true;
    int_side_ = pool_.add_side<IntStack>();
    if (cfg.cc.kind == CcKind::kHpcc) int_header_bytes_ = cfg.cc.hpcc.int_header_bytes;
    ack_wire_bytes_ += int_header_bytes_;  // the ACK carries the records back
  }
  if (cfg.selective_repeat) sack_side_ = pool_.add_side<uint32_t>();
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
  lb_ = LoadBalancer(cfg.lb, n);
  RngStream ecmp_rng(cfg.seed, "ecmp");
  ecmp_salt_ = static_cast<uint32_t>(ecmp_rng.next());
  for (size_t h = 0; h < fabric.hosts.size(); ++h)
    host_of_node_[fabric.hosts[h]] = static_cast<int32_t>(h);

  node_routes_.assign(n, &routes);
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
  // PFC: thresholds and headroom per switch ingress port, the response delay of every egress.
  {
    PfcFlowControl::Setup s;
    s.is_switch = is_switch_;
    s.host_of_node = host_of_node_;
    s.first_port = first_port_;
    s.mmus = &mmus_;
    s.node_names.reserve(n);
    s.settings.reserve(n);
    for (VertexId v = 0; v < n; ++v) {
      s.node_names.push_back(g[v].name);
      s.settings.push_back(policy_[v].pfc);
    }
    for (VertexId v : fabric.hosts) s.host_node.push_back(static_cast<uint32_t>(v));
    s.ports.reserve(ports_.size());
    for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
      const Port& p = ports_[pid];
      s.ports.push_back(
          {p.node, p.peer_node, p.peer_port, p.index, p.rate_bps, p.delay_ps, nic_port_[pid] != 0});
    }
    s.host_response_ps = cfg.pfc.response_ps;
    s.static_buffer = cfg.buffer_model == BufferModel::kStatic;
    s.buffer_per_port_bytes = cfg.buffer_per_port_bytes;
    s.shared_buffer_bytes = cfg.shared_buffer_bytes;
    s.switch_latency_ps = cfg.switch_latency_ps;
    s.cut_through = cfg.cut_through;
    s.mtu_frame_bytes = mtu_frame;
    s.data_tc = cfg.traffic_class;
    s.credits = cfg.credits;
    try {
      pfc_.setup(s);
    } catch (const PfcSetupError& e) {
      throw DeviceConfigError(e.switch_name, e.key, e.what());
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
  loopback_port_.assign(fabric.hosts.size(), -1);
  nic_loop_begin_.assign(fabric.hosts.size() + 1, 0);
  for (size_t h = 0; h < fabric.hosts.size(); ++h) {
    const VertexId v = fabric.hosts[h];
    nic_loop_begin_[h] = static_cast<uint32_t>(nic_loop_ports_.size());
    auto e = boost::out_edges(v, g).first;
    for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid, ++e) {
      if (loopback_port_[h] < 0 && !nic_port_[pid] &&
          g[ports_[pid].peer_node].role == Role::kNvSwitch) {
        loopback_port_[h] = static_cast<int32_t>(pid);
      }
      // A NIC loopback turns at the switch at the far end of a NIC link that is up.
      if (nic_port_[pid] && is_switch_[ports_[pid].peer_node] && !g[*e].failed) {
        nic_loop_ports_.push_back(pid);
      }
    }
  }
  nic_loop_begin_[fabric.hosts.size()] = static_cast<uint32_t>(nic_loop_ports_.size());
  nic_of_port_.assign(ports_.size(), -1);
  rx_pcie_free_ps_.assign(ports_.size(), 0);
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
  register_hints();
}

size_t Network::hashed_index(size_t n, uint32_t node, uint32_t flow_hash, uint32_t seq) const {
  uint64_t key = static_cast<uint64_t>(flow_hash) ^ switch_salt_[node];
  if (cfg_.per_packet_spraying) key ^= static_cast<uint64_t>(seq) * 0x9E3779B97F4A7C15ULL;
  return fmix64(key) % n;
}

uint16_t Network::pick(std::span<const uint16_t> choices, uint32_t node, uint32_t flow_hash,
                       uint32_t seq) const {
  if (choices.size() == 1) return choices[0];
  return choices[hashed_index(choices.size(), node, flow_hash, seq)];
}

void Network::no_route(uint32_t node, int dst_host) {
  throw std::logic_error("Network: no route at node " + std::to_string(node) + " to host " +
                         std::to_string(dst_host));
}

uint32_t Network::egress_for(uint32_t node, int dst_host, uint32_t flow_hash, uint32_t seq,
                             bool descending) const {
  const auto choices = node_routes_[node]->next_ports(node, dst_host, descending);
  if (choices.empty()) [[unlikely]]
    no_route(node, dst_host);
  const uint32_t base = first_port_[node];
  if (choices.size() == 1) return base + choices[0];
  const size_t i = hashed_index(choices.size(), node, flow_hash, seq);
  if (ports_[base + choices[i]].down) [[unlikely]]
    return failover(choices, base, i, node, flow_hash, seq);
  return base + choices[i];
}

uint32_t Network::forward_egress(const Packet* p, bool descending) {
  const auto choices = node_routes_[p->node]->next_ports(p->node, p->dst_host, descending);
  if (choices.empty()) [[unlikely]] {
    // After a link went down, routes may leave a node no way to the destination (a spine that
    // lost its link to the leaf, up-down): what is still on its way there is lost.
    if (node_routes_[p->node] != &routes_) return kNoRoute;
    no_route(p->node, p->dst_host);
  }
  const uint32_t base = first_port_[p->node];
  if (choices.size() == 1) return base + choices[0];
  size_t i = hashed_index(choices.size(), p->node, p->flow_hash, p->psn);
  if (lb_.adaptive() && is_switch_[p->node]) {
    // A dead port is never the least occupied (its flushed queue reads empty).
    i = lb_.choose(choices.size(), i, p->node, p->flow_hash, sim_.now().ps(), [&](size_t k) {
      const Port& port = ports_[base + choices[k]];
      return port.down ? INT64_MAX : port.occupancy_bytes;
    });
  }
  if (ports_[base + choices[i]].down) [[unlikely]]
    return failover(choices, base, i, p->node, p->flow_hash, p->psn);
  return base + choices[i];
}

void Network::occupancy_change(uint32_t port_id, int tc, int64_t delta) {
  const int64_t now = sim_.now().ps();
  Occupancy& po = port_occ_[port_id];
  po.change(now, delta);
  Port& port = ports_[port_id];
  // The histogram is written only when the occupancy moves to another bucket, and then through
  // the port's cache of recent buckets: its array is 5 KiB per port, and touching it on every
  // change was a cache miss per packet hop.
  if (const int b = OccupancyHistogram::bucket(po.bytes); b != port.hist_bucket) {
    port.hist_cache.add(port.hist_bucket, now - port.hist_since_ps, port_hist_[port_id]);
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

uint8_t Network::eligible(const Port& port, uint32_t port_id) const {
  uint8_t ok = port.nonempty & static_cast<uint8_t>(~pfc_.held(port_id));
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
  if (port.transmitting || port.down) return;
  if (pfc_.frame_pending(port_id)) {
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
    case DropCause::kLinkDown:
      port.counters.link_down_drops += 1;
      break;
    case DropCause::kNoRoute:
      ++no_route_drops_;
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
  if (int_records_ && is_switch_[port.node] && p->kind == PacketKind::kData) {
    // INT (HPCC, Li et al. SIGCOMM 2019, §3.1): this egress's time, bytes sent with this frame,
    // the bytes queued behind it (all classes) and its rate.
    IntStack& ints = pool_.side(p, int_side_);
    if (ints.n < IntStack::kMaxHops) {
      ints.hop[ints.n++] = IntHop{sim_.now().ps(), port.counters.tx_bytes + p->wire_bytes,
                                  port.occupancy_bytes - p->wire_bytes, port.rate_bps};
    } else {
      ints.overflow = true;
    }
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
  if (pfc_.xon_recheck_due(port.node)) recheck_dynamic_xon(port.node);
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
  if (!at_switch) {
    // At a host, deliver() reads the QP next: fetch its state (the sender's for an ACK, the
    // receiver's hot fields and message list for data) alongside the port's counters below.
    const char* qp = reinterpret_cast<const char*>(&qps_[p->qp]);
    __builtin_prefetch(qp);
    __builtin_prefetch(qp + 64);
    if (p->kind == PacketKind::kData) {
      const char* rx = reinterpret_cast<const char*>(&qp_rx_[p->qp]);
      __builtin_prefetch(rx);
      __builtin_prefetch(rx + 64);
    }
  }
  const bool head_first = (p->flags & Packet::kHeadFirst) != 0;
  if (ports_[in_pid].down && !(p->flags & Packet::kStored)) [[unlikely]] {
    // On the wire when its link went down: lost (counted at this end, which owns in_pid).
    if (cfg_.credits && at_switch) return_credits(in_pid, p->tc, p->wire_bytes);
    drop(p, in_pid, DropCause::kLinkDown);
    return;
  }
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
  const uint32_t out_pid = forward_egress(p, descending);
  if (out_pid == kNoRoute) [[unlikely]] {
    if (cfg_.credits && is_switch_[p->node]) return_credits(in_pid, p->tc, p->wire_bytes);
    drop(p, in_pid, DropCause::kNoRoute);
    return;
  }
  Port& out = ports_[out_pid];
  if (out.down) [[unlikely]] {
    // Every port the routes offer is down (the routes have not reconverged yet): lost here.
    if (cfg_.credits && is_switch_[p->node]) return_credits(in_pid, p->tc, p->wire_bytes);
    drop(p, out_pid, DropCause::kLinkDown);
    return;
  }
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
    if ((pfc_.storm_mask(out_pid) >> p->tc & 1) &&
        cfg_.watchdog_drop) {  // PFC watchdog: stormed queue
      drop(p, out_pid, DropCause::kWatchdog);
      return;
    }
    BufferMmu& mmu = mmus_[p->node];
    const QueueCounters& q = queues_[static_cast<size_t>(out_pid) * kTrafficClasses + p->tc];
    if (lossless(p->node, p->in_tc)) {
      // Lossless: egress limits do not apply; PFC refuses a frame only when the ingress port's
      // headroom overflows; with credits the sender never overruns the input buffer.
      if (!cfg_.credits) {
        // A full shared pool pauses the ingress at once, whatever its threshold: this frame
        // and what follows it go to the headroom.
        if (pfc_.pool_xoff(in_pid, p->in_tc, q.occupancy.bytes, p->wire_bytes, mmu)) {
          assert_xoff(in_pid, p->in_tc);
        }
        if (pfc_.headroom_overflow(in_pid, p->in_tc, p->wire_bytes, mmu)) {
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

void Network::ingress_change(uint32_t in_pid, int tc, int64_t bytes) {
  switch (pfc_.account(in_pid, tc, bytes, mmus_[ports_[in_pid].node])) {
    case PfcFlowControl::Ingress::kNone:
      break;
    case PfcFlowControl::Ingress::kXoff:
      assert_xoff(in_pid, tc);
      break;
    case PfcFlowControl::Ingress::kMaybeXon:
      maybe_xon(in_pid, tc);
      break;
  }
}

void Network::assert_xoff(uint32_t in_pid, int tc) {
  const int64_t bytes = pfc_.assert_xoff(in_pid, tc);
  if (observer_ != nullptr) observer_->pfc_decided(in_pid, tc, true, bytes, sim_.now().ps());
  kick(in_pid);
}

void Network::maybe_xon(uint32_t in_pid, int tc) {
  if (!pfc_.try_xon(in_pid, tc, mmus_[ports_[in_pid].node])) return;
  if (observer_ != nullptr) {
    observer_->pfc_decided(in_pid, tc, false, pfc_.ingress_bytes(in_pid, tc), sim_.now().ps());
  }
  kick(in_pid);
}

void Network::recheck_dynamic_xon(uint32_t node) {
  pfc_.recheck_xon(node, mmus_[node], [&](uint32_t pid, int tc, int64_t bytes) {
    if (observer_ != nullptr) observer_->pfc_decided(pid, tc, false, bytes, sim_.now().ps());
    kick(pid);
  });
}

void Network::send_pfc_frame(uint32_t port_id) {
  Port& port = ports_[port_id];
  const PfcFlowControl::Frame f = pfc_.take_frame(port_id);
  Packet* p = pool_.get();
  p->kind = PacketKind::kPfc;
  p->psn = f.enable | static_cast<uint32_t>(f.xoff) << 8 | static_cast<uint32_t>(f.quanta) << 16;
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
      SimTime(ser_ps + port.delay_ps + pfc_.response_ps(port.peer_port)), node_lp(port.peer_node),
      this, reinterpret_cast<uint64_t>(p));
  if (pfc_.arm_refresh(port_id, f.xoff)) {
    // Sent again at half the pause time while XOFF lasts, so the peer never resumes early.
    sim_.after<&Network::on_xoff_refresh>(SimTime(pause_time_ps(f.quanta, port.rate_bps) / 2),
                                          node_lp(port.node), this, port_id);
  }
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
      pfc_.note_pfc_rx(egress, tc, now);
      pause_queue(egress, tc, now + pause_time_ps(quanta, port.rate_bps));
    } else {
      resume_queue(egress, tc);
    }
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
