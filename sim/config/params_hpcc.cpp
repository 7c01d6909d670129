// The `hpcc:` section (HpccConfig, congestion/hpcc/hpcc_config.hpp): HPCC's parameters, used
// when nic.congestion_control names hpcc. Under another control the section is said to do
// nothing, not refused, so that one scenario can be swept over the controls with HPCC's own
// values (--vary nic.congestion_control=dcqcn,hpcc). The checks that need the line rate run where
// it is known (validate_hpcc, sim/run/prepare.cpp).
#include "sim/config/loader_detail.hpp"
#include "sim/core/units.hpp"

namespace fabricsim::config_detail {

namespace {

constexpr auto kHpcc = &Scenario::hpcc;
using H = HpccConfig;

const QuantitySpec kHpccRtt{"time",
                            "8us",
                            parse_time_ps,
                            0,
                            1'000'000'000'000,
                            "a time from 0 to 1s (0: each queue pair's idle round trip)"};
const QuantitySpec kHpccAi{"rate",
                           "40Mbps",
                           parse_rate_bps,
                           0,
                           100'000'000'000'000,
                           "a rate from 0 to 100Tbps (0: the line rate / 2500)"};
const QuantitySpec kHpccMinRate{"rate",
                                "1Gbps",
                                parse_rate_bps,
                                1'000'000,
                                100'000'000'000'000,
                                "a rate from 1Mbps to 100Tbps"};

}  // namespace

// clang-format off
std::span<const Field> hpcc_params() {
  static const Field rows[] = {
  {"hpcc", "eta", false, Fraction(0.01, 1, "a number from 0.01 to 1, e.g. 0.95"),
   at<kHpcc, &H::eta>, "target utilization of the most loaded link [eta]"},
  {"hpcc", "max_stage", false, Int(0, 1'000'000), at<kHpcc, &H::max_stage>,
   "additive increase updates before a multiplicative one is forced; 0 = always multiplicative [maxStage]"},
  {"hpcc", "rate_ai", false, Quantity(kHpccAi), at<kHpcc, &H::rate_ai_bps>,
   "additive increase per update, as a rate; 0 = line rate / 2500 [W_AI / T]"},
  {"hpcc", "min_rate", false, Quantity(kHpccMinRate), at<kHpcc, &H::min_rate_bps>,
   "floor of the rate (at most the line rate)"},
  {"hpcc", "fast_react", false, Bool(), at<kHpcc, &H::fast_react>,
   "react to every ACK between the once-per-RTT updates (without moving Wc)"},
  {"hpcc", "window", false, Bool(), at<kHpcc, &H::window>,
   "limit the bytes in flight to W = rate x T; false = pace only"},
  {"hpcc", "base_rtt", false, Quantity(kHpccRtt), at<kHpcc, &H::base_rtt_ps>,
   "the base RTT; 0 = each queue pair's idle round trip [T]"},
  {"hpcc", "int_header_bytes", false, Int(0, 1024), at<kHpcc, &H::int_header_bytes>,
   "bytes the INT header adds to each data packet and ACK; 0 = not counted"},
  };
  return rows;
}
// clang-format on

/// A section under another control: a warning, said once where its first key was written.
void check_hpcc(const std::map<std::string, Value>& found, Scenario& s) {
  if (s.nic.congestion_control == "hpcc") return;
  for (const auto& [path, value] : found) {
    if (path.rfind("hpcc.", 0) != 0) continue;
    s.warnings.push_back(config_warning(
        value.origin(), value.path(),
        "not used: the hpcc section sets HPCC's parameters, and nic.congestion_control is " +
            s.nic.congestion_control));
    break;
  }
}

}  // namespace fabricsim::config_detail
