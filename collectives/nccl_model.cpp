#include "collectives/nccl_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "sim/core/strings.hpp"  // closest_match

namespace fabricsim {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

[[noreturn]] void fail(const std::string& variable, const std::string& message) {
  throw NcclSettingError(variable, message);
}

/// "; did you mean 'X'?" for `word` among `spellings` compared case-insensitively, or "".
std::string suggestion(const std::string& word, const std::vector<std::string>& spellings) {
  std::vector<std::string> lowered;
  for (const auto& s : spellings) lowered.push_back(lower(s));
  const std::string guess = closest_match(lower(word), lowered);
  for (size_t i = 0; i < lowered.size(); ++i) {
    if (lowered[i] == guess) return "; did you mean '" + spellings[i] + "'?";
  }
  return "";
}

// NCCL's spellings (init.cc ncclAlgoStr / ncclProtoStr), in index order.
// (fabricsim's NcclAlgo order: CollNet's two come last.)
const std::vector<std::string> kAlgoNames = {"Tree", "Ring",          "NVLS",        "NVLSTree",
                                             "PAT",  "CollNetDirect", "CollNetChain"};
const char* const kAlgoList = "Tree, Ring, NVLS, NVLSTree, PAT, CollNetDirect or CollNetChain";
const std::vector<std::string> kProtoNames = {"LL", "LL128", "Simple"};
const std::vector<std::string> kPathNames = {"LOC", "NVL", "NVB", "PIX",
                                             "PXB", "PXN", "PHB", "SYS"};

/// NCCL's parseList, strict: see parse_algo_list.
template <size_t N, class ParseOne>
std::array<bool, N> parse_list(const std::string& value, const std::string& variable,
                               const std::string& names, const std::string& kind,
                               ParseOne parse_one) {
  std::string body = trim(value);
  const bool exclude = !body.empty() && body[0] == '^';
  if (exclude) body = body.substr(1);
  std::array<bool, N> list;
  list.fill(exclude);
  bool any = false;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t comma = std::min(body.find(',', start), body.size());
    const std::string token = trim(body.substr(start, comma - start));
    start = comma + 1;
    if (token.empty()) continue;  // NCCL's strtok skips empty fields
    list[static_cast<size_t>(parse_one(token, variable))] = !exclude;
    any = true;
  }
  if (!any) {
    fail(variable, "expected a comma-separated list of " + names +
                       " (any case), optionally after '^' to exclude them; got '" + value + "'");
  }
  if (std::none_of(list.begin(), list.end(), [](bool b) { return b; })) {
    fail(variable, "'" + value + "' leaves no " + kind + " allowed (" + names + ")");
  }
  return list;
}

/// A plain decimal integer in [lo, hi], else NcclSettingError saying `expected`.
int64_t parse_integer(const std::string& variable, const std::string& value, int64_t lo, int64_t hi,
                      const std::string& expected) {
  const std::string t = trim(value);
  const bool digits = !t.empty() && t.size() <= 18 &&
                      std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) fail(variable, "expected " + expected + ", got '" + value + "'");
  const int64_t v = std::stoll(t);
  if (v < lo || v > hi) fail(variable, "expected " + expected + ", got " + t);
  return v;
}

// ----- cost model constants common to every release line (src/graph/tuning.cc); the tables
// that differ are in collectives/nccl_versions/ -----

// tuning.cc: NVLS's bus bandwidth × 5/6 is the algorithm bandwidth NCCL stores.
constexpr double kNvlsRatio = 5.0 / 6.0;

// treeCorrectionFactor[proto][log2(bytes/64)], powers of two from 64 B to 256 MiB.
constexpr int kTreeCorrectionEntries = 23;
constexpr double kTreeCorrection[kNcclNumProtos][kTreeCorrectionEntries] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

// NCCL's ncclFunc_t order.
enum class Func { kBroadcast, kReduce, kAllGather, kReduceScatter, kAllReduce };

