#include "collectives/nvls_tree/nvls_tree.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/builtin_algorithms.hpp"
#include "collectives/nvls.hpp"
#include "collectives/tree.hpp"

namespace fabricsim {

namespace {

[[noreturn]] void fail(const char* who, const char* why) {
  throw std::invalid_argument(std::string(who) + ": " + why);
}

void check_args(const char* who, int servers, int gpus_per_server, int64_t count, int elem_bytes,
                int64_t chunk_bytes) {
  if (servers < 1) fail(who, "servers must be >= 1");
  if (gpus_per_server < 2) fail(who, "needs at least 2 GPUs per server (an NVSwitch)");
  if (count < 0) fail(who, "negative count");
  if (elem_bytes <= 0) fail(who, "elem_bytes must be > 0");
  if (chunk_bytes < elem_bytes) fail(who, "chunk_bytes must be >= elem_bytes");
}

int64_t slice_elems(int64_t count, int gpus, int h) {
  return count / gpus + (h < count % gpus ? 1 : 0);
}

int64_t chunks_of(int64_t elems, int64_t chunk_elems) {
  return std::max<int64_t>(1, (elems + chunk_elems - 1) / chunk_elems);
}

// One of the two trees between servers, with the breadth-first order from its root.
struct ServerTree {
  int root = -1;
  std::vector<TreeLinks> links;
  std::vector<int> bfs;  // bfs[0] is the root; a node's child0 before its child1
};

ServerTree server_tree(int servers, int tree) {
  ServerTree t;
  t.links.reserve(static_cast<size_t>(servers));
  for (int v = 0; v < servers; ++v) {
    t.links.push_back(tree == 0 ? btree_links(servers, v) : dtree_second_links(servers, v));
    if (t.links.back().parent < 0) t.root = v;
  }
  t.bfs.push_back(t.root);
  for (size_t i = 0; i < t.bfs.size(); ++i) {
    const TreeLinks& l = t.links[static_cast<size_t>(t.bfs[i])];
    for (int c : {l.child0, l.child1}) {
      if (c >= 0) t.bfs.push_back(c);
    }
  }
  return t;
}

// The sends made so far on one connection of the current slice, as (chunk, id), and how many
// of them belong to chunks at or before the last window limit asked for.
struct Connection {
  std::vector<std::pair<int64_t, uint32_t>> sends;
  size_t passed = 0;
};

// The up and down connections of both trees: up[t][v] = v's to its parent in tree t, down[t][v]
// = the one into v from its parent. A pair of servers in the same direction shares one
// connection across the trees.
struct Connections {
  std::vector<Connection> all;
  std::vector<int> up[2], down[2];
};

Connections connections(int servers, const ServerTree (&trees)[2]) {
  Connections c;
  std::map<std::tuple<int, int, int>, int> index;  // (src, dst, 0 = up / 1 = down)
  auto connection = [&](int src, int dst, int kind) {
    auto [it, added] = index.try_emplace({src, dst, kind}, static_cast<int>(index.size()));
    return it->second;
  };
  for (int t = 0; t < 2; ++t) {
    c.up[t].assign(static_cast<size_t>(servers), -1);
    c.down[t].assign(static_cast<size_t>(servers), -1);
    for (int v = 0; v < servers; ++v) {
      const int p = trees[t].links[static_cast<size_t>(v)].parent;
      if (p < 0) continue;
      c.up[t][static_cast<size_t>(v)] = connection(v, p, 0);
      c.down[t][static_cast<size_t>(v)] = connection(p, v, 1);
    }
  }
  c.all.resize(index.size());
  return c;
}

// Makes send `id` of chunk k wait for the latest send on `conn` of a chunk <= k − window, and
// records it.
void window_send(TransferDag& dag, Connection& conn, uint32_t id, int64_t k, int window) {
  while (conn.passed < conn.sends.size() && conn.sends[conn.passed].first <= k - window) {
    ++conn.passed;
  }
  if (conn.passed > 0) dag.depends(id, conn.sends[conn.passed - 1].second);
  conn.sends.emplace_back(k, id);
}

}  // namespace

int64_t nvls_tree_transfers(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                            int64_t chunk_bytes) {
  check_args("nvls_tree_transfers", servers, gpus_per_server, count, elem_bytes, chunk_bytes);
  const int64_t s = servers, g = gpus_per_server;
  const int64_t chunk_elems = chunk_bytes / elem_bytes;
  const int64_t block = s * (g + 1) + 2 * (s - 1);  // < 2^63: s, g < 2^31
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t transfers = 0;
  for (int h = 0; h < gpus_per_server; ++h) {
    const int64_t chunks = chunks_of(slice_elems(count, gpus_per_server, h), chunk_elems);
    if (chunks > (kMax - transfers) / block) return kMax;
    transfers += chunks * block;
  }
  return transfers;
}

TransferDag nvls_tree_allreduce(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                int64_t chunk_bytes, int window, int loopback_line_bytes,
                                int loopback_line_data_bytes) {
  const char* const who = "nvls_tree_allreduce";
  check_args(who, servers, gpus_per_server, count, elem_bytes, chunk_bytes);
  if (window < 1) fail(who, "window must be >= 1");
  if (loopback_line_data_bytes < 1 || loopback_line_bytes < loopback_line_data_bytes) {
    fail(who, "loopback lines must carry 1 to line_bytes bytes");
  }
  const auto framed = [&](int64_t b) {
    return (b + loopback_line_data_bytes - 1) / loopback_line_data_bytes * loopback_line_bytes;
  };
  if (nvls_tree_transfers(servers, gpus_per_server, count, elem_bytes, chunk_bytes) >
      std::numeric_limits<uint32_t>::max()) {
    fail(who, "more than 2^32 - 1 transfers");
  }
  // Every one of the G slices has at least one chunk of S(G + 1) transfers, so here
  // S × G <= (2^32 − 1) / (G + 1) < 2^31: every rank fits an int32_t.

  const int g = gpus_per_server;
  const int64_t chunk_elems = chunk_bytes / elem_bytes;
  const ServerTree trees[2] = {server_tree(servers, 0), server_tree(servers, 1)};
  Connections conns = connections(servers, trees);
  auto rank = [g](int v, int i) { return static_cast<int32_t>(int64_t{v} * g + i); };

  TransferDag dag;
  std::vector<uint32_t> up(static_cast<size_t>(servers)), down(up);
  std::vector<std::vector<uint32_t>> stores(static_cast<size_t>(servers));  // [v][chunk]
  for (int h = 0; h < g; ++h) {
    const int64_t slice = slice_elems(count, g, h);
    const int64_t chunks = chunks_of(slice, chunk_elems);
    const auto flow = static_cast<uint32_t>(h);
    for (auto& s : stores) s.clear();
    for (auto& c : conns.all) c = Connection{};
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t bytes = std::min(chunk_elems, slice - k * chunk_elems) * elem_bytes;
      const int t = static_cast<int>(k % 2);
      const ServerTree& tree = trees[t];
      const uint32_t first = static_cast<uint32_t>(dag.size());
      // In-node: every GPU's contribution up and its multicast copy down.
      for (int v = 0; v < servers; ++v) {
        for (int i = 0; i < g; ++i) {
          const uint32_t id = dag.add_loopback(rank(v, i), framed(bytes), flow);
          if (k >= window) dag.depends(id, stores[static_cast<size_t>(v)][size_t(k - window)]);
        }
      }
      auto wait_in_node_sum = [&](uint32_t id, int v) {
        const uint32_t v_first = first + static_cast<uint32_t>(int64_t{v} * g);
        for (int i = 0; i < g; ++i) dag.depends(id, v_first + static_cast<uint32_t>(i));
      };
      auto wait_children = [&](uint32_t id, int v) {
        const TreeLinks& l = tree.links[static_cast<size_t>(v)];
        for (int c : {l.child0, l.child1}) {
          if (c >= 0) dag.depends(id, up[static_cast<size_t>(c)]);
        }
      };
      // Reduce up the tree: children before parents.
      for (size_t i = tree.bfs.size() - 1; i > 0; --i) {
        const int v = tree.bfs[i], p = tree.links[static_cast<size_t>(v)].parent;
        const uint32_t id = dag.add(rank(v, h), rank(p, h), bytes, flow);
        wait_in_node_sum(id, v);
        wait_children(id, v);
        window_send(dag, conns.all[static_cast<size_t>(conns.up[t][size_t(v)])], id, k, window);
        up[static_cast<size_t>(v)] = id;
      }
      // Broadcast the full sum down: parents before children.
      for (size_t i = 1; i < tree.bfs.size(); ++i) {
        const int v = tree.bfs[i], p = tree.links[static_cast<size_t>(v)].parent;
        const uint32_t id = dag.add(rank(p, h), rank(v, h), bytes, flow);
        if (p == tree.root) {
          wait_in_node_sum(id, p);
          wait_children(id, p);
        } else {
          dag.depends(id, down[static_cast<size_t>(p)]);
        }
        window_send(dag, conns.all[static_cast<size_t>(conns.down[t][size_t(v)])], id, k, window);
        down[static_cast<size_t>(v)] = id;
      }
      // Every head stores the full sum through the multicast address (multimem.st).
      for (int v = 0; v < servers; ++v) {
        const uint32_t store =
            dag.add_loopback(rank(v, h), framed(bytes), flow + static_cast<uint32_t>(g));
        if (v == tree.root) {
          wait_in_node_sum(store, v);
          wait_children(store, v);
        } else {
          dag.depends(store, down[static_cast<size_t>(v)]);
        }
        stores[static_cast<size_t>(v)].push_back(store);
      }
    }
  }
  return dag;
}

