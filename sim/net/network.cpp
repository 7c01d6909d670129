#include "sim/net/network.hpp"

#include "sim/core/units.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fabricsim {
namespace {

/// 64-bit finalizer (MurmurHash3 fmix64): spreads every input bit over the output.
constexpr uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xFF51AFD7ED558CCDULL;
  k ^= k >> 33;
  k *= 0xC4CEB9FE1A85EC53ULL;
  k ^= k >> 33;
  return k;
}

/// Salt that separates the ACK direction's ECMP hash from the data direction's.
constexpr uint32_t kReverseSalt = 0x5BD1E995u;

}  // namespace

NetConfig net_config_for(const Scenario& sc) {
  NetConfig nc;
  nc.wire = wire_format_for(sc.transport);
  nc.mtu_bytes = sc.nic.mtu_bytes;
  nc.switch_latency_ps = sc.sw.latency_ps;
  nc.cut_through = sc.sw.cut_through;
  nc.buffer_model = sc.sw.buffer_model == "shared" ? BufferModel::kShared : BufferModel::kStatic;
  nc.buffer_per_port_bytes = sc.sw.buffer_per_port_bytes;
  nc.shared_buffer_bytes = sc.sw.shared_buffer_bytes;
  nc.reserved_per_queue_bytes = sc.sw.reserved_per_queue_bytes;
  nc.alpha = sc.sw.alpha;
  nc.dwrr = sc.sw.scheduler == "dwrr";
  for (size_t i = 0; i < nc.dwrr_weights.size() && i < sc.sw.dwrr_weights.size(); ++i) {
    nc.dwrr_weights[i] = sc.sw.dwrr_weights[i];
  }
  nc.traffic_class = sc.nic.traffic_class;
  nc.ack_interval = sc.nic.ack_interval;
  nc.rto_ps = sc.nic.rto_ps;
  nc.qp_rate_limit_bps = sc.nic.qp_rate_limit_bps;
  nc.seed = sc.seed;
  nc.per_packet_spraying = sc.routing.load_balancing == "per_packet";
  nc.ecn = sc.ecn.enabled;
  nc.red = RedEcn{sc.ecn.kmin_bytes, sc.ecn.kmax_bytes, sc.ecn.pmax};
  nc.ecn_at_dequeue = sc.ecn.mark_at == "dequeue";
  return nc;
}

Packet* PacketPool::get() {
  if (free_ == nullptr) {
    chunks_.push_back(std::make_unique<Packet[]>(kChunk));
    Packet* chunk = chunks_.back().get();
    for (size_t i = kChunk; i-- > 0;) {
      chunk[i].flags = 0;
      chunk[i].next = free_;
      free_ = &chunk[i];
    }
  }
  Packet* p = free_;
  free_ = p->next;
  p->next = nullptr;
  p->flags = Packet::kInUse;
  ++in_use_;
  return p;
}

double Occupancy::average(int64_t now_ps) const {
  if (now_ps <= 0) return 0.0;
  const __int128 total = area + static_cast<__int128>(bytes) * (now_ps - since_ps);
  return static_cast<double>(total) / static_cast<double>(now_ps);
}

int OccupancyHistogram::bucket(int64_t bytes) {
  if (bytes <= 0) return 0;
  // Octave o = floor(log2(bytes)); quarter = the next two bits below the leading one.
  const int o = 63 - std::countl_zero(static_cast<uint64_t>(bytes));
  const int quarter =
      o >= 2 ? static_cast<int>((bytes >> (o - 2)) & 3) : static_cast<int>((bytes << (2 - o)) & 3);
  const int b = 1 + 4 * o + quarter;
  return b < kBuckets ? b : kBuckets - 1;
}

