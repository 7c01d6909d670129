// A collective for the flow-level backend (sim/flow): each algorithm's steady state as
// concurrent flows plus its latency, instead of every pipeline step as a transfer. A 16,384-GPU
// ring is then 16,384 flows per channel, not 16,384 × 2 × 16,383 steps.
//
// The bandwidth term comes from sharing: every connection of the algorithm is one flow carrying
// all the bytes it carries in the step-by-step DAG (build_collective), all of them at once, at
// max-min fair rates. The latency term is added as a join task per channel, from the same
// closed forms the packet model's DAG follows (tests/collectives/test_plan.cpp checks them):
//   ring (all_reduce, all_gather, reduce_scatter), L loops of k steps (k = 2(N−1) for
//     all_reduce, N−1 otherwise), S_max one step's transfer on the busiest hop (the
//     bottleneck), S̄ the mean over the ring's hops of a step's transfer as a chain meets it:
//                                      launch + max(L·k·(λ + α + S̄), L·(λ + α) + L·k·S_max)
//     In the packet model's DAG step s on hop h waits only for step s−1 on hop h−1, so the
//     longest chain walks the ring's hops in turn and pays each hop's own transfer once per
//     visit (L·k·(λ + α + S̄)), while the bottleneck hop serves its L·k steps back to back as
//     they arrive and idles only for the step latency at each loop's barrier. The flows carry
//     launch + λ + α + L·k·S_max (at their live max-min rates); the join adds the rest:
//       max((L·k − 1)·(λ + α) − L·k·(S_max − S̄), (L − 1)·(λ + α)).
//     With every hop alike (one GPU per server, or one server) S̄ = S_max and this is the
//     series form (L·k − 1)·(λ + α): channels that share a NIC run in step, so each step pays
//     its latency and the shared transfer one after the other. With G GPUs per server only one
//     hop in G crosses a NIC; the NVLink hops' steps are short, so the NIC hop is saturated
//     and hides most of the latency (4-GPU servers, 16 MiB: +36 % became −2 %).
//     A hop's step: a = framed step bytes / B_h alone (B_h its uncongested rate), shared on its
//     busier end (its source's NIC or NVLink port sending, its destination's receiving) by m_h
//     of the collective's hops, or by more where Hop::links says more cross one link of its
//     path (ECMP collisions on an uplink). S_max = a·m_h on the bottleneck: everything through its
//     port, whatever the phase. S_h for the chain: the s channels on the same ring (same cycle of
//     ranks) start together and stay in step, so they share fully; the o = m_h − s channels of
//     other rings reach the port about Δ = α_b + S_max − α_h − S_h apart (their chains met the
//     bottleneck at other steps), so they overlap a step of S_h for S_h / Δ of it:
//       S_h = a·(s + o·S_h / Δ), the smaller root, or a·m_h when it has none below Δ.
//     With 8-GPU servers near the crossover of the two terms (16–32 MiB) the rings fall less
//     out of step than that and the ring is up to 8 % slow.
//   tree (all_reduce, NCCL's double binary tree and the chains inside servers), depth D =
//     ⌈log2 servers⌉ + G − 1 ranks, n chunks of C bytes, at most W = 8 in flight per
//     connection (kConnectionWindow), s = λ + α + C/B one chunk's step on a hop at rate B:
//                                      launch + 2D·s + (n − 1)·max(C/B, s/W)
//   broadcast, reduce (a chain of N ranks, n chunks): launch + (N−1)·s + (n − 1)·max(C/B, s/W)
//   alltoall, sendrecv: the packet model's own DAG (one transfer per pair and channel, PXN
//     split); above 4 M flows the channels are merged into one flow per connection
// LL and LL128 (CollectiveSpec::pace_bps, stream_unit_bytes): every flow is capped at the
// protocol's pace (FlowNetwork::send), and the closed forms take a hop's rate as the slower of
// its link and the pace (a ring's step at least its bytes at the pace, whatever the sharing);
// a hop inside a server whose transfer is larger than the stream unit U passes a chunk (a
// ring's step) on after U, not after the whole chunk: λ + α + U/B in the chain instead of
// λ + α + C/B, as the packet model's cut transfers do.
// with λ the protocol's step latency (CollectiveSpec::step_latency_ps) and α the uncongested
// one-hop latency of the channel's connections (`hop_latency`): their mean for a ring or chain
// (successive steps walk successive hops), their largest for a tree. The flow itself
// carries one λ (its delay) and one α (its path latency); the join adds the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collectives/plan.hpp"
#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// A directed link of a connection's path: an id unique per link and its rate, b/s.
struct HopLink {
  uint32_t id = 0;
  int64_t rate_bps = 0;
};
/// One connection, uncongested: the latency of a message (path propagation, switching,
/// store-and-forward of its last packet), picoseconds, the slowest link of its path, b/s, and
/// the links it crosses (empty when not known).
struct Hop {
  int64_t latency_ps = 0;
  int64_t rate_bps = 0;
  std::vector<HopLink> links;
};
/// The connection from `src_rank` to `dst_rank` of connection id `flow` (NCCL's channel: it
/// picks the ECMP path).
using HopLatency = std::function<Hop(int src_rank, int dst_rank, uint32_t flow)>;

/// The flows of one collective (see the file comment), with the arguments of build_collective.
/// Throws std::invalid_argument as build_collective does, and for halving_doubling (not an
/// NCCL algorithm: the packet mode runs it).
TransferDag build_collective_flows(const RankLayout& layout, const CollectiveSpec& spec,
                                   int64_t buffer_count, int elem_bytes,
                                   const HopLatency& hop_latency);

/// How many transfers build_collective_flows makes (without building them).
int64_t estimate_flows(const RankLayout& layout, const CollectiveSpec& spec);

}  // namespace fabricsim
