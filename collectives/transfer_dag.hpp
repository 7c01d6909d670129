// A collective as a DAG of point-to-point transfers.
//
// A transfer may start when every transfer it depends on has completed (been fully received).
// A DAG may also hold compute tasks (src_rank == dst_rank, 0 bytes): work on one rank that
// takes its delay_ps and never touches the network (the training step model, step_model.hpp),
// and loopback transfers (src_rank == dst_rank, flagged): bytes a GPU sends to its server's
// NVSwitch and gets back from it (NVLS's multimem accesses, nvls.hpp).
// Algorithms only build DAGs; DagReplayer (replay.hpp) runs them on any CollectiveTransport.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/net/nic_loop.hpp"

namespace fabricsim {

/// Chunks one connection may have in flight: a pipelined algorithm's send of chunk k on a
/// connection waits for the slot chunk k − kConnectionWindow used at the receiver to be free
/// again (NCCL's NCCL_STEPS = 8 buffer slots per connection, src/include/device.h). A slot is
/// free once the receiving GPU has consumed its chunk: where the receiver forwards it (a tree's
/// reduce up and broadcast down, a chain), when that forward is posted, since NCCL's
/// primitives release a receive slot (postPeer) only after the step's reduce-copy into the
/// outgoing slot, which itself waits for that slot (src/device/prims_simple.h genericOp,
/// prims_ll128.h); where it does not forward, once the chunk has arrived. The tree
/// (tree.hpp) and the chain broadcast and reduce (collectives.hpp) follow this; CollNet's and
/// NVLSTree's network windows still count a slot free once its chunk has arrived.
inline constexpr int kConnectionWindow = 8;

struct Transfer {
  int32_t src_rank;
  int32_t dst_rank;
  int64_t bytes;
  uint32_t flow;  ///< connection id between the pair (NCCL: channel); picks the ECMP path
  /// A loopback (TransferDag::add_loopback): src_rank == dst_rank, and the bytes go from the
  /// GPU to its NVSwitch and back to it over its own NVLink.
  bool loopback = false;
  /// Software latency between the transfer's dependencies completing and its post to the
  /// network, picoseconds (NCCL's per-step protocol latency, the launch latency); 0 = none.
  /// For a compute task: its duration.
  int64_t delay_ps = 0;
  /// The fastest the sending GPU writes this transfer's bytes, bits per second of `bytes`
  /// (0 = as fast as the network takes them): a protocol's own throughput per channel, below
  /// what its link carries (NCCL's LL and LL128, plan.hpp CollectiveSpec::pace_bps).
  int64_t pace_bps = 0;
  /// A compute task (TransferDag::add_compute): runs on src_rank == dst_rank for delay_ps and
  /// moves no bytes.
  bool is_compute() const { return src_rank == dst_rank && !loopback; }
  /// A NIC loopback (TransferDag::add_nic_loopback): a loopback through the GPU's NIC and the
  /// first switch rather than its NVLink and NVSwitch.
  bool is_nic_loopback() const { return loopback && (flow & kNicLoopFlowBit) != 0; }
};

class TransferDag {
 public:
  /// Adds a transfer and returns its id (0, 1, 2 … in order). Throws std::invalid_argument for
  /// a negative size or src == dst.
  uint32_t add(int32_t src_rank, int32_t dst_rank, int64_t bytes, uint32_t flow = 0);
  /// Adds a compute task on `rank` taking `duration_ps` (0 = a join point that completes as
  /// soon as its dependencies have) and returns its id. It has src_rank == dst_rank == rank,
  /// 0 bytes, flow 0 and delay_ps = duration_ps. Throws std::invalid_argument for a negative
  /// rank or duration.
  uint32_t add_compute(int32_t rank, int64_t duration_ps);
  /// Adds a loopback transfer of `bytes` on `rank`: up its NVLink to the server's NVSwitch and
  /// back down to it (src_rank == dst_rank == rank, loopback set), and returns its id. Throws
  /// std::invalid_argument for a negative rank or size.
  uint32_t add_loopback(int32_t rank, int64_t bytes, uint32_t flow = 0);
  /// Adds a NIC loopback of `bytes` on `rank`: up the GPU's NIC link to the first switch and
  /// back down it (src_rank == dst_rank == rank, loopback set, flow = `flow` | kNicLoopFlowBit),
  /// and returns its id. `flow` picks the GPU's NIC as any flow does. Throws
  /// std::invalid_argument for a negative rank or size, or a `flow` that has kNicLoopFlowBit.
  uint32_t add_nic_loopback(int32_t rank, int64_t bytes, uint32_t flow = 0);
  /// Adds a copy of `t` (a transfer, loopback or compute task, its delay and pace included) with
  /// its ranks and flow replaced, and returns its id. Throws as the add function of its kind.
  uint32_t add_like(const Transfer& t, int32_t src_rank, int32_t dst_rank, int64_t bytes,
                    uint32_t flow);
  /// `after` starts only once `before` has completed. Throws std::invalid_argument unless
  /// before < after (ids are added in a topological order, so no cycle can form).
  void depends(uint32_t after, uint32_t before);
  /// `after` starts only once `before` has been posted (handed to the network after its own
  /// dependencies and delay; a compute task: once it has completed): a buffer slot that
  /// `before`'s sender frees by consuming what it forwards (kConnectionWindow). Counts as one of
  /// `after`'s dependencies. Throws std::invalid_argument unless before < after.
  void depends_on_post(uint32_t after, uint32_t before);
  /// Sets transfer `id`'s delay_ps. Throws std::invalid_argument for a negative delay or a bad id.
  void set_delay(uint32_t id, int64_t delay_ps);
  /// Sets transfer `id`'s pace_bps (0 = none). Throws std::invalid_argument for a negative
  /// rate or a bad id.
  void set_pace(uint32_t id, int64_t pace_bps);

