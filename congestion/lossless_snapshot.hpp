// The blocked state of a lossless fabric at one check, as plain records.
//
// The periodic lossless check (PFC watchdog, deadlock detector; lossless_monitor.hpp) runs at
// a simulator barrier. Each part of the fabric (all of it in a sequential run, the nodes a rank
// owns in a partitioned one) describes its ports in a LosslessSnapshot
// (Network::local_snapshot); the parts are merged (merge(), or sent as bytes with encode() and
// decode() and merged on arrival), and the deadlock detector reads only the merged snapshot,
// never the ports. Every record is trivially copyable without padding, so encode() is a copy of
// the vectors and the same state always gives the same bytes; merge() keeps every vector sorted
// and free of duplicates, so the merged snapshot does not depend on how the fabric was split.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fabricsim {

struct LosslessSnapshot {
  /// An egress queue (queue id = global port id x 8 + class) of a switch towards a switch that
  /// has frames but may not send them (paused, or out of credits for its head), with the frames
  /// it has sent so far (the detector proves a deadlock by their not moving).
  struct Blocked {
    uint64_t queue;
    int64_t tx_packets;
    auto operator<=>(const Blocked&) const = default;
  };
  /// A switch ingress (global port id) in XOFF towards its peer: bit tc of `mask`.
  struct Xoff {
    uint32_t port;
    uint32_t mask;
    auto operator<=>(const Xoff&) const = default;
  };
  /// A switch port serializing a data frame that came in on the global port `ingress` (of the
  /// same switch) with priority `in_tc`.
  struct InTx {
    uint32_t port;
    uint32_t ingress;
    uint32_t in_tc;
    auto operator<=>(const InTx&) const = default;
  };
  /// Egress queue `queue` of a switch holds frames that came in on the switch's port number
  /// `in_port` (its index at the switch) with priority `in_tc`.
  struct Holds {
    uint64_t queue;
    uint32_t in_port;
    uint32_t in_tc;
    auto operator<=>(const Holds&) const = default;
  };
  /// Blocked queue `queue` holds frames of queue pair `qp` (the report's flow list).
  struct Queued {
    uint64_t queue;
    uint32_t qp;
    uint32_t reserved = 0;  ///< explicit padding (zero), so the bytes are determined
    auto operator<=>(const Queued&) const = default;
  };

  /// Some port is paused, stormed, or idle with frames of which none may be sent.
  uint32_t blocked = 0;
  /// The PFC watchdog declared a queue stormed at this check.
  uint32_t stormed = 0;
  // Sorted, without duplicates. Filled only while the detector still looks for a deadlock.
  std::vector<Blocked> blocked_queues;
  std::vector<Xoff> xoff;
  std::vector<InTx> in_tx;
  std::vector<Holds> holds;
  std::vector<Queued> queued;

  /// Adds `other`'s facts (the flags or-ed, the records united): the snapshot of the union of
  /// the two parts of the fabric.
  void merge(const LosslessSnapshot& other);
  /// The snapshot as bytes (counts, then the records as they lie in memory), for MPI.
  std::vector<std::byte> encode() const;
  /// The snapshot encode() wrote. Throws std::invalid_argument if `bytes` is not one.
  static LosslessSnapshot decode(std::span<const std::byte> bytes);

  bool operator==(const LosslessSnapshot&) const = default;
};

}  // namespace fabricsim