namespace builtin {

TransferDag nvls_tree_dag(const RankLayout& layout, const CollectiveSpec& spec,
                          int64_t buffer_count, int elem_bytes) {
  const int g = layout.gpus_per_server;
  if (layout.ranks % g != 0) {
    throw std::invalid_argument("build_collective: nvls_tree joins whole servers");
  }
  const int64_t chunk = spec.chunk_bytes > 0 ? std::max<int64_t>(spec.chunk_bytes, elem_bytes)
                                             : std::max<int64_t>(buffer_count, 1) * elem_bytes;
  // NVLS's multimem traffic holds the NVLink 6/5 of its payload's time (nvls.hpp); the tree's
  // network sends are Simple's, unframed.
  return nvls_tree_allreduce(layout.servers(), g, buffer_count, elem_bytes, chunk, kNvlsWindow,
                             kNvlsLineBytes, kNvlsLineDataBytes);
}

int64_t nvls_tree_dag_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                                int elem_bytes) {
  const int64_t chunk = std::max<int64_t>(spec.chunk_bytes, elem_bytes);
  return nvls_tree_transfers(layout.servers(), std::max(2, layout.gpus_per_server),
                             bytes / elem_bytes, elem_bytes, chunk);
}

}  // namespace builtin

}  // namespace fabricsim
