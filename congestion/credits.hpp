// InfiniBand link-level flow control (IBTA InfiniBand Architecture Specification vol. 1,
// §7.9 "Flow control"): a receiver advertises the free space of its input buffer per virtual
// lane in credits of 64 bytes; a sender transmits a packet on a VL only while it holds credits
// for the whole packet, so a lossless VL never drops for lack of buffer. Credits return as the
// receiver frees the space (here: when the packet leaves the switch, after the link's delay).
#pragma once

#include <cstdint>

namespace fabricsim {

inline constexpr int64_t kCreditBytes = 64;

/// Credits a packet of `wire_bytes` needs (rounded up to whole 64-byte blocks).
inline int64_t credit_blocks(int64_t wire_bytes) {
  return (wire_bytes + kCreditBytes - 1) / kCreditBytes;
}

}  // namespace fabricsim
