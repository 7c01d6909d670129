// NCCL's double binary tree and Tree AllReduce (collectives/tree.hpp).
//
// The trees are checked against the illustrations in NCCL src/graph/trees.cc (ncclGetBtree,
// ncclGetDtree), written out here as literal tables, and against structural facts: one parent
// each, spanning, height ⌈log2 n⌉, and the double binary tree's point (Sanders, Speck & Träff,
// Parallel Computing 2009) that with an even node count no node is interior in both trees.
// tree_allreduce is checked by symbolic data tracking (each transfer carries the contributions
// its sender holds once the transfers it transitively waits for have arrived, so a missing
// dependency shows up as missing data and a double one as a count of 2), byte accounting
// (2(N−1) chunk copies per chunk) and the critical path 2H + floor((chunks − 1)/8).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "collectives/tree.hpp"
#include "dag_support.hpp"

using namespace fabricsim;

namespace {

// {parent, child0, child1} per node, as in the illustrations.
using Table = std::vector<std::array<int, 3>>;

std::array<int, 3> as_array(const TreeLinks& l) {
  return {l.parent, l.child0, l.child1};
}

TreeLinks links_of(int tree, int nodes, int node) {
  return tree == 0 ? btree_links(nodes, node) : dtree_second_links(nodes, node);
}

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

using fabricsim::testing::critical_path;

// What the header promises for one tree_allreduce call, derived here from its parameters.
struct Expected {
  int ranks = 0;
  std::vector<int64_t> part_elems;          // per channel
  std::vector<std::vector<int64_t>> chunk;  // per channel, bytes of each chunk
  std::vector<int> root;                    // per channel
  std::vector<std::vector<int>> parent;     // per channel, per rank (−1 at the root)
};

Expected expect(const TreeLayout& layout, int64_t count, int elem_bytes, int channels,
                int64_t chunk_bytes) {
  const int s = layout.servers, g = layout.gpus_per_server;
  Expected e;
  e.ranks = s * g;
  const int64_t chunk_elems = chunk_bytes / elem_bytes;
  for (int c = 0; c < channels; ++c) {
    const int64_t part = count / channels + (c < count % channels ? 1 : 0);
    e.part_elems.push_back(part);
    std::vector<int64_t> sizes;
    int64_t left = part;
    do {
      sizes.push_back(std::min(left, chunk_elems) * elem_bytes);
      left -= std::min(left, chunk_elems);
    } while (left > 0);
    e.chunk.push_back(sizes);
    // Chain h, h+1, … inside each server; the head (h = c mod G) sits in tree c % 2.
    const int h = c % g;
    std::vector<int> parent(e.ranks, -1);
    int root = -1;
    for (int v = 0; v < s; ++v) {
      for (int p = 1; p < g; ++p) parent[v * g + (h + p) % g] = v * g + (h + p - 1) % g;
      const int up = links_of(c % 2, s, v).parent;
      if (up < 0) {
        root = v * g + h;
      } else {
        parent[v * g + h] = up * g + h;
      }
    }
    e.root.push_back(root);
    e.parent.push_back(parent);
  }
  return e;
}

}  // namespace

TEST_CASE("btree_links: 14 nodes match the illustration in NCCL trees.cc") {
  // 0→8, 8→{4,12}, 4→{2,6}, 12→{10,13}, 2→{1,3}, 6→{5,7}, 10→{9,11}; child0 below, child1
  // above the node, the root's only child in child1 (NCCL's d1).
  const Table want = {{-1, -1, 8}, {2, -1, -1},  {4, 1, 3},   {2, -1, -1}, {8, 2, 6},
                      {6, -1, -1}, {4, 5, 7},    {6, -1, -1}, {0, 4, 12},  {10, -1, -1},
                      {12, 9, 11}, {10, -1, -1}, {8, 10, 13}, {12, -1, -1}};
  for (int r = 0; r < 14; ++r) {
    INFO("node " << r);
    CHECK(as_array(btree_links(14, r)) == want[r]);
  }
}

