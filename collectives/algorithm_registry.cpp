#include "collectives/algorithm_registry.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <utility>

#include "collectives/builtin_algorithms.hpp"
#include "sim/core/choices.hpp"

namespace fabricsim {

namespace {

using namespace builtin;

// The registry, built-ins first. A deque: entries never move, so pointers handed out stay valid.
// Building it makes the built-in names valid workload.algorithm values (register_choice), in
// this order.
std::deque<CollectiveAlgorithm>& registry() {
  static std::deque<CollectiveAlgorithm> algorithms = [] {
    const std::vector<std::string> ring_collectives = {"all_reduce", "all_gather", "reduce_scatter",
                                                       "broadcast", "reduce"};
    // clang-format off
    // name, collectives, DAG, transfers, NCCL algorithm, chunked, flows, flow count
    std::deque<CollectiveAlgorithm> builtin{
        {"ring", ring_collectives, ring_dag, ring_transfers, NcclAlgo::kRing, true, nccl_flows, ring_flows},
        {"tree", {"all_reduce"}, tree_dag, tree_transfers, NcclAlgo::kTree, true, nccl_flows, tree_flows},
        {"halving_doubling", {"all_reduce"}, halving_doubling_dag, halving_doubling_transfers, std::nullopt, false, {}, {}},
        {"p2p", {"alltoall", "sendrecv"}, p2p_dag, p2p_transfers, std::nullopt, false, p2p_flows, p2p_flow_count},
        {"nvls", {"all_reduce"}, nvls_dag, nvls_transfers, NcclAlgo::kNvls, true, {}, {}},
        {"nvls_tree", {"all_reduce"}, nvls_tree_dag, nvls_tree_dag_transfers, NcclAlgo::kNvlsTree, true, {}, {}},
        {"pat", {"all_gather", "reduce_scatter"}, pat_dag, pat_dag_transfers, NcclAlgo::kPat, true, {}, {}},
        {"collnet_direct", {"all_reduce"}, collnet_direct_dag, collnet_direct_dag_transfers, NcclAlgo::kCollNetDirect, true, {}, {}},
        {"collnet_chain", {"all_reduce"}, collnet_chain_dag, collnet_chain_dag_transfers, NcclAlgo::kCollNetChain, true, {}, {}},
    };
    // clang-format on
    for (const CollectiveAlgorithm& a : builtin) register_choice("workload.algorithm", a.name);
    return builtin;
  }();
  return algorithms;
}

/// The built-in names are valid before main() runs, so a scenario loaded before anything asks
/// the registry (the loader reads the names from sim/core/choices.hpp) finds them.
[[maybe_unused]] const bool kBuiltinAlgorithmsRegistered = (registry(), true);

}  // namespace

bool CollectiveAlgorithm::serves(const std::string& collective) const {
  return std::find(collectives.begin(), collectives.end(), collective) != collectives.end();
}

void register_collective_algorithm(CollectiveAlgorithm algorithm) {
  if (algorithm.name.empty()) {
    throw std::invalid_argument("register_collective_algorithm: empty name");
  }
  if (find_collective_algorithm(algorithm.name) != nullptr) {
    throw std::invalid_argument("register_collective_algorithm: '" + algorithm.name +
                                "' is already registered");
  }
  if (algorithm.collectives.empty() || !algorithm.build || !algorithm.estimate_transfers) {
    throw std::invalid_argument("register_collective_algorithm: '" + algorithm.name +
                                "' needs its collectives, a build and an estimate_transfers hook");
  }
  register_choice("workload.algorithm", algorithm.name);
  registry().push_back(std::move(algorithm));
}

const CollectiveAlgorithm* find_collective_algorithm(const std::string& name) {
  for (const CollectiveAlgorithm& a : registry()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<std::string> collective_algorithm_names() {
  std::vector<std::string> names;
  for (const CollectiveAlgorithm& a : registry()) names.push_back(a.name);
  return names;
}

std::string flow_mode_refusal(const std::string& algorithm) {
  std::string with_flows;
  for (const CollectiveAlgorithm& a : registry()) {
    if (a.build_flows) with_flows += (with_flows.empty() ? "" : ", ") + a.name;
  }
  return "the flow mode runs NCCL's algorithms (" + with_flows + "); " + algorithm +
         " needs the packet mode";
}

}  // namespace fabricsim
