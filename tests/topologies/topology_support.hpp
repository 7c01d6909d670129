// Test helpers shared by the topology tests: an independent max-flow and error capture.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/loader.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim::testing {

/// what() of the ConfigError `build` throws ("" when it throws none).
template <typename F>
inline std::string config_error(F build) {
  try {
    build();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

/// Max flow, one direction, from the hosts with in_a[i] to the others: every link is two arcs of
/// its rate (full duplex). An independent check of the closed-form bisection.
inline int64_t max_flow_bps(const Fabric& f, const std::vector<bool>& in_a) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<
          boost::edge_capacity_t, int64_t,
          boost::property<boost::edge_residual_capacity_t, int64_t,
                          boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const FabricGraph& g = f.graph;
  const size_t n = boost::num_vertices(g);
  FlowGraph fg(n + 2);
  auto capacity = boost::get(boost::edge_capacity, fg);
  auto reverse = boost::get(boost::edge_reverse, fg);
  const auto arc = [&](size_t u, size_t v, int64_t c) {
    const auto e = boost::add_edge(u, v, fg).first;
    const auto r = boost::add_edge(v, u, fg).first;
    capacity[e] = c;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  int64_t total = 1;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    arc(boost::source(*e, g), boost::target(*e, g), g[*e].rate_bps);
    arc(boost::target(*e, g), boost::source(*e, g), g[*e].rate_bps);
    total += g[*e].rate_bps;
  }
  const size_t source = n, sink = n + 1;
  for (size_t i = 0; i < f.hosts.size(); ++i) {
    if (in_a[i]) {
      arc(source, f.hosts[i], total);
    } else {
      arc(f.hosts[i], sink, total);
    }
  }
  return boost::push_relabel_max_flow(fg, source, sink);
}

}  // namespace fabricsim::testing
