// One training step of a data-, tensor- and pipeline-parallel model as a TransferDag of compute
// tasks and transfers, and what a replay of it says about the step.
//
// Model (sources):
// - Data parallelism as PyTorch DistributedDataParallel runs it (PyTorch DDP docs, bucket_cap_mb;
//   torch/csrc/distributed/c10d/reducer.{hpp,cpp}): gradients are grouped into buckets in the
//   order they become ready in backward, i.e. reverse layer order; compute_bucket_assignment_
//   by_size adds a tensor to the open bucket and closes the bucket once its size is >= the
//   limit, the first bucket's limit being first_bucket_bytes_cap (kDefaultFirstBucketBytes =
//   1 MiB) and every later one bucket_cap_mb (kDefaultBucketBytesCap = 25 MiB), as the buckets
//   are rebuilt after the first iteration (Reducer::rebuild_buckets), i.e. in every step after
//   the first. A bucket's AllReduce starts once every layer in it has finished its backward
//   pass of the last microbatch; the AllReduces run one after another on one communication
//   stream (bucket b+1's starts on a rank once bucket b's has finished there); the optimizer
//   step runs after the last bucket's AllReduce.
// - Tensor parallelism as Megatron-LM (Shoeybi et al. 2019, "Megatron-LM: Training
//   Multi-Billion Parameter Language Models Using Model Parallelism"): an AllReduce among the
//   tp ranks of a group after each layer's forward and again after its backward; the next
//   compute waits for it.
// - Pipeline parallelism with the GPipe schedule (Huang et al. 2019, "GPipe: Efficient Training
//   of Giant Neural Networks using Pipeline Parallelism"): every microbatch's forward, then
//   every microbatch's backward in reverse microbatch order, no recomputation. 1F1B
//   (PipeDream-Flush, Megatron's default) is NOT modelled: it has the same bubble but
//   interleaves forward and backward passes.
// - Rank layout as Megatron-LM orders its groups: global rank = pp_stage × (dp × tp) +
//   dp_index × tp + tp_index, so a TP group is tp consecutive ranks inside one server.
//
// Not modelled: the optimizer's own communication (ZeRO), gradient accumulation without sync,
// overlap of the TP AllReduce with compute, memory limits, recomputation, and any contention
// between compute and communication for the GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/replay.hpp"
#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// One layer of the model, per microbatch, on ONE GPU after the tensor-parallel split.
struct LayerSpec {
  std::string name;
  int64_t fwd_ps = 0;       ///< forward compute of one microbatch, >= 0
  int64_t bwd_ps = 0;       ///< backward compute of one microbatch, >= 0
  int64_t param_bytes = 0;  ///< this layer's gradient bytes on one GPU, >= 0 (0: not bucketed)
  /// Bytes of the tensor-parallel AllReduce after this layer's forward, and again after its
  /// backward, per microbatch (Megatron-style); 0 = none. Used only when tp > 1.
  int64_t tp_comm_bytes = 0;
  /// Bytes a pipeline stage boundary after this layer sends per microbatch (activations
  /// forward, their gradients backward); used only when this layer ends a stage.
  int64_t activation_bytes = 0;
};

/// How the step is parallelized.
struct ParallelSpec {
  int dp = 1;            ///< data-parallel replicas, >= 1
  int tp = 1;            ///< tensor-parallel ranks per group, >= 1, inside one server
  int pp = 1;            ///< pipeline stages, >= 1, <= number of layers
  int microbatches = 1;  ///< per step and replica, >= 1
  /// DDP bucket_cap_mb in bytes (default 25 MiB), >= 1.
  int64_t bucket_cap_bytes = int64_t{25} << 20;
  /// DDP's limit for the first bucket (the last layers' gradients), first_bucket_bytes_cap in
  /// reducer.hpp (default 1 MiB), >= 1. Set it to bucket_cap_bytes for one limit throughout.
  int64_t first_bucket_cap_bytes = int64_t{1} << 20;
  int64_t optimizer_ps = 0;  ///< optimizer step on every rank, after its gradients, >= 0
  int gpus_per_server = 8;   ///< >= 1; tp must divide it
};

/// Builds the AllReduce of `bytes` among local ranks 0..ranks−1 (ranks >= 2) as a DAG of
/// transfers (e.g. NCCL's plan: build_collective with plan_size, or ring_allreduce);
/// `ranks_per_server` of the group's members share a server (local ranks numbered server by
/// server: a TP group is all in one, a DP group has G/tp per server). Its flow ids must be
/// below kFlowsPerCollective.
using GroupCollective = std::function<TransferDag(int ranks, int ranks_per_server, int64_t bytes)>;

