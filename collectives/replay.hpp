// Replaying a TransferDag on a network backend, through a narrow interface.
//
// The collective layer sees only CollectiveTransport (send, completion callback, now), after
// ASTRA-sim's AstraNetworkAPI but typed: the same DAG runs on the packet network today and a
// flow-level backend later.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collectives/transfer_dag.hpp"
#include "sim/core/time.hpp"
#include "sim/net/network.hpp"

namespace fabricsim {

/// The network as the collective layer sees it. Ranks map to hosts one to one for now.
class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;
  /// Starts a transfer; the backend calls DagReplayer::complete(tag) when it has been received.
  /// `pace_bps` > 0: the sender writes the bytes no faster than this (Transfer::pace_bps).
  virtual void send(int src_rank, int dst_rank, int64_t bytes, uint32_t flow, uint64_t tag,
                    int64_t pace_bps) = 0;
  /// Calls DagReplayer::post(tag) `delay_ps` (> 0) picoseconds from now, as an event of the
  /// logical process of rank `src_rank`'s host (the task's own GPU: a transfer's sender, or the
  /// GPU computing).
  virtual void post_after(int64_t delay_ps, uint64_t tag, int src_rank) = 0;
  virtual SimTime now() const = 0;
  /// The logical process rank `rank`'s tasks run on (its host; sim/core/simulator.hpp). A
  /// dependency met on another LP reaches its task through dependency_after(). Default: one
  /// LP for every rank.
  virtual uint32_t owner_lp(int /*rank*/) const { return 0; }
  /// Calls DagReplayer::dependency_met(tag) `delay_ps` (>= 0) from now as an event of rank
  /// `src_rank`'s LP. Only for transports with more than one LP (owner_lp).
  virtual void dependency_after(int64_t /*delay_ps*/, uint64_t /*tag*/, int /*src_rank*/) {
    throw std::logic_error("CollectiveTransport: a dependency across logical processes");
  }
  /// Whether this process runs rank `rank`'s tasks (a partitioned MPI run runs only its own).
  virtual bool is_local(int /*rank*/) const { return true; }
  /// Whether start() hands the roots to start_root() instead of releasing them itself.
  virtual bool defers_roots() const { return false; }
  /// Calls DagReplayer::release_root(tag) now, as an event of rank `src_rank`'s LP: what a
  /// root sends is then posted inside an event of its own host, keyed as that host's, alike on
  /// every rank of a partitioned run. Only for transports whose defers_roots() is true.
  virtual void start_root(uint64_t /*tag*/, int /*src_rank*/) {
    throw std::logic_error("CollectiveTransport: start_root without defers_roots");
  }
};

/// Runs one DAG: issues every transfer whose dependencies are met, as they complete.
///
/// A task is *ready* when its last dependency is met (at start() if it has none), *posted*
/// once its delay_ps has passed after that, and *completed* when the backend reports it
/// received. A dependency is met when its task completes, or, for one added with
/// TransferDag::depends_on_post, when it is posted. A compute task (Transfer::is_compute) never
/// reaches the network: it completes the moment it is posted, i.e. delay_ps after it became ready
/// (at once for a 0-duration join). Tasks made ready by one completion are released in the order
/// the DAG lists them, from a work list rather than by recursion, so chains of 0-duration tasks
/// neither re-release a task nor grow the stack.
///
/// Ownership (for partitioned runs, sim/parallel/README.md item 11): a task belongs to the LP
/// of its src_rank (transport.owner_lp); a transfer completes on its receiver's LP, a compute
/// task on its own, and every task is posted on its own LP. A task with a dependency met on
/// another LP ("cross": a completion there, or a post there for TransferDag::depends_on_post)
/// counts all its dependencies through events to its own LP, each delay_ps after it was met
/// (dependency_met), and is posted the moment the last one arrives: the same time, max(met) +
/// delay_ps, as counting them where they are met, but written only by the owner. Other tasks
/// count their dependencies where they are met, as before.
/// With a transport that is not local for every rank, start() releases only the local roots,
/// and done() / completed() / finish_time() count only this process's completions.
class DagReplayer {
 public:
  DagReplayer(const TransferDag& dag, CollectiveTransport& transport);
  /// Issues the transfers with no dependencies. Records the start time.
  void start();
  /// Transfer `id` has been fully received. Throws std::logic_error on a repeated completion.
  void complete(uint64_t id);
  /// Transfer `id`'s delay has passed: hands it to the network (a compute task completes).
  /// Throws std::logic_error for an id outside the DAG.
  void post(uint64_t id);
  /// One dependency of the cross task `id` has completed, delay_ps ago (see the class
  /// comment); posts it when it was the last. Throws std::logic_error for an id outside the DAG
  /// or one not waiting.
  void dependency_met(uint64_t id);
  /// The root `id` (no dependencies), deferred by start() through the transport, is released.
  void release_root(uint64_t id);
  bool done() const { return completed_ == dag_.size(); }
  size_t completed() const { return completed_; }
  SimTime start_time() const { return start_; }
  SimTime finish_time() const { return finish_; }
  /// When task `id` became ready (every dependency completed), was posted (after its delay),
  /// and completed; SimTime(-1) while that has not happened yet. Throws std::out_of_range for
  /// an id outside the DAG.
  SimTime ready_time(uint32_t id) const { return ready_at_.at(id); }
  /// Every task's ready, posted and completed times (3 x size() values, picoseconds, -1 where
  /// not yet), for a partitioned run to combine: each time is set on one rank only (the task's
  /// owner, or its receiver for completions), so an element-wise maximum over the ranks gives
  /// the whole run's.
  std::vector<int64_t> task_times() const;
  /// Adopts combined task_times(): the completions, their count and the finish time follow.
  /// Throws std::invalid_argument for a vector of another size.
  void set_task_times(const std::vector<int64_t>& times);
  SimTime posted_time(uint32_t id) const { return posted_at_.at(id); }
  SimTime completed_time(uint32_t id) const { return completed_at_.at(id); }

