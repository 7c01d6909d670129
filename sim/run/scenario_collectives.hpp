// The collectives' setup called with a whole Scenario: the parts of it that collectives/ reads
// (CollectiveInputs, collectives/collective_inputs.hpp), taken here, where the run library
// knows both, so that collectives/ depends on no part of sim/config.
#pragma once

#include "collectives/collective_inputs.hpp"
#include "collectives/nccl_env.hpp"
#include "collectives/nccl_setup.hpp"
#include "collectives/training_summary.hpp"
#include "sim/config/scenario.hpp"

namespace fabricsim {

/// The parts of `sc` the collectives read; it refers to `sc`, which must outlive it.
inline CollectiveInputs collective_inputs(const Scenario& sc) {
  return CollectiveInputs{sc.workload,
                          sc.nccl,
                          sc.training,
                          sc.link.host_rate_bps,
                          sc.topology.gpu_interconnect == "pcie" ? pcie_write_data_rate_bps(sc.pcie)
                                                                 : sc.link.nvlink_data_rate_bps(),
                          sc.topology.gpu_interconnect == "pcie",
                          sc.link.pcie_rate_bps,
                          sc.link.pcie_latency_ps,
                          sc.topology.nics_per_server,
                          sc.mode == "flow",
                          sc.transport == "infiniband",
                          sc.link.propagation_delay_ps + sc.sw.latency_ps,
                          KeyPlaces{sc.path, sc.origins, sc.written_as}};
}

/// apply_nccl_environment (collectives/nccl_env.hpp) over the scenario's nccl section and origins.
inline void apply_nccl_environment(Scenario& sc) {
  apply_nccl_environment(sc.nccl, sc.origins);
}

/// nccl_setup (collectives/nccl_setup.hpp) of the scenario's workload on `fabric`.
inline NcclRunSetup nccl_setup(const Scenario& sc, const Fabric& fabric) {
  return nccl_setup(collective_inputs(sc), fabric);
}

/// training_plan (collectives/nccl_setup.hpp) of the scenario's training step on `fabric`.
inline StepPlan training_plan(const Scenario& sc, const Fabric& fabric, const NcclRunSetup& base) {
  return training_plan(collective_inputs(sc), fabric, base);
}

/// training_summary (collectives/training_summary.hpp) of the scenario's training step.
inline TrainingSummary training_summary(const Scenario& sc, const Fabric& fabric,
                                        const StepPlan& plan, const DagReplayer& replayer,
                                        const Network& net) {
  return training_summary(collective_inputs(sc), fabric, plan, replayer, net);
}

}  // namespace fabricsim
