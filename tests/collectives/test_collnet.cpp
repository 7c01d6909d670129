// CollNet AllReduce, Chain and Direct (collectives/collnet/collnet.hpp).
//
// Expected values come from the algorithms NCCL runs (src/device/all_reduce.h, COLLNET_CHAIN and
// COLLNET_DIRECT Simple; src/graph/connect.cc, ncclTopoPreset and connectCollNet), worked out
// here: every server's head gives the network its chunk once and gets the sum back once, so the
// NIC loopbacks carry each server's buffer once; Chain moves each channel's part up and down a
// chain of G GPUs (h, h + 1, …, h − 1 from the head h), Direct each slice from the G − 1 other
// GPUs to its head and back.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collectives/collnet/collnet.hpp"
#include "dag_support.hpp"

using namespace fabricsim;

namespace {

int64_t part_of(int64_t count, int parts, int i) {
  return count / parts + (i < count % parts ? 1 : 0);
}
int64_t chunks_of(int64_t elems, int64_t chunk_elems) {
  return elems == 0 ? 1 : (elems + chunk_elems - 1) / chunk_elems;
}

struct PerRank {
  std::vector<int64_t> loopback, sent, received;
};

PerRank per_rank(const TransferDag& dag, int ranks) {
  PerRank b{std::vector<int64_t>(static_cast<size_t>(ranks), 0), {}, {}};
  b.sent = b.received = b.loopback;
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    if (t.is_compute()) continue;
    if (t.loopback) {
      REQUIRE(t.is_nic_loopback());
      b.loopback[static_cast<size_t>(t.src_rank)] += t.bytes;
      continue;
    }
    b.sent[static_cast<size_t>(t.src_rank)] += t.bytes;
    b.received[static_cast<size_t>(t.dst_rank)] += t.bytes;
  }
  return b;
}

/// Longest dependency chain in transfers: compute tasks (the joins) count 0.
int transfer_critical_path(const TransferDag& dag) {
  std::vector<int> depth(dag.size(), 0);
  int longest = 0;
  for (uint32_t t = 0; t < dag.size(); ++t) {
    if (!dag.transfer(t).is_compute()) ++depth[t];
    longest = std::max(longest, depth[t]);
    for (uint32_t d : dag.dependents(t)) depth[d] = std::max(depth[d], depth[t]);
  }
  return longest;
}

int64_t sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

}  // namespace

TEST_CASE("collnet_chain: NIC loopbacks carry each server's buffer once split by head") {
  struct Case {
    int s, g, channels;
  };
  // channels = G, channels > G (heads 0 and 1 carry two channels), channels < G.
  for (const Case c : {Case{2, 4, 4}, Case{3, 4, 6}, Case{4, 8, 2}, Case{2, 2, 8}}) {
    CAPTURE(c.s, c.g, c.channels);
    const int elem = 4;
    const int64_t count = int64_t{c.channels} * 96;  // equal parts of 96 elements
    const int64_t d = count * elem;
    const TransferDag dag = collnet_chain_allreduce(c.s, c.g, count, elem, 128, c.channels, 8);
    const PerRank b = per_rank(dag, c.s * c.g);
    CHECK(sum(b.loopback) == c.s * d);
    for (int r = 0; r < c.s * c.g; ++r) {
      int heads = 0;  // channels whose head is local GPU r % G
      for (int ch = 0; ch < c.channels; ++ch) heads += ch % c.g == r % c.g ? 1 : 0;
      CHECK(b.loopback[static_cast<size_t>(r)] == d * heads / c.channels);
    }
  }
}

TEST_CASE("collnet_chain: NVLink bytes per GPU follow the chain's head and far end") {
  // Channel c: head h = c mod G, far end h - 1 mod G. Each GPU but the head sends the part up
  // once, each but the far end sends it down once; receivers are the same sets.
  const int s = 3, g = 4, elem = 2;
  for (int channels : {1, 4, 6}) {
    CAPTURE(channels);
    const int64_t count = int64_t{channels} * 50 + 3;  // uneven parts
    const TransferDag dag = collnet_chain_allreduce(s, g, count, elem, 40, channels, 8);
    const PerRank b = per_rank(dag, s * g);
    std::vector<int64_t> expect(static_cast<size_t>(g), 0);
    for (int c = 0; c < channels; ++c) {
      const int64_t part = part_of(count, channels, c) * elem;
      const int head = c % g, far = (head + g - 1) % g;
      for (int i = 0; i < g; ++i) {
        expect[static_cast<size_t>(i)] += (i != head ? part : 0) + (i != far ? part : 0);
      }
    }
    for (int r = 0; r < s * g; ++r) {
      CAPTURE(r);
      CHECK(b.sent[static_cast<size_t>(r)] == expect[static_cast<size_t>(r % g)]);
      CHECK(b.received[static_cast<size_t>(r)] == expect[static_cast<size_t>(r % g)]);
    }
    CHECK(sum(b.sent) == 2 * (g - 1) * s * count * elem);
  }
}

