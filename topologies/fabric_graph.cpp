#include "topologies/fabric_graph.hpp"

#include <sstream>

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
    case Role::kRouter:
      return "router";
  }
  return "?";
}

std::string to_dot(const Fabric& fabric) {
  const auto& g = fabric.graph;
  std::ostringstream out;
  out << "graph \"" << fabric.kind << "\" {\n";
  for (auto [v, vend] = boost::vertices(g); v != vend; ++v) {
    out << "  \"" << g[*v].name
        << "\" [shape=" << (g[*v].kind == NodeKind::kHost ? "ellipse" : "box") << "];\n";
  }
  for (auto [e, eend] = boost::edges(g); e != eend; ++e) {
    out << "  \"" << g[boost::source(*e, g)].name << "\" -- \"" << g[boost::target(*e, g)].name
        << "\" [label=\"" << g[*e].rate_bps / 1'000'000'000 << "G\"];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace fabricsim
