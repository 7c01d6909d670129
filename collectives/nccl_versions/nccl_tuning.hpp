// NCCL's tuning constants per release line: what ncclTopoTuneModel (src/graph/tuning.cc) of
// each NCCL version knows about latencies, per-channel bandwidth caps and the protocols' factors,
// for the algorithms fabricsim models (Tree, Ring, NVLS on one server, NVLSTree across NVSwitch
// servers, PAT). collectives/nccl_model.hpp
// evaluates the model with one of them; `nccl.version` picks it, and a measured log's
// "NCCL version" line picks it when the scenario does not.
//
// Each table is read from a copy of NCCL's source (versions.cpp names the repository and commit
// of each). NVIDIA/nccl b6475625 (makefiles/version.mk 2.20.3) and copies whose version.mk or
// name state 2.18.3 and 2.28.3 anchor three of them; the copies read for 2.21-2.27 do not state
// their version, which is inferred from the features they carry (PAT from 2.23, the per-collective
// NCCL_ALGO syntax from 2.24, Blackwell rows from 2.25), consistent with NCCL's release notes.
#pragma once

#include <string>
#include <vector>

namespace fabricsim {

/// Rows of NCCL's per-architecture tables (compCapIndex): Volta, Ampere, Hopper, Blackwell.
inline constexpr int kNcclArchRows = 4;
/// Columns of those tables (index2): one node, two nodes, more.
inline constexpr int kNcclNodeColumns = 3;
/// Algorithms in the latency tables: Tree, Ring, NVLS, NVLSTree, PAT, CollNetDirect,
/// CollNetChain (fabricsim's NcclAlgo order: NCCL's CollNet rows 2 and 3 come last here).
inline constexpr int kNcclTunedAlgos = 7;

/// One NCCL release line's tuning. Units: µs and GB/s, as NCCL's.
struct NcclTuning {
  /// The versions it stands for, as nccl.version names them: "2.20" or "2.25-2.27".
  std::string name;
  int first_minor = 0, last_minor = 0;  ///< the 2.x minor versions it covers
  /// Where it was read: repository, commit and the version that copy states or is inferred to be.
  std::string source;
  /// baseLat[algo][proto], µs: Tree, Ring, NVLS, NVLSTree, PAT, CollNetDirect, CollNetChain ×
  /// LL, LL128, Simple (PAT's row is 0 before 2.28, whose latency formula adds 8 µs itself).
  double base_lat_us[kNcclTunedAlgos][3] = {};
  /// hwLat[hw][algo][proto], µs: NVLINK, PCI, NET × the same algorithms × LL, LL128, Simple.
  double hw_lat_us[3][kNcclTunedAlgos][3] = {};
  /// Whether compute capability 10.0 and above has a row of its own (2.25+); else it takes
  /// Hopper's.
  bool blackwell_row = false;
  /// llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws [arch][nodes], GB/s.
  /// llMaxBws' rows on several nodes are the CPU vendor instead (0 Intel, 1 AMD).
  double ll_max_bws[kNcclArchRows][kNcclNodeColumns] = {};
  double per_ch_max_ring_ll128_bws[kNcclArchRows][kNcclNodeColumns] = {};
  double per_ch_max_tree_ll128_bws[kNcclArchRows][kNcclNodeColumns] = {};
  double per_ch_max_tree_bws[kNcclArchRows][kNcclNodeColumns] = {};
  /// Ring LL's bus bandwidth: × 0.5 (2.21+), else × 1/4 (several nodes, AllReduce, Reduce) or
  /// × 1/3.
  bool ring_ll_half = false;
  /// Ring LL128's bus bandwidth × 0.7 with fewer than 2 GPUs a node (up to 2.22), else × 0.92.
  bool ring_ll128_ppn1_penalty = true;
  /// With one GPU a node the inter-node step latency is Tree's NET row, whatever the algorithm
  /// ("latencies are fully exposed", 2.23+).
  bool ppn1_tree_net_latency = false;
  /// Ring AllReduce's inter-node steps: 2 (nNodes - 1) (2.23+), else 2 nNodes.
  bool ring_inter_steps_minus_one = false;
  /// LL128 on by default (NCCL_PROTO unset) for these compute capabilities exactly, with the
  /// path rules of nccl_ll128_enabled_by_default; in 2.28 any capability from 7.0.
  std::vector<int> ll128_archs;
  bool ll128_from_70 = false;
  /// nvlsEfficiency[arch] (2.28+): NVLS's per-channel bandwidth is the graph's × this × (nCh - 1)
  /// / nCh (× 2 for AllReduce) and converts to algorithm bandwidth as Ring's does; 0 = the
  /// older rule (the graph's bandwidth, × 5/6).
  double nvls_efficiency[kNcclArchRows] = {};
  /// NCCL has PAT (2.23+): AllGather and ReduceScatter with one GPU a node, Simple only.
  bool pat = false;
  /// NVLSTree's model as 2.18 has it: the graph's bandwidth (bwIntra on up to 2 nodes, else
  /// bwInter) converted with .70 × nNodes / (2 (nNodes − 1)), latency baseLat + 2 (nNodes − 1)
  /// × hwLat[NET]. From 2.19: min(bwIntra, bwInter, halved above 2 nodes) × 5/6, latency
  /// intraLat + 2 log2(nNodes) × interLat.
  bool nvls_tree_legacy = false;
  /// CollNetDirect's "arity serialization latency" a local GPU beyond the first, µs: 0.5 in 2.18,
  /// 0.4 from 2.19 (tuning.cc, the CollNetDirect latency formula).
  double collnet_direct_arity_us = 0.4;
  /// perChMaxNVLSTreeBws[arch][nodes] (2.28+), GB/s: NVLSTree's per-channel cap; 0 = none.
  double per_ch_max_nvls_tree_bws[kNcclArchRows][kNcclNodeColumns] = {};
};

/// The modelled release lines, oldest first (static storage).
const std::vector<NcclTuning>& nccl_tunings();
/// The newest release line: nccl.version's default.
const NcclTuning& newest_nccl_tuning();
/// "2.20", "2.20.3" or a log's "2.26.6+cuda12.8": the release line covering that minor version.
/// Throws std::invalid_argument (the versions modelled, a "did you mean") for a string that is not
/// a version or a minor no table covers.
const NcclTuning& nccl_tuning(const std::string& version);

/// A log's NCCL version matched to a table, the nearest where none covers it.
struct NcclTuningMatch {
  const NcclTuning* tuning = nullptr;
  std::string note;  ///< "" when a table covers the version; else which one stands in, and why
};
/// As nccl_tuning, but a version older than the oldest table takes the oldest and a newer one the
/// newest, saying so in `note`. Throws std::invalid_argument for a string that is not a version.
NcclTuningMatch nccl_tuning_nearest(const std::string& version);

}  // namespace fabricsim
