#include "sim/run/deadlock_advice.hpp"
#include "topologies/family.hpp"

#include <algorithm>

#include "sim/core/units.hpp"

namespace fabricsim {

namespace {

/// `v` as a YAML flow list: [3, 4].
std::string flow_list(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

std::vector<DeadlockFix> deadlock_fixes(const Scenario& sc, const std::string& fabric_kind) {
  const bool ib = sc.transport == "infiniband";
  const int data = sc.nic.traffic_class;
  std::vector<int> lossless = sc.pfc.priorities;
  if (lossless.empty()) lossless = {data};
  // A free class: not the data's, not the CNPs', not lossless already; 4 first, as the shipped
  // -fixed scenarios use it.
  int spare = -1;
  for (const int c : {4, 5, 2, 1, 0, 6}) {
    const bool taken = c == data || (sc.dcqcn.enabled && c == sc.dcqcn.cnp_traffic_class) ||
                       std::find(lossless.begin(), lossless.end(), c) != lossless.end();
    if (!taken) {
      spare = c;
      break;
    }
  }
  std::vector<int> with_spare = lossless;
  with_spare.push_back(spare);
  std::sort(with_spare.begin(), with_spare.end());
  const auto with_class = [&](const std::string& key) {
    std::vector<std::string> sets = {key + "=" + std::to_string(spare)};
    if (!ib) sets.push_back("pfc.priorities=" + flow_list(with_spare));  // both lossless
    return sets;
  };

  std::vector<DeadlockFix> fixes;
  const FabricFamily* family = find_fabric_family(fabric_kind);
  if (family != nullptr && family->dimension_ordered) {
    if (sc.routing.dateline_class < 0 && spare >= 0) {
      fixes.push_back({with_class("routing.dateline_class"),
                       "a dateline: packets that cross a ring's wraparound link move to class " +
                           std::to_string(spare) +
                           ", lossless too, so no ring of one class closes "
                           "(scenarios/pfc-deadlock-torus-fixed.yaml)"});
    }
    if (sc.topology.wraparound) {
      fixes.push_back({{"topology.wraparound=false"},
                       "a mesh: dimension-order routes on it cannot close a cycle, at the cost "
                       "of longer paths and half the bisection"});
    }
  } else {
    // A Clos: up-down (valley-free) routes cannot deadlock; only bounced routes close a cycle.
    if (sc.routing.bounce_class < 0 && spare >= 0 && !ib) {
      fixes.push_back({with_class("routing.bounce_class"),
                       "a bounce class: a packet a switch sends up again after it came down "
                       "moves to class " +
                           std::to_string(spare) +
                           ", lossless too, so bounced packets never wait on the class they came "
                           "down in (Tagger; scenarios/pfc-deadlock-clos-bounce-fixed.yaml)"});
    }
    if (!sc.topology.failed_links.empty()) {
      fixes.push_back({{},
                       "the bounces come from routing around the " +
                           std::to_string(sc.topology.failed_links.size()) +
                           " topology.failed_links: repair them, or route up-down only "
                           "(routing.algorithm: up_down) where every pair still has an up-down "
                           "path"});
    } else if (sc.routing.algorithm == "ecmp") {
      fixes.push_back({{"routing.algorithm=up_down"}, "valley-free routes: no bounce"});
    }
  }
  if (!ib && !sc.pfc.watchdog) {
    fixes.push_back({{"pfc.watchdog=true"},
                     "the PFC watchdog breaks the cycle after pfc.watchdog_detection_time (" +
                         format_time(sc.pfc.watchdog_detection_time_ps) +
                         ") by dropping the stormed queues' frames (watchdog_action: drop) or "
                         "ignoring PAUSE (forward). A stopgap, not a fix: the routes still close "
                         "the cycle, so it forms again and the watchdog fires again and again; "
                         "flows stall, lose packets and retransmit, can take orders of magnitude "
                         "longer than with a fix above, and may give up (exit 4)"});
  }
  return fixes;
}

}  // namespace fabricsim