TEST_CASE("dtree_second_links: 12 nodes mirror, 13 nodes shift, as in NCCL trees.cc") {
  // 12 nodes: 11→3, 3→{1,7}, 1→{0,2}, 7→{5,9}, 5→{4,6}, 9→{8,10}. Mirroring swaps which child
  // is numbered above: child0 of r is the mirror of btree child0 of 11−r.
  const Table mirror = {{1, -1, -1}, {3, 2, 0}, {1, -1, -1}, {11, 7, 1}, {5, -1, -1}, {7, 6, 4},
                        {5, -1, -1}, {3, 9, 5}, {9, -1, -1}, {7, 10, 8}, {9, -1, -1}, {-1, -1, 3}};
  for (int r = 0; r < 12; ++r) {
    INFO("node " << r);
    CHECK(as_array(dtree_second_links(12, r)) == mirror[r]);
  }
  // 13 nodes: 1→9, 9→{5,0}, 5→{3,7}, 0→11, 3→{2,4}, 7→{6,8}, 11→{10,12}. Btree node 12 has
  // only child0 (10); shifted, node 0 has only child0 (11).
  const Table shift = {{9, 11, -1},  {-1, -1, 9}, {3, -1, -1}, {5, 2, 4},   {3, -1, -1},
                       {9, 3, 7},    {7, -1, -1}, {5, 6, 8},   {7, -1, -1}, {1, 5, 0},
                       {11, -1, -1}, {0, 10, 12}, {11, -1, -1}};
  for (int r = 0; r < 13; ++r) {
    INFO("node " << r);
    CHECK(as_array(dtree_second_links(13, r)) == shift[r]);
  }
}

TEST_CASE("both trees, 1 to 64 nodes: consistent links, spanning, height ceil(log2 n)") {
  for (int n = 1; n <= 64; ++n) {
    for (int tree : {0, 1}) {
      INFO("nodes " << n << " tree " << tree);
      // NCCL's roots (ncclGetDtreeRoots): 0; n−1 when mirrored (even n), 1 when shifted.
      const int want_root = tree == 0 ? 0 : (n % 2 == 0 ? n - 1 : (n > 1 ? 1 : 0));
      std::vector<TreeLinks> l;
      for (int r = 0; r < n; ++r) l.push_back(links_of(tree, n, r));
      for (int r = 0; r < n; ++r) {
        CHECK((l[r].parent < 0) == (r == want_root));
        if (l[r].parent >= 0) {
          REQUIRE(l[r].parent < n);
          const TreeLinks& p = l[l[r].parent];
          CHECK(((p.child0 == r) != (p.child1 == r)));  // listed exactly once by its parent
        }
        for (int c : {l[r].child0, l[r].child1}) {
          if (c < 0) continue;
          REQUIRE(c < n);
          CHECK(l[c].parent == r);
        }
      }
      // Breadth-first from the root reaches every node exactly once.
      std::vector<int> depth(n, -1);
      std::vector<int> queue{want_root};
      depth[want_root] = 0;
      for (size_t i = 0; i < queue.size(); ++i) {
        for (int c : {l[queue[i]].child0, l[queue[i]].child1}) {
          if (c < 0) continue;
          REQUIRE(depth[c] < 0);
          depth[c] = depth[queue[i]] + 1;
          queue.push_back(c);
        }
      }
      CHECK(queue.size() == static_cast<size_t>(n));
      CHECK(*std::max_element(depth.begin(), depth.end()) == ceil_log2(n));
    }
    CHECK(tree_height(n) == ceil_log2(n));
  }
  // A few by hand: a lone node, a pair, 0→2→1, and 0→4→2→1 for five nodes (4's only child 2).
  CHECK(tree_height(1) == 0);
  CHECK(tree_height(2) == 1);
  CHECK(tree_height(3) == 2);
  CHECK(tree_height(5) == 3);
  CHECK(as_array(btree_links(5, 4)) == std::array<int, 3>{0, 2, -1});
}

