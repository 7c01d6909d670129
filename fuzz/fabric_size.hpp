// What the scenario fuzzers (fuzz_scenario, fuzz_set) leave out: fabrics so large that preparing
// them is slow under the sanitizers although valid (a 400,000-GPU spine-leaf in the flow mode
// takes 25 s under ASan, 1 s in Release; 3,376 GPUs in the packet mode over 10 s). The builders'
// caps on such sizes are pinned by the catalogue (tests/bad_inputs/) instead.
#pragma once

#include <cstdint>

#include "sim/config/scenario.hpp"

namespace fuzzing {

/// Above this many GPUs (an upper bound from the topology keys as loaded), a fuzz input stops
/// after loading. The packet mode's routing tables cost hosts x links: 1,000 GPUs prepare in
/// 1.6 s under ASan, 2,000 in 6.2 s, 3,376 in over 10 s (0.7 s in Release). A training step's
/// DAG costs more: scenarios/architect_512_h100.yaml (512 GPUs, its LL128 buckets streamed in
/// three parts a transfer) prepares in 22 s in the fuzz build (1.4 s in Release). The flow mode
/// builds none: 20,000 GPUs prepare in about 1 s.
inline constexpr int64_t kMaxFuzzedGpus = 500;
inline constexpr int64_t kMaxFuzzedFlowGpus = 20'000;

/// An upper bound of the GPUs the scenario's fabric would have, from its topology keys as
/// loaded, before any builder checks them.
inline int64_t planned_gpus(const fabricsim::Scenario& sc) {
  const fabricsim::TopologyConfig& t = sc.topology;
  if (t.kind == "spine-leaf") return int64_t{t.leaves} * t.hosts_per_leaf;
  if (t.kind == "fat-tree") return int64_t{t.k} * t.k * t.k;  // k pods x (k-1)^2 at most
  if (t.kind == "rail-optimized") {
    return int64_t{t.scalable_units} * t.servers_per_su * t.gpus_per_server;
  }
  int64_t gpus = 1;
  for (const int d : t.dims) gpus *= d;  // torus: at most 3 dimensions of int
  return gpus;
}

/// Whether prepare() runs on the loaded scenario `sc` (see kMaxFuzzedGpus).
inline bool small_enough(const fabricsim::Scenario& sc) {
  return planned_gpus(sc) <= (sc.mode == "flow" ? kMaxFuzzedFlowGpus : kMaxFuzzedGpus);
}

}  // namespace fuzzing
