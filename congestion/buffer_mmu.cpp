#include "congestion/buffer_mmu.hpp"

#include <stdexcept>
#include <string>

namespace fabricsim {

BufferMmu BufferMmu::static_per_port(int64_t buffer_per_port_bytes) {
  if (buffer_per_port_bytes <= 0) {
    throw std::invalid_argument("BufferMmu: buffer_per_port_bytes must be > 0");
  }
  BufferMmu m;
  m.model_ = BufferModel::kStatic;
  m.limit_bytes_ = buffer_per_port_bytes;
  return m;
}

BufferMmu BufferMmu::shared(int64_t shared_buffer_bytes, int64_t reserved_per_queue_bytes,
                            double alpha, int64_t queues) {
  if (shared_buffer_bytes <= 0) throw std::invalid_argument("BufferMmu: shared buffer must be > 0");
  if (reserved_per_queue_bytes < 0 || queues < 0) {
    throw std::invalid_argument("BufferMmu: reservations must be >= 0");
  }
  if (!(alpha >= 1.0 / 128 && alpha <= 64)) {
    throw std::invalid_argument("BufferMmu: alpha must be in [1/128, 64]");
  }
  const int64_t reserved_total = reserved_per_queue_bytes * queues;
  if (reserved_total >= shared_buffer_bytes) {
    throw std::invalid_argument("BufferMmu: " + std::to_string(queues) + " queues x " +
                                std::to_string(reserved_per_queue_bytes) +
                                " B reserved leave no shared pool in " +
                                std::to_string(shared_buffer_bytes) + " B");
  }
  BufferMmu m;
  m.model_ = BufferModel::kShared;
  m.pool_bytes_ = shared_buffer_bytes - reserved_total;
  m.buffer_bytes_ = shared_buffer_bytes;
  m.reserved_bytes_ = reserved_per_queue_bytes;
  m.alpha_ = alpha;
  return m;
}

}  // namespace fabricsim
