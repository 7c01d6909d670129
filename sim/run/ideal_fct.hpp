// The ideal completion time of a message: alone on the idle fabric, the time FCT slowdown
// divides by (sim/report/fct_slowdown.hpp). The closed form of a lone message in a pipelined
// network (DESIGN.md §5, "one flow on an idle path"):
//   NIC tx latency + its wire bytes (payload + per-packet headers) at the path's slowest link
//   (or nic.qp_rate_limit, if lower) + the path latency of its largest packet (propagation of
//   every hop; per switch its forwarding latency and, store-and-forward, that packet's
//   serialization on the next link: FlowNetwork::path_latency_ps; a shorter last packet waits
//   behind the full one before it at every hop) + NIC rx latency; with
//   nic.dma_read_latency and nic.pcie_rate, the DMA read's latency and the first packet's read
//   and the last packet's write over PCIe. (A PCIe rate below the link's, which caps what the
//   NIC receives, is not in it: a lone flow's slowdown is then above 1.)
// The path is FlowRouter's (valley-free shortest, ECMP by flow id): on the families' symmetric
// fabrics every shortest path has the same rates and delays.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/config/scenario.hpp"
#include "sim/report/report.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

class IdealFct {
 public:
  /// For `fabric` built from `sc`. Throws std::invalid_argument where FlowRouter cannot route
  /// (a rail-only fabric: its paths go through GPUs).
  IdealFct(const Scenario& sc, const Fabric& fabric);
  ~IdealFct();
  /// The ideal FCT of `bytes` (>= 0) from host `src` to host `dst` (!= src) on flow `flow`,
  /// picoseconds (> 0).
  int64_t ps(int src, int dst, uint32_t flow, int64_t bytes) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Sets each finished traffic row's ideal_ps, marks background rows (TrafficFlow::background),
/// and fills rep.slowdown over them. Leaves rep.slowdown empty when the fabric cannot be routed
/// for it or there is no finished traffic flow, and a flow's ideal unset where failed links cut
/// FlowRouter's path (it does not route around them).
void fill_fct_slowdown(const Scenario& sc, const Fabric& fabric, RunReport& rep);

}  // namespace fabricsim
