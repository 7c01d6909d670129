// NCCL's release lines from 2.18 to 2.28, each written as what its src/graph/tuning.cc changed
// from the line before, with the copy it was read from.
#include <regex>
#include <stdexcept>

#include "collectives/nccl_versions/nccl_tuning.hpp"

namespace fabricsim {

namespace {

// Indices of the tables (NCCL's order). Ring's rows are written in the tables' literals only.
constexpr int kTree = 0, kNvls = 2, kNvlsTree = 3, kPat = 4, kCollNetDirect = 5, kCollNetChain = 6;
[[maybe_unused]] constexpr int kRing = 1;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kNvlink = 0, kPci = 1, kNet = 2;
constexpr int kHopper = 2, kBlackwell = 3;

void set_row(double (&row)[kNcclNodeColumns], double one, double two, double more) {
  row[0] = one;
  row[1] = two;
  row[2] = more;
}

/// The line after `before`: its tables, renamed, to be changed where the new line differs.
NcclTuning next_line(const NcclTuning& before, const char* name, int first_minor, int last_minor,
                     const char* source) {
  NcclTuning t = before;
  t.name = name;
  t.first_minor = first_minor;
  t.last_minor = last_minor;
  t.source = source;
  return t;
}

// 2.18: sochinpub/nccl 30d2ab976af57cf894a5e85e645aa42f654cf43a, src/graph/tuning.cc (its
// makefiles/version.mk: 2.18.3).
NcclTuning v2_18() {
  NcclTuning t;
  t.name = "2.18";
  t.first_minor = t.last_minor = 18;
  t.source = "sochinpub/nccl 30d2ab97 (version.mk 2.18.3)";
  // Tree, Ring, NVLS, NVLSTree, PAT (no PAT before 2.23: its row stays 0), CollNetDirect,
  // CollNetChain (NCCL's rows 2 and 3: "{ 6.8, 14.0, 0 }, { 6.8, 14.0, 0 }, // Collnet Direct,
  // Chain"; NVLINK and PCI { 0, 0, 8.0 } / { 0, 0, 4.75 } and { 0, 0, 8.0 } / { 0, 0, 8.0 },
  // NET { 0, 0, 10.7 } / { 0, 0, 14 }).
  const double base[kNcclTunedAlgos][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 23.0},
                                           {0, 0, 23.0},   {0, 0, 0},        {6.8, 14.0, 0},
                                           {6.8, 14.0, 0}};
  const double hw[3][kNcclTunedAlgos][3] = {
      {{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 8.0}, {0, 0, 4.75}},
      {{1.0, 1.9, 6}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 8.0}, {0, 0, 8.0}},
      {{5.0, 8.5, 14},
       {2.7, 4.0, 14.0},
       {0, 0, 18},
       {0, 0, 19},
       {0, 0, 0},
       {0, 0, 10.7},
       {0, 0, 14}},
  };
  for (int a = 0; a < kNcclTunedAlgos; ++a) {
    for (int p = 0; p < 3; ++p) {
      t.base_lat_us[a][p] = base[a][p];
      for (int h = 0; h < 3; ++h) t.hw_lat_us[h][a][p] = hw[h][a][p];
    }
  }
  // Volta, Ampere, Hopper; Blackwell has no row before 2.25 and takes Hopper's.
  for (int arch : {kHopper, kBlackwell}) {
    set_row(t.ll_max_bws[arch], 87.7, 22.5, 19.0);
    set_row(t.per_ch_max_ring_ll128_bws[arch], 36.7, 36.7, 36.7);
    set_row(t.per_ch_max_tree_ll128_bws[arch], 36.7, 36.7, 29.0);
    set_row(t.per_ch_max_tree_bws[arch], 38.7, 41.4, 36.0);
  }
  set_row(t.ll_max_bws[0], 39.0, 39.0, 20.4);
  set_row(t.ll_max_bws[1], 87.7, 22.5, 19.0);
  for (int arch : {0, 1}) {
    set_row(t.per_ch_max_ring_ll128_bws[arch], 20.0, 20.0, 20.0);
    set_row(t.per_ch_max_tree_ll128_bws[arch], 20.0, 20.0, 20.0);
  }
  set_row(t.per_ch_max_tree_bws[0], 26.5, 18.5, 10.0);
  set_row(t.per_ch_max_tree_bws[1], 24.0, 23.6, 17.8);
  t.ll128_archs = {70, 80, 90};
  t.nvls_tree_legacy = true;
  t.collnet_direct_arity_us = 0.5;
  return t;
}

