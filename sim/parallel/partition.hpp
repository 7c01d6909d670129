// Partitioning a fabric over the ranks of a conservative parallel simulation (DESIGN.md §2,
// `sim/parallel`). Ranks own disjoint sets of vertices; only links cross parts, and the
// ranks advance in windows of the lookahead: the smallest propagation delay of a link crossing
// parts (as ns-3's DistributedSimulatorImpl and SST's SyncManager do). This file only decides who
// owns what and reports what that costs; no MPI here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// How partition_fabric splits the fabric.
enum class PartitionMethod : uint8_t {
  kAuto,      ///< kTopology when `parts` fits the family's structure, else kMetis (if built in)
  kTopology,  ///< the family's own split: pods, leaves, servers, torus slabs (see below)
  kMetis,     ///< METIS_PartGraphKway on the fabric with zero-delay links contracted
};
const char* to_string(PartitionMethod method);
/// "auto", "topology", "metis" -> the method; std::nullopt for anything else.
std::optional<PartitionMethod> parse_partition_method(const std::string& text);

/// True when this build links METIS (CMake found metis.h and libmetis; FABRICSIM_HAVE_METIS).
bool metis_available();

/// What one part holds. Weight = ports: every incident edge of a vertex (NVLinks included),
/// a proxy for the events the part's rank will process.
struct PartLoad {
  int nodes = 0;      ///< vertices (hosts and switches, NVSwitches included)
  int hosts = 0;      ///< host (GPU) vertices
  int64_t ports = 0;  ///< sum of the vertices' degrees
};

/// The owner of every vertex and what the cut costs.
struct Partition {
  int parts = 1;
  PartitionMethod method = PartitionMethod::kTopology;  ///< as used: kTopology or kMetis
  std::string scheme;           ///< e.g. "fat-tree by pod", "torus slabs along dim 2", "metis"
  std::vector<int> part_of;     ///< per vertex (FabricGraph index): its part, 0 .. parts-1
  std::vector<PartLoad> loads;  ///< per part
  /// Links (graph edges that are not failed) whose ends lie in different parts: every one is a
  /// channel between two ranks. A failed link carries nothing and is not counted.
  int cut_links = 0;
  /// The lookahead, picoseconds: the smallest propagation delay among the cut links; empty when
  /// no link is cut (parts = 1): the ranks never wait on each other.
  std::optional<int64_t> lookahead_ps;
  /// Largest part weight (ports) over the mean part weight; 1.0 = perfectly balanced.
  double imbalance = 1.0;
};

/// Splits `fabric` into `parts` parts, deterministically (the same fabric and parts give the same
/// partition on every run and machine: no clock, no unseeded randomness; METIS runs with a fixed
/// METIS_OPTION_SEED).
///
/// Topology-aware splits (kTopology; units are split contiguously, unit u of U going to part
/// floor(u·parts/U), so parts differ by at most one unit):
///  - fat-tree: by pod; a pod's hosts, edge and aggregation switches together; cores (and any
///    vertex of no pod) spread evenly in index order. Fits when parts divides the pods.
///  - spine-leaf: by leaf; a leaf with its hosts; spines spread evenly. Fits when parts divides
///    the leaves.
///  - rail-optimized: by server in server order, so by scalable unit when parts divides the
///    SUs: a server's GPUs and its NVSwitch always together (NVLinks never cut); rail leaves
///    spread in leaf order, i.e. with their SU (leaves are numbered SU by SU); spines spread.
///    Fits when parts divides the servers. A GPU cannot share a part with all its rail leaves
///    (they serve every server of the SU), so its host links may cross parts.
///  - torus: slabs of consecutive coordinates along the largest dimension (the last of equal
///    ones), a router with its attached host. Fits when parts divides that dimension.
/// Multi-GPU servers on a fat-tree or spine-leaf (gpus_per_server > 1) stay whole: their
/// NVSwitch goes with its GPUs, which sit under one pod or leaf.
///
/// METIS (kMetis): vertices joined by zero-delay links (NVLinks) are contracted into one
/// vertex, and so is a host (or a whole server) with the single switch its NICs attach to (its
/// first hop); then METIS_PartGraphKway with vertex weight = ports and edge weight = link rate
/// in Gb/s (at least 1), parallel links summed, failed links left out. On small graphs METIS 5.1
/// k-way can leave all but one part empty; when its heaviest part exceeds the mean by more than
/// the heaviest group (a bound greedy filling always meets), METIS_PartGraphRecursive is tried
/// and the lighter result kept; a part still empty gets one group from the fullest part.
///
/// kAuto: kTopology when the family's split fits `parts` (above), else kMetis when built in,
/// else kTopology if there are at least `parts` units (uneven), else an error.
///
/// Throws std::invalid_argument: parts < 1 or > the vertices; kTopology for a kind without a
/// topology-aware split or with fewer units than parts; kMetis when not built in, or when fewer
/// groups than parts can be separated; a cut link with zero propagation delay (the lookahead
/// would be 0: a conservative simulation could never advance; the message names the link).
Partition partition_fabric(const Fabric& fabric, int parts,
                           PartitionMethod method = PartitionMethod::kAuto);

}  // namespace fabricsim
