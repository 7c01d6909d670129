// `fabricsim topo` as a library call: a scenario's fabric built and routed, with its summary (the
// cost proxy included), its metrics and, when asked, its split over the ranks of a parallel run.
// sim/report/topo_report.hpp prints what this returns; the CLI only parses and prints.
#pragma once

#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/config/scenario.hpp"
#include "sim/parallel/partition.hpp"
#include "sim/report/report.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/metrics.hpp"

namespace fabricsim {

/// `topo --partitions N [--partition-method M]`: parts = 0 when not asked for.
struct TopoPartitionOptions {
  int parts = 0;
  PartitionMethod method = PartitionMethod::kAuto;
};

/// The fabric cannot be split as TopoPartitionOptions asks; what() is partition_fabric's
/// reason (too many parts, a zero-delay cut link, no METIS).
class TopoPartitionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// What `topo` prints about a fabric.
struct TopoView {
  Fabric fabric;
  std::optional<Partition> partition;  ///< when TopoPartitionOptions::parts > 0
  FabricSummary summary;               ///< as results.json's `fabric`, with the cost proxy
  FabricMetrics metrics;               ///< max-flow bisection, diameter, path diversity
  std::string routing;                 ///< "ALGORITHM, LOAD_BALANCING"
};

/// Builds the fabric of `sc`, splits it as `partition` asks, routes it and measures it. The
/// scenario's and the fabric's warnings go to `warnings` (one line each) once it is routed.
/// Throws TopoPartitionError when the fabric cannot be split as asked, before routing (and
/// before any warning is written); ConfigError for a fabric
/// that cannot be built or routed, or a cost model that does not read (exit 2).
TopoView topo_view(const Scenario& sc, const TopoPartitionOptions& partition,
                   std::ostream& warnings);

}  // namespace fabricsim
