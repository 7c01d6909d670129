#include "congestion/admission.hpp"

#include <stdexcept>

namespace fabricsim {

StaticTailDrop::StaticTailDrop(int64_t buffer_per_port_bytes)
    : buffer_per_port_bytes_(buffer_per_port_bytes) {
  if (buffer_per_port_bytes <= 0) {
    throw std::invalid_argument("StaticTailDrop: buffer_per_port_bytes must be > 0");
  }
}

}  // namespace fabricsim
