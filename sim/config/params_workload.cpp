// The scenario's top-level keys and the `workload:`, `nccl:` and `measured:` sections'
// parameters (Scenario, WorkloadConfig, NcclConfig; scenario.hpp): their tables and the
// workload's cross-field rules.
#include "collectives/nccl_versions/nccl_tuning.hpp"
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

const Choices& workload_algorithms() {
  // Ring, Tree, NVLS, NVLSTree, PAT, CollNetDirect and CollNetChain: NCCL_ALGO's spellings.
  static const Choices algorithms{"algorithm",
                                  {"auto"},
                                  {},
                                  {{"Ring", "ring"},
                                   {"Tree", "tree"},
                                   {"NVLS", "nvls"},
                                   {"NVLSTree", "nvls_tree"},
                                   {"nvlstree", "nvls_tree"},
                                   {"PAT", "pat"},
                                   {"CollNetDirect", "collnet_direct"},
                                   {"collnetdirect", "collnet_direct"},
                                   {"COLLNETDIRECT", "collnet_direct"},
                                   {"CollNetChain", "collnet_chain"},
                                   {"collnetchain", "collnet_chain"},
                                   {"COLLNETCHAIN", "collnet_chain"}},
                                  "workload.algorithm"};
  return algorithms;
}

namespace {

/// NCCL_BUFFSIZE: NCCL keeps buffer sizes in an int; fabricsim takes 64 KiB (8 KiB steps) to
/// 1 GiB.
const QuantitySpec kNcclBuffsize{"size", "4MiB",           parse_size_bytes,
                                 65'536, int64_t{1} << 30, "a buffer size from 64KiB to 1GiB"};
const QuantitySpec kNcclLatency{
    "time", "2us", parse_time_ps, 0, 1'000'000'000'000, "a time from 0s to 1s"};
const Choices kTransports{"transport", {"roce", "infiniband"}, {}, {}};
const Choices kModes{"mode", {"packet", "flow"}, {}, {}};
const Choices kCollectives{
    "collective",
    {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"},
    {},
    // NCCL's own spellings: its API (ncclAllReduce, NCCL_INFO lines "AllReduce: opCount ..."),
    // nccl-tests' binaries (all_reduce_perf), and the common lower-case contractions.
    {{"allreduce", "all_reduce"},
     {"allgather", "all_gather"},
     {"reducescatter", "reduce_scatter"},
     {"all_to_all", "alltoall"},
     {"send_recv", "sendrecv"},
     {"AllReduce", "all_reduce"},
     {"AllGather", "all_gather"},
     {"ReduceScatter", "reduce_scatter"},
     {"Broadcast", "broadcast"},
     {"Reduce", "reduce"},
     {"AllToAll", "alltoall"},
     {"SendRecv", "sendrecv"},
     {"ncclAllReduce", "all_reduce"},
     {"ncclAllGather", "all_gather"},
     {"ncclReduceScatter", "reduce_scatter"},
     {"ncclBroadcast", "broadcast"},
     {"ncclReduce", "reduce"},
     {"all_reduce_perf", "all_reduce"},
     {"all_gather_perf", "all_gather"},
     {"reduce_scatter_perf", "reduce_scatter"},
     {"broadcast_perf", "broadcast"},
     {"reduce_perf", "reduce"},
     {"alltoall_perf", "alltoall"},
     {"sendrecv_perf", "sendrecv"}}};
// NCCL_ALGO and NCCL_PROTO spell them Ring, Tree, LL, LL128, Simple.
const Choices kProtocols{"protocol",
                         {"auto", "ll", "ll128", "simple"},
                         {},
                         {{"LL", "ll"}, {"LL128", "ll128"}, {"Simple", "simple"}}};
/// nccl-tests' datatypes and their aliases, as the collectives declare them
/// (collectives/workload_params.hpp).
const Choices kDatatypes = [] {
  Choices c{"datatype", {}, {}, {}};
  for (const NcclDatatype& t : kNcclDatatypes) c.available.emplace_back(t.name);
  for (const auto& [alias, name] : kNcclDatatypeAliases) c.aliases.emplace_back(alias, name);
  return c;
}();

constexpr auto kWorkload = &Scenario::workload;
constexpr auto kNccl = &Scenario::nccl;
using W = WorkloadConfig;
using N = NcclConfig;

}  // namespace

// clang-format off
std::span<const Field> scenario_params() {
  static const Field rows[] = {
  {"", "name", false, String(), own<&Scenario::name>, "the scenario's name; left out = the file's stem"},
  {"", "seed", false, Unsigned(), own<&Scenario::seed>, "drives every random stream"},
  {"", "transport", false, Choice(kTransports), own<&Scenario::transport>,
   "roce (PFC, DCQCN) | infiniband (credits per virtual lane)"},
  {"", "mode", false, Choice(kModes), own<&Scenario::mode>,
   "packet (queues, PFC, ECN) | flow (max-min fair fluid flows, for large fabrics)"},
  };
  return rows;
}

std::span<const Field> input_file_params() {
  static const Field rows[] = {
  {"", "cost_model", false, String(), own<&Scenario::cost_model>,
   "unit-price file (configs/cost_*.yaml) for the cost proxy; \"\" = none"},
  {"measured", "nccl_tests", false, String(), own<&Scenario::measured_nccl_tests>,
   "a real nccl-tests log of the same collective, printed beside the simulated busbw"},
  {"measured", "perftest", false, String(), own<&Scenario::measured_perftest>,
   "a real perftest log of the perftest section's test, printed beside the simulated BW or latency"},
  };
  return rows;
}

std::span<const Field> workload_params() {
  static const Field rows[] = {
  {"workload", "collective", false, Choice(kCollectives), at<kWorkload, &W::collective>,
   "the nccl-tests binary's collective (NCCL's spellings accepted)"},
  {"workload", "algorithm", false, Choice(workload_algorithms()), at<kWorkload, &W::algorithm>,
   "auto = NCCL's cost model; p2p for alltoall and sendrecv"},
  {"workload", "protocol", false, Choice(kProtocols), at<kWorkload, &W::protocol>,
   "auto = NCCL's cost model"},
  {"workload", "datatype", false, Choice(kDatatypes), at<kWorkload, &W::datatype>,
   "element type (nccl-tests -d)"},
  {"workload", "redop", false, Choice(kRedops), at<kWorkload, &W::redop>,
   "reduction (nccl-tests -o)"},
  {"workload", "op", false,  // nccl-tests' -o; the same setting as redop
   Choice(kRedops), at<kWorkload, &W::redop>, "redop under nccl-tests' name; give one of the two"},
  {"workload", "ngpus", false, Int(2, 1 << 20), at<kWorkload, &W::ngpus>,
   "ranks taking part: the first ngpus GPUs; 0 = every GPU"},
  {"workload", "ranks_per_server", false, Int(1, 1024), at<kWorkload, &W::ranks_per_server>,
   "ranks per server (mpirun -npernode); 0 = all its GPUs"},
  {"workload", "root", false, Int(0, (1 << 20) - 1), at<kWorkload, &W::root>,
   "broadcast and reduce root rank (nccl-tests -r)"},
  };
  return rows;
}

std::span<const Field> nccl_params() {
  static const Field rows[] = {
  {"nccl", "algo", false, String(), at<kNccl, &N::algo>, "NCCL_ALGO; \"\" = every algorithm"},
  {"nccl", "proto", false, String(), at<kNccl, &N::proto>, "NCCL_PROTO; \"\" = every protocol"},
  {"nccl", "buffsize", false, Quantity(kNcclBuffsize), at<kNccl, &N::buffsize_bytes>,
   "NCCL_BUFFSIZE (Simple's buffer); 0 = NCCL's 4 MiB"},
  {"nccl", "nchannels", false,  // NCCL_NCHANNELS of older NCCL: both bounds
   Custom("integer", "1 … 64"), at<kNccl, &N::min_nchannels>,
   "NCCL_NCHANNELS of older NCCL: sets min_nchannels and max_nchannels", nullptr, nullptr, nullptr,
   [](const Value& v, Scenario& s) { s.nccl.min_nchannels = s.nccl.max_nchannels = int(v.integer(1, 64)); }},
  {"nccl", "min_nchannels", false, Int(1, 64), at<kNccl, &N::min_nchannels>,
   "NCCL_MIN_NCHANNELS; 0 = unset"},
  {"nccl", "max_nchannels", false, Int(1, 64), at<kNccl, &N::max_nchannels>,
   "NCCL_MAX_NCHANNELS; 0 = unset"},
  {"nccl", "net_gdr_level", false, Text("a level: LOC, PIX, PXB, PHB or SYS"),
   at<kNccl, &N::net_gdr_level>, "NCCL_NET_GDR_LEVEL; \"\" = NCCL's"},
  {"nccl", "ib_disable", false, Bool(), at<kNccl, &N::ib_disable>,
   "NCCL_IB_DISABLE: true = NCCL's socket transport"},
  {"nccl", "net", false, Text("IB or Socket"), at<kNccl, &N::net>,
   "NCCL_NET; \"\" = IB when there is one"},
  {"nccl", "step_latency", false,  // absent = NCCL's per-step constants
   Quantity(kNcclLatency), at<kNccl, &N::step_latency_ps>,
   "per-step software latency; -1 = NCCL's constants"},
  {"nccl", "launch_latency", false,  // absent = NCCL's base latency
   Quantity(kNcclLatency), at<kNccl, &N::launch_latency_ps>,
   "per-collective latency; -1 = NCCL's constants"},
  {"nccl", "nvls_enable", false, Int(0, 2), at<kNccl, &N::nvls_enable>,
   "NCCL_NVLS_ENABLE (NCCL src/transport/nvls.cc, default 2): 0 = no NVLS nor NVLSTree, 1 "
   "or 2 = both where the hardware has them"},
  {"nccl", "collnet_enable", false, Int(0, 1), at<kNccl, &N::collnet_enable>,
   "NCCL_COLLNET_ENABLE (NCCL src/init.cc, default 0): 1 = CollNetDirect and CollNetChain "
   "AllReduce through SHARP in-network reduction, on transport infiniband"},
  {"nccl", "compute_capability", false, Int(50, 120), at<kNccl, &N::compute_capability>,
   "the GPUs' compute capability x 10 (70 V100, 80 A100, 90 H100/H200, 100 B200): NCCL's "
   "tuning tables; NVLS needs 90 or above"},
  {"nccl", "version", false, Custom("string", "2.18 … 2.28"), at<kNccl, &N::version>,
   "the NCCL release whose tuning tables pick algorithms and protocols (2.18 to 2.28, "
   "e.g. 2.26 or 2.26.6); absent = the measured log's NCCL version, else the newest",
   nullptr, nullptr, nullptr,
   [](const Value& v, Scenario& s) {
     const std::string text = v.scalar("an NCCL version such as 2.26");
     try {
       nccl_tuning(text);
     } catch (const std::invalid_argument& e) {
       v.fail(e.what());
     }
     s.nccl.version = text;
     s.nccl.version_from_log = false;
   }},
  };
  return rows;
}

std::span<const Field> workload_sweep_params() {
  static const Field rows[] = {
  {"workload", "minbytes", true, Quantity(kSweepSize), at<kWorkload, &W::minbytes>,
   "first size of the sweep (nccl-tests -b)"},
  {"workload", "maxbytes", true, Quantity(kSweepSize), at<kWorkload, &W::maxbytes>,
   "last size of the sweep (nccl-tests -e)"},
  {"workload", "stepfactor", false, Int(2, kInt64Max), at<kWorkload, &W::stepfactor>,
   "multiplicative step between sizes (nccl-tests -f)"},
  };
  return rows;
}
// clang-format on

void check_workload(const std::map<std::string, Value>& found, Scenario& s) {
  if (found.count("workload.op") && found.count("workload.redop")) {
    // One setting under two names: a --set of either overrides the file's; two in one place
    // contradict each other.
    const Value& op = found.at("workload.op");
    const Value& redop = found.at("workload.redop");
    if (op.overridden() == redop.overridden()) {
      op.fail("op and redop are the same setting (nccl-tests' -o); give one");
    }
    s.workload.redop = (op.overridden() ? op : redop).choice(kRedops);
  }
  if (s.workload.minbytes > s.workload.maxbytes) {
    const Value& min = found.at("workload.minbytes");
    const Value& max = found.at("workload.maxbytes");
    const std::string min_text = min.node().Scalar(), max_text = max.node().Scalar();
    if (min.overridden() && !max.overridden()) {
      min.fail("minbytes (" + min_text + ") is greater than maxbytes (" + max_text + ")");
    }
    max.fail("maxbytes (" + max_text + ") is less than minbytes (" + min_text + ")");
  }
}

}  // namespace fabricsim::config_detail
