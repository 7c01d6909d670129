// Multi-GPU servers on fabrics whose hosts are one GPU each (spine-leaf, fat-tree): consecutive
// hosts grouped into servers joined by an NVSwitch, every GPU keeping its own NIC.
#pragma once

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// Groups `fabric.hosts` into servers of G = topology.gpus_per_server consecutive hosts (host
/// i is GPU i mod G of server i / G) and gives each server an NVSwitch ("nvswitchS", tier 1,
/// added after every other vertex) with one NVLink (link.nvlink_rate per direction, no
/// propagation delay) to each of its GPUs; sets NodeProps::server and ::rail (the GPU's local
/// index) and Fabric::gpus_per_server. A GPU's network port stays its first port. Routing sends
/// traffic between GPUs of one server over the NVLink only (routing.hpp), as NCCL does.
/// Nothing is added when G <= 1. NVLinks are not network links: Fabric::links and ::switches
/// are unchanged. The bisection is unchanged too when its halves (hosts by number) keep
/// servers whole, as with an even number of leaves or pods; with an odd number a server may
/// straddle the halves and the builders' max-flow (host_halves_max_flow_bps) then counts its
/// NVLinks like any link, as the rail-optimized builder does: e.g. a 3:1 k = 4 fat-tree of 3
/// pods has 1.2 Tb/s (3 × 400G) with 1-GPU hosts and 2.0 Tb/s with 2-GPU servers.
/// With topology.gpu_interconnect: pcie the servers' GPUs have no NVLink: the switch is a PCIe
/// switch ("pcieS", Role::kPcieSwitch) and each GPU's link to it (EdgeProps::nvlink and ::pcie
/// set) runs at the pcie section's write data rate (servers/pcie.hpp): GPU peer-to-peer as
/// NCCL's P2P transport does it between GPUs under one PCIe switch. One switch per server: root
/// complexes, a server's CPU sockets and ACS redirection are not modelled.
/// Throws ConfigError: link.nvlink_rate when G > 1 and it is not given (nvswitch);
/// topology.gpus_per_server when G does not divide `whole_servers_per` (the hosts under one leaf,
/// or one pod), named by `unit` ("leaf", "pod") in the message.
void add_servers(const Scenario& scenario, Fabric& fabric, int64_t whole_servers_per,
                 const char* unit);

}  // namespace fabricsim
