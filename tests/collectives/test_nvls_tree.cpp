// NVLS-Tree AllReduce (collectives/nvls_tree/nvls_tree.hpp).
//
// Expected values come from the algorithm NCCL runs (src/device/all_reduce.h, NVLS_TREE Simple;
// src/graph/connect.cc, connectNvls), worked out here: per chunk every GPU's NVLink carries its
// contribution and its multicast copy, every head one more store; each tree edge between servers
// carries the chunk once up and once down; the longest chain is the deepest leaf's loopback, the
// way up and down the tree, and its store. Tree heights are ⌈log2 S⌉ (NCCL src/graph/trees.cc),
// computed here, not by the code under test.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "collectives/nvls.hpp"
#include "collectives/nvls_tree/nvls_tree.hpp"
#include "collectives/plan.hpp"
#include "dag_support.hpp"

using namespace fabricsim;
using fabricsim::testing::ceil_log2;
using fabricsim::testing::critical_path;

namespace {

// Elements of slice h and its chunk count, from the definition (as nvls_allreduce).
int64_t slice_of(int64_t count, int g, int h) {
  return count / g + (h < count % g ? 1 : 0);
}
int64_t chunks_of(int64_t elems, int64_t chunk_elems) {
  return elems == 0 ? 1 : (elems + chunk_elems - 1) / chunk_elems;
}

/// Bytes each rank sends and receives over the network (loopbacks left out).
std::pair<std::vector<int64_t>, std::vector<int64_t>> network_bytes_per_rank(const TransferDag& dag,
                                                                             int ranks) {
  std::vector<int64_t> sent(static_cast<size_t>(ranks), 0), received(sent);
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    if (t.loopback) continue;
    sent[static_cast<size_t>(t.src_rank)] += t.bytes;
    received[static_cast<size_t>(t.dst_rank)] += t.bytes;
  }
  return {sent, received};
}

struct Bytes {
  int64_t network = 0;
  int64_t loopback = 0;
};

Bytes bytes_of(const TransferDag& dag) {
  Bytes b;
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    (t.loopback ? b.loopback : b.network) += t.bytes;
  }
  return b;
}

}  // namespace

TEST_CASE("nvls_tree: network bytes are 2(S-1) buffers and loopback bytes S(G+1) buffers") {
  struct Case {
    int s, g;
    int64_t count;
    int elem;
    int64_t chunk_bytes;
  };
  // Uneven slices, a short last chunk, one chunk, odd and even server counts.
  for (const Case c :
       {Case{2, 8, 1 << 16, 4, 4096}, Case{3, 4, 1001, 2, 64}, Case{5, 2, 77, 8, 1 << 20},
        Case{8, 4, 12345, 4, 512}, Case{7, 3, 100, 4, 40}}) {
    CAPTURE(c.s, c.g, c.count);
    const TransferDag dag = nvls_tree_allreduce(c.s, c.g, c.count, c.elem, c.chunk_bytes, 4);
    const Bytes b = bytes_of(dag);
    const int64_t buffer = c.count * c.elem;
    CHECK(b.network == 2 * (c.s - 1) * buffer);
    CHECK(b.loopback == int64_t{c.s} * (c.g + 1) * buffer);
    for (uint32_t i = 0; i < dag.size(); ++i) {
      const Transfer& t = dag.transfer(i);
      REQUIRE(t.flow < static_cast<uint32_t>(2 * c.g));
      if (t.loopback) continue;
      // Between servers, from GPU h of one server to GPU h of another: slice h's rail.
      CHECK(t.src_rank % c.g == static_cast<int>(t.flow));
      CHECK(t.dst_rank % c.g == static_cast<int>(t.flow));
      CHECK(t.src_rank / c.g != t.dst_rank / c.g);
    }
  }
}

TEST_CASE("nvls_tree: with 2 servers each direction of each rail carries its slice once") {
  const int s = 2, g = 4, elem = 4;
  const int64_t chunk_bytes = 1024;
  // Slices of 1401 elements (the first three) or 1400: 6 chunks of 256 elements each, the
  // last one shorter, so both trees carry 3 chunks of every slice.
  const int64_t count = g * 1400 + 3;
  for (int h = 0; h < g; ++h) REQUIRE(chunks_of(slice_of(count, g, h), 256) % 2 == 0);
  const TransferDag dag = nvls_tree_allreduce(s, g, count, elem, chunk_bytes, kNvlsWindow);
  const auto [sent, received] = network_bytes_per_rank(dag, s * g);
  for (int r = 0; r < s * g; ++r) {
    CAPTURE(r);
    const int64_t slice_bytes = slice_of(count, g, r % g) * elem;
    CHECK(sent[r] == slice_bytes);
    CHECK(received[r] == slice_bytes);
  }
}

