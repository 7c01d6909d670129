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
  const std::vector<FlowNetwork::Hop> hops = m.net.path_hops(src, dst, flow);
  const size_t h = hops.size();
  const int64_t mtu = m.cfg.mtu_bytes;
  const int64_t packets = bytes <= mtu ? 1 : (bytes + mtu - 1) / mtu;
  const int64_t last = bytes - (packets - 1) * mtu;               // the last packet's payload
  const int64_t w = m.cfg.wire.wire_bytes(std::min(bytes, mtu));  // a full packet, on the wire
  const int64_t l = m.cfg.wire.wire_bytes(last);
  const int64_t limit = m.cfg.qp_rate_limit_bps;
  // Before hop k > 0: the previous link's propagation and the switch's latency. Cut-through
  // starts a packet on hop k as it starts arriving, unless the egress is faster (then stored).
  const auto gap = [&](size_t k) { return hops[k - 1].propagation_ps + m.cfg.switch_latency_ps; };
  const auto cut = [&](size_t k) {
    return m.cfg.cut_through && hops[k].rate_bps <= hops[k - 1].rate_bps;
  };
  // Packets 1 .. n-1 (all full): packet i leaves hop k at c_k + (i - 1) x spacing_k, c_k the
  // first packet's time, spacing_k the slowest serialization up to hop k (or the QP's pacing).
  std::vector<int64_t> before(h, 0);  // packet n-1's end on each hop
  if (packets >= 2) {
    int64_t c = 0, spacing = limit > 0 ? serialization_ps(w, limit) : 0;
    for (size_t k = 0; k < h; ++k) {
      const int64_t s = serialization_ps(w, hops[k].rate_bps);
      c = k == 0 ? s : (cut(k) ? c - serialization_ps(w, hops[k - 1].rate_bps) : c) + gap(k) + s;
      spacing = std::max(spacing, s);
      before[k] = c + (packets - 2) * spacing;
    }
  }
  // The last packet: it leaves the NIC after packet n-1 (and its pacing slot), and each hop
  // once that hop is free and it has arrived (max-plus recurrence of a store-and-forward or
  // cut-through pipeline).
  int64_t end = 0;
  for (size_t k = 0; k < h; ++k) {
    const int64_t s = serialization_ps(l, hops[k].rate_bps);
    int64_t ready;
    if (k == 0) {
      ready = limit > 0 ? (packets - 1) * serialization_ps(w, limit) : 0;
    } else {
      ready = (cut(k) ? end - serialization_ps(l, hops[k - 1].rate_bps) : end) + gap(k);
    }
    end = std::max(packets >= 2 ? before[k] : 0, ready) + s;
  }
  if (h > 0) end += hops[h - 1].propagation_ps;
  int64_t host_ps = m.cfg.tx_latency_ps + m.cfg.rx_latency_ps + m.cfg.dma_read_latency_ps;
  if (m.cfg.pcie_rate_bps > 0) {  // the first packet's DMA read, the last one's write
    host_ps += serialization_ps(std::min(bytes, mtu), m.cfg.pcie_rate_bps) +
               serialization_ps(last, m.cfg.pcie_rate_bps);
  }
  return host_ps + end;
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