Func func_of(const std::string& collective) {
  static const std::vector<std::string> names = {"broadcast", "reduce", "all_gather",
                                                 "reduce_scatter", "all_reduce"};
  for (size_t i = 0; i < names.size(); ++i) {
    if (collective == names[i]) return static_cast<Func>(i);
  }
  const std::string guess = closest_match(collective, names);
  throw std::invalid_argument("NCCL cost model: unknown collective '" + collective +
                              "' (all_reduce, all_gather, reduce_scatter, broadcast, reduce)" +
                              (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
}

int log2i(int64_t n) {  // floor(log2(n)), 0 for n <= 1
  int l = 0;
  while (n > 1) {
    n >>= 1;
    ++l;
  }
  return l;
}

void validate(const NcclTuneInputs& in) {
  const auto bad = [](const std::string& what) {
    throw std::invalid_argument("NCCL cost model: " + what);
  };
  func_of(in.collective);
  if (in.nranks < 2) bad("nranks must be >= 2, got " + std::to_string(in.nranks));
  if (in.nnodes < 1 || in.nnodes > in.nranks) {
    bad("nnodes must be in 1..nranks, got " + std::to_string(in.nnodes));
  }
  if (in.nranks % in.nnodes != 0) bad("nranks must be a multiple of nnodes");
  if (in.nchannels < 1 || in.nchannels > kNcclMaxChannelsAccepted) {
    bad("nchannels must be in 1.." + std::to_string(kNcclMaxChannelsAccepted) + ", got " +
        std::to_string(in.nchannels));
  }
  if (!(in.bw_intra_GBps > 0) || !std::isfinite(in.bw_intra_GBps)) bad("bw_intra_GBps must be > 0");
  if (!(in.bw_inter_GBps > 0) || !std::isfinite(in.bw_inter_GBps)) bad("bw_inter_GBps must be > 0");
  if (in.compute_capability <= 0) bad("compute_capability must be > 0");
  if (in.intra_hw == NcclHw::kNet) bad("intra_hw must be kNvlink or kPci");
  if (!(in.latency_inter_us >= 0) || !std::isfinite(in.latency_inter_us)) {
    bad("latency_inter_us must be >= 0");
  }
}

int comp_cap_index(int cc, const NcclTuning& t) {
  if (cc >= 100 && t.blackwell_row) return 3;
  return cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}

int idx(NcclAlgo a) {
  return static_cast<int>(a);
}
int idx(NcclProto p) {
  return static_cast<int>(p);
}
int idx(NcclHw h) {
  return static_cast<int>(h);
}

std::string filters_text(const NcclSettings& s) {
  std::string algos, protos;
  for (int a = 0; a < kNcclNumAlgos; ++a) {
    if (s.algo.allowed[a]) algos += (algos.empty() ? "" : ",") + kAlgoNames[a];
  }
  for (int p = 0; p < kNcclNumProtos; ++p) {
    if (s.proto.allowed[p]) protos += (protos.empty() ? "" : ",") + kProtoNames[p];
  }
  return "NCCL_ALGO allows " + algos + ", NCCL_PROTO " +
         (s.proto.set_by_user ? "allows " + protos : "unset");
}

}  // namespace

const char* to_string(NcclProto p) {
  switch (p) {
    case NcclProto::kLL:
      return "ll";
    case NcclProto::kLL128:
      return "ll128";
    case NcclProto::kSimple:
      return "simple";
  }
  return "?";
}

const char* to_string(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::kTree:
      return "tree";
    case NcclAlgo::kRing:
      return "ring";
    case NcclAlgo::kNvls:
      return "nvls";
    case NcclAlgo::kNvlsTree:
      return "nvls_tree";
    case NcclAlgo::kPat:
      return "pat";
    case NcclAlgo::kCollNetDirect:
      return "collnet_direct";
    case NcclAlgo::kCollNetChain:
      return "collnet_chain";
  }
  return "?";
}

const char* nccl_spelling(NcclAlgo a) {
  return kAlgoNames[static_cast<size_t>(idx(a))].c_str();
}

