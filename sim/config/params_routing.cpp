// The `routing:` section's parameters (RoutingConfig, scenario.hpp): its table and the
// dateline's rule against nic.traffic_class.
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

const Choices kRoutingAlgorithms{
    "routing algorithm", {"auto", "ecmp", "up_down", "dimension_order"}, {}, {}};
// The policies' table is loadbalance/load_balancer.cpp's.
const Choices kLoadBalancing{"load balancing",
                             [] {
                               std::vector<std::string> names;
                               for (const LbDef& d : load_balancers()) names.push_back(d.name);
                               return names;
                             }(),
                             {},
                             {}};
const Condition kAdaptive{"routing.load_balancing", "adaptive flowlet",
                          [](const Scenario& s) { return s.routing.load_balancing; }};
const Condition kFlowlet{"routing.load_balancing", "flowlet",
                         [](const Scenario& s) { return s.routing.load_balancing; }};
// A flowlet gap is a few us (Junos: 16 us default, 16 us to 32 ms); 1 s bounds a typo.
const QuantitySpec kFlowletGap{
    "time", "16us", parse_time_ps, 1, 1'000'000'000'000, "a positive time up to 1s"};
const QuantitySpec kArThreshold{
    "size", "4KB", parse_size_bytes, 0, int64_t{1} << 36, "a size from 0B to 64GiB"};
const Condition kWraparound{
    "topology.wraparound", "true",
    [](const Scenario& s) { return std::string(s.topology.wraparound ? "true" : "false"); },
    "a mesh (topology.wraparound: false) has no wraparound links for a dateline to cut"};

// Routing protocols reconverge in microseconds (local failover) to seconds (BGP timers).
const QuantitySpec kReconvergence{
    "time", "1ms", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};
// Given, even as [] (the run to compare with, e.g. --set 'topology.link_events=[]').
const Condition kLinkEvents{
    "topology.link_events", "given",
    [](const Scenario& s) {
      return std::string(s.origins.count("topology.link_events") ? "given" : "not given");
    },
    "without link events no link goes down during the run"};
constexpr auto kRouting = &Scenario::routing;
using R = RoutingConfig;

}  // namespace

// clang-format off
std::span<const Field> routing_params() {
  static const Field rows[] = {
  {"routing", "algorithm", false, Choice(kRoutingAlgorithms), at<kRouting, &R::algorithm>,
   "auto = up_down on Clos fabrics, dimension_order on tori"},
  {"routing", "load_balancing", false, Choice(kLoadBalancing), at<kRouting, &R::load_balancing>,
   "per_flow (ECMP hash) | per_packet (spraying) | adaptive | flowlet (adaptive routing)"},
  {"routing", "flowlet_gap", false, Quantity(kFlowletGap), at<kRouting, &R::flowlet_gap_ps>,
   "flowlet: idle time after which a flow may take another port (Junos default 16us)",
   nullptr, nullptr, &kFlowlet},
  {"routing", "ar_threshold", false, Quantity(kArThreshold),
   at<kRouting, &R::ar_threshold_bytes>,
   "adaptive, flowlet: keep the hashed port unless another is emptier by more than this",
   nullptr, nullptr, &kAdaptive},
  {"routing", "reconvergence_delay", false, Quantity(kReconvergence),
   at<kRouting, &R::reconvergence_delay_ps>,
   "time until every node's routes avoid a link that went down (or use one back up); -1 = not "
   "given, required with topology.link_events that take a link down", nullptr, nullptr, &kLinkEvents},
  {"routing", "dateline_class", false,  // not nic.traffic_class (check_dateline)
   Int(0, 7), at<kRouting, &R::dateline_class>,
   "class a packet moves to across a wraparound link (Dally & Seitz 1987); -1 = none",
   "torus", nullptr, &kWraparound},
  {"routing", "bounce_class", false,  // a lossless class other than nic.traffic_class (sim/run)
   Int(0, 7), at<kRouting, &R::bounce_class>,
   "class a packet bounced up again moves to (after Tagger, CoNEXT 2017); -1 = off"},
  };
  return rows;
}
// clang-format on

/// A dateline moves packets to another class at a wraparound link: the class they start in
/// (nic.traffic_class) would leave the cycle of waits that it is there to break.
void check_dateline(const std::map<std::string, Value>& found, const Scenario& s) {
  const int dateline = s.routing.dateline_class;
  if (dateline < 0 || dateline != s.nic.traffic_class) return;
  // Suggest another lossless priority if pfc lists one, else the next class up that CNPs do
  // not use.
  int other = -1;
  for (const int p : s.pfc.priorities) {
    if (p != dateline && other < 0) other = p;
  }
  for (int step = 1; step < 8 && other < 0; ++step) {
    const int c = (dateline + step) % 8;
    if (c != s.dcqcn.cnp_traffic_class) other = c;
  }
  found.at("routing.dateline_class")
      .fail("dateline_class " + std::to_string(dateline) +
            " is the class packets start in (nic.traffic_class); pick another lossless class, "
            "e.g. " +
            std::to_string(other));
}

}  // namespace fabricsim::config_detail
