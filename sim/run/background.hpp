// The scenario's `background:` section turned into traffic flows (BackgroundConfig,
// sim/config/scenario.hpp; the generator is traffic/poisson_flows.hpp).
#pragma once

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// Appends the Poisson background flows of sc.background (when enabled) to sc.traffic, marked
/// `background`, with resolved hosts. A host's rack is the first network switch it attaches to
/// (its leaf, edge switch or torus router). The flow-size CDF is built in (web-search,
/// hadoop) or read from a file relative to the scenario's folder. Throws ConfigError (exit 2) at
/// the background key concerned: an unreadable file, a malformed CDF (the file, line and column
/// in it), a rack with one host under rack-local, fewer than two hosts, more flows expected
/// than background.max_flows.
void add_background_flows(Scenario& sc, const Fabric& fabric);

}  // namespace fabricsim
