#include "collectives/nccl_tests.hpp"

#include <stdexcept>

namespace fabricsim {

double busbw_factor(const std::string& collective, int ranks) {
  const double n = ranks;
  if (collective == "all_reduce") return 2.0 * (n - 1) / n;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") {
    return (n - 1) / n;
  }
  if (collective == "broadcast" || collective == "reduce" || collective == "sendrecv") return 1.0;
  throw std::invalid_argument("busbw_factor: unknown collective '" + collective + "'");
}

double algbw_GBps(int64_t size_bytes, int64_t time_ps) {
  if (time_ps <= 0) throw std::invalid_argument("algbw_GBps: time must be > 0");
  // bytes / (ps × 1e-12 s) / 1e9 = bytes × 1000 / ps
  return static_cast<double>(size_bytes) * 1000.0 / static_cast<double>(time_ps);
}

std::vector<int64_t> sweep_sizes(int64_t minbytes, int64_t maxbytes, int64_t stepfactor,
                                 int elem_bytes) {
  if (minbytes <= 0 || maxbytes < minbytes || stepfactor < 2 || elem_bytes <= 0) {
    throw std::invalid_argument("sweep_sizes: need 0 < minbytes <= maxbytes, stepfactor >= 2");
  }
  std::vector<int64_t> sizes;
  for (int64_t s = minbytes; s <= maxbytes; s *= stepfactor) {
    sizes.push_back(s / elem_bytes * elem_bytes);
    if (s > maxbytes / stepfactor) break;  // the next step would pass maxbytes (or overflow)
  }
  return sizes;
}

}  // namespace fabricsim
