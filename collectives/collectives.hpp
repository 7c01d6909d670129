// Transfer-DAG builders for the nccl-tests collectives other than all-reduce (ring_allreduce is
// in transfer_dag.hpp), and Rabenseifner's halving-doubling all-reduce.
//
// Every builder is a pure function: `ranks` ranks, a buffer of `count` elements of
// `elem_bytes` bytes each (which buffer `count` measures follows nccl-tests' size for that
// collective and is stated per function), and a TransferDag whose transfers carry bytes.
// Where a buffer is cut into pieces, piece i of P holds count/P elements plus one for the first
// count % P pieces, so sizes differ by at most one element (pieces may be empty when count < P).
// Every transfer uses flow 0. Transfer ids are given per function so tests and tools can map an
// id back to (step, rank).
//
// Sources: NCCL's ring algorithms (src/device/all_gather.h, reduce_scatter.h, broadcast.h,
// reduce.h, sendrecv.h); Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", JPDC 2009; Thakur, Rabenseifner & Gropp, "Optimization of
// collective communication operations in MPICH", IJHPCA 2005 (recursive halving/doubling and
// the handling of a non-power-of-two rank count).
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// Ring AllGather (NCCL ring; Patarasuk & Yuan 2009). `count` = elements of the whole output
/// buffer (nccl-tests' all_gather_perf size is the output size); rank r contributes piece r of
/// N. In each of N−1 steps s every rank r sends piece (r − s) mod N to rank (r+1) mod N; step s
/// of rank r depends on step s−1 of rank r−1 (the piece it forwards has arrived).
/// Transfer id = s × N + r; N(N−1) transfers; each rank sends (N−1)/N of the output buffer;
/// the critical path is N−1 transfers long.
/// Throws std::invalid_argument for ranks < 2, count < 0 or elem_bytes <= 0.
TransferDag ring_allgather(int ranks, int64_t count, int elem_bytes);

/// Ring ReduceScatter (NCCL ring; the first half of ring_allreduce). `count` = elements of each
/// rank's input buffer (nccl-tests' reduce_scatter_perf size), cut into N pieces. In each of N−1
/// steps s every rank r sends piece (r − s) mod N, reduced with what it has received, to rank
/// (r+1) mod N; step s of rank r depends on step s−1 of rank r−1. Afterwards rank r holds piece
/// (r+1) mod N fully reduced. Transfer id = s × N + r; N(N−1) transfers; each rank sends
/// (N−1)/N of the input buffer; critical path N−1 transfers.
/// Throws std::invalid_argument for ranks < 2, count < 0 or elem_bytes <= 0.
TransferDag ring_reducescatter(int ranks, int64_t count, int elem_bytes);

/// Pipelined chain Broadcast (NCCL's ring broadcast). `count` = elements of the buffer, cut into
/// `chunks` pieces. Hop h (0 ≤ h < N−1) is rank (root+h) mod N → (root+h+1) mod N. Chunk k on
/// hop h depends on chunk k on hop h−1 (it has arrived) and on the slot chunk k −
/// kConnectionWindow took at hop h's receiver (at most that many chunks in flight per link, as
/// NCCL's buffer slots): free once the receiver has forwarded that chunk (posted it on hop h+1,
/// TransferDag::depends_on_post), or, on the last hop, once it has arrived. Transfer id =
/// k × (N−1) + h; chunks × (N−1) transfers; every rank but the last in the chain sends the
/// whole buffer once; critical path N − 1 + ⌊(chunks − 1) / kConnectionWindow⌋ transfers
/// (counting a wait for a post as no transfer).
/// Throws std::invalid_argument for ranks < 2, count < 0, elem_bytes <= 0, root outside
/// [0, ranks) or chunks < 1.
TransferDag ring_broadcast(int ranks, int64_t count, int elem_bytes, int root, int chunks);