TEST_CASE("nvls_tree: with 4 servers each rail carries its slice times the mean tree degree") {
  // NCCL's trees over 4 nodes (src/graph/trees.cc): btree 0->2, 2->{1,3}; the mirrored second
  // tree 3->1, 1->{2,0}. A head sends (and receives) a chunk once per tree edge at its server:
  // degrees 1, 1, 3, 1 in the first tree and 1, 3, 1, 1 in the second. Equal chunks, 4 a slice:
  // half the slice on each tree.
  const int s = 4, g = 2, elem = 4;
  const int64_t count = g * 4 * 32;  // 128 elements a slice, 4 chunks of 32
  const TransferDag dag = nvls_tree_allreduce(s, g, count, elem, 32 * elem, kNvlsWindow);
  const auto [sent, received] = network_bytes_per_rank(dag, s * g);
  const int64_t slice_bytes = count / g * elem;
  const int degrees[4][2] = {{1, 1}, {1, 3}, {3, 1}, {1, 1}};
  for (int r = 0; r < s * g; ++r) {
    CAPTURE(r);
    const int v = r / g;
    CHECK(sent[r] == (degrees[v][0] + degrees[v][1]) * slice_bytes / 2);
    CHECK(received[r] == sent[r]);
  }
}

TEST_CASE("nvls_tree: every head's store carries every GPU's contribution") {
  // Follow each chunk's dependencies inside its block: a loopback carries its GPU's
  // contribution, a transfer everything the transfers it waits for carry. Every store (the
  // multicast write of the result to a whole server) must carry all S x G contributions, and
  // each chunk must cross 2(S - 1) tree edges.
  const int s = 6, g = 4;
  const int64_t count = 4 * 3 * 10;  // 30 elements a slice: 3 chunks of 10
  const TransferDag dag = nvls_tree_allreduce(s, g, count, 4, 40, 2);
  const uint32_t block = s * (g + 1) + 2 * (s - 1);
  REQUIRE(dag.size() == size_t(g) * 3 * block);
  const uint64_t all = (uint64_t{1} << (s * g)) - 1;
  for (uint32_t first = 0; first < dag.size(); first += block) {
    std::vector<uint64_t> carries(block, 0);
    int stores = 0, network = 0;
    for (uint32_t i = 0; i < block; ++i) {
      const Transfer& t = dag.transfer(first + i);
      if (i < static_cast<uint32_t>(s * g)) {
        REQUIRE(t.loopback);
        REQUIRE(t.src_rank == static_cast<int>(i));
        carries[i] |= uint64_t{1} << i;
      }
      for (uint32_t d : dag.dependents(first + i)) {
        if (d < first + block) carries[d - first] |= carries[i];
      }
      if (!t.loopback) ++network;
      if (i >= block - s) {
        REQUIRE(t.loopback);
        CHECK(t.src_rank % g + g == static_cast<int>(t.flow));  // the head, its store's queue pair
        CHECK(t.src_rank / g == static_cast<int>(i - (block - s)));
        CHECK(carries[i] == all);
        ++stores;
      }
    }
    CHECK(stores == s);
    CHECK(network == 2 * (s - 1));
  }
}

TEST_CASE("nvls_tree: one chunk a slice takes 2 + 2 x tree height transfers") {
  // The deepest leaf's loopback, ⌈log2 S⌉ hops up, as many down, and its store.
  for (int s : {1, 2, 3, 8, 13}) {
    CAPTURE(s);
    const TransferDag dag = nvls_tree_allreduce(s, 4, 4 * 100, 4, 400, 1);
    CHECK(critical_path(dag) == 2 + 2 * ceil_log2(s));
  }
  CHECK(ceil_log2(2) == 1);
  CHECK(ceil_log2(3) == 2);
  CHECK(ceil_log2(8) == 3);
}

