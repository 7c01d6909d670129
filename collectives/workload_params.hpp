// The collectives' scenario sections: the `workload:` sweep of one collective and the
// `training:` step. The collectives own them (nccl_setup.hpp plans them); sim/config/scenario.hpp
// composes them into Scenario::workload and Scenario::training, and the tables of their keys are
// sim/config/params_workload.cpp's and params_training.cpp's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricsim {

/// `workload:` section: an nccl-tests style size sweep of one collective (nccl-tests' flags:
/// -b minbytes, -e maxbytes, -f stepfactor, -o op, -d datatype, -r root; the collective as the
/// binary's name without _perf).
struct WorkloadConfig {
  std::string collective = "all_reduce";  ///< all_reduce, all_gather, reduce_scatter, broadcast,
                                          ///< reduce, alltoall, sendrecv
  std::string algorithm = "auto";  ///< auto (NCCL's cost model) | ring | tree | halving_doubling
                                   ///< | p2p (alltoall, sendrecv)
  std::string protocol = "auto";   ///< auto (NCCL's cost model) | ll | ll128 | simple
  std::string datatype = "float";  ///< nccl-tests type names: float, half, double, int8 …
  std::string redop = "sum";       ///< sum | prod | min | max | avg (`op`, or `redop`)
  int64_t minbytes = 0;            ///< first size of the sweep, bytes (-b); 1B … maxbytes
  int64_t maxbytes = 0;            ///< last size of the sweep, bytes (-e); at most 64GiB
  int64_t stepfactor = 2;          ///< multiplicative step between sizes (-f); >= 2
  int ngpus = 0;                   ///< ranks taking part: the first ngpus GPUs; 0 = every GPU
  /// Ranks placed on each server (mpirun -npernode, srun --ntasks-per-node): rank r runs on
  /// GPU r mod R of server r / R. 0 = all the server's GPUs. 1 reproduces an "N x 1" job.
  int ranks_per_server = 0;
  int root = 0;  ///< broadcast and reduce root rank (-r)
};

/// One entry of `training.layers` (`count` identical layers), per microbatch on one GPU after
/// the tensor-parallel split. Times are resolved at load: given (fwd_time, bwd_time) or from
/// FLOPs (fwd_flops, bwd_flops) / (training.gpu_peak_flops × training.efficiency); bwd
/// defaults to 2 × fwd (the usual backward = 2 × forward FLOPs rule).
struct TrainingLayer {
  std::string name;
  int count = 1;
  int64_t fwd_ps = 0, bwd_ps = 0;
  int64_t param_bytes = 0;       ///< gradient bytes per GPU (DDP buckets)
  int64_t tp_comm_bytes = 0;     ///< TP AllReduce after forward and after backward
  int64_t activation_bytes = 0;  ///< sent at a pipeline stage boundary after this layer
};

/// `training:` one training step of a data/tensor/pipeline-parallel model (collectives/
/// step_model.hpp): DDP gradient buckets overlapping the backward pass.
struct TrainingConfig {
  bool enabled = false;
  int dp = 0;  ///< data-parallel replicas; 0 = the fabric's GPUs / (tp × pp)
  int tp = 1, pp = 1, microbatches = 1;
  int64_t bucket_cap_bytes = int64_t{25} << 20;       ///< DDP bucket_cap_mb (25 MiB)
  int64_t first_bucket_cap_bytes = int64_t{1} << 20;  ///< DDP first_bucket_bytes_cap (1 MiB)
  int64_t optimizer_ps = 0;
  double gpu_peak_flops = 0;  ///< FLOP/s, for layers given in FLOPs
  double efficiency = 0;      ///< fraction of peak those layers reach, (0, 1]
  std::vector<TrainingLayer> layers;
};

/// An nccl-tests datatype (its -d names) and the bytes of one element.
struct NcclDatatype {
  std::string_view name;
  int bytes;
};
/// The datatypes nccl-tests takes, under the names fabricsim writes (workload.datatype's
/// values, in this order).
inline constexpr NcclDatatype kNcclDatatypes[] = {
    {"int8", 1},   {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8},
    {"uint64", 8}, {"half", 2},  {"float", 4}, {"double", 8}, {"bfloat16", 2},
};
/// The other names nccl-tests also accepts: alias -> the name above.
inline constexpr std::pair<std::string_view, std::string_view> kNcclDatatypeAliases[] = {
    {"char", "int8"},     {"int", "int32"},      {"float16", "half"},
    {"float32", "float"}, {"float64", "double"},
};

/// Bytes per element of an nccl-tests datatype name (kNcclDatatypes or an alias); 0 if unknown.
inline int datatype_bytes(const std::string& datatype) {
  std::string_view name = datatype;
  for (const auto& [alias, canonical] : kNcclDatatypeAliases) {
    if (alias == name) name = canonical;
  }
  for (const NcclDatatype& t : kNcclDatatypes) {
    if (t.name == name) return t.bytes;
  }
  return 0;
}

}  // namespace fabricsim
