#include "congestion/lossless_monitor.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace fabricsim {

LosslessMonitor::~LosslessMonitor() {
  if (check_at_ps_ != INT64_MAX && sim_.barrier_ps() == check_at_ps_) sim_.clear_barrier();
}

void LosslessMonitor::arm_periodic() {
  const int64_t now = sim_.now_ps();
  while (!requested_checks_.empty() && requested_checks_.top() <= now) requested_checks_.pop();
  check_at_ps_ = now + settings_.check_ps;
  if (!requested_checks_.empty()) check_at_ps_ = std::min(check_at_ps_, requested_checks_.top());
  sim_.set_barrier(check_at_ps_, run_check_, owner_);
}

void LosslessMonitor::set_owned_nodes(std::vector<uint8_t> owned) {
  const size_t nodes = wiring_.first_port.size() - 1;
  if (!owned.empty() && owned.size() != nodes) {
    throw std::invalid_argument("Network::set_owned_nodes: " + std::to_string(owned.size()) +
                                " entries for " + std::to_string(nodes) + " nodes");
  }
  owned_ = std::move(owned);
}

std::vector<uint64_t> LosslessMonitor::judge(const LosslessSnapshot& snap, int64_t now) {
  // From here on every rank reads the same merged snapshot and keeps the same state.
  if (snap.stormed != 0 && deadlock_.detected_at_ps >= 0) deadlock_.broken_by_watchdog = true;
  if (snap.blocked == 0) {
    last_cycle_.clear();
    last_cycle_tx_.clear();
    return {};
  }
  std::vector<uint64_t> proven;
  if (deadlock_.detected_at_ps < 0) {
    std::vector<uint64_t> cycle = find_deadlock(snap);
    std::vector<int64_t> tx;
    tx.reserve(cycle.size());
    for (uint64_t id : cycle) {
      // Cycle members are blocked queues, so the snapshot has their count.
      const auto it = std::lower_bound(snap.blocked_queues.begin(), snap.blocked_queues.end(),
                                       LosslessSnapshot::Blocked{id, INT64_MIN});
      tx.push_back(it->tx_packets);
    }
    // Proven when the same cycle is stuck at two checks in a row with nothing sent from it.
    const bool moved = cycle != last_cycle_ || tx != last_cycle_tx_;
    if (!cycle.empty() && !moved) {
      deadlock_.detected_at_ps = now;
      proven = cycle;
      if (!settings_.watchdog) {
        sim_.request_stop();
        return proven;
      }
    }
    last_cycle_ = std::move(cycle);
    last_cycle_tx_ = std::move(tx);
  }
  schedule_check();
  return proven;
}

std::vector<uint64_t> LosslessMonitor::find_deadlock(const LosslessSnapshot& s) const {
  // Candidates: blocked switch egress queues (non-empty, paused by a switch peer in XOFF or
  // without credits for their head) whose frames cannot leave. A candidate waits on the peer's
  // ingress (peer port, tc); that ingress drains only through the peer's egress queues holding
  // its frames. Keep, to a fixed point, the candidates whose awaited ingress has frames only
  // in candidate queues and none being sent: each survivor waits on survivors, so they
  // contain a cycle, and none of them can send.
  std::vector<uint8_t> xoff(wiring_.port_node.size(), 0);
  for (const LosslessSnapshot::Xoff& x : s.xoff) xoff[x.port] = static_cast<uint8_t>(x.mask);
  const size_t nq = wiring_.port_node.size() * kClasses;
  std::vector<uint8_t> stuck(nq, 0);
  std::vector<uint64_t> members;
  for (const LosslessSnapshot::Blocked& b : s.blocked_queues) {  // in queue id order
    const uint32_t pid = static_cast<uint32_t>(b.queue / kClasses);
    const int tc = static_cast<int>(b.queue % kClasses);
    if (!settings_.credits && !(xoff[wiring_.peer_port[pid]] >> tc & 1))
      continue;  // a resume comes
    stuck[b.queue] = 1;
    members.push_back(b.queue);
  }
  if (members.empty()) return {};
  // Per awaited ingress (global port x 8 + priority): the queues holding its frames, in queue
  // id order, and whether a frame of it is being sent.
  std::map<uint64_t, std::vector<uint64_t>> held_in;
  for (const LosslessSnapshot::Holds& h : s.holds) {
    const uint32_t node = wiring_.port_node[h.queue / kClasses];
    const uint64_t in = (uint64_t{wiring_.first_port[node]} + h.in_port) * kClasses + h.in_tc;
    held_in[in].push_back(h.queue);
  }
  std::vector<uint64_t> sending;
  for (const LosslessSnapshot::InTx& t : s.in_tx) {
    sending.push_back(uint64_t{t.ingress} * kClasses + t.in_tc);
  }
  std::sort(sending.begin(), sending.end());
  // For each member, the queues (at its peer) holding frames of the ingress it waits on.
  std::vector<std::vector<uint64_t>> holders(members.size());
  std::vector<uint8_t> draining(members.size(), 0);
  for (size_t i = 0; i < members.size(); ++i) {
    const uint32_t pid = static_cast<uint32_t>(members[i] / kClasses);
    const int tc = static_cast<int>(members[i] % kClasses);
    const uint64_t in = uint64_t{wiring_.peer_port[pid]} * kClasses + tc;
    if (std::binary_search(sending.begin(), sending.end(), in)) draining[i] = 1;
    if (auto it = held_in.find(in); it != held_in.end()) holders[i] = it->second;
    if (holders[i].empty()) draining[i] = 1;  // its frames are on the wire or gone
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < members.size(); ++i) {
      if (!stuck[members[i]]) continue;
      bool ok = !draining[i];
      for (uint64_t h : holders[i]) ok = ok && stuck[h];
      if (!ok) {
        stuck[members[i]] = 0;
        changed = true;
      }
    }
  }
  // Walk successors (the first stuck holder) from the first survivor until a queue repeats.
  std::map<uint64_t, size_t> index;
  for (size_t i = 0; i < members.size(); ++i) index[members[i]] = i;
  uint64_t at = UINT64_MAX;
  for (uint64_t id : members) {
    if (stuck[id]) {
      at = id;
      break;
    }
  }
  if (at == UINT64_MAX) return {};
  std::vector<uint64_t> path;
  std::map<uint64_t, size_t> seen;
  while (!seen.count(at)) {
    seen[at] = path.size();
    path.push_back(at);
    const size_t i = index.at(at);
    uint64_t next = UINT64_MAX;
    for (uint64_t h : holders[i]) {
      if (stuck[h]) {
        next = h;
        break;
      }
    }
    at = next;
  }
  return std::vector<uint64_t>(path.begin() + static_cast<ptrdiff_t>(seen[at]), path.end());
}

}  // namespace fabricsim