const char* to_string(NcclPathType t) {
  static const char* const names[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS"};
  return names[static_cast<int>(t)];
}

NcclSettingError::NcclSettingError(std::string variable_, std::string message_)
    : std::invalid_argument(variable_ + ": " + message_),
      variable(std::move(variable_)),
      message(std::move(message_)) {}

NcclProto parse_nccl_proto(const std::string& name, const std::string& variable) {
  const std::string l = lower(trim(name));
  for (int p = 0; p < kNcclNumProtos; ++p) {
    if (l == lower(kProtoNames[p])) return static_cast<NcclProto>(p);
  }
  fail(variable, "unknown protocol '" + name + "'; expected LL, LL128 or Simple" +
                     suggestion(trim(name), kProtoNames));
}

NcclAlgo parse_nccl_algo(const std::string& name, const std::string& variable) {
  const std::string l = lower(trim(name));
  for (int a = 0; a < kNcclNumAlgos; ++a) {
    if (l == lower(kAlgoNames[a])) return static_cast<NcclAlgo>(a);
  }
  if (l == "collnet") {
    fail(variable, "'" + trim(name) +
                       "' is not an NCCL algorithm name (ncclAlgoStr has two CollNet "
                       "algorithms); did you mean 'CollNetDirect' or 'CollNetChain'?");
  }
  fail(variable, "unknown algorithm '" + name + "'; expected " + kAlgoList +
                     suggestion(trim(name), kAlgoNames));
}

// ----- protocols -----

const ProtocolSpec& protocol_spec(NcclProto p) {
  // LL: NCCL_LL_LINES_PER_THREAD 8 × NCCL_LL_MAX_NTHREADS 512 × NCCL_STEPS × 16-byte lines.
  // LL128: NCCL_LL128_ELEMS_PER_THREAD 120 × NCCL_LL128_MAX_NTHREADS 640 × NCCL_STEPS × 8 bytes.
  static const ProtocolSpec specs[kNcclNumProtos] = {
      {NcclProto::kLL, 16, 8, int64_t{8} * 512 * kNcclSteps * 16, "NCCL_LL_BUFFSIZE"},
      {NcclProto::kLL128, 128, 120, int64_t{120} * 640 * kNcclSteps * 8, "NCCL_LL128_BUFFSIZE"},
      {NcclProto::kSimple, 1, 1, int64_t{1} << 22, "NCCL_BUFFSIZE"},
  };
  return specs[idx(p)];
}

int64_t step_data_bytes(NcclProto p, int64_t buffsize_bytes) {
  if (buffsize_bytes <= 0) throw std::invalid_argument("step_data_bytes: buffsize must be > 0");
  const ProtocolSpec& s = protocol_spec(p);
  const int64_t lines = buffsize_bytes / kNcclSteps / s.line_bytes;
  return lines * s.data_bytes_per_line;
}

double wire_factor(NcclProto p) {
  const ProtocolSpec& s = protocol_spec(p);
  return static_cast<double>(s.line_bytes) / s.data_bytes_per_line;
}

// ----- settings -----

NcclNet effective_net(const NcclSettings& s) {
  if (s.net != NcclNet::kAuto) return s.net;
  return s.ib_disable ? NcclNet::kSocket : NcclNet::kIb;
}

int64_t nccl_buffsize_bytes(NcclProto p, const NcclSettings& s) {
  const int64_t set = p == NcclProto::kLL      ? s.ll_buffsize_bytes
                      : p == NcclProto::kLL128 ? s.ll128_buffsize_bytes
                                               : s.buffsize_bytes;
  return set > 0 ? set : protocol_spec(p).default_buffsize_bytes;
}

NcclAlgoFilter parse_algo_list(const std::string& value, const std::string& variable) {
  NcclAlgoFilter f;
  f.allowed = parse_list<kNcclNumAlgos>(
      value, variable, "Tree, Ring, NVLS, NVLSTree, PAT, CollNetDirect, CollNetChain", "algorithm",
      [](const std::string& t, const std::string& v) { return idx(parse_nccl_algo(t, v)); });
  return f;
}

NcclProtoFilter parse_proto_list(const std::string& value, const std::string& variable) {
  NcclProtoFilter f;
  f.allowed = parse_list<kNcclNumProtos>(
      value, variable, "LL, LL128, Simple", "protocol",
      [](const std::string& t, const std::string& v) { return idx(parse_nccl_proto(t, v)); });
  f.set_by_user = true;
  return f;
}

NcclPathType parse_gdr_level(const std::string& value, const std::string& variable) {
  const std::string t = trim(value);
  for (size_t i = 0; i < kPathNames.size(); ++i) {
    if (t == kPathNames[i]) return static_cast<NcclPathType>(i);
  }
  const std::string names = "LOC, NVL, NVB, PIX, PXB, PXN, PHB, SYS";
  for (size_t i = 0; i < kPathNames.size(); ++i) {
    if (upper(t) == kPathNames[i]) {
      fail(variable, "NCCL compares path names in upper case and would ignore '" + value +
                         "'; did you mean '" + kPathNames[i] + "'?");
    }
  }
  if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // paths.cc levelsOldToNew: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, 5 SYS.
    static const NcclPathType old_to_new[] = {NcclPathType::kLoc, NcclPathType::kPix,
                                              NcclPathType::kPxb, NcclPathType::kPhb,
                                              NcclPathType::kSys, NcclPathType::kSys};
    const int64_t level =
        parse_integer(variable, t, 0, 5, "a path name (" + names + ") or a legacy level 0..5");
    return old_to_new[level];
  }
  fail(variable, "expected a path name (" + names + ") or a legacy level 0..5, got '" + value +
                     "'" + suggestion(t, kPathNames));
}