TEST_CASE("collnet_chain: with channels = G every GPU sends 2(G-1)/G of the buffer over NVLink") {
  const int s = 2, g = 8, elem = 4;
  const int64_t count = g * 1000;
  const TransferDag dag = collnet_chain_allreduce(s, g, count, elem, 1024, g, 8);
  const PerRank b = per_rank(dag, s * g);
  for (int r = 0; r < s * g; ++r)
    CHECK(b.sent[static_cast<size_t>(r)] == 2 * (g - 1) * 1000 * elem);
}

TEST_CASE("collnet_chain: the chain runs h+1 to h from the far end h-1 and back down") {
  // NCCL's chain for a channel starting at GPU h on an NVSwitch server: h, h+1, ..., h-1
  // (search.cc tries GPU index + 1 next; connect.cc: up = intra[i-1], down = intra[i+1]).
  // G = 4, channel 1 (head 1): up 0->3, 3->2, 2->1; loopback on 1; down 1->2, 2->3, 3->0.
  const int s = 2, g = 4, channels = 2;
  const TransferDag dag = collnet_chain_allreduce(s, g, 2 * 8, 4, 1 << 20, channels, 8);
  const uint32_t block = s * (2 * g - 1) + 1;
  REQUIRE(dag.size() == size_t{channels} * block);
  const uint32_t first = block;  // channel 1, its only chunk
  for (int v = 0; v < s; ++v) {
    CAPTURE(v);
    const uint32_t up = first + static_cast<uint32_t>(v * g);
    const int base = v * g;
    const int ups[3][2] = {{0, 3}, {3, 2}, {2, 1}};
    for (int j = 0; j < 3; ++j) {
      const Transfer& t = dag.transfer(up + static_cast<uint32_t>(j));
      CHECK(t.src_rank == base + ups[j][0]);
      CHECK(t.dst_rank == base + ups[j][1]);
      CHECK(t.flow == 1u);
    }
    const Transfer& loop = dag.transfer(up + 3);
    CHECK(loop.is_nic_loopback());
    CHECK(loop.src_rank == base + 1);
    CHECK(loop.bytes == 8 * 4);  // a part of 8 elements, one chunk
    const uint32_t down = first + static_cast<uint32_t>(s * g + 1 + v * (g - 1));
    const int downs[3][2] = {{1, 2}, {2, 3}, {3, 0}};
    for (int j = 0; j < 3; ++j) {
      const Transfer& t = dag.transfer(down + static_cast<uint32_t>(j));
      CHECK(t.src_rank == base + downs[j][0]);
      CHECK(t.dst_rank == base + downs[j][1]);
      CHECK(t.flow == static_cast<uint32_t>(channels + 1));  // up and down: two connections
    }
  }
  CHECK(dag.transfer(first + s * g).is_compute());  // the join
}

TEST_CASE("collnet_direct: loopbacks carry the slices and NVLink 2(G-1)/G of the buffer") {
  struct Case {
    int s, g;
    int64_t count;
  };
  for (const Case c : {Case{2, 8, 8 * 300}, Case{3, 4, 1001}, Case{5, 2, 77}, Case{2, 3, 2}}) {
    CAPTURE(c.s, c.g, c.count);
    const int elem = 4;
    const int64_t d = c.count * elem;
    const TransferDag dag = collnet_direct_allreduce(c.s, c.g, c.count, elem, 64, 4);
    const PerRank b = per_rank(dag, c.s * c.g);
    CHECK(sum(b.loopback) == c.s * d);
    CHECK(sum(b.sent) == 2 * (c.g - 1) * c.s * d);
    for (int r = 0; r < c.s * c.g; ++r) {
      CAPTURE(r);
      const int64_t slice = part_of(c.count, c.g, r % c.g) * elem;
      CHECK(b.loopback[static_cast<size_t>(r)] == slice);
      // To the other heads: the rest of the buffer; as a head: its slice to G - 1 peers.
      CHECK(b.sent[static_cast<size_t>(r)] == d - slice + (c.g - 1) * slice);
      CHECK(b.received[static_cast<size_t>(r)] == b.sent[static_cast<size_t>(r)]);
    }
    if (c.count % c.g == 0) {
      for (int r = 0; r < c.s * c.g; ++r) {
        CHECK(b.sent[static_cast<size_t>(r)] * c.g == 2 * (c.g - 1) * d);
      }
    }
  }
}