 private:
  const TransferDag& dag_;
  CollectiveTransport& transport_;
  void release(uint32_t id);  ///< every dependency of `id` is met: post now or after its delay
  void drain();               ///< releases the queued ready tasks, unless already doing so
  /// One dependency of `next` is met now: counted here, or sent to its LP (cross_).
  void met(uint32_t next);
  std::vector<uint32_t> waiting_;  ///< remaining dependencies per transfer
  std::vector<uint8_t> cross_;     ///< per task: counts its dependencies on its own LP
  std::vector<uint8_t> finished_;
  std::vector<SimTime> ready_at_, posted_at_, completed_at_;
  std::vector<uint32_t> ready_queue_;  ///< ready tasks not yet released, FIFO from ready_head_
  size_t ready_head_ = 0;
  bool draining_ = false;
  size_t completed_ = 0;
  SimTime start_, finish_;
};

/// Explicit point-to-point flows (the scenario's `traffic:`), each posted at its start time on
/// its own queue pair, in the background of any collective.
class TrafficPlayer {
 public:
  struct Flow {
    int src = 0, dst = 0;  ///< host ids
    int64_t bytes = 0;     ///< >= 0
    int64_t start_ps = 0;  ///< >= 0
    int tc = -1;           ///< traffic class, -1 = the NIC's
    uint32_t flow = 0;     ///< queue pair id between the pair
  };
  /// Message tags of traffic flows carry this bit (the rest is the flow's index); their QP ids
  /// are flow | kQpBit, apart from the collectives' channels.
  static constexpr uint64_t kTagBit = uint64_t{1} << 63;
  static constexpr uint32_t kQpBit = uint32_t{1} << 31;
  TrafficPlayer(Simulator& sim, Network& net, std::vector<Flow> flows);
  /// Schedules every flow's post (at its start time, or now if that has passed).
  void start();
  /// Flow `index` has been received in full. Throws std::logic_error on a repeat.
  void complete(uint64_t index);
  bool done() const { return completed_ == flows_.size(); }
  size_t completed() const { return completed_; }
  size_t size() const { return flows_.size(); }
  /// When the latest flow completed, picoseconds (-1: none yet).
  int64_t finish_time_ps() const { return finish_ps_; }

 private:
  void on_post(uint64_t index);
  Simulator& sim_;
  Network& net_;
  std::vector<Flow> flows_;
  std::vector<uint8_t> finished_;
  size_t completed_ = 0;
  int64_t finish_ps_ = -1;
};

/// CollectiveTransport over the packet-level Network; forwards completions to a DagReplayer
/// (and a TrafficPlayer) and stops the simulator when the replayer is done, or, with no
/// replayer attached, when the traffic is.
class PacketTransport final : public CollectiveTransport, public CompletionSink {
 public:
  PacketTransport(Simulator& sim, Network& net);
  void attach(DagReplayer* replayer) { replayer_ = replayer; }
  void attach_traffic(TrafficPlayer* traffic) { traffic_ = traffic; }
  /// The host id of each rank (NcclRunSetup::rank_hosts); empty = rank r on host r.
  /// Forgets the QPs open_qps kept (they were opened for the old hosts).
  void set_rank_hosts(std::vector<int> hosts) {
    rank_hosts_ = std::move(hosts);
    qp_of_.clear();
  }
  /// Opens the queue pair of every transfer of `dag` (Network::open_qp), in the DAG's order,
  /// before it runs: QP ids then follow the DAG, not the order transfers happen to start in,
  /// so every rank of a partitioned run numbers them alike. Keeps each transfer's QP id (4
  /// bytes a transfer): send() with a tag of this DAG posts on it without a lookup, so the
  /// DAG replayed must be the one last given here (DagReplayer's tags are its transfer ids).
  void open_qps(const TransferDag& dag);
  void send(int src_rank, int dst_rank, int64_t bytes, uint32_t flow, uint64_t tag,
            int64_t pace_bps) override;
  void post_after(int64_t delay_ps, uint64_t tag, int src_rank) override;
  SimTime now() const override { return sim_.now(); }
  uint32_t owner_lp(int rank) const override;
  void dependency_after(int64_t delay_ps, uint64_t tag, int src_rank) override;
  bool is_local(int rank) const override { return sim_.is_local(LpId(owner_lp(rank))); }
  bool defers_roots() const override { return true; }
  void start_root(uint64_t tag, int src_rank) override;
  void on_message_complete(uint64_t tag) override;
  /// Whether the transport stops the simulator when the replayer (or the traffic) is done
  /// (default). A partitioned run counts completions over all ranks instead.
  void set_stop_when_done(bool stop) { stop_when_done_ = stop; }
  /// The handlers of this transport's events that may cross ranks (dependency_after).
  static std::vector<EventFn> cross_lp_handlers();

 private:
  void on_post_timer(uint64_t tag);
  void on_dependency(uint64_t tag);
  void on_root(uint64_t tag);
  int host(int rank) const {
    return rank_hosts_.empty() ? rank : rank_hosts_[static_cast<size_t>(rank)];
  }
  Simulator& sim_;
  Network& net_;
  DagReplayer* replayer_ = nullptr;
  TrafficPlayer* traffic_ = nullptr;
  std::vector<int> rank_hosts_;
  static constexpr uint32_t kNoQp = UINT32_MAX;
  std::vector<uint32_t> qp_of_;  ///< by transfer id of the DAG open_qps last opened; kNoQp
  bool stop_when_done_ = true;
};

}  // namespace fabricsim