NcclSettings parse_nccl_env(const std::map<std::string, std::string>& env) {
  NcclSettings s;
  const auto get = [&](const char* key) -> const std::string* {
    const auto it = env.find(key);
    return it == env.end() ? nullptr : &it->second;
  };
  if (get("NCCL_NCHANNELS")) {
    fail("NCCL_NCHANNELS",
         "NCCL does not read NCCL_NCHANNELS; set NCCL_MIN_NCHANNELS and/or NCCL_MAX_NCHANNELS");
  }
  if (const auto* v = get("NCCL_ALGO")) s.algo = parse_algo_list(*v, "NCCL_ALGO");
  if (const auto* v = get("NCCL_PROTO")) s.proto = parse_proto_list(*v, "NCCL_PROTO");
  // NCCL keeps buffer sizes in an int.
  const int64_t max_buff = std::numeric_limits<int32_t>::max();
  const std::string bytes = "a whole number of bytes in 1.." + std::to_string(max_buff);
  for (const auto& [key, field] : {std::pair{"NCCL_BUFFSIZE", &s.buffsize_bytes},
                                   std::pair{"NCCL_LL_BUFFSIZE", &s.ll_buffsize_bytes},
                                   std::pair{"NCCL_LL128_BUFFSIZE", &s.ll128_buffsize_bytes}}) {
    if (const auto* v = get(key)) *field = parse_integer(key, *v, 1, max_buff, bytes);
  }
  const std::string max_ch = std::to_string(kNcclMaxChannelsAccepted);
  // connect.cc: the legacy NRINGS names first, the NCHANNELS names override them.
  const std::string min_nchannels_var =
      get("NCCL_MIN_NCHANNELS") ? "NCCL_MIN_NCHANNELS" : "NCCL_MIN_NRINGS";
  const std::string max_nchannels_var =
      get("NCCL_MAX_NCHANNELS") ? "NCCL_MAX_NCHANNELS" : "NCCL_MAX_NRINGS";
  if (const auto* v = get(min_nchannels_var.c_str())) {
    s.min_nchannels = static_cast<int>(parse_integer(
        min_nchannels_var, *v, 0, kNcclMaxChannelsAccepted, "a channel count in 0.." + max_ch));
  }
  if (const auto* v = get(max_nchannels_var.c_str())) {
    s.max_nchannels = static_cast<int>(parse_integer(
        max_nchannels_var, *v, 1, kNcclMaxChannelsAccepted, "a channel count in 1.." + max_ch));
  }
  if (s.min_nchannels > 0 && s.max_nchannels > 0 && s.min_nchannels > s.max_nchannels) {
    fail(min_nchannels_var, std::to_string(s.min_nchannels) + " is above " + max_nchannels_var +
                                " " + std::to_string(s.max_nchannels));
  }
  if (const auto* v = get("NCCL_NET_GDR_LEVEL")) s.net_gdr_level = parse_gdr_level(*v);
  if (const auto* v = get("NCCL_NVLS_ENABLE")) {
    s.nvls_enable = static_cast<int>(parse_integer("NCCL_NVLS_ENABLE", *v, 0, 2, "0, 1 or 2"));
  }
  if (const auto* v = get("NCCL_COLLNET_ENABLE")) {
    s.collnet_enable = static_cast<int>(parse_integer("NCCL_COLLNET_ENABLE", *v, 0, 1, "0 or 1"));
  }
  if (const auto* v = get("NCCL_IB_DISABLE")) {
    s.ib_disable = parse_integer("NCCL_IB_DISABLE", *v, 0, 1, "0 or 1") == 1;
  }
  if (const auto* v = get("NCCL_NET")) {
    const std::string l = lower(trim(*v));
    if (l == "ib") {
      s.net = NcclNet::kIb;
    } else if (l == "socket") {
      s.net = NcclNet::kSocket;
    } else {
      fail("NCCL_NET",
           "expected IB or Socket, got '" + *v + "'" + suggestion(trim(*v), {"IB", "Socket"}));
    }
    if (s.net == NcclNet::kIb && s.ib_disable) {
      fail("NCCL_NET", "IB is asked for but NCCL_IB_DISABLE=1 disables it");
    }
  }
  return s;
}

// ----- cost model -----

double nccl_hw_latency_us(NcclHw hw, NcclAlgo a, NcclProto p, const NcclTuning& t) {
  return t.hw_lat_us[idx(hw)][idx(a)][idx(p)];
}

