#include "collectives/nccl_plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "collectives/algorithm_registry.hpp"
#include "collectives/nvls.hpp"
#include "collectives/pat/pat.hpp"
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
  const CollectiveAlgorithm* fixed =
      plan.algorithm.empty() ? nullptr : find_collective_algorithm(plan.algorithm);
  // NCCL's cost model decides what is left to decide, among what the settings allow and what
  // is fixed; it only knows the algorithms registered with an NCCL algorithm (Ring and Tree).
  const bool nccl_algo = plan.algorithm.empty() || fixed->nccl_algo.has_value();
  if (nccl_algo) {
    NcclTuneInputs in = setup.tune;
    in.collective = setup.collective;
    NcclSettings s = setup.settings;
    if (!plan.algorithm.empty()) {
      for (int a = 0; a < kNcclNumAlgos; ++a) {
        s.algo.allowed[a] = static_cast<int>(*fixed->nccl_algo) == a;
      }
    }
    if (!plan.protocol.empty()) {
      const NcclProto p = proto_of(plan.protocol);
      s.proto.allowed = {p == NcclProto::kLL, p == NcclProto::kLL128, p == NcclProto::kSimple};
      s.proto.set_by_user = true;
    }
    // As NCCL: filters that leave nothing for the collective fall back to Ring (with any
    // protocol; a protocol the workload fixes stays fixed).
    const NcclChoice c = select(in, s, plan.size.size_bytes, NcclEmptyChoice::kRingFallback);
    plan.algorithm = to_string(c.algo);
    plan.nccl_model_time_us = c.time_us;
    if (plan.protocol.empty()) {
      plan.protocol = to_string(c.proto);
    } else if (plan.protocol != to_string(c.proto)) {
      plan.nccl_model_time_us =
          predicted_time_us(in, c.algo, proto_of(plan.protocol), plan.size.size_bytes);
    }
  } else if (plan.protocol.empty() && p2p) {
    // NCCL's p2p path (enqueue.cc addP2pToPlan): LL while a peer's bytes are at most
    // p2pnChannelsPerPeer × NCCL_P2P_LL_THRESHOLD (16 KiB) and LL is enabled, Simple
    // otherwise. p2pnChannelsPerPeer is the power of two above the fewest channels any peer
    // gets (ncclTopoComputeP2pChannels): NCCL_NCHANNELS_PER_NET_PEER, 2, as soon as a peer is
    // across the network (ncclTopoGetNchannels); inside one server, the channels here.
    const int64_t per_peer = plan.size.send_bytes / (setup.collective == "alltoall" ? ranks : 1);
    const int64_t per_peer_channels = setup.layout.servers() > 1 ? 2 : setup.channels;
    const bool ll_on = setup.settings.proto.allowed[static_cast<int>(NcclProto::kLL)];
    plan.protocol =
        ll_on && per_peer <= per_peer_channels * kNcclP2pLlThresholdBytes ? "ll" : "simple";
  } else if (plan.protocol.empty()) {
    plan.protocol = "simple";  // halving_doubling: MPI's algorithm, moved in Simple steps
  }

  const NcclProto proto = proto_of(plan.protocol);
  const CollectiveAlgorithm& chosen = *find_collective_algorithm(plan.algorithm);
  // An algorithm outside NCCL's cost model takes Ring's latencies.
  const NcclAlgo algo = chosen.nccl_algo.value_or(NcclAlgo::kRing);
  CollectiveSpec& spec = plan.spec;
  spec.collective = setup.collective;
  spec.algorithm = plan.algorithm;
  // Fewer channels for a small collective: NCCL drops channels while the bytes would give
  // each of its threads less than a threshold (enqueue.cc getChannnelThreadInfo: maxThreads
  // 512 for LL and Simple, 640 for LL128; thresholds NCCL_LL_THREAD_THRESHOLD 8 (× nRanks for
  // Ring), NCCL_LL128_THREAD_THRESHOLD 8, NCCL_SIMPLE_THREAD_THRESHOLD 64, tuning.cc).
  const int64_t threads = proto == NcclProto::kLL128 ? 640 : 512;
  int64_t threshold = proto == NcclProto::kSimple ? 64 : 8;
  if (proto == NcclProto::kLL && algo == NcclAlgo::kRing) threshold *= ranks;
  int channels = setup.channels;
  while (channels > 1 && plan.size.size_bytes < channels * threads * threshold) --channels;
  // NVLS and NVLSTree cut the buffer into one slice per GPU themselves (nvls.hpp, nvls_tree.hpp).
  const bool nvls = algo == NcclAlgo::kNvls || algo == NcclAlgo::kNvlsTree;
  spec.channels = nvls ? 1 : channels;
  spec.root = setup.root;
  spec.line_bytes = protocol_spec(proto).line_bytes;
  spec.line_data_bytes = protocol_spec(proto).data_bytes_per_line;
  if (algo == NcclAlgo::kNvls) {
    // NVLS moves its bytes at 5/6 of the NVLink bandwidth its graph has (tuning.cc's NVLS
    // ratio): each byte holds the NVLink 6/5 of a byte's time (nvls.hpp).
    spec.line_bytes = kNvlsLineBytes;
    spec.line_data_bytes = kNvlsLineDataBytes;
  }
  const int64_t step = step_data_bytes(proto, nccl_buffsize_bytes(proto, setup.settings));
  int64_t chunk = step;
  if (proto == NcclProto::kSimple && algo == NcclAlgo::kRing &&
      (setup.collective == "all_reduce" || setup.collective == "all_gather" ||
       setup.collective == "reduce_scatter")) {
    chunk = step * (kNcclSteps / 2);
  }
  if (proto == NcclProto::kSimple && algo == NcclAlgo::kTree) {
    // Tree Simple halves its chunk while a channel has too few for the tree's depth.
    const int64_t depth = tree_height(setup.layout.servers()) + setup.layout.gpus_per_server - 1;
    const int64_t bytes = plan.size.size_bytes, ch = channels;
    while (bytes / (ch * chunk) < depth * 8 && chunk > 131072) chunk /= 2;
    while (bytes / (ch * chunk) < depth * 4 && chunk > 65536) chunk /= 2;
    while (bytes / (ch * chunk) < depth && chunk > 32768) chunk /= 2;
  }
  if (proto == NcclProto::kLL128 && algo == NcclAlgo::kTree) {
    // Tree LL128 cuts smaller chunks when a channel would have too few for its depth.
    const int nodes = setup.tune.nnodes;
    const double ppn = static_cast<double>(ranks) / nodes;
    int log2_nodes = 0;
    while ((2 << log2_nodes) <= nodes) ++log2_nodes;
    const double steps = 1 + log2_nodes + 0.1 * ppn;
    const int64_t bytes = plan.size.size_bytes;
    const int64_t ch = channels;
    while (static_cast<double>(bytes / (ch * chunk)) < steps * 64 / ppn && chunk > 131072) {
      chunk /= 2;
    }
    while (static_cast<double>(bytes / (ch * chunk)) < steps * 16 / ppn && chunk > 32768) {
      chunk /= 2;
    }
  }
  if (algo == NcclAlgo::kNvls) {
    // enqueue.cc computeColl: one step (buffsize / NCCL_STEPS), at most 128 KiB, smaller while
    // the size is under 64, 8 or 2 rounds of every NVLS channel and head moving a chunk.
    const int64_t ops = int64_t{kNcclNvlsChannels} * ranks, bytes = plan.size.size_bytes;
    chunk = std::min(step, kNcclNvlsMaxChunkBytes);
    if (bytes < 64 * ops * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 8 * ops * chunk && chunk > 32768) chunk = 32768;
    if (bytes < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  }
  if (algo == NcclAlgo::kNvlsTree) {
    // enqueue.cc calcCollChunking (NCCL 2.28): nvlsChunkSize (128 KiB), at most 64 KiB from 4
    // nodes (NCCL_NVLSTREE_MAX_CHUNKSIZE unset), 64 KiB below 4 rounds of every NVLS channel and
    // head moving a chunk, 32 KiB below one.
    const int64_t ops = int64_t{kNcclNvlsChannels} * setup.layout.gpus_per_server;
    const int64_t bytes = plan.size.size_bytes;
    chunk = kNcclNvlsMaxChunkBytes;
    if (setup.tune.nnodes >= 4) chunk = std::min<int64_t>(chunk, 65536);
    if (bytes < 4 * ops * chunk && chunk > 65536) chunk = 65536;
    if (bytes < ops * chunk && chunk > 32768) chunk = 32768;
  }
  if (algo == NcclAlgo::kCollNetDirect || algo == NcclAlgo::kCollNetChain) {
    // enqueue.cc (2.20 computeColl): one Simple step (chunkSteps 1 outside Ring); Chain at most
    // 256 KiB. Halved while a channel has fewer than depth × 64 chunks (down to 128 KiB), × 8
    // (64 KiB), then depth × 8 (Direct) or depth (Chain) (32 KiB); Direct counts the chunks of
    // every head. depth: Chain the GPUs a server (collnetChain.depth = nRanks / nNodes), Direct
    // 2 (collnetDirect.depth with peers up or down, connect.cc).
    const bool direct = algo == NcclAlgo::kCollNetDirect;
    const int64_t heads = direct ? setup.layout.gpus_per_server : 1;
    const int64_t depth = direct ? 2 : setup.layout.gpus_per_server;
    const int64_t per = int64_t{channels} * heads, bytes = plan.size.size_bytes;
    chunk = direct ? step : std::min<int64_t>(262144, step);
    while (bytes / (per * chunk) < depth * 64 && chunk > 131072) chunk /= 2;
    while (bytes / (per * chunk) < depth * 8 && chunk > 65536) chunk /= 2;
    while (bytes / (per * chunk) < (direct ? depth * 8 : depth) && chunk > 32768) chunk /= 2;
  }
  if (algo == NcclAlgo::kPat) {
    // enqueue.cc calcCollChunking: one Simple step, halved while the size is under 32
    // (AllGather) or 16 (ReduceScatter) chunks of every channel, down to 64 KiB.
    chunk = pat_chunk_bytes(setup.collective == "all_gather", plan.size.size_bytes, channels, step);
  }
  spec.chunk_bytes = !chosen.chunked || p2p ? 0 : chunk;
  if (proto != NcclProto::kSimple && chosen.nccl_algo.has_value() && !p2p) {
    // LL and LL128 as their primitives run them. The GPU moves the bytes no faster than the
    // protocol's bus bandwidth in NCCL's own model (tuning.cc: LL a quarter or a third of the
    // graph's, at most llMaxBw; LL128 0.92 of it, 0.7 with one GPU a node), shared by the
    // channels that run, each at most the protocol's per-channel limit (perChMaxRingLL128Bw,
    // perChMaxTreeLL128Bw), paced on the wire with the protocol's flags. And the receiving GPU
    // forwards each line once its flag has arrived, every warp on its own (prims_ll.h,
    // prims_ll128.h): the pipeline unit is one warp's lines, 32 threads × the data of a
    // thread's load (src/device/primitives.h calcBytePerGrain: LL 8 bytes of a 16-byte line;
    // LL128 NCCL_LL128_SHMEM_ELEMS_PER_THREAD 8 words, 15 of every 16 data: 60 bytes), 256 and
    // 1920 bytes.
    NcclTuneInputs in = setup.tune;
    in.collective = setup.collective;
    const NcclAlgoProtoCost cost = nccl_tuned_cost(in, algo, proto);
    double channel_GBps = cost.bus_bw_GBps / channels;
    if (cost.channel_cap_GBps > 0) channel_GBps = std::min(channel_GBps, cost.channel_cap_GBps);
    // A tree's channel sends up and down at once, each of its bytes twice in NCCL's bus
    // bandwidth (tuning.cc: Tree's algorithm bandwidth is half its bus bandwidth): each of its
    // connections gets half.
    if (algo == NcclAlgo::kTree) channel_GBps *= 0.5;
    const double framing = static_cast<double>(spec.line_bytes) / spec.line_data_bytes;
    spec.pace_bps = std::llround(channel_GBps * 8e9 * framing);
    spec.stream_unit_bytes = 32 * (proto == NcclProto::kLL ? 8 : 60);
  }
  // NVLS's hwLat entry is the whole collective's latency on one node (tuning.cc: latency =
  // intraLat, baseLat 0 from 2.19; baseLat 23 µs and no hwLat in 2.18): paid once, as the
  // launch latency. NCCL's tables have no per-step latency for NVLS; its steps wait the
  // per-step NVLink latency of Simple (hwLat[NVLINK][Ring][Simple], 3.4 µs), the
  // synchronization every NCCL step of Simple pays. The release line's tables give both.
  // NVLSTree the same, its network hops simulated. PAT: baseLat 8 µs (the base of its 2.23-2.27
  // formula) and NCCL's 2.8 µs a rank (the ops a rank runs one after another) once, as the
  // launch; each step Tree Simple's hwLat (4 µs, the value 2.28's PAT row repeats).
  const NcclTuning& tuning = tuning_of(setup.tune);
  const bool pat = algo == NcclAlgo::kPat;
  const double step_us = nccl_hw_latency_us(setup.tune.intra_hw,
                                            nvls  ? NcclAlgo::kRing
                                            : pat ? NcclAlgo::kTree
                                                  : algo,
                                            proto, tuning);
  double launch_us = nccl_base_latency_us(algo, proto, tuning) +
                     (nvls ? nccl_hw_latency_us(NcclHw::kNvlink, algo, proto, tuning) : 0.0);
  if (pat) launch_us = (launch_us > 0 ? launch_us : 8.0) + 2.8 * ranks;
  // CollNet: NCCL's model adds the network latency once (interLat: hwLat[NET] 30-31 µs from
  // 2.19, 10.7-14 in 2.18, the SHARP operation through the plugin's proxy), on top of the
  // per-step NVLink latencies of the chain or the heads: the launch pays it here; the steps
  // (hwLat[NVLINK][CollNet*][Simple]) are simulated.
  if (algo == NcclAlgo::kCollNetDirect || algo == NcclAlgo::kCollNetChain) {
    launch_us += nccl_hw_latency_us(NcclHw::kNet, algo, proto, tuning);
    spec.collnet_join_ps = setup.switch_hop_ps;
  }
  spec.step_latency_ps = setup.step_latency_ps >= 0 ? setup.step_latency_ps
                                                    : static_cast<int64_t>(step_us * 1e6 + 0.5);
  spec.launch_latency_ps = setup.launch_latency_ps >= 0
                               ? setup.launch_latency_ps
                               : static_cast<int64_t>(launch_us * 1e6 + 0.5);
  if (setup.staged) {
    spec.staging_latency_ps = 2 * setup.pcie_latency_ps;
    spec.staging_rate_bps = setup.pcie_rate_bps;
    spec.staging_unit_bytes = nccl_buffsize_bytes(proto, setup.settings) / kNcclSteps;
  }
  return plan;
}

}  // namespace fabricsim
