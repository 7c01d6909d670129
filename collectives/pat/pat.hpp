// NCCL's PAT algorithm (Parallel Aggregated Trees, NCCL 2.23+) for AllGather and ReduceScatter
// with one GPU per server, as transfer DAGs.
//
// Sources: S. Jeaugey, "PAT: a new algorithm for all-gather and reduce-scatter operations at
// scale", arXiv:2506.20252 (2025), for the algorithm; NCCL src/include/collectives.h
// (PatAGAlgorithm, PatRSAlgorithm) for the aggregation factor, src/enqueue.cc
// (calcCollChunking) for the chunk size, src/proxy.cc (ncclPatternPatUp, ncclPatternPatDown:
// one connection per dimension, to the peer at distance 2^d).
//
// PAT is Bruck's all-gather with its dimensions taken in the reverse order. Each rank's piece is
// broadcast along a binomial tree shifted to start at that rank, the farthest dimension first:
// distance 2^(D−1), then 2^(D−2), …, then 1, with D = ⌈log2 N⌉. So the last steps, which carry
// the most pieces, are between near ranks. ReduceScatter runs the same trees backwards: nearest
// dimension first, a partial sum moving toward the rank that owns it and reduced at each hop.
//
// Terms used below, for N ranks and a rank r:
//  - the offset of a piece held by r is u = (r − origin) mod N (r's own piece has u = 0);
//  - U_d = {u : u a multiple of 2^(d+1), u + 2^d < N}, in ascending order, and k_d = |U_d|.
//    Σ_d k_d = N − 1: every u in 1 … N−1 is u' + 2^d for exactly one d (its lowest set bit) and
//    one u' in U_d. k_d >= 1 for every d < D (u = 0), and the largest is k_0 = ⌊N/2⌋.
//  - A: the aggregation factor (pat_aggregation), the most pieces one network message carries.
//
// AllGather: at dimension d (taken D−1, D−2, …, 0) rank r sends to rank (r + 2^d) mod N the pieces
// it holds at the offsets of U_d (each arrives there at offset u + 2^d), in ⌈k_d / A⌉ messages:
// message m carries the pieces at U_d[mA … mA + A − 1]. A message waits only for the receives of
// the pieces it carries: the piece at offset u > 0 arrived at r over dimension e = lowest set bit
// of u, from rank r − 2^e, in that rank's message carrying offset u − 2^e.
//
// ReduceScatter: at dimension d (taken 0, 1, …, D−1) rank r sends to rank (r + 2^d) mod N the
// partial sums for the destinations o whose distance w = (o − r) mod N has lowest set bit d
// (w = u + 2^d for u in U_d, so k_d of them, ascending), A per message as above; the receiver is
// then at distance w − 2^d. The partial sum r sends for a destination at distance w is r's own
// contribution reduced with every partial sum r received for it at a lower dimension e: the one
// from rank r − 2^e, sent at distance w + 2^e, for each e < d with w + 2^e < N. A message waits
// for exactly those receives. Within a chunk its dependency graph is the AllGather one reversed
// (message m of dimension d of rank r plays AllGather's message m of dimension d of rank
// (−r − 2^d) mod N, every edge turned around).
//
// Channels and chunks: channel c takes the c-th contiguous part of every rank's piece (count /
// channels elements, one more for the first count % channels channels), flow id c, and its own
// aggregation factor A_c = pat_aggregation(N, step_bytes, part bytes of c). The part is cut
// into chunks of E = ⌊chunk_bytes / elem_bytes⌋ elements, the last shorter: max(1, ⌈part / E⌉)
// chunks (an empty part gives one chunk of 0 bytes). The whole schedule above runs once per
// chunk, each piece being that chunk of the part; a message of p pieces has p × chunk bytes.
// Every transfer rank r sends for chunk k + 1 also waits for r's last send (the highest id) of
// chunk k: NCCL's PAT kernel walks the chunks in order, finishing one chunk's schedule before it
// starts the next's, so a rank's chunks do not overlap.
//
// Transfer ids: channel-major, then chunk, then dimension in schedule order (AllGather D−1 …
// 0, ReduceScatter 0 … D−1), then sending rank 0 … N−1, then message m = 0 … ⌈k_d / A⌉ − 1.
// A channel-chunk block has N × M transfers, M = Σ_d ⌈k_d / A_c⌉.
//
// Closed forms (P = a rank's piece, count × elem_bytes bytes):
//  - total bytes = N × (N − 1) × count × elem_bytes; each rank sends (N − 1) × P;
//  - per rank and dimension d: k_d × P bytes, all to the peer at distance 2^d;
//  - transfers = Σ_c chunks_c × N × Σ_d ⌈k_d / A_c⌉ (pat_transfers); N × (N − 1) per chunk when
//    A = 1, N × D per chunk when A >= k_0;
//  - critical path of one chunk (both collectives, the same): with A >= k_0 (one message per
//    rank and dimension) dimension e feeds dimension d (the next lower one for AllGather, higher
//    for ReduceScatter) iff 2^e + 2^d < N, so the longest chain is D for N = 2 or N > 3 ×
//    2^(D−2), else D − 1 (N = 8: 3, N = 5: 2, N = 6: 2, N = 7: 3, N = 3: 1; N = 5 is not D:
//    only its own piece crosses dimension 1, so no chain goes 2 → 1 → 0). With A < k_0 the
//    path can be shorter (a message then waits only for its own pieces' arrivals); pat_aggregation
//    gives A >= min(8, k_0), so that happens only from N = 18 on;
//  - AllGather with A >= k_0 and `chunks` chunks (channel 0's, the most): critical path =
//    chunks × the one-chunk path (a rank's last send, dimension 0, ends the longest chain of its
//    chunk). ReduceScatter's last send is at dimension D − 1, which ends the longest chain when
//    N > 3 × 2^(D−2) (the same path as AllGather's, e.g. N = 8, 3 chunks: 9) but not otherwise
//    (N = 5, 3 chunks: 4, AllGather 6): there a rank's chunk k + 1 may start while its chunk k
//    messages of lower dimensions still wait.
//
// Where NCCL's kernel differs: one thread computes a fixed sequence of copy/send/receive ops
// (getNextOp: phases, aggregated steps, postFreq), and worker groups run up to parallelFactor
// of them at a time over NCCL_STEPS buffer slots per connection; the DAG keeps only the data
// dependencies and the chunk order, so a rank's independent messages may overlap freely, and
// the local copies (a rank's own piece into its output) are not modelled.
#pragma once

