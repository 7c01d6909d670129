// What the collectives' setup reads of a scenario: their own sections (workload, nccl,
// training), the few link settings NCCL's cost model and the staging through host memory see,
// and where each key was written, for errors at the key. The run library fills it from a
// Scenario (sim/run/scenario_collectives.hpp), so collectives/ needs no part of sim/config.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "collectives/nccl_params.hpp"
#include "collectives/workload_params.hpp"
#include "sim/core/config_error.hpp"

namespace fabricsim {

struct CollectiveInputs {
  const WorkloadConfig& workload;  ///< `workload:`
  const NcclConfig& nccl;          ///< `nccl:`, with the environment applied (nccl_env.hpp)
  const TrainingConfig& training;  ///< `training:`
  int64_t host_rate_bps;           ///< link.host_rate: a NIC's rate
  /// The data rate per direction between a GPU and its server's switch: link.nvlink_rate x
  /// link.nvlink_efficiency (NVSwitch), or the PCIe write data rate (intra_pcie); 0 = none.
  int64_t nvlink_rate_bps;
  bool intra_pcie;          ///< topology.gpu_interconnect pcie: NCCL's intra-node path is PCI
  int64_t pcie_rate_bps;    ///< link.pcie_rate: GPU <-> host memory, per direction
  int64_t pcie_latency_ps;  ///< link.pcie_latency: one crossing of PCIe and host memory
  int nics_per_server;      ///< topology.nics_per_server; 0 = one per GPU
  bool flow_mode;           ///< mode flow (messages as fluid flows) rather than packet
  bool infiniband;          ///< transport infiniband: the switches can run SHARP (CollNet)
  /// link.propagation_delay + switch.latency, picoseconds: one switch and one link, CollNet's
  /// join after the switches' reduction (CollectiveSpec::collnet_join_ps).
  int64_t switch_hop_ps;
  KeyPlaces places;  ///< where the scenario's keys were written
};

}  // namespace fabricsim
