#include "traffic/poisson_flows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "sim/core/rng.hpp"

namespace fabricsim {

namespace {

[[noreturn]] void bad_spec(const std::string& message) {
  throw std::invalid_argument("Poisson flows: " + message);
}

void check_spec(const PoissonFlowsSpec& s) {
  if (s.hosts < 2) bad_spec("hosts must be at least 2, got " + std::to_string(s.hosts));
  if (!s.group_of_host.empty() && s.group_of_host.size() != static_cast<size_t>(s.hosts)) {
    bad_spec("group_of_host has " + std::to_string(s.group_of_host.size()) + " entries for " +
             std::to_string(s.hosts) + " hosts: give one per host, or none");
  }
  if (!(s.load > 0 && s.load <= 1)) {
    bad_spec("load must be in (0, 1] (a fraction of the host link's rate), got " +
             std::to_string(s.load));
  }
  if (s.host_rate_bps <= 0) {
    bad_spec("host_rate_bps must be positive, got " + std::to_string(s.host_rate_bps));
  }
  if (s.start_ps < 0) bad_spec("start_ps must be >= 0, got " + std::to_string(s.start_ps));
  if (s.duration_ps <= 0) {
    bad_spec("duration_ps must be positive, got " + std::to_string(s.duration_ps));
  }
  if (s.start_ps > std::numeric_limits<int64_t>::max() - s.duration_ps) {
    bad_spec("start_ps + duration_ps overflows 64-bit picoseconds");
  }
  if (s.max_flows <= 0) bad_spec("max_flows must be positive, got " + std::to_string(s.max_flows));
  if (s.pattern == PoissonFlowsSpec::kRackLocal && s.group_of_host.empty()) {
    bad_spec("rack-local traffic needs group_of_host (the rack / leaf of each host)");
  }
}

// Where each host's destinations come from: for rack-local, the sorted members of its group and
// its own index among them; for all-to-all, every host.
struct Destinations {
  std::map<int, std::vector<int>> members;  // group id -> hosts, ascending
  std::vector<int> index_in_group;          // host -> its index in members[group]
};

Destinations rack_local_destinations(const PoissonFlowsSpec& s) {
  Destinations d;
  d.index_in_group.resize(s.hosts);
  for (int h = 0; h < s.hosts; ++h) {
    auto& m = d.members[s.group_of_host[h]];
    d.index_in_group[h] = static_cast<int>(m.size());
    m.push_back(h);
  }
  for (int h = 0; h < s.hosts; ++h) {
    if (d.members.at(s.group_of_host[h]).size() < 2) {
      bad_spec("host " + std::to_string(h) + " is alone in group " +
               std::to_string(s.group_of_host[h]) +
               ": rack-local traffic needs at least two hosts in every group");
    }
  }
  return d;
}

// Uniform index in 0 .. n-1 other than `self` (0 <= self < n, n >= 2) from uniform `u` in [0, 1).
int other_index(double u, int n, int self) {
  int k = std::min(static_cast<int>(u * (n - 1)), n - 2);
  if (k >= self) ++k;
  return k;
}

}  // namespace

std::string poisson_stream_name(int host) {
  return "background.host." + std::to_string(host);
}

double poisson_mean_interarrival_ps(const PoissonFlowsSpec& spec, const FlowSizeCdf& cdf) {
  return cdf.mean_bytes() * 8 / (static_cast<double>(spec.host_rate_bps) * spec.load) * 1e12;
}

std::vector<GeneratedFlow> generate_poisson_flows(const PoissonFlowsSpec& spec,
                                                  const FlowSizeCdf& cdf) {
  check_spec(spec);
  const bool rack_local = spec.pattern == PoissonFlowsSpec::kRackLocal;
  const Destinations dests = rack_local ? rack_local_destinations(spec) : Destinations{};

  const double mean_ps = poisson_mean_interarrival_ps(spec, cdf);
  const double expected = spec.hosts * (static_cast<double>(spec.duration_ps) / mean_ps);
  if (!(expected <= static_cast<double>(spec.max_flows))) {
    bad_spec("about " + std::to_string(std::llround(std::min(expected, 9e18))) +
             " flows expected (" + std::to_string(spec.hosts) + " hosts x " +
             std::to_string(spec.duration_ps) + " ps / mean inter-arrival " +
             std::to_string(std::llround(mean_ps)) + " ps), above max_flows " +
             std::to_string(spec.max_flows) + ": shorten the duration or lower the load");
  }

  std::vector<GeneratedFlow> flows;
  flows.reserve(static_cast<size_t>(expected * 1.05) + 16);
  const int64_t end_ps = spec.start_ps + spec.duration_ps;
  for (int src = 0; src < spec.hosts; ++src) {
    RngStream rng(spec.seed, poisson_stream_name(src));
    int64_t t = spec.start_ps;
    for (;;) {
      // Exponential by inversion; 1 - u lies in (0, 1].
      const double gap = -std::log(1 - rng.uniform01()) * mean_ps;
      if (!(gap < static_cast<double>(end_ps - t))) break;
      const int64_t gap_ps = std::llround(gap);
      if (gap_ps >= end_ps - t) break;
      t += gap_ps;
      const double u_dst = rng.uniform01();
      int dst;
      if (rack_local) {
        const auto& m = dests.members.at(spec.group_of_host[src]);
        dst = m[other_index(u_dst, static_cast<int>(m.size()), dests.index_in_group[src])];
      } else {
        dst = other_index(u_dst, spec.hosts, src);
      }
      flows.push_back({src, dst, cdf.sample_bytes(rng.uniform01()), t});
    }
  }
  std::stable_sort(flows.begin(), flows.end(), [](const GeneratedFlow& a, const GeneratedFlow& b) {
    return a.start_ps != b.start_ps ? a.start_ps < b.start_ps : a.src < b.src;
  });
  return flows;
}

}  // namespace fabricsim