TEST_CASE("collnet_direct: a chunk goes from every other GPU to its head and back") {
  const int s = 2, g = 4, h = 2;
  const int64_t count = g * 10;  // 10 elements a slice, one chunk each
  const TransferDag dag = collnet_direct_allreduce(s, g, count, 4, 1 << 20, 8);
  const uint32_t block = s * (2 * g - 1) + 1;
  REQUIRE(dag.size() == size_t{g} * block);
  const uint32_t first = h * block;
  for (int v = 0; v < s; ++v) {
    const int others[3] = {0, 1, 3};
    for (int j = 0; j < 3; ++j) {
      const Transfer& in = dag.transfer(first + static_cast<uint32_t>(v * g + j));
      CHECK(in.src_rank == v * g + others[j]);
      CHECK(in.dst_rank == v * g + h);
      CHECK(in.flow == static_cast<uint32_t>(g + h));
      const Transfer& out =
          dag.transfer(first + static_cast<uint32_t>(s * g + 1 + v * (g - 1) + j));
      CHECK(out.src_rank == v * g + h);
      CHECK(out.dst_rank == v * g + others[j]);
      CHECK(out.flow == static_cast<uint32_t>(h));
    }
    const uint32_t loop = first + static_cast<uint32_t>(v * g + g - 1);
    CHECK(dag.transfer(loop).is_nic_loopback());
    CHECK(dag.transfer(loop).src_rank == v * g + h);
    CHECK(dag.dependency_count(loop) == static_cast<uint32_t>(g - 1));  // all G - 1 arrived
  }
}

TEST_CASE("collnet: every chunk's way back waits for every server's loopback of that chunk") {
  // Within each chunk's block, follow dependencies: a loopback carries its server; a transfer
  // the union of what it waits for. Every send after the network part must carry all servers,
  // and no send before it any.
  const int s = 5, g = 3;
  const uint32_t block = s * (2 * g - 1) + 1;
  const TransferDag dags[2] = {collnet_chain_allreduce(s, g, 3 * 30, 4, 40, 3, 2),
                               collnet_direct_allreduce(s, g, 3 * 30, 4, 40, 2)};
  for (const TransferDag& dag : dags) {
    REQUIRE(dag.size() == size_t{3} * 3 * block);  // 3 parts of 3 chunks
    for (uint32_t first = 0; first < dag.size(); first += block) {
      std::vector<uint32_t> carries(block, 0);
      for (uint32_t i = 0; i < block; ++i) {
        const Transfer& t = dag.transfer(first + i);
        if (t.loopback) carries[i] |= 1u << (t.src_rank / g);
        if (i > static_cast<uint32_t>(s * g)) {
          CHECK(carries[i] == (1u << s) - 1);  // the way back: after the join
        } else if (!t.loopback && !t.is_compute()) {
          CHECK(carries[i] == 0);
        }
        for (uint32_t d : dag.dependents(first + i)) {
          if (d >= first && d < first + block) carries[d - first] |= carries[i];
        }
      }
    }
  }
}

TEST_CASE("collnet: chunk counts and transfer counts match the id layout") {
  const int s = 3, g = 4, elem = 4, channels = 5;
  const int64_t count = 5 * 250 + 2;           // parts of 251, 251, 250, 250, 250 elements
  const int64_t chunk_bytes = 100 * elem + 3;  // 100 elements a chunk: 3 chunks a part
  const TransferDag chain = collnet_chain_allreduce(s, g, count, elem, chunk_bytes, channels, 8);
  const int64_t block = s * (2 * g - 1) + 1;
  int64_t chain_chunks = 0;
  for (int c = 0; c < channels; ++c) chain_chunks += chunks_of(part_of(count, channels, c), 100);
  CHECK(chain_chunks == 15);
  CHECK(int64_t(chain.size()) == chain_chunks * block);
  CHECK(collnet_chain_transfers(s, g, count, elem, chunk_bytes, channels) == int64_t(chain.size()));
  // The last chunk of part 0 is 51 elements; its loopbacks carry that.
  CHECK(chain.transfer(static_cast<uint32_t>(2 * block + g - 1)).bytes == 51 * elem);
  for (uint32_t first = 0; first < chain.size(); first += static_cast<uint32_t>(block)) {
    CHECK(chain.transfer(first + s * g).is_compute());
  }

  const TransferDag direct = collnet_direct_allreduce(s, g, count, elem, chunk_bytes, 8);
  int64_t direct_chunks = 0;  // slices of 313, 313, 313, 313 elements
  for (int h = 0; h < g; ++h) direct_chunks += chunks_of(part_of(count, g, h), 100);
  CHECK(direct_chunks == 16);
  CHECK(int64_t(direct.size()) == direct_chunks * block);
  CHECK(collnet_direct_transfers(s, g, count, elem, chunk_bytes) == int64_t(direct.size()));
  // An empty buffer: one chunk of 0 bytes a part.
  CHECK(collnet_direct_allreduce(s, g, 0, elem, chunk_bytes, 8).size() == size_t(g * block));
  CHECK(collnet_direct_allreduce(s, g, 0, elem, chunk_bytes, 8).total_bytes() == 0);
}

