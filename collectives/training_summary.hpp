// A training step's result and its critical path, split into compute, NCCL software latency,
// bytes at link rate, PFC pauses of the sending NIC, and sharing links and queueing
// (results.json `training`).
#pragma once

#include "collectives/collective_inputs.hpp"
#include "collectives/replay.hpp"
#include "collectives/step_model.hpp"
#include "sim/net/network.hpp"
#include "sim/report/report.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// The step `plan` as `replayer` ran it on `net` (rank r on host r): step time, exposed
/// communication and GPU utilization (analyze_step), and the critical path's network time split
/// into link time (its bytes at the NVLink or host rate, at most the time it took), the sending
/// NIC's PFC pauses meanwhile, and the rest (sharing links and queueing); times in picoseconds.
TrainingSummary training_summary(const CollectiveInputs& in, const Fabric& fabric,
                                 const StepPlan& plan, const DagReplayer& replayer,
                                 const Network& net);

}  // namespace fabricsim
