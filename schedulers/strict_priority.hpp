// Strict priority between the traffic classes (IEEE 802.1Q-2018 §8.6.8.1, "strict priority"
// transmission selection): the highest-numbered class that may send goes first.
#pragma once

#include <bit>
#include <cstdint>

namespace fabricsim {

/// The highest set bit of `eligible` (never 0): class 7 first, 0 last.
inline int strict_priority_pick(uint8_t eligible) {
  return 31 - std::countl_zero(static_cast<uint32_t>(eligible));
}

}  // namespace fabricsim
