// A collective as NCCL runs it, as one TransferDag: ranks in servers, channels, rings built over
// servers, the protocol's step size, wire overhead and per-step latency.
//
// Sources: NCCL src/enqueue.cc (chunk and loop sizes: a ring loop moves nranks × chunk per
// channel; Simple ring all-reduce chunks are ALLREDUCE_CHUNKSTEPS = NCCL_STEPS/2 buffer steps,
// LL and LL128 one step), src/graph/rings.cc and NCCL_CROSS_NIC (inter-server ring hops stay on
// one rail); the algorithms' own sources are in collectives.hpp, transfer_dag.hpp and tree.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// How ranks sit in servers: `ranks` GPUs numbered server by server, `gpus_per_server` per
/// server (the last server may hold fewer). Rank r is GPU r mod G of server r / G.
struct RankLayout {
  int ranks = 0;
  int gpus_per_server = 1;
  int servers() const { return (ranks + gpus_per_server - 1) / gpus_per_server; }
  int server_of(int rank) const { return rank / gpus_per_server; }
  /// GPUs in server s (G, or fewer for a last partial server).
  int gpus_in(int s) const;
};

/// The ring of channel `channel`: the ranks in the order data flows (rank order[i] sends to
/// order[i+1], the last to the first). One server (or G = 1): ranks in order, rotated by the
/// channel so channels enter at different GPUs. Several servers: each server's GPUs are visited
/// in one run over NVLink, alternately ascending from GPU e and descending back to it (a
/// "snake"), so every hop between servers joins GPUs of the same local index, i.e. the same
/// rail (NCCL's rings keep inter-server traffic on the same NICs, NCCL_CROSS_NIC=0): server
/// 2k is entered at GPU e = channel mod G and left from GPU e − 1, server 2k+1 entered at
/// e − 1 and left from e. With an odd number of servers the hop closing the ring changes rail.
/// Throws std::invalid_argument for ranks < 2, gpus_per_server < 1 or channel < 0.
std::vector<int> ring_order(const RankLayout& layout, int channel);

/// What to build. Collective names are nccl-tests' (all_reduce, all_gather, reduce_scatter,
/// broadcast, reduce, alltoall, sendrecv); algorithms: ring (every collective but alltoall and
/// sendrecv), tree (all_reduce: NCCL's double binary tree, tree.hpp), halving_doubling
/// (all_reduce: Rabenseifner, not an NCCL algorithm), p2p (alltoall, sendrecv: NCCL's grouped
/// point-to-point); more may be registered (algorithm_registry.hpp).
struct CollectiveSpec {
  std::string collective = "all_reduce";
  std::string algorithm = "ring";
  int channels = 1;         ///< NCCL channels: the buffer is split across them, >= 1
  int64_t chunk_bytes = 0;  ///< payload of one pipeline step per channel; 0 = unlimited
  /// The protocol's framing: payload travels in lines of `line_bytes` carrying
  /// `line_data_bytes` each (LL 16/8, LL128 128/120, Simple 1/1); 1 <= data <= line.
  int line_bytes = 1;
  int line_data_bytes = 1;
  /// The fastest one channel's sends go, bits per second of the transfers' framed bytes
  /// (Transfer::pace_bps; 0 = the network's pace alone): the protocol's GPU throughput.
  int64_t pace_bps = 0;
  /// Streaming (LL, LL128): payload bytes the receiving GPU's threads take in one pass (0 =
  /// store and forward, Simple). A transfer inside a server that forwards what its sender
  /// received is sent as it arrives: cut into a head of this many payload bytes, a tail of
  /// at most as many and the rest between them (transfers of at most one unit stay whole);
  /// its head and the rest start once the head of what it forwards has arrived, its tail once
  /// that transfer's tail has. Each hop then adds one step latency and one pass of this size,
  /// not the whole chunk. Transfers between servers stay whole, and a transfer fed by one waits
  /// for all of it (its GPU would forward at the network's rate, which the parts cannot
  /// follow). Must be a multiple of line_data_bytes.
  int64_t stream_unit_bytes = 0;
  int root = 0;                   ///< broadcast, reduce
  int64_t step_latency_ps = 0;    ///< software latency of each step, before its post
  int64_t launch_latency_ps = 0;  ///< once per collective, before the first steps
  /// CollNet (SHARP): how long after the last server's NIC loopback of a chunk its result may
  /// leave the switches, picoseconds: one switch latency and one link's propagation (the
  /// reduction's pass through the aggregation switch and the result's link to each head;
  /// the loopbacks carry each head's own bytes down, not the result's fan-out). At least one
  /// link's propagation, it also keeps the dependency the join hands another server's GPU as
  /// far ahead as a partitioned (MPI) run's lookahead. 0 = none.
  int64_t collnet_join_ps = 0;
  /// Staging through host memory (GPUDirect RDMA off, or sockets): a transfer between servers
  /// is delayed by staging_latency_ps + 2 × min(its bytes, staging_unit_bytes) at
  /// staging_rate_bps (the copy into host memory at the sender and out of it at the receiver,
  /// both counted before the post; the copies' PCIe load is not modelled). 0 = no staging.
  int64_t staging_latency_ps = 0;
  int64_t staging_rate_bps = 0;
  /// The copies pipeline with the transfer in NCCL steps: only one step's copy (at most this
  /// many bytes) at each end is exposed. 0 = the whole transfer.
  int64_t staging_unit_bytes = 0;
};