// 2.19-2.20: NVIDIA/nccl b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2 (version.mk 2.20.3); the 2.19
// copy read (dfyz/nccl eadad549, inferred 2.19) has the same tables. NVLS's latency becomes its
// NVLink hwLat, and Tree Simple's per-hop latency 28 µs everywhere.
NcclTuning v2_20() {
  NcclTuning t =
      next_line(v2_18(), "2.19-2.20", 19, 20, "NVIDIA/nccl b6475625 (version.mk 2.20.3)");
  t.base_lat_us[kNvls][kSimple] = 0;
  t.hw_lat_us[kNvlink][kNvls][kSimple] = 23;
  t.base_lat_us[kNvlsTree][kSimple] = 0;
  t.hw_lat_us[kNvlink][kNvlsTree][kSimple] = 23;
  t.hw_lat_us[kNet][kNvlsTree][kSimple] = 14;
  t.nvls_tree_legacy = false;
  for (int h : {kNvlink, kPci, kNet}) t.hw_lat_us[h][kTree][kSimple] = 28;
  // CollNet: no base latency; hwLat NVLINK and PCI 3.7 (Direct) / 2.8 (Chain), NET 31 / 30; the
  // arity term 0.4 µs.
  for (int a : {kCollNetDirect, kCollNetChain}) {
    for (int p : {kLL, kLL128, kSimple}) t.base_lat_us[a][p] = 0;
  }
  for (int h : {kNvlink, kPci}) {
    t.hw_lat_us[h][kCollNetDirect][kSimple] = 3.7;
    t.hw_lat_us[h][kCollNetChain][kSimple] = 2.8;
  }
  t.hw_lat_us[kNet][kCollNetDirect][kSimple] = 31;
  t.hw_lat_us[kNet][kCollNetChain][kSimple] = 30;
  t.collnet_direct_arity_us = 0.4;
  return t;
}

// 2.21-2.22: louieOAO/nccl 188a2622 (inferred 2.21: collNetHeadsNum, no MNNVL case) and
// GuangyaoZhang/nccl 159e84af (inferred 2.22: ncclTopoGetAlgoTime(comm, coll, ...)), identical
// tables. Ring LL at half the graph's bandwidth, Hopper's LL caps raised, NVLS 25 µs.
NcclTuning v2_22() {
  NcclTuning t =
      next_line(v2_20(), "2.21-2.22", 21, 22,
                "louieOAO/nccl 188a2622, GuangyaoZhang/nccl 159e84af (inferred 2.21, 2.22)");
  t.hw_lat_us[kNvlink][kNvls][kSimple] = 25;
  t.hw_lat_us[kNvlink][kNvlsTree][kSimple] = 25;
  t.ring_ll_half = true;
  for (int arch : {kHopper, kBlackwell}) set_row(t.ll_max_bws[arch], 141.0, 45.0, 35.0);
  return t;
}

// 2.23-2.24: ruben-laso/nccl 3704cac25d10f9bf5f05240af7f28bd0b5650bec (inferred 2.24: PAT and the
// per-collective NCCL_ALGO syntax, no Blackwell rows). Tree Simple's latencies cut (base 8.4,
// hwLat 4 / 4 / 14), no LL128 penalty for one GPU a node, and with one GPU a node the Tree NET
// latency for every algorithm; a ring AllReduce's inter-node steps are 2 (nNodes - 1).
NcclTuning v2_24() {
  NcclTuning t =
      next_line(v2_22(), "2.23-2.24", 23, 24, "ruben-laso/nccl 3704cac2 (inferred 2.24)");
  t.base_lat_us[kTree][kSimple] = 8.4;
  t.hw_lat_us[kNvlink][kTree][kSimple] = 4.0;
  t.hw_lat_us[kPci][kTree][kSimple] = 4.0;
  t.hw_lat_us[kNet][kTree][kSimple] = 14;
  t.ring_ll128_ppn1_penalty = false;
  t.ppn1_tree_net_latency = true;
  t.ring_inter_steps_minus_one = true;
  t.pat = true;
  return t;
}

// 2.25-2.27: yukinoandhui/NCCL-SourceCode-Reading d59e5b40 (inferred 2.25: the first copy with
// Blackwell rows). Blackwell's caps are twice Hopper's, and LL128 is on by default for compute
// capability 10.0 and 12.0. (A copy of 2.26/2.27 read without its repository shows LL128 on for
// any capability from 7.0 and an NVLS AllGather/ReduceScatter formula; neither is in this table.)
NcclTuning v2_27() {
  NcclTuning t = next_line(v2_24(), "2.25-2.27", 25, 27,
                           "yukinoandhui/NCCL-SourceCode-Reading d59e5b40 (inferred 2.25)");
  t.blackwell_row = true;
  set_row(t.ll_max_bws[kBlackwell], 2 * 141.0, 2 * 45.0, 2 * 35.0);
  set_row(t.per_ch_max_ring_ll128_bws[kBlackwell], 2 * 36.7, 2 * 36.7, 2 * 36.7);
  set_row(t.per_ch_max_tree_ll128_bws[kBlackwell], 2 * 36.7, 2 * 36.7, 2 * 29.0);
  set_row(t.per_ch_max_tree_bws[kBlackwell], 2 * 38.7, 2 * 41.4, 2 * 36.0);
  t.ll128_archs = {70, 80, 90, 100, 120};
  return t;
}

