// NCCL's protocols (LL, LL128, Simple), the NCCL_* settings that steer it, and its
// algorithm/protocol cost model (ncclTopoTuneModel + ncclTopoGetAlgoTime), as a pure library.
//
// The formulas here are NVIDIA NCCL v2.20.3-1's (git commit
// b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2, makefiles/version.mk 2.20.3), with what the other
// release lines from 2.18 to 2.28 change in them switched by their tuning tables
// (collectives/nccl_versions/nccl_tuning.hpp: latencies, per-channel caps, the protocols'
// factors, the LL128 rule); the constants below are 2.20.3's unless said. Files read:
//   src/graph/tuning.cc    baseLat, hwLat, llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws,
//                          perChMaxTreeBws, getNetOverhead, treeCorrectionFactor, the bandwidth and
//                          latency formulas, the LL128 default-enable rule, parseList (NCCL_ALGO /
//                          NCCL_PROTO syntax), the plateau factor in ncclTopoGetAlgoTime
//   src/include/device.h   NCCL_STEPS, union ncclLLFifoLine, NCCL_LL_LINES_PER_THREAD,
//                          NCCL_LL_MAX_NTHREADS, NCCL_LL128_LINESIZE / _LINEELEMS / _DATAELEMS,
//                          NCCL_LL128_ELEMS_PER_THREAD, NCCL_LL128_MAX_NTHREADS
//   src/init.cc            DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE, DEFAULT_BUFFSIZE and
//                          computeBuffSizes (NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE, NCCL_BUFFSIZE)
//   src/graph/connect.cc   NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (legacy NCCL_MIN_NRINGS /
//                          NCCL_MAX_NRINGS); there is no NCCL_NCHANNELS
//   src/graph/paths.cc     NCCL_NET_GDR_LEVEL: names, legacy integers (levelsOldToNew), default PXB
//   src/graph/topo.cc      topoPathTypeStr (LOC NVL NVB PIX PXB PXN PHB SYS)
//   src/enqueue.cc         the selection loop (algorithm-major, strict "<": ties keep the lower
//                          algorithm index, then the lower protocol index); NVLS's chunk size
//   src/graph/search.cc    the NVLS graph (ncclTopoCompute with NCCL_TOPO_PATTERN_NVLS: one
//                          channel per GPU, sm90SpeedArrayIntra, ncclTopoSearchTryNvls)
//   src/transport/nvls.cc  ncclNvlsInit: NCCL_NVLS_ENABLE (default 2), NCCL_NVLS_NCHANNELS (16),
//                          NVLS off on 2 GPUs or fewer
//
// Units: latency and time in µs; bandwidth in GB/s (10⁹ B/s, NCCL's unit: bytes / (1000 × GB/s)
// is µs); sizes in bytes. NCCL computes in float; this model computes in double.
//
// NCCL's Tree, Ring, NVLS (NVLink SHARP, AllReduce inside one NVSwitch server), NVLSTree (NVLS
// inside each NVSwitch server, a tree between them), PAT (AllGather and ReduceScatter with one
// GPU a node, 2.23+) and CollNetDirect / CollNetChain (AllReduce through InfiniBand SHARP's
// in-network reduction, collectives/collnet/) algorithms are modelled; CollNet's AllGather and
// ReduceScatter (2.20+) and NVLS across servers with CollNet are not. fabricsim's halving_doubling
// AllReduce is not an NCCL algorithm and is never chosen here.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "collectives/nccl_versions/nccl_tuning.hpp"

