// Background flows (background.hpp).
#include "sim/run/background.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "sim/config/loader.hpp"
#include "sim/core/config_error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/strings.hpp"
#include "traffic/flow_size_cdf.hpp"
#include "traffic/poisson_flows.hpp"

namespace fabricsim {

namespace {

/// The CDF sc.background.flow_sizes names: a built-in, else a file beside the scenario.
FlowSizeCdf flow_size_cdf(const Scenario& sc) {
  const std::string& name = sc.background.flow_sizes;
  for (const std::string& b : builtin_flow_size_cdf_names()) {
    if (name == b) return builtin_flow_size_cdf(name);
  }
  const std::filesystem::path p(name);
  const std::string path =
      p.is_absolute()
          ? p.string()
          : (std::filesystem::path(sc.path).parent_path() / p).lexically_normal().string();
  const bool builtin_like = closest_match(name, builtin_flow_size_cdf_names()) != "";
  std::string text;
  try {
    // A flow-size table is a few hundred lines: 1 MiB is far beyond any.
    text = read_input_file(path, "flow-size CDF file", int64_t{1} << 20, "a flow-size table");
  } catch (const InputFileError& e) {
    std::string names;
    for (const std::string& b : builtin_flow_size_cdf_names()) names += b + ", ";
    const std::string near = closest_match(name, builtin_flow_size_cdf_names());
    throw key_error(sc, "background.flow_sizes",
                    "expected " + names + "or a CDF file (relative to the scenario's folder); '" +
                        path + "': " + e.what() +
                        (builtin_like ? " (did you mean '" + near + "'?)" : ""));
  }
  try {
    return parse_flow_size_cdf(text, name);
  } catch (const CdfError& e) {
    throw ConfigError(path, e.line(), e.column(), "background.flow_sizes",
                      e.message() + " (a CDF file has lines 'SIZE_BYTES PERCENT', 0 to 100)");
  }
}

/// Each host's first network switch, as a group id (its vertex).
std::vector<int> racks(const Fabric& fabric) {
  std::vector<int> group;
  for (VertexId h : fabric.hosts) {
    int rack = -1;
    for (auto e : boost::make_iterator_range(boost::out_edges(h, fabric.graph))) {
      const VertexId v = boost::target(e, fabric.graph);
      const NodeProps& n = fabric.graph[v];
      if (n.kind != NodeKind::kSwitch || is_server_switch(n.role)) continue;
      if (rack < 0 || static_cast<int>(v) < rack) rack = static_cast<int>(v);
    }
    group.push_back(rack);
  }
  return group;
}

}  // namespace

void add_background_flows(Scenario& sc, const Fabric& fabric) {
  // A sweep prepares a point twice: the flows of an earlier call go first.
  std::erase_if(sc.traffic, [](const TrafficFlow& t) { return t.background; });
  const BackgroundConfig& b = sc.background;
  if (!b.enabled || b.load == 0) return;  // load 0: the section's baseline, no flows
  const FlowSizeCdf cdf = flow_size_cdf(sc);
  const std::vector<int> rack = racks(fabric);
  if (b.pattern == "rack-local") {  // every host needs a peer on its leaf
    for (size_t h = 0; h < rack.size(); ++h) {
      if (std::count(rack.begin(), rack.end(), rack[h]) > 1) continue;
      const std::string sw =
          rack[h] < 0 ? "no switch" : fabric.graph[static_cast<VertexId>(rack[h])].name;
      throw key_error(sc,
                      sc.origins.count("background.pattern") ? "background.pattern" : "background",
                      fabric.graph[fabric.hosts[h]].name + " is the only host on " + sw +
                          ": rack-local traffic needs two hosts on every leaf; expected "
                          "all-to-all here");
    }
  }
  PoissonFlowsSpec spec;
  spec.hosts = static_cast<int>(fabric.hosts.size());
  spec.group_of_host = rack;
  spec.load = b.load;
  spec.host_rate_bps = sc.link.host_rate_bps;
  spec.start_ps = b.start_ps;
  spec.duration_ps = b.duration_ps;
  spec.pattern =
      b.pattern == "rack-local" ? PoissonFlowsSpec::kRackLocal : PoissonFlowsSpec::kAllToAll;
  spec.seed = sc.seed;
  spec.max_flows = b.max_flows;
  std::vector<GeneratedFlow> flows;
  try {
    flows = generate_poisson_flows(spec, cdf);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const char* key = what.find("max_flows") != std::string::npos ||
                              what.find("flows expected") != std::string::npos
                          ? "background.max_flows"
                      : b.pattern == "rack-local" ? "background.pattern"
                                                  : "background";
    throw key_error(sc, sc.origins.count(key) ? key : "background", what);
  }
  if (flows.empty()) {
    char expected[64];
    std::snprintf(expected, sizeof expected, "%.3g",
                  spec.hosts * static_cast<double>(spec.duration_ps) /
                      poisson_mean_interarrival_ps(spec, cdf));
    const auto at = sc.origins.find("background.duration");
    const std::string w = config_warning(
        at != sc.origins.end() ? at->second : KeyOrigin{sc.path, 0, 0}, "background.duration",
        "no background flow arrived in it (" + std::string(expected) +
            " expected at this load and mean size " +
            std::to_string(std::llround(cdf.mean_bytes())) +
            " B): the run has no background traffic; lengthen it or raise background.load");
    if (std::find(sc.warnings.begin(), sc.warnings.end(), w) == sc.warnings.end()) {
      sc.warnings.push_back(w);  // once, though a sweep prepares a point twice
    }
  }
  const size_t first = sc.traffic.size();
  for (size_t i = 0; i < flows.size(); ++i) {
    const GeneratedFlow& g = flows[i];
    TrafficFlow t;
    t.src = std::to_string(g.src);
    t.dst = std::to_string(g.dst);
    t.src_host = g.src;
    t.dst_host = g.dst;
    t.bytes = g.bytes;
    t.start_ps = g.start_ps;
    t.priority = b.priority;
    t.flow = static_cast<int64_t>(first + i);  // a queue pair of its own: flows run in parallel
    t.background = true;
    sc.traffic.push_back(std::move(t));
  }
}

}  // namespace fabricsim