/// Pipelined chain Reduce (NCCL's ring reduce): broadcast's chain with the root moved from its
/// head to its tail, so data still flows in the ring's direction r → r+1 and ends at the root:
/// hop h (0 ≤ h < N−1) is rank (root+1+h) mod N → (root+2+h) mod N; each rank adds its own
/// contribution to the chunk before forwarding it. Dependencies, ids, counts and critical path
/// as ring_broadcast. Throws as ring_broadcast.
TransferDag ring_reduce(int ranks, int64_t count, int elem_bytes, int root, int chunks);

/// AllToAll (nccl-tests alltoall_perf: NCCL's grouped send/recv to every peer). `count` =
/// elements of each rank's buffer, cut into N blocks; rank r sends block p to every rank p ≠ r,
/// all at once (no dependencies). Transfer id = r × (N−1) + (d − 1) for the peer p = (r+d) mod N,
/// 1 ≤ d < N; N(N−1) transfers; each rank sends (N−1)/N of its buffer; critical path 1.
/// Throws std::invalid_argument for ranks < 2, count < 0 or elem_bytes <= 0.
TransferDag alltoall(int ranks, int64_t count, int elem_bytes);

/// SendRecv (nccl-tests sendrecv_perf's ring pattern): every rank r sends its whole buffer of
/// `count` elements to rank (r+1) mod N, all at once. Transfer id = r; N transfers.
/// Throws std::invalid_argument for ranks < 2, count < 0 or elem_bytes <= 0.
TransferDag sendrecv(int ranks, int64_t count, int elem_bytes);

/// What a transfer of a reduction DAG carries: pieces [first, last) of the buffer cut into the
/// plan's `pieces`, either reduced into the receiver's copy (`reduce`) or overwriting it.
struct PieceSpan {
  int32_t first = 0;
  int32_t last = 0;
  bool reduce = false;
};

/// A DAG together with the pieces each transfer carries (spans[id]), for checking data flow.
struct HalvingDoublingPlan {
  TransferDag dag;
  int pieces = 0;  ///< the buffer is cut into this many pieces (P, the largest power of two ≤ N)
  std::vector<PieceSpan> spans;
};

/// Rabenseifner's AllReduce (Thakur, Rabenseifner & Gropp 2005): recursive-halving
/// reduce-scatter, then recursive-doubling all-gather, among P = 2^⌊log2 N⌋ ranks. `count` =
/// elements of the buffer, cut into P pieces.
/// With N not a power of two, the R = N − P extra ranks are the even ranks 0, 2, …, 2R−2: each
/// first sends its whole buffer to rank + 1 (which reduces it in), and receives the whole result
/// from it at the end. The P remaining ranks get virtual ranks q (rank 2q+1 for q < R, else
/// q + R). Halving step k (distance d = P/2^(k+1)): q exchanges with q XOR d, sending the half of
/// its current piece range it does not keep (the lower q keeps the lower half); after log2 P
/// steps q holds piece q reduced. Doubling step k (distance 2^k): q sends its range of 2^k pieces
/// to q XOR d. Each send of a rank depends on that rank's receive and its own send in the
/// previous step (as MPI_Sendrecv steps run; the send carries data from every earlier receive),
/// and on the peer's receive in the previous step (the peer is in the exchange only then: MPI's
/// rendezvous protocol for large messages).
/// Transfer ids: the R pre-step sends (by extra rank), then per step the P sends in virtual-rank
/// order, then the R post-step sends. 2P·log2 P + 2R transfers; with N a power of two each rank
/// sends 2(N−1)/N of the buffer and the critical path is 2·log2 N transfers (2·log2 P + 2
/// otherwise). Throws std::invalid_argument for ranks < 2, count < 0 or elem_bytes <= 0.
TransferDag halving_doubling_allreduce(int ranks, int64_t count, int elem_bytes);

/// halving_doubling_allreduce with the pieces each transfer carries. Throws as it does.
HalvingDoublingPlan halving_doubling_allreduce_plan(int ranks, int64_t count, int elem_bytes);

}  // namespace fabricsim