/// Flow ids per communicator: the collectives of one group of ranks (a TP group, a DP group)
/// and the transfers of one pipeline pair take flow base + their own flow, the base k ×
/// kFlowsPerCollective of the k-th group met, so each group keeps its queue pairs (and ECMP
/// paths, congestion state) across its collectives, as NCCL reuses a communicator's
/// connections.
inline constexpr uint32_t kFlowsPerCollective = 64;

/// One DDP gradient bucket of one pipeline stage.
struct Bucket {
  int stage = 0;
  int first_layer = 0;  ///< the bucket holds layers [first_layer, last_layer] (global indices)
  int last_layer = 0;   ///< of which the last one's gradient is ready first
  int64_t bytes = 0;    ///< sum of the layers' param_bytes
  /// Ids [first_id, end_id) of every task this bucket's AllReduces added to the DAG, for all
  /// of the stage's tp groups: launch points, transfers and joins (none when dp == 1).
  uint32_t first_id = 0, end_id = 0;
};

/// One step as a DAG. Every rank's last task is its optimizer compute task; the step ends
/// when the last of them completes.
struct StepPlan {
  TransferDag dag;
  int ranks = 0;  ///< dp × tp × pp
  /// Every stage's buckets, stage by stage, each stage's in the order they are reduced.
  std::vector<Bucket> buckets;
  /// Pure compute on each rank, ps: the sum of its compute task durations (forward, backward,
  /// optimizer; joins and launch points take 0).
  std::vector<int64_t> compute_ps_per_rank;
  /// Global rank of (pipeline stage, data-parallel index, tensor-parallel index).
  int rank_of(int stage, int dp_index, int tp_index) const {
    return stage * dp * tp + dp_index * tp + tp_index;
  }
  int dp = 1, tp = 1, pp = 1;
};

/// Builds one training step (see the file comment for the model). Per rank, compute runs in
/// program order on one compute stream (a chain of compute tasks); each collective is
/// `allreduce`'s DAG spliced in: its local rank i mapped to the group's i-th global rank, its
/// dependencies and delays kept; a 0-duration launch task per member rank gates every
/// transfer that member sends or receives (a rank takes part once it has launched the
/// collective), and a 0-duration join task per member completes when every transfer it
/// receives (if none, sends) has. Pipeline activations (and their gradients backward) go from
/// each rank of stage s to the rank with the same (dp, tp) index in stage s ± 1, with the
/// stage's last layer's activation_bytes (no transfer, only the dependency, when 0).
/// Layers are cut into pp contiguous stages; with L layers the first L mod pp stages get one
/// more than the others (⌊L/pp⌋).
/// Throws std::invalid_argument for no layers, dp/tp/pp/microbatches/gpus_per_server < 1,
/// pp > layers, a bucket cap < 1, a negative time or size, tp > gpus_per_server or tp not
/// dividing gpus_per_server (a TP group must fit in a server), an empty `allreduce` when a
/// collective is needed, or a sub-DAG naming ranks outside the group or flows >=
/// kFlowsPerCollective.
StepPlan build_training_step(const std::vector<LayerSpec>& layers, const ParallelSpec& spec,
                             const GroupCollective& allreduce);

/// What one replayed step took. Every time is in picoseconds.
struct StepResult {
  int64_t step_ps = 0;     ///< replayer finish − start
  int64_t compute_ps = 0;  ///< max over ranks of pure compute (compute_ps_per_rank)
  int critical_rank = 0;   ///< rank of the task that completed last (ties: the highest id)
  /// step_ps − compute_ps_per_rank[critical_rank]: the part of the last rank's step spent not
  /// computing (waiting for communication, or for other ranks through it).
  int64_t exposed_comm_ps = 0;
  double gpu_utilization = 0;  ///< mean over ranks of compute_ps_per_rank / step_ps
  /// The critical path, walked back from the task that completed last, through at each task
  /// the dependency met last (the one that made it ready: completed, or posted for a buffer
  /// slot it waited for, TransferDag::depends_on_post, whose network time is then not on the
  /// path): its time split into compute (compute tasks' durations), software (transfers'
  /// delay_ps, between ready and posted) and network (transfers' posted → completed). compute +
  /// software + network == step_ps exactly.
  struct {
    int64_t compute_ps = 0, software_ps = 0, network_ps = 0;
  } critical_path;
  std::vector<uint32_t> critical_path_ids;  ///< the path's tasks, first to last
};

/// Analyses a replay of plan.dag. Throws std::invalid_argument if the replayer has not run
/// the whole DAG (or ran a DAG of another size).
StepResult analyze_step(const StepPlan& plan, const DagReplayer& replayer);

}  // namespace fabricsim
