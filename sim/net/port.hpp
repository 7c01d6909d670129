// One direction of a link: its queues, transmitter state and counters (its PFC state is the
// network's PfcFlowControl's, congestion/pfc_flow_control.hpp).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "schedulers/scheduler.hpp"
#include "sim/net/packet.hpp"

namespace fabricsim {

static_assert(kSchedulerClasses == kTrafficClasses, "a scheduler sees every traffic class");

/// Occupancy over time of one queue or port: peak, time integral (for the time average) and,
/// for ports, a time-weighted log histogram (4 buckets per octave) for percentiles.
struct Occupancy {
  int64_t bytes = 0;      ///< now (queued + being serialized)
  int64_t max_bytes = 0;  ///< peak
  int64_t since_ps = 0;   ///< time of the last change
  __int128 area = 0;      ///< integral of bytes over time, byte x ps
  /// The occupancy is `bytes` from since_ps to now_ps; then changes by `delta`.
  void change(int64_t now_ps, int64_t delta) {
    area += static_cast<__int128>(bytes) * (now_ps - since_ps);
    since_ps = now_ps;
    bytes += delta;
    if (bytes > max_bytes) max_bytes = bytes;
  }
  /// Time-averaged occupancy over [0, now_ps], bytes.
  double average(int64_t now_ps) const;
};

/// Time-weighted histogram of a port's occupancy.
struct OccupancyHistogram {
  static constexpr int kSubBits = 4;                    ///< 2^kSubBits buckets per octave
  static constexpr int kPerOctave = 1 << kSubBits;      ///< bucket width <= 1/16 of its values
  static constexpr int kBuckets = kPerOctave * 40 + 1;  ///< bucket 0 = empty; up to 2^40 B
  std::array<int64_t, kBuckets> ps{};                   ///< time spent in each bucket, ps
  /// Bucket of an occupancy of `bytes` (inline: the transmitter asks at every queue change).
  static int bucket(int64_t bytes) {
    if (bytes <= 0) return 0;
    // Octave o = floor(log2(bytes)); sub = the kSubBits bits below the leading one.
    const int o = 63 - std::countl_zero(static_cast<uint64_t>(bytes));
    const int sub = o >= kSubBits ? static_cast<int>((bytes >> (o - kSubBits)) & (kPerOctave - 1))
                                  : static_cast<int>((bytes << (kSubBits - o)) & (kPerOctave - 1));
    const int b = 1 + kPerOctave * o + sub;
    return b < kBuckets ? b : kBuckets - 1;
  }
  /// Upper edge (bytes) of bucket b.
  static int64_t upper_bytes(int b);
  /// The smallest bucket edge the occupancy was at or below for fraction `q` of the time
  /// (0 < q <= 1); 0 if no time was recorded.
  int64_t percentile(double q) const;
};

/// Counters of one egress queue (port x traffic class).
struct QueueCounters {
  int64_t tx_packets = 0, tx_bytes = 0, drops = 0, drop_bytes = 0;
  int64_t ecn_marked = 0;      ///< data packets this queue marked CE
  int64_t paused_ps = 0;       ///< time this egress queue was paused by PFC from its peer
  int64_t watchdog_drops = 0;  ///< packets the PFC watchdog dropped (action drop)
  int64_t storms = 0;          ///< times the PFC watchdog declared this queue stormed
  int64_t sojourn_ps = 0;      ///< sum over sent packets of (end of serialization - enqueue)
  Occupancy occupancy;
};

/// The occupancy-histogram buckets a port visited last, with the time not yet added to its
/// OccupancyHistogram: that array is 5 KiB per port, and adding to it at every bucket change was
/// a cache miss per packet-hop on large fabrics, while a port moves among a few buckets at a
/// time. The time is integer picoseconds, so the histogram does not depend on when a way is
/// flushed.
struct HistogramCache {
  static constexpr int kWays = 4;
  std::array<int16_t, kWays> bucket{-1, -1, -1, -1};  ///< -1 = an empty way
  uint8_t victim = 0;                                 ///< the way to flush next (round robin)
  std::array<int64_t, kWays> ps{};
  /// Adds `ps_add` to bucket `b`, flushing a way into `h` when none holds `b`.
  void add(int b, int64_t ps_add, OccupancyHistogram& h) {
    for (int w = 0; w < kWays; ++w) {
      if (bucket[w] == b) {
        ps[w] += ps_add;
        return;
      }
    }
    const int w = victim;
    victim = static_cast<uint8_t>((victim + 1) % kWays);
    if (bucket[w] >= 0) h.ps[bucket[w]] += ps[w];
    bucket[w] = static_cast<int16_t>(b);
    ps[w] = ps_add;
  }
  /// Adds every way's time to `h` and empties the cache.
  void flush(OccupancyHistogram& h) {
    for (int w = 0; w < kWays; ++w) {
      if (bucket[w] >= 0) h.ps[bucket[w]] += ps[w];
      bucket[w] = -1;
      ps[w] = 0;
    }
  }
};

/// Per-port counters, cumulative over the run, kept by the port's own node. A frame counts as
/// sent once it is fully serialized (as its queue counts it). tx and queue figures at this
/// egress; what arrived over this direction is counted by the peer (ArrivalCounters).
/// What arrived over one direction of a link, counted by the receiving port's node (each node
/// writes only its own state, as a partitioned run needs; sim/parallel/README.md). Under
/// cut-through a frame counts as received when its head arrives, so mid-run rx can run one
/// frame ahead of the sender's tx.
struct ArrivalCounters {
  int64_t rx_packets = 0, rx_bytes = 0;  ///< intact frames, wire bytes
  int64_t corrupt_drops = 0;             ///< frames with a bit error on this link
};

struct PortCounters {
  int64_t tx_packets = 0;
  int64_t tx_bytes = 0;  ///< wire bytes serialized
  int64_t drops = 0;     ///< packets refused by admission (tail drop)
  int64_t drop_bytes = 0;
  int64_t max_queue_bytes = 0;  ///< peak occupancy, including the packet being serialized
  int64_t pfc_tx = 0;           ///< PFC frames sent by this port (to its peer)
  int64_t pfc_rx = 0;           ///< PFC frames received on this port (pausing its egress)
  /// Lossless frames refused at this (ingress) port because its headroom overflowed.
  int64_t headroom_drops = 0;
  /// Frames lost because this link was down (topology.link_events): flushed from this egress,
  /// sent to it while down, or (counted at the receiving end) on the wire when it went down.
  int64_t link_down_drops = 0;
};

struct Port {
  uint32_t node = 0;        ///< owning node (vertex id)
  uint32_t peer_node = 0;   ///< node at the other end
  uint16_t index = 0;       ///< port number at `node`
  uint16_t peer_index = 0;  ///< port number at `peer_node`
  uint32_t peer_port = 0;   ///< global id of the reverse direction
  int64_t rate_bps = 0;
  int64_t delay_ps = 0;           ///< propagation
  int64_t peer_ingress_ps = 0;    ///< forwarding latency of the peer (0 for a NIC)
  bool from_above = false;        ///< the peer is on a higher tier (arrivals here descend)
  bool peer_cut_through = false;  ///< the peer is a cut-through switch
  double bit_error_rate = 0.0;
  int8_t dim = -1;          ///< torus: the dimension the link runs along
  bool wrap = false;        ///< torus: a wraparound link (crosses the dateline)
  bool down = false;        ///< the link is down (topology.link_events): it carries nothing
  uint32_t drop_every = 0;  ///< test hook: drop every n-th frame sent (0 = off)
  uint32_t drop_countdown = 0;
  // The frame being serialized, by copy: under cut-through the next switch may already have
  // queued, delivered or dropped (and recycled) the Packet itself before this port finishes.
  bool transmitting = false;
  uint8_t in_tx_tc = 0;
  int32_t in_tx_wire_bytes = 0;
  int64_t in_tx_enqueue_ps = 0;  ///< when the frame joined this port's queue
  uint32_t in_tx_ingress = 0;    ///< global id of the port it came in on (UINT32_MAX: none)
  uint8_t in_tx_in_tc = 0;       ///< the priority it came in with
  bool in_tx_control = false;    ///< a PFC frame (no queue, no buffer)
  uint8_t nonempty = 0;          ///< bit tc set: queue tc has packets waiting
  SchedulerState sched;          ///< the egress scheduler's (schedulers/scheduler.hpp)
  std::array<Packet*, kTrafficClasses> head{};  ///< egress FIFOs, one per traffic class
  std::array<Packet*, kTrafficClasses> tail{};
  int64_t occupancy_bytes = 0;  ///< queued + in-transmission wire bytes, all classes
  int16_t hist_bucket = 0;      ///< the occupancy histogram's current bucket
  int64_t hist_since_ps = 0;    ///< since when the occupancy has been in hist_bucket
  HistogramCache hist_cache;    ///< time of recent buckets not yet in the port's histogram
  int32_t ser_memo_bytes = -1;  ///< serialization_ps(ser_memo_bytes, rate_bps) = ser_memo_ps
  int64_t ser_memo_ps = 0;
  PortCounters counters;
};

}  // namespace fabricsim