double nccl_base_latency_us(NcclAlgo a, NcclProto p, const NcclTuning& t) {
  return t.base_lat_us[idx(a)][idx(p)];
}

double nccl_tree_correction_factor(NcclProto p, int64_t bytes) {
  if (bytes < 0) throw std::invalid_argument("nccl_tree_correction_factor: bytes must be >= 0");
  const int log_size = log2i(bytes >> 6);
  return log_size < kTreeCorrectionEntries ? kTreeCorrection[idx(p)][log_size] : 1.0;
}

bool nccl_algo_supported(const std::string& collective, NcclAlgo a) {
  const Func f = func_of(collective);
  if (a == NcclAlgo::kPat) return f == Func::kAllGather || f == Func::kReduceScatter;
  if (a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain) return f == Func::kAllReduce;
  return a == NcclAlgo::kRing || f == Func::kAllReduce;
}

namespace {

/// NVLSTree's cost (nccl_tuned_cost): the NVLS graph's channels and speed on several nodes.
NcclAlgoProtoCost nvls_tree_cost(const NcclTuneInputs& in, NcclProto p, const NcclTuning& t,
                                 int nsteps, int cc_index) {
  if (p != NcclProto::kSimple) {
    throw std::invalid_argument("NCCL cost model: NCCL's NVLSTree runs the Simple protocol only");
  }
  if (in.nvls_channels < 1 || !(in.nvls_bw_GBps > 0) || in.nnodes < 2) {
    throw std::invalid_argument(
        "NCCL cost model: NVLSTree needs the NVLS graph (nvls_channels, nvls_bw_GBps) on more "
        "than one node");
  }
  const int a = idx(NcclAlgo::kNvlsTree), s = idx(NcclProto::kSimple);
  const double nch = in.nvls_channels, bw = in.nvls_bw_GBps, nnodes = in.nnodes;
  const double base = t.base_lat_us[a][s];
  const double net = t.hw_lat_us[idx(NcclHw::kNet)][a][s];
  if (t.nvls_tree_legacy) {
    // 2.18: the graph's bandwidth, × .70 × nNodes / (2 (nNodes − 1)); one NET latency a hop of
    // a chain through every node, up and down.
    const double bus = nch * bw;
    return {base + 2 * (nnodes - 1) * net, bus * .70 * nnodes / (2 * (nnodes - 1)), bus, 0};
  }
  // 2.19+: intraLat + 2 log2(nNodes) × interLat (Simple: latencyInter twice, the flush).
  const double inter_lat = net + 2 * in.latency_inter_us;
  const double lat =
      base + t.hw_lat_us[idx(NcclHw::kNvlink)][a][s] + 2 * log2i(in.nnodes) * inter_lat;
  const double efficiency = t.nvls_efficiency[cc_index];
  if (efficiency > 0) {
    // 2.28: min(bwIntra × nvlsEfficiency × (nCh − 1)/nCh × 2, bwInter × (2 on up to 2 nodes),
    // perChMaxNVLSTreeBw) a channel, converted as Ring's (nRanks / nsteps).
    const int index2 = in.nnodes <= 2 ? in.nnodes - 1 : 2;
    const double cap = t.per_ch_max_nvls_tree_bws[cc_index][index2];
    double per_channel =
        std::min(bw * efficiency * (nch - 1) / nch * 2.0, bw * (in.nnodes <= 2 ? 2.0 : 1.0));
    if (cap > 0) per_channel = std::min(per_channel, cap);
    const double bus = nch * per_channel;
    return {lat, bus * in.nranks / nsteps, bus, 0};
  }
  // 2.19-2.27: min(bwIntra, bwInter, halved above 2 nodes) a channel, × 5/6.
  const double bus = nch * (in.nnodes <= 2 ? bw : bw / 2);
  return {lat, bus * kNvlsRatio, bus, 0};
}

/// PAT's cost (nccl_tuned_cost): AllGather / ReduceScatter, one GPU a node, 2.23+.
NcclAlgoProtoCost pat_cost(const NcclTuneInputs& in, NcclProto p, const NcclTuning& t) {
  if (p != NcclProto::kSimple) {
    throw std::invalid_argument("NCCL cost model: NCCL's PAT runs the Simple protocol only");
  }
  const std::string off = nccl_pat_unavailable(in);
  if (!off.empty()) throw std::invalid_argument("NCCL cost model: " + off);
  // "With ppn=1 latencies are fully exposed, use the Tree network latency" (2.23+), Simple: the
  // inter-node latency twice.
  const int s = idx(NcclProto::kSimple);
  const double inter_lat =
      t.hw_lat_us[idx(NcclHw::kNet)][idx(NcclAlgo::kTree)][s] + 2 * in.latency_inter_us;
  // 2.23-2.27 start from 8 µs ("Base time"), 2.28 from baseLat[PAT], also 8.
  const double base =
      t.base_lat_us[idx(NcclAlgo::kPat)][s] > 0 ? t.base_lat_us[idx(NcclAlgo::kPat)][s] : 8.0;
  const double lat = base + log2i(in.nnodes) * (inter_lat / 3.5) + in.nranks * 2.8;
  const double bus = in.nchannels * (in.nnodes <= 2 ? in.bw_intra_GBps : in.bw_inter_GBps) * .75;
  return {lat, bus, bus, 0};
}

/// CollNetDirect's and CollNetChain's cost (nccl_tuned_cost): AllReduce, Simple only.
NcclAlgoProtoCost collnet_cost(const NcclTuneInputs& in, NcclAlgo a, NcclProto p,
                               const NcclTuning& t) {
  if (p != NcclProto::kSimple) {
    throw std::invalid_argument(std::string("NCCL cost model: NCCL's ") + nccl_spelling(a) +
                                " runs the Simple protocol only");
  }
  const int ai = idx(a), s = idx(p);
  const double ppn = static_cast<double>(in.nranks) / in.nnodes, nch = in.nchannels;
  // bw = bwIntra for CollNet whatever the node count; busBw = nChannels × bw.
  double bus = nch * (in.collnet_bw_intra_GBps > 0 ? in.collnet_bw_intra_GBps : in.bw_intra_GBps);
  if (a == NcclAlgo::kCollNetDirect) {
    // "Collnet+Direct requires all GPUs to have a local NIC to work at full speed".
    double factor = ppn / nch;  // GPU/NIC ratio
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (in.compute_capability >= 90) bus *= .85;
  }
  const double intra_lat = t.hw_lat_us[idx(in.intra_hw)][ai][s];
  const bool tree_net = t.ppn1_tree_net_latency && in.nranks == in.nnodes;
  const double inter_lat = t.hw_lat_us[idx(NcclHw::kNet)][tree_net ? idx(NcclAlgo::kTree) : ai][s] +
                           2 * in.latency_inter_us;  // Simple: latencyInter twice (the flush)
  const int local = in.nranks / in.nnodes;
  double lat = t.base_lat_us[ai][s] + inter_lat;
  if (a == NcclAlgo::kCollNetDirect) {
    lat += 2 * (std::min(1, local - 1) * intra_lat + (local - 1) * t.collnet_direct_arity_us);
  } else {
    lat += 2 * (local - 1) * intra_lat;
  }
  return {lat, bus * .5, bus, 0};
}

}  // namespace

