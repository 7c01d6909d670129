#include "collectives/nccl_setup.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "collectives/algorithm_registry.hpp"
#include "collectives/flow_plan.hpp"
#include "collectives/nccl_env.hpp"
#include "collectives/nccl_model.hpp"
#include "collectives/nccl_tests.hpp"
#include "collectives/transfer_dag.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

namespace {

/// Whether NCCL runs NVLS for `s`'s communicator, and its graph (nccl_model.hpp): the setup's
/// layout, nodes, settings and hardware as they are now.
void set_nvls(NcclRunSetup& s) {
  NcclTuneInputs& t = s.tune;
  const int local = t.nnodes == 1 ? s.layout.ranks : s.layout.gpus_per_server;
  // The servers the ranks span (NCCL's model counts a partial last server's GPUs as nodes).
  const int servers = s.layout.servers();
  s.nvls_off = nccl_nvls_unavailable(s.settings.nvls_enable, s.nvswitch, t.compute_capability,
                                     local, servers);
  s.nvls_tree_off = nccl_nvls_tree_unavailable(s.settings.nvls_enable, s.nvswitch,
                                               t.compute_capability, local, servers);
  // NCCL's trees join whole nodes: a partial last server is one-GPU nodes to the model.
  if (s.nvls_tree_off.empty() && t.nranks != t.nnodes * local) {
    s.nvls_tree_off = "NVLSTree joins whole servers, and the last server is partial";
  }
  const NcclNvlsGraph graph =
      nccl_nvls_graph(local, s.nvlink_GBps, t.nnodes > 1 ? s.nic_GBps_per_gpu : 0);
  const char* no_speed = t.nnodes > 1
                             ? "NCCL's NVLS graph finds no speed its NVLinks and NICs carry"
                             : "NCCL's NVLS graph finds no speed its NVLinks carry";
  if (s.nvls_off.empty() && graph.channels == 0) s.nvls_off = no_speed;
  if (s.nvls_tree_off.empty() && graph.channels == 0) s.nvls_tree_off = no_speed;
  s.nvls_tree_flow_only = s.nvls_tree_off.empty() && s.flow_mode;
  if (s.nvls_off.empty() && s.flow_mode) s.nvls_off = flow_mode_refusal("nvls");
  if (s.nvls_tree_off.empty() && s.flow_mode) s.nvls_tree_off = flow_mode_refusal("nvls_tree");
  t.pat_enabled = true;
  s.pat_off = nccl_pat_unavailable(t);
  if (s.pat_off.empty() && s.flow_mode) s.pat_off = flow_mode_refusal("pat");
  for (const NcclAlgo a : {NcclAlgo::kCollNetDirect, NcclAlgo::kCollNetChain}) {
    const bool direct = a == NcclAlgo::kCollNetDirect;
    std::string& off = direct ? s.collnet_direct_off : s.collnet_chain_off;
    off = nccl_collnet_unavailable(a, s.settings.collnet_enable, s.infiniband, s.nvswitch, local,
                                   servers);
    if (off.empty() && t.nranks != t.nnodes * local) {
      off = "CollNet joins whole servers, and the last server is partial";
    }
    (direct ? s.collnet_direct_flow_only : s.collnet_chain_flow_only) = off.empty() && s.flow_mode;
    if (off.empty() && s.flow_mode)
      off = flow_mode_refusal(direct ? "collnet_direct" : "collnet_chain");
  }
  t.collnet_direct_available = s.collnet_direct_off.empty();
  t.collnet_chain_available = s.collnet_chain_off.empty();
  t.nvls_available = s.nvls_off.empty();
  t.nvls_tree_available = s.nvls_tree_off.empty();
  t.pat_enabled = !s.flow_mode;
  t.nvls_channels = graph.channels;
  t.nvls_bw_GBps = graph.bw_GBps;
}

/// Why NCCL cannot run `a` for `s`'s communicator ("" = it can): its hardware, release line,
/// layout, the run's mode, or (the Simple-only algorithms) protocols that leave out Simple.
std::string algorithm_off(const NcclRunSetup& s, NcclAlgo a, bool simple_allowed) {
  const bool simple_only = a != NcclAlgo::kTree && a != NcclAlgo::kRing;
  std::string off = a == NcclAlgo::kNvls            ? s.nvls_off
                    : a == NcclAlgo::kNvlsTree      ? s.nvls_tree_off
                    : a == NcclAlgo::kPat           ? s.pat_off
                    : a == NcclAlgo::kCollNetDirect ? s.collnet_direct_off
                    : a == NcclAlgo::kCollNetChain  ? s.collnet_chain_off
                                                    : "";
  if (off.empty() && simple_only && !simple_allowed) {
    off = "it runs the Simple protocol only, which the protocol settings leave out";
  }
  return off;
}

/// The release line's tuning tables nccl.version (or the measured log's version) names.
void set_tuning(NcclRunSetup& s, const CollectiveInputs& in) {
  const std::string& v = in.nccl.version;
  if (v.empty()) {
    s.tune.tuning = &newest_nccl_tuning();
    s.tuning_label = s.tune.tuning->name + " (the newest modelled)";
    return;
  }
  try {
    if (in.nccl.version_from_log) {
      const NcclTuningMatch m = nccl_tuning_nearest(v);
      s.tune.tuning = m.tuning;
      s.version_note = m.note;
      s.tuning_label = m.tuning->name + " (the measured log's NCCL " + v + ")";
      if (!m.note.empty()) std::fprintf(stderr, "fabricsim: note: %s\n", m.note.c_str());
    } else {
      s.tune.tuning = &nccl_tuning(v);
      s.tuning_label = s.tune.tuning->name + " (nccl.version " + v + ")";
    }
  } catch (const std::invalid_argument& e) {
    throw key_error(in.places, in.nccl.version_from_log ? "measured.nccl_tests" : "nccl.version",
                    e.what());
  }
}

}  // namespace

