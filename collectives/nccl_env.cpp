#include "collectives/nccl_env.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "collectives/nccl_model.hpp"

namespace fabricsim {

namespace {

/// The NCCL_* variables fabricsim reads, and the `nccl.` key each one sets ("" = none: read
/// from the environment only).
const std::pair<const char*, const char*> kNcclVariables[] = {
    {"NCCL_ALGO", "algo"},
    {"NCCL_PROTO", "proto"},
    {"NCCL_BUFFSIZE", "buffsize"},
    {"NCCL_LL_BUFFSIZE", ""},
    {"NCCL_LL128_BUFFSIZE", ""},
    {"NCCL_MIN_NCHANNELS", "min_nchannels"},
    {"NCCL_MAX_NCHANNELS", "max_nchannels"},
    {"NCCL_MIN_NRINGS", "min_nchannels"},  // NCCL's older names; the NCHANNELS ones win
    {"NCCL_MAX_NRINGS", "max_nchannels"},
    {"NCCL_NET_GDR_LEVEL", "net_gdr_level"},
    {"NCCL_IB_DISABLE", "ib_disable"},
    {"NCCL_NET", "net"},
    {"NCCL_NVLS_ENABLE", "nvls_enable"},
    {"NCCL_COLLNET_ENABLE", "collnet_enable"},
};

}  // namespace

/// The scenario's nccl section as NCCL_* variables (only what it sets).
std::map<std::string, std::string> nccl_variables(const NcclConfig& n) {
  std::map<std::string, std::string> env;
  if (!n.algo.empty()) env["NCCL_ALGO"] = n.algo;
  if (!n.proto.empty()) env["NCCL_PROTO"] = n.proto;
  if (n.buffsize_bytes > 0) env["NCCL_BUFFSIZE"] = std::to_string(n.buffsize_bytes);
  if (n.ll_buffsize_bytes > 0) env["NCCL_LL_BUFFSIZE"] = std::to_string(n.ll_buffsize_bytes);
  if (n.ll128_buffsize_bytes > 0) {
    env["NCCL_LL128_BUFFSIZE"] = std::to_string(n.ll128_buffsize_bytes);
  }
  if (n.min_nchannels > 0) env["NCCL_MIN_NCHANNELS"] = std::to_string(n.min_nchannels);
  if (n.max_nchannels > 0) env["NCCL_MAX_NCHANNELS"] = std::to_string(n.max_nchannels);
  if (!n.net_gdr_level.empty()) env["NCCL_NET_GDR_LEVEL"] = n.net_gdr_level;
  // A std::string, not the literal: GCC 12 warns falsely (-Wrestrict) on assigning "1" here.
  if (n.ib_disable) env["NCCL_IB_DISABLE"] = std::string("1");
  if (!n.net.empty()) env["NCCL_NET"] = n.net;
  if (n.nvls_enable != 2) env["NCCL_NVLS_ENABLE"] = std::to_string(n.nvls_enable);
  if (n.collnet_enable != 0) env["NCCL_COLLNET_ENABLE"] = std::to_string(n.collnet_enable);
  return env;
}

/// The NCCL_* variables of fabricsim's own environment override the scenario's nccl section
/// (NCCL reads them at init), unless --set gave the key. Throws ConfigError (exit 2) for a bad
/// value, naming the variable.
void apply_nccl_environment(NcclConfig& nccl, std::map<std::string, KeyOrigin>& origins) {
  std::map<std::string, std::string> env;
  for (const auto& [var, key] : kNcclVariables) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') env[var] = value;  // empty = unset, as for NCCL
  }
  if (const char* v = std::getenv("NCCL_NCHANNELS"); v != nullptr && *v != '\0') {
    std::fprintf(stderr,
                 "fabricsim: note: NCCL_NCHANNELS=%s is ignored, as NCCL ignores it (it reads "
                 "NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS)\n",
                 v);
  }
  if (const auto it = env.find("NCCL_ALGO"); it != env.end()) {
    // "CollNet" is not one of NCCL's algorithm names (ncclAlgoStr has CollNetDirect and
    // CollNetChain; older NCCL had one CollNet) and environment files still carry it: drop it
    // with a note, keep the rest.
    std::string value = it->second, kept, dropped;
    const bool exclude = !value.empty() && value[0] == '^';
    if (exclude) value.erase(0, 1);
    std::stringstream list(value);
    for (std::string name; std::getline(list, name, ',');) {
      std::string lower = name;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      lower.erase(std::remove(lower.begin(), lower.end(), ' '), lower.end());
      const bool other = lower == "collnet";
      (other ? dropped : kept) += (((other ? dropped : kept).empty()) ? "" : ",") + name;
    }
    if (!dropped.empty()) {
      std::fprintf(stderr,
                   "fabricsim: note: NCCL_ALGO=%s: %s is not an NCCL algorithm name "
                   "(CollNetDirect, CollNetChain are); ignored\n",
                   it->second.c_str(), dropped.c_str());
      if (kept.empty()) {
        env.erase(it);
      } else {
        it->second = (exclude ? "^" : "") + kept;
      }
    }
  }
  if (env.empty()) return;
  NcclSettings parsed;
  const auto bad = [&](const std::string& var, const std::string& message) {
    return ConfigError("environment variable " + var + "=" + env[var], 0, 0, var, message);
  };
  try {
    parsed = parse_nccl_env(env);
  } catch (const NcclSettingError& e) {
    throw bad(e.variable, e.message);
  }
  for (const char* var : {"NCCL_BUFFSIZE", "NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE"}) {
    if (!env.count(var)) continue;
    const int64_t bytes = std::stoll(env[var]);  // parse_nccl_env checked it is a number
    if (bytes < 65'536 || bytes > (int64_t{1} << 30)) {
      throw bad(var,
                "expected a buffer size from 65536 to 1073741824 bytes (64 KiB, 8 KiB per "
                "step, to 1 GiB), got " +
                    env[var]);
    }
  }
  // A key --set gave (itself, or nccl.nchannels for the channel bounds) keeps its value.
  const auto set_by_user = [&](const std::string& key) {
    for (const std::string& k : {key, std::string("nccl.nchannels")}) {
      if (k == "nccl.nchannels" && key != "nccl.min_nchannels" && key != "nccl.max_nchannels") {
        continue;
      }
      const auto it = origins.find(k);
      if (it != origins.end() && it->second.where.rfind("--set", 0) == 0) return true;
    }
    return false;
  };
  for (const auto& [var, value] : env) {
    std::string key;
    for (const auto& [v, k] : kNcclVariables) {
      if (var == v && *k != '\0') key = std::string("nccl.") + k;
    }
    const bool legacy = var == "NCCL_MIN_NRINGS" || var == "NCCL_MAX_NRINGS";
    if (!key.empty() && set_by_user(key)) continue;
    if (legacy &&
        env.count(var == "NCCL_MIN_NRINGS" ? "NCCL_MIN_NCHANNELS" : "NCCL_MAX_NCHANNELS")) {
      continue;  // the NCHANNELS name wins
    }
    if (!key.empty()) {
      origins[key] = KeyOrigin{"environment variable " + var + "=" + value, 0, 0};
    }
    nccl.from_env[key.empty() ? var : key] = var + "=" + value;
    NcclConfig& n = nccl;
    if (var == "NCCL_ALGO") n.algo = value;
    if (var == "NCCL_PROTO") n.proto = value;
    if (var == "NCCL_BUFFSIZE") n.buffsize_bytes = parsed.buffsize_bytes;
    if (var == "NCCL_LL_BUFFSIZE") n.ll_buffsize_bytes = parsed.ll_buffsize_bytes;
    if (var == "NCCL_LL128_BUFFSIZE") n.ll128_buffsize_bytes = parsed.ll128_buffsize_bytes;
    if (var == "NCCL_MIN_NCHANNELS" || var == "NCCL_MIN_NRINGS") {
      n.min_nchannels = parsed.min_nchannels;
    }
    if (var == "NCCL_MAX_NCHANNELS" || var == "NCCL_MAX_NRINGS") {
      n.max_nchannels = parsed.max_nchannels;
    }
    if (var == "NCCL_NET_GDR_LEVEL") n.net_gdr_level = value;
    if (var == "NCCL_IB_DISABLE") n.ib_disable = parsed.ib_disable;
    if (var == "NCCL_NET") n.net = value;
    if (var == "NCCL_NVLS_ENABLE") n.nvls_enable = parsed.nvls_enable;
    if (var == "NCCL_COLLNET_ENABLE") n.collnet_enable = parsed.collnet_enable;
  }
}

/// The `nccl.` key a variable maps to (for errors), or the variable itself.
std::string nccl_key_of(const std::string& variable) {
  for (const auto& [v, k] : kNcclVariables) {
    if (variable == v && *k != '\0') return std::string("nccl.") + k;
  }
  return variable;
}

}  // namespace fabricsim
