// Switch buffer admission (the MMU): may one more packet join an egress queue?
//
// Kept apart from forwarding (HPCC ns-3's SwitchMmu, STYLE.md item 10): sim/net asks admit()
// before it queues a packet on a switch egress queue and reports every enqueue and dequeue.
// Lossless classes (PFC, congestion/pfc.hpp; InfiniBand credits) skip admit() and are bounded
// at the ingress instead, but still report enqueues and dequeues, so their bytes use the shared
// pool (and move the dynamic thresholds) like any other.
//
// Two models (scenario `switch.buffer_model`):
//  - static: each egress port owns `buffer_per_port_bytes`; a packet is admitted while the
//    port's occupancy (queued + being serialized, all traffic classes) plus the packet fits.
//  - shared: one pool per switch. Each egress queue (port x traffic class) is guaranteed
//    `reserved_per_queue_bytes`; beyond it a queue draws on the shared pool (the buffer minus all
//    reservations) under the dynamic threshold of Choudhury & Hahne ("Dynamic queue length
//    thresholds for shared-memory packet switches", IEEE/ACM ToN 6(2), 1998):
//        admit  iff  q_shared + b <= alpha x (pool - used)  and  used + b <= pool
//    where q_shared is the queue's use of the pool, b the part of the packet beyond the queue's
//    reservation and `used` the pool's total use. With one congested queue this settles at
//    q_shared = alpha x pool / (1 + alpha); with n equally congested queues at
//    alpha x pool / (1 + n alpha) each, leaving pool / (1 + n alpha) free for newcomers.
// All sizes are wire bytes (what the port serializes), as switch MMUs count cells of frames.
#pragma once

#include <cstdint>

namespace fabricsim {

enum class BufferModel : uint8_t { kStatic, kShared };

/// The buffer of one switch.
class BufferMmu {
 public:
  /// Static per-port buffers. Throws std::invalid_argument if buffer_per_port_bytes <= 0.
  static BufferMmu static_per_port(int64_t buffer_per_port_bytes);
  /// A shared buffer of `shared_buffer_bytes` for a switch with `queues` egress queues
  /// (ports x 8 traffic classes). Throws std::invalid_argument if the size is <= 0, the
  /// reservations (queues x reserved_per_queue_bytes) leave no shared pool, reserved < 0, or
  /// alpha is not in [1/128, 64].
  static BufferMmu shared(int64_t shared_buffer_bytes, int64_t reserved_per_queue_bytes,
                          double alpha, int64_t queues);

  /// Whether a packet of `bytes` may join an egress queue now holding `queue_bytes` on a port
  /// now holding `port_bytes` (both including any packet being serialized).
  bool admit(int64_t port_bytes, int64_t queue_bytes, int64_t bytes) const {
    if (model_ == BufferModel::kStatic) return port_bytes + bytes <= limit_bytes_;
    const int64_t need = shared_part(queue_bytes + bytes) - shared_part(queue_bytes);
    if (need == 0) return true;  // fits in the queue's reservation
    return used_bytes_ + need <= pool_bytes_ &&
           static_cast<double>(shared_part(queue_bytes) + need) <=
               alpha_ * static_cast<double>(pool_bytes_ - used_bytes_);
  }
  /// Shared: whether the pool can take a packet of `bytes` joining a queue that holds
  /// `queue_bytes` (the part beyond the queue's reservation), whatever the queue's dynamic
  /// threshold: what a lossless frame needs before PFC sends it to the headroom. Static: true.
  bool pool_fits(int64_t queue_bytes, int64_t bytes) const {
    if (model_ == BufferModel::kStatic) return true;
    return used_bytes_ + shared_part(queue_bytes + bytes) - shared_part(queue_bytes) <= pool_bytes_;
  }
  /// A packet of `bytes` joined a queue that held `queue_bytes` before it.
  void on_enqueue(int64_t queue_bytes, int64_t bytes) {
    used_bytes_ += shared_part(queue_bytes + bytes) - shared_part(queue_bytes);
    total_bytes_ += bytes;
    if (total_bytes_ > peak_total_bytes_) peak_total_bytes_ = total_bytes_;
  }
  /// A packet of `bytes` left a queue that held `queue_bytes` before it left.
  void on_dequeue(int64_t queue_bytes, int64_t bytes) {
    used_bytes_ -= shared_part(queue_bytes) - shared_part(queue_bytes - bytes);
    total_bytes_ -= bytes;
  }
  /// Wire bytes the switch holds now, all queues and classes, and the most it ever held.
  int64_t total_bytes() const { return total_bytes_; }
  int64_t peak_total_bytes() const { return peak_total_bytes_; }
  /// Shared: the pool's free bytes (below 0 while PFC headroom holds frames beyond it).
  int64_t pool_free_bytes() const { return pool_bytes_ - used_bytes_; }
  /// Shared: the whole buffer, reservations and pool.
  int64_t buffer_bytes() const { return buffer_bytes_; }

  BufferModel model() const { return model_; }
  /// Static: the per-port buffer. Shared: the pool (buffer minus reservations).
  int64_t limit_bytes() const {
    return model_ == BufferModel::kStatic ? limit_bytes_ : pool_bytes_;
  }
  int64_t shared_used_bytes() const { return used_bytes_; }
  int64_t reserved_per_queue_bytes() const { return reserved_bytes_; }
  double alpha() const { return alpha_; }

 private:
  int64_t shared_part(int64_t queue_bytes) const {
    return queue_bytes > reserved_bytes_ ? queue_bytes - reserved_bytes_ : 0;
  }
  BufferModel model_ = BufferModel::kStatic;
  int64_t limit_bytes_ = 0;     ///< static: per port
  int64_t pool_bytes_ = 0;      ///< shared: buffer minus reservations
  int64_t reserved_bytes_ = 0;  ///< shared: per queue
  int64_t used_bytes_ = 0;      ///< shared: pool bytes in use
  int64_t buffer_bytes_ = 0;    ///< shared: the whole buffer
  int64_t total_bytes_ = 0;     ///< all bytes held
  int64_t peak_total_bytes_ = 0;
  double alpha_ = 1.0;
};

}  // namespace fabricsim
