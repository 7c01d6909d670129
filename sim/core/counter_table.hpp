// The counter table: every counter a run reports, declared once (name, unit, scope, how it is
// summed across MPI ranks, one line of doc). results.json `counters` and the extra ports.csv
// columns are written by iterating it, in its order; DESIGN.md §4 names the built-in entries.
//
// A component outside the library adds a counter with register_counter() before it builds a
// Network, then increments it with Network::add(index, port, value): a plain array add.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

/// Where a counter is kept. kPort: one value per port (ports.csv has a column for a registered
/// one); kNode and kRun: one value for the run (results.json only).
enum class CounterScope : uint8_t { kPort, kNode, kRun };

/// How the values of MPI ranks (and, for a per-port counter, of its ports) become the run's.
enum class CounterMerge : uint8_t { kSum, kMax };

/// One counter.
struct CounterDef {
  std::string name;  ///< results.json `counters` key and ports.csv column (a contract)
  std::string unit;  ///< "packets", "frames", "queues", "bytes" or "ps"
  CounterScope scope = CounterScope::kRun;
  CounterMerge merge = CounterMerge::kSum;
  std::string doc;  ///< one line
};

/// The built-in counters, in results.json order (DESIGN.md §4's seven first, then the
/// extensions); indices into counter_table().
enum BuiltinCounter : uint32_t {
  kCounterDrops,
  kCounterRetransmits,
  kCounterPfcPauseTx,
  kCounterPfcPauseRx,
  kCounterEcnMarked,
  kCounterCnpTx,
  kCounterMaxQueueBytes,
  kCounterTailDrops,
  kCounterCorruptDrops,
  kCounterNakTx,
  kCounterRtoTimeouts,
  kCounterHeadroomDrops,
  kCounterWatchdogDrops,
  kCounterPfcStorms,
  kCounterPausedPs,
  kCounterCnpRx,
  kCounterCeReceived,
  kBuiltinCounters
};

/// The built-in counters, then the registered ones in the order they were registered.
const std::vector<CounterDef>& counter_table();

/// Adds a counter after those already in the table and returns its index (>= kBuiltinCounters).
/// Networks built afterwards keep it (one value per port); results.json writes it after the
/// built-in ones. Throws std::invalid_argument for an empty name or one already in the table.
/// Not thread-safe: register before any run starts.
uint32_t register_counter(CounterDef def);

/// Counters registered so far (counter_table().size() - kBuiltinCounters).
inline uint32_t registered_counters() {
  return static_cast<uint32_t>(counter_table().size()) - kBuiltinCounters;
}

/// The indices of the registered counters of `scope`, in table order.
std::vector<uint32_t> registered_counter_indices(CounterScope scope);

}  // namespace fabricsim
