#include "sim/run/run_limits.hpp"

#include <cstdint>
#include <string>

#include "calibration/net_transport.hpp"
#include "servers/pcie.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

std::vector<Limit> run_limits(const Scenario& sc, const Prepared& prepared) {
  std::vector<Limit> out;
  if (prepared.measured) {
    const NetTransport t = classify_net_transport(*prepared.measured);
    if (t.support == NetTransportSupport::kNotModelled) {
      const std::string where =
          t.line > 0 ? " (line " + std::to_string(t.line) + ": `" + t.evidence + "`)" : "";
      out.push_back({"the measured log's network transport, " + t.name,
                     "measured.nccl_tests " + sc.measured_nccl_tests + " ran on it" + where +
                         "; fabricsim models NET/IB (InfiniBand, RoCE) and NET/Socket, so the "
                         "comparison is not a prediction of that hardware"});
    }
  }
  // A rail-optimized server's NICs hang off its GPUs (rail_optimized.hpp): with m NICs per GPU
  // the GPU sends at m x host_rate, and no PCIe link sits in that path (link.pcie_rate only
  // times the staging copies of GPUDirect-RDMA-off and socket runs).
  const TopologyConfig& topo = sc.topology;
  const int g = topo.gpus_per_server;
  const bool nics_carry =
      sc.has_workload ? prepared.nccl.layout.servers() > 1 : !sc.traffic.empty();
  if (prepared.fabric.kind == "rail-optimized" && g > 0 && topo.nics_per_server > g && nics_carry) {
    const int m = topo.nics_per_server / g;
    const int64_t nics_bps = m * sc.link.host_rate_bps;
    if (nics_bps > sc.link.pcie_rate_bps) {
      out.push_back({"the PCIe link between each GPU and its NICs",
                     "topology.nics_per_server " + std::to_string(topo.nics_per_server) +
                         " gives each of a server's " + std::to_string(g) + " GPUs " +
                         std::to_string(m) + " NICs, " + format_rate(nics_bps) +
                         " together, more than link.pcie_rate (" +
                         format_rate(sc.link.pcie_rate_bps) +
                         "); no PCIe link is in the GPU's path, so it sends at the NICs' rate"});
    }
  }
  // GPUs peer to peer over PCIe: one switch per server (topologies/servers.hpp).
  if (sc.topology.gpu_interconnect == "pcie" && g > 1 && sc.has_workload &&
      prepared.nccl.layout.gpus_per_server > 1) {
    out.push_back({"the PCIe tree beyond one switch per server",
                   "topology.gpu_interconnect pcie joins each server's GPUs through one PCIe "
                   "switch at " +
                       format_rate(pcie_write_data_rate_bps(sc.pcie)) +
                       " a GPU; a root complex, a CPU socket link or ACS redirection that a real "
                       "server's peer-to-peer traffic may cross is not modelled, nor the GPU's "
                       "PCIe link toward its NIC (the pcie section sets the GPU-to-GPU links)"});
  }
  if (sc.has_workload) {
    for (const auto& [what, why] : prepared.nccl.limits) out.push_back({what, why});
  }
  if (sc.mode == "flow") {
    out.push_back({sc.nic.congestion_control == "timely"
                       ? "queues, PFC, ECN/DCQCN, TIMELY's RTTs, drops and retransmissions"
                   : sc.nic.congestion_control == "hpcc"
                       ? "queues, PFC, ECN/DCQCN, HPCC's in-band telemetry, drops and "
                         "retransmissions"
                       : "queues, PFC, ECN/DCQCN, drops and retransmissions",
                   "mode: flow shares each link max-min fairly between the flows crossing it; "
                   "mode: packet models them"});
    if (sc.routing.load_balancing != "per_flow") {
      out.push_back({"routing.load_balancing: " + sc.routing.load_balancing +
                         " (the choice among equal-cost ports per packet or per flowlet)",
                     "mode: flow routes each flow on one path, by its ECMP hash (per_flow); "
                     "mode: packet models the choice"});
    }
  }
  return out;
}

}  // namespace fabricsim
