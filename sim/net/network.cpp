#include "sim/net/network.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/core/rng.hpp"

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

}  // namespace

NetConfig net_config_for(const Scenario& sc) {
  NetConfig nc;
  nc.wire = wire_format_for(sc.transport);
  nc.mtu_bytes = sc.nic.mtu_bytes;
  nc.switch_latency_ps = sc.sw.latency_ps;
  nc.buffer_per_port_bytes = sc.sw.buffer_per_port_bytes;
  nc.seed = sc.seed;
  nc.per_packet_spraying = sc.routing.load_balancing == "per_packet";
  return nc;
}

Packet* PacketPool::get() {
  if (free_ == nullptr) {
    chunks_.push_back(std::make_unique<Packet[]>(kChunk));
    Packet* chunk = chunks_.back().get();
    for (size_t i = kChunk; i-- > 0;) {
      chunk[i].next = free_;
      free_ = &chunk[i];
    }
  }
  Packet* p = free_;
  free_ = p->next;
  p->next = nullptr;
  ++in_use_;
  return p;
}

Network::Network(Simulator& sim, const Fabric& fabric, const RoutingTable& routes,
                 const NetConfig& cfg)
    : sim_(sim),
      fabric_(fabric),
      routes_(routes),
      cfg_(cfg),
      admission_(cfg.buffer_per_port_bytes) {
  if (cfg.mtu_bytes <= 0) throw std::invalid_argument("Network: mtu_bytes must be > 0");
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
      p.peer_ingress_ps = is_switch_[p.peer_node] ? cfg.switch_latency_ps : 0;
      p.from_above = g[p.peer_node].tier > g[v].tier;
    }
  }
  nic_of_port_.assign(ports_.size(), -1);
  for (VertexId v : fabric.hosts) {
    for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid) {
      nic_of_port_[pid] = static_cast<int32_t>(nics_.size());
      nics_.push_back(Nic{pid, {}, 0});
    }
  }
}

uint16_t Network::pick(std::span<const uint16_t> choices, uint32_t node, uint32_t flow_hash,
                       uint32_t seq) const {
  if (choices.size() == 1) return choices[0];
  uint64_t key = static_cast<uint64_t>(flow_hash) ^ switch_salt_[node];
  if (cfg_.per_packet_spraying) key ^= static_cast<uint64_t>(seq) * 0x9E3779B97F4A7C15ULL;
  return choices[fmix64(key) % choices.size()];
}

void Network::enqueue(uint32_t port_id, Packet* p) {
  Port& port = ports_[port_id];
  if (port.tail == nullptr) {
    port.head = port.tail = p;
  } else {
    port.tail->next = p;
    port.tail = p;
  }
  port.occupancy_bytes += p->wire_bytes;
  port.counters.max_queue_bytes = std::max(port.counters.max_queue_bytes, port.occupancy_bytes);
  if (port.in_tx == nullptr) start_tx(port_id);
}

uint64_t Network::send(int src_host, int dst_host, int64_t bytes, uint32_t flow_id, uint64_t tag) {
  const int hosts = static_cast<int>(nics_.size());
  if (src_host < 0 || src_host >= hosts || dst_host < 0 || dst_host >= hosts ||
      src_host == dst_host) {
    throw std::invalid_argument("Network::send: bad host pair " + std::to_string(src_host) +
                                " -> " + std::to_string(dst_host));
  }
  if (bytes < 0) throw std::invalid_argument("Network::send: negative message size");
  Message m{};
  m.src_host = src_host;
  m.dst_host = dst_host;
  m.bytes = bytes;
  m.packets_total = bytes == 0 ? 1 : (bytes + cfg_.mtu_bytes - 1) / cfg_.mtu_bytes;
  m.flow_hash = static_cast<uint32_t>(fmix64((static_cast<uint64_t>(src_host) << 40) ^
                                             (static_cast<uint64_t>(dst_host) << 16) ^ flow_id ^
                                             (static_cast<uint64_t>(ecmp_salt_) << 32)));
  m.tag = tag;
  const uint64_t id = messages_.size();
  messages_.push_back(m);
  ++in_flight_;
  // The message leaves by the port its flow hashes to among the routes' choices.
  const VertexId src = fabric_.hosts[src_host];
  const auto choices = routes_.next_ports(src, dst_host);
  if (choices.empty()) throw std::invalid_argument("Network::send: no route to the destination");
  Nic& nic = nics_[nic_of_port_[first_port_[src] + pick(choices, src, m.flow_hash, 0)]];
  nic.active.push_back(id);
  if (ports_[nic.port].in_tx == nullptr && ports_[nic.port].head == nullptr) nic_fill(nic);
  return id;
}

