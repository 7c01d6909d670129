// `fabricsim topo`: a fabric's shape, metrics, cost proxy and (with --partitions) its split over
// the ranks of a parallel run, as text or as one JSON object (--json).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "sim/parallel/partition.hpp"
#include "sim/report/report.hpp"
#include "topologies/metrics.hpp"

namespace fabricsim {

/// `topo --json`: kind, counts, oversubscription, bisection bandwidth (closed form and
/// max-flow, bit/s), diameter, path diversity, `routing` ("ALGORITHM, LOAD_BALANCING"), nodes by
/// role, links by class, oversubscription by tier, cost_usd (null without a cost model) and,
/// when given, the partition.
nlohmann::ordered_json topo_json(const FabricSummary& s, const FabricMetrics& m,
                                 const std::string& routing,
                                 const std::optional<Partition>& partition);

/// `topo`'s text: the same facts, one line each, then the partition's parts, cut links,
/// lookahead and imbalance when given.
void print_topo(std::ostream& os, const FabricSummary& s, const FabricMetrics& m,
                const std::string& routing, const std::optional<Partition>& partition);

}  // namespace fabricsim
