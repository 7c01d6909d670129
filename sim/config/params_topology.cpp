// The `topology:` section's parameters (TopologyConfig, scenario.hpp): its table and its
// per-kind blocks (topology.fat-tree: {...}). The builders (topologies/) check what only a built
// fabric can tell, pointing here with key_error.
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

std::vector<int> int_list(const Value& v, size_t min_len, size_t max_len, int64_t min,
                          int64_t max) {
  std::vector<int> out;
  const std::string what = "a list of " + std::to_string(min_len) + " to " +
                           std::to_string(max_len) + " integers, e.g. [4, 4, 4]";
  for (const Value& item : v.items(what, min_len, max_len)) {
    out.push_back(int(item.integer(min, max)));
  }
  return out;
}

using T = TopologyConfig;
const Choices kGpuInterconnects{"GPU interconnect", {"nvswitch", "pcie"}, {}, {}};
constexpr auto kTopo = &Scenario::topology;

}  // namespace

// clang-format off
std::span<const Field> topology_params() {
  static const Field rows[] = {
  {"topology", "kind", true, Choice(topology_kinds()), at<kTopo, &T::kind>,
   "fabric family; the keys below apply to the kinds named in their condition"},
  {"topology", "oversubscription", false, Ratio(), at<kTopo, &T::oversubscription>,
   "o of o:1 at the first switch tier (host-facing / uplink capacity), e.g. 3 or \"3:1\"",
   "spine-leaf fat-tree rail-optimized"},
  {"topology", "leaves", true, Int(1, kMaxCount), at<kTopo, &T::leaves>,
   "leaf (top-of-rack) switches", "spine-leaf"},
  {"topology", "spines", true,  // 0 only means something with rail_only (the builders check)
   Int(0, kMaxCount), at<kTopo, &T::spines>,
   "spine switches (0 only with rail_only)", "spine-leaf rail-optimized", "spine-leaf"},
  {"topology", "hosts_per_leaf", true, Int(1, kMaxCount), at<kTopo, &T::hosts_per_leaf>,
   "hosts (one GPU and one NIC each) under each leaf", "spine-leaf"},
  {"topology", "k", true, Int(2, 65536), at<kTopo, &T::k>,
   "switch radix of the k-ary fat-tree (Al-Fares et al., SIGCOMM 2008), even", "fat-tree"},
  {"topology", "agg_oversubscription", false, Ratio(), at<kTopo, &T::agg_oversubscription>,
   "o:1 at the aggregation tier (down / up ports)", "fat-tree"},
  {"topology", "gpus_per_server", true, Int(1, 1024), at<kTopo, &T::gpus_per_server>,
   "GPUs per server (an NVSwitch, or with gpu_interconnect pcie a PCIe switch, joins them); 0 = 1 outside rail-optimized",
   "spine-leaf fat-tree rail-optimized", "rail-optimized"},
  {"topology", "gpu_interconnect", false, Choice(kGpuInterconnects), at<kTopo, &T::gpu_interconnect>,
   "how a server's GPUs reach each other: nvswitch (NVLink, link.nvlink_rate) | pcie (P2P through a PCIe switch, pcie.*)",
   "spine-leaf fat-tree"},
  {"topology", "pods", false, Int(1, 65536), at<kTopo, &T::pods>,
   "pods built, 1 … k; 0 = k (the full fat-tree)", "fat-tree"},
  {"topology", "nics_per_server", false, Int(1, 1024), at<kTopo, &T::nics_per_server>,
   "compute NICs per server; 0 = gpus_per_server", "rail-optimized"},
  {"topology", "rails", false, Int(1, 1024), at<kTopo, &T::rails>,
   "rails per plane (leaves per scalable unit); 0 = nics_per_server", "rail-optimized"},
  {"topology", "servers_per_su", true, Int(1, kMaxCount), at<kTopo, &T::servers_per_su>,
   "servers per scalable unit (DGX SuperPOD reference architecture)", "rail-optimized"},
  {"topology", "scalable_units", false, Int(1, kMaxCount), at<kTopo, &T::scalable_units>,
   "scalable units joined by the spines", "rail-optimized"},
  {"topology", "planes", false, Int(1, 64), at<kTopo, &T::planes>,
   "independent copies of the rail fabric; NICs split across planes", "rail-optimized"},
  {"topology", "rail_only", false, Bool(), at<kTopo, &T::rail_only>,
   "no spines: cross-rail traffic goes through NVLink (PXN)", "rail-optimized"},
  {"topology", "dims", true, Custom("list of integers", "2 or 3 sizes, each 2 … 32767"),
   at<kTopo, &T::dims>, "size per dimension of the k-ary n-cube, e.g. [4, 4, 4]", "torus",
   nullptr, nullptr,
   [](const Value& v, Scenario& s) { s.topology.dims = int_list(v, 2, 3, 2, 32767); }},
  {"topology", "wraparound", false, Bool(), at<kTopo, &T::wraparound>,
   "false = a mesh", "torus"},
  {"topology", "dim_rates", false,
   Custom("list of rates", "1 to 3 rates, each as link.fabric_rate"), at<kTopo, &T::dim_rates_bps>,
   "link rate per dimension; [] = link.fabric_rate", "torus", nullptr, nullptr,
   [](const Value& v, Scenario& s) {
     s.topology.dim_rates_bps.clear();
     for (const Value& r : v.items("a list of rates, one per dimension, e.g. [400Gbps, 400Gbps]", 1, 3)) {
       s.topology.dim_rates_bps.push_back(r.quantity(kNetworkRate));
     }
   }},
  {"topology", "failed_links", false, Custom("list of links", "links like leaf0-spine1 (#i: the i-th parallel link)"),
   at<kTopo, &T::failed_links>, "links down: routes avoid them", nullptr, nullptr, nullptr,
   [](const Value& v, Scenario& s) {
     s.topology.failed_links.clear();
     for (const Value& l : v.items("a list of links like leaf0-spine1", 0, 1'000'000)) {
       s.topology.failed_links.push_back(l.string());
     }
   }},
  {"topology", "degraded_links", false, Custom("map link -> rate", "rates as link.fabric_rate"),
   at<kTopo, &T::degraded_links>, "links running at a lower negotiated rate, e.g. {leaf0-spine1: 200Gbps}",
   nullptr, nullptr, nullptr,
   [](const Value& v, Scenario& s) {
     s.topology.degraded_links.clear();
     for (const auto& [name, rate] : v.named_entries("a map of links to rates, e.g. {leaf0-spine1: 200Gbps}")) {
       s.topology.degraded_links.emplace_back(name, rate.quantity(kNetworkRate));
     }
   }},
  {"topology", "link_events", false,
   Custom("list of events", "maps of at, link or switch, state, rate, down_for, every, repeat"),
   at<kTopo, &T::link_events>,
   "links going down, coming back or changing rate during the run (packet mode)",
   nullptr, nullptr, nullptr, [](const Value& v, Scenario& s) { parse_link_events(v, s); }},
  {"topology", "link_bit_error_rates", false, Custom("map link -> number", "bit error rates as link.bit_error_rate"),
   at<kTopo, &T::link_bit_error_rates>, "bit error rate of one cable, over link.bit_error_rate",
   nullptr, nullptr, nullptr,
   [](const Value& v, Scenario& s) {
     s.topology.link_bit_error_rates.clear();
     for (const auto& [name, ber] : v.named_entries("a map of links to bit error rates, e.g. {leaf0-spine1: 1e-8}")) {
       s.topology.link_bit_error_rates.emplace_back(name, bit_error_rate(ber));
       s.origins[ber.path()] = ber.origin();  // build_fabric's errors point at the entry
     }
   }},
  };
  return rows;
}
// clang-format on

