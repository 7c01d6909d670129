#include "sim/cli/run.hpp"

#include <iostream>
#include <optional>
#include <string>

#include "sim/config/cost_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/report/output_file.hpp"
#include "sim/report/topo_report.hpp"
#include "sim/run/run_command.hpp"
#include "sim/run/topo_view.hpp"
#include "topologies/fabric_graph.hpp"

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
  std::optional<TopoView> view;
  try {
    view.emplace(topo_view(sc, partition_opts, std::cerr));
  } catch (const TopoPartitionError& e) {
    std::cerr << "fabricsim topo: --partitions " << partition_opts.parts << ": " << e.what()
              << "\n";
    return kExitBadInput;
  }
  // Whole or not at all; a failure is OutputError: exit 74 with the path and the reason.
  if (!dot_path.empty()) write_output_file(dot_path, to_dot(view->fabric));
  if (json) {
    std::cout << topo_json(view->summary, view->metrics, view->routing, view->partition).dump(2)
              << "\n";
    return kExitOk;
  }
  print_topo(std::cout, view->summary, view->metrics, view->routing, view->partition);
  return kExitOk;
}

}  // namespace fabricsim
