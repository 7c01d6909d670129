// The `link:`, `switch:` and `nic:` sections' parameters (LinkConfig, SwitchConfig, NicConfig,
// scenario.hpp): their tables, the switch profile that fills `switch:` (switch.profile) and their
// cross-field rules.
#include <filesystem>

#include "sim/config/loader_detail.hpp"
#include "sim/config/yaml_text.hpp"

namespace fabricsim::config_detail {

namespace {

/// The IB local ACK timeout is 4.096 us x 2^t, t = 1..31 (InfiniBand spec, QP attribute
/// timeout): 14 gives the 67 ms default, NCCL_IB_TIMEOUT's default of 20 in recent NCCL
/// (src/transport/net_ib.cc) 4.29 s. Up to an hour, as other times.
const QuantitySpec kRto{
    "time", "67ms", parse_time_ps, 1, 3'600'000'000'000'000, "a positive time up to 3600s"};
const QuantitySpec kRateLimit{
    "rate",
    "100Gbps",
    parse_rate_bps,
    1'000'000,
    3'200'000'000'000,
    "a rate from 1Mbps to 3.2Tbps (at most link.host_rate, the NIC's line "
    "rate)",
    "leave qp_rate_limit out for line rate"};
// nic.mtu is the RDMA path MTU, the payload per packet (wire.hpp adds the headers). Both
// transports are IBTA's, whose path MTU is 256, 512, 1024, 2048 or 4096 B; a RoCE NIC on a
// 9000-byte jumbo-frame Ethernet still uses a 4096-B RDMA MTU. Values between are accepted (the
// pfc-victim-flow scenario uses 1000B).
const QuantitySpec kMtu{"size",
                        "4096B",
                        parse_size_bytes,
                        256,
                        4096,
                        "an MTU from 256B to 4096B (the RDMA payload per packet: the IBTA path "
                        "MTUs of RoCE and InfiniBand are 256, 512, 1024, 2048 and 4096 B, also "
                        "over 9000-byte Ethernet jumbo frames)"};
// One link's one-way delay: 1 ms is 200 km of fibre (5 ns/m); a data-centre cable is under
// 1 km (5 us). Longer delays also outgrow the NIC's retransmission timeout.
const QuantitySpec kPropagationDelay{"time",
                                     "500ns",
                                     parse_time_ps,
                                     0,
                                     1'000'000'000,
                                     "a time from 0ns to 1ms (1 ms is 200 km of fibre at 5 ns/m; "
                                     "a data-centre link is under 1 km, 5 us)"};
// A switch's packet buffer: the largest are a few GB (Broadcom Jericho2: 8 GB of HBM).
const QuantitySpec kSwitchBuffer{"size",
                                 "64MB",
                                 parse_size_bytes,
                                 1,
                                 int64_t{64} << 30,
                                 "a size from 1B to 64GiB (the largest switch buffers are a few "
                                 "GB, e.g. Broadcom Jericho2's 8 GB of HBM)"};
const Choices kBufferModels{"buffer model", {"static", "shared"}, {}, {}};
const Choices kLossRecovery{"loss recovery", {"go_back_n", "selective_repeat"}, {}, {}};
const Condition kSelectiveRepeat{"nic.loss_recovery", "selective_repeat",
                                 [](const Scenario& s) { return s.nic.loss_recovery; }};

const Condition kStaticBuffer{"switch.buffer_model", "static",
                              [](const Scenario& s) { return s.sw.buffer_model; }};
const Condition kSharedBuffer{"switch.buffer_model", "shared",
                              [](const Scenario& s) { return s.sw.buffer_model; }};
const Condition kDwrr{"switch.scheduler", "dwrr", [](const Scenario& s) { return s.sw.scheduler; }};

constexpr auto kLink = &Scenario::link;
constexpr auto kSwitch = &Scenario::sw;
constexpr auto kNic = &Scenario::nic;
using L = LinkConfig;
using S = SwitchConfig;
using N = NicConfig;

}  // namespace

const Choices& switch_schedulers() {
  static const Choices schedulers{"scheduler", {"strict", "dwrr"}, {}, {}, "switch.scheduler"};
  return schedulers;
}

// clang-format off
std::span<const Field> link_params() {
  static const Field rows[] = {
  {"link", "host_rate", true, Quantity(kNetworkRate), at<kLink, &L::host_rate_bps>,
   "host NIC <-> leaf link rate, e.g. 400Gbps"},
  {"link", "fabric_rate", false,  // default: host_rate (check_link, after all fields are read)
   Quantity(kNetworkRate), at<kLink, &L::fabric_rate_bps>,
   "switch <-> switch link rate; left out = link.host_rate"},
  {"link", "propagation_delay", true, Quantity(kPropagationDelay), at<kLink, &L::propagation_delay_ps>,
   "one-way delay of every link, e.g. 500ns (~100 m of fibre)"},
  {"link", "nvlink_rate", true, Quantity(kPositiveRate), at<kLink, &L::nvlink_rate_bps>,
   "GPU <-> NVSwitch rate per direction (servers of more than one GPU)",
   "spine-leaf fat-tree rail-optimized", "rail-optimized"},
  {"link", "nvlink_efficiency", false,
   Fraction(0.05, 1, "a fraction from 0.05 to 1, e.g. 0.824"),
   at<kLink, &L::nvlink_efficiency>,
   "part of nvlink_rate NCCL reaches (NCCL src/graph/topo.h: 20.0 of 25 GB/s per link; H100 20.6)",
   "spine-leaf fat-tree rail-optimized"},
  {"link", "pcie_rate", false, Quantity(kPositiveRate), at<kLink, &L::pcie_rate_bps>,
   "GPU <-> host memory over PCIe per direction (PCIe 5.0 x16: 16 x 32 GT/s x 128/130)"},
  {"link", "pcie_latency", false, Quantity(kNonNegativeTime), at<kLink, &L::pcie_latency_ps>,
   "one crossing of PCIe and host memory (assumed)"},
  {"link", "bit_error_rate", false, BitErrorRate(), at<kLink, &L::bit_error_rate>,
   "bit error rate of every network link (0 = error-free); NVLinks are error-free"},
  };
  return rows;
}

std::span<const Field> switch_params() {
  static const Field rows[] = {
  {"switch", "latency", true,  // required: it changes every latency-bound result
   Quantity(kNonNegativeTime), at<kSwitch, &S::latency_ps>,
   "forwarding latency (cut-through: first bit in to first bit out)"},
  {"switch", "radix", false, Int(2, 65536), at<kSwitch, &S::radix>,
   "ports per switch, checked against the fabric built; 0 = not checked"},
  {"switch", "buffer_model", false,  // before the keys that apply to one model
   Choice(kBufferModels), at<kSwitch, &S::buffer_model>,
   "static (a buffer per egress port) | shared (one pool, dynamic thresholds)"},
  {"switch", "buffer_per_port", true, Quantity(kSwitchBuffer), at<kSwitch, &S::buffer_per_port_bytes>,
   "egress buffer per port; tail drop beyond it", nullptr, nullptr, &kStaticBuffer},
  {"switch", "shared_buffer", true, Quantity(kSwitchBuffer), at<kSwitch, &S::shared_buffer_bytes>,
   "the switch's whole packet buffer", nullptr, nullptr, &kSharedBuffer},
  {"switch", "reserved_per_queue", false,  // 8 x it < shared_buffer: checked after all fields
   Quantity(kNonNegativeSize), at<kSwitch, &S::reserved_per_queue_bytes>,
   "guaranteed bytes per egress queue (8 x it < shared_buffer)", nullptr, nullptr, &kSharedBuffer},
  {"switch", "alpha", false, Fraction(1.0 / 128, 64, kAlphaExpected), at<kSwitch, &S::alpha>,
   "dynamic threshold factor (Choudhury & Hahne 1998)", nullptr, nullptr, &kSharedBuffer},
  {"switch", "cut_through", false, Bool(), at<kSwitch, &S::cut_through>,
   "forward a frame once its header is in (not towards a faster egress)"},
  {"switch", "scheduler", false,  // before dwrr_weights
   Choice(switch_schedulers()), at<kSwitch, &S::scheduler>,
   "egress scheduling between the 8 traffic classes: strict (7 highest) | dwrr"},
  {"switch", "dwrr_weights", false, Custom("list of integers", "8 weights, each 1 … 255"),
   at<kSwitch, &S::dwrr_weights>, "weight per traffic class 0..7 (quantum = weight x one MTU frame)",
   nullptr, nullptr, &kDwrr,
   [](const Value& v, Scenario& s) {
     s.sw.dwrr_weights.clear();
     for (const Value& w : v.items("a list of 8 weights from 1 to 255, one per traffic class 0..7, e.g. [1, 1, 1, 4, 1, 1, 1, 1]", 8, 8)) {
       s.sw.dwrr_weights.push_back(int(w.integer(1, 255)));
     }
   }},
  // Read, resolved and merged before any field is parsed (merge_profile); kept here so that
  // --set switch.profile=... works and the key is listed with the others.
  {"switch", "profile", false, String(), at<kSwitch, &S::profile>,
   "switch profile (configs/switches/*.yaml) whose switch keys are this section's defaults"},
  };
  return rows;
}

std::span<const Field> nic_params() {
  static const Field rows[] = {
  {"nic", "mtu", false, Quantity(kMtu), at<kNic, &N::mtu_bytes>,
   "RDMA path MTU: payload bytes per packet (IBTA path MTUs)"},
  {"nic", "traffic_class", false, Int(0, 7), at<kNic, &N::traffic_class>,
   "traffic class (802.1p priority) of RDMA data and its ACKs"},
  {"nic", "ack_interval", false, Int(1, 65536), at<kNic, &N::ack_interval>,
   "acknowledge every n-th in-order packet (and always a message's last)"},
  {"nic", "loss_recovery", false, Choice(kLossRecovery), at<kNic, &N::loss_recovery>,
   "go_back_n (in-order receiver, NAK and resend from the gap) | selective_repeat (out-of-order placement, only missing packets resent)"},
  {"nic", "reorder_threshold", false, Int(0, 65536), at<kNic, &N::reorder_threshold>,
   "selective_repeat: resend a packet once the receiver acknowledged one this many PSNs past it; 0 = at the timeout only",
   nullptr, nullptr, &kSelectiveRepeat},
  {"nic", "rto", false, Quantity(kRto), at<kNic, &N::rto_ps>,
   "retransmission timeout of a queue pair (IB local ACK timeout exponent 14; NCCL_IB_TIMEOUT 20 "
   "is 4294967296ns)"},
  {"nic", "qp_rate_limit", false,  // absent = line rate
   Quantity(kRateLimit), at<kNic, &N::qp_rate_limit_bps>,
   "per-QP rate limit, at most link.host_rate; 0 = the port's line rate"},
  {"nic", "message_rate", false,  // absent = no limit (NicConfig: why)
   PositiveNumber("a message rate in messages per second, e.g. 215e6 (ConnectX-6), at most 1e10"),
   at<kNic, &N::message_rate>,
   "work requests per second the NIC starts, all QPs (ConnectX-6 product brief: 215e6); "
   "absent = no limit, as NCCL's step latencies hold the NIC's costs"},
  {"nic", "tx_latency", false, Quantity(kNonNegativeTime), at<kNic, &N::tx_latency_ps>,
   "post to first byte out: doorbell, WQE fetch (a payload's DMA read: dma_read_latency); 0 = none"},
  {"nic", "rx_latency", false, Quantity(kNonNegativeTime), at<kNic, &N::rx_latency_ps>,
   "last byte in to completion: DMA write, CQE (the payload's PCIe copy: pcie_rate); 0 = none"},
  {"nic", "dma_read_latency", false, Quantity(kNonNegativeTime), at<kNic, &N::dma_read_latency_ps>,
   "a payload not sent inline waits this long for its DMA read (a PCIe round trip); 0 = none"},
  {"nic", "pcie_rate", false, Quantity(kPositiveRate), at<kNic, &N::pcie_rate_bps>,
   "the NIC's PCIe rate: a packet's payload copied before it leaves and after it arrives (below the port's data rate it caps what the NIC receives); absent = none"},
  {"nic", "congestion_control", false, Choice(congestion_controls()),
   at<kNic, &N::congestion_control>,
   "per-QP congestion control; auto = dcqcn if dcqcn.enabled, else none; timely = RTT gradient (the timely section); hpcc = in-band telemetry (the hpcc section)"},
  };
  return rows;
}
// clang-format on

void check_link(const std::map<std::string, Value>& found, Scenario& s) {
  if (!found.count("link.fabric_rate")) s.link.fabric_rate_bps = s.link.host_rate_bps;
}

/// A queue pair's limit above its port's line rate limits nothing.
void check_nic(const Context& ctx, const std::map<std::string, Value>& found, const Scenario& s) {
  // 1e10 messages/s is 100 ps a message, over 40 times ConnectX-6's 215 million (NVIDIA
  // ConnectX-6 EN "Introduction", docs.nvidia.com/networking/display/ConnectX6EN/Introduction).
  if (s.nic.message_rate > 1e10) {
    found.at("nic.message_rate")
        .fail(
            "expected a message rate in messages per second, e.g. 215e6 (ConnectX-6), at "
            "most 1e10; got " +
            found.at("nic.message_rate").node().Scalar());
  }
  if (s.nic.qp_rate_limit_bps > s.link.host_rate_bps) {
    const Value& limit = found.at("nic.qp_rate_limit");
    const Value& rate = found.at("link.host_rate");
    const std::string l = limit.node().Scalar(), r = rate.node().Scalar();
    if (directness(ctx, rate) > directness(ctx, limit)) {
      rate.fail("host_rate (" + r + "), the NIC's line rate, is below nic.qp_rate_limit (" + l +
                "): expected a line rate of at least the queue pair's limit");
    }
    limit.fail("qp_rate_limit (" + l + ") is above link.host_rate (" + r +
               "), the NIC's line rate: expected at most " + r +
               ", or leave qp_rate_limit out for line rate");
  }
}

const Choices& congestion_controls() {
  static const Choices controls{"congestion control",
                                {"auto", "none", "dcqcn", "timely", "hpcc"},
                                {},
                                {},
                                "nic.congestion_control"};
  return controls;
}

/// nic.congestion_control and dcqcn.enabled name one control: dcqcn.enabled: true is
/// nic.congestion_control: dcqcn, which sets it (and so needs ECN marking and RoCE, as
/// check_dcqcn and the dcqcn section's transport ask of dcqcn.enabled).
void check_congestion_control(const std::map<std::string, Value>& found, Scenario& s) {
  const auto named = found.find("nic.congestion_control");
  if (named == found.end() || s.nic.congestion_control == "auto") return;
  const std::string& cc = s.nic.congestion_control;
  const auto enabled = found.find("dcqcn.enabled");
  if (cc != "dcqcn") {
    if (s.dcqcn.enabled) {
      const std::string fix = ": leave dcqcn.enabled out (or false), or name dcqcn";
      if (enabled == found.end()) named->second.fail(cc + ", but dcqcn.enabled is true" + fix);
      enabled->second.fail("true selects DCQCN, but nic.congestion_control names " + cc + fix);
    }
    return;
  }
  if (enabled != found.end() && !s.dcqcn.enabled) {
    named->second.fail(
        "dcqcn, but dcqcn.enabled is false: leave dcqcn.enabled out, or name "
        "another control");
  }
  if (s.transport != "roce") {
    named->second.fail("DCQCN is RoCE's congestion control (transport: " + s.transport + ")");
  }
  bool marks = s.ecn.enabled;
  for (const auto& [name, o] : s.switches) marks |= o.ecn.enabled;
  if (!marks) named->second.fail("DCQCN reacts to ECN marks: set ecn.enabled: true");
  s.dcqcn.enabled = true;
}

/// Cross-field rules of the switch section, for a scenario and for a profile on its own.
void check_switch(const Context& main, const std::map<std::string, Value>& found,
                  const Scenario& s) {
  if (s.sw.buffer_model != "shared") return;
  const auto reserved = found.find("switch.reserved_per_queue");
  const auto pool = found.find("switch.shared_buffer");
  if (reserved == found.end() || pool == found.end()) return;
  // 8 x reserved < shared_buffer, written so that it cannot overflow.
  if (s.sw.reserved_per_queue_bytes <= (s.sw.shared_buffer_bytes - 1) / 8) return;
  const std::string r = reserved->second.node().Scalar(), b = pool->second.node().Scalar();
  const std::string why = ": the 8 traffic classes of a single port would reserve all of it";
  if (directness(main, pool->second) > directness(main, reserved->second)) {
    pool->second.fail("shared_buffer (" + b + ") must be more than 8 x reserved_per_queue (" + r +
                      ")" + why);
  }
  reserved->second.fail("8 x reserved_per_queue (" + r + ") must be less than shared_buffer (" + b +
                        ")" + why);
}

/// Reads the switch profile that `profile` (the scenario's switch.profile) names into `pctx`
/// (which must outlive `found`), checks it on its own, and adds each of its switch keys that
/// the scenario does not set to `found`, so the profile's values are defaults that point into
/// the profile file when they are wrong.
YAML::Node read_profile(const Context& ctx, const Value& profile, Context& pctx,
                        const std::string& kind, const std::string& expected) {
  std::filesystem::path file(profile.string());
  if (file.is_relative()) file = std::filesystem::path(ctx.file).parent_path() / file;
  pctx.file = file.lexically_normal().string();
  std::string text;
  try {
    text = read_config_file(pctx.file, kind + " profile '" + pctx.file + "'");
  } catch (const ConfigError& e) {
    profile.fail(e.message());
  }
  const YAML::Node root = parse_yaml(pctx.file, text);
  if (!root.IsDefined() || root.IsNull()) {
    pctx.fail("", YAML::Mark::null_mark(),
              "the " + kind + " profile is empty; expected " + expected);
  }
  if (!root.IsMap()) pctx.fail("", root.Mark(), "expected " + expected + ", got " + describe(root));
  return root;
}

void merge_profile(const Context& ctx, const Value& profile, Context& pctx,
                   std::map<std::string, Value>& found) {
  const YAML::Node root = read_profile(
      ctx, profile, pctx, "switch", "a map with a switch section (and optional name and source)");

  const std::vector<std::string> top = {"switch", "name", "source"};
  std::map<std::string, int> first_line;
  std::map<std::string, Value> own;  // the profile's switch keys
  bool has_switch = false;
  for (const auto& entry : root) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) pctx.fail("", key.Mark(), "expected a key name, got " + describe(key));
    const std::string name = key.Scalar();
    if (std::find(top.begin(), top.end(), name) == top.end()) {
      std::string message = "unknown key '" + name + "' in a switch profile";
      const std::vector<std::string> switch_keys = keys_of("switch");
      if (const std::string guess = closest_match(name, top); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
      } else if (std::find(switch_keys.begin(), switch_keys.end(), name) != switch_keys.end()) {
        message += "; it belongs in the switch section (switch." + name + ")";
      } else {
        message += "; a switch profile has only " + join_words(top, ", ");
      }
      pctx.fail(name, key.Mark(), message);
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      pctx.fail(name, key.Mark(),
                "duplicate key '" + name + "' (first given at line " +
                    std::to_string(seen->second) + ")");
    }
    const Value v(&pctx, name, entry.second, key.Mark());
    if (name != "switch") {
      v.string();  // name, source: free text for the reader
      continue;
    }
    has_switch = true;
    if (v.node().IsNull()) continue;
    if (!v.node().IsMap()) {
      v.fail("expected a map of switch keys (" + join_words(keys_of("switch"), ", ") + "), got " +
             describe(v.node()));
    }
    for (const auto& item : v.node()) {
      if (item.first.IsScalar() && item.first.Scalar() == "profile") {
        pctx.fail("switch.profile", item.first.Mark(),
                  "a switch profile cannot name another profile");
      }
    }
    collect(pctx, v.node(), "switch", own);
  }
  if (!has_switch) {
    pctx.fail("switch", YAML::Mark::null_mark(),
              "missing required section: a switch profile sets its keys under 'switch:'");
  }

  // On its own first: a wrong or self-contradicting value is the profile's fault, even where
  // the scenario overrides it.
  Scenario alone;
  parse_fields(pctx, own, alone, false, "this profile's");
  check_switch(pctx, own, alone);
  for (const auto& [path, value] : own) found.emplace(path, value);  // the scenario's win
}

}  // namespace fabricsim::config_detail
