// topology.link_events as a packet-mode run does them: each item resolved against the fabric
// into link state changes at simulated times, and the routes every node moves to
// routing.reconvergence_delay after each change of the set of links that are down.
//
// The model (docs/model.md, "Links failing during the run"):
//  - A link going down loses what waits in its two egress queues and the frames on the wire;
//    a frame sent to it later is lost too (counted as link_down_drops at the link).
//  - The switch at either end stops choosing that port at once where it has another equal-cost
//    one: the local fast failover of ECMP groups and InfiniBand's Fast Link Fault Recovery
//    (NVIDIA, "SHIELD", InfiniBand cluster bring-up procedure). Every other node keeps its
//    routes until routing.reconvergence_delay after the change (BGP, the subnet manager):
//    from then on the routes of the fabric without the link, as topology.failed_links makes
//    them.
//  - A link coming back carries frames at once and joins the routes after the same delay.
//  - A rate change takes effect at the next frame the port starts; routes do not change.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/scenario.hpp"
#include "sim/report/report.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

class Network;

/// One direction-pair change of one link at one time.
struct LinkChange {
  enum class Kind : uint8_t { kDown, kUp, kRate };
  int64_t at_ps = 0;
  size_t item = 0;   ///< its topology.link_events index
  std::string link;  ///< "leaf0-spine1", "#i" added when parallel links join the two nodes
  VertexId a = 0, b = 0;
  uint16_t port_a = 0, port_b = 0;  ///< the link's port index at a and at b
  Kind kind = Kind::kDown;
  int64_t rate_bps = 0;      ///< kRate, or kUp at another rate than before; 0 = unchanged
  bool from_switch = false;  ///< made by a `switch:` item
  bool unrouted = false;     ///< down, and a host's last link: the routes cannot avoid it
};

/// The routes every node uses from `at_ps` on.
struct RouteEpoch {
  int64_t at_ps = 0;
  int64_t change_ps = 0;  ///< the time of the changes it follows
  /// nullptr: the scenario's own routes (no link down). Owned by the LinkPlan.
  const RoutingTable* routes = nullptr;
  bool cut = false;      ///< the links down cut the fabric: no routes avoid them, the old stay
  std::string cut_pair;  ///< then: "host3 cannot reach host0"
};

struct LinkPlan {
  int64_t reconvergence_ps = 0;
  std::vector<LinkChange> changes;  ///< by time, then item order
  std::vector<RouteEpoch> epochs;   ///< by time
  std::vector<std::unique_ptr<RoutingTable>> tables;
  /// Warnings as config_warning() words them (a bare name of one of several parallel links).
  std::vector<std::string> warnings;
  bool empty() const { return changes.empty(); }
};

/// Resolves sc.topology.link_events against `fabric` (routed by `routes`): flaps expanded,
/// switches into their links, the route tables of each set of links down built. Throws
/// ConfigError (exit 2) at the item's key: a link or switch that does not exist (with a "did you
/// mean"), a link of topology.failed_links, a link taken down twice or brought up while up, a rate
/// above the link's own, a missing routing.reconvergence_delay, or tables over half the memory
/// budget.
LinkPlan plan_link_events(const Scenario& sc, const Fabric& fabric, const RoutingTable& routes);

/// Schedules the plan on `net` (before the run starts; `base` = the routes it was built with).
void schedule_link_events(const LinkPlan& plan, Network& net, const RoutingTable& base);

/// results.json's `link_events` after the run: the changes, the packets each link lost, and the
/// longest stall of a queue pair (`stall`, merged over MPI ranks by the caller).
/// `end_ps`: when the run ended (changes after it did not happen).
LinkEventsReport link_events_report(const LinkPlan& plan, const Network& net,
                                    const QpStallRow& stall, int64_t end_ps);

}  // namespace fabricsim
