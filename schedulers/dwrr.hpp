// Deficit weighted round robin between the traffic classes (Shreedhar & Varghese, "Efficient
// fair queuing using deficit round robin", SIGCOMM 1995), with a quantum per class of its weight
// times one MTU frame: while classes stay backlogged, each gets a share of the port in proportion
// to its weight, whatever its frame sizes.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "schedulers/scheduler.hpp"

namespace fabricsim {

/// Quanta per class, bytes: weight[tc] x `mtu_frame_bytes` (one MTU-sized frame on the wire).
/// Throws std::invalid_argument "Network: DWRR weights must be 1..255" when a weight is outside
/// 1..255 (the range of `switch.dwrr_weights`).
std::array<int64_t, kSchedulerClasses> dwrr_quanta(
    const std::array<int, kSchedulerClasses>& weights, int64_t mtu_frame_bytes);

/// The class DWRR sends next among `eligible` (never 0), advancing `state`. `heads` gives the
/// queues' heads: `heads.empty(tc)` and `heads.wire_bytes(tc)` (bytes of its head frame). A class
/// that may not send keeps its deficit if it is paused (non-empty) and loses it if it is empty.
template <class Heads>
inline int dwrr_pick(uint8_t eligible, SchedulerState& state, const Heads& heads,
                     const std::array<int64_t, kSchedulerClasses>& quantum) {
  for (;;) {
    const int tc = state.cursor;
    if (!(eligible >> tc & 1)) {
      if (heads.empty(tc)) state.deficit[tc] = 0;
      state.fresh = true;
      // Next eligible class after tc, cyclically.
      const uint32_t mask = eligible;
      const uint32_t rotated = ((mask >> (tc + 1)) | (mask << (kSchedulerClasses - tc - 1))) & 0xFF;
      state.cursor = static_cast<uint8_t>((tc + 1 + std::countr_zero(rotated)) % kSchedulerClasses);
      continue;
    }
    if (state.fresh) {
      state.deficit[tc] += quantum[tc];
      state.fresh = false;
    }
    if (heads.wire_bytes(tc) <= state.deficit[tc]) {
      state.deficit[tc] -= heads.wire_bytes(tc);
      return tc;
    }
    state.fresh = true;
    state.cursor = static_cast<uint8_t>((tc + 1) % kSchedulerClasses);
  }
}

}  // namespace fabricsim
