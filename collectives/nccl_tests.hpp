// nccl-tests conventions: the size sweep and the algbw/busbw definitions.
//
// Source: NVIDIA nccl-tests, doc/PERFORMANCE.md ("algbw" and "busbw") and src/common.cu (the
// -b/-e/-f sweep). GB/s means 10⁹ bytes per second, as nccl-tests prints it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

/// nccl-tests' bus bandwidth factor for `collective` on `ranks` ranks: busbw = algbw × factor.
///   all_reduce 2(n−1)/n; all_gather, reduce_scatter, alltoall (n−1)/n; broadcast, reduce,
///   sendrecv 1. Throws std::invalid_argument for an unknown collective name.
double busbw_factor(const std::string& collective, int ranks);

/// algbw in GB/s (10⁹ B/s): size_bytes / time. Throws std::invalid_argument if time_ps <= 0.
double algbw_GBps(int64_t size_bytes, int64_t time_ps);

/// The sizes nccl-tests visits for -b minbytes -e maxbytes -f stepfactor: minbytes,
/// minbytes×f, … while <= maxbytes, each rounded down to a whole number of elements of
/// `elem_bytes`. Throws std::invalid_argument for minbytes <= 0, maxbytes < minbytes,
/// stepfactor < 2 or elem_bytes <= 0.
std::vector<int64_t> sweep_sizes(int64_t minbytes, int64_t maxbytes, int64_t stepfactor,
                                 int elem_bytes);

}  // namespace fabricsim