/// An AllReduce among `ranks` GPUs, `per_server` of them in each server, with the run's NCCL
/// settings, latencies and channels (NCCL's cost model sees that group).
NcclRunSetup group_setup(const CollectiveInputs& in, const NcclRunSetup& base, int ranks,
                         int per_server) {
  NcclRunSetup s = base;
  s.collective = "all_reduce";
  s.algorithm = "auto";
  s.protocol = "auto";
  s.root = 0;
  s.layout = RankLayout{ranks, per_server};
  s.rank_hosts.clear();
  NcclTuneInputs& t = s.tune;
  t.nranks = ranks;
  t.nnodes = s.layout.servers();
  if (ranks % per_server != 0) {
    t.nnodes = ranks <= per_server ? 1 : ranks;
    s.settings.algo.allowed[static_cast<int>(NcclAlgo::kTree)] = false;
  }
  t.bw_intra_GBps = t.nnodes == 1 && per_server > 1 && in.nvlink_rate_bps > 0
                        ? static_cast<double>(in.nvlink_rate_bps) / 8e9 / s.channels
                        : t.bw_inter_GBps;
  set_nvls(s);
  return s;
}

/// The scenario's training step on this fabric (collectives/step_model.hpp): rank r on GPU r,
/// dp defaulting to every GPU / (tp × pp), the DDP buckets' and TP groups' AllReduces planned
/// as NCCL would for their groups (float gradients). Throws ConfigError (exit 2) at the
/// training key for a step the fabric cannot hold or the model refuses.
StepPlan training_plan(const CollectiveInputs& in, const Fabric& fabric, const NcclRunSetup& base) {
  return training_plan(in, static_cast<int>(fabric.hosts.size()), fabric.gpus_per_server, base,
                       "the fabric");
}