  size_t size() const { return transfers_.size(); }
  const Transfer& transfer(uint32_t id) const { return transfers_[id]; }
  /// Number of transfers `id` waits for (to complete, or to be posted).
  uint32_t dependency_count(uint32_t id) const { return dep_count_[id]; }
  /// Transfers that wait for `id`, in the order depends() added them. The first call after a
  /// change builds a flat index of all edges (O(transfers + edges)); the span stays valid until
  /// the next add/depends.
  std::span<const uint32_t> dependents(uint32_t id) const {
    if (index_stale_) build_index();
    return {index_.data() + first_[id], first_[id + 1] - first_[id]};
  }
  /// Transfers that wait for `id` to be posted (depends_on_post), in the order added; valid as
  /// dependents().
  std::span<const uint32_t> post_dependents(uint32_t id) const {
    if (post_edges_.empty()) return {};
    if (index_stale_) build_index();
    return {post_index_.data() + post_first_[id], post_first_[id + 1] - post_first_[id]};
  }
  /// Whether any transfer waits for another's post.
  bool has_post_dependencies() const { return !post_edges_.empty(); }
  /// Adds every dependency of `sub` (both kinds) between the transfers base + i of this DAG,
  /// which must already hold sub's transfers at base .. base + sub.size() - 1, in sub's order.
  /// Throws as depends.
  void copy_dependencies(const TransferDag& sub, uint32_t base);
  /// Total bytes over all transfers (compute tasks move none).
  int64_t total_bytes() const;

 private:
  /// Adds (before, after) to `edges` and counts it for `after`; throws std::invalid_argument,
  /// naming `who`, unless before < after < size().
  void add_edge(std::vector<std::pair<uint32_t, uint32_t>>& edges, uint32_t after, uint32_t before,
                const char* who);
  /// Groups edges_ by their `before` (a stable counting sort) into first_ / index_, and
  /// post_edges_ into post_first_ / post_index_.
  void build_index() const;

  std::vector<Transfer> transfers_;
  std::vector<uint32_t> dep_count_;
  /// Every dependency as (before, after), in the order added: one flat array instead of a
  /// vector per transfer (a training step's DAG has millions of edges, and building it was
  /// malloc-bound).
  std::vector<std::pair<uint32_t, uint32_t>> edges_;
  std::vector<std::pair<uint32_t, uint32_t>> post_edges_;  ///< depends_on_post, as edges_
  mutable std::vector<uint32_t> first_;  ///< dependents of i: index_[first_[i] .. first_[i+1])
  mutable std::vector<uint32_t> index_;
  mutable std::vector<uint32_t> post_first_, post_index_;  ///< the same for post_edges_
  mutable bool index_stale_ = true;
};

/// Ring AllReduce (Patarasuk & Yuan 2009; NCCL's ring): the buffer of `count` elements of
/// `elem_bytes` is cut into `ranks` chunks (sizes differ by at most one element); in each of
/// 2(N−1) steps every rank r sends one chunk to rank (r+1) mod N — N−1 reduce-scatter steps,
/// then N−1 all-gather steps. Step s of rank r depends on step s−1 of rank r−1 (the chunk it
/// forwards, reduced, has arrived). Transfer id = step × N + rank.
/// Each rank sends 2(N−1)/N of the buffer, the bound behind nccl-tests' busbw factor.
/// Throws std::invalid_argument for ranks < 2, count < 0 or elem_bytes <= 0.
TransferDag ring_allreduce(int ranks, int64_t count, int elem_bytes);

}  // namespace fabricsim
