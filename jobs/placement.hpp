// Job placement: which servers of a fabric a job gets, among those still free, as a cluster's
// scheduler would hand them out. The built-ins (packed, spread, random) are rows of a table; a
// policy defined elsewhere calls register_placement() before loading a scenario that names it.
//
// A fabric's servers are grouped by the first switch their first GPU's NIC is cabled to (a
// spine-leaf leaf, a fat-tree edge switch, a rail-optimized scalable unit's rail-0 leaf, a torus
// router): the unit a scheduler's topology plug-in packs into (Slurm's topology/tree "switches",
// https://slurm.schedmd.com/topology.html).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fabricsim {

/// What a policy chooses from.
struct PlacementRequest {
  int servers = 0;         ///< servers the job needs, >= 1
  std::vector<int> group;  ///< per server of the fabric: its group (leaf) index, >= 0
  std::vector<bool> free;  ///< per server: not taken by an earlier job
  uint64_t seed = 0;       ///< the job's random stream seed (random placement)
};

/// One policy: its name (a `jobs[].placement` value), one line on what it does, and the choice
/// itself: `request.servers` distinct free servers, in rank order. A policy may assume that
/// enough servers are free (place() checks it first).
struct PlacementDef {
  std::string name;
  std::string doc;
  std::function<std::vector<int>(const PlacementRequest&)> choose;
};

/// Adds a policy after the built-ins, and its name to the loader's `jobs[].placement` values.
/// Throws std::invalid_argument for an empty name, one registered already, or no `choose`.
void register_placement(PlacementDef def);
/// The policy `name`; nullptr when none. Entries never move once registered.
const PlacementDef* find_placement(const std::string& name);
/// The names in table order: packed, spread, random, then the registered ones.
std::vector<std::string> placement_names();

/// The servers policy `name` gives a job. Throws std::invalid_argument for an unknown policy,
/// fewer free servers than needed, or a policy returning a server not free, repeated, or the
/// wrong count.
std::vector<int> place(const std::string& name, const PlacementRequest& request);

}  // namespace fabricsim
