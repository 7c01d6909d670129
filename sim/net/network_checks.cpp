// Network: totals, the byte balance and the end-of-run invariants.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/net/network.hpp"

namespace fabricsim {

NetTotals Network::totals() const {
  NetTotals t;
  for (const Port& p : ports_) {
    t.tail_drops += p.counters.drops;
    t.packet_hops += p.counters.tx_packets;
  }
  for (const ArrivalCounters& a : arrivals_) t.corrupt_drops += a.corrupt_drops;
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
  for (const QueueCounters& q : queues_) {
    t.ecn_marked += q.ecn_marked;
    t.watchdog_drops += q.watchdog_drops;
    t.watchdog_storms += q.storms;
    t.paused_ps += q.paused_ps;
  }
  for (const Port& p : ports_) {
    t.pfc_tx += p.counters.pfc_tx;
    t.pfc_rx += p.counters.pfc_rx;
    t.headroom_drops += p.counters.headroom_drops;
  }
  t.cnp_tx = cnp_tx_;
  t.cnp_rx = cnp_rx_;
  t.registered = registered_totals();
  return t;
}

ByteBalance Network::byte_balance() const {
  ByteBalance b;
  b.sent_bytes = sent_bytes_;
  b.delivered_bytes = delivered_bytes_;
  b.dropped_bytes = dropped_bytes_;
  b.in_flight_bytes = imported_in_flight_bytes_;
  pool_.for_each_in_use([&](const Packet& p) {
    if (p.kind != PacketKind::kPfc) b.in_flight_bytes += p.wire_bytes;  // link-local frames
  });
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

void Network::check_buffers() const {
  for (uint32_t v = 0; v < is_switch_.size(); ++v) {
    if (!is_switch_[v] || cfg_.credits) continue;  // credits bound each VL buffer by themselves
    const BufferMmu& m = mmus_[v];
    const std::string& name = fabric_.graph[v].name;
    if (m.model() == BufferModel::kShared) {
      const int64_t limit = m.buffer_bytes() + headroom_pool_bytes_[v];
      if (m.peak_total_bytes() > limit) {
        throw std::logic_error("switch " + name + " held " + std::to_string(m.peak_total_bytes()) +
                               " B, more than its shared buffer and PFC headroom (" +
                               std::to_string(limit) + " B)");
      }
      continue;
    }
    for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid) {
      if (ports_[pid].peak_lossless_in_bytes > m.limit_bytes()) {
        throw std::logic_error("switch " + name + " port " + std::to_string(pid) + " held " +
                               std::to_string(ports_[pid].peak_lossless_in_bytes) +
                               " B of lossless frames that came in on it, more than its buffer (" +
                               std::to_string(m.limit_bytes()) + " B)");
      }
    }
  }
}

void Network::check_lossless() const {
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
    const uint32_t node = ports_[pid].node;
    if (!is_switch_[node]) continue;
    for (int tc = 0; tc < kTrafficClasses; ++tc) {
      const QueueCounters& q = queue(pid, tc);
      if (q.drops == 0 || !lossless(node, tc)) continue;
      throw std::logic_error("lossless class " + std::to_string(tc) + " tail-dropped " +
                             std::to_string(q.drops) + " frames at switch " +
                             fabric_.graph[node].name + " port " + std::to_string(pid) +
                             ": a lossless class loses frames only to headroom overflow, the "
                             "PFC watchdog or a bit error");
    }
  }
}

}  // namespace fabricsim