TEST_CASE("double binary tree: even n, no node interior in both trees, odd n only node 0") {
  // NCCL's btree: the interior nodes are exactly the even ones (odd nodes have lowest bit 1 and
  // no children; an even r > 0 always has child r − b/2; the root has a child when n > 1). The
  // mirror (even n) makes the odd nodes interior, so the sets are disjoint: every node is a leaf
  // in one tree, as in Sanders, Speck & Träff. The shift (odd n) makes the odd nodes and node 0
  // (btree node n−1, even) interior, so node 0 is interior in both.
  for (int n = 1; n <= 64; ++n) {
    INFO("nodes " << n);
    std::vector<int> both;
    for (int r = 0; r < n; ++r) {
      const TreeLinks a = btree_links(n, r), b = dtree_second_links(n, r);
      const bool interior_a = a.child0 >= 0 || a.child1 >= 0;
      const bool interior_b = b.child0 >= 0 || b.child1 >= 0;
      CHECK(interior_a == (n > 1 && r % 2 == 0));
      CHECK(interior_b == (n > 1 && (r % 2 == 1 || (n % 2 == 1 && r == 0))));
      if (interior_a && interior_b) both.push_back(r);
    }
    if (n % 2 == 0 || n == 1) {
      CHECK(both.empty());
    } else {
      CHECK(both == std::vector<int>{0});
    }
  }
}