TEST_CASE("nvls_tree: an even window makes the critical path one chunk's per window of chunks") {
  // Chunk k + W reuses chunk k's tree and its loopbacks wait for chunk k's stores.
  for (int s : {2, 3, 8}) {
    for (int window : {2, 4}) {
      CAPTURE(s, window);
      const int64_t chunks = 7;
      const TransferDag dag = nvls_tree_allreduce(s, 2, 2 * chunks * 8, 4, 32, window);
      const int64_t groups = (chunks + window - 1) / window;
      CHECK(critical_path(dag) == groups * (2 + 2 * ceil_log2(s)));
    }
    // An odd window lets chunk k + W take the other tree: never longer, and the window still
    // chains chunks (7 chunks, 3 at a time).
    const TransferDag odd = nvls_tree_allreduce(s, 2, 2 * 7 * 8, 4, 32, 3);
    CHECK(critical_path(odd) <= 3 * (2 + 2 * ceil_log2(s)));
    CHECK(critical_path(odd) > 2 + 2 * ceil_log2(s));
  }
}

TEST_CASE("nvls_tree: a network send waits for the same send window chunks earlier") {
  // NCCL_STEPS slots per connection: the send of chunk k from one head to another waits for the
  // one of chunk k - W (same tree for an even W), and for no send of another chunk before that.
  const int s = 5, g = 2, window = 2, chunks = 6;
  const TransferDag dag = nvls_tree_allreduce(s, g, g * chunks * 4, 4, 16, window);
  const uint32_t block = s * (g + 1) + 2 * (s - 1);
  REQUIRE(dag.size() == size_t(g) * chunks * block);
  std::vector<std::vector<uint32_t>> waits_for(dag.size());
  for (uint32_t i = 0; i < dag.size(); ++i) {
    for (uint32_t d : dag.dependents(i)) waits_for[d].push_back(i);
  }
  int checked = 0;
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    if (t.loopback) continue;
    const uint32_t k = i / block % chunks, first = i / block * block;
    std::vector<uint32_t> earlier;  // dependencies in other blocks
    for (uint32_t d : waits_for[i]) {
      if (d < first) earlier.push_back(d);
    }
    if (k < static_cast<uint32_t>(window)) {
      CHECK(earlier.empty());
      continue;
    }
    REQUIRE(earlier.size() == 1);
    const uint32_t e = earlier[0];
    CHECK(e / block == i / block - window);
    CHECK(dag.transfer(e).src_rank == t.src_rank);
    CHECK(dag.transfer(e).dst_rank == t.dst_rank);
    ++checked;
  }
  CHECK(checked == g * (chunks - window) * 2 * (s - 1));
}

TEST_CASE("nvls_tree: one server is exactly nvls_allreduce") {
  struct Case {
    int g;
    int64_t count;
    int elem;
    int64_t chunk_bytes;
    int window;
  };
  for (const Case c : {Case{8, 1 << 14, 4, 1024, 3}, Case{4, 103, 2, 8, 2}, Case{2, 0, 4, 4, 1},
                       Case{3, 50, 4, 1 << 20, kNvlsWindow}}) {
    CAPTURE(c.g, c.count, c.chunk_bytes, c.window);
    const TransferDag a = nvls_tree_allreduce(1, c.g, c.count, c.elem, c.chunk_bytes, c.window);
    const TransferDag b = nvls_allreduce(c.g, c.count, c.elem, c.chunk_bytes, c.window);
    REQUIRE(a.size() == b.size());
    for (uint32_t i = 0; i < a.size(); ++i) {
      const Transfer &x = a.transfer(i), &y = b.transfer(i);
      REQUIRE(x.src_rank == y.src_rank);
      REQUIRE(x.dst_rank == y.dst_rank);
      REQUIRE(x.bytes == y.bytes);
      REQUIRE(x.flow == y.flow);
      REQUIRE(x.loopback == y.loopback);
      REQUIRE(x.delay_ps == y.delay_ps);
      REQUIRE(x.pace_bps == y.pace_bps);
      REQUIRE(a.dependency_count(i) == b.dependency_count(i));
      const auto da = a.dependents(i), db = b.dependents(i);
      REQUIRE(std::vector<uint32_t>(da.begin(), da.end()) ==
              std::vector<uint32_t>(db.begin(), db.end()));
    }
  }
}

