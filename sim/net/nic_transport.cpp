// Network: the NICs' reliable-connected transport: queue pairs, posting messages, the NIC's
// round-robin over its QPs, delivery, ACK/NAK, go-back-N and the retransmission timer.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/core/units.hpp"
#include "sim/net/network.hpp"
#include "sim/net/network_hash.hpp"

namespace fabricsim {

using net_hash::fmix64;
using net_hash::kReverseSalt;

int Network::check_qp_key(const char* who, int src_host, int dst_host, uint32_t flow_id,
                          int tc) const {
  const int hosts = static_cast<int>(fabric_.hosts.size());
  const bool nic_loop = (flow_id & kNicLoopFlowBit) != 0;
  if (src_host < 0 || src_host >= hosts || dst_host < 0 || dst_host >= hosts ||
      (src_host == dst_host && !nic_loop && loopback_port_[src_host] < 0)) {
    throw std::invalid_argument(std::string(who) + ": bad host pair " + std::to_string(src_host) +
                                " -> " + std::to_string(dst_host));
  }
  if (nic_loop && src_host != dst_host) {
    throw std::invalid_argument(std::string(who) + ": flow " + std::to_string(flow_id) +
                                " has the NIC-loopback bit (kNicLoopFlowBit) set but goes from " +
                                "host " + std::to_string(src_host) + " to host " +
                                std::to_string(dst_host) +
                                "; a NIC loopback goes from a host to itself");
  }
  if (nic_loop && nic_loop_port_count(src_host) == 0) {
    throw std::invalid_argument(std::string(who) + ": a NIC loopback on host " +
                                std::to_string(src_host) +
                                " needs a NIC port to a switch, and the host has none");
  }
  if (tc < -1 || tc >= kTrafficClasses) throw std::invalid_argument(std::string(who) + ": bad tc");
  return tc < 0 ? cfg_.traffic_class : tc;
}

uint32_t Network::open_checked(const char* who, int src_host, int dst_host, uint32_t flow_id,
                               int tc, int nic) {
  const auto key = std::make_tuple(src_host, dst_host, flow_id, tc);
  if (auto it = qp_index_.find(key); it != qp_index_.end()) return it->second;
  // A new QP (a different class on the same flow is a different QP too).
  Qp qp;
  qp.src_host = src_host;
  qp.dst_host = dst_host;
  qp.tc = static_cast<uint8_t>(tc);
  qp.flow_hash = static_cast<uint32_t>(fmix64((static_cast<uint64_t>(src_host) << 40) ^
                                              (static_cast<uint64_t>(dst_host) << 16) ^ flow_id ^
                                              (static_cast<uint64_t>(ecmp_salt_) << 32)));
  qp.rate_bps = cfg_.qp_rate_limit_bps;
  // The QP leaves by the port its flow hashes to among the routes' choices, or by the one
  // its caller assigned (`nic`, NCCL's channel-to-NIC assignment).
  const VertexId src = fabric_.hosts[src_host];
  if (src_host == dst_host && (flow_id & kNicLoopFlowBit)) {
    // A NIC loopback: up one of the host's NIC ports to the first switch, whose route to the
    // host leads back down. The caller's NIC choice, or the flow's, without the flag bit.
    const uint32_t choice = (nic >= 0 ? static_cast<uint32_t>(nic) : flow_id) & ~kNicLoopFlowBit;
    const uint32_t pid = nic_loop_ports_[nic_loop_begin_[static_cast<size_t>(src_host)] +
                                         choice % nic_loop_port_count(src_host)];
    qp.nic = static_cast<uint32_t>(nic_of_port_[pid]);
  } else if (src_host == dst_host) {  // a loopback: up the NVLink to the NVSwitch and back
    qp.nic = static_cast<uint32_t>(nic_of_port_[loopback_port_[src_host]]);
  } else {
    const auto choices = node_routes_[src]->next_ports(src, dst_host);
    if (choices.empty()) {
      throw std::invalid_argument(std::string(who) + ": no route to the destination");
    }
    const uint16_t port = nic >= 0 ? choices[static_cast<size_t>(nic) % choices.size()]
                                   : pick(choices, static_cast<uint32_t>(src), qp.flow_hash, 0);
    qp.nic = static_cast<uint32_t>(nic_of_port_[first_port_[src] + port]);
  }
  // The congestion control's state of both halves is made here, once per QP; its reaction
  // point starts with the QP's first message (send()).
  const uint32_t id = static_cast<uint32_t>(qps_.size());
  if (cfg_.cc.kind != CcKind::kNone) {
    const CcQpInfo info{id,         src_host, dst_host, tc, ports_[nics_[qp.nic].port].rate_bps,
                        qp.rate_bps};
    qp.cc = QpCcSender(cfg_.cc, info);
    qp_rx_.emplace_back().cc = QpCcReceiver(cfg_.cc, info);
  } else {
    qp_rx_.emplace_back();
  }
  qps_.push_back(std::move(qp));
  qp_index_.emplace(key, id);
  return id;
}

uint32_t Network::open_qp(int src_host, int dst_host, uint32_t flow_id, int tc, int nic) {
  tc = check_qp_key("Network::open_qp", src_host, dst_host, flow_id, tc);
  return open_checked("Network::open_qp", src_host, dst_host, flow_id, tc, nic);
}

void Network::post_rx(uint32_t qp_id, const RxMessage& m) {
  if (remote_post_ && remote_post_(qp_id, m)) return;  // shipped to the destination's rank
  qp_rx_[qp_id].msgs.push_back(m);
}

void Network::accept_rx_message(uint32_t qp_id, const RxMessage& m) {
  if (qp_id >= qp_rx_.size()) {
    throw std::out_of_range("Network::accept_rx_message: no queue pair " + std::to_string(qp_id));
  }
  QpRx& rx = qp_rx_[qp_id];
  const uint32_t expected =
      rx.msgs.empty() ? rx.rcv_nxt : rx.msgs.back().first_psn + rx.msgs.back().packets;
  if (m.first_psn != expected || m.packets == 0) {
    throw std::logic_error("Network::accept_rx_message: message " + std::to_string(m.seq) +
                           " of queue pair " + std::to_string(qp_id) + " starts at PSN " +
                           std::to_string(m.first_psn) + ", expected " + std::to_string(expected));
  }
  rx.msgs.push_back(m);
}

uint64_t Network::send(int src_host, int dst_host, int64_t bytes, uint32_t flow_id, uint64_t tag,
                       int tc, bool inline_payload, int64_t pace_bps) {
  // Checked in the order they always were: hosts, size, class.
  check_qp_key("Network::send", src_host, dst_host, flow_id, 0);
  if (bytes < 0) throw std::invalid_argument("Network::send: negative message size");
  if (pace_bps < 0) throw std::invalid_argument("Network::send: negative pace");
  tc = check_qp_key("Network::send", src_host, dst_host, flow_id, tc);
  uint32_t qp_id;
  if (auto it = qp_index_.find(std::make_tuple(src_host, dst_host, flow_id, tc));
      it != qp_index_.end()) {
    qp_id = it->second;
  } else if (require_open_qps_) {
    throw std::logic_error("Network::send: queue pair not opened (host " +
                           std::to_string(src_host) + " -> host " + std::to_string(dst_host) +
                           ", flow " + std::to_string(flow_id) + ", tc " + std::to_string(tc) +
                           "); open every queue pair with open_qp first");
  } else {
    qp_id = open_checked("Network::send", src_host, dst_host, flow_id, tc);
  }
  return post(qp_id, bytes, tag, inline_payload, pace_bps);
}

uint64_t Network::send_on(uint32_t qp_id, int64_t bytes, uint64_t tag, bool inline_payload,
                          int64_t pace_bps) {
  if (qp_id >= qps_.size()) {
    throw std::out_of_range("Network::send_on: no queue pair " + std::to_string(qp_id));
  }
  if (bytes < 0) throw std::invalid_argument("Network::send_on: negative message size");
  if (pace_bps < 0) throw std::invalid_argument("Network::send_on: negative pace");
  return post(qp_id, bytes, tag, inline_payload, pace_bps);
}

uint64_t Network::post(uint32_t qp_id, int64_t bytes, uint64_t tag, bool inline_payload,
                       int64_t pace_bps) {
  Qp& qp = qps_[qp_id];
  const int64_t packets = bytes == 0 ? 1 : (bytes + cfg_.mtu_bytes - 1) / cfg_.mtu_bytes;
  if (static_cast<int64_t>(qp.psn_end) + packets > int64_t{UINT32_MAX}) {
    throw std::invalid_argument("Network::send: queue pair sequence space exhausted");
  }
  const int64_t now = sim_.now().ps();
  if (!qp.cc.started()) {
    const int64_t base_rtt_ps = cfg_.cc.kind != CcKind::kHpcc  ? 0
                                : cfg_.cc.hpcc.base_rtt_ps > 0 ? cfg_.cc.hpcc.base_rtt_ps
                                                               : idle_rtt_ps(qp);
    qp.cc.start(cfg_.cc, ports_[nics_[qp.nic].port].rate_bps, now, base_rtt_ps);
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
  m.bytes = bytes;
  m.first_psn = qp.psn_end;
  m.packets = static_cast<uint32_t>(packets);
  m.pace_bps = pace_bps;
  m.produce_ps = 0;
  if (pace_bps > 0) {
    m.produce_ps = std::max(now, qp.produced_ps);
    qp.produced_ps = m.produce_ps + serialization_ps(bytes, pace_bps);
  }
  // The NIC starts its messages one at a time at its message rate (doorbell, WQE fetch), over
  // all its QPs in posting order; the first byte leaves the send latency later (the payload's
  // DMA read). Both off (the default): ready at once, as an idle line-rate NIC.
  // A GPU's NVLink (or PCIe peer-to-peer) port is no NIC: none of the NIC's costs apply there.
  m.ready_ps = now;
  const bool nic_costs = (cfg_.message_interval_ps > 0 || cfg_.tx_latency_ps > 0 ||
                          cfg_.dma_read_latency_ps > 0 || cfg_.pcie_rate_bps > 0) &&
                         nic_port_[nics_[qp.nic].port];
  if (nic_costs && (cfg_.message_interval_ps > 0 || cfg_.tx_latency_ps > 0)) {
    Nic& nic = nics_[qp.nic];
    const int64_t start = std::max(now, nic.next_message_ps);
    nic.next_message_ps = start + cfg_.message_interval_ps;
    m.ready_ps = start + cfg_.tx_latency_ps;
  }
  if (nic_costs && !inline_payload && bytes > 0) {  // the DMA read: a round trip, one copy
    m.ready_ps += cfg_.dma_read_latency_ps;
    if (cfg_.pcie_rate_bps > 0) {
      m.ready_ps += serialization_ps(std::min(bytes, cfg_.mtu_bytes), cfg_.pcie_rate_bps);
    }
  }
  const uint64_t seq = next_seq_++;
  if (record_posts_) {
    // The place of this post in the execution order (sim/parallel: renumbering seq on merge).
    const bool in_event = sim_.in_event();
    const uint64_t key = sim_.current_key();
    if (in_event != post_in_event_ || key != post_event_key_ || now != post_event_ps_) {
      post_in_event_ = in_event;
      post_event_key_ = key;
      post_event_ps_ = now;
      post_index_ = 0;
    }
    posts_.push_back(PostKey{now, key, post_index_++, seq});
  }
  const RxMessage rx{seq, tag, bytes, now, m.first_psn, m.packets, 0};
  qp.psn_end += static_cast<uint32_t>(packets);
  if (qp.msgs.empty()) qp.front_end_psn = qp.psn_end;
  qp.msgs.push_back(slot);
  ++in_flight_;
  post_rx(qp_id, rx);  // may reallocate nothing of the sender's: qp stays valid
  if (observer_ != nullptr)
    observer_->message_posted(seq, qp.src_host, qp.dst_host, qp_id, bytes, now);
  activate(qp_id);
  return seq;
}

void Network::activate(uint32_t qp_id) {
  Qp& qp = qps_[qp_id];
  if (!has_to_send(qp)) return;
  if (!qp.active) {
    qp.active = true;
    nics_[qp.nic].active.push_back(qp_id);
    nics_[qp.nic].not_before_ps.push_back(0);
  }
  const uint32_t pid = nics_[qp.nic].port;
  const Port& port = ports_[pid];
  if (!port.transmitting && eligible(port, pid) == 0) nic_fill(qp.nic);
}

void Network::nic_fill(uint32_t nic_id) {
  Nic& nic = nics_[nic_id];
  const int64_t now = sim_.now().ps();
  int64_t earliest = -1;  // soonest time a rate-limited QP may send
  for (size_t tried = 0; tried < nic.active.size();) {
    if (nic.cursor >= nic.active.size()) nic.cursor = 0;
    // A QP held back until a known time, for a reason only its own send or go-back changes:
    // the same outcome as the checks below, without touching the QP and its message.
    if (const int64_t held = nic.not_before_ps[nic.cursor]; held > now) {
      earliest = earliest < 0 ? held : std::min(earliest, held);
      ++nic.cursor;
      ++tried;
      continue;
    }
    const uint32_t qp_id = nic.active[nic.cursor];
    Qp& qp = qps_[qp_id];
    if (!has_to_send(qp)) {  // nothing left to send: leave the round robin
      qp.active = false;
      nic.active.erase(nic.active.begin() + static_cast<ptrdiff_t>(nic.cursor));
      nic.not_before_ps.erase(nic.not_before_ps.begin() + static_cast<ptrdiff_t>(nic.cursor));
      continue;
    }
    int64_t wake = qp.next_send_ps;
    if (qp.next_send_ps > now && qp.cc.adaptive() && qp.pace_wire_bytes > 0) {
      // The congestion control may have raised the rate since the gap was set: re-time the gap
      // at today's rate and look again when its timer (DCQCN's rate timer) next fires.
      qp.cc.advance(now);
      const int64_t rate = pacing_rate(qp);
      qp.next_send_ps =
          rate > 0 ? qp.pace_base_ps + serialization_ps(qp.pace_wire_bytes, rate) : qp.pace_base_ps;
      wake = std::min(qp.next_send_ps, qp.cc.next_timer_ps());
    }
    if (qp.next_send_ps > now) {
      // A static rate's gap moves only when the QP sends; an adaptive one is re-timed above.
      if (!qp.cc.adaptive()) nic.not_before_ps[nic.cursor] = wake;
      earliest = earliest < 0 ? wake : std::min(earliest, wake);
      ++nic.cursor;
      ++tried;
      continue;
    }
    // Send packet snd_nxt of this QP, or under selective repeat a lost packet before it (a
    // hole). (Messages before it may all have been acknowledged and released, leaving snd_msg
    // behind msg_base.)
    const bool hole = cfg_.selective_repeat && hole_pending(qp);
    const uint32_t psn = hole ? qp.resend_nxt : qp.snd_nxt;
    if (qp.snd_msg < qp.msg_base) qp.snd_msg = qp.msg_base;
    while (!hole && qp.snd_nxt >= send_message(qp).first_psn + send_message(qp).packets)
      ++qp.snd_msg;
    const Message& m = hole ? message_of(qp, psn) : send_message(qp);
    if (m.ready_ps > now) {  // not started by the NIC yet (message rate, send latency)
      nic.not_before_ps[nic.cursor] = m.ready_ps;
      earliest = earliest < 0 ? m.ready_ps : std::min(earliest, m.ready_ps);
      ++nic.cursor;
      ++tried;
      continue;
    }
    const int64_t offset = static_cast<int64_t>(psn - m.first_psn) * cfg_.mtu_bytes;
    const int64_t payload = std::min<int64_t>(cfg_.mtu_bytes, m.bytes - offset);
    if (m.pace_bps > 0) {  // a paced message: this packet's bytes are not all produced yet
      const int64_t made = m.produce_ps + serialization_ps(offset + payload, m.pace_bps);
      if (made > now) {
        nic.not_before_ps[nic.cursor] = made;
        earliest = earliest < 0 ? made : std::min(earliest, made);
        ++nic.cursor;
        ++tried;
        continue;
      }
    }
    // A full congestion window (HPCC) holds the QP until an ACK reopens it (receive_ack). A
    // receiver that ACKs every n-th packet answers a window's packets n - 1 packets late: the
    // window grows by those, or the QP stalls each round (with fewer than n, until its timeout).
    // A selective resend is inside the window (below snd_nxt): the window, which the hole
    // itself keeps full, does not hold it.
    if (const int64_t window = qp.cc.window_bytes();
        !hole && window > 0 &&
        int64_t{qp.snd_nxt - qp.snd_una} >=
            (window + cfg_.mtu_bytes - 1) / cfg_.mtu_bytes + cfg_.ack_interval - 1) {
      ++nic.cursor;
      ++tried;
      continue;
    }
    const int64_t wire_bytes = cfg_.wire.wire_bytes(payload) + int_header_bytes_;
    // A priority paused by PFC, or a VL without credits for this packet, holds the QP back;
    // the port calls back when it resumes.
    if ((pfc_.held(nic.port) >> qp.tc & 1) ||
        (cfg_.credits && !credit_fc_.may_send(nic.port, qp.tc, wire_bytes))) {
      ++nic.cursor;
      ++tried;
      continue;
    }
    Packet* p = pool_.get();
    p->qp = qp_id;
    p->psn = psn;
    p->flow_hash = qp.flow_hash;
    p->dst_host = qp.dst_host;
    p->payload_bytes = static_cast<int32_t>(payload);
    p->wire_bytes = static_cast<int32_t>(wire_bytes);
    p->tc = qp.tc;
    p->qp_tc = qp.tc;
    p->kind = PacketKind::kData;
    if (rtt_stamps_) pool_.side(p, tx_stamp_) = now;  // echoed in its ACK: an RTT sample
    if (int_records_) {  // the switches on its path append their INT records
      IntStack& ints = pool_.side(p, int_side_);
      ints.n = 0;
      ints.overflow = false;
    }
    if (psn + 1 == m.first_psn + m.packets) p->flags |= Packet::kLast;
    if (hole || psn < qp.snd_max) {
      ++retransmits_;
      p->flags |= Packet::kRetransmit;
    } else if (qp.snd_una == qp.snd_max) {
      qp.progress_ps = now;  // into an empty window: a wait for its ACK starts
    }
    if (hole) {
      ++qp.resend_nxt;
    } else {
      ++qp.snd_nxt;
      qp.snd_max = std::max(qp.snd_max, qp.snd_nxt);
    }
    // The congestion control counts the bytes (DCQCN's byte counter, while below line rate)
    // with its timers applied up to now.
    qp.cc.on_bytes_sent(p->wire_bytes, now);
    if (const int64_t rate = pacing_rate(qp); rate > 0) {
      qp.pace_base_ps = std::max(qp.next_send_ps, now);
      qp.pace_wire_bytes = p->wire_bytes;
      qp.next_send_ps = qp.pace_base_ps + serialization_ps(p->wire_bytes, rate);
    } else {
      qp.pace_wire_bytes = 0;
    }
    if (qp.rto_deadline_ps < 0) arm_timer(p->qp);
    if (!hole && m.pace_bps > 0 && qp.pace_wire_bytes == 0 && !qp.cc.adaptive() &&
        psn + 1 < m.first_psn + m.packets) {
      // The next packet of a paced message whose bytes are not all produced yet: the hold the
      // QP's next look would find (the checks before it pass: same message, no pacing gap, no
      // rate control), set now while the QP is in cache instead of at a look that misses it.
      const int64_t next_end = offset + cfg_.mtu_bytes +
                               std::min<int64_t>(cfg_.mtu_bytes, m.bytes - offset - cfg_.mtu_bytes);
      if (const int64_t made = m.produce_ps + serialization_ps(next_end, m.pace_bps); made > now) {
        nic.not_before_ps[nic.cursor] = made;
      }
    }
    ++nic.cursor;
    sent_bytes_ += p->wire_bytes;
    enqueue(nic.port, p);
    return;
  }
  if (earliest >= 0 && (nic.wake_ps < 0 || nic.wake_ps > earliest)) {
    nic.wake_ps = earliest;
    sim_.at<&Network::on_nic_wake>(SimTime(earliest), node_lp(ports_[nic.port].node), this, nic_id);
  }
}

void Network::forget_hold(uint32_t qp_id) {
  const Qp& qp = qps_[qp_id];
  if (!qp.active) return;
  Nic& nic = nics_[qp.nic];
  for (size_t i = 0; i < nic.active.size(); ++i) {
    if (nic.active[i] == qp_id) nic.not_before_ps[i] = 0;
  }
}

void Network::on_nic_wake(uint64_t nic_id) {
  Nic& nic = nics_[nic_id];
  if (nic.wake_ps != sim_.now().ps()) return;  // superseded by an earlier wake-up
  nic.wake_ps = -1;
  const Port& port = ports_[nic.port];
  if (!port.transmitting && eligible(port, nic.port) == 0) nic_fill(static_cast<uint32_t>(nic_id));
}

void Network::deliver(Packet* p) {
  delivered_bytes_ += p->wire_bytes;
  ++delivered_packets_;
  Qp& qp = qps_[p->qp];
  if (p->kind == PacketKind::kData) {
    receive_data(p, qp);
  } else if (p->kind == PacketKind::kCnp) {
    ++cnp_rx_;  // the congestion control's reaction point (DCQCN: cut the rate)
    qp.cc.on_cnp(sim_.now().ps());
  } else {
    receive_ack(p, qp, p->qp);
  }
  pool_.put(p);
}

void Network::receive_data(Packet* p, const Qp& qp) {
  // The destination host's state only: its half of the QP (QpRx) and the QP's identity.
  const uint32_t qp_id = p->qp;
  QpRx& rx = qp_rx_[qp_id];
  // The congestion control's notification point (DCQCN: a CNP for a CE-marked packet, at most
  // one per flow per interval).
  if (rx.cc.cnp_due(cfg_.cc, (p->flags & Packet::kEcnCe) != 0, sim_.now().ps())) {
    ++cnp_tx_;
    send_control(qp_id, PacketKind::kCnp, rx.rcv_nxt, QpCcReceiver::cnp_class(cfg_.cc, qp.tc));
  }
  // The ACK or NAK this packet triggers echoes its send stamp (an RTT-measuring control).
  const int64_t echo = rtt_stamps_ ? pool_.side(p, tx_stamp_) : -1;
  if (cfg_.selective_repeat && p->psn != rx.rcv_nxt) {
    place_out_of_order(p, qp, rx, echo);  // nic_selective.cpp
    return;
  }
  if (p->psn > rx.rcv_nxt) {  // a gap: one NAK until the expected packet arrives
    if (!rx.nak_outstanding) {
      rx.nak_outstanding = true;
      ++nak_tx_;
      send_control(qp_id, PacketKind::kNak, rx.rcv_nxt, qp.tc, echo, p);
    }
    return;
  }
  if (p->psn < rx.rcv_nxt) {  // duplicate (a retransmission of what arrived): re-ACK
    send_control(qp_id, PacketKind::kAck, rx.rcv_nxt, qp.tc, echo, p);
    return;
  }
  if (rx.msgs.empty() || p->psn < rx.msgs.front().first_psn) [[unlikely]] {
    throw std::logic_error("Network: packet " + std::to_string(p->psn) + " of queue pair " +
                           std::to_string(qp_id) + " arrived before its message was posted");
  }
  ++rx.rcv_nxt;
  rx.nak_outstanding = false;
  if (p->flags & Packet::kEcnCe) ++ce_received_;  // what a DCQCN receiver turns into CNPs
  RxMessage& m = rx.msgs.front();
  if (p->flags & Packet::kRetransmit) ++m.retransmitted_rx;
  bool last = rx.rcv_nxt == m.first_psn + m.packets;
  if (last != ((p->flags & Packet::kLast) != 0)) [[unlikely]] {
    throw std::logic_error("Network: queue pair " + std::to_string(qp_id) + " packet " +
                           std::to_string(p->psn) +
                           ": the receiver's message boundary disagrees with the sender's");
  }
  // Selective repeat: the packets placed out of order right after this one are in sequence
  // now; the message(s) they end complete below.
  const uint32_t joined = cfg_.selective_repeat ? join_placed(rx) : 0;
  if (joined > 0) last = rx.rcv_nxt >= m.first_psn + m.packets;
  rx.unacked += 1 + joined;
  if (rx.unacked >= static_cast<uint32_t>(cfg_.ack_interval) || last) {
    rx.unacked = 0;
    send_control(qp_id, PacketKind::kAck, rx.rcv_nxt, qp.tc, echo, p);
  }
  const int64_t placed_ps = rx_placed_ps(p);
  // Every message received in full completes, in order (one, unless placed packets joined).
  while (last) {
    const QpRx& now_rx = qp_rx_[qp_id];  // a completion's sink may reallocate qp_rx_
    const bool more = now_rx.rcv_nxt > now_rx.msgs.front().first_psn + now_rx.msgs.front().packets;
    finish_rx_message(qp_id, placed_ps);
    if (!more) break;
    const QpRx& after = qp_rx_[qp_id];
    last = !after.msgs.empty() &&
           after.rcv_nxt >= after.msgs.front().first_psn + after.msgs.front().packets;
  }
}

int64_t Network::rx_placed_ps(const Packet* p) {
  // The NIC writes each accepted packet's payload to memory over its PCIe link, one packet
  // after another: at the port's data rate or above, each copy ends before the next packet is in;
  // below it (a GPU's or a slow host's PCIe path), the copies queue and cap what the NIC receives.
  // A GPU's NVLink (or PCIe peer-to-peer) port is no NIC: none of the NIC's costs apply there.
  int64_t copied_ps = sim_.now().ps();
  int64_t rx_latency_ps = 0;
  if (cfg_.pcie_rate_bps > 0 || cfg_.rx_latency_ps > 0) {
    const uint32_t in_port = port_id(p->node, p->in_port);
    if (nic_port_[in_port]) {
      rx_latency_ps = cfg_.rx_latency_ps;
      if (cfg_.pcie_rate_bps > 0 && p->payload_bytes > 0) {
        int64_t& pcie_free = rx_pcie_free_ps_[in_port];
        pcie_free =
            std::max(copied_ps, pcie_free) + serialization_ps(p->payload_bytes, cfg_.pcie_rate_bps);
        copied_ps = pcie_free;
      }
    }
  }
  return copied_ps + rx_latency_ps;
}

void Network::finish_rx_message(uint32_t qp_id, int64_t done_ps) {
  QpRx& rx = qp_rx_[qp_id];
  const Qp& qp = qps_[qp_id];
  ++rx.rcv_msg;
  // The DMA write of the last packet's payload, then the completion entry (rx_latency).
  if (done_ps > sim_.now().ps() || !rx.completing.empty()) {
    // In order: a message never completes before the one received ahead of it.
    const int64_t done = std::max(done_ps, rx.last_done_ps);
    rx.last_done_ps = done;
    rx.completing.push_back(rx.msgs.front());
    rx.msgs.pop_front();
    sim_.at<&Network::on_rx_complete>(
        SimTime(done), node_lp(static_cast<uint32_t>(fabric_.hosts[qp.dst_host])), this, qp_id);
    return;
  }
  const RxMessage done = rx.msgs.front();
  rx.msgs.pop_front();
  complete_message(qp_id, done);
}

void Network::on_rx_complete(uint64_t qp_id) {
  QpRx& rx = qp_rx_[qp_id];
  const RxMessage done = rx.completing.front();  // latencies are equal: completions stay FIFO
  rx.completing.pop_front();
  complete_message(static_cast<uint32_t>(qp_id), done);
}

void Network::complete_message(uint32_t qp_id, const RxMessage& m) {
  const Qp& qp = qps_[qp_id];
  --in_flight_;
  const int64_t now = sim_.now().ps();
  fct_[m.tag >> 63].record(now - m.start_ps);  // every message, recorded or not
  if (flows_.size() < cfg_.max_flow_records) {
    flows_.push_back(FlowRecord{m.seq, qp.src_host, qp.dst_host, qp_id, qp.tc, m.bytes, m.start_ps,
                                now, m.retransmitted_rx, m.tag, sim_.current_key()});
  } else {
    ++flows_unrecorded_;
  }
  if (observer_ != nullptr) {
    observer_->message_delivered(m.seq, qp.src_host, qp.dst_host, qp_id, now);
  }
  // Last: the sink may post messages, reallocating qps_ and qp_rx_ (qp dangles).
  if (sink_ != nullptr) sink_->on_message_complete(m.tag);
}

void Network::send_control(uint32_t qp_id, PacketKind kind, uint32_t psn, int tc, int64_t echo_ps,
                           const Packet* answered, uint32_t sack_psn) {
  const Qp& qp = qps_[qp_id];
  Packet* p = pool_.get();
  if (rtt_stamps_) pool_.side(p, tx_stamp_) = echo_ps;
  if (cfg_.selective_repeat) pool_.side(p, sack_side_) = sack_psn;
  if (int_records_) {  // an ACK or NAK echoes the INT records of the data packet it answers
    IntStack& ints = pool_.side(p, int_side_);
    if (answered != nullptr) {
      ints = pool_.side(answered, int_side_);
    } else {
      ints.n = 0;
      ints.overflow = false;
    }
  }
  p->qp = qp_id;
  p->psn = psn;
  p->flow_hash = qp.flow_hash ^ kReverseSalt;
  p->dst_host = qp.src_host;
  p->payload_bytes = 0;
  p->wire_bytes = static_cast<int32_t>(ack_wire_bytes_);
  p->tc = static_cast<uint8_t>(tc);
  p->qp_tc = qp.tc;
  p->kind = kind;
  sent_bytes_ += p->wire_bytes;
  const uint32_t node = static_cast<uint32_t>(fabric_.hosts[qp.dst_host]);
  // A loopback's ACK leaves by the port its data does (the routes have no path from a host to
  // itself): up the same NVLink, or (a NIC loopback) up the same NIC port to the first switch,
  // which turns it as it turns the data.
  enqueue(qp.src_host == qp.dst_host ? nics_[qp.nic].port
                                     : egress_for(node, qp.src_host, p->flow_hash, psn, false),
          p);
}

void Network::receive_ack(const Packet* p, Qp& qp, uint32_t qp_id) {
  qp.cc.on_ack(p->psn, sim_.now().ps());  // a registered control's hook (built-ins: nothing)
  if (p->psn > qp.snd_una) {              // cumulative progress
    if (cfg_.selective_repeat) forget_sacked(qp, p->psn - qp.snd_una);
    qp.snd_una = p->psn;
    note_progress(qp, qp_id, sim_.now().ps());
    // An ACK can overtake a go-back (reordered paths): never resend what is acknowledged.
    if (qp.snd_nxt < qp.snd_una) {
      qp.snd_nxt = qp.snd_una;
      forget_hold(qp_id);  // another packet, perhaps of another message: look again
    }
    qp.retries = 0;
    while (!qp.msgs.empty() && qp.snd_una >= qp.front_end_psn) {
      free_messages_.push_back(qp.msgs.front());
      qp.msgs.pop_front();
      ++qp.msg_base;
      if (!qp.msgs.empty()) {
        const Message& next = messages_[qp.msgs.front()];
        qp.front_end_psn = next.first_psn + next.packets;
      }
    }
    if (qp.snd_una >= qp.snd_max) {
      qp.rto_deadline_ps = -1;  // nothing outstanding
    } else {
      arm_timer(qp_id);  // restart the timer from this progress
    }
  }
  if (cfg_.selective_repeat) {
    if (const uint32_t sack = pool_.side(p, sack_side_); sack != kNoSack) on_sack(qp, qp_id, sack);
  }
  // A NAK below snd_una is stale (later packets were acknowledged since): ignored.
  if (p->kind == PacketKind::kNak && p->psn >= qp.snd_una && p->psn < qp.snd_nxt) {
    go_back(qp_id, p->psn, false);
  }
  // After the ACK's own work (a NAK's go-back included):
  if (rtt_stamps_) {
    if (const int64_t sent = pool_.side(p, tx_stamp_); sent >= 0) {
      // An RTT sample for the control (TIMELY: its rate computation). A raised rate re-times a
      // QP waiting for its pacing gap now, not at the wake-up the old rate set.
      const int64_t now = sim_.now().ps();
      const int64_t before = pacing_rate(qp);
      qp.cc.on_rtt(p->psn, qp.snd_nxt, now - sent, now);
      const int64_t after = pacing_rate(qp);
      if (after != before && (after == 0 || (before > 0 && after > before))) activate(qp_id);
    }
  }
  if (int_records_) {
    // The INT records for the control (HPCC: its window and rate). The ACK also freed window
    // room: the QP may send again now.
    qp.cc.on_int(p->psn, qp.snd_nxt, pool_.side(p, int_side_), sim_.now().ps());
    activate(qp_id);
  }
}

int64_t Network::idle_rtt_ps(const Qp& qp) const {
  const int64_t data_bytes = cfg_.wire.wire_bytes(cfg_.mtu_bytes) + int_header_bytes_;
  const uint32_t src = static_cast<uint32_t>(fabric_.hosts[static_cast<size_t>(qp.src_host)]);
  const uint32_t dst = static_cast<uint32_t>(fabric_.hosts[static_cast<size_t>(qp.dst_host)]);
  // One direction: from `first` (a port of `from`) hop by hop to node `to`, as forward() routes.
  const auto one_way = [&](uint32_t first, uint32_t to, int to_host, uint32_t hash, int64_t bytes) {
    int64_t ps = 0;
    uint32_t pid = first;
    for (size_t hops = 0; hops <= ports_.size(); ++hops) {
      const Port& port = ports_[pid];
      ps += serialization_ps(bytes, port.rate_bps) + port.delay_ps + port.peer_ingress_ps;
      if (port.peer_node == to) return ps;
      pid = egress_for(port.peer_node, to_host, hash, 0, ports_[port.peer_port].from_above);
    }
    throw std::logic_error("Network: no loop-free path for the idle RTT");
  };
  const uint32_t back = qp.src_host == qp.dst_host
                            ? nics_[qp.nic].port
                            : egress_for(dst, qp.src_host, qp.flow_hash ^ kReverseSalt, 0, false);
  return one_way(nics_[qp.nic].port, dst, qp.dst_host, qp.flow_hash, data_bytes) +
         one_way(back, src, qp.src_host, qp.flow_hash ^ kReverseSalt, ack_wire_bytes_);
}

void Network::go_back(uint32_t qp_id, uint32_t psn, bool timeout) {
  Qp& qp = qps_[qp_id];
  if (observer_ != nullptr)
    observer_->went_back(qp_id, qp.src_host, qp.snd_nxt, psn, timeout, sim_.now().ps());
  qp.snd_nxt = psn;
  qp.snd_msg = qp.msg_base;
  forget_hold(qp_id);  // an earlier packet: its message and payload may be ready already
  while (psn >= send_message(qp).first_psn + send_message(qp).packets) ++qp.snd_msg;
  // The timer restarts now: a NIC whose resend cannot leave (its priority paused by PFC, no
  // credits) still times out again, and after retry_count times reports the QP failed, as a
  // NIC stuck behind a pause storm does.
  arm_timer(qp_id);
  activate(qp_id);
}

void Network::arm_timer(uint32_t qp_id) {
  Qp& qp = qps_[qp_id];
  qp.rto_deadline_ps = sim_.now().ps() + cfg_.rto_ps;
  if (!qp.timer_pending) {
    qp.timer_pending = true;
    sim_.at<&Network::on_rto>(SimTime(qp.rto_deadline_ps), sender_lp(qp), this, qp_id);
  }
}

void Network::on_rto(uint64_t qp_id) {
  Qp& qp = qps_[qp_id];
  qp.timer_pending = false;
  if (qp.rto_deadline_ps < 0) return;  // disarmed: everything acknowledged
  const int64_t now = sim_.now().ps();
  if (now < qp.rto_deadline_ps) {  // progress since: sleep until the new deadline
    qp.timer_pending = true;
    sim_.at<&Network::on_rto>(SimTime(qp.rto_deadline_ps), sender_lp(qp), this, qp_id);
    return;
  }
  if (qp.snd_una >= qp.snd_max) {
    qp.rto_deadline_ps = -1;
    return;
  }
  ++rto_timeouts_;
  if (++qp.retries > cfg_.retry_count) {
    if (!failure_.empty()) {  // the run is settling after an earlier failure: keep that one
      qp.rto_deadline_ps = -1;
      return;
    }
    failure_ps_ = now;
    failure_key_ = sim_.current_key();
    failure_ = "queue pair " + std::to_string(qp_id) + " (host " + std::to_string(qp.src_host) +
               " -> host " + std::to_string(qp.dst_host) +
               ") failed: transport retry counter exceeded (" + std::to_string(cfg_.retry_count) +
               " retries after timeouts of " + format_time(cfg_.rto_ps) +
               " without progress, PSN " + std::to_string(qp.snd_una) + ")";
    qp.rto_deadline_ps = -1;
    sim_.request_stop();
    return;
  }
  if (cfg_.selective_repeat) {
    resend_unacknowledged(static_cast<uint32_t>(qp_id));  // nic_selective.cpp
  } else {
    go_back(static_cast<uint32_t>(qp_id), qp.snd_una, true);
  }
  if (qp.retries + 1 >= cfg_.retry_count && lossless_any_ && monitor_.detecting()) {
    // This QP fails at its next timeout or the one after. If it is stuck in a deadlock, the
    // detector must see that before the QP gives up, whatever the check interval: look at
    // these timeouts too (the last one runs before the failing timer, at the same picosecond),
    // so two checks in a row prove the cycle first.
    monitor_.request_check_at(qp.rto_deadline_ps);
  }
}

}  // namespace fabricsim
