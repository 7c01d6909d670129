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
/// Nothing is added when G <= 1. NVLinks are not network links: Fabric::links, switches and
/// the bisection (its halves keep servers whole when the caller checks `whole_servers_per`)
/// are unchanged.
/// Throws ConfigError: link.nvlink_rate when G > 1 and it is not given; topology.gpus_per_server
/// when G does not divide `whole_servers_per` (the hosts under one leaf, or one pod), named by
/// `unit` ("leaf", "pod") in the message.
void add_servers(const Scenario& scenario, Fabric& fabric, int64_t whole_servers_per,
                 const char* unit);

}  // namespace fabricsim
