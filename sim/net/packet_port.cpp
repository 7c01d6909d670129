// The packet pool's growth and the occupancy statistics of queues and ports.
#include "sim/net/packet.hpp"
#include "sim/net/port.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace fabricsim {

PacketPool::~PacketPool() {
  for (Packet* chunk : chunks_) ::operator delete (chunk, std::align_val_t{kChunkBytes});
}

uint32_t PacketPool::reserve_side(size_t bytes, size_t align) {
  if (!chunks_.empty()) {
    throw std::logic_error("PacketPool: a side field registered after the first packet");
  }
  const size_t offset = (side_used_ + align - 1) / align * align;
  const size_t stride = (offset + bytes + 15) / 16 * 16;
  if (stride > kMaxSideBytes) {
    throw std::logic_error("PacketPool: side records above " + std::to_string(kMaxSideBytes) +
                           " bytes per packet");
  }
  side_used_ = offset + bytes;
  side_stride_ = stride;
  return static_cast<uint32_t>(offset);
}

Packet* PacketPool::get() {
  if (free_ == nullptr) {
    const size_t bytes = kChunkBytes + kChunk * side_stride_;
    chunks_.push_back(nullptr);
    void* raw = ::operator new (bytes, std::align_val_t{kChunkBytes});
    std::memset(raw, 0, bytes);  // packets start value-initialized, side records zero
    Packet* chunk = static_cast<Packet*>(raw);
    chunks_.back() = chunk;
    for (size_t i = kChunk; i-- > 0;) {
      chunk[i].flags = 0;
      chunk[i].next = free_;
      free_ = &chunk[i];
    }
  }
  Packet* p = free_;
  free_ = p->next;
  p->next = nullptr;
  p->flags = Packet::kInUse;
  ++in_use_;
  return p;
}

double Occupancy::average(int64_t now_ps) const {
  if (now_ps <= 0) return 0.0;
  const __int128 total = area + static_cast<__int128>(bytes) * (now_ps - since_ps);
  return static_cast<double>(total) / static_cast<double>(now_ps);
}

int64_t OccupancyHistogram::upper_bytes(int b) {
  if (b <= 0) return 0;
  const int o = (b - 1) / kPerOctave, sub = (b - 1) % kPerOctave;
  // Bucket covers [2^o (1 + sub/N), 2^o (1 + (sub+1)/N)), N = kPerOctave; its last integer is
  // the upper edge (at least 2^o: below 2^kSubBits bytes several buckets share an integer).
  const int64_t hi_times_n = (int64_t{1} << o) * (kPerOctave + sub + 1);
  return std::max<int64_t>(hi_times_n / kPerOctave - (hi_times_n % kPerOctave == 0 ? 1 : 0),
                           int64_t{1} << o);
}

int64_t OccupancyHistogram::percentile(double q) const {
  int64_t total = 0;
  for (int64_t t : ps) total += t;
  if (total == 0) return 0;
  const double want = q * static_cast<double>(total);
  int64_t run = 0;
  for (int b = 0; b < kBuckets; ++b) {
    run += ps[b];
    if (static_cast<double>(run) >= want) return upper_bytes(b);
  }
  return upper_bytes(kBuckets - 1);
}

}  // namespace fabricsim
