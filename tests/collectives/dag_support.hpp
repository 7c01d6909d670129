// Helpers shared by the collectives tests.
#pragma once

#include <algorithm>
#include <vector>

#include "collectives/transfer_dag.hpp"

namespace fabricsim::testing {

/// Longest dependency chain of `dag`, in transfers (ids are a topological order); a transfer
/// waiting for another's post (TransferDag::depends_on_post) may share its step.
inline int critical_path(const TransferDag& dag) {
  std::vector<int> depth(dag.size(), 1);
  int longest = 0;
  for (uint32_t t = 0; t < dag.size(); ++t) {
    longest = std::max(longest, depth[t]);
    for (uint32_t d : dag.dependents(t)) depth[d] = std::max(depth[d], depth[t] + 1);
    // A transfer waiting for t's post (a slot t's sender frees by forwarding) may run in the
    // same step as t.
    for (uint32_t d : dag.post_dependents(t)) depth[d] = std::max(depth[d], depth[t]);
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
