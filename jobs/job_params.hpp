// The `jobs:` section: several jobs sharing one fabric, each with its own GPUs (placed by a
// policy, placement.hpp, or listed), its own collective and NCCL settings, and its own start
// time. jobs/ owns the item; sim/config/scenario.hpp composes it into Scenario::jobs and
// sim/config/params_jobs.cpp reads it; sim/run/jobs.cpp plans and reports it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/nccl_params.hpp"
#include "collectives/workload_params.hpp"

namespace fabricsim {

/// One item of `jobs:`. A job runs one collective of one size `iterations` times back to back
/// (nccl-tests -b = -e = size, -n iterations, one process group), or a training step as many
/// times, on servers of its own.
struct JobConfig {
  std::string name;  ///< `name:`; "" = "job<i>"
  /// The job's collective as a `workload:` section would give it (collective, algorithm,
  /// protocol, datatype, redop, ranks_per_server, root); ngpus is `gpus`, minbytes and maxbytes
  /// are `size`.
  WorkloadConfig workload;
  /// `training:` (a map of the top-level training section's keys): the job runs this training
  /// step `iterations` times instead of a collective (training.enabled); rank r on the r-th GPU
  /// of its servers, as a scenario's own step runs on the fabric's GPUs.
  TrainingConfig training;
  int64_t bytes = 0;     ///< `size:` the collective's size, nccl-tests' size column, bytes
  int gpus = 0;          ///< `gpus:` ranks, >= 2
  int iterations = 1;    ///< `iterations:` the collective back to back on each rank, >= 1
  int64_t start_ps = 0;  ///< `start:` when its ranks launch the first iteration, picoseconds
  /// `placement:` the policy picking its servers among those no earlier job took (placement.hpp:
  /// packed, spread, random); ignored when `servers` is given.
  std::string placement = "packed";
  /// `servers:` the servers it runs on, in rank order (server s holds hosts s x G to s x G +
  /// G - 1 for G GPUs per server); empty = chosen by `placement`.
  std::vector<int> servers;
  /// `seed:` the random placement's seed; 0 = derived from the scenario's seed and the job's
  /// index.
  uint64_t placement_seed = 0;
  /// The NCCL settings it runs with: the scenario's `nccl:` section with the job's own `nccl:`
  /// keys over it (the process environment's NCCL_* variables are applied over both when the
  /// job is planned, as for the scenario's own).
  NcclConfig nccl;
};

}  // namespace fabricsim
