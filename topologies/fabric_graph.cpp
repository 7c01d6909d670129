#include "topologies/fabric_graph.hpp"

#include <sstream>

namespace fabricsim {

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
