// What an egress scheduler sees and keeps: a port's eight class queues (traffic classes 0..7,
// 802.1p priorities), the classes that may send now, and a small per-port state. The built-in
// schedulers (strict_priority.hpp, dwrr.hpp) are inline functions over these; a scheduler
// registered from outside the library (registry.hpp) implements the Scheduler interface.
#pragma once

#include <array>
#include <cstdint>

namespace fabricsim {

/// Traffic classes per port (802.1p priorities 0..7; sim/net's kTrafficClasses).
inline constexpr int kSchedulerClasses = 8;

/// A port's scheduler state, kept in the port (sim/net/port.hpp) and exchanged with it between
/// MPI ranks, so plain data. DWRR's (dwrr.hpp): the class its round-robin pointer is at, whether
/// that class has had its quantum on this visit, and each class's deficit counter, bytes. A
/// registered scheduler may use the fields as it likes. `deficit[tc]` is set to 0 whenever queue
/// tc empties (a frame leaves it last, or the PFC watchdog flushes it): DRR's rule that an empty
/// queue keeps no credit.
struct SchedulerState {
  uint8_t cursor = 0;
  bool fresh = true;  ///< the cursor's class has not had its quantum this visit
  std::array<int64_t, kSchedulerClasses> deficit{};
};

/// Queue tc emptied: it keeps no credit (Shreedhar & Varghese, "Efficient fair queuing using
/// deficit round robin", SIGCOMM 1995: a queue that empties has its deficit counter reset to 0).
inline void queue_emptied(SchedulerState& state, int tc) {
  state.deficit[tc] = 0;
}

/// The head of each class queue as a registered scheduler sees it: bit tc of `nonempty` set when
/// queue tc holds a frame, and then `wire_bytes[tc]` is its head frame's size on the wire
/// (headers, preamble and gap included), else 0.
struct QueueHeads {
  uint8_t nonempty = 0;
  std::array<int32_t, kSchedulerClasses> wire_bytes{};
};

/// A scheduler registered from outside the library, called through this interface once per
/// frame a port sends (the built-ins are not: they are bound at compile time).
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// The class whose head frame the port sends next: one of the bits of `eligible` (bit tc set:
  /// queue tc holds a frame and may send, neither paused by PFC nor short of InfiniBand
  /// credits; never 0). `state` is this port's; `heads` its queues' head frames (a class can be
  /// non-empty and not eligible: paused).
  virtual int pick(uint8_t eligible, SchedulerState& state, const QueueHeads& heads) = 0;
};

}  // namespace fabricsim
