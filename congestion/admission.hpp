// Buffer admission policies: decide whether a switch may queue one more packet on an egress port.
//
// Kept apart from forwarding (HPCC ns-3's SwitchMmu, STYLE.md item 10) so that shared buffers
// with dynamic thresholds, PFC and ECN can replace this without touching sim/net.
#pragma once

#include <cstdint>

namespace fabricsim {

/// Static per-port buffers with tail drop: a packet is admitted while the port's occupancy
/// (queued bytes, including the packet being serialized) plus the packet fits in
/// `buffer_per_port_bytes`; otherwise it is dropped.
class StaticTailDrop {
 public:
  /// Throws std::invalid_argument if buffer_per_port_bytes <= 0.
  explicit StaticTailDrop(int64_t buffer_per_port_bytes);
  bool admit(int64_t occupancy_bytes, int64_t packet_bytes) const {
    return occupancy_bytes + packet_bytes <= buffer_per_port_bytes_;
  }
  int64_t buffer_per_port_bytes() const { return buffer_per_port_bytes_; }

 private:
  int64_t buffer_per_port_bytes_;
};

}  // namespace fabricsim
