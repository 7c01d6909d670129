// The NCCL setup model: a scenario's workload on its fabric as NCCL would set it up (ranks and
// servers, settings, channels, the cost model's view of the links), and its training step
// planned with NCCL's choices for each group's collectives.
#pragma once

#include <string>

#include "collectives/collective_inputs.hpp"
#include "collectives/nccl_plan.hpp"
#include "collectives/step_model.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// An AllReduce among `ranks` GPUs, `per_server` of them in each server, with the run's NCCL
/// settings, latencies and channels (NCCL's cost model sees that group).
NcclRunSetup group_setup(const CollectiveInputs& in, const NcclRunSetup& base, int ranks,
                         int per_server);

/// The scenario's training step on this fabric (collectives/step_model.hpp): rank r on GPU r,
/// dp defaulting to every GPU / (tp × pp), the DDP buckets' and TP groups' AllReduces planned
/// as NCCL would for their groups (float gradients). Throws ConfigError (exit 2) at the
/// training key for a step the fabric cannot hold or the model refuses.
StepPlan training_plan(const CollectiveInputs& in, const Fabric& fabric, const NcclRunSetup& base);
/// The same on `hosts` GPUs, `gpus_per_server` a server (rank r on the r-th): a job's share of
/// a fabric (sim/run/jobs.hpp); `whose` names them in errors ("the fabric", "job dp").
StepPlan training_plan(const CollectiveInputs& in, int hosts, int gpus_per_server,
                       const NcclRunSetup& base, const std::string& whose);

/// The workload's collective setup on this fabric: ranks and servers, NCCL's settings and
/// channels, the cost model's view of the links. Throws ConfigError (exit 2) for a workload the
/// fabric or the algorithms cannot run.
NcclRunSetup nccl_setup(const CollectiveInputs& in, const Fabric& fabric);

}  // namespace fabricsim
