#include "collectives/nccl_plan.hpp"

#include <stdexcept>

#include "collectives/tree.hpp"

namespace fabricsim {

namespace {

// Elements the plan.hpp builder cuts, from nccl-tests' per-rank count.
int64_t builder_count(const std::string& collective, const NcclTestsSize& size, int ranks) {
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") {
    return size.count * ranks;
  }
  return size.count;
}

NcclProto proto_of(const std::string& name) {
  if (name == "ll") return NcclProto::kLL;
  if (name == "ll128") return NcclProto::kLL128;
  return NcclProto::kSimple;
}

}  // namespace

SizePlan plan_size(const NcclRunSetup& setup, int64_t requested_bytes, int elem_bytes) {
  const int ranks = setup.layout.ranks;
  SizePlan plan;
  plan.size = nccl_tests_size(setup.collective, requested_bytes, elem_bytes, ranks);
  plan.buffer_count = builder_count(setup.collective, plan.size, ranks);

  const bool p2p = setup.collective == "alltoall" || setup.collective == "sendrecv";
  plan.algorithm = setup.algorithm == "auto" ? (p2p ? "p2p" : "") : setup.algorithm;
  plan.protocol = setup.protocol == "auto" ? "" : setup.protocol;
  if (!plan.algorithm.empty() && !algorithm_supports(plan.algorithm, setup.collective)) {
    throw std::invalid_argument("algorithm " + plan.algorithm + " does not run " +
                                setup.collective);
  }
  // NCCL's cost model decides what is left to decide, among what the settings allow and what
  // is fixed; it only knows Ring and Tree.
  const bool nccl_algo =
      plan.algorithm.empty() || plan.algorithm == "ring" || plan.algorithm == "tree";
  if (nccl_algo) {
    NcclTuneInputs in = setup.tune;
    in.collective = setup.collective;
    NcclSettings s = setup.settings;
    if (!plan.algorithm.empty()) {
      s.algo.allowed = {plan.algorithm == "tree", plan.algorithm == "ring"};
    }
    if (!plan.protocol.empty()) {
      const NcclProto p = proto_of(plan.protocol);
      s.proto.allowed = {p == NcclProto::kLL, p == NcclProto::kLL128, p == NcclProto::kSimple};
      s.proto.set_by_user = true;
    }
    // As NCCL: filters that leave nothing for the collective fall back to Ring.
    const NcclChoice c = select(in, s, plan.size.size_bytes, NcclEmptyChoice::kRingFallback);
    plan.algorithm = to_string(c.algo);
    plan.protocol = to_string(c.proto);
    plan.nccl_model_time_us = c.time_us;
  } else if (plan.protocol.empty()) {
    plan.protocol = "simple";  // halving_doubling and p2p: NCCL's p2p path moves Simple steps
  }

  const NcclProto proto = proto_of(plan.protocol);
  const NcclAlgo algo = plan.algorithm == "tree" ? NcclAlgo::kTree : NcclAlgo::kRing;
  CollectiveSpec& spec = plan.spec;
  spec.collective = setup.collective;
  spec.algorithm = plan.algorithm;
  spec.channels = setup.channels;
  spec.root = setup.root;
  spec.wire_factor = wire_factor(proto);
  const int64_t step = step_data_bytes(proto, nccl_buffsize_bytes(proto, setup.settings));
  int64_t chunk = step;
  if (proto == NcclProto::kSimple && algo == NcclAlgo::kRing &&
      (setup.collective == "all_reduce" || setup.collective == "all_gather" ||
       setup.collective == "reduce_scatter")) {
    chunk = step * (kNcclSteps / 2);
  }
  if (proto == NcclProto::kLL128 && plan.algorithm == "tree") {
    // Tree LL128 cuts smaller chunks when a channel would have too few for its depth.
    const int nodes = setup.tune.nnodes;
    const double ppn = static_cast<double>(ranks) / nodes;
    int log2_nodes = 0;
    while ((2 << log2_nodes) <= nodes) ++log2_nodes;
    const double steps = 1 + log2_nodes + 0.1 * ppn;
    const int64_t bytes = plan.size.size_bytes;
    const int64_t ch = setup.channels;
    while (static_cast<double>(bytes / (ch * chunk)) < steps * 64 / ppn && chunk > 131072) {
      chunk /= 2;
    }
    while (static_cast<double>(bytes / (ch * chunk)) < steps * 16 / ppn && chunk > 32768) {
      chunk /= 2;
    }
  }
  spec.chunk_bytes = plan.algorithm == "halving_doubling" || p2p ? 0 : chunk;
  spec.step_latency_ps =
      setup.step_latency_ps >= 0
          ? setup.step_latency_ps
          : static_cast<int64_t>(nccl_hw_latency_us(NcclHw::kNvlink, algo, proto) * 1e6 + 0.5);
  spec.launch_latency_ps =
      setup.launch_latency_ps >= 0
          ? setup.launch_latency_ps
          : static_cast<int64_t>(nccl_base_latency_us(algo, proto) * 1e6 + 0.5);
  if (setup.staged) {
    spec.staging_latency_ps = 2 * setup.pcie_latency_ps;
    spec.staging_rate_bps = setup.pcie_rate_bps;
  }
  return plan;
}

}  // namespace fabricsim