TEST_CASE("collnet: one chunk's critical path is 2G-1 transfers for Chain and 3 for Direct") {
  for (int s : {1, 2, 5}) {
    for (int g : {2, 4, 8}) {
      CAPTURE(s, g);
      const int64_t count = int64_t{g} * 16;
      CHECK(transfer_critical_path(collnet_chain_allreduce(s, g, count, 4, 1 << 20, g, 8)) ==
            2 * g - 1);
      CHECK(transfer_critical_path(collnet_direct_allreduce(s, g, count, 4, 1 << 20, 8)) == 3);
      // The join adds one task, not a transfer.
      CHECK(testing::critical_path(collnet_direct_allreduce(s, g, count, 4, 1 << 20, 8)) == 4);
    }
  }
  // One GPU a server: the loopback alone.
  CHECK(transfer_critical_path(collnet_chain_allreduce(4, 1, 64, 4, 1 << 20, 2, 8)) == 1);
  CHECK(transfer_critical_path(collnet_direct_allreduce(4, 1, 64, 4, 1 << 20, 8)) == 1);
}

TEST_CASE("collnet: chunk k waits for chunk k - window on each connection") {
  // 10 chunks a part, window 3: the path grows by one per window of chunks,
  // 2G - 1 + floor(9 / 3) for Chain, 3 + 3 for Direct.
  const int s = 2, g = 4, window = 3;
  const int64_t count = int64_t{g} * 10;
  const TransferDag chain = collnet_chain_allreduce(s, g, count, 4, 4, g, window);
  const TransferDag direct = collnet_direct_allreduce(s, g, count, 4, 4, window);
  CHECK(transfer_critical_path(chain) == 2 * g - 1 + 3);
  CHECK(transfer_critical_path(direct) == 3 + 3);
  const uint32_t block = s * (2 * g - 1) + 1;
  for (const TransferDag* dag : {&chain, &direct}) {
    for (uint32_t id = window * block; id < 10 * block; ++id) {  // part 0, chunks 3 … 9
      if (dag->transfer(id).is_compute()) continue;
      const Transfer& now = dag->transfer(id);
      const Transfer& then = dag->transfer(id - window * block);
      CHECK(now.src_rank == then.src_rank);
      CHECK(now.dst_rank == then.dst_rank);
      CHECK(now.flow == then.flow);
      const auto deps = dag->dependents(id - window * block);
      CHECK(std::find(deps.begin(), deps.end(), id) != deps.end());
    }
  }
}

TEST_CASE("collnet: one server still gives the loopback of every chunk") {
  const int g = 8, elem = 2;
  const int64_t count = 8 * 1024;
  const TransferDag chain = collnet_chain_allreduce(1, g, count, elem, 512, g, 8);
  const TransferDag direct = collnet_direct_allreduce(1, g, count, elem, 512, 8);
  for (const TransferDag* dag : {&chain, &direct}) {
    const PerRank b = per_rank(*dag, g);
    CHECK(sum(b.loopback) == count * elem);
    CHECK(sum(b.sent) == 2 * (g - 1) * count * elem);
  }
  CHECK(transfer_critical_path(chain) == 2 * g - 1 + (4 - 1) / 8);
}

TEST_CASE("collnet: bad arguments throw") {
  CHECK_THROWS_AS(collnet_chain_allreduce(0, 4, 16, 4, 64, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(2, 0, 16, 4, 64, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(1, 1, 16, 4, 64, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(2, 4, -1, 4, 64, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(2, 4, 16, 0, 64, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(2, 4, 16, 4, 3, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(2, 4, 16, 4, 64, 0, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(2, 4, 16, 4, 64, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_allreduce(2, 4, int64_t{1} << 40, 1, 1, 1, 8),
                  std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_allreduce(0, 4, 16, 4, 64, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_allreduce(1, 1, 16, 4, 64, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_allreduce(2, 4, -1, 4, 64, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_allreduce(2, 4, 16, -4, 64, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_allreduce(2, 4, 16, 4, 2, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_allreduce(2, 4, 16, 4, 64, 0), std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_allreduce(2, 4, int64_t{1} << 40, 1, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(collnet_chain_transfers(2, 4, 16, 4, 64, 0), std::invalid_argument);
  CHECK_THROWS_AS(collnet_direct_transfers(2, 4, 16, 4, 0), std::invalid_argument);
  // A count that does not fit: the count saturates instead of throwing.
  CHECK(collnet_direct_transfers(1 << 20, 8, INT64_MAX, 1, 1) == INT64_MAX);
}
