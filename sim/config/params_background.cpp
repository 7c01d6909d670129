// The `background:` section (BackgroundConfig, scenario.hpp): Poisson background flows at a
// target load of the host links. The loader keeps the flow-size choice as written; the run
// reads a CDF file and generates the flows (sim/run/background.cpp, traffic/).
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

constexpr auto kBackground = &Scenario::background;
using B = BackgroundConfig;

const Choices kBackgroundPatterns{"traffic pattern", {"all-to-all", "rack-local"}, {}, {}};
/// Arrivals over at most 10 s of simulated time.
const QuantitySpec kBackgroundDuration{
    "time", "10ms", parse_time_ps, 1, 10'000'000'000'000, "a positive time up to 10s"};
const QuantitySpec kBackgroundStart{
    "time", "0s", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};

}  // namespace

// clang-format off
std::span<const Field> background_params() {
  static const Field rows[] = {
  {"background", "load", false, Fraction(0, 1, "a number from 0 to 1, e.g. 0.3"),
   at<kBackground, &B::load>,
   "offered load per host link: mean flow arrivals x mean size / host rate; 0 = no flows"},
  {"background", "flow_sizes", false, String(), at<kBackground, &B::flow_sizes>,
   "web-search (DCTCP 2010) | hadoop (Facebook, SIGCOMM 2015) | a CDF file of 'SIZE_BYTES PERCENT' lines"},
  {"background", "pattern", false, Choice(kBackgroundPatterns), at<kBackground, &B::pattern>,
   "all-to-all (any other host) | rack-local (a host on the same leaf)"},
  {"background", "start", false, Quantity(kBackgroundStart), at<kBackground, &B::start_ps>,
   "arrivals begin after this time"},
  {"background", "duration", false, Quantity(kBackgroundDuration), at<kBackground, &B::duration_ps>,
   "arrivals during this long after start"},
  {"background", "priority", false, Int(0, 7), at<kBackground, &B::priority>,
   "traffic class of the flows; default nic.traffic_class"},
  {"background", "max_flows", false, Int(1, 10'000'000), at<kBackground, &B::max_flows>,
   "refuse a section expected to generate more flows than this"},
  };
  return rows;
}
// clang-format on

void check_background(const std::map<std::string, Value>& found, Scenario& s) {
  s.background.enabled = found.count("background") > 0;
}

}  // namespace fabricsim::config_detail
