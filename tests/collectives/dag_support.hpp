// Helpers shared by the collectives tests.
#pragma once

#include <algorithm>
#include <vector>

#include "collectives/transfer_dag.hpp"

namespace fabricsim::testing {

/// Longest dependency chain of `dag`, in transfers (ids are a topological order).
inline int critical_path(const TransferDag& dag) {
  std::vector<int> depth(dag.size(), 1);
  int longest = 0;
  for (uint32_t t = 0; t < dag.size(); ++t) {
    longest = std::max(longest, depth[t]);
    for (uint32_t d : dag.dependents(t)) depth[d] = std::max(depth[d], depth[t] + 1);
  }
  return longest;
}

/// ⌈log2 n⌉ for n >= 1, counted by hand: the height of NCCL's binary trees (trees.cc) and
/// the dimensions of a Bruck / PAT schedule.
inline int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

}  // namespace fabricsim::testing
