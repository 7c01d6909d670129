// The registry of collective algorithms: one entry per algorithm names the collectives it
// serves, builds its transfer DAG (packet mode), counts its transfers, says which NCCL algorithm
// of the cost model it is (whether `algorithm: auto` may pick it, and whose latencies it takes),
// and builds its flows (flow mode). build_collective, estimate_transfers, plan_size,
// build_collective_flows, estimate_flows and the run's checks look algorithms up here; the
// built-ins (ring, tree, halving_doubling, p2p, nvls, nvls_tree, pat, collnet_direct,
// collnet_chain) are registered in
// algorithm_registry.cpp, one line each, and a new algorithm is one more
// register_collective_algorithm call (from a library or a program: nothing else needs editing).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectives/flow_plan.hpp"
#include "collectives/nccl_model.hpp"
#include "collectives/plan.hpp"
#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// One collective algorithm.
struct CollectiveAlgorithm {
  /// The workload.algorithm name (lower case, as scenarios spell it).
  std::string name;
  /// The nccl-tests collectives it runs (all_reduce, all_gather, reduce_scatter, broadcast,
  /// reduce, alltoall, sendrecv).
  std::vector<std::string> collectives;
  /// The DAG of the whole collective, every channel, before build_collective frames each
  /// transfer's payload in the protocol's lines and sets its delays (plan.hpp build_collective:
  /// the arguments are already checked; channel c's transfers should use flow id c).
  using Build = std::function<TransferDag(const RankLayout& layout, const CollectiveSpec& spec,
                                          int64_t buffer_count, int elem_bytes)>;
  Build build;
  /// How many transfers `build` makes for one channel carrying `channel_bytes` bytes (an upper
  /// bound is fine): what a run checks before it commits memory (plan.hpp estimate_transfers).
  using EstimateTransfers = std::function<int64_t(
      const RankLayout& layout, const CollectiveSpec& spec, int64_t channel_bytes, int elem_bytes)>;
  EstimateTransfers estimate_transfers;
  /// The algorithm of NCCL's cost model it is (nccl_model.hpp): set, `algorithm: auto` may pick
  /// it through NCCL's selection (in NCCL's own order), NCCL_ALGO may exclude it, and its step
  /// and launch latencies are NCCL's for it. Unset: never chosen by auto, and Ring's latencies.
  std::optional<NcclAlgo> nccl_algo;
  /// Whether plan_size gives it NCCL's chunk size (CollectiveSpec::chunk_bytes); false: 0, the
  /// whole channel's part in one go.
  bool chunked = true;
  /// The flow mode's flows (flow_plan.hpp build_collective_flows, whose argument checks the
  /// hook does itself); empty: the flow mode refuses the algorithm (packet mode only).
  using BuildFlows =
      std::function<TransferDag(const RankLayout& layout, const CollectiveSpec& spec,
                                int64_t buffer_count, int elem_bytes, const HopLatency& hop)>;
  BuildFlows build_flows;
  /// How many transfers build_flows makes (flow_plan.hpp estimate_flows); empty: channels ×
  /// (ranks + 1).
  using EstimateFlows =
      std::function<int64_t(const RankLayout& layout, const CollectiveSpec& spec)>;
  EstimateFlows estimate_flows;

  /// Whether it runs `collective`.
  bool serves(const std::string& collective) const;
};

/// Adds `algorithm` to the registry, after the ones already there. Throws std::invalid_argument
/// for an empty name, a name already registered, no collectives, or no build /
/// estimate_transfers hook.
void register_collective_algorithm(CollectiveAlgorithm algorithm);

/// The algorithm named `name`, or nullptr. Entries never move once registered.
const CollectiveAlgorithm* find_collective_algorithm(const std::string& name);

/// Every registered algorithm's name, in registration order (built-ins first: ring, tree,
/// halving_doubling, p2p, nvls, nvls_tree, pat, collnet_direct, collnet_chain).
std::vector<std::string> collective_algorithm_names();

/// The message with which the flow mode refuses an algorithm without flows, e.g. "the flow mode
/// runs NCCL's algorithms (ring, tree, p2p); halving_doubling needs the packet mode" (the
/// algorithms with flows listed in registration order).
std::string flow_mode_refusal(const std::string& algorithm);

}  // namespace fabricsim
