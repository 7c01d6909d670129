#include "jobs/placement.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <utility>

#include "sim/core/choices.hpp"
#include "sim/core/rng.hpp"

namespace fabricsim {

namespace {

/// The free servers of each group, in server order: group -> servers.
std::map<int, std::vector<int>> free_by_group(const PlacementRequest& r) {
  std::map<int, std::vector<int>> out;
  for (size_t s = 0; s < r.free.size(); ++s) {
    if (r.free[s]) out[r.group[s]].push_back(static_cast<int>(s));
  }
  return out;
}

/// packed: as few groups as possible, as a topology-aware scheduler packs a job under the
/// fewest leaf switches. If one group can hold the whole job, the group with the fewest free
/// servers that can (best fit; the lowest index on a tie); otherwise whole groups, those with
/// the most free servers first (the lowest index on a tie), until the rest fits in one group,
/// which is then chosen by best fit. Within a group, the lowest-numbered free servers.
std::vector<int> packed(const PlacementRequest& r) {
  std::map<int, std::vector<int>> groups = free_by_group(r);
  std::vector<int> out;
  int need = r.servers;
  while (need > 0) {
    int best = -1;  // best fit among the groups that hold the rest
    for (const auto& [g, servers] : groups) {
      const int n = static_cast<int>(servers.size());
      if (n >= need && (best < 0 || n < static_cast<int>(groups[best].size()))) best = g;
    }
    if (best < 0) {  // none holds the rest: the fullest group whole
      for (const auto& [g, servers] : groups) {
        if (best < 0 || servers.size() > groups[best].size()) best = g;
      }
    }
    std::vector<int>& take = groups[best];
    const int n = std::min(need, static_cast<int>(take.size()));
    out.insert(out.end(), take.begin(), take.begin() + n);
    need -= n;
    groups.erase(best);
  }
  return out;
}

/// spread: one server from each group in turn (groups in index order, each its lowest-numbered
/// free server), round after round: a job over as many leaves as it has servers, up to all of
/// them.
std::vector<int> spread(const PlacementRequest& r) {
  std::map<int, std::vector<int>> groups = free_by_group(r);
  std::vector<int> out;
  for (size_t round = 0; static_cast<int>(out.size()) < r.servers; ++round) {
    for (const auto& [g, servers] : groups) {
      if (round < servers.size() && static_cast<int>(out.size()) < r.servers) {
        out.push_back(servers[round]);
      }
    }
  }
  return out;
}

/// random: a uniform choice of the free servers (a Fisher-Yates shuffle on the job's own
/// stream, sim/core/rng.hpp), as a scheduler ignoring the topology hands out nodes.
std::vector<int> random(const PlacementRequest& r) {
  std::vector<int> pool;
  for (size_t s = 0; s < r.free.size(); ++s) {
    if (r.free[s]) pool.push_back(static_cast<int>(s));
  }
  RngStream rng(r.seed, "job placement");
  for (size_t i = pool.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng.next() % i);
    std::swap(pool[i - 1], pool[j]);
  }
  pool.resize(static_cast<size_t>(r.servers));
  return pool;
}

std::deque<PlacementDef>& table() {
  static std::deque<PlacementDef> defs = [] {
    std::deque<PlacementDef> d{
        {"packed", "the fewest leaves: whole leaves first, the rest where it fits best", packed},
        {"spread", "one server per leaf in turn, over every leaf", spread},
        {"random", "free servers drawn at random (jobs[].seed)", random},
    };
    for (const PlacementDef& p : d) register_choice("jobs[].placement", p.name);
    return d;
  }();
  return defs;
}

/// The built-in names are valid before main() runs, so a scenario loaded before anything asks
/// the table (the loader reads the names from sim/core/choices.hpp) finds them.
[[maybe_unused]] const bool kBuiltinPlacementsRegistered = (table(), true);

}  // namespace

void register_placement(PlacementDef def) {
  if (def.name.empty()) throw std::invalid_argument("register_placement: empty name");
  if (find_placement(def.name) != nullptr) {
    throw std::invalid_argument("register_placement: '" + def.name + "' is already registered");
  }
  if (!def.choose)
    throw std::invalid_argument("register_placement: '" + def.name + "' chooses nothing");
  register_choice("jobs[].placement", def.name);
  table().push_back(std::move(def));
}

const PlacementDef* find_placement(const std::string& name) {
  for (const PlacementDef& d : table()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> placement_names() {
  std::vector<std::string> names;
  for (const PlacementDef& d : table()) names.push_back(d.name);
  return names;
}

std::vector<int> place(const std::string& name, const PlacementRequest& request) {
  const PlacementDef* def = find_placement(name);
  if (def == nullptr) throw std::invalid_argument("no placement policy named '" + name + "'");
  const int free = static_cast<int>(std::count(request.free.begin(), request.free.end(), true));
  if (request.servers < 1 || request.servers > free) {
    throw std::invalid_argument("the job needs " + std::to_string(request.servers) +
                                " servers and " + std::to_string(free) + " are free");
  }
  std::vector<int> out = def->choose(request);
  std::vector<bool> seen(request.free.size(), false);
  for (const int s : out) {
    if (s < 0 || static_cast<size_t>(s) >= request.free.size() || !request.free[s] || seen[s]) {
      throw std::invalid_argument("placement " + name + " chose server " + std::to_string(s) +
                                  ", which is not free or chosen twice");
    }
    seen[s] = true;
  }
  if (static_cast<int>(out.size()) != request.servers) {
    throw std::invalid_argument("placement " + name + " chose " + std::to_string(out.size()) +
                                " servers, not " + std::to_string(request.servers));
  }
  std::sort(out.begin(), out.end());  // ranks in server order, as a sorted host list gives them
  return out;
}

}  // namespace fabricsim
