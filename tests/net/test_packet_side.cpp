// Per-protocol packet metadata in side arrays beside the pool (PacketPool::add_side): a model
// adds fields of its own without growing the 64-byte Packet every frame carries. Expected
// layouts are worked by hand from the fields' sizes and alignments (comments).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "sim/net/packet.hpp"

using namespace fabricsim;

namespace {

/// One hop's in-band telemetry as HPCC (Li et al., SIGCOMM'19, §3.2) records it: a timestamp,
/// the egress queue length and the bytes the port has sent.
struct IntHop {
  int64_t ts_ps;
  int64_t queue_bytes;
  int64_t tx_bytes;
};
struct IntRecords {
  IntHop hop[5];  ///< up to 5 hops: host, leaf, spine, leaf, host
  uint8_t hops;
};

}  // namespace

TEST_CASE("a pool without side fields keeps one 64-byte Packet per frame and no side bytes") {
  PacketPool pool;
  CHECK(sizeof(Packet) == 64);
  CHECK(pool.side_bytes() == 0);
  Packet* p = pool.get();
  CHECK(pool.capacity() == PacketPool::kChunk);
  // A fresh packet is value-initialized, as it was before side arrays existed.
  CHECK(p->psn == 0);
  CHECK(p->tail_ps == 0);
  pool.put(p);
}

TEST_CASE("side fields are laid out by size and alignment and rounded to 16 bytes") {
  PacketPool pool;
  const PacketSide<int64_t> sent = pool.add_side<int64_t>();
  const PacketSide<IntRecords> rec = pool.add_side<IntRecords>();
  // int64 at offset 0; IntRecords (5 x 24 + 1 = 121 B, aligned to 8 -> sizeof 128) at 8;
  // 8 + 128 = 136, rounded up to a multiple of 16: 144.
  CHECK(sent.offset == 0);
  CHECK(rec.offset == 8);
  CHECK(sizeof(IntRecords) == 128);
  CHECK(pool.side_bytes() == 144);
}

TEST_CASE("each packet's side fields are its own over several chunks and survive recycling") {
  PacketPool pool;
  const PacketSide<int64_t> sent = pool.add_side<int64_t>();
  const PacketSide<IntRecords> rec = pool.add_side<IntRecords>();
  const size_t n = 2 * PacketPool::kChunk + 100;  // three chunks
  std::vector<Packet*> ps;
  for (size_t i = 0; i < n; ++i) {
    Packet* p = pool.get();
    CHECK(pool.side(p, sent) == 0);  // never used: zero
    p->psn = static_cast<uint32_t>(i);
    p->enqueue_ps = static_cast<int64_t>(i) * 3;
    pool.side(p, sent) = static_cast<int64_t>(i) * 1000 + 7;
    IntRecords& r = pool.side(p, rec);
    r.hops = static_cast<uint8_t>(i % 5 + 1);
    for (int h = 0; h < r.hops; ++h) r.hop[h] = IntHop{int64_t(i), int64_t(h), -int64_t(i)};
    ps.push_back(p);
  }
  CHECK(pool.capacity() == 3 * PacketPool::kChunk);
  for (size_t i = 0; i < n; ++i) {
    const Packet* p = ps[i];
    INFO(i);
    REQUIRE(p->psn == i);  // the header untouched by the side writes
    REQUIRE(p->enqueue_ps == static_cast<int64_t>(i) * 3);
    REQUIRE(pool.side(p, sent) == static_cast<int64_t>(i) * 1000 + 7);
    const IntRecords& r = pool.side(p, rec);
    REQUIRE(r.hops == i % 5 + 1);
    REQUIRE(r.hop[r.hops - 1].ts_ps == static_cast<int64_t>(i));
    REQUIRE(r.hop[r.hops - 1].tx_bytes == -static_cast<int64_t>(i));
  }
  // The side record is what a cross-rank arrival copies after the Packet: distinct per packet.
  CHECK(pool.side_record(ps[0]) + pool.side_bytes() <= pool.side_record(ps[1]));
  // A recycled packet keeps its last user's record until its new owner writes it.
  Packet* last = ps.back();
  pool.put(last);
  CHECK(pool.get() == last);
  CHECK(pool.side(last, sent) == static_cast<int64_t>(n - 1) * 1000 + 7);
}

TEST_CASE("a side field registered after the first packet is refused") {
  PacketPool pool;
  pool.put(pool.get());
  CHECK_THROWS_AS(pool.add_side<int64_t>(), std::logic_error);
}

TEST_CASE("side records above the pool's bound are refused") {
  struct Huge {
    std::byte b[PacketPool::kMaxSideBytes];
  };
  PacketPool pool;
  pool.add_side<int32_t>();
  CHECK_THROWS_AS(pool.add_side<Huge>(), std::logic_error);
}
