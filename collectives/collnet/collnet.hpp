// NCCL's CollNet AllReduce (in-network reduction: InfiniBand SHARP through the CollNet plugin),
// CollNetChain and CollNetDirect, as transfer DAGs.
//
// What NCCL runs (NCCL 2.19/2.20 src/device/all_reduce.h, RunWorkElement<ncclFuncAllReduce, ...,
// NCCL_ALGO_COLLNET_CHAIN / NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE>; the peers in
// src/graph/connect.cc, ncclTopoPreset and connectCollNet; the chunk sizes in src/enqueue.cc):
//
// CollNetChain. Each channel c has a chain over the server's G GPUs, collNetIntra[0 … G − 1]
// (the channel's CollNet graph, init.cc: pattern NCCL_TOPO_PATTERN_TREE). ncclTopoPreset sets
// collnetChain.up = collNetIntra[i − 1] (collNetIntra[0]: nRanks, the network) and down[0] =
// collNetIntra[i + 1]. The search (src/graph/search.cc) enters a server from a NIC at the GPU
// closest to it and, in an NVSwitch server, for every pattern but the ring and split / balanced
// trees tries GPU (index + 1) mod G first (ncclTopoSearchNextGpuSort), so channel c's chain is
// h, h + 1, …, h − 1 (mod G) with head h (the GPU whose NIC the channel uses: here h = c mod G).
// Per chunk, half the threads reduce up the chain (connIndex 1: receive from down[0], add, send
// to up): the far end h − 1 sends to h − 2, …, h + 1 sends to h, and the head sends the sum to
// the network; the other half broadcast down it (connIndex 0): the head receives the servers'
// sum from the network and forwards it to h + 1, which forwards it to h + 2, …, to h − 1. Up
// and down are distinct connections.
//
// CollNetDirect. Every GPU whose NIC a CollNet channel uses is a head (connectCollNet: heads =
// the distinct collNetIntra[0]; with a NIC per GPU, all G: nHeads = G). Each loop step of a
// channel is cut into nHeads chunks, chunk h for head h. The warps of each GPU:
//   - scatter (connIndex 1, "up" = the other heads): sends chunk h of its buffer to head h, for
//     every head h but itself (directScatter when buffers are registered: written straight
//     into the head's buffer);
//   - reduce (heads; connIndex 1, receive from "down" = every other local GPU): adds the G − 1
//     chunks it received to its own and sends the sum to the network (direct->out = nRanks);
//   - bcast (heads; connIndex 0): receives the servers' sum from the network and sends it to
//     every other local GPU (recvCopyDirectSend);
//   - gather (connIndex 0, from "up"): receives each other head's result into its buffer.
// connectCollNet builds CollNetDirect only for at most NCCL_MAX_DIRECT_ARITY + 1 = 8 GPUs a
// server (src/include/device.h): a model of G > 8 has no NCCL counterpart.
//
// The network part: the head's CollNet send goes up its NIC link to the first switch, SHARP
// reduces it with the other servers' heads' (same channel or slice, same chunk), and the sum
// comes back down the same NIC link. It is modelled as TransferDag::add_nic_loopback on the
// head: the chunk up the NIC link to the first switch and back down it, on the packet network.
// The cross-server reduction is a DAG join: a 0-duration compute task (on rank 0) that waits
// for the loopbacks of that chunk on every server; what follows the network part (the
// broadcast back into each server) waits for the join. The links of the aggregation tree
// above the first switch (one chunk each way per tree edge) and the switch's reduction time
// are not modelled; the loopback's down half starts as soon as its up half has arrived rather
// than once every server's has (the join delays only what follows).
//
// Both are modelled per chunk k (b bytes) of one channel's part (Chain) or one head's slice
// (Direct), on every server v (ranks server-major: rank = v × G + i; every GPU has its own NIC):
//   Chain, head h = c mod G, chain position p = GPU (h + p) mod G:
//     - up: position p sends b to position p − 1 (p = G − 1 … 1), after position p + 1's up
//       send (the partial sum it adds to);
//     - the head's NIC loopback of b, after position 1's up send;
//     - the join, after every server's loopback;
//     - down: position p sends b to p + 1 (p = 0 … G − 2): the head after the join, the others
//       after the down send into them.
//   Direct, slice h (head h):
//     - scatter: every local GPU i ≠ h sends b to h (no dependency within the chunk);
//     - head h's NIC loopback of b, after those G − 1 sends;
//     - the join, after every server's loopback;
//     - bcast: head h sends b to every local GPU i ≠ h, after the join.
// Window (NCCL_STEPS slots per connection, transfer_dag.hpp kConnectionWindow): the send of
// chunk k on a connection waits for the same connection's send of chunk k − window, and the
// loopback of chunk k waits for the same head's loopback of chunk k − window.
//
// Simplifications. NCCL interleaves the channels' (Chain) and heads' (Direct) chunks through
// the buffer (offset = gridOffset + bid × chunkSize, resp. (bid × nHeads + headRank) ×
// chunkSize); a contiguous part per channel or slice per head moves the same bytes over the same
// links. Direct's channels are not modelled: every head's slice is one pipeline of chunks (all
// of a chunk's transfers on one connection each), so `window` is the chunks a head has in
// flight (NCCL: channels × NCCL_STEPS). NCCL's scatter starts each GPU's round of sends at head
// (rank % G) % nHeads (connectCollNet's "shift", so that the GPUs do not all send to the same
// head at once); here every GPU's G − 1 sends of a chunk are posted together.
//
// Flow ids (the connection; a loopback's picks the head's NIC, its own with one NIC a GPU):
//   Chain: up sends c (connIndex 1), down sends channels + c (connIndex 0), loopbacks c;
//   Direct: scatter sends G + h (connIndex 1), bcast sends h (connIndex 0), loopbacks h.
// So a pair of GPUs that carries two kinds of send (Direct's i → j: i's scatter of slice j and
// i's bcast of slice i) has one connection for each, as NCCL.
//
// Transfer ids: channel-major (Chain) or slice-major (Direct), then chunk; every chunk owns one
// block of B = S(2G − 1) + 1 consecutive ids:
//   - per server v (server 0 first): its G − 1 up sends (Chain: from position G − 1 first down
//     to position 1) or scatter sends (Direct: from local GPU 0, 1, … skipping h), then its
//     head's NIC loopback;
//   - the join (a compute task on rank 0);
//   - per server v: its G − 1 down sends (Chain: from position 0 first) or bcast sends (Direct:
//     to local GPU 0, 1, … skipping h).
//
// Chunk sizes NCCL picks (src/enqueue.cc, computeColl; the caller passes chunk_bytes):
//   Chain: min(256 KiB, SIMPLE buffer / NCCL_STEPS × chunkSteps), halved while bytes /
//   (nChannels × chunk) < depth × 64 and chunk > 128 KiB, then while < depth × 8 and chunk >
//   64 KiB, then while < depth and chunk > 32 KiB, with depth = collnetChain.depth = nRanks /
//   nNodes (connect.cc);
//   Direct: the general start, SIMPLE buffer / NCCL_STEPS × chunkSteps (no 256 KiB cap),
//   halved while bytes / (nChannels × nHeads × chunk) < depth × 64 and chunk > 128 KiB, then
//   while < depth × 8 and chunk > 64 KiB, then while < depth × 8 and chunk > 32 KiB, with
//   depth = collnetDirect.depth = 2 (connectCollNet, a GPU with peers).
#pragma once

