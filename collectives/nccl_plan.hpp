// From a workload and NCCL's settings to the collective of each size: which algorithm and
// protocol NCCL would pick (its cost model, nccl_model.hpp), with how many channels, in what
// chunks, and the DAG that fabricsim replays (plan.hpp).
//
// Sources: NCCL 2.19/2.20 src/enqueue.cc computeCollChunkInfo (a step is buffsize /
// NCCL_STEPS; LL carries half of it as payload, LL128 120 of every 128 bytes; Simple ring
// AllReduce, AllGather and ReduceScatter move ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS =
// NCCL_STEPS / 2 steps per chunk, everything else one step; Tree Simple halves its chunk while
// a channel has fewer than 8 × depth chunks (and it is above 128 KiB), 4 × depth (64 KiB),
// depth (32 KiB); Tree LL128 halves it while a channel has fewer than
// (1 + log2 nNodes + ppn/10) × 64/ppn chunks (above 128 KiB), then × 16/ppn (above 32 KiB);
// getChannnelThreadInfo drops channels for small sizes; NVLS: one step, at most 128 KiB, 64 KiB
// below 64 rounds of NCCL_NVLS_NCHANNELS × heads chunks, 32 KiB below 8, 16 KiB below 2),
// src/include/collectives.h (the CHUNKSTEPS constants), src/graph/tuning.cc (the thread
// thresholds).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collectives/nccl_model.hpp"
#include "collectives/nccl_tests.hpp"
#include "collectives/plan.hpp"

namespace fabricsim {

/// NCCL_P2P_LL_THRESHOLD's default (enqueue.cc): point-to-point sends up to this many bytes
/// use LL.
inline constexpr int64_t kNcclP2pLlThresholdBytes = 16384;

/// A run's collective setup, resolved once before the sweep.
struct NcclRunSetup {
  std::string collective = "all_reduce";  ///< nccl-tests name
  std::string algorithm = "auto";         ///< workload.algorithm: auto or a plan.hpp name
  std::string protocol = "auto";          ///< workload.protocol: auto, ll, ll128, simple
  int root = 0;
  RankLayout layout;  ///< gpus_per_server = ranks per server (workload.ranks_per_server)
  /// The fabric's host id of each rank (layout.ranks entries); empty = rank r on host r.
  std::vector<int> rank_hosts;
  int channels = 1;  ///< NCCL channels (clamped to NCCL_MIN/MAX_NCHANNELS)
  NcclSettings settings;
  NcclTuneInputs tune;  ///< the cost model's view of the fabric (collective set per size)
  /// GPUDirect RDMA off or the socket transport: inter-server data is staged through host
  /// memory, one PCIe crossing of `pcie_latency_ps` + one NCCL step's bytes (buffsize / 8) at
  /// `pcie_rate_bps` at each end (the rest of a transfer's copy overlaps with the network).
  bool staged = false;
  int64_t pcie_rate_bps = 0;
  int64_t pcie_latency_ps = 0;
  int64_t step_latency_ps =
      -1;  ///< -1 = NCCL's hwLat[intra_hw] (NVLINK or PCI) for the algorithm and protocol
  int64_t launch_latency_ps = -1;  ///< -1 = NCCL's baseLat for the algorithm and protocol
  std::string note;  ///< a setting that does not do what it says here (printed, not fatal)
  /// The servers have an NVSwitch (topology.gpus_per_server > 1): NVLS's hardware.
  bool nvswitch = false;
  /// A GPU's NVLink bandwidth as NCCL's graph search sees it (link.nvlink_rate ×
  /// link.nvlink_efficiency), GB/s; 0 = none.
  double nvlink_GBps = 0;
  /// The run is in the flow mode, which has no NVLS (its loopbacks need the packet network).
  bool flow_mode = false;
  /// Why NVLS is off for this setup's communicator ("" = on; nccl_nvls_unavailable).
  std::string nvls_off;
  /// Why NVLSTree is off ("" = on; nccl_nvls_tree_unavailable, or the flow mode).
  std::string nvls_tree_off;
  /// Whether NVLSTree is off for the flow mode alone (NCCL would have it here).
  bool nvls_tree_flow_only = false;
  /// Why PAT is off ("" = on; nccl_pat_unavailable, or the flow mode).
  std::string pat_off;
  /// The network is InfiniBand (transport infiniband): its switches can run SHARP.
  bool infiniband = false;
  /// One switch and one link, picoseconds (CollectiveSpec::collnet_join_ps).
  int64_t switch_hop_ps = 0;
  /// Why CollNetDirect / CollNetChain are off ("" = on; nccl_collnet_unavailable, a partial
  /// last server, or the flow mode).
  std::string collnet_direct_off, collnet_chain_off;
  /// Whether they are off for the flow mode alone (NCCL would have them here).
  bool collnet_direct_flow_only = false, collnet_chain_flow_only = false;
  /// A head GPU's NIC bandwidth, GB/s (the host rate × the server's NICs / its GPUs): what the
  /// NVLS graph's speed must fit across servers; 0 = no network.
  double nic_GBps_per_gpu = 0;
  /// Which NCCL release line's tuning is used and why: "2.28 (the newest modelled)", "2.25-2.27
  /// (nccl.version 2.26)", "2.25-2.27 (the measured log's NCCL 2.25.1)".
  std::string tuning_label;
  /// A log's NCCL version no table covers: which one stands in ("" = none).
  std::string version_note;
  /// What the run's NCCL model leaves out at the sizes of its sweep, (what, why) each, reported
  /// as limits of the run: where NCCL's model of this release would pick an algorithm the run
  /// cannot (the flow mode has no PAT, NVLSTree or CollNet), and what CollNet's switches do
  /// that is not modelled where it runs; empty = nothing.
  std::vector<std::pair<std::string, std::string>> limits;
};

/// One size of the sweep, planned.
struct SizePlan {
  NcclTestsSize size;     ///< nccl-tests' size and count columns
  int64_t buffer_count;   ///< elements the DAG builder cuts (plan.hpp build_collective)
  std::string algorithm;  ///< ring, tree, halving_doubling, p2p
  std::string protocol;   ///< ll, ll128, simple
  /// NCCL's predicted time for the pair, µs (nccl_model.hpp predicted_time_us); -1 where NCCL's
  /// model does not apply (halving_doubling, p2p).
  double nccl_model_time_us = -1;
  CollectiveSpec spec;  ///< what build_collective gets
};

/// Plans one size: nccl-tests' size semantics for the collective; the algorithm and protocol
/// as given, or NCCL's choice (select) where "auto" (alltoall and sendrecv are p2p: LL up to
/// kNcclP2pLlThresholdBytes per peer and channel, else Simple; halving_doubling Simple); the
/// chunk as NCCL cuts it for that pair (step_data_bytes × chunk steps, see the file comment);
/// the protocol's wire factor; step latency hwLat[NVLINK][algo][proto] and launch latency
/// baseLat[algo][proto] unless the setup overrides them (Ring's for halving_doubling and p2p;
/// NVLS: Ring Simple's step latency (NCCL has none for NVLS), its hwLat[NVLINK] of 23 µs once
/// as launch latency, one channel, the framing of nvls.hpp),
/// fabricsim simulating the network part of NCCL's latencies itself; and the staging delay.
/// Throws std::invalid_argument when the setup's algorithm cannot run the collective, or the
/// NCCL_ALGO/NCCL_PROTO filters leave nothing for it.
SizePlan plan_size(const NcclRunSetup& setup, int64_t requested_bytes, int elem_bytes);

}  // namespace fabricsim
