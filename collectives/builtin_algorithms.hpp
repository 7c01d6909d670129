// The built-in algorithms' hooks (algorithm_registry.hpp), defined next to the code they share:
// the DAG builders and transfer counts in plan.cpp (NVLS's in nvls.cpp, NVLSTree's and PAT's in
// their folders), the flow builders in flow_plan.cpp.
// Internal to the collectives library.
#pragma once

#include <cstdint>

#include "collectives/flow_plan.hpp"
#include "collectives/plan.hpp"
#include "collectives/transfer_dag.hpp"

namespace fabricsim::builtin {

TransferDag ring_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                     int elem_bytes);
TransferDag tree_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                     int elem_bytes);
TransferDag halving_doubling_dag(const RankLayout& layout, const CollectiveSpec& spec,
                                 int64_t buffer_count, int elem_bytes);
TransferDag p2p_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                    int elem_bytes);
/// NVLS (nvls.cpp): one server, the whole buffer in one DAG (spec.channels is not used).
TransferDag nvls_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                     int elem_bytes);
/// NVLSTree (nvls_tree/nvls_tree.cpp): whole NVSwitch servers, the whole buffer in one DAG.
TransferDag nvls_tree_dag(const RankLayout& layout, const CollectiveSpec& spec,
                          int64_t buffer_count, int elem_bytes);
/// CollNetChain and CollNetDirect (collnet/collnet.cpp): AllReduce, whole servers; Chain cuts
/// the buffer over spec.channels, Direct into one slice a GPU (its channels are its window).
TransferDag collnet_chain_dag(const RankLayout& layout, const CollectiveSpec& spec,
                              int64_t buffer_count, int elem_bytes);
TransferDag collnet_direct_dag(const RankLayout& layout, const CollectiveSpec& spec,
                               int64_t buffer_count, int elem_bytes);
/// PAT (pat/pat.cpp): AllGather and ReduceScatter, one rank a server.
TransferDag pat_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                    int elem_bytes);

int64_t ring_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                       int elem_bytes);
int64_t tree_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                       int elem_bytes);
int64_t halving_doubling_transfers(const RankLayout& layout, const CollectiveSpec& spec,
                                   int64_t bytes, int elem_bytes);
int64_t p2p_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                      int elem_bytes);
int64_t nvls_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                       int elem_bytes);
int64_t nvls_tree_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                                int elem_bytes);
int64_t collnet_chain_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec,
                                    int64_t bytes, int elem_bytes);
int64_t collnet_direct_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec,
                                     int64_t bytes, int elem_bytes);
int64_t pat_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                          int elem_bytes);

/// Ring and tree flows (one builder: they share the per-channel join).
TransferDag nccl_flows(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                       int elem_bytes, const HopLatency& hop_latency);
TransferDag p2p_flows(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                      int elem_bytes, const HopLatency& hop_latency);

int64_t ring_flows(const RankLayout& layout, const CollectiveSpec& spec);
int64_t tree_flows(const RankLayout& layout, const CollectiveSpec& spec);
int64_t p2p_flow_count(const RankLayout& layout, const CollectiveSpec& spec);

}  // namespace fabricsim::builtin
