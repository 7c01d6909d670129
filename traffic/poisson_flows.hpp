// Poisson background flows: every host starts flows to other hosts at exponentially distributed
// intervals, with sizes from an empirical distribution, so that it offers a set fraction of its
// link's rate (HPCC's traffic_gen/traffic_gen.py, github.com/alibaba-edu/
// High-Precision-Congestion-Control, the generator behind the web-search and Hadoop workloads of
// the HPCC, DCQCN and TIMELY evaluations).
//
// Per host an independent Poisson process: inter-arrival times are exponential with mean
//     mean_interarrival = cdf.mean_bytes() * 8 / (host_rate_bps * load)   seconds,
// so the host offers load * host_rate_bps on average. Each host draws from its own RngStream
// ("background.host.<i>" under the spec's seed: its inter-arrivals, destinations and sizes, in
// that order per flow), so host i's flows do not depend on how many hosts there are or on the
// order they are generated in. Differences from traffic_gen.py: times are integer picoseconds
// (not nanoseconds); every arrival before the end of the window is kept (traffic_gen.py keeps an
// arrival only when the host's next one also falls in the window, dropping each host's last
// flow); and rack-local traffic is offered as well as all-to-all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traffic/flow_size_cdf.hpp"

namespace fabricsim {

/// What to generate. Validated by generate_poisson_flows (std::invalid_argument).
struct PoissonFlowsSpec {
  /// Where destinations are drawn from, for each sender.
  enum Pattern {
    kAllToAll,   ///< uniformly over all other hosts
    kRackLocal,  ///< uniformly over the other hosts of the sender's group (rack / leaf)
  };

  int hosts = 0;  ///< senders and receivers 0 .. hosts-1; at least 2
  /// The group (rack / leaf id, any int) of each host: empty, or `hosts` entries. Needed by
  /// kRackLocal, where every group must hold at least two hosts; ignored by kAllToAll.
  std::vector<int> group_of_host;
  double load = 0;            ///< 0 < load <= 1: the fraction of host_rate_bps each host offers
  int64_t host_rate_bps = 0;  ///< each host link's rate, bit/s; > 0
  int64_t start_ps = 0;       ///< >= 0; no flow starts before it
  int64_t duration_ps = 0;    ///< > 0; flows start in [start_ps, start_ps + duration_ps)
  Pattern pattern = kAllToAll;
  uint64_t seed = 0;  ///< the scenario seed the per-host streams derive from
  /// A bound on the expected flow count hosts * duration / mean_interarrival, checked before
  /// generating (a typo in a rate or duration must not fill memory); > 0.
  int64_t max_flows = 10'000'000;
};

/// One generated flow.
struct GeneratedFlow {
  int src = 0, dst = 0;  ///< host indices, src != dst
  int64_t bytes = 0;     ///< >= 1
  int64_t start_ps = 0;  ///< absolute simulated time, ps
  friend bool operator==(const GeneratedFlow&, const GeneratedFlow&) = default;
};

/// The RngStream name of host `host`'s flows: "background.host.<host>".
std::string poisson_stream_name(int host);

/// The mean inter-arrival time of each host's flows, ps (not rounded):
/// cdf.mean_bytes() * 8 / (host_rate_bps * load) * 1e12.
double poisson_mean_interarrival_ps(const PoissonFlowsSpec& spec, const FlowSizeCdf& cdf);

/// The flows of `spec`, sorted by (start_ps, src) (a host's flows with equal start times keep
/// their order of arrival). Each inter-arrival time is an exponential draw with mean
/// poisson_mean_interarrival_ps, rounded to the nearest picosecond (so it may be 0); an arrival
/// is kept when it lies strictly before start_ps + duration_ps. Sizes are
/// cdf.sample_bytes(u). Throws std::invalid_argument for an invalid spec, for a rack-local
/// group with a single host (naming it), and when the expected flow count exceeds
/// spec.max_flows (giving the estimate). Deterministic: the same spec and cdf give the same
/// flows; across platforms too, as far as their libm's std::log agrees (a last-bit difference
/// in one log can move a start time by a picosecond, rarely).
std::vector<GeneratedFlow> generate_poisson_flows(const PoissonFlowsSpec& spec,
                                                  const FlowSizeCdf& cdf);

}  // namespace fabricsim