void Network::nic_fill(Nic& nic) {
  if (nic.active.empty()) return;
  if (nic.cursor >= nic.active.size()) nic.cursor = 0;
  const uint64_t id = nic.active[nic.cursor];
  Message& m = messages_[id];
  const int64_t payload = std::min<int64_t>(cfg_.mtu_bytes, m.bytes - m.sent_bytes);
  Packet* p = pool_.get();
  p->msg_id = id;
  p->flow_hash = m.flow_hash;
  p->dst_host = m.dst_host;
  p->payload_bytes = static_cast<int32_t>(payload);
  p->wire_bytes = static_cast<int32_t>(cfg_.wire.wire_bytes(payload));
  p->seq = static_cast<uint32_t>(m.packets_sent);
  m.sent_bytes += payload;
  if (++m.packets_sent == m.packets_total) {
    nic.active.erase(nic.active.begin() +
                     static_cast<ptrdiff_t>(nic.cursor));  // cursor now names the next
  } else {
    ++nic.cursor;
  }
  enqueue(nic.port, p);
}

void Network::start_tx(uint32_t port_id) {
  Port& port = ports_[port_id];
  Packet* p = port.head;
  port.head = p->next;
  if (port.head == nullptr) port.tail = nullptr;
  p->next = nullptr;
  port.in_tx = p;
  port.counters.tx_packets += 1;
  port.counters.tx_bytes += p->wire_bytes;
  const int64_t ser_ps = serialization_ps(p->wire_bytes, port.rate_bps);
  p->node = port.peer_node;
  p->in_port = port.peer_index;
  sim_.after<&Network::on_tx_done>(SimTime(ser_ps), this, port_id);
  sim_.after<&Network::on_arrival>(SimTime(ser_ps + port.delay_ps + port.peer_ingress_ps), this,
                                   reinterpret_cast<uint64_t>(p));
}

void Network::on_tx_done(uint64_t port_id) {
  Port& port = ports_[port_id];
  port.occupancy_bytes -= port.in_tx->wire_bytes;
  port.in_tx = nullptr;
  if (port.head != nullptr) {
    start_tx(static_cast<uint32_t>(port_id));
  } else if (nic_of_port_[port_id] >= 0) {
    nic_fill(nics_[nic_of_port_[port_id]]);
  }
}

void Network::on_arrival(uint64_t packet_addr) {
  Packet* p = reinterpret_cast<Packet*>(packet_addr);
  if (is_switch_[p->node] || host_of_node_[p->node] != p->dst_host) {
    switch_forward(p);  // a switch, or a host relaying (rail-only PXN)
    return;
  }
  // Destination NIC: count the packet towards its message.
  Message& m = messages_[p->msg_id];
  pool_.put(p);
  ++delivered_;
  if (++m.packets_received == m.packets_total) {
    --in_flight_;
    if (sink_ != nullptr) sink_->on_message_complete(m.tag);
  }
}

void Network::switch_forward(Packet* p) {
  const bool descending = ports_[first_port_[p->node] + p->in_port].from_above;
  const auto choices = routes_.next_ports(p->node, p->dst_host, descending);
  if (choices.empty()) {
    throw std::logic_error("Network: no route at node " + std::to_string(p->node) + " to host " +
                           std::to_string(p->dst_host));
  }
  const uint32_t port_id = first_port_[p->node] + pick(choices, p->node, p->flow_hash, p->seq);
  Port& port = ports_[port_id];
  if (!admission_.admit(port.occupancy_bytes, p->wire_bytes)) {
    port.counters.drops += 1;
    port.counters.drop_bytes += p->wire_bytes;
    pool_.put(p);
    return;
  }
  enqueue(port_id, p);
}

NetTotals Network::totals() const {
  NetTotals t;
  for (const Port& p : ports_) {
    t.drops += p.counters.drops;
    t.packet_hops += p.counters.tx_packets;
    if (is_switch_[p.node])
      t.max_queue_bytes = std::max(t.max_queue_bytes, p.counters.max_queue_bytes);
  }
  t.packets_delivered = delivered_;
  return t;
}

}  // namespace fabricsim
