// In-band network telemetry (INT) as HPCC reads it: what each switch egress on a data packet's
// path appends, and the ACK echoes back to the sender (Li et al., SIGCOMM 2019, §3.1 and Figure
// 4: the egress port's timestamp, its cumulative transmitted bytes, its queue length and its
// link bandwidth).
#pragma once

#include <cstdint>

namespace fabricsim {

/// One switch egress's record, written as the packet leaves the queue.
struct IntHop {
  int64_t ts_ps = 0;       ///< the time the packet was dequeued, picoseconds [ts]
  int64_t tx_bytes = 0;    ///< wire bytes the port has sent, this packet included [txBytes]
  int64_t qlen_bytes = 0;  ///< wire bytes queued at the port behind it, all classes [qLen]
  int64_t rate_bps = 0;    ///< the port's link rate, bits/s [B]
};

/// The records a packet carries: one per switch egress, in path order. A path of more switch
/// hops than kMaxHops keeps the first kMaxHops (`overflow` says so); the run's preparation
/// refuses HPCC on a fabric with such a route (sim/run/prepare.cpp).
struct IntStack {
  static constexpr int kMaxHops = 8;
  IntHop hop[kMaxHops];
  uint8_t n = 0;          ///< records held
  bool overflow = false;  ///< a later switch found no room
};

}  // namespace fabricsim