NcclAlgoProtoCost nccl_tuned_cost(const NcclTuneInputs& in, NcclAlgo a, NcclProto p) {
  validate(in);
  const Func f = func_of(in.collective);
  if (!nccl_algo_supported(in.collective, a)) {
    throw std::invalid_argument(std::string("NCCL cost model: NCCL has no ") + to_string(a) +
                                " algorithm for " + in.collective);
  }
  const NcclTuning& t = tuning_of(in);
  const int nranks = in.nranks, nnodes = in.nnodes;
  const bool all_reduce = f == Func::kAllReduce;
  const bool ag_rs = f == Func::kAllGather || f == Func::kReduceScatter;
  const int nsteps = all_reduce ? 2 * (nranks - 1) : ag_rs ? nranks - 1 : nranks;
  const int cc_index = comp_cap_index(in.compute_capability, t);
  if (a == NcclAlgo::kNvls) {
    if (p != NcclProto::kSimple) {
      throw std::invalid_argument("NCCL cost model: NCCL's NVLS runs the Simple protocol only");
    }
    if (in.nvls_channels < 1 || !(in.nvls_bw_GBps > 0) || nnodes > 1) {
      throw std::invalid_argument(
          "NCCL cost model: NVLS needs its graph (nvls_channels, nvls_bw_GBps) on one node");
    }
    // tuning.cc: latency = baseLat (23 µs in 2.18) + intraLat (from 2.19); one node.
    const double lat =
        t.base_lat_us[idx(a)][idx(p)] + t.hw_lat_us[idx(NcclHw::kNvlink)][idx(a)][idx(p)];
    const double nch = in.nvls_channels;
    const double efficiency = t.nvls_efficiency[cc_index];
    if (efficiency > 0) {
      // 2.28: min(bwIntra × nvlsEfficiency × (nCh − 1)/nCh × 2 (AllReduce), bwInter) a
      // channel, converted as Ring's (nRanks / nsteps).
      const double per_channel =
          std::min(in.nvls_bw_GBps * efficiency * (nch - 1) / nch * 2.0, in.nvls_bw_GBps);
      const double bus = nch * per_channel;
      return {lat, bus * nranks / nsteps, bus, 0};
    }
    // tuning.cc: busBw = nChannels × min(bwIntra, bwInter), × 5/6.
    return {lat, nch * in.nvls_bw_GBps * kNvlsRatio, nch * in.nvls_bw_GBps, 0};
  }
  if (a == NcclAlgo::kNvlsTree) return nvls_tree_cost(in, p, t, nsteps, cc_index);
  if (a == NcclAlgo::kPat) return pat_cost(in, p, t);
  if (a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain) {
    return collnet_cost(in, a, p, t);
  }
  int ninter_steps = all_reduce ? (nnodes > 1 ? 2 * nnodes : 0) : ag_rs ? nnodes - 1 : nnodes;
  if (all_reduce && t.ring_inter_steps_minus_one) ninter_steps = 2 * (nnodes - 1);

  const int index2 = nnodes <= 2 ? nnodes - 1 : 2;
  const int index1 = nnodes == 1 ? cc_index : in.cpu_amd ? 1 : 0;
  const double ll_max_bw = t.ll_max_bws[index1][index2];
  const double per_ch_max_tree_bw = t.per_ch_max_tree_bws[cc_index][index2];
  const double per_ch_max_ring_ll128_bw = t.per_ch_max_ring_ll128_bws[cc_index][index2];
  const double per_ch_max_tree_ll128_bw = t.per_ch_max_tree_ll128_bws[cc_index][index2];
  const double ppn = static_cast<double>(nranks) / nnodes;
  const double nch = in.nchannels;

  // Bandwidth.
  const double bw = nnodes <= 2 ? in.bw_intra_GBps : in.bw_inter_GBps;
  double bus_bw = nch * bw;
  double proto_bus_bw = bus_bw, channel_cap = 0;
  if (a == NcclAlgo::kRing) {
    if (p == NcclProto::kLL) {
      const bool quarter = nnodes > 1 || all_reduce || f == Func::kReduce;
      const double factor = t.ring_ll_half ? 0.5 : quarter ? 1.0 / 4.0 : 1.0 / 3.0;
      bus_bw = std::min(ll_max_bw, bus_bw * factor);
    } else if (p == NcclProto::kLL128) {
      const double factor = t.ring_ll128_ppn1_penalty && ppn < 2 ? 0.7 : 0.92;
      bus_bw = std::min(bus_bw * factor, nch * per_ch_max_ring_ll128_bw);
      channel_cap = per_ch_max_ring_ll128_bw;
    }
    proto_bus_bw = bus_bw;
    bus_bw *= static_cast<double>(nranks) / nsteps;
  } else {
    bus_bw = std::min(bus_bw * .92, nch * per_ch_max_tree_bw);
    if (p == NcclProto::kLL) bus_bw = std::min(bus_bw / 3.8, ll_max_bw);
    if (p == NcclProto::kLL128) {
      bus_bw = std::min(bus_bw * (nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                        nch * per_ch_max_tree_ll128_bw);
      channel_cap = per_ch_max_tree_ll128_bw;
    }
    proto_bus_bw = bus_bw;
    bus_bw *= .5;
  }

  // Latency.
  const auto hw_lat = [&](NcclHw hw, NcclAlgo row) {
    return t.hw_lat_us[idx(hw)][idx(row)][idx(p)];
  };
  double lat = t.base_lat_us[idx(a)][idx(p)];
  double intra_lat = hw_lat(in.intra_hw, a);
  // 2.23+: "with ppn=1 latencies are fully exposed, use the Tree network latency".
  const bool tree_net = t.ppn1_tree_net_latency && nranks == nnodes;
  double inter_lat = hw_lat(NcclHw::kNet, tree_net ? NcclAlgo::kTree : a) + in.latency_inter_us;
  if (p == NcclProto::kSimple) inter_lat += in.latency_inter_us;  // the flush
  if (a == NcclAlgo::kRing) {
    const NcclHw hw = nnodes == 1 ? in.intra_hw : NcclHw::kNet;
    if (f == Func::kReduce || f == Func::kBroadcast) {
      if (in.ring_same_channels) {
        lat += hw_lat(hw, a);
      } else {
        // Simple takes Tree's Simple entry ("some chunk latency").
        lat += nsteps * hw_lat(hw, p == NcclProto::kSimple ? NcclAlgo::kTree : a);
      }
    } else {
      double net_overhead = 0;
      if (nnodes > 1) net_overhead = (in.cpu_amd ? 2.0 : 1.0) * (p == NcclProto::kSimple ? 3 : 1);
      intra_lat = std::max(intra_lat, net_overhead);
      lat += (nsteps - ninter_steps) * intra_lat + ninter_steps * inter_lat;
    }
  } else {
    lat += 2 * ((nranks / nnodes - 1) * intra_lat + log2i(nnodes) * inter_lat);
  }
  return {lat, bus_bw, proto_bus_bw, channel_cap};
}

bool nccl_ll128_enabled_by_default(const NcclTuneInputs& in) {
  validate(in);
  const NcclTuning& t = tuning_of(in);
  const int cc = in.compute_capability;
  const NcclPathType limit = cc >= 90 ? NcclPathType::kPxn : NcclPathType::kPxb;
  const bool arch = t.ll128_from_70 ? cc >= 70
                                    : std::find(t.ll128_archs.begin(), t.ll128_archs.end(), cc) !=
                                          t.ll128_archs.end();
  return in.gpu_nic_path <= limit && in.intra_hw == NcclHw::kNvlink && arch;
}

double predicted_time_us(const NcclTuneInputs& in, NcclAlgo a, NcclProto p, int64_t bytes) {
  if (bytes < 0) throw std::invalid_argument("predicted_time_us: bytes must be >= 0");
  const NcclAlgoProtoCost c = nccl_tuned_cost(in, a, p);
  double bw = c.bw_GBps, lat = c.latency_us;
  if (a == NcclAlgo::kTree) bw *= nccl_tree_correction_factor(p, bytes);
  if (a == NcclAlgo::kRing && p == NcclProto::kSimple && in.nnodes > 1 &&
      func_of(in.collective) == Func::kAllReduce &&
      bytes / (int64_t{in.nchannels} * in.nranks) >= 64) {
    lat *= in.compute_capability < 80 ? 1.9 : 1.4;  // the ring's plateau
  }
  return lat + static_cast<double>(bytes) / (1000.0 * bw);
}

NcclChoice select(const NcclTuneInputs& in, const NcclSettings& settings, int64_t bytes,
                  NcclEmptyChoice on_empty) {
  validate(in);
  const bool ll128_default = nccl_ll128_enabled_by_default(in);
  const auto proto_enabled = [&](NcclProto p) {
    if (settings.proto.set_by_user) return settings.proto.allowed[idx(p)];
    return p != NcclProto::kLL128 || ll128_default;
  };
  bool found = false;
  NcclChoice best{NcclAlgo::kRing, NcclProto::kSimple, 0};
  const auto consider = [&](NcclAlgo a, NcclProto p) {
    const double t = predicted_time_us(in, a, p, bytes);
    if (!found || t < best.time_us) best = {a, p, t};
    found = true;
  };
  for (const NcclAlgo a : kNcclSelectionOrder) {
    if (!nccl_algo_supported(in.collective, a) || !settings.algo.allows(a)) continue;
    if (a == NcclAlgo::kNvls && !in.nvls_available) continue;
    if (a == NcclAlgo::kNvlsTree && !in.nvls_tree_available) continue;
    if (a == NcclAlgo::kPat && !nccl_pat_unavailable(in).empty()) continue;
    const bool collnet = a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain;
    if (a == NcclAlgo::kCollNetDirect && !in.collnet_direct_available) continue;
    if (a == NcclAlgo::kCollNetChain && !in.collnet_chain_available) continue;
    const bool simple_only =
        a == NcclAlgo::kNvls || a == NcclAlgo::kNvlsTree || a == NcclAlgo::kPat || collnet;
    for (int pi = 0; pi < kNcclNumProtos; ++pi) {
      const auto p = static_cast<NcclProto>(pi);
      if (simple_only && p != NcclProto::kSimple) continue;  // all but Tree and Ring: Simple
      if (proto_enabled(p)) consider(a, p);
    }
  }
  if (found) return best;
  if (on_empty == NcclEmptyChoice::kThrow) {
    throw std::invalid_argument("NCCL select: " + filters_text(settings) +
                                ", which leaves no algorithm/protocol for " + in.collective +
                                " (NCCL itself would fall back to Ring)");
  }
  for (int pi = 0; pi < kNcclNumProtos; ++pi) consider(NcclAlgo::kRing, static_cast<NcclProto>(pi));
  return best;
}

}  // namespace fabricsim
