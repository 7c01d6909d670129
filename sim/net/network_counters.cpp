// Network: the registered counters (sim/core/counter_table.hpp), kept per port.
#include <algorithm>

#include "sim/net/network.hpp"

namespace fabricsim {

namespace {

int64_t merged(CounterMerge how, int64_t a, int64_t b) {
  return how == CounterMerge::kMax ? std::max(a, b) : a + b;
}

}  // namespace

int64_t Network::registered_counter(uint32_t counter, uint32_t port) const {
  const size_t at = size_t{counter - kBuiltinCounters} * ports_.size() + port;
  return counter >= kBuiltinCounters && at < registered_.size() ? registered_[at] : 0;
}

std::vector<int64_t> Network::registered_totals() const {
  const size_t n = ports_.size();
  const size_t counters = n == 0 ? 0 : registered_.size() / n;
  std::vector<int64_t> out(counters, 0);
  for (size_t r = 0; r < counters; ++r) {
    const CounterMerge how = counter_table()[kBuiltinCounters + r].merge;
    for (size_t pid = 0; pid < n; ++pid) out[r] = merged(how, out[r], registered_[r * n + pid]);
  }
  return out;
}

void Network::merge_registered(const std::vector<int64_t>& other) {
  const size_t n = ports_.size();
  for (size_t i = 0; i < registered_.size(); ++i) {
    const CounterMerge how = counter_table()[kBuiltinCounters + i / n].merge;
    registered_[i] = merged(how, registered_[i], other[i]);
  }
}

}  // namespace fabricsim