const Choices& topology_kinds() {
  static const Choices kinds{"topology kind", {}, {}, {}, "topology.kind"};
  return kinds;
}

/// topology.KIND blocks: each kind's own shape, so one scenario can describe several fabric
/// families and `--vary topology.kind=...` compare them. Every block's keys are checked (known
/// topology keys that apply to that kind); the chosen kind's keys then stand for the plain
/// ones: a block key overrides the same plain key in the file, and a --set of the plain key
/// overrides the block.
void expand_kind_blocks(const Context& ctx, std::map<std::string, Value>& found) {
  const auto kind_it = found.find(std::string(kTopologySection) + ".kind");
  const std::string chosen = kind_it != found.end() && kind_it->second.node().IsScalar()
                                 ? kind_it->second.node().Scalar()
                                 : std::string();
  const std::vector<std::string> valid = keys_of(kTopologySection);
  for (const std::string& kind : topology_kinds().values()) {
    const std::string block_path = std::string(kTopologySection) + "." + kind;
    const auto it = found.find(block_path);
    if (it == found.end()) continue;
    const Value block = it->second;
    found.erase(it);
    if (block.node().IsNull()) continue;
    if (!block.node().IsMap()) {
      block.fail("expected a map of " + kind + " topology keys, e.g. {" +
                 (kind == "fat-tree" ? "k: 8"
                  : kind == "torus"  ? "dims: [4, 4, 4]"
                                     : "spines: 4") +
                 "}, got " + describe(block.node()));
    }
    std::map<std::string, int> first_line;
    for (const auto& entry : block.node()) {
      const YAML::Node key = entry.first;
      if (!key.IsScalar()) {
        ctx.fail(block_path, key.Mark(), "expected a key name, got " + describe(key));
      }
      const std::string name = key.Scalar();
      const std::string path = block_path + "." + name;
      const Field* field = nullptr;
      for (const Field& f : fields()) {
        if (f.section == std::string(kTopologySection) && name == f.key) field = &f;
      }
      if (field == nullptr || name == "kind") {
        const std::string guess = closest_match(name, valid);
        ctx.fail(path, key.Mark(),
                 name == "kind" ? "a kind block cannot change the kind; set topology.kind"
                 : guess.empty()
                     ? "unknown key '" + name + "'; valid keys are: " + join_words(valid, ", ")
                     : "unknown key '" + name + "'; did you mean '" + guess + "'?");
      }
      if (field->kinds && !in_list(field->kinds, kind)) {
        ctx.fail(path, key.Mark(),
                 "applies to topology kind " + std::string(field->kinds) + ", not to " + kind);
      }
      if (auto [seen, fresh] = first_line.emplace(name, key.Mark().line + 1); !fresh) {
        ctx.fail(path, key.Mark(),
                 "duplicate key '" + name + "' (first given at line " +
                     std::to_string(seen->second) + ")");
      }
      Value value(&ctx, path, entry.second, key.Mark());
      if (kind != chosen) {
        // Not used in this run, but still read: a bad value fails now, not in the sweep that
        // picks this kind.
        Scenario scratch;
        scratch.topology.kind = kind;
        read_field(*field, value, scratch);
        continue;
      }
      const std::string plain = std::string(kTopologySection) + "." + name;
      const auto given = found.find(plain);
      if (given == found.end()) {
        found.emplace(plain, value);
      } else if (!given->second.overridden() || value.overridden()) {
        given->second = value;
      }
    }
  }
}

}  // namespace fabricsim::config_detail
