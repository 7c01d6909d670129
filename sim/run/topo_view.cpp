#include "sim/run/topo_view.hpp"

#include <ostream>
#include <stdexcept>
#include <string>

#include "sim/run/run.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

TopoView topo_view(const Scenario& sc, const TopoPartitionOptions& partition_opts,
                   std::ostream& warnings) {
  TopoView view;
  view.fabric = build_fabric(sc);
  const Fabric& fabric = view.fabric;
  if (partition_opts.parts > 0) {
    try {
      view.partition = partition_fabric(fabric, partition_opts.parts, partition_opts.method);
    } catch (const std::invalid_argument& e) {
      throw TopoPartitionError(e.what());
    }
  }
  const RoutingTable routes = build_routes(sc, fabric);
  for (const std::string& w : sc.warnings) warnings << w << "\n";
  for (const std::string& w : fabric.warnings) warnings << w << "\n";
  view.summary = summarize(sc, fabric);  // with the cost proxy, as results.json's
  view.metrics = compute_metrics(fabric, routes);
  view.routing = std::string(to_string(routes.algorithm())) + ", " + sc.routing.load_balancing;
  return view;
}

}  // namespace fabricsim
