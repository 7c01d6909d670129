#include "collectives/tree.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabricsim {

namespace {

void check_node(const char* who, int nodes, int node) {
  if (nodes < 1) throw std::invalid_argument(std::string(who) + ": nodes must be >= 1");
  if (node < 0 || node >= nodes) throw std::invalid_argument(std::string(who) + ": bad node");
}

// btree_links without the argument check.
TreeLinks btree(int nodes, int node) {
  TreeLinks links;
  if (node == 0) {
    int64_t pow2 = 1;  // smallest power of two >= nodes
    while (pow2 < nodes) pow2 <<= 1;
    if (nodes > 1) links.child1 = static_cast<int>(pow2 >> 1);
    return links;
  }
  const int bit = node & -node;
  const int64_t up = (node ^ bit) | (int64_t{bit} << 1);
  links.parent = up < nodes ? static_cast<int>(up) : node ^ bit;
  for (int half = bit >> 1; half > 0; half >>= 1) {
    if (links.child0 < 0) links.child0 = node - half;  // always in range: below node
    if (int64_t{node} + half < nodes) {
      links.child1 = node + half;
      break;
    }
  }
  return links;
}

// Applies `map` to every link that exists.
template <typename Map>
TreeLinks relabel(const TreeLinks& links, Map map) {
  auto m = [&](int n) { return n < 0 ? -1 : map(n); };
  return TreeLinks{m(links.parent), m(links.child0), m(links.child1)};
}

TreeLinks second_tree(int nodes, int node) {
  if (nodes % 2 == 0) {
    auto mirror = [nodes](int n) { return nodes - 1 - n; };
    return relabel(btree(nodes, mirror(node)), mirror);
  }
  auto shift = [nodes](int n) { return static_cast<int>((int64_t{n} + 1) % nodes); };
  return relabel(btree(nodes, node == 0 ? nodes - 1 : node - 1), shift);
}

// One channel's tree over ranks: server tree channel % 2 between heads, chains inside servers.
struct RankTree {
  int root = -1;
  std::vector<int> parent;
  std::vector<std::vector<int>> children;  // chain successor first, then child servers' heads
};

RankTree rank_tree(const TreeLayout& layout, int channel) {
  const int servers = layout.servers, g = layout.gpus_per_server;
  const int head = channel % g;
  auto rank = [&](int server, int pos) { return server * g + (head + pos) % g; };
  RankTree t;
  t.parent.assign(static_cast<size_t>(servers) * g, -1);
  t.children.resize(t.parent.size());
  for (int v = 0; v < servers; ++v) {
    const TreeLinks s = channel % 2 == 0 ? btree(servers, v) : second_tree(servers, v);
    if (s.parent < 0) {
      t.root = rank(v, 0);
    } else {
      t.parent[rank(v, 0)] = rank(s.parent, 0);
    }
    for (int p = 1; p < g; ++p) t.parent[rank(v, p)] = rank(v, p - 1);
    for (int p = 0; p + 1 < g; ++p) t.children[rank(v, p)].push_back(rank(v, p + 1));
    for (int c : {s.child0, s.child1}) {
      if (c >= 0) t.children[rank(v, 0)].push_back(rank(c, 0));
    }
  }
  return t;
}

}  // namespace

TreeLinks btree_links(int nodes, int node) {
  check_node("btree_links", nodes, node);
  return btree(nodes, node);
}

TreeLinks dtree_second_links(int nodes, int node) {
  check_node("dtree_second_links", nodes, node);
  return second_tree(nodes, node);
}

int tree_height(int nodes) {
  if (nodes < 1) throw std::invalid_argument("tree_height: nodes must be >= 1");
  // Parents may be numbered above or below their children, so walk each node up to the root.
  int height = 0;
  for (int n = 1; n < nodes; ++n) {
    int depth = 0;
    for (int v = n; v != 0; v = btree(nodes, v).parent) ++depth;
    height = std::max(height, depth);
  }
  return height;
}

