// The network's side of the periodic lossless check (congestion/lossless_monitor.hpp): the PFC
// watchdog's actions on the owned switches' egress queues, the description of the ports in a
// LosslessSnapshot, and the names of a proven deadlock's queues, links and flows. The monitor
// keeps the check's timing, the watchdog's per-queue decisions and the detector's verdict.
#include <algorithm>
#include <map>
#include <string>

#include "sim/net/network.hpp"

namespace fabricsim {

void Network::on_check_barrier(void* network) {
  static_cast<Network*>(network)->run_check();
}

void Network::run_check() {
  monitor_.begin_check();
  const int64_t now = sim_.now_ps();
  const bool stormed = cfg_.pfc_watchdog && watchdog_scan(now);
  LosslessSnapshot local = local_snapshot(monitor_.owned_nodes());
  local.stormed = stormed ? 1 : 0;
  const LosslessSnapshot snap = monitor_.gather(std::move(local));
  const std::vector<uint64_t> proven = monitor_.judge(snap, now);
  if (!proven.empty()) report_deadlock(snap, proven);
}

bool Network::watchdog_scan(int64_t now) {
  bool stormed = false;
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
    Port& port = ports_[pid];
    if (!is_switch_[port.node] || (pfc_.paused_mask(pid) | pfc_.storm_mask(pid)) == 0) continue;
    if (!monitor_.owns(port.node)) continue;
    // What the watchdog starts (resumed or flushed queues sending, PFC frames) is the switch's
    // own doing: its pushes are keyed as its LP's, as its rank in a partitioned run keys them.
    sim_.as_lp(node_lp(port.node), [&] {
      for (int tc = 0; tc < kTrafficClasses; ++tc) {
        const uint8_t bit = static_cast<uint8_t>(1u << tc);
        const LosslessMonitor::WatchdogStep step = monitor_.watchdog_step(
            (pfc_.storm_mask(pid) & bit) != 0, (pfc_.paused_mask(pid) & bit) != 0,
            port.head[tc] != nullptr, pfc_.last_pfc_rx_ps(pid, tc), pfc_.paused_since_ps(pid, tc),
            pfc_.stuck_since_ps(pid, tc), now);
        if (step == LosslessMonitor::WatchdogStep::kRestore) {
          pfc_.restore(pid, tc);  // restored: PAUSE honoured again
          if (pfc_.paused_until_ps(pid, tc) <= now) resume_queue(pid, tc);
          pfc_.recount_pause(pid, tc, now);  // paused again from now (counted)
        } else if (step == LosslessMonitor::WatchdogStep::kStorm) {
          // Stormed: PAUSE ignored from now, not counted as paused time.
          QueueCounters& qc = queues_[static_cast<size_t>(pid) * kTrafficClasses + tc];
          qc.paused_ps += pfc_.storm(pid, tc, now);
          qc.storms += 1;
          stormed = true;
          if (cfg_.watchdog_drop) {
            // Flush the queue (the frame being sent, if any, finishes).
            flush_queue(pid, tc, DropCause::kWatchdog);
          }
          port_idle(pid);
        }
      }
    });
  }
  return stormed;
}

LosslessSnapshot Network::local_snapshot(const std::vector<uint8_t>* owned_nodes) const {
  LosslessSnapshot s;
  const bool detail = monitor_.detecting();  // the detector still looks
  std::vector<uint32_t> pairs;               // (in_port << 3 | in_tc) of one queue
  std::vector<uint32_t> qps;
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
    const Port& port = ports_[pid];
    if (owned_nodes != nullptr && !(*owned_nodes)[port.node]) continue;
    if (s.blocked == 0 &&
        (pfc_.paused_mask(pid) != 0 || pfc_.storm_mask(pid) != 0 ||
         (!port.transmitting && port.nonempty != 0 && eligible(port, pid) == 0))) {
      s.blocked = 1;
    }
    if (!detail || !is_switch_[port.node]) continue;
    if (const uint8_t xoff = pfc_.xoff_mask(pid); xoff != 0) s.xoff.push_back({pid, xoff});
    if (port.transmitting && !port.in_tx_control) {
      s.in_tx.push_back({pid, port.in_tx_ingress, port.in_tx_in_tc});
    }
    if (port.nonempty == 0) continue;
    const uint8_t blocked =
        is_switch_[port.peer_node] ? port.nonempty & static_cast<uint8_t>(~eligible(port, pid)) : 0;
    for (int tc = 0; tc < kTrafficClasses; ++tc) {
      if (port.head[tc] == nullptr) continue;
      const uint64_t id = static_cast<uint64_t>(pid) * kTrafficClasses + tc;
      pairs.clear();
      for (const Packet* p = port.head[tc]; p != nullptr; p = p->next) {
        pairs.push_back(uint32_t{p->in_port} << 3 | p->in_tc);
      }
      std::sort(pairs.begin(), pairs.end());
      pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
      for (uint32_t k : pairs) s.holds.push_back({id, k >> 3, k & 7});
      if (!(blocked >> tc & 1)) continue;
      s.blocked_queues.push_back({id, queues_[id].tx_packets});
      qps.clear();
      for (const Packet* p = port.head[tc]; p != nullptr; p = p->next) qps.push_back(p->qp);
      std::sort(qps.begin(), qps.end());
      qps.erase(std::unique(qps.begin(), qps.end()), qps.end());
      for (uint32_t qp : qps) s.queued.push_back({id, qp});
    }
  }
  return s;  // sorted: built in (port, class) order
}

void Network::report_deadlock(const LosslessSnapshot& s, const std::vector<uint64_t>& cycle) {
  DeadlockReport& deadlock = monitor_.report();
  const FabricGraph& g = fabric_.graph;
  std::map<uint32_t, std::string> flows;
  for (uint64_t id : cycle) {
    const uint32_t pid = static_cast<uint32_t>(id / kTrafficClasses);
    const int tc = static_cast<int>(id % kTrafficClasses);
    const Port& port = ports_[pid];
    deadlock.cycle.push_back(g[port.node].name + ":" + std::to_string(port.index) + ":" +
                             std::to_string(tc));
    deadlock.links.push_back(g[port.node].name + "->" + g[port.peer_node].name);
    auto it = std::lower_bound(s.queued.begin(), s.queued.end(), LosslessSnapshot::Queued{id, 0});
    for (; it != s.queued.end() && it->queue == id; ++it) {
      const Qp& qp = qps_[it->qp];
      flows.emplace(it->qp, "host " + std::to_string(qp.src_host) + " -> host " +
                                std::to_string(qp.dst_host) + " (qp " + std::to_string(it->qp) +
                                ")");
    }
  }
  for (const auto& [qp, text] : flows) deadlock.flows.push_back(text);
}

}  // namespace fabricsim
