// InfiniBand link-level flow control (IBTA InfiniBand Architecture Specification vol. 1,
// §7.9 "Flow control"): a receiver advertises the free space of its input buffer per virtual
// lane in credits of 64 bytes; a sender transmits a packet on a VL only while it holds credits
// for the whole packet, so a lossless VL never drops for lack of buffer. Credits return as the
// receiver frees the space (here: when the packet leaves the switch, after the link's delay).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim {

inline constexpr int64_t kCreditBytes = 64;

/// Credits a packet of `wire_bytes` needs (rounded up to whole 64-byte blocks).
inline int64_t credit_blocks(int64_t wire_bytes) {
  return (wire_bytes + kCreditBytes - 1) / kCreditBytes;
}

/// The senders' side of credit-based flow control: per sending port and VL (0..7), the credits
/// it holds for its peer's input buffer. Empty (on() false) unless the fabric is InfiniBand.
/// The network asks may_send() before it picks a frame, consume()s when the frame starts and
/// restore()s when the peer's credits come back.
class CreditFlowControl {
 public:
  static constexpr int kVls = 8;
  /// Turns it on for `ports` sending ports, every VL with no credits yet.
  void init(size_t ports) { credits_.assign(ports * kVls, 0); }
  bool on() const { return !credits_.empty(); }
  /// Sets the credits of (port, vl): its peer's VL buffer in blocks, at the start.
  void grant(uint32_t port, int vl, int64_t blocks) { at(port, vl) = blocks; }
  /// Credits (64-byte blocks) that (port, vl) holds; 0 when off.
  int64_t credits(uint32_t port, int vl) const { return on() ? at(port, vl) : 0; }
  /// Whether (port, vl) holds credits for a frame of `wire_bytes`.
  bool may_send(uint32_t port, int vl, int64_t wire_bytes) const {
    return credit_blocks(wire_bytes) <= at(port, vl);
  }
  /// Takes the credits of a frame of `wire_bytes` leaving (port, vl); false if it had too few
  /// (the sender broke the protocol).
  bool consume(uint32_t port, int vl, int64_t wire_bytes) {
    return (at(port, vl) -= credit_blocks(wire_bytes)) >= 0;
  }
  /// `blocks` credits came back to (port, vl).
  void restore(uint32_t port, int vl, int64_t blocks) { at(port, vl) += blocks; }
  /// The credits of ports [first, first + n), every VL, for the partitioned run's state
  /// exchange (on() only).
  int64_t* ports_data(uint32_t first) { return credits_.data() + size_t{first} * kVls; }
  const int64_t* ports_data(uint32_t first) const { return credits_.data() + size_t{first} * kVls; }

 private:
  int64_t& at(uint32_t port, int vl) { return credits_[size_t{port} * kVls + vl]; }
  int64_t at(uint32_t port, int vl) const { return credits_[size_t{port} * kVls + vl]; }
  std::vector<int64_t> credits_;  ///< port x VL
};

}  // namespace fabricsim