namespace fabricsim {

/// NCCL's protocols, in NCCL's index order (NCCL_PROTO_LL 0, NCCL_PROTO_LL128 1,
/// NCCL_PROTO_SIMPLE 2).
enum class NcclProto { kLL, kLL128, kSimple };
/// NCCL's algorithms. NCCL's index order is Tree 0, Ring 1, CollNetDirect 2, CollNetChain 3,
/// NVLS 4, NVLSTree 5, PAT 6; CollNet came last to fabricsim, so its two sit at the end here,
/// and select() scans kNcclSelectionOrder (NCCL's order: ties keep NCCL's lower index).
enum class NcclAlgo { kTree, kRing, kNvls, kNvlsTree, kPat, kCollNetDirect, kCollNetChain };
inline constexpr int kNcclNumProtos = 3;
inline constexpr int kNcclNumAlgos = 7;
/// The algorithms in NCCL's index order (enqueue.cc scans them so).
inline constexpr NcclAlgo kNcclSelectionOrder[kNcclNumAlgos] = {
    NcclAlgo::kTree,         NcclAlgo::kRing, NcclAlgo::kCollNetDirect,
    NcclAlgo::kCollNetChain, NcclAlgo::kNvls, NcclAlgo::kNvlsTree,
    NcclAlgo::kPat};
static_assert(kNcclNumAlgos == kNcclTunedAlgos, "the tuning tables have a row per algorithm");

/// "ll", "ll128", "simple".
const char* to_string(NcclProto p);
/// "tree", "ring", "nvls", "nvls_tree", "pat", "collnet_direct", "collnet_chain": the
/// workload.algorithm names.
const char* to_string(NcclAlgo a);
/// NCCL's own spelling (init.cc ncclAlgoStr): "Tree", "Ring", "NVLS", "NVLSTree", "PAT",
/// "CollNetDirect", "CollNetChain".
const char* nccl_spelling(NcclAlgo a);

/// A bad NCCL setting. `variable` is the environment variable (or the YAML key the caller passed,
/// e.g. "nccl.algo"); `message` says what was expected, with a "did you mean" for a misspelt
/// name. what() reads "VARIABLE: MESSAGE".
class NcclSettingError : public std::invalid_argument {
 public:
  NcclSettingError(std::string variable, std::string message);
  std::string variable;
  std::string message;
};

/// One protocol name as NCCL spells it ("LL", "LL128", "Simple"), case-insensitive as NCCL's
/// parseList (strcasecmp). Throws NcclSettingError{variable, ...} for anything else.
NcclProto parse_nccl_proto(const std::string& name, const std::string& variable = "NCCL_PROTO");
/// One algorithm name as NCCL spells it ("Tree", "Ring", "NVLS", "NVLSTree", "PAT",
/// "CollNetDirect", "CollNetChain"), case-insensitive. Anything else throws with a "did you
/// mean" ("CollNet" names a choice of the two).
NcclAlgo parse_nccl_algo(const std::string& name, const std::string& variable = "NCCL_ALGO");

// ---------------------------------------------------------------------------------------------
// Protocols
// ---------------------------------------------------------------------------------------------

/// NCCL_STEPS (device.h): the slots of every connection's FIFO buffer.
inline constexpr int kNcclSteps = 8;

/// How one protocol frames data in its FIFO buffer.
struct ProtocolSpec {
  NcclProto proto;
  /// Bytes of one line on the wire. LL: 16 (union ncclLLFifoLine: data1, flag1, data2, flag2,
  /// each uint32). LL128: 128 (NCCL_LL128_LINESIZE, 16 uint64). Simple: 1 (no lines, no flags).
  int line_bytes;
  /// Payload bytes in one line. LL: 8 (two uint32 of data). LL128: 120 (NCCL_LL128_DATAELEMS =
  /// 15 of the 16 uint64; the 16th carries the flag). Simple: 1.
  int data_bytes_per_line;
  /// The buffer NCCL allocates per connection when no variable sets it (init.cc):
  ///   LL     DEFAULT_LL_BUFFSIZE    = NCCL_LL_LINES_PER_THREAD 8 × NCCL_LL_MAX_NTHREADS 512
  ///                                   × NCCL_STEPS 8 × sizeof(ncclLLFifoLine) 16 = 524288
  ///   LL128  DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD 120 × NCCL_LL128_MAX_NTHREADS
  ///                                   640 × NCCL_STEPS 8 × sizeof(uint64_t) 8 = 4915200
  ///   Simple DEFAULT_BUFFSIZE       = 1 << 22 = 4194304 (4 MiB)
  int64_t default_buffsize_bytes;
  /// The variable computeBuffSizes reads for this protocol's buffer: NCCL_LL_BUFFSIZE,
  /// NCCL_LL128_BUFFSIZE, NCCL_BUFFSIZE. NCCL_BUFFSIZE therefore sets the Simple buffer only.
  const char* buffsize_variable;
};

/// The spec of `p` (static storage).
const ProtocolSpec& protocol_spec(NcclProto p);

/// Payload bytes one step carries with a `buffsize_bytes` buffer: buffsize / NCCL_STEPS, rounded
/// down to whole lines, × data_bytes_per_line / line_bytes. With the defaults: LL 32768, LL128
/// 576000, Simple 524288. Throws std::invalid_argument for buffsize_bytes <= 0.
int64_t step_data_bytes(NcclProto p, int64_t buffsize_bytes);

/// Bytes sent on the wire per payload byte: line_bytes / data_bytes_per_line (LL 2, LL128
/// 128/120, Simple 1).
double wire_factor(NcclProto p);

// ---------------------------------------------------------------------------------------------
// Settings (the NCCL_* environment)
// ---------------------------------------------------------------------------------------------

/// Which algorithms NCCL_ALGO allows, indexed by NcclAlgo. Unset: all.
struct NcclAlgoFilter {
  std::array<bool, kNcclNumAlgos> allowed{true, true, true, true, true, true, true};
  bool allows(NcclAlgo a) const { return allowed[static_cast<int>(a)]; }
};

/// Which protocols NCCL_PROTO allows, indexed by NcclProto. When the variable is unset
/// (`set_by_user` false) NCCL enables LL and Simple and decides LL128 by its default rule
/// (nccl_ll128_enabled_by_default); once set, the list is obeyed as written, LL128 included.
struct NcclProtoFilter {
  std::array<bool, kNcclNumProtos> allowed{true, true, true};
  bool set_by_user = false;
};

/// GPU-to-NIC (and GPU-to-GPU) path types, in NCCL's order (topo.h PATH_LOC 0 … PATH_SYS 7);
/// a larger value is a longer path. Spelled as topoPathTypeStr: LOC NVL NVB PIX PXB PXN PHB SYS.
enum class NcclPathType { kLoc, kNvl, kNvb, kPix, kPxb, kPxn, kPhb, kSys };
/// "LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS".
const char* to_string(NcclPathType t);

/// The network transport: NCCL_NET names it ("IB" or "Socket", case-insensitive); unset, NCCL
/// takes IB when it finds it, else sockets; NCCL_IB_DISABLE=1 leaves sockets.
enum class NcclNet { kAuto, kIb, kSocket };

/// The NCCL_* settings fabricsim understands, as NCCL reads them.
struct NcclSettings {
  NcclAlgoFilter algo;    ///< NCCL_ALGO
  NcclProtoFilter proto;  ///< NCCL_PROTO
  /// NCCL_BUFFSIZE: the Simple buffer, bytes (> 0); 0 = DEFAULT_BUFFSIZE (4 MiB).
  int64_t buffsize_bytes = 0;
  int64_t ll_buffsize_bytes = 0;     ///< NCCL_LL_BUFFSIZE, bytes (> 0); 0 = default
  int64_t ll128_buffsize_bytes = 0;  ///< NCCL_LL128_BUFFSIZE, bytes (> 0); 0 = default
  /// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (or the legacy NCCL_MIN_NRINGS / NCCL_MAX_NRINGS,
  /// which the NCHANNELS names override), 1..kNcclMaxChannelsAccepted; 0 = unset.
  int min_nchannels = 0;
  int max_nchannels = 0;
  /// NCCL_NET_GDR_LEVEL: GPUDirect RDMA is used when the GPU-NIC path is no longer than this.
  /// Unset, NCCL uses PXB (paths.cc ncclTopoCheckGdr).
  NcclPathType net_gdr_level = NcclPathType::kPxb;
  bool ib_disable = false;       ///< NCCL_IB_DISABLE=1
  NcclNet net = NcclNet::kAuto;  ///< NCCL_NET
  /// NCCL_NVLS_ENABLE (src/transport/nvls.cc, default 2): 0 = NVLS off, 1 = on without asking
  /// the driver for multicast support, 2 = on where the driver reports it.
  int nvls_enable = 2;
  /// NCCL_COLLNET_ENABLE (src/init.cc, default 0): 1 = CollNet where the network has it.
  int collnet_enable = 0;
};

/// NCCL_NVLS_NCHANNELS' default (src/transport/nvls.cc NCCL_PARAM NvlsChannels): the CTAs an
/// NVLS collective runs on; NVLS's chunk size shrinks for sizes below a few loops of
/// kNcclNvlsChannels × heads × chunk (enqueue.cc).
inline constexpr int kNcclNvlsChannels = 16;
/// NVLS's largest chunk (enqueue.cc computeColl: maxChunkSize 131072 on one node).
inline constexpr int64_t kNcclNvlsMaxChunkBytes = 131072;

/// The largest channel count the parsers accept. NCCL clamps NCCL_MIN/MAX_NCHANNELS to its
/// MAXCHANNELS (device.h) with a warning instead of failing. The device.h of 2.20.3 itself was
/// not available; MAXCHANNELS is 64 in the newer device.h read (the one with
/// NCCL_MAX_LOCAL_RANKS 72) and 32 in older ones (e.g. 2.8 devcomm.h), so this accepts up to 64
/// and rejects more.
inline constexpr int kNcclMaxChannelsAccepted = 64;

/// The transport NCCL ends up with: NCCL_NET if set, else sockets when NCCL_IB_DISABLE=1, else IB.
NcclNet effective_net(const NcclSettings& s);

/// The buffer NCCL allocates for protocol `p` under `s` (the protocol's variable, else its
/// default), bytes.
int64_t nccl_buffsize_bytes(NcclProto p, const NcclSettings& s);

/// NCCL_ALGO syntax (tuning.cc parseList): a comma-separated list of names, case-insensitive; a
/// leading '^' allows every algorithm except those listed. Blanks around names are ignored.
/// Unlike NCCL, which silently skips a name it does not know, this throws NcclSettingError
/// {variable, ...} with a "did you mean"; also for an empty list and for a list that leaves
/// none of Tree, Ring and NVLS allowed.
NcclAlgoFilter parse_algo_list(const std::string& value, const std::string& variable = "NCCL_ALGO");
/// NCCL_PROTO, same syntax, names LL, LL128, Simple. The result has set_by_user = true. Throws
/// for an unknown name, an empty list, or a list that allows no protocol.
NcclProtoFilter parse_proto_list(const std::string& value,
                                 const std::string& variable = "NCCL_PROTO");
/// NCCL_NET_GDR_LEVEL: a path name exactly as NCCL compares it (strcmp, upper case: LOC NVL NVB
/// PIX PXB PXN PHB SYS), or a legacy integer 0..5 mapped as paths.cc levelsOldToNew: 0 LOC,
/// 1 PIX, 2 PXB, 3 PHB, 4 SYS, 5 SYS. NCCL silently ignores a lower-case name and clamps a larger
/// integer to SYS; this throws NcclSettingError for both (with the upper-case spelling as
/// "did you mean").
NcclPathType parse_gdr_level(const std::string& value,
                             const std::string& variable = "NCCL_NET_GDR_LEVEL");

/// Reads from `env` only the variables listed in NcclSettings (plus the legacy
/// NCCL_MIN_NRINGS / NCCL_MAX_NRINGS); other keys are ignored. Throws NcclSettingError naming
/// the variable for a bad value: sizes and counts must be plain decimal integers in range,
/// NCCL_IB_DISABLE 0 or 1, NCCL_NET IB or Socket, NCCL_NVLS_ENABLE 0, 1 or 2, NCCL_COLLNET_ENABLE 0
/// or 1, NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS, NCCL_NET=IB together with NCCL_IB_DISABLE=1 is a
/// contradiction. NCCL_NCHANNELS, which NCCL does not read, throws and names the two variables it
/// does read.
NcclSettings parse_nccl_env(const std::map<std::string, std::string>& env);

// ---------------------------------------------------------------------------------------------
// Cost model
// ---------------------------------------------------------------------------------------------

/// The link classes of NCCL's hwLat table (NCCL_HW_NVLINK 0, NCCL_HW_PCI 1, NCCL_HW_NET 2).
enum class NcclHw { kNvlink, kPci, kNet };

/// NCCL's per-step latency hwLat[hw][algo][proto], µs (tuning.cc; these are the per-hop
/// software/hardware overheads the packet replay can use):
///              Tree LL  LL128  Simple    Ring LL  LL128  Simple    NVLS Simple
///   NVLINK        0.6   1.25   28           0.6   1.9    3.4         23
///   PCI           1.0   1.9    28           1.0   2.5    5.7          0
///   NET           5.0   8.5    28           2.7   4.0   14.0         18
/// NVLS has only Simple (its LL and LL128 entries are 0), and its NVLINK entry is the whole
/// collective's latency on one node, not a per-step one (tuning.cc sets latency = intraLat).
/// (NCCL sets PCI/Tree/Simple to PCI/Ring/Simple on POWER CPUs; not modelled.)
/// Other release lines differ (nccl_tuning.hpp); `t` picks one (default: the newest).
double nccl_hw_latency_us(NcclHw hw, NcclAlgo a, NcclProto p,
                          const NcclTuning& t = newest_nccl_tuning());
/// NCCL's base latency baseLat[algo][proto], µs (tuning.cc): Tree {6.8, 14.0, 0},
/// Ring {6.6, 14.0, 8.4}, NVLS {0, 0, 0} for {LL, LL128, Simple} in 2.20; `t` picks the line.
double nccl_base_latency_us(NcclAlgo a, NcclProto p, const NcclTuning& t = newest_nccl_tuning());
/// NCCL's treeCorrectionFactor[proto][log2(bytes / 64)] (tuning.cc, 23 entries, powers of two
/// from 64 B to 256 MiB); 1 from 2^23 × 64 B = 512 MiB up. Multiplies the tree bandwidth.
/// Throws std::invalid_argument for bytes < 0.
double nccl_tree_correction_factor(NcclProto p, int64_t bytes);

/// What ncclTopoTuneModel needs to know about one communicator. The graph numbers are per
/// channel, as NCCL's ncclTopoGraph stores them; one graph stands for both the ring and the tree
/// graph (NCCL searches them separately; they usually agree on channels and speeds).
struct NcclTuneInputs {
  /// nccl-tests name: all_reduce, all_gather, reduce_scatter, broadcast, reduce.
  std::string collective = "all_reduce";
  int nranks = 0;            ///< >= 2, a multiple of nnodes
  int nnodes = 0;            ///< >= 1
  int nchannels = 0;         ///< graph nChannels, 1..kNcclMaxChannelsAccepted
  double bw_intra_GBps = 0;  ///< graph bwIntra, per channel, GB/s (> 0)
  double bw_inter_GBps = 0;  ///< graph bwInter, per channel, GB/s (> 0)
  /// GPU arch (SM version × 10 + minor: 70 Volta, 80 Ampere, 90 Hopper): row of llMaxBws (one
  /// node) and perChMax* tables (>= 90 Hopper, >= 80 Ampere, else Volta), the plateau factor,
  /// the LL128 default rule. All GPUs are taken to be the same arch.
  int compute_capability = 90;
  /// graph typeIntra: NVLink (kNvlink) or PCI (kPci) inside a node. kNet is invalid.
  NcclHw intra_hw = NcclHw::kNvlink;
  /// graph typeInter: the GPU-to-NIC path the graph uses (LL128 default rule only).
  NcclPathType gpu_nic_path = NcclPathType::kPxb;
  /// The CPU vendor: AMD picks llMaxBws row 1 on several nodes and a 2 µs net overhead
  /// (getNetOverhead); false = Intel (row 0, 1 µs).
  bool cpu_amd = false;
  /// graph latencyInter, µs (>= 0): the NET node's latency from the topology; 0 unless a
  /// topology file gives one. Added to the inter-node step latency (twice for Simple).
  double latency_inter_us = 0;
  /// graph sameChannels of the ring graph: Broadcast/Reduce pay one step latency if true, nsteps
  /// step latencies if false.
  bool ring_same_channels = true;
  /// NVLS is on for this communicator (NCCL's nvlsSupport and an NVLS graph found: see
  /// nccl_nvls_unavailable); false: select() never considers it.
  bool nvls_available = false;
  /// NVLSTree is on (NVLS's hardware and settings on every server, more than one server);
  /// false: select() never considers it.
  bool nvls_tree_available = false;
  /// PAT may run where NCCL has it (nccl_pat_unavailable); false: the run has turned it off (the
  /// flow mode has no PAT), and select() never considers it.
  bool pat_enabled = true;
  /// CollNetDirect / CollNetChain (SHARP) are on for this communicator (nccl_collnet_unavailable
  /// says why not); false: select() never considers them. Their cost takes the graph above
  /// (nchannels, bw_intra_GBps: NCCL searches the CollNet graphs with the tree pattern).
  bool collnet_direct_available = false;
  bool collnet_chain_available = false;
  /// The CollNet graphs' bwIntra per channel, GB/s; 0 = bw_intra_GBps. NCCL's search raises a
  /// tree or CollNet graph's bwIntra above its bwInter, up to twice it, while the NVLinks carry
  /// it (search.cc: "increase bwIntra for trees (2 nodes or collnet)").
  double collnet_bw_intra_GBps = 0;
  /// The NVLS graph (nccl_nvls_graph): channels (one per GPU, its heads) and per-channel
  /// bandwidth (bwIntra = bwInter: across servers the speed also fits a head's NIC), GB/s.
  /// Needed when nvls_available or nvls_tree_available.
  int nvls_channels = 0;
  double nvls_bw_GBps = 0;
  /// The NCCL release line whose tuning tables apply (nccl_tuning.hpp); nullptr = the newest.
  const NcclTuning* tuning = nullptr;
};

/// The tables `in` asks for: *in.tuning, or the newest.
inline const NcclTuning& tuning_of(const NcclTuneInputs& in) {
  return in.tuning != nullptr ? *in.tuning : newest_nccl_tuning();
}

/// NCCL's NVLS graph on one NVSwitch server (search.cc ncclTopoCompute, pattern NVLS, no
/// network): one channel per GPU (minChannels = maxChannels = the GPU count), and the largest
/// speed of sm90SpeedArrayIntra {60, 50, 40, 30, 24, 20, 15, 12, 6, 3} GB/s that the GPUs'
/// NVLinks carry: in each channel every GPU sends and receives the speed once and the head twice
/// (ncclTopoSearchTryNvls), so (gpus + 1) × speed must fit in a GPU's NVLink bandwidth
/// (`nvlink_GBps`, NCCL's per-link speed × links: 18 × 20.6 = 370.8 on H100), and the first
/// speed tried is the largest with speed × gpus <= nvlink_GBps × gpus / (gpus − 1). 8 × H100:
/// 8 channels of 40 GB/s. Across servers (`nic_GBps` > 0, a head's NIC bandwidth) the speed
/// must also fit the NIC each channel's head sends and receives through. {0, 0} when no speed
/// fits.
struct NcclNvlsGraph {
  int channels = 0;
  double bw_GBps = 0;
};
NcclNvlsGraph nccl_nvls_graph(int gpus, double nvlink_GBps, double nic_GBps = 0);

/// Why NCCL has no NVLS for a communicator, or "" when it has: `nvls_enable` 0
/// (NCCL_NVLS_ENABLE), no NVSwitch, compute capability below 90 (search.cc: the NVLS graph needs
/// an NVSwitch and ccMin >= 90), 2 GPUs or fewer per node (nvls.cc ncclNvlsInit: gpuCount <= 2),
/// or more than one node (tuning.cc disables NVLS on several nodes without CollNet, which is not
/// modelled; across nodes NCCL runs NVLSTree).
std::string nccl_nvls_unavailable(int nvls_enable, bool nvswitch, int compute_capability,
                                  int gpus_per_node, int nnodes);
/// Why NCCL has no NVLSTree, or "" when it has: the same hardware and setting rules as NVLS, on
/// more than one node (tuning.cc turns NVLSTree off on one node).
std::string nccl_nvls_tree_unavailable(int nvls_enable, bool nvswitch, int compute_capability,
                                       int gpus_per_node, int nnodes);
/// Why NCCL has no CollNet (CollNetDirect and CollNetChain, AllReduce through SHARP) for a
/// communicator, or "": NCCL_COLLNET_ENABLE (nccl.collnet_enable) not 1 (init.cc: CollNet needs
/// it and a CollNet plugin, nccl-rdma-sharp-plugins); a network other than InfiniBand (SHARP
/// aggregates in InfiniBand switches); fewer than 2 servers (NCCL_COLLNET_NODE_THRESHOLD, default
/// 2); more than 8 GPUs a server (NCCL_MAX_DIRECT_ARITY + 1). For CollNetDirect also: no
/// NVSwitch (tuning.cc: "Disable CollNet+Direct if not on an NVSwitch system"). `a` is
/// kCollNetDirect or kCollNetChain.
std::string nccl_collnet_unavailable(NcclAlgo a, int collnet_enable, bool infiniband, bool nvswitch,
                                     int gpus_per_node, int nnodes);
/// Why NCCL has no PAT for this communicator, or "": a release line before 2.23, more than one
/// GPU a node (tuning.cc ncclPatEnable: "PAT only supports 1 GPU per node"), or
/// in.pat_enabled false.
std::string nccl_pat_unavailable(const NcclTuneInputs& in);

/// NCCL's two numbers for one (collective, algorithm, protocol), before any NCCL_ALGO /
/// NCCL_PROTO filtering.
struct NcclAlgoProtoCost {
  double latency_us = 0;
  /// comm->bandwidths: the algorithm bandwidth NCCL stores (bus bandwidth × nranks/nsteps for
  /// Ring, × 0.5 for Tree, × 5/6 for NVLS), GB/s.
  double bw_GBps = 0;
  /// The bus bandwidth behind it, before the algorithm's conversion, GB/s: what the
  /// communicator's channels together move of the user's bytes. LL's and LL128's are below
  /// Simple's by the protocol's own factors (LL 1/4 or 1/3 and llMaxBw, LL128 0.92 or 0.7 and
  /// perChMax*LL128Bw): the GPU's throughput in that protocol, which fabricsim paces a
  /// collective's channels to (CollectiveSpec::pace_bps). NVLS: bw_GBps / (5/6).
  double bus_bw_GBps = 0;
  /// The protocol's limit for one channel, GB/s (LL128: perChMaxRingLL128Bw or
  /// perChMaxTreeLL128Bw), however few channels run; 0 = none.
  double channel_cap_GBps = 0;
};

/// True when NCCL has algorithm `a` for `collective` as fabricsim models them: Ring for all
/// five, Tree, NVLS, NVLSTree, CollNetDirect and CollNetChain for all_reduce only (CollNetDirect's
/// AllGather/ReduceScatter, 2.20+, are not modelled) (NCCL also runs AllGather and ReduceScatter
/// on NVLS; not modelled), PAT for all_gather and reduce_scatter. Throws std::invalid_argument
/// for an unknown collective.
bool nccl_algo_supported(const std::string& collective, NcclAlgo a);

/// ncclTopoTuneModel's latency and bandwidth for (inputs.collective, a, p). Throws
/// std::invalid_argument for invalid inputs, an algorithm the collective does not have, NVLS
/// with LL or LL128 (NCCL has Simple only) and NVLS without its graph (nvls_channels < 1,
/// nvls_bw_GBps <= 0) or on more than one node.
/// Bandwidth, with busBw = nchannels × (nnodes <= 2 ? bw_intra : bw_inter), caps from the
/// release line's tables (tuning_of(in)):
///   Ring LL     min(llMaxBw, busBw × f): f = 1/2 from 2.21; before, 1/4 (nnodes > 1,
///               all_reduce, reduce) or 1/3
///   Ring LL128  min(busBw × 0.92, nchannels × perChMaxRingLL128Bw), × 0.7 instead of 0.92 with
///               ppn < 2 up to 2.22
///   Ring Simple busBw;  the three then × nranks / nsteps
///   Tree        t = min(busBw × 0.92, nchannels × perChMaxTreeBw); LL min(t / 3.8, llMaxBw);
///               LL128 min(t × (nnodes == 1 ? 7/9 : 120/128), nchannels × perChMaxTreeLL128Bw);
///               Simple t; the three then × 0.5
///   NVLS        Simple only: nvls_channels × nvls_bw × 5/6 (tuning.cc: bw = min(bwIntra,
///               bwInter), the NVLS bus-to-algorithm ratio 5/6); 8 × H100: 8 × 40 × 5/6 = 266.7.
///               From 2.28: nvls_channels × min(nvls_bw × nvlsEfficiency × (nch − 1)/nch × 2,
///               nvls_bw) × nranks / nsteps; 8 × H100: 8 × 40 × 8/14 = 182.9
///   NVLSTree    Simple only, from the NVLS graph (nch channels of nvls_bw): 2.18 nch × nvls_bw
///               × .70 × nnodes / (2(nnodes − 1)); 2.19-2.27 nch × min(nvls_bw, nvls_bw / 2
///               above 2 nodes) × 5/6; 2.28 nch × min(nvls_bw × nvlsEfficiency × (nch − 1)/nch
///               × 2, nvls_bw × (2 on up to 2 nodes, else 1), perChMaxNVLSTreeBw) × nranks /
///               nsteps
///   PAT         Simple only: busBw × 0.75, not converted (2.23+: only Ring's AllGather and
///               ReduceScatter are)
///   CollNet     Simple only, busBw = nchannels × bw_intra (the CollNet graphs, whatever the
///               node count); Direct: ÷ f, f = ppn / nchannels − (ppn / nchannels − 1) / 2 (the
///               GPU:NIC ratio), × 0.85 from compute capability 9.0; Chain as is; both × 0.5
/// Latency, intraLat = hwLat[intra_hw], interLat = hwLat[NET] + latency_inter (+ again for
/// Simple); from 2.23 with one GPU a node interLat takes Tree's NET row:
///   Ring AllReduce/AllGather/ReduceScatter: baseLat + (nsteps − nInterSteps) ×
///       max(intraLat, netOverhead) + nInterSteps × interLat, netOverhead = 0 on one node, else
///       1 µs (Intel) or 2 µs (AMD), × 3 for Simple
///   Ring Broadcast/Reduce: baseLat + hwLat[hw] (same channels) or nsteps × hwLat[hw] with
///       Simple using Tree's Simple entry; hw = intra_hw on one node, NET otherwise
///   Tree: baseLat + 2 × ((nranks/nnodes − 1) × intraLat + floor(log2 nnodes) × interLat)
///   NVLS: baseLat + hwLat[NVLINK][NVLS][Simple] (23 µs to 2.20, 25 from 2.21), one node only
///   NVLSTree: 2.18 baseLat (23) + 2(nnodes − 1) × hwLat[NET] (19); from 2.19 intraLat (23, 25
///       from 2.21) + 2 floor(log2 nnodes) × interLat (hwLat[NET] 14)
///   PAT: 8 (baseLat from 2.28) + floor(log2 nnodes) × interLat / 3.5 + nranks × 2.8, interLat
///       Tree's NET row (one GPU a node)
///   CollNetDirect: baseLat + 2 (min(1, ppn − 1) × intraLat + (ppn − 1) × 0.4 (0.5 in 2.18)) +
///       interLat;  CollNetChain: baseLat + 2 (ppn − 1) × intraLat + interLat
/// nsteps = 2(n−1) AllReduce, n−1 AllGather/ReduceScatter, n Broadcast/Reduce; nInterSteps =
/// 2·nnodes (2·(nnodes − 1) from 2.23; 0 on one node) AllReduce, nnodes−1
/// AllGather/ReduceScatter, nnodes otherwise.
/// Left out: Tree × 0.85 when NCCL's tree search fell back to NCCL_TOPO_PATTERN_TREE (it starts
/// from the balanced tree), multi-node NVLink (MNNVL, counted as one node), NCCL_NET_OVERHEAD,
/// and the POWER-CPU hwLat tweak.
NcclAlgoProtoCost nccl_tuned_cost(const NcclTuneInputs& in, NcclAlgo a, NcclProto p);

/// NCCL's rule for LL128 when NCCL_PROTO is unset (tuning.cc): on iff the GPU-NIC path is at
/// most PXB (at most PXN on compute capability >= 90), the intra-node path is NVLink, and the
/// arch is one the release line enables (70, 80, 90 to 2.24; also 100 and 120 from 2.25; any
/// from 70 in 2.28). (NCCL also disables it for Ring AllReduce on 2 ranks of
/// sm90 built with CUDA 11.8; not modelled.) Throws like nccl_tuned_cost for invalid inputs.
bool nccl_ll128_enabled_by_default(const NcclTuneInputs& in);

/// ncclTopoGetAlgoTime for one operation of `bytes` (>= 0; NCCL's nBytes, which is the
/// nccl-tests size: the whole buffer, count × nranks × type size for all_gather and
/// reduce_scatter), µs:
///   latency + bytes / (1000 × bw), where
///   bw ×= treeCorrectionFactor[p][log2(bytes/64)] for Tree below 2^23 × 64 bytes, and
///   latency ×= 1.4 (1.9 below compute capability 80) for Ring Simple AllReduce on more than one
///   node once bytes / (nchannels × nranks) >= 64 (the ring "plateau").
/// Left out: the per-call nChannels rescaling and numPipeOps (aggregated calls), both 1:1 for a
/// single operation on every channel. Throws std::invalid_argument like nccl_tuned_cost, and for
/// bytes < 0.
double predicted_time_us(const NcclTuneInputs& in, NcclAlgo a, NcclProto p, int64_t bytes);

struct NcclChoice {
  NcclAlgo algo;
  NcclProto proto;
  double time_us;  ///< predicted_time_us of the pair
};

/// What select() does when the filters leave no pair for the collective.
enum class NcclEmptyChoice {
  kThrow,         ///< std::invalid_argument naming the collective and the filters
  kRingFallback,  ///< as NCCL 2.20.3: the fastest Ring protocol, ignoring both filters
};

/// The pair NCCL picks: the smallest predicted_time_us among the algorithms the collective has
/// (NVLS only where inputs.nvls_available, NVLSTree where inputs.nvls_tree_available, PAT where
/// nccl_pat_unavailable is "", the three with Simple only; from 2.28 NVLS and NVLSTree need 2
/// channels), NCCL_ALGO allows and protocols enabled (NCCL_PROTO, or LL and Simple plus LL128 by
/// its default rule when unset), scanning Tree, Ring, NVLS, NVLSTree, PAT and LL, LL128, Simple
/// with a strict "<", so ties keep the lower algorithm, then the lower protocol. When nothing is
/// left (e.g. NCCL_ALGO=Tree for all_gather) NCCL falls back to Ring with every protocol; by
/// default this throws instead (see NcclEmptyChoice). Throws std::invalid_argument like
/// predicted_time_us.
NcclChoice select(const NcclTuneInputs& in, const NcclSettings& settings, int64_t bytes,
                  NcclEmptyChoice on_empty = NcclEmptyChoice::kThrow);

}  // namespace fabricsim
