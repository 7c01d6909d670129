// NCCL's Tree AllReduce as a transfer DAG: the double binary tree between servers, a chain of
// GPUs inside each server, reduce up and broadcast down, pipelined chunk by chunk.
//
// Sources: NCCL src/graph/trees.cc (ncclGetBtree, ncclGetDtree) for the two trees, and
// src/device/all_reduce.h (runTreeUpDown) for the up-then-down schedule; Sanders, Speck &
// Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan", Parallel
// Computing 2009, for why two trees: with an even node count every node is interior (has
// children) in at most one of them, so splitting the data between both keeps every node's send
// load near one copy of the data per direction.
#pragma once

#include <cstdint>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// One node's neighbours in a tree over nodes 0 … nodes−1; −1 = none.
/// child0 and child1 are NCCL's down0/down1 slots: in btree_links, child0 is the child numbered
/// below the node and child1 the one above, so the root's only child is child1. The second tree
/// relabels the btree and keeps the slots (a mirrored child0 is numbered above its parent).
struct TreeLinks {
  int parent = -1;
  int child0 = -1;
  int child1 = -1;
};

/// NCCL's binary tree (ncclGetBtree, NCCL src/graph/trees.cc) over `nodes` nodes, rooted at 0.
/// For node r > 0 with lowest set bit b: parent (r XOR b) OR 2b, or r XOR b if that is
/// >= nodes; child0 r − b/2 and child1 the first of r + b/2, r + b/4, … that is < nodes (none
/// when b = 1). The root's only child is 2^(⌈log2 nodes⌉ − 1). For 14 nodes:
/// 0→8, 8→{4,12}, 4→{2,6}, 12→{10,13}, 2→{1,3}, 6→{5,7}, 10→{9,11}.
/// Height ⌈log2 nodes⌉ (tree_height). Throws std::invalid_argument for nodes < 1 or node
/// outside [0, nodes).
TreeLinks btree_links(int nodes, int node);

/// The second tree of NCCL's double binary tree (ncclGetDtree): for an even node count the
/// mirror of btree_links (node r plays btree node nodes−1−r; root nodes−1), for an odd count
/// the btree shifted by one (node r plays btree node (r−1) mod nodes; root 1 when nodes > 1).
/// With an even count every node is a leaf in at least one of the two trees (btree interior
/// nodes are the even ones, mirrored interior nodes the odd ones); with an odd count >= 3 only
/// node 0 is interior in both. Throws as btree_links.
TreeLinks dtree_second_links(int nodes, int node);

/// Height in edges (longest root-to-leaf path) of btree_links over `nodes` nodes, which is also
/// that of dtree_second_links (a relabelling): ⌈log2 nodes⌉, 0 for one node. Throws
/// std::invalid_argument for nodes < 1.
int tree_height(int nodes);

/// Ranks are numbered server-major: rank = server × gpus_per_server + local GPU.
struct TreeLayout {
  int servers;
  int gpus_per_server;
};

/// NCCL's Tree AllReduce. The buffer of `count` elements of `elem_bytes` bytes is split across
/// `channels` channels in contiguous parts (part c holds count/channels elements plus one for
/// the first count % channels channels). Channel c runs on tree c % 2 between servers
/// (0 = btree_links, 1 = dtree_second_links, over `servers` nodes). Inside each server the G
/// GPUs form a chain h, h+1, …, h−1 (mod G) with head h = c mod G; the head is the server's node
/// in the inter-server tree. So in channel c, rank (v, h+p mod G) has as parent its chain
/// predecessor (p > 0) or the head of v's parent server (p = 0), and as children its chain
/// successor and (heads only) the heads of v's child servers. The root rank is the head of the
/// tree's root server.
///
/// Each part is cut into chunks of E = ⌊chunk_bytes / elem_bytes⌋ elements, the last one
/// shorter: max(1, ⌈part / E⌉) chunks, so an empty part still gives one chunk of 0 bytes.
/// Per chunk, REDUCE up then BROADCAST down: every rank but the root sends the chunk, reduced
/// with what it received from its children, to its parent; the root, once it has received the
/// chunk from all its children, sends the result to each child, and every rank forwards it to
/// its children once it has received it from its parent. A send of chunk k depends on every
/// receive its sender needs for chunk k and on the slot chunk k − kConnectionWindow took at its
/// receiver: like NCCL's NCCL_STEPS = 8 buffer slots per connection, at most 8 chunks are in
/// flight on a connection, and a slot is free once the receiver has forwarded its chunk
/// (TransferDag::depends_on_post on the receiver's send of chunk k − W: up, its send to its
/// parent; at the root, its sends down; down, its sends to its children), or, at a leaf of the
/// broadcast, once the chunk has arrived. Every transfer's flow id is its channel.
///
/// Transfer ids: channel-major, then chunk; channel c chunk k owns the block of 2(N−1) ids
/// starting at 2(N−1) × (chunks of channels 0 … c−1 + k), with N = servers × G ranks. The first
/// N−1 ids of a block are the up sends (one per non-root rank, to its parent), in reverse
/// breadth-first order from the root; the last N−1 the down sends (one per non-root rank, from
/// its parent), in breadth-first order. Breadth-first order visits a rank's chain successor,
/// then its child servers' heads (child0 slot, then child1).
///
/// Closed forms: per channel per chunk each rank sends the chunk once up (but the root) and once
/// to each child down, so total bytes = 2(N−1) × count × elem_bytes. The rank tree of a channel
/// has height H = tree_height(servers) + G − 1 (the chain tail of a deepest server), and the
/// critical path is 2H + ⌊(chunks − 1) / kConnectionWindow⌋ transfers for a channel of `chunks`
/// chunks, counting a wait for a post as no transfer (chunk k up a rank at height h leaves as
/// transfer h + 1 + ⌊k / W⌋ on the path; down to depth d as H + d + 1 + ⌊k / W⌋ − 1), so the
/// DAG's is 2(⌈log2 servers⌉ + G − 1) + ⌊(chunks of channel 0 − 1) / 8⌋; for G = 1 and one
/// chunk 2⌈log2 servers⌉.
///
/// Throws std::invalid_argument for servers < 1, gpus_per_server < 1, servers × G < 2,
/// count < 0, elem_bytes <= 0, channels < 1, chunk_bytes < elem_bytes, or a DAG that would need
/// more than 2^32 − 1 transfers.
TransferDag tree_allreduce(const TreeLayout& layout, int64_t count, int elem_bytes, int channels,
                           int64_t chunk_bytes);

}  // namespace fabricsim
