#include "calibration/net_transport.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace fabricsim {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool contains(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

NetTransport make(NetTransportSupport support, std::string name, const NcclInfoLine& at) {
  return NetTransport{support, std::move(name), at.line, at.text};
}

/// aws-ofi-nccl's transport, named by its libfabric provider when its "NET/OFI Selected Provider
/// is P" line is in the log (efa: AWS EFA, whose reliable datagram protocol is SRD).
NetTransport libfabric(const NcclLog& log, const NcclInfoLine& at) {
  const auto p = log.net_info.find("provider");
  if (p == log.net_info.end()) {
    return make(NetTransportSupport::kNotModelled, "libfabric through aws-ofi-nccl", at);
  }
  static const std::regex kProvider(R"(Selected Provider is ([^\s,]+))");
  std::smatch m;
  const std::string provider =
      std::regex_search(p->second.text, m, kProvider) ? m[1].str() : std::string("?");
  return make(NetTransportSupport::kNotModelled,
              lower(provider) == "efa" ? "AWS EFA (SRD) through aws-ofi-nccl (libfabric)"
                                       : "libfabric provider " + provider + " through aws-ofi-nccl",
              p->second);
}

/// " (RoCE)" or " (InfiniBand)" from the "NET/IB : Using [0]mlx5_0:1/RoCE" line, else "".
std::string ib_link_layer(const NcclLog& log) {
  auto ib = log.net_info.find("using NET/IB");
  for (const char* kind : {"NET/IB", "NET/IBext"}) {
    if (ib == log.net_info.end()) ib = log.net_info.find(kind);
  }
  if (ib == log.net_info.end()) return "";
  if (contains(ib->second.text, "/RoCE")) return " (RoCE)";
  if (contains(ib->second.text, "/IB")) return " (InfiniBand)";
  return "";
}

/// A transport by the name NCCL printed for it ("Using network X", "NET/X").
NetTransport by_name(const std::string& name, const NcclLog& log, const NcclInfoLine& at) {
  const std::string l = lower(name);
  if (l == "ib") return make(NetTransportSupport::kModelled, "NET/IB" + ib_link_layer(log), at);
  if (l == "socket") return make(NetTransportSupport::kModelled, "NET/Socket", at);
  if (l.rfind("ibext", 0) == 0) {  // nccl-rdma-sharp-plugins' verbs transport ("IBext_v8")
    return make(NetTransportSupport::kModelled,
                "NET/IB" + ib_link_layer(log) + " through nccl-rdma-sharp-plugins (" + name + ")",
                at);
  }
  if (l == "gib") {
    return make(NetTransportSupport::kModelled, "NET/IB (RoCE) through Google's gIB plugin", at);
  }
  if (contains(l, "libfabric") || l == "ofi") return libfabric(log, at);
  if (contains(l, "fastrak")) {
    return make(NetTransportSupport::kNotModelled, "Google GPUDirect-TCPXO (FasTrak)", at);
  }
  if (contains(l, "tcpx")) {
    return make(NetTransportSupport::kNotModelled, "Google GPUDirect-TCPX", at);
  }
  return make(NetTransportSupport::kNotModelled, "the NCCL net plugin '" + name + "'", at);
}

/// "none": the line that shows every rank on one host (a device line or the ## header).
NetTransport single_host(const NcclLog& log) {
  NcclInfoLine at;
  std::string host;
  if (!log.ranks.empty() && std::all_of(log.ranks.begin(), log.ranks.end(), [&](const NcclRank& r) {
        return r.host == log.ranks.front().host;
      })) {
    host = log.ranks.front().host;
    at.line = log.ranks.front().line;
    at.text = "# Rank " + std::to_string(log.ranks.front().rank) + " … on " + host;
  } else if (const auto it = log.meta_lines.find("nodes x GPUs"); it != log.meta_lines.end()) {
    at.line = it->second;
    at.text = "## nodes x GPUs: " + log.meta.at("nodes x GPUs");
  }
  return make(NetTransportSupport::kNone,
              host.empty() ? "none (one node)" : "none (every rank on host " + host + ")", at);
}

}  // namespace