TEST_CASE("tree_allreduce: transfers follow the documented id blocks, trees and chains") {
  struct Case {
    TreeLayout layout;
    int64_t count;
    int elem;
    int channels;
    int64_t chunk_bytes;
  };
  const std::vector<TreeLayout> layouts = {{1, 2},  {1, 8}, {3, 1}, {13, 1},
                                           {16, 1}, {2, 8}, {5, 4}};
  for (const TreeLayout& lay : layouts) {
    // 1000 over 3 channels: 334/333/333 elements in chunks of 100 (4 chunks, the last short);
    // 7 over 4: 2/2/2/1 single-element chunks; 0: one empty chunk per channel; 2 over 3: the
    // last channel empty; 50 over 5 with 31-byte chunks: 7 elements, then 3; 1001 in one channel.
    // 90 over 2 in 4-element chunks: 12 and 12 chunks, past the 8-chunk window.
    const std::vector<Case> cases = {
        {lay, 1000, 4, 3, 400}, {lay, 7, 2, 4, 3},       {lay, 0, 4, 2, 64}, {lay, 2, 8, 3, 8},
        {lay, 50, 4, 5, 31},    {lay, 1001, 4, 1, 1200}, {lay, 90, 4, 2, 16}};
    for (const Case& cs : cases) {
      INFO("layout " << lay.servers << "x" << lay.gpus_per_server << " count " << cs.count
                     << " channels " << cs.channels << " chunk_bytes " << cs.chunk_bytes);
      const Expected e = expect(lay, cs.count, cs.elem, cs.channels, cs.chunk_bytes);
      const TransferDag dag = tree_allreduce(lay, cs.count, cs.elem, cs.channels, cs.chunk_bytes);
      const int n = e.ranks, half = n - 1;
      size_t blocks = 0;
      for (const auto& ch : e.chunk) blocks += ch.size();
      REQUIRE(dag.size() == blocks * 2 * half);

      // Map each id to its block (channel, chunk) and half (up or down) by the documented
      // arithmetic, and check who sends what.
      std::vector<int> block_of(dag.size());
      std::vector<bool> is_up(dag.size());
      std::vector<int64_t> sent(n, 0);
      uint32_t id = 0;
      int block = 0;
      for (int c = 0; c < cs.channels; ++c) {
        for (size_t k = 0; k < e.chunk[c].size(); ++k, ++block) {
          std::vector<int> up_from(n, 0), down_to(n, 0);
          for (int i = 0; i < 2 * half; ++i, ++id) {
            const Transfer& t = dag.transfer(id);
            block_of[id] = block;
            is_up[id] = i < half;
            CHECK(t.flow == static_cast<uint32_t>(c));
            CHECK(t.bytes == e.chunk[c][k]);
            sent[t.src_rank] += t.bytes;
            if (i < half) {
              CHECK(t.dst_rank == e.parent[c][t.src_rank]);
              ++up_from[t.src_rank];
            } else {
              CHECK(t.src_rank == e.parent[c][t.dst_rank]);
              ++down_to[t.dst_rank];
            }
          }
          for (int r = 0; r < n; ++r) {
            CHECK(up_from[r] == (r == e.root[c] ? 0 : 1));
            CHECK(down_to[r] == (r == e.root[c] ? 0 : 1));
          }
        }
      }
      // Dependencies, exactly as documented: an up send waits for the up sends of the sender's
      // children (same chunk); a down send waits for the sender's own down receive, or at the
      // root for every up receive (same chunk). Both wait for the slot the chunk W earlier took
      // at the receiver: freed when the receiver posts that chunk on (up: its send to its
      // parent, at the root its sends down; down: its sends to its children), or, at a leaf of
      // the broadcast, when it arrived there.
      std::vector<std::vector<uint32_t>> up_id(block, std::vector<uint32_t>(n)), down_id = up_id;
      std::vector<int> channel_of(block), first_block(cs.channels);
      for (int c = 0, b = 0; c < cs.channels; ++c) {
        first_block[c] = b;
        for (size_t k = 0; k < e.chunk[c].size(); ++k) channel_of[b++] = c;
      }
      for (uint32_t t = 0; t < dag.size(); ++t) {
        const Transfer& tr = dag.transfer(t);
        (is_up[t] ? up_id[block_of[t]][tr.src_rank] : down_id[block_of[t]][tr.dst_rank]) = t;
      }
      std::vector<std::vector<uint32_t>> preds(dag.size()), post_preds(dag.size());
      for (uint32_t t = 0; t < dag.size(); ++t) {
        for (uint32_t d : dag.dependents(t)) preds[d].push_back(t);
        for (uint32_t d : dag.post_dependents(t)) post_preds[d].push_back(t);
      }
      for (uint32_t t = 0; t < dag.size(); ++t) {
        const Transfer& tr = dag.transfer(t);
        const int b = block_of[t], c = channel_of[b];
        const std::vector<int>& parent = e.parent[c];
        std::vector<uint32_t> want;
        const int sender = tr.src_rank;
        if (is_up[t] || sender == e.root[c]) {
          for (int r = 0; r < n; ++r) {
            if (parent[r] == sender) want.push_back(up_id[b][r]);  // the sender's children
          }
        } else {
          want.push_back(down_id[b][sender]);
        }
        std::vector<uint32_t> want_post;
        if (b - first_block[c] >= kConnectionWindow) {
          const int earlier = b - kConnectionWindow, receiver = tr.dst_rank;
          if (is_up[t] && receiver != e.root[c]) {
            want_post.push_back(up_id[earlier][receiver]);
          } else {
            for (int r = 0; r < n; ++r) {
              if (parent[r] == receiver) want_post.push_back(down_id[earlier][r]);
            }
            if (want_post.empty()) want.push_back(down_id[earlier][receiver]);  // a leaf
          }
        }
        std::sort(want.begin(), want.end());
        std::sort(want_post.begin(), want_post.end());
        std::sort(preds[t].begin(), preds[t].end());
        std::sort(post_preds[t].begin(), post_preds[t].end());
        CHECK(preds[t] == want);
        CHECK(post_preds[t] == want_post);
        CHECK(dag.dependency_count(t) == want.size() + want_post.size());
      }

      // Bytes: per chunk every rank but the root sends it up once and receives it down once, so
      // 2(N−1) copies of the whole buffer; each rank sends its part once up (not the root) and
      // once to each child.
      CHECK(dag.total_bytes() == 2 * int64_t{half} * cs.count * cs.elem);
      std::vector<int64_t> want_sent(n, 0);
      for (int c = 0; c < cs.channels; ++c) {
        const int64_t part_bytes = e.part_elems[c] * cs.elem;
        for (int r = 0; r < n; ++r) {
          if (r != e.root[c]) want_sent[r] += part_bytes;
          if (e.parent[c][r] >= 0) want_sent[e.parent[c][r]] += part_bytes;
        }
      }
      CHECK(sent == want_sent);

      // Symbolic run: a transfer carries its sender's own contribution plus whatever arrived at
      // the sender, for the same (channel, chunk), through transfers it transitively waits for;
      // up transfers add into the receiver's copy, down transfers overwrite it.
      const size_t t_count = dag.size();
      std::vector<std::vector<bool>> anc(t_count, std::vector<bool>(t_count, false));
      for (uint32_t t = 0; t < t_count; ++t) {
        for (uint32_t d : dag.dependents(t)) {
          REQUIRE(d > t);
          for (uint32_t u = 0; u < t; ++u) {
            if (anc[t][u]) anc[d][u] = true;
          }
          anc[d][t] = true;
        }
      }
      using Contrib = std::vector<int>;
      auto unit = [n](int r) {
        Contrib v(n, 0);
        v[r] = 1;
        return v;
      };
      auto apply = [](Contrib& into, const Contrib& what, bool add) {
        for (size_t r = 0; r < into.size(); ++r) into[r] = add ? into[r] + what[r] : what[r];
      };
      std::vector<Contrib> carried(t_count);
      for (uint32_t t = 0; t < t_count; ++t) {
        const int src = dag.transfer(t).src_rank;
        Contrib held = unit(src);
        for (uint32_t u = 0; u < t; ++u) {
          if (anc[t][u] && block_of[u] == block_of[t] && dag.transfer(u).dst_rank == src)
            apply(held, carried[u], is_up[u]);
        }
        carried[t] = held;
      }
      for (int b = 0; b < block; ++b) {
        for (int r = 0; r < n; ++r) {
          Contrib final_value = unit(r);
          for (uint32_t u = 0; u < t_count; ++u) {
            if (block_of[u] == b && dag.transfer(u).dst_rank == r)
              apply(final_value, carried[u], is_up[u]);
          }
          INFO("block " << b << " rank " << r);
          CHECK(final_value == Contrib(n, 1));  // every rank's contribution exactly once
        }
      }
    }
  }
}

