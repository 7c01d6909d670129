#include "topologies/fabric_graph.hpp"

#include <sstream>

#include <boost/graph/graphviz.hpp>

namespace fabricsim {

const char* to_string(Role r) {
  switch (r) {
    case Role::kGpu:
      return "gpu";
    case Role::kLeaf:
      return "leaf";
    case Role::kSpine:
      return "spine";
    case Role::kEdge:
      return "edge";
    case Role::kAgg:
      return "agg";
    case Role::kCore:
      return "core";
    case Role::kNvSwitch:
      return "nvswitch";
    case Role::kPcieSwitch:
      return "pcie-switch";
    case Role::kRouter:
      return "router";
  }
  return "?";
}

std::string to_dot(const Fabric& fabric) {
  const FabricGraph& g = fabric.graph;
  // Boost.Graph's writer; node ids are the node names, edges carry their rate (and dashed when
  // failed, blue when NVLink).
  struct NodeAttrs {
    const FabricGraph* g;
    void operator()(std::ostream& out, VertexId v) const {
      out << "[shape=" << ((*g)[v].kind == NodeKind::kHost ? "ellipse" : "box") << "]";
    }
  };
  struct EdgeAttrs {
    const FabricGraph* g;
    void operator()(std::ostream& out, FabricGraph::edge_descriptor e) const {
      const EdgeProps& p = (*g)[e];
      out << "[label=\"" << p.rate_bps / 1'000'000'000 << "G\"" << (p.failed ? ",style=dashed" : "")
          << (p.nvlink ? ",color=blue" : "") << "]";
    }
  };
  struct GraphAttrs {
    void operator()(std::ostream& out) const { out << "overlap=false;\n"; }
  };
  std::ostringstream out;
  boost::write_graphviz(out, g, NodeAttrs{&g}, EdgeAttrs{&g}, GraphAttrs{},
                        boost::get(&NodeProps::name, g));
  return out.str();
}

}  // namespace fabricsim
