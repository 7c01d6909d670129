// FabricGraph: the fabric as a Boost.Graph, the one description every other part reads.
//
// Vertices are hosts and switches; edges are full-duplex links (parallel edges allowed: two
// cables between the same leaf and spine are two edges). A node's ports are its incident edges
// in boost::out_edges order, so port numbering is stable and the same for every consumer.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace fabricsim {

enum class NodeKind : uint8_t { kHost, kSwitch };

/// What a vertex is in its fabric family; drives metrics by tier, cost and routing.
enum class Role : uint8_t {
  kGpu,         ///< a host: one GPU (accelerator) and its NIC(s)
  kLeaf,        ///< spine-leaf leaf / ToR; rail-optimized rail leaf
  kSpine,       ///< spine-leaf or rail-optimized spine
  kEdge,        ///< fat-tree edge (tier 1)
  kAgg,         ///< fat-tree aggregation (tier 2)
  kCore,        ///< fat-tree core (tier 3)
  kNvSwitch,    ///< intra-server NVLink switch (one per server)
  kPcieSwitch,  ///< intra-server PCIe switch joining GPUs without NVLink (one per server)
  kRouter,      ///< torus router (one per torus node; its accelerator is the attached host)
};
const char* to_string(Role r);
/// A server's own switch (NVSwitch or PCIe switch): not a network switch (not counted, costed
/// or partitioned as one).
inline bool is_server_switch(Role r) {
  return r == Role::kNvSwitch || r == Role::kPcieSwitch;
}

struct NodeProps {
  NodeKind kind = NodeKind::kHost;
  Role role = Role::kGpu;
  std::string name;  ///< unique: "host3", "leaf1", "spine0", "edge2", "nvswitch5", "r1_2_3"
  /// Level for up-down routing: 0 = host, 1 = leaf/edge/ToR/NVSwitch/router, 2 = spine/agg,
  /// 3 = core. A path is valley-free when its tiers rise, then fall.
  int tier = 0;
  int server = -1;  ///< rail-optimized: the server a GPU or NVSwitch belongs to
  int rail = -1;    ///< rail-optimized: a rail leaf's rail, a GPU's local index
  int plane = -1;   ///< rail-optimized: the plane of a leaf or spine
  int su = -1;      ///< rail-optimized: scalable unit of a server or leaf; fat-tree: pod
  std::array<int16_t, 3> coord{-1, -1, -1};  ///< torus: router / host coordinates
};

struct EdgeProps {
  int64_t rate_bps = 0;  ///< line rate of each direction, bits per second (as negotiated)
  int64_t delay_ps = 0;  ///< one-way propagation delay, picoseconds
  bool failed = false;   ///< down: no route uses it (it is still counted and costed)
  /// A link inside a server (GPU <-> NVSwitch, or GPU <-> PCIe switch when `pcie`), not a
  /// network cable: routing keeps traffic between a server's GPUs on these.
  bool nvlink = false;
  bool pcie = false;            ///< with nvlink: a PCIe link (topology.gpu_interconnect: pcie)
  int dim = -1;                 ///< torus: the dimension the link runs along
  double bit_error_rate = 0.0;  ///< per bit, both directions (link.bit_error_rate or per link)
};

using FabricGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, NodeProps, EdgeProps>;
using VertexId = FabricGraph::vertex_descriptor;

/// A built fabric: the graph plus the figures `results.json` reports under `fabric`.
struct Fabric {
  FabricGraph graph;
  std::string kind;             ///< "spine-leaf", "fat-tree", "rail-optimized", "torus"
  std::vector<VertexId> hosts;  ///< host (GPU) vertices; index = host id = rank
  int switches = 0;             ///< network switches (NVSwitches are not counted here)
  int links = 0;                ///< network links (graph edges, NVLinks excluded)
  /// The ratio actually built, end to end: host capacity over the narrowest uplink tier above
  /// it (spine-leaf and rail-optimized: the leaf; fat-tree: edge and aggregation combined).
  double oversubscription = 1.0;
  /// One direction, across the worst balanced cut of the hosts, by the family's closed form
  /// (topologies/metrics.hpp checks it with a max-flow on small instances).
  int64_t bisection_bandwidth_bps = 0;
  int gpus_per_server = 1;      ///< hosts sharing an NVLink domain (1 = none)
  bool hosts_forward = false;   ///< routes may pass through a host (rail-only PXN)
  std::vector<int> dims;        ///< torus sizes per dimension
  bool wraparound = false;      ///< torus (true) or mesh (false)
  std::string default_routing;  ///< what routing.algorithm=auto means: up_down, dimension_order
  /// Settings that do nothing on this fabric, as config_warning() words them (a bit error rate
  /// on a failed link): printed with the scenario's own warnings.
  std::vector<std::string> warnings;
};

/// Writes the fabric in Graphviz DOT (one node per vertex, one edge per link, labelled with the
/// rate in Gb/s). For `fabricsim topo --dot`.
std::string to_dot(const Fabric& fabric);

}  // namespace fabricsim
