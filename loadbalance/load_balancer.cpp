#include "loadbalance/load_balancer.hpp"

#include <stdexcept>

namespace fabricsim {

namespace {

constexpr LbDef kTable[] = {
    {"per_flow", "ECMP: a hash of the flow picks the port, the same for all its packets",
     LbKind::kPerFlow},
    {"per_packet", "spraying: a hash of the flow and the packet number picks the port",
     LbKind::kPerPacket},
    {"adaptive",
     "adaptive routing per packet: the least occupied candidate port (routing.ar_threshold)",
     LbKind::kAdaptive},
    {"flowlet",
     "adaptive routing per flowlet: a flow keeps its port until idle for routing.flowlet_gap",
     LbKind::kFlowlet},
};

}  // namespace

std::span<const LbDef> load_balancers() {
  return kTable;
}

LbKind load_balancer_kind(const std::string& name) {
  std::string names;
  for (const LbDef& d : kTable) {
    if (name == d.name) return d.kind;
    names += names.empty() ? d.name : std::string(", ") + d.name;
  }
  throw std::invalid_argument("load balancing '" + name + "' is none of " + names);
}

LoadBalancer::LoadBalancer(const LbSettings& settings, size_t nodes) : s_(settings) {
  if (s_.flowlet_gap_ps <= 0) throw std::invalid_argument("LoadBalancer: flowlet_gap_ps <= 0");
  if (s_.threshold_bytes < 0) throw std::invalid_argument("LoadBalancer: threshold_bytes < 0");
  if (s_.kind == LbKind::kFlowlet) tables_.resize(nodes);
}

LoadBalancer::Flowlet& LoadBalancer::flowlet_slot(uint32_t node, uint32_t flow_hash) {
  std::vector<Flowlet>& t = tables_[node];
  if (t.empty()) t.resize(kFlowletSlots);
  return t[flow_hash % kFlowletSlots];
}

}  // namespace fabricsim
