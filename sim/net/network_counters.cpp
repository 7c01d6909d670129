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

void Network::settle_statistics() {
  const int64_t now = sim_.now().ps();
  for (uint32_t pid = 0; pid < ports_.size(); ++pid) {
    Occupancy& po = port_occ_[pid];
    Port& port = ports_[pid];
    port.hist_cache.flush(port_hist_[pid]);
    port_hist_[pid].ps[port.hist_bucket] += now - port.hist_since_ps;
    port.hist_since_ps = now;
    po.change(now, 0);
    for (int tc = 0; tc < kTrafficClasses; ++tc) {
      QueueCounters& q = queues_[static_cast<size_t>(pid) * kTrafficClasses + tc];
      q.occupancy.change(now, 0);
      q.paused_ps += pfc_.settle(pid, tc, now);  // close the open pause interval
    }
  }
}

int64_t Network::host_paused_ps(int host, int64_t from_ps, int64_t to_ps) const {
  return pfc_.host_paused_ps(host, from_ps, to_ps, sim_.now().ps());
}

}  // namespace fabricsim