#include <cstdint>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// NCCL's PAT aggregation factor (PatAGAlgorithm and PatRSAlgorithm constructors, NCCL
/// src/include/collectives.h): the most pieces one message carries, for a step of step_bytes
/// (the constructors' stepSize, which NCCL's PAT kernels set to the chunk size, chunkCount ×
/// sizeof(T), src/device/all_gather.h) and a per-rank channel piece of piece_bytes (the
/// constructors' channelSize × sizeof(T), the whole part, not one chunk). A = 1, doubled while
/// ⌊⌊step_bytes / piece_bytes⌋ / A⌋ >= 2 and A < ⌊ranks / 2⌋, then doubled log2(NCCL_STEPS) = 3
/// more times while A < ⌊ranks / 2⌋ (NCCL's step depth). piece_bytes = 0 counts as 1 byte (an
/// empty channel; NCCL runs none). Throws std::invalid_argument for ranks < 2, step_bytes < 1 or
/// piece_bytes < 0.
int pat_aggregation(int ranks, int64_t step_bytes, int64_t piece_bytes);

/// NCCL's PAT chunk size (calcCollChunking, NCCL src/enqueue.cc): start at step_bytes (Simple's
/// step, NCCL_BUFFSIZE / NCCL_STEPS = 4 MiB / 8 = 512 KiB by default) and halve it while
/// chunk × channels × F > total_bytes and chunk > 65536, with F = 32 for AllGather and 16 for
/// ReduceScatter; total_bytes is the collective's size (nccl-tests' size column). Throws
/// std::invalid_argument for total_bytes < 0, channels < 1 or step_bytes < 1.
int64_t pat_chunk_bytes(bool all_gather, int64_t total_bytes, int channels, int64_t step_bytes);

/// PAT AllGather over `ranks` ranks (one per server), each contributing `count` elements of
/// `elem_bytes` (the output is ranks × count), as described above; transfers go from rank r to
/// (r + 2^d) mod N. step_bytes is pat_aggregation's; NCCL's kernels pass the chunk size, so a
/// caller following NCCL passes step_bytes = chunk_bytes (pat_chunk_bytes).
/// Throws std::invalid_argument for ranks < 2, count < 0, elem_bytes <= 0,
/// channels < 1, chunk_bytes < elem_bytes, step_bytes < 1, or more than 2^32 − 1 transfers.
TransferDag pat_all_gather(int ranks, int64_t count, int elem_bytes, int channels,
                           int64_t chunk_bytes, int64_t step_bytes);

/// PAT ReduceScatter, each rank ending with `count` reduced elements (the input is ranks ×
/// count), as described above; transfers go from rank r to (r + 2^d) mod N. Same sizes and
/// transfer count as pat_all_gather. Throws as pat_all_gather.
TransferDag pat_reduce_scatter(int ranks, int64_t count, int elem_bytes, int channels,
                               int64_t chunk_bytes, int64_t step_bytes);

/// The number of transfers of pat_all_gather (and pat_reduce_scatter) with these arguments,
/// without building the DAG. Throws as pat_all_gather (but not for the transfer count).
int64_t pat_transfers(int ranks, int64_t count, int elem_bytes, int channels, int64_t chunk_bytes,
                      int64_t step_bytes);

}  // namespace fabricsim
