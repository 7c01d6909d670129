// The values of a scenario's choice keys that components register: each fabric family its
// topology.kind (topologies/registry.cpp), each collective algorithm its workload.algorithm name
// (collectives/algorithm_registry.cpp), built-in or registered from outside the library. The
// loader (sim/config) reads them here, so a name is written once, by its component. The
// registries register their built-in names when their tables are built, before main(): a binary
// that loads scenarios sees them when it links the registry's code (a static library's object
// is linked when something in it is used: any binary that builds a fabric or plans a
// collective), and none of them otherwise.
#pragma once

#include <string>
#include <vector>

namespace fabricsim {

/// Adds `value` to the valid values of the choice key `key_path`, after those registered
/// before it: "topology.kind" for a fabric family (register_fabric_family calls it; its
/// scenarios can use the keys whose condition names no kind: topology.failed_links, link.*,
/// ...), "workload.algorithm" for a collective algorithm (register_collective_algorithm),
/// "switch.scheduler" for an egress scheduler (register_scheduler), "nic.congestion_control"
/// for a queue pair's congestion control (register_congestion_control). Does
/// nothing when the value is known already. Throws std::invalid_argument for any other key.
void register_choice(const std::string& key_path, const std::string& value);

/// The values registered for `key_path`, in the order registered; empty for a key that takes
/// none.
std::vector<std::string> registered_choices(const std::string& key_path);

}  // namespace fabricsim
