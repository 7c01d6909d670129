#include "sim/core/counter_table.hpp"

#include <stdexcept>
#include <utility>

namespace fabricsim {

namespace {

using S = CounterScope;
using M = CounterMerge;

std::vector<CounterDef>& table() {
  // DESIGN.md §4 `counters`, in BuiltinCounter order.
  static std::vector<CounterDef> t = {
      {"drops", "packets", S::kRun, M::kSum, "packets lost anywhere: tail drop + corrupted frames"},
      {"retransmits", "packets", S::kRun, M::kSum, "data packets sent again by go-back-N"},
      {"pfc_pause_tx", "frames", S::kPort, M::kSum, "PFC frames sent"},
      {"pfc_pause_rx", "frames", S::kPort, M::kSum, "PFC frames received"},
      {"ecn_marked", "packets", S::kPort, M::kSum, "data packets marked CE by switches"},
      {"cnp_tx", "packets", S::kRun, M::kSum, "DCQCN congestion notifications sent"},
      {"max_queue_bytes", "bytes", S::kPort, M::kMax, "peak occupancy of any switch egress queue"},
      {"tail_drops", "packets", S::kPort, M::kSum, "refused by buffer admission"},
      {"corrupt_drops", "packets", S::kPort, M::kSum,
       "frames failing FCS/ICRC at a receiver (bit errors)"},
      {"nak_tx", "packets", S::kRun, M::kSum,
       "go-back-N NAKs (PSN sequence error) sent by receivers"},
      {"rto_timeouts", "packets", S::kRun, M::kSum, "retransmission timer expiries"},
      {"headroom_drops", "frames", S::kPort, M::kSum,
       "lossless frames refused: PFC headroom overflow"},
      {"watchdog_drops", "frames", S::kPort, M::kSum,
       "frames the PFC watchdog dropped (action drop)"},
      {"pfc_storms", "queues", S::kPort, M::kSum, "queues the PFC watchdog declared stormed"},
      {"paused_ps", "ps", S::kPort, M::kSum, "summed over egress queues: time paused by PFC"},
      {"cnp_rx", "packets", S::kRun, M::kSum, "DCQCN notifications received by senders"},
      {"ce_received", "packets", S::kRun, M::kSum, "CE-marked packets received in sequence"},
  };
  return t;
}

}  // namespace

const std::vector<CounterDef>& counter_table() {
  return table();
}

uint32_t register_counter(CounterDef def) {
  std::vector<CounterDef>& t = table();
  if (def.name.empty()) throw std::invalid_argument("register_counter: empty name");
  for (const CounterDef& d : t) {
    if (d.name == def.name) {
      throw std::invalid_argument("register_counter: '" + def.name + "' is already a counter");
    }
  }
  t.push_back(std::move(def));
  return static_cast<uint32_t>(t.size() - 1);
}

std::vector<uint32_t> registered_counter_indices(CounterScope scope) {
  std::vector<uint32_t> out;
  const std::vector<CounterDef>& t = table();
  for (uint32_t k = kBuiltinCounters; k < t.size(); ++k) {
    if (t[k].scope == scope) out.push_back(k);
  }
  return out;
}

}  // namespace fabricsim
