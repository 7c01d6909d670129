// `fabricsim run`, `validate` and `topo`: wiring only (parse, call the run library, print).
// The run library (sim/run/run.hpp: load, prepare, simulate, report) is included for the
// subcommands that call it (sweep, calibrate).
#pragma once

#include <atomic>
#include <string>

#include "sim/run/run.hpp"
#include "sim/run/topo_view.hpp"

namespace fabricsim {

int cmd_run(const RunOptions& opts, const std::atomic<bool>* interrupt);
int cmd_validate(const RunOptions& opts);
/// `topo`: topo_view() printed. Exit 2 (bad input) when the fabric cannot be split as asked
/// (partition_fabric's std::invalid_argument: too many parts, a zero-delay cut link, no METIS).
int cmd_topo(const RunOptions& opts, const std::string& dot_path, bool json,
             const TopoPartitionOptions& partition = {});

}  // namespace fabricsim
