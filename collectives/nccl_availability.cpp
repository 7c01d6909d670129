// Which of NCCL's algorithms a communicator has (NVLS, NVLSTree, PAT, CollNet) and NCCL's NVLS
// graph: the rules of tuning.cc, search.cc, nvls.cc and init.cc that turn an algorithm off.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "collectives/nccl_model.hpp"

namespace fabricsim {
namespace {

// search.cc sm90SpeedArrayIntra: the speeds (GB/s per channel) the graph search tries on SM90
// without a network, fastest first.
constexpr double kSm90SpeedArrayIntra[] = {60.0, 50.0, 40.0, 30.0, 24.0,
                                           20.0, 15.0, 12.0, 6.0,  3.0};

}  // namespace

NcclNvlsGraph nccl_nvls_graph(int gpus, double nvlink_GBps, double nic_GBps) {
  if (gpus < 2 || !(nvlink_GBps > 0) || nic_GBps < 0) return {};
  // ncclTopoCompute: totalBw × ngpus / (ngpus − 1) for patterns other than the ring, and the
  // first speed tried is the largest with speed × minChannels within it.
  const double total = nvlink_GBps * gpus / (gpus - 1);
  for (double speed : kSm90SpeedArrayIntra) {
    if (speed > nvlink_GBps || speed * gpus > total) continue;
    // Across servers each channel's head also sends and receives the speed through its NIC.
    if (nic_GBps > 0 && speed > nic_GBps + 1e-9) continue;
    // ncclTopoSearchTryNvls: each of the `gpus` channels takes `speed` on every GPU's NVLink,
    // in each direction, and twice on its head's.
    if ((gpus + 1) * speed <= nvlink_GBps + 1e-9) return {gpus, speed};
  }
  return {};
}

std::string nccl_nvls_unavailable(int nvls_enable, bool nvswitch, int compute_capability,
                                  int gpus_per_node, int nnodes) {
  if (nvls_enable == 0) return "NCCL_NVLS_ENABLE (nccl.nvls_enable) is 0";
  if (!nvswitch) return "NVLS needs an NVSwitch, and these GPUs have none";
  if (compute_capability < 90) {
    return "NVLS needs compute capability 9.0 or above (Hopper), and these GPUs have " +
           std::to_string(compute_capability / 10) + "." + std::to_string(compute_capability % 10);
  }
  if (gpus_per_node <= 2) {
    return "NCCL turns NVLS off with 2 GPUs or fewer per server, and this has " +
           std::to_string(gpus_per_node);
  }
  if (nnodes > 1) {
    return "fabricsim runs NVLS within one server (across servers NCCL runs NVLSTree, or NVLS "
           "with CollNet, which is not modelled), and this spans " +
           std::to_string(nnodes) + " servers";
  }
  return "";
}

std::string nccl_nvls_tree_unavailable(int nvls_enable, bool nvswitch, int compute_capability,
                                       int gpus_per_node, int nnodes) {
  const std::string hw =
      nccl_nvls_unavailable(nvls_enable, nvswitch, compute_capability, gpus_per_node, 1);
  if (!hw.empty()) return hw;
  if (nnodes <= 1) return "NCCL runs NVLSTree across servers only, and this is one server";
  return "";
}

std::string nccl_pat_unavailable(const NcclTuneInputs& in) {
  const NcclTuning& t = tuning_of(in);
  if (!t.pat) return "NCCL " + t.name + " has no PAT (it came with 2.23)";
  if (in.nranks != in.nnodes) {
    return "NCCL runs PAT with one GPU a server only, and this has " +
           std::to_string(in.nranks / std::max(1, in.nnodes)) + " a server";
  }
  if (!in.pat_enabled) return "PAT is off for this run";
  return "";
}

std::string nccl_collnet_unavailable(NcclAlgo a, int collnet_enable, bool infiniband, bool nvswitch,
                                     int gpus_per_node, int nnodes) {
  if (a != NcclAlgo::kCollNetDirect && a != NcclAlgo::kCollNetChain) {
    throw std::invalid_argument("nccl_collnet_unavailable: not a CollNet algorithm");
  }
  if (collnet_enable != 1) {
    return "CollNet needs NCCL_COLLNET_ENABLE=1 (nccl.collnet_enable: 1) and SHARP in the "
           "switches";
  }
  if (!infiniband) {
    return "CollNet runs on SHARP, the in-network reduction of InfiniBand switches, and this "
           "fabric's transport is not infiniband";
  }
  if (nnodes < 2) {
    return "NCCL turns CollNet off below NCCL_COLLNET_NODE_THRESHOLD (2) servers, and this is "
           "one server";
  }
  if (gpus_per_node > 8) {
    return "NCCL runs CollNet with at most 8 GPUs a server (NCCL_MAX_DIRECT_ARITY + 1), and "
           "this has " +
           std::to_string(gpus_per_node);
  }
  if (a == NcclAlgo::kCollNetDirect && !nvswitch) {
    return "NCCL runs CollNetDirect on NVSwitch servers only, and these GPUs have no NVSwitch";
  }
  return "";
}

}  // namespace fabricsim