#include <cstdint>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// CollNetChain AllReduce of `count` elements of `elem_bytes` over `servers` servers of
/// `gpus_per_server` GPUs, as above. The buffer is split across `channels` channels in
/// contiguous parts (part c holds count / channels elements plus one for the first
/// count % channels channels); channel c's head is local GPU c mod G. Each part is cut into
/// chunks of E = ⌊chunk_bytes / elem_bytes⌋ elements, the last shorter: max(1, ⌈part / E⌉)
/// chunks (an empty part gives one chunk of 0 bytes).
///
/// Closed forms (S servers, G GPUs each, D = count × elem_bytes, P_c = part c's bytes):
///   - NIC loopback bytes: S × D; head h's loopbacks carry Σ P_c over its channels (c mod G =
///     h): D × (channels with head h) / channels for equal parts;
///   - NVLink (GPU-to-GPU) bytes: 2(G − 1) × S × D. Per channel GPU i sends P_c up unless it is
///     the head (c mod G) and P_c down unless it is the far end ((c − 1) mod G), and receives
///     the same: with channels = G and equal parts, 2(G − 1)/G × D each way per GPU;
///   - critical path, in transfers (the join, a compute task, not counted): 2G − 1 for a chunk
///     (G − 1 up, the loopback, G − 1 down) and 2G − 1 + ⌊(chunks − 1) / window⌋ for a channel
///     of `chunks` chunks (chunk k waits for chunk k − window on every connection).
///
/// `join_delay_ps`: the join waits this long after the last server's loopback of a chunk, and
/// the first sends after it start at least this long after it (their step latency counts
/// within it): SHARP's reduction pass in the switch and the result's way to the heads, beyond
/// what the loopbacks themselves take (collnet_join_ps, plan.hpp).
///
/// Throws std::invalid_argument for servers < 1, gpus_per_server < 1, servers × G < 2 or
/// > INT32_MAX, count < 0, elem_bytes <= 0, chunk_bytes < elem_bytes, channels < 1, window < 1,
/// join_delay_ps < 0, or a DAG of more than 2^32 − 1 transfers.
TransferDag collnet_chain_allreduce(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                    int64_t chunk_bytes, int channels, int window,
                                    int64_t join_delay_ps = 0);

