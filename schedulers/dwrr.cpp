#include "schedulers/dwrr.hpp"

#include <stdexcept>

namespace fabricsim {

std::array<int64_t, kSchedulerClasses> dwrr_quanta(
    const std::array<int, kSchedulerClasses>& weights, int64_t mtu_frame_bytes) {
  std::array<int64_t, kSchedulerClasses> quantum{};
  for (int tc = 0; tc < kSchedulerClasses; ++tc) {
    if (weights[tc] < 1 || weights[tc] > 255) {
      throw std::invalid_argument("Network: DWRR weights must be 1..255");
    }
    quantum[tc] = weights[tc] * mtu_frame_bytes;
  }
  return quantum;
}

}  // namespace fabricsim