TEST_CASE("nvls_tree: the transfer count is slices x chunks x (S(G+1) + 2(S-1))") {
  struct Case {
    int s, g;
    int64_t count;
    int elem;
    int64_t chunk_bytes;
  };
  for (const Case c : {Case{1, 2, 0, 4, 4}, Case{2, 8, 1 << 16, 4, 4096}, Case{3, 4, 1001, 2, 64},
                       Case{9, 3, 100, 4, 40}, Case{4, 4, 3, 4, 4}}) {
    CAPTURE(c.s, c.g, c.count);
    int64_t expected = 0;
    for (int h = 0; h < c.g; ++h) {
      expected += chunks_of(slice_of(c.count, c.g, h), c.chunk_bytes / c.elem) *
                  (c.s * (c.g + 1) + 2 * (c.s - 1));
    }
    CHECK(nvls_tree_transfers(c.s, c.g, c.count, c.elem, c.chunk_bytes) == expected);
    CHECK(nvls_tree_allreduce(c.s, c.g, c.count, c.elem, c.chunk_bytes, 8).size() ==
          static_cast<size_t>(expected));
  }
  // 2 slices of 2^31 one-element chunks, 2 x 3 + 2 transfers each: 2^35, counted, not built.
  CHECK(nvls_tree_transfers(2, 2, int64_t{1} << 32, 4, 4) == int64_t{1} << 35);
  CHECK_THROWS_WITH(nvls_tree_allreduce(2, 2, int64_t{1} << 32, 4, 4, 8), Catch::Contains("2^32"));
}

TEST_CASE("nvls_tree: bad arguments throw with the function's name") {
  auto build = [](int s, int g, int64_t count, int elem, int64_t chunk, int window) {
    return nvls_tree_allreduce(s, g, count, elem, chunk, window);
  };
  const auto name = Catch::Contains("nvls_tree_allreduce");
  CHECK_THROWS_AS(build(0, 8, 16, 4, 16, 1), std::invalid_argument);
  CHECK_THROWS_WITH(build(0, 8, 16, 4, 16, 1), name);
  CHECK_THROWS_WITH(build(2, 1, 16, 4, 16, 1), name);  // no NVSwitch to reduce on
  CHECK_THROWS_WITH(build(2, 8, -1, 4, 16, 1), name);
  CHECK_THROWS_WITH(build(2, 8, 16, 0, 16, 1), name);
  CHECK_THROWS_WITH(build(2, 8, 16, 4, 3, 1), name);
  CHECK_THROWS_WITH(build(2, 8, 16, 4, 16, 0), name);
  CHECK_THROWS_WITH(nvls_tree_transfers(2, 1, 16, 4, 16), Catch::Contains("nvls_tree_transfers"));
  CHECK_THROWS_AS(nvls_tree_transfers(2, 8, 16, 4, 2), std::invalid_argument);
  CHECK_NOTHROW(build(1, 2, 0, 1, 1, 1));
}

TEST_CASE(
    "nvls_tree: as a registered algorithm its loopbacks carry NVLS's 6/5 and its network "
    "sends their payload") {
  // 2 servers × 4 GPUs, 1 MiB of floats in 64 KiB chunks: each slice is 256 KiB = 4 chunks.
  // Loopbacks: S (G + 1) × D × 6/5 (nvls.hpp: 6 bytes on the NVLink per 5 of payload, per chunk
  // ⌈65536 / 5⌉ × 6 = 78648); network: 2 (S − 1) × D, Simple's unframed payload.
  CollectiveSpec spec;
  spec.algorithm = "nvls_tree";
  spec.chunk_bytes = 65536;
  const int64_t count = 262144, d = count * 4;
  const TransferDag dag = build_collective(RankLayout{8, 4}, spec, count, 4);
  int64_t loop = 0, net = 0;
  for (uint32_t t = 0; t < dag.size(); ++t) {
    const Transfer& x = dag.transfer(t);
    (x.loopback ? loop : net) += x.bytes;
  }
  const int64_t chunks = 4 * 4;  // 4 slices of 4 chunks
  CHECK(loop == 2 * (4 + 1) * chunks * ((65536 + 4) / 5 * 6));
  CHECK(net == 2 * (2 - 1) * d);
  CHECK(estimate_transfers(RankLayout{8, 4}, spec, count, 4) >= int64_t(dag.size()));
  // Partial servers are refused: NVLSTree joins whole ones.
  CHECK_THROWS_AS(build_collective(RankLayout{6, 4}, spec, count, 4), std::invalid_argument);
}
