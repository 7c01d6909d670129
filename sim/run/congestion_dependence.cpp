#include "sim/run/congestion_dependence.hpp"

#include <cstdio>
#include <string>

#include "sim/core/units.hpp"

namespace fabricsim {

std::vector<Dependence> congestion_dependence(const Scenario& sc, const RunReport& rep) {
  std::vector<Dependence> out;
  if (rep.mode != "packet") return out;
  const Counters& k = rep.counters;
  const bool shared = sc.sw.buffer_model == "shared";
  const std::string buffer = shared ? "switch.shared_buffer" : "switch.buffer_per_port";
  char buf[512];
  if (rep.mean_host_paused_fraction >= 0.01) {
    std::snprintf(buf, sizeof buf,
                  "PFC paused the hosts' NIC ports for %.1f %% of the run on average (%lld PAUSE "
                  "frames): the thresholds and buffers decide how long senders wait",
                  100 * rep.mean_host_paused_fraction, static_cast<long long>(k.pfc_pause_tx));
    const bool dynamic = sc.pfc.threshold == "dynamic";
    out.push_back({{dynamic ? "pfc.alpha" : "pfc.xoff", "pfc.xon_offset", buffer}, buf});
  }
  if (sc.dcqcn.enabled && sc.transport == "roce" && rep.queue_pairs > 0 &&
      k.cnp_rx >= rep.queue_pairs) {
    std::snprintf(buf, sizeof buf,
                  "DCQCN cut senders' rates %lld times (CNPs received, %.1f per queue pair) after "
                  "%lld ECN marks: compare with --vary dcqcn.enabled=true,false",
                  static_cast<long long>(k.cnp_rx),
                  static_cast<double>(k.cnp_rx) / static_cast<double>(rep.queue_pairs),
                  static_cast<long long>(k.ecn_marked));
    out.push_back({{"ecn.kmin", "ecn.kmax", "ecn.pmax", "dcqcn.preset"}, buf});
  }
  const bool lossless = sc.transport == "infiniband" || sc.pfc.enabled;
  const bool go_back_n = sc.nic.loss_recovery == "go_back_n";
  // Resends that no loss explains come from reordering: a go-back-N receiver NAKs each gap
  // once, and only a loss or reordering opens one; selective repeat resends with nothing lost
  // only what its reorder threshold took for lost (its timeout also resends packets in flight,
  // so with losses its count does not tell).
  const int64_t losses = k.drops + k.headroom_drops + k.watchdog_drops;
  const bool reordered = go_back_n ? k.nak_tx > losses : losses == 0 && k.retransmits > 0;
  // Packets lost because links went down (topology.link_events) are no buffer's doing.
  const int64_t link_lost = rep.link_events ? rep.link_events->lost_packets : 0;
  const int64_t fabric_drops = k.drops - link_lost;
  if (!lossless && k.retransmits > 0 && !(reordered && losses == 0) &&
      !(link_lost > 0 && fabric_drops == 0)) {
    std::snprintf(buf, sizeof buf,
                  "the lossy fabric dropped %lld packets and %s resent %lld: buffers and "
                  "loss recovery decide the goodput; pfc.enabled makes it lossless",
                  static_cast<long long>(fabric_drops),
                  go_back_n ? "go-back-N" : "selective repeat",
                  static_cast<long long>(k.retransmits));
    out.push_back({{buffer, "pfc.enabled", "nic.rto"}, buf});
  }
  if (link_lost > 0) {
    const QpStallRow& stall = rep.link_events->longest_stall;
    std::snprintf(buf, sizeof buf,
                  "links going down lost %lld packets and %s resent %lld (%lld timeouts); a "
                  "queue pair waited up to %s: how soon routes avoid a dead link and how soon "
                  "a sender resends decide what a failure costs",
                  static_cast<long long>(link_lost), go_back_n ? "go-back-N" : "selective repeat",
                  static_cast<long long>(k.retransmits), static_cast<long long>(k.rto_timeouts),
                  format_time(stall.stall_ps).c_str());
    out.push_back({{"routing.reconvergence_delay", "nic.rto"}, buf});
  }
  // Per-packet, adaptive and flowlet choices reorder a flow's packets; a go-back-N receiver
  // takes only the next expected one, so its NAKs (more than the losses explain) resend what
  // was merely late.
  if (go_back_n && sc.routing.load_balancing != "per_flow" && reordered) {
    std::snprintf(buf, sizeof buf,
                  "routing.load_balancing %s reordered packets: go-back-N receivers sent %lld "
                  "NAKs and senders resent %lld packets (%lld timeouts); NICs built for adaptive "
                  "routing place packets out of order: nic.loss_recovery: selective_repeat",
                  sc.routing.load_balancing.c_str(), static_cast<long long>(k.nak_tx),
                  static_cast<long long>(k.retransmits), static_cast<long long>(k.rto_timeouts));
    out.push_back({{"nic.loss_recovery", "routing.load_balancing"}, buf});
  }
  if (!go_back_n && sc.nic.reorder_threshold > 0 && reordered) {
    std::snprintf(buf, sizeof buf,
                  "selective repeat resent %lld packets though none was lost: packets %d PSNs "
                  "behind the highest acknowledged are deemed lost, and reordering ran deeper; "
                  "nic.reorder_threshold 0 resends only at the timeout",
                  static_cast<long long>(k.retransmits), sc.nic.reorder_threshold);
    out.push_back({{"nic.reorder_threshold", "routing.load_balancing"}, buf});
  }
  return out;
}

}  // namespace fabricsim
