// PFC at the receiving end of a pause frame: an egress queue paused until its quanta run out or
// an XON resumes it (IEEE 802.1Qbb), and the XOFF refresh of a port that keeps its peer paused.
#include <bit>

#include "sim/net/network.hpp"

namespace fabricsim {

void Network::on_xoff_refresh(uint64_t port_id) {
  // (behind a frame: sent, and re-armed, when it ends)
  if (pfc_.refresh(static_cast<uint32_t>(port_id))) kick(static_cast<uint32_t>(port_id));
}

void Network::pause_queue(uint32_t port_id, int tc, int64_t until_ps) {
  const PfcFlowControl::Paused r = pfc_.pause(port_id, tc, until_ps, sim_.now().ps());
  if (r.started && observer_ != nullptr) {
    observer_->pause_changed(port_id, tc, true, sim_.now().ps());
  }
  if (r.arm_timer) {
    sim_.at<&Network::on_pause_expiry>(SimTime(until_ps), node_lp(ports_[port_id].node), this,
                                       port_id);
  }
  monitor_.schedule_check();
}

void Network::resume_queue(uint32_t port_id, int tc) {
  int64_t counted_ps = -1;
  if (!pfc_.resume(port_id, tc, sim_.now().ps(), counted_ps)) return;
  if (counted_ps >= 0) {
    queues_[static_cast<size_t>(port_id) * kTrafficClasses + tc].paused_ps += counted_ps;
  }
  if (observer_ != nullptr) observer_->pause_changed(port_id, tc, false, sim_.now().ps());
  port_idle(port_id);
}

void Network::on_pause_expiry(uint64_t port_id) {
  const uint32_t pid = static_cast<uint32_t>(port_id);
  pfc_.expiry_fired(pid);
  const int64_t now = sim_.now().ps();
  int64_t next = -1;
  for (uint32_t m = pfc_.paused_mask(pid); m != 0; m &= m - 1) {
    const int tc = std::countr_zero(m);
    const int64_t until = pfc_.paused_until_ps(pid, tc);
    if (until <= now) {
      resume_queue(pid, tc);
    } else if (next < 0 || until < next) {
      next = until;
    }
  }
  if (next >= 0 && pfc_.arm_pause_timer(pid)) {
    sim_.at<&Network::on_pause_expiry>(SimTime(next), node_lp(ports_[pid].node), this, port_id);
  }
}

}  // namespace fabricsim