/// Whether `algorithm` is registered (algorithm_registry.hpp) and runs `collective`.
bool algorithm_supports(const std::string& algorithm, const std::string& collective);

/// The DAG of one collective on `buffer_count` elements of `elem_bytes`, where buffer_count is
/// what the algorithm's builder cuts: all_reduce, broadcast, reduce, sendrecv: the buffer;
/// all_gather: the output buffer (every rank's piece); reduce_scatter: each rank's input;
/// alltoall: each rank's buffer (N blocks).
///
/// Channels: channel c handles the c-th of `channels` contiguous parts of the buffer (parts
/// differ by at most one element), on its own ring (ring_order), with flow id c so it is its
/// own queue pair. Ring collectives run in loops: a loop moves N × chunk of the channel's part
/// (ring all-reduce, all-gather, reduce-scatter), so a part of P bytes takes
/// L = ceil(P / (N × chunk)) loops of nearly equal size; a rank starts loop l+1 once its last
/// send and receive of loop l are done (NCCL's kernel runs the loops one after another).
/// Broadcast and reduce pipeline ceil(P / chunk) chunks down the chain. Tree all-reduce
/// pipelines chunks up and down the tree (tree.hpp). Halving-doubling, alltoall and sendrecv
/// move each channel's part in one go; alltoall's and sendrecv's transfers between servers and
/// rails go through PXN (NCCL >= 2.12): over NVLink to the source server's GPU on the
/// destination's rail, then over the network on that rail (two transfers, the second waiting
/// for the first).
/// Every transfer's bytes are its payload in whole lines, ⌈payload / line_data⌉ × line; every
/// transfer gets
/// step_latency_ps as its delay, plus launch_latency_ps if it has no dependency, plus the
/// staging delay if it crosses servers, and pace_bps as its pace. With stream_unit_bytes,
/// transfers are cut as that field says (up to three transfers each).
/// Throws std::invalid_argument for an unknown or unsupported collective/algorithm, ranks < 2,
/// buffer_count < 0, elem_bytes <= 0, channels < 1, chunk_bytes < 0, bad line sizes, a root
/// outside [0, ranks), a negative latency, staging setting or pace, a stream unit that is
/// negative or not whole lines.
TransferDag build_collective(const RankLayout& layout, const CollectiveSpec& spec,
                             int64_t buffer_count, int elem_bytes);

/// How many transfers build_collective would make for these arguments (upper bound for
/// alltoall/sendrecv, whose PXN split is counted for every transfer, and for streamed
/// transfers on servers of several GPUs, counted as three parts each), without building them:
/// what a run checks before it commits memory (about 100 bytes per transfer, twice while the
/// DAG is finalized). Throws as build_collective for bad arguments.
int64_t estimate_transfers(const RankLayout& layout, const CollectiveSpec& spec,
                           int64_t buffer_count, int elem_bytes);

}  // namespace fabricsim
