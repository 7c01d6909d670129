// The hashes behind ECMP choices: shared by forwarding (network.cpp) and the transport, which
// gives each QP and direction its flow hash (nic_transport.cpp).
#pragma once

#include <cstdint>

namespace fabricsim::net_hash {

/// 64-bit finalizer (MurmurHash3 fmix64): spreads every input bit over the output.
constexpr uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xFF51AFD7ED558CCDULL;
  k ^= k >> 33;
  k *= 0xC4CEB9FE1A85EC53ULL;
  k ^= k >> 33;
  return k;
}

/// Salt that separates the ACK direction's ECMP hash from the data direction's.
inline constexpr uint32_t kReverseSalt = 0x5BD1E995u;

}  // namespace fabricsim::net_hash
