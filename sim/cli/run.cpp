#include "sim/cli/run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/nccl_model.hpp"
#include "sim/config/cost_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/report/output_file.hpp"
#include "sim/report/topo_report.hpp"
#include "sim/run/run_command.hpp"
#include "sim/run/run_outputs.hpp"
#include "topologies/metrics.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

int cmd_run(const RunOptions& opts, const std::atomic<bool>* interrupt) {
  return run_scenario(opts, interrupt);
}

int cmd_validate(const RunOptions& opts) {
  Scenario sc = load(opts);
  const Prepared prepared = prepare(sc);  // the topology can be built, run and routed;
  print_warnings(sc);
  const Fabric& fabric = prepared.fabric;
  if (!sc.cost_model.empty()) load_cost_model(cost_model_path(sc));  // its prices file reads
  std::cout << opts.scenario_path << ": ok (" << fabric.kind << ", " << fabric.hosts.size()
            << " GPUs, " << fabric.switches << " switches, " << fabric.links << " links)\n";
  return kExitOk;
}

int cmd_topo(const RunOptions& opts, const std::string& dot_path, bool json,
             const TopoPartitionOptions& partition_opts) {
  const Scenario sc = load(opts);
  if (!dot_path.empty()) {  // a folder that is not there is a typo: said before any work
    try {
      check_output_file(dot_path);
    } catch (const OutputError& e) {
      throw ConfigError("--dot " + dot_path, 0, 0, "", "cannot write the DOT file: " + e.reason());
    }
  }
  const Fabric fabric = build_fabric(sc);
  std::optional<Partition> partition;
  if (partition_opts.parts > 0) {
    try {
      partition = partition_fabric(fabric, partition_opts.parts, partition_opts.method);
    } catch (const std::invalid_argument& e) {
      std::cerr << "fabricsim topo: --partitions " << partition_opts.parts << ": " << e.what()
                << "\n";
      return kExitBadInput;
    }
  }
  const RoutingTable routes = build_routes(sc, fabric);
  print_warnings(sc);
  for (const std::string& w : fabric.warnings) std::cerr << w << "\n";
  const FabricSummary s = summarize(sc, fabric);  // with the cost proxy, as results.json's
  const FabricMetrics m = compute_metrics(fabric, routes);
  // Whole or not at all; a failure is OutputError: exit 74 with the path and the reason.
  if (!dot_path.empty()) write_output_file(dot_path, to_dot(fabric));
  const std::string routing =
      std::string(to_string(routes.algorithm())) + ", " + sc.routing.load_balancing;
  if (json) {
    std::cout << topo_json(s, m, routing, partition).dump(2) << "\n";
    return kExitOk;
  }
  print_topo(std::cout, s, m, routing, partition);
  return kExitOk;
}

}  // namespace fabricsim
