// Packets in flight and their pool (the network's hot-path record).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace fabricsim {

inline constexpr int kTrafficClasses = 8;

/// kPfc: a PFC frame (link-local; psn packs the priority enable vector in bits 0-7, the
/// priorities paused (XOFF) in bits 8-15 and their quanta in bits 16-31). kCnp: a DCQCN
/// congestion notification from the receiver of a QP to its sender.
enum class PacketKind : uint8_t { kData, kAck, kNak, kPfc, kCnp };

/// One packet in flight. Small and trivially copyable; owned by the PacketPool.
struct Packet {
  Packet* next;           ///< intrusive link: egress FIFO or pool free list
  int64_t enqueue_ps;     ///< when it joined its current egress queue
  int64_t tail_ps;        ///< cut-through: when its last bit reaches the switch
  uint32_t qp;            ///< queue pair
  uint32_t psn;           ///< data: its sequence number; ACK/NAK: the PSN the receiver expects
  uint32_t flow_hash;     ///< ECMP hash (the same for every packet of a QP and direction)
  int32_t dst_host;       ///< destination host id
  int32_t payload_bytes;  ///< message bytes carried
  int32_t wire_bytes;     ///< bytes serialized on each link (payload + overhead)
  uint32_t node;          ///< node the packet is travelling to
  uint16_t in_port;       ///< port of `node` it arrives on
  uint8_t tc;             ///< traffic class 0..7
  /// The QP's own class (data and its ACK/NAK/CNP): switches start each torus dimension on it
  /// (dateline) without reading the QP, which lives on the hosts.
  uint8_t qp_tc;
  /// At a switch: the priority it arrived with (its ingress accounting and credits; a
  /// dateline may give it another class for the egress).
  uint8_t in_tc;
  PacketKind kind;
  uint8_t flags;  ///< kCorrupt | kHeadFirst | kInUse | kStored | kStomped | kEcnCe | kLast | ...
  static constexpr uint8_t kCorrupt = 1;    ///< hit by a bit error
  static constexpr uint8_t kHeadFirst = 2;  ///< arrival event is the first bit (cut-through)
  static constexpr uint8_t kInUse = 4;      ///< taken from the pool
  static constexpr uint8_t kStored = 8;     ///< cut-through fell back to store-and-forward
  /// Forwarded corrupt by a cut-through switch, which counted the error on the link it came
  /// in on; dropped later without counting it again.
  static constexpr uint8_t kStomped = 16;
  static constexpr uint8_t kEcnCe = 32;  ///< ECN congestion experienced (marked by a switch)
  /// Data: the last packet of its message (the receiver checks its own copy of the message
  /// against it).
  static constexpr uint8_t kLast = 64;
  /// Data: this PSN was sent before (go-back-N resend: snd_nxt < snd_max when it left).
  static constexpr uint8_t kRetransmit = 128;
};
// A cross-rank arrival carries the packet by value (sim/parallel/README.md item 1): keep it one
// cache line.
static_assert(sizeof(Packet) == 64, "Packet must stay 64 bytes");

/// A per-packet field of type T kept beside the pool, not in Packet (PacketPool::add_side).
template <class T>
struct PacketSide {
  uint32_t offset = 0;  ///< bytes into each packet's side record
};

/// Free-list pool of packets, grown in chunks; get() and put() never touch the heap once warm.
///
/// Side arrays: Packet is the fixed header every frame carries. A component that needs fields of
/// its own per packet (a send timestamp for a delay-based control, per-hop INT records for
/// HPCC) registers them with add_side() before the first get(), and reads and writes them with
/// side(); packets of models that do not register any pay nothing. Each chunk of kChunk packets
/// is allocated aligned to its own size, followed by the chunk's side records (side_bytes()
/// each), so a packet's record is found from its address alone. A cross-rank arrival carries
/// the record after the Packet (Network::take_departed / inject_arrival).
class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;
  ~PacketPool();

  /// Reserves a T (trivially copyable, alignment at most 16) in every packet's side record.
  /// Throws std::logic_error once a packet was taken (the chunks' layout is fixed by then) or
  /// when the record would exceed kMaxSideBytes.
  template <class T>
  PacketSide<T> add_side() {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 16,
                  "a packet's side field is a trivially copyable value aligned to at most 16");
    return PacketSide<T>{reserve_side(sizeof(T), alignof(T))};
  }
  /// Packet `p`'s field `f` (p taken from this pool): zero in a packet never used before, and
  /// what its last user left in a recycled one, so the registering component sets it where it
  /// creates or first sees a packet.
  template <class T>
  T& side(const Packet* p, PacketSide<T> f) {
    return *std::launder(reinterpret_cast<T*>(side_record(p) + f.offset));
  }
  template <class T>
  const T& side(const Packet* p, PacketSide<T> f) const {
    return *std::launder(reinterpret_cast<const T*>(side_record(p) + f.offset));
  }
  /// Bytes of each packet's side record (0 when no component registered a field).
  size_t side_bytes() const { return side_stride_; }
  /// Packet `p`'s whole side record, side_bytes() long (what a cross-rank arrival carries).
  std::byte* side_record(const Packet* p) const {
    const auto addr = reinterpret_cast<uintptr_t>(p);
    const uintptr_t base = addr & ~(kChunkBytes - 1);
    return reinterpret_cast<std::byte*>(base + kChunkBytes +
                                        (addr - base) / sizeof(Packet) * side_stride_);
  }

  Packet* get();
  void put(Packet* p) {
    p->flags = 0;
    p->next = free_;
    free_ = p;
    --in_use_;
  }
  size_t in_use() const { return in_use_; }
  size_t capacity() const { return chunks_.size() * kChunk; }
  /// Calls f(const Packet&) for every packet taken and not yet returned.
  template <class F>
  void for_each_in_use(F&& f) const {
    for (Packet* chunk : chunks_) {
      for (size_t i = 0; i < kChunk; ++i) {
        if (chunk[i].flags & Packet::kInUse) f(chunk[i]);
      }
    }
  }

  static constexpr size_t kChunk = 4096;
  static constexpr size_t kChunkBytes = kChunk * sizeof(Packet);  ///< a power of two
  static constexpr size_t kMaxSideBytes = 4096;

 private:
  uint32_t reserve_side(size_t bytes, size_t align);
  std::vector<Packet*> chunks_;  ///< each kChunkBytes + kChunk * side_stride_, aligned
  Packet* free_ = nullptr;
  size_t in_use_ = 0;
  size_t side_used_ = 0;    ///< bytes the fields take, packed by their alignment
  size_t side_stride_ = 0;  ///< side record bytes: side_used_ rounded up to 16
};
static_assert((PacketPool::kChunkBytes & (PacketPool::kChunkBytes - 1)) == 0);

}  // namespace fabricsim
