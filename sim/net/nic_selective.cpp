// Network: selective repeat, the loss recovery of NICs that place packets out of order
// (nic.loss_recovery: selective_repeat). The receiver writes every packet where it belongs
// whatever its order, as NICs built for adaptive routing and packet spraying do (InfiniBand
// adaptive routing and Spectrum-X's RoCE place out-of-order packets in memory; Ultra Ethernet's
// reliable unordered delivery, RUD), and answers each out-of-order packet with an ACK that
// carries the cumulative PSN (its rcv_nxt) and names the packet (a selective acknowledgement,
// one PSN per ACK as in IRN, Mittal et al. SIGCOMM'18, §3.1, with no NAK). The sender keeps a
// bitmap of what was selectively acknowledged and resends only the packets deemed lost: those
// at least reorder_threshold PSNs below the highest one acknowledged (forward acknowledgement,
// Mathis & Mahdavi SIGCOMM'96; off at 0), and at the timeout every one not acknowledged. A
// message completes when all its packets are in, in message order.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/net/network.hpp"

namespace fabricsim {

void Network::place_out_of_order(Packet* p, const Qp& qp, QpRx& rx, int64_t echo) {
  const uint32_t qp_id = p->qp;
  if (p->psn < rx.rcv_nxt) {  // a duplicate of what is in sequence: the cumulative ACK again
    send_control(qp_id, PacketKind::kAck, rx.rcv_nxt, qp.tc, echo, p);
    return;
  }
  const uint32_t k = p->psn - rx.rcv_nxt - 1;
  if (k < rx.ooo.size() && rx.ooo[k]) {  // placed already: acknowledge it again
    send_control(qp_id, PacketKind::kAck, rx.rcv_nxt, qp.tc, echo, p, p->psn);
    return;
  }
  if (rx.msgs.empty() || p->psn >= rx.msgs.back().first_psn + rx.msgs.back().packets) [[unlikely]] {
    throw std::logic_error("Network: packet " + std::to_string(p->psn) + " of queue pair " +
                           std::to_string(qp_id) + " arrived before its message was posted");
  }
  if (k >= rx.ooo.size()) rx.ooo.resize(size_t{k} + 1, 0);
  rx.ooo[k] = 1;
  if (p->flags & Packet::kEcnCe) ++ce_received_;
  if (p->flags & Packet::kRetransmit) {
    for (RxMessage& m : rx.msgs) {
      if (p->psn < m.first_psn + m.packets) {
        ++m.retransmitted_rx;
        break;
      }
    }
  }
  rx_placed_ps(p);  // its payload's PCIe copy takes the link now, whatever the order
  send_control(qp_id, PacketKind::kAck, rx.rcv_nxt, qp.tc, echo, p, p->psn);
}

uint32_t Network::join_placed(QpRx& rx) {
  // ooo[0] is PSN rcv_nxt now (rcv_nxt just moved past the packet that arrived).
  uint32_t n = 0;
  while (!rx.ooo.empty()) {
    const bool placed = rx.ooo.front() != 0;
    rx.ooo.pop_front();
    if (!placed) break;
    ++rx.rcv_nxt;
    ++n;
  }
  return n;
}

void Network::forget_sacked(Qp& qp, uint32_t acked) {
  if (acked >= qp.sacked.size()) {
    qp.sacked.clear();
  } else {
    qp.sacked.erase(qp.sacked.begin(), qp.sacked.begin() + acked);
  }
}

void Network::on_sack(Qp& qp, uint32_t qp_id, uint32_t psn) {
  if (psn < qp.snd_una || psn >= qp.snd_max) return;  // stale: acknowledged cumulatively since
  const uint32_t k = psn - qp.snd_una;
  if (k >= qp.sacked.size()) qp.sacked.resize(size_t{k} + 1, 0);
  qp.sacked[k] = 1;
  if (psn + 1 > qp.high_sack) qp.high_sack = psn + 1;
  if (hole_pending(qp)) {
    forget_hold(qp_id);  // a resend is ready whatever held the QP's next new packet
    activate(qp_id);
  }
}

bool Network::hole_pending(Qp& qp) const {
  uint32_t limit = qp.lost_upto;
  const auto threshold = static_cast<uint32_t>(cfg_.reorder_threshold);
  if (threshold > 0 && qp.high_sack > threshold) limit = std::max(limit, qp.high_sack - threshold);
  limit = std::min(limit, qp.snd_nxt);
  uint32_t& r = qp.resend_nxt;
  if (r < qp.snd_una) r = qp.snd_una;
  while (r < limit && r - qp.snd_una < qp.sacked.size() && qp.sacked[r - qp.snd_una] != 0) ++r;
  return r < limit;
}

Network::Message& Network::message_of(Qp& qp, uint32_t psn) {
  for (uint64_t i = qp.msg_base;; ++i) {
    Message& m = message_at(qp, i);  // throws past the last message held
    if (psn < m.first_psn + m.packets) return m;
  }
}

void Network::resend_unacknowledged(uint32_t qp_id) {
  Qp& qp = qps_[qp_id];
  if (observer_ != nullptr)
    observer_->went_back(qp_id, qp.src_host, qp.snd_nxt, qp.snd_una, true, sim_.now().ps());
  qp.lost_upto = qp.snd_nxt;
  qp.resend_nxt = qp.snd_una;
  forget_hold(qp_id);
  arm_timer(qp_id);  // as go_back: a resend that cannot leave still times out again
  activate(qp_id);
}

}  // namespace fabricsim