const char* to_string(NetTransportSupport s) {
  switch (s) {
    case NetTransportSupport::kModelled:
      return "modelled";
    case NetTransportSupport::kNotModelled:
      return "not_modelled";
    case NetTransportSupport::kNone:
      return "none";
    case NetTransportSupport::kUnknown:
      break;
  }
  return "unknown";
}

NetTransport classify_net_transport(const NcclLog& log) {
  // 1. One host: nothing crosses a network, whatever NCCL initialised.
  if (log.nodes == 1) return single_host(log);

  // 2. NCCL's own "Using network X" (the last one printed names the transport in use).
  if (!log.transport.empty()) {
    if (const auto it = log.net_info.find("network " + log.transport); it != log.net_info.end()) {
      return by_name(log.transport, log, it->second);
    }
  }

  // 3. The transports' own lines: a plugin's first, then NET/IB, then NET/Socket.
  for (const auto& [kind, at] : log.net_info) {
    if (kind == "provider") return libfabric(log, at);
    if (kind.rfind("NET/", 0) != 0) continue;
    const std::string name = kind.substr(4);
    if (name != "IB" && name != "Socket" && name != "Plugin") {
      return by_name(name, log, at);
    }
  }
  for (const char* name : {"IB", "Socket"}) {
    for (const std::string& kind : {std::string("using NET/") + name, std::string("NET/") + name}) {
      if (const auto it = log.net_info.find(kind); it != log.net_info.end()) {
        return by_name(name, log, it->second);
      }
    }
  }

  // 4. The "## fabric:" line of a collected log's header.
  if (const auto it = log.meta.find("fabric"); it != log.meta.end()) {
    const NcclInfoLine at{log.meta_lines.count("fabric") ? log.meta_lines.at("fabric") : 0,
                          "## fabric: " + it->second.substr(0, it->second.find('\n'))};
    static const std::regex kEfa(R"(\bEFA\b)", std::regex::icase);
    static const std::regex kOfi(R"(\bEFA\b|aws-ofi-nccl|libfabric)", std::regex::icase);
    static const std::regex kTcpx(R"(TCPX|FasTrak)", std::regex::icase);
    static const std::regex kIb(R"(\bInfiniBand\b)", std::regex::icase);
    static const std::regex kRoce(R"(\bRoCE)", std::regex::icase);
    static const std::regex kNotStated(R"(not stated)", std::regex::icase);
    const std::string& f = it->second;
    if (std::regex_search(f, kNotStated)) return NetTransport{};  // "InfiniBand or RoCE not stated"
    if (std::regex_search(f, kOfi)) {
      return make(NetTransportSupport::kNotModelled,
                  std::regex_search(f, kEfa) ? "AWS EFA (SRD) through aws-ofi-nccl (libfabric)"
                                             : "libfabric through aws-ofi-nccl",
                  at);
    }
    if (std::regex_search(f, kTcpx)) {
      return make(NetTransportSupport::kNotModelled,
                  contains(lower(f), "fastrak") || contains(lower(f), "tcpxo")
                      ? "Google GPUDirect-TCPXO (FasTrak)"
                      : "Google GPUDirect-TCPX",
                  at);
    }
    if (std::regex_search(f, kRoce))
      return make(NetTransportSupport::kModelled, "NET/IB (RoCE)", at);
    if (std::regex_search(f, kIb)) {
      return make(NetTransportSupport::kModelled, "NET/IB (InfiniBand)", at);
    }
  }
  return NetTransport{};
}

std::string not_modelled_reason(const NetTransport& t) {
  if (t.support != NetTransportSupport::kNotModelled) return "";
  std::string where;
  if (t.line > 0) where = " (line " + std::to_string(t.line) + ": `" + t.evidence + "`)";
  return "its network transport, " + t.name + ", is not modelled" + where +
         "; fabricsim models NET/IB (InfiniBand, RoCE) and NET/Socket";
}

}  // namespace fabricsim
