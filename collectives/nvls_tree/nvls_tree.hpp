// NCCL's NVLS-Tree AllReduce (NVLink SHARP inside each NVSwitch server, a tree between servers),
// as a transfer DAG.
//
// What NCCL runs (NCCL 2.19/2.20 src/device/all_reduce.h, RunWorkElement<ncclFuncAllReduce, ...,
// NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE>, RunWorkColl from 2.22 on; src/enqueue.cc,
// ncclPatternNvlsTree; the trees in src/graph/connect.cc, connectNvls): the buffer is cut into one
// slice per local GPU, its "head" h (local GPU h of every server). For each chunk of slice h:
//   - on every server the NVSwitch reduces the chunk over the server's G GPUs: head h loads it
//     through the multicast address with multimem.ld_reduce (the "reduce" warps, which receive
//     from treeDown: nvls.down, the in-node sum, and the network children);
//   - the heads h of all servers run a tree over the network: a head sends the sum of its
//     in-node sum and its children's partial sums to its parent head (treeUp); the root then
//     holds the full sum and (FanSymmetric<3>: receive from and send to treeDown) sends it to its
//     children; every other head (the "bcast" warps) receives it from its parent and forwards it
//     to treeDown: its children and nvls.down;
//   - sending to nvls.down is the multimem.st: the head stores the full sum once through the
//     multicast address and the NVSwitch writes it to all G GPUs of its server.
// Network sends go from GPU h of one server to GPU h of another: the same local index, so the
// same NIC rail. connectNvls gives NVLS channel c the tree c % 2 of NCCL's double binary tree
// (ncclGetDtree): here chunk k of every slice uses tree k % 2 (0 = btree_links, 1 =
// dtree_second_links over the servers, collectives/tree.hpp). NCCL alternates the trees channel
// by channel, each channel taking an equal part of every slice; alternating chunk by chunk
// splits each slice's bytes between the two trees the same way (exactly in half for an even
// number of equal chunks). NCCL also interleaves the heads' chunks within each channel's part
// (chunkOffset = elemOffset + headRank × chunkCount); a contiguous slice per head moves the
// same bytes over the same links.
//
// How it is modelled: as nvls.hpp (read its comment) inside each server, with the tree between:
// per chunk k of slice h (b bytes), on every server v (ranks server-major: rank = v × G + i):
//   - one loopback of b on each GPU i of v: its contribution up to the NVSwitch and its
//     multicast copy down; v's in-node sum is ready once all G are done;
//   - up: one send of b from head (v, h) to head (parent(v), h), after v's in-node sum and the
//     up sends of v's children;
//   - down: one send of b from head (v, h) to each child's head, once v has the full sum: the
//     root after its in-node sum and all its children's up sends, any other server after the
//     down send from its parent;
//   - one more loopback of b on head (v, h) once v has the full sum: the multimem.st (the store
//     up and the head's own multicast copy down), as nvls.hpp's head store.
// With one server there is no tree and the DAG is exactly nvls_allreduce's.
//
// Window (NCCL's NCCL_STEPS slots per connection): the loopbacks of chunk k on server v wait for
// v's store of chunk k − window (nvls.hpp's rule); a network send of chunk k waits for the same
// send (same source, destination and direction, up or down) of chunk k − window. When chunk
// k − window used the other tree and has no such send, it waits for the latest such send of an
// earlier chunk (for an even window, chunk k − window always uses the same tree, so the rule is
// exact; an odd window is the only case where this matters).
//
// Transfer ids: slice-major, then chunk; chunk k of slice h owns one block of
// B = S(G + 1) + 2(S − 1) consecutive ids (S servers):
//   - S × G loopbacks: server 0's GPUs 0 … G − 1, then server 1's, …;
//   - S − 1 up sends, one per non-root server, in reverse breadth-first order of the chunk's tree
//     from its root (children before parents);
//   - S − 1 down sends, one per non-root server (the send into it), in breadth-first order;
//   - S stores, one per server, server 0 first.
// Breadth-first order visits a node's child0, then its child1 (TreeLinks). Every transfer's flow
// id is its slice h (one queue pair per head pair), but a store's, G + h: as nvls.hpp, a store
// shares its head's NVLink with the contributions queued there instead of waiting behind them.
// (With one flow, a slice's stores of its first `window` chunks queue behind all of those
// chunks' contributions, so the next chunks' loopbacks wait for the whole window: the pipeline
// runs in waves, and 256 MiB on 2 x 8 H100 came out slower than 128 MiB.)
#pragma once

#include <cstdint>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// NVLS-Tree AllReduce of `count` elements of `elem_bytes` over `servers` NVSwitch servers of
/// `gpus_per_server` GPUs, as above. Slices and chunks as nvls_allreduce: slice h holds
/// count / G elements plus one for the first count % G slices; each slice is cut into chunks of
/// E = ⌊chunk_bytes / elem_bytes⌋ elements, the last shorter: max(1, ⌈slice / E⌉) chunks.
///
/// Closed forms (S servers, G GPUs each, D = count × elem_bytes):
///   - loopback bytes: S × (G + 1) × D (per server, nvls_allreduce's (G + 1) × D);
///   - network bytes: 2(S − 1) × D (per chunk one send up and one down per tree edge);
///   - per NIC (GPU h of server v, rail h): per chunk of slice h of b bytes, v sends and receives
///     b × deg_t(v), deg_t(v) = v's parent (0 or 1) plus children (0, 1 or 2) in the chunk's
///     tree t; so with an even number of chunks per slice and equal chunks, (deg_0(v) +
///     deg_1(v)) / 2 × slice bytes each way. For S = 2 every degree is 1: each direction of each
///     rail carries exactly its slice once. For an even S, the double binary tree makes every
///     server interior in at most one tree (tree.hpp), so deg_0 + deg_1 <= 4: at most twice
///     the slice per direction;
///   - critical path: with chunks <= window, 2H + 2 transfers, H = tree_height(S): the deepest
///     leaf's loopback, H up sends, H down sends, the deepest leaf's store (2 for S = 1, as
///     nvls_allreduce). For an even window, ⌈chunks / window⌉ × (2H + 2) for the slice with the
///     most chunks (chunk k + window reuses chunk k's tree and waits for its stores); for an odd
///     window at most that.
///
/// Throws std::invalid_argument for servers < 1, gpus_per_server < 2 (NVLS needs an NVSwitch
/// with at least two GPUs), count < 0, elem_bytes <= 0, chunk_bytes < elem_bytes, window < 1,
/// loopback lines outside 1 <= data <= line, or a DAG of more than 2^32 − 1 transfers.
/// Loopbacks carry their payload in lines of `loopback_line_bytes` holding
/// `loopback_line_data_bytes` each (⌈b / data⌉ × line bytes; nvls.hpp's kNvlsLineBytes /
/// kNvlsLineDataBytes give NVLS its 5/6 of the NVLink); network sends carry their payload as is.
/// The closed forms above are for the default 1/1.
TransferDag nvls_tree_allreduce(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                int64_t chunk_bytes, int window, int loopback_line_bytes = 1,
                                int loopback_line_data_bytes = 1);

/// The number of transfers nvls_tree_allreduce builds for these arguments, without building it:
/// Σ over slices of chunks × (S(G + 1) + 2(S − 1)); saturates at INT64_MAX. Throws
/// std::invalid_argument for the same bad arguments as nvls_tree_allreduce (but not for the
/// count itself).
int64_t nvls_tree_transfers(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                            int64_t chunk_bytes);

}  // namespace fabricsim