int64_t OccupancyHistogram::upper_bytes(int b) {
  if (b <= 0) return 0;
  const int o = (b - 1) / 4, quarter = (b - 1) % 4;
  // Bucket covers [2^o (1 + q/4), 2^o (1 + (q+1)/4)); its last integer is the upper edge.
  const int64_t lo_times4 = (int64_t{1} << o) * (4 + quarter + 1);
  return std::max<int64_t>(lo_times4 / 4 - (lo_times4 % 4 == 0 ? 1 : 0), int64_t{1} << o);
}

int64_t OccupancyHistogram::percentile(double q) const {
  int64_t total = 0;
  for (int64_t t : ps) total += t;
  if (total == 0) return 0;
  const double want = q * static_cast<double>(total);
  int64_t run = 0;
  for (int b = 0; b < kBuckets; ++b) {
    run += ps[b];
    if (static_cast<double>(run) >= want) return upper_bytes(b);
  }
  return upper_bytes(kBuckets - 1);
}

Network::Network(Simulator& sim, const Fabric& fabric, const RoutingTable& routes,
                 const NetConfig& cfg)
    : sim_(sim), fabric_(fabric), routes_(routes), cfg_(cfg) {
  if (cfg.mtu_bytes <= 0) throw std::invalid_argument("Network: mtu_bytes must be > 0");
  if (cfg.ack_interval < 1) throw std::invalid_argument("Network: ack_interval must be >= 1");
  if (cfg.rto_ps <= 0) throw std::invalid_argument("Network: rto must be > 0");
  if (cfg.traffic_class < 0 || cfg.traffic_class >= kTrafficClasses) {
    throw std::invalid_argument("Network: traffic_class must be 0..7");
  }
  if (cfg.retry_count < 0) throw std::invalid_argument("Network: retry_count must be >= 0");
  ack_wire_bytes_ = cfg.wire.ack_wire_bytes();
  const int64_t mtu_frame = cfg.wire.wire_bytes(cfg.mtu_bytes);
  for (int tc = 0; tc < kTrafficClasses; ++tc) {
    if (cfg.dwrr_weights[tc] < 1 || cfg.dwrr_weights[tc] > 255) {
      throw std::invalid_argument("Network: DWRR weights must be 1..255");
    }
    quantum_[tc] = cfg.dwrr_weights[tc] * mtu_frame;
  }
  const FabricGraph& g = fabric.graph;
  const size_t n = boost::num_vertices(g);
  first_port_.resize(n + 1);
  is_switch_.resize(n);
  host_of_node_.assign(n, -1);
  switch_salt_.resize(n);
  RngStream ecmp_rng(cfg.seed, "ecmp");
  ecmp_salt_ = static_cast<uint32_t>(ecmp_rng.next());
  for (size_t h = 0; h < fabric.hosts.size(); ++h)
    host_of_node_[fabric.hosts[h]] = static_cast<int32_t>(h);

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
      ports_.push_back(p);
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
  port_occ_.resize(ports_.size());
  port_hist_.resize(ports_.size());
  ber_rng_.assign(ports_.size(), RngStream(cfg.seed, "ber"));
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
    const Port& p = ports_[pid];
    if (p.bit_error_rate > 0) {
      ber_rng_[pid] = RngStream(cfg.seed, "ber:" + g[p.node].name + ":" + std::to_string(p.index));
    }
  }
  ecn_rng_.assign(n, RngStream(cfg.seed, "ecn"));
  if (cfg.ecn) {
    if (cfg.red.kmin_bytes < 0 || cfg.red.kmax_bytes <= cfg.red.kmin_bytes ||
        !(cfg.red.pmax > 0 && cfg.red.pmax <= 1)) {
      throw std::invalid_argument("Network: ECN needs 0 <= kmin < kmax and 0 < pmax <= 1");
    }
    for (VertexId v = 0; v < n; ++v) {
      if (is_switch_[v]) ecn_rng_[v] = RngStream(cfg.seed, "ecn:" + g[v].name);
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

uint32_t Network::egress_for(uint32_t node, int dst_host, uint32_t flow_hash, uint32_t seq,
                             bool descending) const {
  const auto choices = routes_.next_ports(node, dst_host, descending);
  if (choices.empty()) {
    throw std::logic_error("Network: no route at node " + std::to_string(node) + " to host " +
                           std::to_string(dst_host));
  }
  return first_port_[node] + pick(choices, node, flow_hash, seq);
}

void Network::occupancy_change(uint32_t port_id, int tc, int64_t delta) {
  const int64_t now = sim_.now().ps();
  Occupancy& po = port_occ_[port_id];
  port_hist_[port_id].ps[OccupancyHistogram::bucket(po.bytes)] += now - po.since_ps;
  po.change(now, delta);
  QueueCounters& q = queues_[static_cast<size_t>(port_id) * kTrafficClasses + tc];
  q.occupancy.change(now, delta);
  Port& port = ports_[port_id];
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
    port_hist_[pid].ps[OccupancyHistogram::bucket(po.bytes)] += now - po.since_ps;
    po.change(now, 0);
    for (int tc = 0; tc < kTrafficClasses; ++tc) {
      queues_[static_cast<size_t>(pid) * kTrafficClasses + tc].occupancy.change(now, 0);
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
  if (!port.transmitting) start_tx(port_id);
}

void Network::ecn_mark(Packet* p, uint32_t port_id, int64_t queue_bytes) {
  if (p->flags & Packet::kEcnCe) return;  // already marked upstream
  if (!cfg_.red.mark(queue_bytes, ecn_rng_[ports_[port_id].node])) return;
  p->flags |= Packet::kEcnCe;
  queues_[static_cast<size_t>(port_id) * kTrafficClasses + p->tc].ecn_marked += 1;
}

void Network::drop(Packet* p, uint32_t port_id, bool corrupt) {
  Port& port = ports_[port_id];
  if (corrupt) {
    if (!(p->flags & Packet::kStomped)) port.counters.corrupt_drops += 1;
  } else {
    port.counters.drops += 1;
    port.counters.drop_bytes += p->wire_bytes;
    QueueCounters& q = queues_[static_cast<size_t>(port_id) * kTrafficClasses + p->tc];
    q.drops += 1;
    q.drop_bytes += p->wire_bytes;
  }
  dropped_bytes_ += p->wire_bytes;
  ++dropped_packets_;
  if (observer_ != nullptr) observer_->packet_dropped(port_id, p->tc, corrupt, sim_.now().ps());
  pool_.put(p);
}

uint64_t Network::send(int src_host, int dst_host, int64_t bytes, uint32_t flow_id, uint64_t tag,
                       int tc) {
  const int hosts = static_cast<int>(fabric_.hosts.size());
  if (src_host < 0 || src_host >= hosts || dst_host < 0 || dst_host >= hosts ||
      src_host == dst_host) {
    throw std::invalid_argument("Network::send: bad host pair " + std::to_string(src_host) +
                                " -> " + std::to_string(dst_host));
  }
  if (bytes < 0) throw std::invalid_argument("Network::send: negative message size");
  if (tc < -1 || tc >= kTrafficClasses) throw std::invalid_argument("Network::send: bad tc");
  if (tc < 0) tc = cfg_.traffic_class;
  const auto key = std::make_tuple(src_host, dst_host, flow_id);
  auto it = qp_index_.find(key);
  if (it == qp_index_.end() || qps_[it->second].tc != tc) {
    // A new QP (a different class on the same flow is a different QP too).
    Qp qp;
    qp.src_host = src_host;
    qp.dst_host = dst_host;
    qp.tc = static_cast<uint8_t>(tc);
    qp.flow_hash = static_cast<uint32_t>(fmix64((static_cast<uint64_t>(src_host) << 40) ^
                                                (static_cast<uint64_t>(dst_host) << 16) ^ flow_id ^
                                                (static_cast<uint64_t>(ecmp_salt_) << 32)));
    qp.rate_bps = cfg_.qp_rate_limit_bps;
    // The QP leaves by the port its flow hashes to among the routes' choices.
    const VertexId src = fabric_.hosts[src_host];
    const auto choices = routes_.next_ports(src, dst_host);
    if (choices.empty()) throw std::invalid_argument("Network::send: no route to the destination");
    qp.nic = static_cast<uint32_t>(
        nic_of_port_[first_port_[src] +
                     pick(choices, static_cast<uint32_t>(src), qp.flow_hash, 0)]);
    const uint32_t id = static_cast<uint32_t>(qps_.size());
    qps_.push_back(std::move(qp));
    if (it == qp_index_.end()) {
      it = qp_index_.emplace(key, id).first;
    } else {
      it->second = id;
    }
  }
  const uint32_t qp_id = it->second;
  Qp& qp = qps_[qp_id];
  const int64_t packets = bytes == 0 ? 1 : (bytes + cfg_.mtu_bytes - 1) / cfg_.mtu_bytes;
  if (static_cast<int64_t>(qp.psn_end) + packets > int64_t{UINT32_MAX}) {
    throw std::invalid_argument("Network::send: queue pair sequence space exhausted");
  }
  uint32_t slot;
  if (!free_messages_.empty()) {
    slot = free_messages_.back();
    free_messages_.pop_back();
  } else {
    slot = static_cast<uint32_t>(messages_.size());
    messages_.emplace_back();
  }
  Message& m = messages_[slot];
  m.seq = next_seq_++;
  m.tag = tag;
  m.bytes = bytes;
  m.start_ps = sim_.now().ps();
  m.retransmitted = 0;
  m.qp = qp_id;
  m.first_psn = qp.psn_end;
  m.packets = static_cast<uint32_t>(packets);
  qp.psn_end += static_cast<uint32_t>(packets);
  qp.msgs.push_back(slot);
  ++in_flight_;
  if (observer_ != nullptr)
    observer_->message_posted(m.seq, src_host, dst_host, qp_id, bytes, m.start_ps);
  activate(qp_id);
  return m.seq;
}

void Network::activate(uint32_t qp_id) {
  Qp& qp = qps_[qp_id];
  if (qp.snd_nxt >= qp.psn_end) return;
  if (!qp.active) {
    qp.active = true;
    nics_[qp.nic].active.push_back(qp_id);
  }
  const Port& port = ports_[nics_[qp.nic].port];
  if (!port.transmitting && port.nonempty == 0) nic_fill(qp.nic);
}

void Network::nic_fill(uint32_t nic_id) {
  Nic& nic = nics_[nic_id];
  const int64_t now = sim_.now().ps();
  int64_t earliest = -1;  // soonest time a rate-limited QP may send
  for (size_t tried = 0; tried < nic.active.size();) {
    if (nic.cursor >= nic.active.size()) nic.cursor = 0;
    const uint32_t qp_id = nic.active[nic.cursor];
    Qp& qp = qps_[qp_id];
    if (qp.snd_nxt >= qp.psn_end) {  // nothing left to send: leave the round robin
      qp.active = false;
      nic.active.erase(nic.active.begin() + static_cast<ptrdiff_t>(nic.cursor));
      continue;
    }
    if (qp.next_send_ps > now) {
      earliest = earliest < 0 ? qp.next_send_ps : std::min(earliest, qp.next_send_ps);
      ++nic.cursor;
      ++tried;
      continue;
    }
    // Send packet snd_nxt of this QP. (Messages before it may all have been acknowledged and
    // released, leaving snd_msg behind msg_base.)
    if (qp.snd_msg < qp.msg_base) qp.snd_msg = qp.msg_base;
    while (qp.snd_nxt >= message_at(qp, qp.snd_msg).first_psn + message_at(qp, qp.snd_msg).packets)
      ++qp.snd_msg;
    Message& m = message_at(qp, qp.snd_msg);
    const int64_t offset = static_cast<int64_t>(qp.snd_nxt - m.first_psn) * cfg_.mtu_bytes;
    const int64_t payload = std::min<int64_t>(cfg_.mtu_bytes, m.bytes - offset);
    Packet* p = pool_.get();
    p->qp = qp_id;
    p->psn = qp.snd_nxt;
    p->flow_hash = qp.flow_hash;
    p->dst_host = qp.dst_host;
    p->payload_bytes = static_cast<int32_t>(payload);
    p->wire_bytes = static_cast<int32_t>(cfg_.wire.wire_bytes(payload));
    p->tc = qp.tc;
    p->kind = PacketKind::kData;
    if (qp.snd_nxt < qp.snd_max) {
      ++retransmits_;
      ++m.retransmitted;
    }
    ++qp.snd_nxt;
    qp.snd_max = std::max(qp.snd_max, qp.snd_nxt);
    if (qp.rate_bps > 0) {
      qp.next_send_ps =
          std::max(qp.next_send_ps, now) + serialization_ps(p->wire_bytes, qp.rate_bps);
    }
    if (qp.rto_deadline_ps < 0) arm_timer(p->qp);
    ++nic.cursor;
    sent_bytes_ += p->wire_bytes;
    enqueue(nic.port, p);
    return;
  }
  if (earliest >= 0 && (nic.wake_ps < 0 || nic.wake_ps > earliest)) {
    nic.wake_ps = earliest;
    sim_.at<&Network::on_nic_wake>(SimTime(earliest), this, nic_id);
  }
}

void Network::on_nic_wake(uint64_t nic_id) {
  Nic& nic = nics_[nic_id];
  if (nic.wake_ps != sim_.now().ps()) return;  // superseded by an earlier wake-up
  nic.wake_ps = -1;
  const Port& port = ports_[nic.port];
  if (!port.transmitting && port.nonempty == 0) nic_fill(static_cast<uint32_t>(nic_id));
}

int Network::select_queue(Port& port) {
  if (!cfg_.dwrr) return 31 - std::countl_zero(static_cast<uint32_t>(port.nonempty));
  // Deficit round robin over the non-empty classes.
  for (;;) {
    const int tc = port.dwrr_cursor;
    if (port.head[tc] == nullptr) {
      port.deficit[tc] = 0;
      port.dwrr_fresh = true;
      // Next non-empty class after tc, cyclically.
      const uint32_t mask = port.nonempty;
      const uint32_t rotated = ((mask >> (tc + 1)) | (mask << (kTrafficClasses - tc - 1))) & 0xFF;
      port.dwrr_cursor =
          static_cast<uint8_t>((tc + 1 + std::countr_zero(rotated)) % kTrafficClasses);
      continue;
    }
    if (port.dwrr_fresh) {
      port.deficit[tc] += quantum_[tc];
      port.dwrr_fresh = false;
    }
    if (port.head[tc]->wire_bytes <= port.deficit[tc]) {
      port.deficit[tc] -= port.head[tc]->wire_bytes;
      return tc;
    }
    port.dwrr_fresh = true;
    port.dwrr_cursor = static_cast<uint8_t>((tc + 1) % kTrafficClasses);
  }
}

void Network::start_tx(uint32_t port_id) {
  Port& port = ports_[port_id];
  const int tc = select_queue(port);
  Packet* p = port.head[tc];
  port.head[tc] = p->next;
  if (port.head[tc] == nullptr) {
    port.tail[tc] = nullptr;
    port.nonempty &= static_cast<uint8_t>(~(1u << tc));
    port.deficit[tc] = 0;  // DRR: a class that empties keeps no credit
  }
  p->next = nullptr;
  if (cfg_.ecn && cfg_.ecn_at_dequeue && is_switch_[port.node] && p->kind == PacketKind::kData) {
    // The bytes behind it: the queue's occupancy still counts this packet.
    ecn_mark(p, port_id,
             queues_[static_cast<size_t>(port_id) * kTrafficClasses + tc].occupancy.bytes -
                 p->wire_bytes);
  }
  port.transmitting = true;
  port.in_tx_tc = p->tc;
  port.in_tx_wire_bytes = p->wire_bytes;
  port.in_tx_enqueue_ps = p->enqueue_ps;
  const int64_t now = sim_.now().ps();
  const int64_t ser_ps = serialization_ps(p->wire_bytes, port.rate_bps);
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
  sim_.after<&Network::on_tx_done>(SimTime(ser_ps), this, port_id);
  if (port.peer_cut_through) {
    // First bit in at now + delay; forwarded `latency` later. The tail arrives ser_ps after.
    p->flags |= Packet::kHeadFirst;
    p->tail_ps = now + ser_ps + port.delay_ps;
    sim_.after<&Network::on_arrival>(SimTime(port.delay_ps + port.peer_ingress_ps), this,
                                     reinterpret_cast<uint64_t>(p));
  } else {
    sim_.after<&Network::on_arrival>(SimTime(ser_ps + port.delay_ps + port.peer_ingress_ps), this,
                                     reinterpret_cast<uint64_t>(p));
  }
}

void Network::on_tx_done(uint64_t port_id) {
  Port& port = ports_[port_id];
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
  if (port.nonempty != 0) {
    start_tx(static_cast<uint32_t>(port_id));
  } else if (nic_of_port_[port_id] >= 0) {
    nic_fill(static_cast<uint32_t>(nic_of_port_[port_id]));
  }
}

void Network::on_arrival(uint64_t packet_addr) {
  Packet* p = reinterpret_cast<Packet*>(packet_addr);
  const uint32_t in_pid = first_port_[p->node] + p->in_port;
  const uint32_t from_pid = ports_[in_pid].peer_port;  // the port that sent it
  const bool at_switch = is_switch_[p->node];
  const bool head_first = (p->flags & Packet::kHeadFirst) != 0;
  if ((p->flags & Packet::kCorrupt) && !head_first) {
    // FCS / ICRC check of a stored frame fails: dropped here, counted against the link.
    drop(p, from_pid, true);
    return;
  }
  if ((p->flags & Packet::kCorrupt) && !(p->flags & Packet::kStomped)) {
    // A cut-through switch sees the bad FCS only as the frame ends, after forwarding began:
    // it counts the error on this link and the frame is dropped further on.
    ports_[from_pid].counters.corrupt_drops += 1;
    p->flags |= Packet::kStomped;
  }
  if (!(p->flags & (Packet::kStored | Packet::kCorrupt))) {  // intact frames, counted once
    ports_[from_pid].counters.rx_packets += 1;
    ports_[from_pid].counters.rx_bytes += p->wire_bytes;
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
    sim_.at<&Network::on_arrival>(SimTime(at), this, reinterpret_cast<uint64_t>(p));
    return;
  }
  if (is_switch_[p->node]) {
    BufferMmu& mmu = mmus_[p->node];
    const QueueCounters& q = queues_[static_cast<size_t>(out_pid) * kTrafficClasses + p->tc];
    if (!mmu.admit(out.occupancy_bytes, q.occupancy.bytes, p->wire_bytes)) {
      drop(p, out_pid, false);
      return;
    }
    mmu.on_enqueue(q.occupancy.bytes, p->wire_bytes);
    if (cfg_.ecn && !cfg_.ecn_at_dequeue && p->kind == PacketKind::kData) {
      ecn_mark(p, out_pid, q.occupancy.bytes);  // the bytes ahead of it
    }
  }
  enqueue(out_pid, p);
}

void Network::deliver(Packet* p) {
  delivered_bytes_ += p->wire_bytes;
  ++delivered_packets_;
  Qp& qp = qps_[p->qp];
  if (p->kind == PacketKind::kData) {
    receive_data(p, qp);
  } else {
    receive_ack(p, qp, p->qp);
  }
  pool_.put(p);
}

void Network::receive_data(Packet* p, Qp& qp) {
  const uint32_t qp_id = p->qp;
  if (p->psn > qp.rcv_nxt) {  // a gap: one NAK until the expected packet arrives
    if (!qp.nak_outstanding) {
      qp.nak_outstanding = true;
      ++nak_tx_;
      send_control(qp_id, PacketKind::kNak, qp.rcv_nxt);
    }
    return;
  }
  if (p->psn < qp.rcv_nxt) {  // duplicate (a retransmission of what arrived): re-ACK
    send_control(qp_id, PacketKind::kAck, qp.rcv_nxt);
    return;
  }
  ++qp.rcv_nxt;
  qp.nak_outstanding = false;
  if (p->flags & Packet::kEcnCe) ++ce_received_;  // what a DCQCN receiver turns into CNPs
  Message& m = message_at(qp, qp.rcv_msg);
  const bool last = qp.rcv_nxt == m.first_psn + m.packets;
  if (++qp.unacked >= static_cast<uint32_t>(cfg_.ack_interval) || last) {
    qp.unacked = 0;
    send_control(qp_id, PacketKind::kAck, qp.rcv_nxt);
  }
  if (last) {
    ++qp.rcv_msg;
    --in_flight_;
    const int64_t now = sim_.now().ps();
    if (flows_.size() < cfg_.max_flow_records) {
      flows_.push_back(FlowRecord{m.seq, qp.src_host, qp.dst_host, qp_id, qp.tc, m.bytes,
                                  m.start_ps, now, m.retransmitted});
    } else {
      ++flows_unrecorded_;
    }
    if (observer_ != nullptr) {
      observer_->message_delivered(m.seq, qp.src_host, qp.dst_host, qp_id, now);
    }
    // Last: the sink may post messages, reallocating qps_ and messages_ (qp and m dangle).
    if (sink_ != nullptr) sink_->on_message_complete(m.tag);
  }
}

void Network::send_control(uint32_t qp_id, PacketKind kind, uint32_t psn) {
  const Qp& qp = qps_[qp_id];
  Packet* p = pool_.get();
  p->qp = qp_id;
  p->psn = psn;
  p->flow_hash = qp.flow_hash ^ kReverseSalt;
  p->dst_host = qp.src_host;
  p->payload_bytes = 0;
  p->wire_bytes = static_cast<int32_t>(ack_wire_bytes_);
  p->tc = qp.tc;
  p->kind = kind;
  sent_bytes_ += p->wire_bytes;
  const uint32_t node = static_cast<uint32_t>(fabric_.hosts[qp.dst_host]);
  enqueue(egress_for(node, qp.src_host, p->flow_hash, psn, false), p);
}

void Network::receive_ack(const Packet* p, Qp& qp, uint32_t qp_id) {
  if (p->psn > qp.snd_una) {  // cumulative progress
    qp.snd_una = p->psn;
    // An ACK can overtake a go-back (reordered paths): never resend what is acknowledged.
    if (qp.snd_nxt < qp.snd_una) qp.snd_nxt = qp.snd_una;
    qp.retries = 0;
    while (!qp.msgs.empty()) {
      const Message& m = messages_[qp.msgs.front()];
      if (qp.snd_una < m.first_psn + m.packets) break;
      free_messages_.push_back(qp.msgs.front());
      qp.msgs.pop_front();
      ++qp.msg_base;
    }
    if (qp.snd_una >= qp.snd_max) {
      qp.rto_deadline_ps = -1;  // nothing outstanding
    } else {
      arm_timer(qp_id);  // restart the timer from this progress
    }
  }
  // A NAK below snd_una is stale (later packets were acknowledged since): ignored.
  if (p->kind == PacketKind::kNak && p->psn >= qp.snd_una && p->psn < qp.snd_nxt) {
    go_back(qp_id, p->psn, false);
  }
}

void Network::go_back(uint32_t qp_id, uint32_t psn, bool timeout) {
  Qp& qp = qps_[qp_id];
  if (observer_ != nullptr)
    observer_->went_back(qp_id, qp.src_host, qp.snd_nxt, psn, timeout, sim_.now().ps());
  qp.snd_nxt = psn;
  qp.snd_msg = qp.msg_base;
  while (psn >= message_at(qp, qp.snd_msg).first_psn + message_at(qp, qp.snd_msg).packets)
    ++qp.snd_msg;
  qp.rto_deadline_ps = -1;  // the timer restarts when the resent packet leaves the NIC
  activate(qp_id);
}

void Network::arm_timer(uint32_t qp_id) {
  Qp& qp = qps_[qp_id];
  qp.rto_deadline_ps = sim_.now().ps() + cfg_.rto_ps;
  if (!qp.timer_pending) {
    qp.timer_pending = true;
    sim_.at<&Network::on_rto>(SimTime(qp.rto_deadline_ps), this, qp_id);
  }
}

void Network::on_rto(uint64_t qp_id) {
  Qp& qp = qps_[qp_id];
  qp.timer_pending = false;
  if (qp.rto_deadline_ps < 0) return;  // disarmed: everything acknowledged
  const int64_t now = sim_.now().ps();
  if (now < qp.rto_deadline_ps) {  // progress since: sleep until the new deadline
    qp.timer_pending = true;
    sim_.at<&Network::on_rto>(SimTime(qp.rto_deadline_ps), this, qp_id);
    return;
  }
  if (qp.snd_una >= qp.snd_max) {
    qp.rto_deadline_ps = -1;
    return;
  }
  ++rto_timeouts_;
  if (++qp.retries > cfg_.retry_count) {
    failure_ = "queue pair " + std::to_string(qp_id) + " (host " + std::to_string(qp.src_host) +
               " -> host " + std::to_string(qp.dst_host) +
               ") failed: transport retry counter exceeded (" + std::to_string(cfg_.retry_count) +
               " retries after timeouts of " + format_time(cfg_.rto_ps) +
               " without progress, PSN " + std::to_string(qp.snd_una) + ")";
    qp.rto_deadline_ps = -1;
    sim_.request_stop();
    return;
  }
  go_back(static_cast<uint32_t>(qp_id), qp.snd_una, true);
}

NetTotals Network::totals() const {
  NetTotals t;
  for (const Port& p : ports_) {
    t.tail_drops += p.counters.drops;
    t.corrupt_drops += p.counters.corrupt_drops;
    t.packet_hops += p.counters.tx_packets;
  }
  for (size_t i = 0; i < queues_.size(); ++i) {
    if (is_switch_[ports_[i / kTrafficClasses].node])
      t.max_queue_bytes = std::max(t.max_queue_bytes, queues_[i].occupancy.max_bytes);
  }
  t.drops = dropped_packets_;  // a corrupt frame later tail-dropped is one lost packet
  t.packets_delivered = delivered_packets_;
  t.retransmits = retransmits_;
  t.nak_tx = nak_tx_;
  t.rto_timeouts = rto_timeouts_;
  t.ce_received = ce_received_;
  for (const QueueCounters& q : queues_) t.ecn_marked += q.ecn_marked;
  return t;
}

ByteBalance Network::byte_balance() const {
  ByteBalance b;
  b.sent_bytes = sent_bytes_;
  b.delivered_bytes = delivered_bytes_;
  b.dropped_bytes = dropped_bytes_;
  pool_.for_each_in_use([&](const Packet& p) { b.in_flight_bytes += p.wire_bytes; });
  return b;
}

void Network::check_conservation() const {
  const ByteBalance b = byte_balance();
  if (b.sent_bytes != b.delivered_bytes + b.dropped_bytes + b.in_flight_bytes) {
    throw std::logic_error("byte conservation violated: sent " + std::to_string(b.sent_bytes) +
                           " B != delivered " + std::to_string(b.delivered_bytes) + " + dropped " +
                           std::to_string(b.dropped_bytes) + " + in flight " +
                           std::to_string(b.in_flight_bytes));
  }
}

}  // namespace fabricsim
