// Network-wide totals, the byte balance and the per-message flow record (results.json, flows.csv).
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim {

/// Network-wide totals.
struct NetTotals {
  int64_t drops = 0;  ///< packets lost (tail drops + corrupt drops, a frame counted once)
  int64_t tail_drops = 0;
  int64_t corrupt_drops = 0;
  int64_t packet_hops = 0;        ///< frames fully serialized on any link
  int64_t packets_delivered = 0;  ///< frames consumed by their destination NIC
  int64_t max_queue_bytes = 0;    ///< peak occupancy of any switch egress queue
  int64_t retransmits = 0;        ///< data packets sent again (every resend counts)
  int64_t nak_tx = 0;
  int64_t rto_timeouts = 0;
  int64_t ecn_marked = 0;          ///< data packets marked CE by switches
  int64_t ce_received = 0;         ///< CE-marked data packets received in sequence by NICs
  int64_t pfc_tx = 0, pfc_rx = 0;  ///< PFC frames sent / received
  int64_t headroom_drops = 0;      ///< lossless frames refused: headroom overflow
  int64_t watchdog_drops = 0, watchdog_storms = 0;
  int64_t cnp_tx = 0, cnp_rx = 0;  ///< DCQCN congestion notifications
  int64_t paused_ps = 0;           ///< summed over egress queues: time paused
  /// The registered counters (sim/core/counter_table.hpp), by index - kBuiltinCounters: each
  /// merged over the ports as its CounterDef says.
  std::vector<int64_t> registered;
};

/// A queue pair's longest wait for its acknowledged PSN to advance (Network::longest_stall).
struct QpStall {
  int64_t stall_ps = 0;  ///< how long, picoseconds (0: no QP waited)
  int64_t from_ps = 0;   ///< from when
  int64_t qp = -1;       ///< which QP (-1: none)
};

/// Wire-byte conservation: sent = delivered + dropped + in flight.
struct ByteBalance {
  int64_t sent_bytes = 0, delivered_bytes = 0, dropped_bytes = 0, in_flight_bytes = 0;
};

/// One delivered message (flows.csv).
struct FlowRecord {
  uint64_t seq;
  int32_t src, dst;
  uint32_t qp;
  uint8_t tc;
  int64_t bytes, start_ps, end_ps;
  /// Packets of this message whose copy the receiver accepted (in order) was a resend
  /// (Packet::kRetransmit): what the receiver can see. Each packet counts at most once, however
  /// often it was resent; resends the receiver discarded (out of order, duplicates) count only
  /// in NetTotals::retransmits.
  int64_t retransmitted_packets;
  uint64_t tag;  ///< the tag it was posted with
  /// Not printed: Event::key of the event that delivered the last packet (with end_ps, the
  /// record's place in the delivery order, for merging per-rank records).
  uint64_t deliver_key;
};

}  // namespace fabricsim