StepPlan training_plan(const CollectiveInputs& in, int hosts, int gpus_per_server,
                       const NcclRunSetup& base, const std::string& whose) {
  const TrainingConfig& t = in.training;
  const int g = std::max(1, gpus_per_server);
  ParallelSpec p;
  p.tp = t.tp;
  p.pp = t.pp;
  p.microbatches = t.microbatches;
  p.bucket_cap_bytes = t.bucket_cap_bytes;
  p.first_bucket_cap_bytes = t.first_bucket_cap_bytes;
  p.optimizer_ps = t.optimizer_ps;
  p.gpus_per_server = g;
  p.dp = t.dp > 0 ? t.dp : hosts / (t.tp * t.pp);
  const int64_t needed = int64_t{std::max(1, p.dp)} * p.tp * p.pp;
  if (p.dp < 1 || needed > hosts) {
    throw key_error(in.places, t.dp > 0 ? "training.dp" : "training.tp",
                    "dp x tp x pp = " + std::to_string(std::max(1, p.dp)) + " x " +
                        std::to_string(p.tp) + " x " + std::to_string(p.pp) + " = " +
                        std::to_string(needed) + " GPUs, but " + whose + " has " +
                        std::to_string(hosts) + "; expected at most " + std::to_string(hosts));
  }
  std::vector<LayerSpec> layers;
  for (const TrainingLayer& l : in.training.layers) {
    for (int i = 0; i < l.count; ++i) {
      layers.push_back({l.count == 1 ? l.name : l.name + "[" + std::to_string(i) + "]", l.fwd_ps,
                        l.bwd_ps, l.param_bytes, l.tp_comm_bytes, l.activation_bytes});
    }
  }
  constexpr int kElem = 4;  // float gradients
  const GroupCollective allreduce = [&](int ranks, int per_server, int64_t bytes) {
    const NcclRunSetup s = group_setup(in, base, ranks, per_server);
    const SizePlan plan = plan_size(s, std::max<int64_t>(kElem, bytes), kElem);
    return build_collective(s.layout, plan.spec, plan.buffer_count, kElem);
  };
  try {
    return build_training_step(layers, p, allreduce);
  } catch (const std::invalid_argument& e) {
    throw key_error(in.places, "training", e.what());
  }
}

