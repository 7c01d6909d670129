// ECN marking on switch egress queues: RED on the instantaneous queue, as DCQCN deploys it
// (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, §3.1: the
// switch marks with probability rising linearly from 0 at Kmin to Pmax at Kmax, and marks every
// packet above Kmax). sim/net asks mark() for each data packet at the chosen point.
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim {

struct RedEcn {
  int64_t kmin_bytes = 5'000;
  int64_t kmax_bytes = 200'000;
  double pmax = 0.01;

  /// Marking probability for a packet that finds `queue_bytes` ahead of it: 0 up to kmin,
  /// pmax x (q - kmin) / (kmax - kmin) strictly between, 1 from kmax on.
  double probability(int64_t queue_bytes) const {
    if (queue_bytes <= kmin_bytes) return 0.0;
    if (queue_bytes >= kmax_bytes) return 1.0;
    return pmax * static_cast<double>(queue_bytes - kmin_bytes) /
           static_cast<double>(kmax_bytes - kmin_bytes);
  }
  /// Why these thresholds cannot mark as above, in the words of a scenario error; "" when they
  /// can: 0 <= kmin < kmax and 0 < pmax <= 1. `kmin_name` and `kmax_name` name the thresholds
  /// ("ecn.kmin" for a scenario's section, "kmin" for one switch's). The one check of ECN's
  /// thresholds: the scenario's ecn section (sim/run/prepare.cpp) and each switch's
  /// (sim/net/network.cpp) call it; the loader's ranges already keep kmin >= 0 and pmax in (0, 1].
  std::string check(const std::string& kmin_name = "kmin",
                    const std::string& kmax_name = "kmax") const {
    if (kmin_bytes >= 0 && kmax_bytes > kmin_bytes && pmax > 0 && pmax <= 1) return "";
    return kmin_name + " (" + std::to_string(kmin_bytes) + " B) must be below " + kmax_name + " (" +
           std::to_string(kmax_bytes) + " B): marking rises from 0 at kmin to pmax at kmax";
  }
  /// Whether to mark, given a uniform draw u in [0, 1) (drawn only where 0 < p < 1, so a
  /// run's random stream does not depend on packets that are certainly (un)marked).
  template <class Rng>
  bool mark(int64_t queue_bytes, Rng& rng) const {
    if (queue_bytes <= kmin_bytes) return false;
    if (queue_bytes >= kmax_bytes) return true;
    return rng.uniform01() < probability(queue_bytes);
  }
};

}  // namespace fabricsim
