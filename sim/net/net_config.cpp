// NetConfig from a scenario: the devices' parameters the network is built with.
#include "sim/net/net_config.hpp"

#include <cmath>

namespace fabricsim {

std::string congestion_control_in_effect(const Scenario& sc) {
  if (sc.dcqcn.enabled && sc.transport == "roce") return "dcqcn";
  const std::string& name = sc.nic.congestion_control;
  return name == "auto" || name == "dcqcn" ? "none" : name;
}

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
  nc.scheduler = sc.sw.scheduler;
  for (size_t i = 0; i < nc.dwrr_weights.size() && i < sc.sw.dwrr_weights.size(); ++i) {
    nc.dwrr_weights[i] = sc.sw.dwrr_weights[i];
  }
  nc.traffic_class = sc.nic.traffic_class;
  nc.ack_interval = sc.nic.ack_interval;
  nc.selective_repeat = sc.nic.loss_recovery == "selective_repeat";
  nc.reorder_threshold = sc.nic.reorder_threshold;
  nc.rto_ps = sc.nic.rto_ps;
  nc.qp_rate_limit_bps = sc.nic.qp_rate_limit_bps;
  nc.message_interval_ps =
      sc.nic.message_rate > 0 ? std::llround(1e12 / sc.nic.message_rate) : int64_t{0};
  nc.tx_latency_ps = sc.nic.tx_latency_ps;
  nc.rx_latency_ps = sc.nic.rx_latency_ps;
  nc.dma_read_latency_ps = sc.nic.dma_read_latency_ps;
  nc.pcie_rate_bps = sc.nic.pcie_rate_bps;
  nc.seed = sc.seed;
  nc.lb.kind = load_balancer_kind(sc.routing.load_balancing);
  nc.lb.flowlet_gap_ps = sc.routing.flowlet_gap_ps;
  nc.lb.threshold_bytes = sc.routing.ar_threshold_bytes;
  nc.per_packet_spraying = nc.lb.kind == LbKind::kPerPacket;
  nc.dateline_class = sc.routing.dateline_class;
  nc.bounce_class = sc.routing.bounce_class;
  nc.ecn = sc.ecn.enabled;
  nc.red = RedEcn{sc.ecn.kmin_bytes, sc.ecn.kmax_bytes, sc.ecn.pmax};
  nc.ecn_at_dequeue = sc.ecn.mark_at == "dequeue";
  const auto pfc_settings = [&](const PfcConfig& c) {
    PfcSwitchSettings s;
    s.enabled = c.enabled && sc.transport == "roce";
    s.lossless_mask = pfc_lossless_mask(c, sc.nic.traffic_class);
    s.dynamic = c.threshold == "dynamic";
    s.xoff_bytes = c.xoff_bytes;
    s.alpha = c.alpha;
    s.xon_offset_bytes = c.xon_offset_bytes;
    s.headroom_bytes = c.headroom_bytes;
    s.response_ps = c.response_time_ps;
    s.pause_quanta = c.pause_quanta;
    return s;
  };
  nc.pfc = pfc_settings(sc.pfc);
  for (const auto& [name, o] : sc.switches) {
    nc.pfc_overrides[name] = pfc_settings(o.pfc);
    nc.ecn_overrides[name] = NetConfig::EcnOverride{
        o.ecn.enabled, RedEcn{o.ecn.kmin_bytes, o.ecn.kmax_bytes, o.ecn.pmax},
        o.ecn.mark_at == "dequeue"};
  }
  nc.pfc_watchdog = sc.pfc.enabled && sc.pfc.watchdog;
  nc.watchdog_drop = sc.pfc.watchdog_action == "drop";
  nc.watchdog_detection_ps = sc.pfc.watchdog_detection_time_ps;
  nc.watchdog_restoration_ps = sc.pfc.watchdog_restoration_time_ps;
  nc.deadlock_check_ps = sc.pfc.deadlock_check_interval_ps;
  nc.credits = sc.transport == "infiniband";
  nc.vl_buffer_bytes = sc.infiniband.vl_buffer_bytes;
  // dcqcn.enabled (which nic.congestion_control: dcqcn sets) selects DCQCN on RoCE; a
  // registered control runs on either transport.
  nc.cc.dcqcn = sc.dcqcn;
  nc.cc.timely = sc.timely;
  nc.cc.hpcc = sc.hpcc;
  if (sc.dcqcn.enabled && sc.transport == "roce") {
    nc.cc.kind = CcKind::kDcqcn;
  } else if (sc.nic.congestion_control == "timely") {
    nc.cc.kind = CcKind::kTimely;
  } else if (sc.nic.congestion_control == "hpcc") {
    nc.cc.kind = CcKind::kHpcc;
  } else if (const std::string& name = sc.nic.congestion_control;
             name != "auto" && name != "none" && name != "dcqcn" && name != "timely" &&
             name != "hpcc") {
    nc.cc.registered = find_congestion_control(name);
    if (nc.cc.registered == nullptr) {
      throw std::invalid_argument("unknown congestion control '" + name + "'");
    }
    nc.cc.kind = CcKind::kRegistered;
  }
  return nc;
}

}  // namespace fabricsim
