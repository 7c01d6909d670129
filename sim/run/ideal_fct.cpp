// Ideal FCT (ideal_fct.hpp) and the run's FCT slowdown.
#include "sim/run/ideal_fct.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "sim/core/simulator.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/net/net_config.hpp"

namespace fabricsim {

struct IdealFct::Impl {
  Impl(const Scenario& sc, const Fabric& fabric)
      : cfg(net_config_for(sc)),
        router(fabric, sc.seed),
        net(sim, fabric, router, flow_config_for(cfg)) {}
  NetConfig cfg;
  Simulator sim;  // unused: FlowNetwork's paths and latencies need no events
  FlowRouter router;
  FlowNetwork net;
};

IdealFct::IdealFct(const Scenario& sc, const Fabric& fabric)
    : impl_(std::make_unique<Impl>(sc, fabric)) {}

IdealFct::~IdealFct() = default;

int64_t IdealFct::ps(int src, int dst, uint32_t flow, int64_t bytes) const {
  const Impl& m = *impl_;
  int64_t rate = m.net.path_rate_bps(src, dst, flow);
  if (m.cfg.qp_rate_limit_bps > 0) rate = std::min(rate, m.cfg.qp_rate_limit_bps);
  const int64_t mtu = m.cfg.mtu_bytes;
  const int64_t last = bytes == 0 ? 0 : bytes - (bytes - 1) / mtu * mtu;  // the last packet
  int64_t host_ps = m.cfg.tx_latency_ps + m.cfg.rx_latency_ps + m.cfg.dma_read_latency_ps;
  if (m.cfg.pcie_rate_bps > 0) {  // the first packet's DMA read, the last one's write
    host_ps += serialization_ps(std::min(bytes, mtu), m.cfg.pcie_rate_bps) +
               serialization_ps(last, m.cfg.pcie_rate_bps);
  }
  // Store-and-forward, the train's last packet leaves each switch after its largest packet
  // (a full one, when there are several): a short last packet waits behind it at every hop.
  return host_ps + serialization_ps(m.net.wire_bytes(bytes), rate) +
         m.net.path_latency_ps(src, dst, flow, std::min(bytes, mtu));
}

void fill_fct_slowdown(const Scenario& sc, const Fabric& fabric, RunReport& rep) {
  bool any = false;
  for (const FlowRow& f : rep.flows) any = any || (f.traffic && f.end_ps > f.start_ps);
  if (!any) return;
  std::unique_ptr<IdealFct> ideal;
  try {
    ideal = std::make_unique<IdealFct>(sc, fabric);
  } catch (const std::exception&) {
    return;  // a fabric FlowRouter cannot route: no ideal, no slowdown
  }
  std::vector<SlowdownSample> samples;
  for (FlowRow& f : rep.flows) {
    if (!f.traffic || f.traffic_index < 0) continue;
    const auto i = static_cast<size_t>(f.traffic_index);
    if (i < sc.traffic.size()) f.background = sc.traffic[i].background;
    if (f.end_ps <= f.start_ps || f.src == f.dst) continue;
    try {
      f.ideal_ps = ideal->ps(f.src, f.dst, static_cast<uint32_t>(f.qp), f.bytes);
    } catch (const std::runtime_error&) {
      continue;  // FlowRouter does not route around failed links: no ideal for this flow
    }
    samples.push_back({f.bytes, f.end_ps - f.start_ps, f.ideal_ps});
  }
  rep.slowdown = fct_slowdown(samples);
}

}  // namespace fabricsim