// 2.28: zhanglin496/nccl-2.28.3-1 850a18f5a2d15a77525bb671b12ee03bc1d4b951 (2.28.3; the same
// constants as bhasunit/nccl 8d688733). Blackwell's Tree caps lowered, NVLS's bandwidth from
// nvlsEfficiency (src/graph/tuning.cc, later src/tuning/nvls.cc), LL128 for any capability from
// 7.0 (NCCL_LL128_C2C).
NcclTuning v2_28() {
  NcclTuning t = next_line(v2_27(), "2.28", 28, 28, "zhanglin496/nccl-2.28.3-1 850a18f5 (2.28.3)");
  set_row(t.per_ch_max_tree_bws[kBlackwell], 70.0, 42.8, 24.0);
  set_row(t.per_ch_max_tree_ll128_bws[kBlackwell], 55.6, 31.67, 20.0);
  t.nvls_efficiency[kHopper] = 0.85;
  t.nvls_efficiency[kBlackwell] = 0.74;
  // PAT's own rows: baseLat 8 µs (the 8 µs the 2.23-2.27 formula adds itself) and hwLat; its
  // latency formula reads Tree's NET row with one GPU a node, so these change no number.
  for (int p : {kLL, kLL128, kSimple}) t.base_lat_us[kPat][p] = 8.0;
  t.hw_lat_us[kNvlink][kPat][kSimple] = 4.0;
  t.hw_lat_us[kPci][kPat][kSimple] = 4.0;
  t.hw_lat_us[kNet][kPat][kSimple] = 14;
  set_row(t.per_ch_max_nvls_tree_bws[0], 26.5, 18.5, 10.0);
  set_row(t.per_ch_max_nvls_tree_bws[1], 24.0, 23.6, 17.8);
  set_row(t.per_ch_max_nvls_tree_bws[kHopper], 0.0, 57.7, 45.5);
  set_row(t.per_ch_max_nvls_tree_bws[kBlackwell], 0.0, 96.0, 43.1);
  t.ll128_from_70 = true;
  return t;
}

struct ParsedVersion {
  int major = 0, minor = 0;
};

ParsedVersion parse_version(const std::string& version) {
  static const std::regex kVersion(R"(^\s*(\d+)\.(\d+)(\.\d+)?([+-].*)?\s*$)");
  std::smatch m;
  if (!std::regex_match(version, m, kVersion) || m[1].length() > 3 || m[2].length() > 3) {
    throw std::invalid_argument("'" + version +
                                "' is not an NCCL version; expected MAJOR.MINOR[.PATCH], e.g. "
                                "2.26 or 2.26.6+cuda12.8");
  }
  return {std::stoi(m[1]), std::stoi(m[2])};
}

std::string modelled_list() {
  const auto& all = nccl_tunings();
  return "2." + std::to_string(all.front().first_minor) + " to 2." +
         std::to_string(all.back().last_minor);
}

}  // namespace

const std::vector<NcclTuning>& nccl_tunings() {
  static const std::vector<NcclTuning> all = {v2_18(), v2_20(), v2_22(), v2_24(), v2_27(), v2_28()};
  return all;
}

const NcclTuning& newest_nccl_tuning() {
  return nccl_tunings().back();
}

const NcclTuning& nccl_tuning(const std::string& version) {
  const ParsedVersion v = parse_version(version);
  for (const NcclTuning& t : nccl_tunings()) {
    if (v.major == 2 && v.minor >= t.first_minor && v.minor <= t.last_minor) return t;
  }
  // A one-digit minor is most often a YAML number that lost its 0 (2.20 read as 2.2); else the
  // nearest end of the range.
  const auto& all = nccl_tunings();
  int guess = v.major < 2 || (v.major == 2 && v.minor < all.front().first_minor)
                  ? all.front().first_minor
                  : all.back().last_minor;
  if (v.major == 2 && v.minor < 10 && v.minor * 10 >= all.front().first_minor &&
      v.minor * 10 <= all.back().last_minor) {
    guess = v.minor * 10;
  }
  throw std::invalid_argument("NCCL " + version + "'s tuning is not modelled; expected " +
                              modelled_list() + "; did you mean '2." + std::to_string(guess) +
                              "'?");
}

NcclTuningMatch nccl_tuning_nearest(const std::string& version) {
  const ParsedVersion v = parse_version(version);
  const auto& all = nccl_tunings();
  if (v.major == 2 && v.minor >= all.front().first_minor && v.minor <= all.back().last_minor) {
    return {&nccl_tuning(version), ""};
  }
  const bool older = v.major < 2 || (v.major == 2 && v.minor < all.front().first_minor);
  const NcclTuning& stand_in = older ? all.front() : all.back();
  return {&stand_in, "NCCL " + version + "'s tuning is not modelled (" + modelled_list() +
                         "); its " + (older ? "oldest" : "newest") + " table, " + stand_in.name +
                         ", stands in"};
}

}  // namespace fabricsim