/// The workload's collective setup on this fabric: ranks and servers, NCCL's settings and
/// channels, the cost model's view of the links. Throws ConfigError (exit 2) for a workload the
/// fabric or the algorithms cannot run.
NcclRunSetup nccl_setup(const CollectiveInputs& in, const Fabric& fabric) {
  const WorkloadConfig& w = in.workload;
  NcclRunSetup setup;
  setup.collective = w.collective;
  setup.algorithm = w.algorithm;
  setup.protocol = w.protocol;
  const int hosts = static_cast<int>(fabric.hosts.size());
  const int server_gpus = std::max(1, fabric.gpus_per_server);
  const int per_server = w.ranks_per_server > 0 ? w.ranks_per_server : server_gpus;
  if (per_server > server_gpus) {
    throw key_error(in.places, "workload.ranks_per_server",
                    "ranks_per_server is " + std::to_string(per_server) + " but a server has " +
                        std::to_string(server_gpus) + " GPU" + (server_gpus == 1 ? "" : "s") +
                        "; expected 1 to " + std::to_string(server_gpus));
  }
  // Ranks fill servers R at a time (rank r on GPU r mod R of server r / R), as mpirun
  // -npernode R places them.
  const int capacity = hosts / server_gpus * per_server;
  const int ranks = w.ngpus > 0 ? w.ngpus : capacity;
  if (ranks > capacity) {
    throw key_error(in.places, "workload.ngpus",
                    "ngpus is " + std::to_string(ranks) + " but the fabric has " +
                        std::to_string(hosts) + " GPUs" +
                        (per_server < server_gpus
                             ? ", " + std::to_string(capacity) + " of them at ranks_per_server " +
                                   std::to_string(per_server)
                             : std::string()) +
                        "; expected at most " + std::to_string(capacity));
  }
  const bool rooted = w.collective == "broadcast" || w.collective == "reduce";
  if (in.places.origins.count("workload.root") && !rooted) {
    throw key_error(in.places, "workload.root",
                    "root applies to broadcast and reduce only, not to " + w.collective);
  }
  if (w.root >= ranks) {
    throw key_error(in.places, "workload.root",
                    "root " + std::to_string(w.root) + " is not a rank; expected 0 to " +
                        std::to_string(ranks - 1));
  }
  setup.root = w.root;
  if (w.algorithm != "auto" && !algorithm_supports(w.algorithm, w.collective)) {
    std::string runs;
    for (const std::string& a : collective_algorithm_names()) {
      if (algorithm_supports(a, w.collective)) runs += (runs.empty() ? "" : ", ") + a;
    }
    throw key_error(in.places, "workload.algorithm",
                    "algorithm " + w.algorithm + " does not run " + w.collective +
                        "; expected auto or " + runs);
  }
  if ((w.collective == "alltoall" || w.collective == "sendrecv") && w.protocol == "ll128") {
    throw key_error(in.places, "workload.protocol",
                    w.collective +
                        " runs on NCCL's point-to-point path, which has LL and Simple "
                        "only; expected auto, ll or simple");
  }
  try {
    setup.settings = parse_nccl_env(nccl_variables(in.nccl));
  } catch (const NcclSettingError& e) {
    std::string key = nccl_key_of(e.variable);
    // nccl.nchannels sets both bounds: point at it when it is what gave this one.
    if ((key == "nccl.min_nchannels" || key == "nccl.max_nchannels") &&
        !in.places.origins.count(key) && in.places.origins.count("nccl.nchannels")) {
      key = "nccl.nchannels";
    }
    throw key_error(in.places, key, e.message);
  }
  // Where a nccl setting came from, for messages that blame another key.
  const auto from = [&](const std::string& key) {
    const auto it = in.places.origins.find(key);
    if (it == in.places.origins.end()) return std::string();
    const KeyOrigin& o = it->second;
    return " (" + o.where +
           (o.line > 0 ? ":" + std::to_string(o.line) + ":" + std::to_string(o.column) : "") + ")";
  };
  const CollectiveAlgorithm* fixed = find_collective_algorithm(w.algorithm);
  if (fixed != nullptr && fixed->nccl_algo && !setup.settings.algo.allows(*fixed->nccl_algo)) {
    throw key_error(in.places, "workload.algorithm",
                    "workload.algorithm " + w.algorithm + " is excluded by nccl.algo " +
                        in.nccl.algo + from("nccl.algo") +
                        "; expected one algorithm setting that allows it");
  }
  if (w.protocol != "auto" && setup.settings.proto.set_by_user &&
      !setup.settings.proto.allowed[static_cast<int>(parse_nccl_proto(w.protocol))]) {
    throw key_error(in.places, "workload.protocol",
                    "workload.protocol " + w.protocol + " is excluded by nccl.proto " +
                        in.nccl.proto + from("nccl.proto") +
                        "; expected one protocol setting that allows it");
  }

  const int g = per_server;
  setup.layout = RankLayout{ranks, g};
  if (per_server != server_gpus) {
    setup.rank_hosts.resize(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      setup.rank_hosts[static_cast<size_t>(r)] = r / g * server_gpus + r % g;
    }
  }
  if (ranks % g != 0) {
    // NCCL's trees join whole nodes; with a partial server only the ring (and the others) run.
    if (w.algorithm == "tree") {
      throw key_error(in.places, "workload.algorithm",
                      "tree joins whole servers, but ngpus " + std::to_string(ranks) +
                          " is not a multiple of the " + std::to_string(g) +
                          " GPUs per server; expected auto, ring or halving_doubling, or ngpus a "
                          "multiple of " +
                          std::to_string(g));
    }
    setup.settings.algo.allowed[static_cast<int>(NcclAlgo::kTree)] = false;
  }
  NcclTuneInputs& t = setup.tune;
  t.nranks = ranks;
  t.nnodes = setup.layout.servers();
  // NCCL's model takes equal nodes: a partial last server is modelled as one-GPU nodes (Tree
  // is off then, above); ranks within one server are one node.
  if (ranks % g != 0) t.nnodes = ranks <= g ? 1 : ranks;
  t.compute_capability = in.nccl.compute_capability;
  set_tuning(setup, in);
  // PCIe peer-to-peer servers have no NVSwitch (in.nvlink_rate_bps is then their PCIe rate).
  setup.nvswitch = fabric.gpus_per_server > 1 && in.nvlink_rate_bps > 0 && !in.intra_pcie;
  setup.nvlink_GBps = static_cast<double>(in.nvlink_rate_bps) / 8e9;
  setup.flow_mode = in.flow_mode;
  setup.infiniband = in.infiniband;
  setup.switch_hop_ps = in.switch_hop_ps;
  // The NICs the ranks of one server use: on a rail-optimized server NIC n hangs off GPU n mod G
  // (rail_optimized.hpp), and the ranks sit on GPUs 0 to R − 1; on the other families' servers
  // (topologies/servers.hpp) every GPU has one NIC.
  int nics = fabric.kind == "rail-optimized" ? 1 : g;
  if (fabric.kind == "rail-optimized") {
    const int n_nics = in.nics_per_server > 0 ? in.nics_per_server : server_gpus;
    nics = 0;
    for (int n = 0; n < n_nics; ++n) nics += n % server_gpus < g ? 1 : 0;
    nics = std::max(1, nics);
  }
  const double nic_GBps = static_cast<double>(in.host_rate_bps) / 8e9;
  setup.nic_GBps_per_gpu = nic_GBps * nics / g;
  set_nvls(setup);
  // SHARP reduces sum, min and max (nccl-rdma-sharp-plugins' op table; NCCL's avg runs as a sum
  // scaled after), not prod: NCCL's collNetSupportMatrix leaves CollNet out for it.
  if (w.redop == "prod") {
    for (std::string* off : {&setup.collnet_direct_off, &setup.collnet_chain_off}) {
      if (off->empty()) *off = "SHARP reduces sum, min and max, not prod (workload.redop)";
    }
    setup.collnet_direct_flow_only = setup.collnet_chain_flow_only = false;
    t.collnet_direct_available = t.collnet_chain_available = false;
  }
  // Asked for, but neither CollNet algorithm can run here: said (NCCL falls back silently).
  if (setup.settings.collnet_enable == 1 && w.algorithm == "auto" && w.collective == "all_reduce" &&
      !setup.collnet_direct_off.empty() && !setup.collnet_chain_off.empty() && !in.flow_mode) {
    std::fprintf(stderr,
                 "fabricsim: note: nccl.collnet_enable is 1, but CollNet cannot run here: %s\n",
                 setup.collnet_chain_off.c_str());
  }
  if (!setup.nvls_off.empty() && w.algorithm == "nvls") {
    throw key_error(
        in.places, "workload.algorithm",
        "workload.algorithm nvls asks for NVLS, which cannot run here: " + setup.nvls_off +
            (setup.nvls_tree_off.empty() ? "; expected auto, ring, tree or nvls_tree"
                                         : "; expected auto, ring or tree"));
  }
  // The algorithms NCCL runs elsewhere only: a workload that names one that cannot run here
  // is refused with the reason.
  for (const auto& [name, off] :
       {std::pair<const char*, std::string>{"nvls_tree", setup.nvls_tree_off},
        {"pat", setup.pat_off},
        {"collnet_direct", setup.collnet_direct_off},
        {"collnet_chain", setup.collnet_chain_off}}) {
    if (w.algorithm == name && !off.empty()) {
      throw key_error(in.places, "workload.algorithm",
                      "workload.algorithm " + std::string(name) + " cannot run here: " + off +
                          (std::string(name) == "pat" ? "; expected auto or ring"
                                                      : "; expected auto, ring or tree"));
    }
  }
  const CollectiveAlgorithm* forced = find_collective_algorithm(w.algorithm);
  const bool forced_simple_only = forced != nullptr && forced->nccl_algo.has_value() &&
                                  *forced->nccl_algo != NcclAlgo::kTree &&
                                  *forced->nccl_algo != NcclAlgo::kRing;
  if (forced_simple_only && w.protocol != "auto" && w.protocol != "simple") {
    const std::string nccl_name = nccl_spelling(*forced->nccl_algo);
    throw key_error(in.places, "workload.protocol",
                    "NCCL's " + nccl_name + " runs the Simple protocol only, not " + w.protocol +
                        "; expected auto or simple");
  }
  const bool simple_allowed = (w.protocol == "auto" || w.protocol == "simple") &&
                              (!setup.settings.proto.set_by_user ||
                               setup.settings.proto.allowed[static_cast<int>(NcclProto::kSimple)]);
  if (forced_simple_only && !simple_allowed) {
    throw key_error(in.places, "nccl.proto",
                    "nccl.proto " + in.nccl.proto +
                        " leaves out Simple, the only protocol of workload.algorithm " +
                        w.algorithm + "; expected a list with Simple");
  }
  if (w.algorithm == "auto" && w.collective != "alltoall" && w.collective != "sendrecv") {
    // NCCL_ALGO may allow, for this collective, only algorithms NCCL cannot run here: bad
    // input, with each one's reason (NCCL itself errors out or falls back, by release).
    bool any = false;
    std::string why;
    for (int ai = 0; ai < kNcclNumAlgos; ++ai) {
      const auto a = static_cast<NcclAlgo>(ai);
      if (!nccl_algo_supported(w.collective, a) || !setup.settings.algo.allows(a)) continue;
      const std::string off = algorithm_off(setup, a, simple_allowed);
      if (off.empty()) {
        any = true;
      } else {
        why += std::string(why.empty() ? "" : "; ") + nccl_spelling(a) + ": " + off;
      }
    }
    if (!any && !why.empty()) {
      throw key_error(in.places, "nccl.algo",
                      "nccl.algo " + in.nccl.algo + " leaves " + w.collective +
                          " only algorithms that cannot run here (" + why +
                          "); expected a list that allows Ring" +
                          (w.collective == "all_reduce" ? " or Tree" : ""));
    }
    if (!any) {
      setup.note = "NCCL_ALGO " + in.nccl.algo + " leaves no algorithm for " + w.collective +
                   " here; NCCL falls back to Ring, and so does fabricsim";
      std::fprintf(stderr, "fabricsim: note: %s\n", setup.note.c_str());
    }
  }
  // NCCL opens two channels per NIC on InfiniBand/RoCE (its ring search duplicates the
  // channels it finds); NCCL_MIN/MAX_NCHANNELS bound the count.
  int channels = std::min(2 * nics, kNcclMaxChannelsAccepted);
  if (setup.settings.min_nchannels > 0) channels = std::max(channels, setup.settings.min_nchannels);
  if (setup.settings.max_nchannels > 0) channels = std::min(channels, setup.settings.max_nchannels);
  setup.channels = channels;

  t.nchannels = channels;
  t.bw_inter_GBps = nic_GBps * nics / channels;
  // NCCL's ring graph has bwIntra = bwInter (the NIC limits) as soon as there is a network;
  // NVLink's speed counts only inside a single server.
  t.bw_intra_GBps = t.nnodes == 1 && g > 1 && in.nvlink_rate_bps > 0
                        ? static_cast<double>(in.nvlink_rate_bps) / 8e9 / channels
                        : t.bw_inter_GBps;
  // The CollNet graphs' bwIntra: NCCL's search raises it from bwInter, up to twice, while every
  // GPU's NVLink carries it on each channel (search.cc, pass 2 for trees and CollNet).
  t.collnet_bw_intra_GBps =
      g > 1 && in.nvlink_rate_bps > 0
          ? std::max(t.bw_inter_GBps, std::min(2 * t.bw_inter_GBps, setup.nvlink_GBps / channels))
          : t.bw_intra_GBps;
  // NCCL's typeIntra: PATH_NVL through an NVSwitch, PATH_PIX/PXB for P2P over PCIe switches.
  // One GPU a server has no intra-node path at all (NCCL's PATH_LOC): its steps keep the
  // NVLink row, as with an NVSwitch, so gpu_interconnect changes nothing there.
  t.intra_hw = in.intra_pcie && g > 1 ? NcclHw::kPci : NcclHw::kNvlink;
  t.gpu_nic_path = NcclPathType::kPix;  // a GPU and its NIC under one PCIe switch (DGX)
  setup.staged = t.gpu_nic_path > setup.settings.net_gdr_level ||
                 effective_net(setup.settings) == NcclNet::kSocket;
  setup.pcie_rate_bps = in.pcie_rate_bps;
  setup.pcie_latency_ps = in.pcie_latency_ps;
  setup.step_latency_ps = in.nccl.step_latency_ps;
  setup.launch_latency_ps = in.nccl.launch_latency_ps;

  // Refuse up front a sweep whose largest DAG would not fit in memory (~100 B per transfer,
  // twice while it is built), rather than be killed by the OOM killer hours in. 16 M transfers
  // is about 3 GiB while built: 1,024 GPUs' 256 MiB Tree/LL128 AllReduce (11.5 M) fits.
  constexpr int64_t kMaxTransfers = 16'000'000;
  const int elem = datatype_bytes(w.datatype);
  int64_t worst = 0, worst_size = 0;
  std::string worst_protocol;
  // Where NCCL's own model would pick PAT, NVLSTree or CollNet and the run cannot (the flow
  // mode has none of them): said, not silently replaced by the model's next choice.
  NcclTuneInputs flow_all = t;
  flow_all.collective = w.collective;
  flow_all.pat_enabled = true;
  flow_all.nvls_tree_available = setup.nvls_tree_flow_only;
  flow_all.collnet_direct_available = setup.collnet_direct_flow_only;
  flow_all.collnet_chain_available = setup.collnet_chain_flow_only;
  constexpr int kFlowMissing = 4;
  const NcclAlgo flow_missing[kFlowMissing] = {NcclAlgo::kNvlsTree, NcclAlgo::kPat,
                                               NcclAlgo::kCollNetDirect, NcclAlgo::kCollNetChain};
  const char* const flow_missing_what[kFlowMissing] = {
      " (NVLS inside each NVSwitch server, a tree between them)",
      " (AllGather and ReduceScatter on one GPU a server, NCCL 2.23+)",
      " (AllReduce through SHARP in the switches)", " (AllReduce through SHARP in the switches)"};
  int64_t flow_from[kFlowMissing] = {}, flow_to[kFlowMissing] = {};
  int64_t collnet_from = 0, collnet_to = 0;
  std::string collnet_name;
  const bool flow_auto = in.flow_mode && w.algorithm == "auto" && simple_allowed;
  for (int64_t size : sweep_sizes(w.minbytes, w.maxbytes, w.stepfactor, elem)) {
    const SizePlan plan = plan_size(setup, size, elem);
    if (plan.algorithm.rfind("collnet_", 0) == 0) {
      if (collnet_from == 0) collnet_from = plan.size.size_bytes;
      collnet_to = plan.size.size_bytes;
      collnet_name = plan.algorithm;
    }
    // The fastest of them in NCCL's model, if it beats the model's choice among the rest: the
    // one NCCL would pick (scanned in NCCL's order, ties to the first).
    int best = -1;
    double best_us = plan.nccl_model_time_us;
    for (const NcclAlgo a : kNcclSelectionOrder) {
      const int i =
          static_cast<int>(std::find(flow_missing, flow_missing + kFlowMissing, a) - flow_missing);
      if (i == kFlowMissing || !flow_auto || plan.nccl_model_time_us < 0) continue;
      const bool has = a == NcclAlgo::kPat             ? nccl_pat_unavailable(flow_all).empty()
                       : a == NcclAlgo::kNvlsTree      ? flow_all.nvls_tree_available
                       : a == NcclAlgo::kCollNetDirect ? flow_all.collnet_direct_available
                                                       : flow_all.collnet_chain_available;
      if (!has || !nccl_algo_supported(w.collective, a) || !setup.settings.algo.allows(a)) {
        continue;
      }
      const double us = predicted_time_us(flow_all, a, NcclProto::kSimple, plan.size.size_bytes);
      if (us < best_us) {
        best = i;
        best_us = us;
      }
    }
    if (best >= 0) {
      if (flow_from[best] == 0) flow_from[best] = plan.size.size_bytes;
      flow_to[best] = plan.size.size_bytes;
    }
    const int64_t t = in.flow_mode
                          ? estimate_flows(setup.layout, plan.spec)
                          : estimate_transfers(setup.layout, plan.spec, plan.buffer_count, elem);
    if (t > worst) {
      worst = t;
      worst_size = size;
      worst_protocol = plan.protocol;
    }
  }
  for (int i = 0; i < kFlowMissing; ++i) {
    if (flow_from[i] == 0) continue;
    const std::string name = nccl_spelling(flow_missing[i]);
    setup.limits.push_back(
        {"NCCL's " + name + " algorithm",
         "NCCL " + tuning_of(t).name + "'s model picks " + name + flow_missing_what[i] + " for " +
             w.collective +
             (flow_from[i] == flow_to[i]
                  ? " at " + format_size(flow_from[i])
                  : " from " + format_size(flow_from[i]) + " to " + format_size(flow_to[i])) +
             " here; the flow mode has no " + name +
             " and runs those sizes as the model's next choice (mode: packet runs " + name + ")"});
  }
  if (collnet_from > 0) {
    setup.limits.push_back(
        {"SHARP's aggregation trees and resources",
         w.collective + " runs " + collnet_name +
             (collnet_from == collnet_to
                  ? " at " + format_size(collnet_from)
                  : " from " + format_size(collnet_from) + " to " + format_size(collnet_to)) +
             " with the switches' reduction as a join at each head's first switch: trees rooted "
             "above it (their hops, the uplinks' bytes, oversubscription above the leaves), "
             "SHARP's resource limits (aggregation trees a switch, streaming buffers) and the "
             "reduction's own rate are not modelled"});
  }
  if (worst > kMaxTransfers && in.flow_mode) {
    throw key_error(in.places, "mode",
                    "size " + format_size(worst_size) + " would run as " + std::to_string(worst) +
                        " flows (the flow mode's " + w.collective +
                        " has one per connection of its ranks); expected at most " +
                        std::to_string(kMaxTransfers));
  }
  if (worst > kMaxTransfers) {
    throw key_error(in.places, "workload.maxbytes",
                    "size " + format_size(worst_size) + " would replay as " +
                        std::to_string(worst) + " transfers (about " +
                        std::to_string(worst * 200 / (1 << 20)) +
                        " MiB while built); expected at most " + std::to_string(kMaxTransfers) +
                        (worst_protocol == "simple"
                             ? ": lower workload.maxbytes, or raise nccl.buffsize (NCCL_BUFFSIZE) "
                               "for fewer, larger chunks"
                             : ": lower workload.maxbytes, or run it in Simple (workload.protocol: "
                               "simple; its chunks are larger than " +
                                   worst_protocol + "'s)"));
  }
  return setup;
}

}  // namespace fabricsim
