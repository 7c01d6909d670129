// The `traffic:` section: a list of point-to-point flows (TrafficFlow, scenario.hpp), each a map
// whose keys are the table traffic_keys(); read here, resolved against the fabric's hosts by
// resolve_traffic.
#include "sim/config/loader_detail.hpp"
#include "sim/core/memory_budget.hpp"

namespace fabricsim::config_detail {

const std::string kTrafficExpected =
    "a list of flows, each a map with src, dst and size, e.g. [{src: 0, dst: 1, size: 1MiB}]";

/// Start times: up to an hour (3600s) of simulated time.
const QuantitySpec kFlowStart{
    "time", "10us", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};

/// True when `text` is a host index (digits, optionally after '+'), with `index` its value
/// (kInt64Max when it does not fit); false for a host name.
bool host_index(const std::string& text, int64_t& index) {
  const size_t first = !text.empty() && text[0] == '+';
  if (first == text.size()) return false;
  for (size_t i = first; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  const auto [end, ec] = std::from_chars(text.data() + first, text.data() + text.size(), index);
  if (ec == std::errc::result_out_of_range) index = kInt64Max;
  return true;
}

/// A flow's src or dst as written: a host index >= 0 or a host name (resolve_traffic checks
/// either against the fabric).
std::string flow_host(const Value& v) {
  const std::string expected = "a host index (an integer >= 0) or a host name, e.g. 3 or host3";
  const std::string s = v.scalar(expected);
  if (s.empty()) v.fail("expected " + expected + ", got ''");
  int64_t index = 0;
  if (s[0] == '-' && host_index(s.substr(1), index)) {
    v.fail("expected " + expected + ", got a negative index '" + s + "'");
  }
  return s;
}

namespace {

// clang-format off
/// What ns-3 RDMA flow files and other tools call these keys: "did you mean" for them too.
const std::pair<const char*, const char*> kTrafficAliases[] = {
  {"source", "src"}, {"destination", "dst"}, {"dest", "dst"},
  {"bytes", "size"}, {"size_bytes", "size"}, {"message_size", "size"},
  {"start_time", "start"}, {"time", "start"},
  {"pg", "priority"}, {"tc", "priority"}, {"traffic_class", "priority"}, {"prio", "priority"},
  {"qp", "flow"}, {"flow_id", "flow"},
};
// clang-format on

/// What a traffic flow takes, read and run, bytes: measured, 300,000 flows of 1 KiB between two
/// hosts of pfc-victim-flow.yaml peaked at 0.98 GB in `fabricsim run` (3.3 KB each; 1,000,000:
/// 2.77 GB), with 0.85 KB of it once read (the flow and its keys' positions).
constexpr double kTrafficFlowBytes = 3500;

void read_flows(const Context& ctx, const Value& section, Scenario& s);

}  // namespace

// clang-format off
std::span<const ItemKey<TrafficFlow>> traffic_keys() {
  using F = TrafficFlow;
  static const ItemKey<F> rows[] = {
  {"src", true, Custom("host", "a host index >= 0 or a host name, e.g. 3 or host3"), own<&F::src>,
   "sending host", [](const Value& v, F& f) { f.src = flow_host(v); }},
  {"dst", true, Custom("host", "a host index >= 0 or a host name, other than src"), own<&F::dst>,
   "receiving host", [](const Value& v, F& f) { f.dst = flow_host(v); }},
  {"size", true, Quantity(kSweepSize), own<&F::bytes>, "message size (one RDMA write)"},
  {"start", false, Quantity(kFlowStart), own<&F::start_ps>, "posted at this simulated time"},
  {"priority", false, Int(0, 7), own<&F::priority>, "traffic class; -1 = nic.traffic_class"},
  {"flow", false, Int(0, 1'073'741'823), own<&F::flow>,
   "queue pair id between the pair, below 2^30 (bit 30 marks NIC loopbacks); -1 = the item's index"},
  };
  return rows;
}
// clang-format on

/// `traffic:` (the section's value): each item a flow, in order, into s.traffic; origins
/// recorded as "traffic[2]" (the item) and "traffic[2].src" (each key given), where
/// resolve_traffic's errors point.
void parse_traffic(const Context& ctx, const Value& section, Scenario& s) {
  const YAML::Node& list = section.node();
  if (!list.IsSequence()) {
    section.fail("expected " + kTrafficExpected + ", got " + describe(list));
  }
  if (list.size() == 0) section.fail("expected " + kTrafficExpected + ", got an empty list");
  // Refused before any flow is read: YAML aliases make a list of a million flows out of a few
  // megabytes, which a run could not hold.
  const double need_bytes = static_cast<double>(list.size()) * kTrafficFlowBytes;
  if (const MemoryBudget budget = memory_budget(); over_half(need_bytes, budget)) {
    section.fail(std::to_string(list.size()) + " flows would take about " +
                 gigabytes_text(need_bytes) + " to read and run (about " +
                 std::to_string(static_cast<int>(kTrafficFlowBytes)) +
                 " bytes each), more than half of " + budget.text + "; expected fewer flows");
  }
  building([&] { read_flows(ctx, section, s); },
           std::to_string(list.size()) + " traffic flows (" + ctx.file + ": traffic)");
}

/// parse_traffic's reading of each flow, after its checks of the whole list.
namespace {

void read_flows(const Context& ctx, const Value& section, Scenario& s) {
  const YAML::Node& list = section.node();
  std::vector<std::string> keys, required;
  for (const ItemKey<TrafficFlow>& k : traffic_keys()) {
    keys.emplace_back(k.key);
    if (k.required) required.emplace_back(k.key);
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = std::string(kTrafficSection) + "[" + std::to_string(i) + "]";
    const Value item(&ctx, path, list[i], section.key_mark());
    if (!item.node().IsMap()) {
      item.fail("expected a flow: a map with " + join_words(keys, ", ") +
                ", e.g. {src: 0, dst: 1, size: 1MiB}, got " + describe(item.node()));
    }
    const auto given = map_keys(ctx, item, path, keys, "a flow", kTrafficAliases);
    TrafficFlow flow;
    for (const ItemKey<TrafficFlow>& k : traffic_keys()) {
      const auto it = given.find(k.key);
      if (it == given.end()) continue;
      read_item(k, it->second, flow);
      s.origins[it->second.path()] = it->second.origin();
    }
    for (const std::string& k : required) {
      if (!given.count(k)) {
        ctx.fail(path + "." + k, item.node().Mark(),
                 "missing required key; a flow needs " + join_words(required, ", "));
      }
    }
    const int dateline = s.routing.dateline_class;
    if (flow.priority >= 0 && flow.priority == dateline) {
      given.at("priority")
          .fail("priority " + std::to_string(dateline) +
                " is routing.dateline_class, the class packets move to at a wraparound link; a "
                "flow must start in another class");
    }
    s.origins[path] = item.origin();
    s.traffic.push_back(std::move(flow));
  }
}

}  // namespace

}  // namespace fabricsim::config_detail

namespace fabricsim {

using config_detail::host_index;
using config_detail::kInt64Max;
using config_detail::kTrafficSection;

void resolve_traffic(Scenario& sc, const std::vector<std::string>& host_names) {
  const int64_t hosts = static_cast<int64_t>(host_names.size());
  const std::string count = hosts == 0   ? "the fabric has no hosts"
                            : hosts == 1 ? "the fabric has 1 host (0)"
                                         : "the fabric has " + std::to_string(hosts) +
                                               " hosts (0 … " + std::to_string(hosts - 1) + ")";
  const auto resolve = [&](const std::string& text, const std::string& path) {
    int64_t index = 0;
    if (host_index(text, index)) {
      if (index >= hosts) {
        const std::string written = index == kInt64Max ? text : std::to_string(index);
        throw key_error(sc, path, "host " + written + " does not exist: " + count);
      }
      return static_cast<int>(index);
    }
    const auto it = std::find(host_names.begin(), host_names.end(), text);
    if (it != host_names.end()) return static_cast<int>(it - host_names.begin());
    const std::string guess = closest_match(text, host_names);
    throw key_error(
        sc, path,
        "no host named '" + text + "'" +
            (!guess.empty() ? "; did you mean '" + guess + "'?"
             : hosts == 0   ? ": " + count
                            : "; expected a host name such as '" + host_names.front() +
                                "' or an index from 0 to " + std::to_string(hosts - 1)));
  };
  for (size_t i = 0; i < sc.traffic.size(); ++i) {
    TrafficFlow& f = sc.traffic[i];
    const std::string path = std::string(kTrafficSection) + "[" + std::to_string(i) + "]";
    f.src_host = resolve(f.src, path + ".src");
    f.dst_host = resolve(f.dst, path + ".dst");
    if (f.src_host == f.dst_host) {
      const std::string& name = host_names[static_cast<size_t>(f.dst_host)];
      throw key_error(sc, path + ".dst",
                      "dst is host " + std::to_string(f.dst_host) + " (" + name +
                          "), the same host as src; a flow goes between two different hosts");
    }
  }
}

}  // namespace fabricsim
