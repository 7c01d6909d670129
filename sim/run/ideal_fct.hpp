// The ideal completion time of a message: alone on the idle fabric, the time FCT slowdown
// divides by (sim/report/fct_slowdown.hpp). A lone message is a train of packets through a
// pipeline of links (DESIGN.md §5, "one flow on an idle path"): packet i ends on hop k at
//   F(i, k) = max(F(i-1, k), ready(i, k)) + its serialization on hop k,
// ready = when it has arrived (store-and-forward: F(i, k-1); cut-through into a link no faster:
// its start on hop k-1) + that link's propagation + the switch's latency; on the first hop, the
// NIC's pacing slot under nic.qp_rate_limit. All packets but the last are full, so packet n-1's
// times have a closed form (the first packet's, plus (n-2) x the slowest serialization so far)
// and only the last packet is walked hop by hop: O(hops) a message, exact in integer
// picoseconds for any mix of link rates. Plus the NIC's tx and rx latency and, with
// nic.dma_read_latency and nic.pcie_rate, the DMA read's latency and the first packet's read and
// the last packet's write over PCIe. (A PCIe rate below the link's, which caps what the NIC
// receives, and InfiniBand credits too few for the path's round trip are not in it: a lone
// flow's slowdown is then above 1.)
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
