// The `timely:` section (TimelyConfig, congestion/timely/timely_config.hpp): TIMELY's
// parameters, used when nic.congestion_control names timely. Under another control the section
// is said to do nothing, not refused, so that one scenario can be swept over the controls with
// TIMELY's own values (--vary nic.congestion_control=dcqcn,timely). The algorithm's checks that
// need the line rate run where it is known (validate_timely, sim/run/prepare.cpp).
#include "sim/config/loader_detail.hpp"
#include "sim/core/units.hpp"

namespace fabricsim::config_detail {

namespace {

constexpr auto kTimely = &Scenario::timely;
using T = TimelyConfig;

/// TIMELY's RTT thresholds: up to 1 s, as the other delays.
const QuantitySpec kTimelyTime{
    "time", "50us", parse_time_ps, 1, 1'000'000'000'000, "a positive time up to 1s"};
const QuantitySpec kTimelyRate{"rate",
                               "10Mbps",
                               parse_rate_bps,
                               1'000'000,
                               100'000'000'000'000,
                               "a rate from 1Mbps to 100Tbps"};

}  // namespace

// clang-format off
std::span<const Field> timely_params() {
  static const Field rows[] = {
  {"timely", "t_low", false, Quantity(kTimelyTime), at<kTimely, &T::t_low_ps>,
   "below this RTT the rate increases whatever the gradient [T_low]"},
  {"timely", "t_high", false, Quantity(kTimelyTime), at<kTimely, &T::t_high_ps>,
   "above this RTT the rate decreases by beta (1 - T_high / rtt) [T_high]"},
  {"timely", "min_rtt", false, Quantity(kTimelyTime), at<kTimely, &T::min_rtt_ps>,
   "the fixed minimum RTT that normalizes the gradient [minRTT]"},
  {"timely", "alpha", false, Fraction(1e-6, 1, "a number from 0.000001 to 1, e.g. 0.875"),
   at<kTimely, &T::alpha>, "EWMA weight of a new RTT difference [alpha]"},
  {"timely", "beta", false, Fraction(0, 1, "a number from 0 to 1, e.g. 0.8"),
   at<kTimely, &T::beta>, "multiplicative decrease factor [beta]"},
  {"timely", "rai", false, Quantity(kTimelyRate), at<kTimely, &T::rai_bps>,
   "additive increment per RTT [delta]"},
  {"timely", "rhai", false, Quantity(kTimelyRate), at<kTimely, &T::rhai_bps>,
   "increment in hyper-active increase [N x delta]"},
  {"timely", "hai_threshold", false, Int(0, 1'000'000), at<kTimely, &T::hai_threshold>,
   "increases in a row before hyper-active increase [N]"},
  {"timely", "min_rate", false, Quantity(kTimelyRate), at<kTimely, &T::min_rate_bps>,
   "floor of the rate (at most the line rate)"},
  };
  return rows;
}
// clang-format on

/// t_high below t_low would leave no band for the gradient: refused where t_high was written
/// (or t_low, when only it was). A section under another control: a warning.
void check_timely(const std::map<std::string, Value>& found, Scenario& s) {
  if (s.nic.congestion_control != "timely") {
    // Said once, where the first of its keys was written (a file's line or a --set).
    for (const auto& [path, value] : found) {
      if (path.rfind("timely.", 0) != 0) continue;
      s.warnings.push_back(config_warning(
          value.origin(), value.path(),
          "not used: the timely section sets TIMELY's parameters, and nic.congestion_control is " +
              s.nic.congestion_control));
      break;
    }
  }
  const TimelyConfig& t = s.timely;
  if (t.t_high_ps >= t.t_low_ps) return;
  const std::string why = "t_high (" + format_time(t.t_high_ps) + ") is below t_low (" +
                          format_time(t.t_low_ps) + "): expected T_low <= T_high";
  if (const auto it = found.find("timely.t_high"); it != found.end()) it->second.fail(why);
  found.at("timely.t_low").fail(why);
}

}  // namespace fabricsim::config_detail