TransferDag tree_allreduce(const TreeLayout& layout, int64_t count, int elem_bytes, int channels,
                           int64_t chunk_bytes) {
  auto fail = [](const char* why) {
    throw std::invalid_argument(std::string("tree_allreduce: ") + why);
  };
  if (layout.servers < 1) fail("servers must be >= 1");
  if (layout.gpus_per_server < 1) fail("gpus_per_server must be >= 1");
  if (static_cast<int64_t>(layout.servers) * layout.gpus_per_server < 2) fail("needs >= 2 ranks");
  if (static_cast<int64_t>(layout.servers) * layout.gpus_per_server >
      std::numeric_limits<int32_t>::max())
    fail("too many ranks");
  if (count < 0) fail("negative count");
  if (elem_bytes <= 0) fail("elem_bytes must be > 0");
  if (channels < 1) fail("channels must be >= 1");
  if (chunk_bytes < elem_bytes) fail("chunk_bytes must be >= elem_bytes");

  const int ranks = layout.servers * layout.gpus_per_server;
  const int64_t chunk_elems = chunk_bytes / elem_bytes;
  std::vector<int64_t> part(channels), chunks(channels);
  int64_t transfers = 0;
  for (int c = 0; c < channels; ++c) {
    part[c] = count / channels + (c < count % channels ? 1 : 0);
    chunks[c] = std::max<int64_t>(1, (part[c] + chunk_elems - 1) / chunk_elems);
    transfers += chunks[c] * 2 * (ranks - 1);
    if (transfers > std::numeric_limits<uint32_t>::max()) fail("more than 2^32 - 1 transfers");
  }

  TransferDag dag;
  for (int c = 0; c < channels; ++c) {
    const RankTree t = rank_tree(layout, c);
    // Breadth-first order from the root; bfs[0] is the root.
    std::vector<int> bfs{t.root};
    for (size_t i = 0; i < bfs.size(); ++i) {
      for (int child : t.children[bfs[i]]) bfs.push_back(child);
    }
    // Ids of the previous chunk's transfers: up[r] = r's send to its parent, down[r] = the send
    // to r from its parent.
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> up(ranks, kNone), down(ranks, kNone);
    // The same ids for the last kConnectionWindow chunks (slot k mod kConnectionWindow).
    std::vector<uint32_t> up_hist(size_t(ranks) * kConnectionWindow, kNone), down_hist = up_hist;
    const auto flow = static_cast<uint32_t>(c);
    for (int64_t k = 0; k < chunks[c]; ++k) {
      const int64_t bytes = std::min(chunk_elems, part[c] - k * chunk_elems) * elem_bytes;
      for (size_t i = bfs.size() - 1; i > 0; --i) {  // up: children before parents
        const int r = bfs[i];
        const uint32_t id = dag.add(r, t.parent[r], bytes, flow);
        for (int child : t.children[r]) dag.depends(id, up[child]);
        const size_t w = size_t(k % kConnectionWindow);
        if (k >= kConnectionWindow) {
          // The slot chunk k - W took at the parent is free once the parent has forwarded
          // that chunk: up to its own parent, or, at the root, down to its children.
          const int p = t.parent[r];
          if (p != t.root) {
            dag.depends_on_post(id, up_hist[size_t(p) * kConnectionWindow + w]);
          } else {
            for (int c2 : t.children[p]) {
              dag.depends_on_post(id, down_hist[size_t(c2) * kConnectionWindow + w]);
            }
          }
        }
        up[r] = up_hist[size_t(r) * kConnectionWindow + w] = id;
      }
      for (size_t i = 1; i < bfs.size(); ++i) {  // down: parents before children
        const int r = bfs[i], from = t.parent[r];
        const uint32_t id = dag.add(from, r, bytes, flow);
        if (from == t.root) {
          for (int child : t.children[from]) dag.depends(id, up[child]);
        } else {
          dag.depends(id, down[from]);
        }
        const size_t w = size_t(k % kConnectionWindow);
        const size_t slot = size_t(r) * kConnectionWindow + w;
        if (k >= kConnectionWindow) {
          // The slot chunk k - W took at r is free once r has forwarded that chunk to its
          // children, or, at a leaf, once it has arrived.
          if (t.children[r].empty()) {
            dag.depends(id, down_hist[slot]);
          } else {
            for (int child : t.children[r]) {
              dag.depends_on_post(id, down_hist[size_t(child) * kConnectionWindow + w]);
            }
          }
        }
        down[r] = down_hist[slot] = id;
      }
    }
  }
  return dag;
}

}  // namespace fabricsim
