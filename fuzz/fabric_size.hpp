// What the scenario fuzzers (fuzz_scenario, fuzz_set) leave out: fabrics so large that building
// them is slow under the sanitizers although valid (a 400,000-GPU spine-leaf in the flow mode
// takes 25 s under ASan, 1 s in Release). The builders' caps on such sizes are pinned by the
// catalogue (tests/bad_inputs/) instead.
#pragma once

#include <cstdint>

#include "sim/config/scenario.hpp"

namespace fuzzing {

/// Above this many GPUs (an upper bound from the topology keys as loaded), a fuzz input stops
/// after loading: 20,000 GPUs prepare in about 1 s under ASan.
inline constexpr int64_t kMaxFuzzedGpus = 20'000;

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

}  // namespace fuzzing
