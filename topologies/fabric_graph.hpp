// FabricGraph: the fabric as a Boost.Graph, the one description every other part reads.
//
// Vertices are hosts and switches; edges are full-duplex links (parallel edges allowed: two
// cables between the same leaf and spine are two edges). A node's ports are its incident edges
// in boost::out_edges order, so port numbering is stable and the same for every consumer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace fabricsim {

enum class NodeKind : uint8_t { kHost, kSwitch };

struct NodeProps {
  NodeKind kind = NodeKind::kHost;
  std::string name;  ///< "host3", "leaf1", "spine0"
  int tier = 0;      ///< 0 = host, 1 = leaf (ToR), 2 = spine
};

struct EdgeProps {
  int64_t rate_bps = 0;  ///< line rate of each direction, bits per second
  int64_t delay_ps = 0;  ///< one-way propagation delay, picoseconds
};

using FabricGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, NodeProps, EdgeProps>;
using VertexId = FabricGraph::vertex_descriptor;

/// A built fabric: the graph plus the figures `results.json` reports under `fabric`.
struct Fabric {
  FabricGraph graph;
  std::string kind;             ///< "spine-leaf", …
  std::vector<VertexId> hosts;  ///< host vertices; index = host id = rank (1 GPU per host)
  int switches = 0;
  int links = 0;                        ///< full-duplex links (graph edges)
  double oversubscription = 1.0;        ///< the ratio actually built (host : uplink capacity)
  int64_t bisection_bandwidth_bps = 0;  ///< one direction, across the worst balanced cut
};

/// Writes the fabric in Graphviz DOT (one node per vertex, one edge per link, labelled with the
/// rate in Gb/s). For `fabricsim topo --dot`.
std::string to_dot(const Fabric& fabric);

}  // namespace fabricsim
