// Network: links changing state during the run (down, up, another rate), the routes each node
// moves to when the fabric's routing has reconverged, and the longest stall of a queue pair.
//
// Each change is an event of the node that owns the port (one per direction of a link), and
// each node moves to new routes by an event of its own, so a partitioned run makes the same
// changes at the same picoseconds on the ranks that own the nodes (simulator.hpp).
#include <stdexcept>

#include "sim/net/network.hpp"

namespace fabricsim {

void Network::set_drop_every(uint32_t port_id, uint32_t n) {
  if (port_id >= ports_.size()) throw std::invalid_argument("set_drop_every: bad port id");
  ports_[port_id].drop_every = n;
  ports_[port_id].drop_countdown = n;
}

void Network::schedule_port_change(int64_t at_ps, uint32_t port_id, PortChange change,
                                   int64_t rate_bps) {
  if (port_id >= ports_.size())
    throw std::out_of_range("Network: no port " + std::to_string(port_id));
  if (change == PortChange::kRate && rate_bps <= 0) {
    throw std::invalid_argument("Network: a port's rate must be > 0 bps");
  }
  const LpId lp = node_lp(ports_[port_id].node);
  if (!sim_.is_local(lp)) return;  // another rank owns the port: it makes the change
  const uint64_t index = port_changes_.size();
  port_changes_.push_back({port_id, change, rate_bps});
  sim_.at<&Network::on_port_change>(SimTime(at_ps), lp, this, index);
}

void Network::schedule_routes(int64_t at_ps, const RoutingTable* routes) {
  if (routes == nullptr) throw std::invalid_argument("Network: schedule_routes without routes");
  for (uint32_t v = 0; v < is_switch_.size(); ++v) {
    if (!sim_.is_local(node_lp(v))) continue;  // its rank moves it
    const uint64_t index = route_changes_.size();
    route_changes_.push_back({v, routes});
    sim_.at<&Network::on_routes_change>(SimTime(at_ps), node_lp(v), this, index);
  }
}

void Network::on_routes_change(uint64_t index) {
  const RouteChange& c = route_changes_[index];
  node_routes_[c.node] = c.routes;
}

void Network::on_port_change(uint64_t index) {
  const PortChangeItem c = port_changes_[index];
  Port& port = ports_[c.port];
  switch (c.change) {
    case PortChange::kDown:
      if (port.down) return;
      port.down = true;
      // What waits in its queues is lost with the link (the frame being sent finishes
      // leaving and is lost at the far end, on_arrival).
      for (int tc = 0; tc < kTrafficClasses; ++tc) flush_queue(c.port, tc, DropCause::kLinkDown);
      break;
    case PortChange::kUp:
      if (c.rate_bps > 0) set_port_rate(port, c.rate_bps);
      if (!port.down) return;
      port.down = false;
      port_idle(c.port);
      break;
    case PortChange::kRate:
      set_port_rate(port, c.rate_bps);
      break;
  }
}

void Network::set_port_rate(Port& port, int64_t rate_bps) {
  port.rate_bps = rate_bps;
  port.ser_memo_bytes = -1;  // the frame being sent finishes at the old rate
}

void Network::flush_queue(uint32_t pid, int tc, DropCause cause) {
  Port& port = ports_[pid];
  const uint8_t bit = static_cast<uint8_t>(1u << tc);
  if (!(port.nonempty & bit)) return;
  QueueCounters& qc = queues_[static_cast<size_t>(pid) * kTrafficClasses + tc];
  const bool at_switch = is_switch_[port.node];
  while (Packet* p = port.head[tc]) {
    port.head[tc] = p->next;
    const int64_t bytes = p->wire_bytes;
    if (at_switch) {
      mmus_[port.node].on_dequeue(qc.occupancy.bytes, bytes);
      const uint32_t in_pid = first_port_[port.node] + p->in_port;
      if (lossless(port.node, p->in_tc)) {
        ingress_change(in_pid, p->in_tc, -bytes);
        if (cfg_.credits) return_credits(in_pid, p->in_tc, bytes);  // its input buffer is free
      }
    }
    occupancy_change(pid, tc, -bytes);
    drop(p, pid, cause);
  }
  port.tail[tc] = nullptr;
  port.nonempty &= static_cast<uint8_t>(~bit);
  queue_emptied(port.sched, tc);
}

uint32_t Network::failover(std::span<const uint16_t> choices, uint32_t base, size_t i,
                           uint32_t node, uint32_t flow_hash, uint32_t seq) const {
  size_t up = 0;
  for (const uint16_t c : choices) up += !ports_[base + c].down;
  if (up == 0) return base + choices[i];
  size_t k = hashed_index(up, node, flow_hash, seq);
  for (const uint16_t c : choices) {
    if (ports_[base + c].down) continue;
    if (k-- == 0) return base + c;
  }
  return base + choices[i];  // not reached
}

namespace {

/// Keeps in `best` the longer wait; on a tie the lower QP id, then the earlier start: the same
/// whichever rank holds which QP (MPI ranks merge by the same order).
void keep_longer(QpStall& best, const QpStall& w) {
  if (w.stall_ps > best.stall_ps ||
      (w.stall_ps == best.stall_ps && w.stall_ps > 0 &&
       (w.qp < best.qp || (w.qp == best.qp && w.from_ps < best.from_ps)))) {
    best = w;
  }
}

}  // namespace

void Network::note_progress(Qp& qp, uint32_t qp_id, int64_t now_ps) {
  keep_longer(stall_, {now_ps - qp.progress_ps, qp.progress_ps, static_cast<int64_t>(qp_id)});
  qp.progress_ps = now_ps;
}

QpStall Network::longest_stall() const {
  QpStall best = stall_;
  const int64_t now = sim_.now().ps();
  for (uint32_t id = 0; id < qps_.size(); ++id) {
    const Qp& qp = qps_[id];
    if (qp.snd_una < qp.snd_max) keep_longer(best, {now - qp.progress_ps, qp.progress_ps, id});
  }
  return best;
}

std::pair<int, int> Network::qp_hosts(uint32_t qp_id) const {
  const Qp& qp = qps_.at(qp_id);
  return {qp.src_host, qp.dst_host};
}

}  // namespace fabricsim