TEST_CASE("tree_allreduce: 2 servers x 2 GPUs, 2 channels, by hand") {
  // Channel 0: heads are local GPU 0 (ranks 0, 2), btree of 2 servers 0→1, so rank 0 is the
  // root with children 1 (chain) and 2 (server 1's head), and 2 has child 3. Breadth-first order
  // 0, 1, 2, 3: up sends 3→2, 2→0, 1→0, then down sends 0→1, 0→2, 2→3.
  // Channel 1: heads are local GPU 1 (ranks 1, 3), the mirrored tree 1→0, so rank 3 is the root
  // with children 2 (chain) and 1; 1 has child 0. Order 3, 2, 1, 0: up 0→1, 1→3, 2→3, down
  // 3→2, 3→1, 1→0.
  const TransferDag dag = tree_allreduce({2, 2}, 2, 4, 2, 4);
  const std::vector<std::array<int, 2>> pairs = {{3, 2}, {2, 0}, {1, 0}, {0, 1}, {0, 2}, {2, 3},
                                                 {0, 1}, {1, 3}, {2, 3}, {3, 2}, {3, 1}, {1, 0}};
  const std::vector<std::vector<uint32_t>> deps = {{}, {0}, {}, {1, 2}, {1, 2}, {4},
                                                   {}, {6}, {}, {7, 8}, {7, 8}, {10}};
  REQUIRE(dag.size() == pairs.size());
  std::vector<std::vector<uint32_t>> preds(dag.size());
  for (uint32_t t = 0; t < dag.size(); ++t) {
    for (uint32_t d : dag.dependents(t)) preds[d].push_back(t);
  }
  for (uint32_t t = 0; t < dag.size(); ++t) {
    INFO("transfer " << t);
    CHECK(dag.transfer(t).src_rank == pairs[t][0]);
    CHECK(dag.transfer(t).dst_rank == pairs[t][1]);
    CHECK(dag.transfer(t).bytes == 4);
    CHECK(dag.transfer(t).flow == (t < 6 ? 0u : 1u));
    std::sort(preds[t].begin(), preds[t].end());
    CHECK(preds[t] == deps[t]);
  }
}