/// CollNetDirect AllReduce (every GPU a head, nHeads = G) of `count` elements of `elem_bytes`
/// over `servers` servers of `gpus_per_server` GPUs, as above. Slice h (head h) holds count / G
/// elements plus one for the first count % G slices, cut into chunks as collnet_chain_allreduce's
/// parts.
///
/// Closed forms (S, G, D as above, L_h = slice h's bytes):
///   - NIC loopback bytes: S × D; head h's loopbacks carry L_h (D / G for equal slices);
///   - NVLink bytes: 2(G − 1) × S × D. GPU i sends D − L_i to the other heads and L_i to each
///     of its G − 1 peers, and receives the same: 2(G − 1)/G × D each way for equal slices;
///   - critical path, in transfers (join not counted): 3 for a chunk (scatter send, loopback,
///     bcast send; 1 for G = 1) and 3 + ⌊(chunks − 1) / window⌋ for a slice of `chunks`
///     chunks.
///
/// Throws std::invalid_argument for the bad arguments of collnet_chain_allreduce but channels.
TransferDag collnet_direct_allreduce(int servers, int gpus_per_server, int64_t count,
                                     int elem_bytes, int64_t chunk_bytes, int window,
                                     int64_t join_delay_ps = 0);

/// The number of transfers (the joins included) collnet_chain_allreduce builds for these
/// arguments, without building it: Σ over channels of chunks × (S(2G − 1) + 1); saturates at
/// INT64_MAX. Throws std::invalid_argument for the same bad arguments as
/// collnet_chain_allreduce (but not for the count itself, nor the window).
int64_t collnet_chain_transfers(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                int64_t chunk_bytes, int channels);

/// The number of transfers (the joins included) collnet_direct_allreduce builds: Σ over slices
/// of chunks × (S(2G − 1) + 1); saturates at INT64_MAX. Throws as collnet_chain_transfers.
int64_t collnet_direct_transfers(int servers, int gpus_per_server, int64_t count, int elem_bytes,
                                 int64_t chunk_bytes);

}  // namespace fabricsim