TEST_CASE(
    "tree_allreduce: critical path 2H + floor((chunks - 1) / 8), H = ceil(log2 servers) + G - 1") {
  // Up, chunk k leaves a rank above a subtree of height h as transfer h + 1 + floor(k / W) of a
  // chain (W = kConnectionWindow = 8 chunks in flight per connection): a send waits for its
  // children's sends of chunk k (one level deeper) and for the slot chunk k − W took at its
  // parent, free once the parent posts chunk k − W onward, which runs as transfer h + 2 +
  // floor((k − W) / W), the same. Down adds one transfer per level, and a leaf's slot frees on
  // arrival. So the last chunk reaches the deepest rank at 2H + floor((chunks − 1) / W): nothing
  // else links chunks (no two connections share anything in the DAG), so up to W chunks pipeline
  // freely.
  for (int s = 2; s <= 64; ++s) {
    INFO("servers " << s);
    const int h = ceil_log2(s);
    CHECK(critical_path(tree_allreduce({s, 1}, 100, 4, 1, 400)) == 2 * h);
    CHECK(critical_path(tree_allreduce({s, 1}, 100, 4, 2, 400)) == 2 * h);  // both trees
    for (int chunks : {2, 8, 9, 16, 17, 20}) {
      CHECK(critical_path(tree_allreduce({s, 1}, chunks * 10, 4, 1, 40)) ==
            2 * h + (chunks - 1) / kConnectionWindow);
    }
  }
  // With G GPUs per server the chain adds G − 1 levels below every head.
  const std::vector<TreeLayout> layouts = {{1, 2}, {1, 8}, {2, 8}, {5, 4}, {13, 3}};
  for (const TreeLayout& lay : layouts) {
    INFO("layout " << lay.servers << "x" << lay.gpus_per_server);
    const int height = ceil_log2(lay.servers) + lay.gpus_per_server - 1;
    CHECK(critical_path(tree_allreduce(lay, 64, 4, 1, 256)) == 2 * height);
    // 3 channels of 91/90/90 elements in chunks of 5: channel 0 has 19 chunks, the others 18.
    CHECK(critical_path(tree_allreduce(lay, 271, 4, 3, 20)) == 2 * height + 18 / kConnectionWindow);
    // 2 channels of 46/45 elements in chunks of 5: 10 and 9 chunks; channel 0 sets the length.
    CHECK(critical_path(tree_allreduce(lay, 91, 4, 2, 20)) == 2 * height + 9 / kConnectionWindow);
  }
}

TEST_CASE("tree functions reject bad arguments") {
  CHECK_THROWS_AS(btree_links(0, 0), std::invalid_argument);
  CHECK_THROWS_AS(btree_links(4, -1), std::invalid_argument);
  CHECK_THROWS_AS(btree_links(4, 4), std::invalid_argument);
  CHECK_THROWS_AS(dtree_second_links(0, 0), std::invalid_argument);
  CHECK_THROWS_AS(dtree_second_links(5, -1), std::invalid_argument);
  CHECK_THROWS_AS(dtree_second_links(5, 5), std::invalid_argument);
  CHECK_THROWS_AS(tree_height(0), std::invalid_argument);
  CHECK_NOTHROW(tree_allreduce({2, 1}, 0, 1, 1, 1));
  CHECK_THROWS_AS(tree_allreduce({0, 8}, 100, 4, 1, 64), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({2, 0}, 100, 4, 1, 64), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({1, 1}, 100, 4, 1, 64), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({2, 4}, -1, 4, 1, 64), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({2, 4}, 100, 0, 1, 64), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({2, 4}, 100, -4, 1, 64), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({2, 4}, 100, 4, 0, 64), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({2, 4}, 100, 4, 1, 3), std::invalid_argument);
  CHECK_THROWS_AS(tree_allreduce({2, 4}, 100, 4, 1, 0), std::invalid_argument);
  // More than 2^32 − 1 transfers (2 × 1 × 2^31 one-element chunks).
  CHECK_THROWS_AS(tree_allreduce({2, 1}, int64_t{1} << 31, 1, 1, 1), std::invalid_argument);
}
