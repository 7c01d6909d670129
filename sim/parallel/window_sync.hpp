// Conservative parallel execution over MPI: ranks advance in windows of the lookahead.
//
// Each rank runs its own Simulator over the logical processes (LPs, see sim/core/simulator.hpp)
// it owns. Execution proceeds in windows [T, T + L): T is the earliest pending event time over
// all ranks (an MPI_Allreduce), L the lookahead, the smallest delay of any event between LPs on
// different ranks (for a fabric: the smallest propagation delay of a cut link; partition.hpp).
// An event a rank creates inside the window for a remote LP lies at T + L or later, so it is
// delivered at the window's end (an MPI_Alltoallv), before its rank could need it. This is the
// synchronous window scheme (Lubachevsky's bounded lag, CACM 1989; Nicol's YAWNS, 1993) that
// ns-3's DistributedSimulatorImpl ("granted time window") and SST's sync manager use.
//
// Determinism: a remote event carries the key its sender's Simulator took for it (take_key),
// so it sorts at its receiver exactly as a local push would have. Each LP therefore executes
// the same events in the same order as in a sequential run, whatever the number of ranks,
// provided handlers touch only their own LP's state (simulator.hpp gives the argument).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/simulator.hpp"

namespace fabricsim {

class WindowSync {
 public:
  /// A component's receiver of remote events: decodes `size` bytes of `data` and pushes the
  /// event with Simulator::at_keyed(SimTime(time_ps), key, lp, …).
  using Receiver = void (*)(void* obj, Simulator& sim, int64_t time_ps, uint64_t key, LpId lp,
                            const std::byte* data, uint32_t size);

  /// `rank_of_lp[lp]`: the rank owning each LP (0 .. size of `comm` - 1); `lookahead_ps` > 0,
  /// picoseconds. Throws std::invalid_argument for a lookahead <= 0 or a rank out of range.
  WindowSync(Simulator& sim, MPI_Comm comm, std::vector<int> rank_of_lp, int64_t lookahead_ps);

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  /// Whether this rank owns `lp` (an LP id beyond the table is nobody's: false).
  bool local(LpId lp) const {
    return lp.value < rank_of_lp_.size() && rank_of_lp_[lp.value] == rank_;
  }

  /// Registers a receiver of remote events; returns its id for send(). Every rank must register
  /// the same receivers in the same order.
  uint16_t add_receiver(void* obj, Receiver receiver);

  /// Sends an event at `t` for the remote LP `lp`: `size` bytes of `data` (at most 65535) reach
  /// `receiver` on lp's rank at the end of the window. Must be called from a handler (the key
  /// is the current LP's next). Throws std::logic_error if t lies inside the current window
  /// (an event closer than the lookahead: the partition's lookahead is wrong) or lp is local.
  void send(uint16_t receiver, SimTime t, LpId lp, const void* data, uint32_t size);
  /// As send(), with the key already taken (a Simulator::RemotePush).
  void send_keyed(uint16_t receiver, SimTime t, uint64_t key, LpId lp, const void* data,
                  uint32_t size);
  /// Data, not an event, for lp's rank: `receiver` gets it at the end of the window (time_ps
  /// -1, key 0) and applies it before any event of the next window. For state a remote LP
  /// needs no earlier than the lookahead from now (e.g. a receive posted with a message).
  void post_data(uint16_t receiver, LpId lp, const void* data, uint32_t size);
  /// Delivers what this rank sent during the window to the other ranks and hands what it
  /// received to the receivers. Collective: every rank calls it at the same window boundary.
  /// A window after which no rank has anything to send may skip it (pending()), on every rank.
  void exchange();
  /// Whether this rank holds events or data for other ranks, not yet exchanged.
  bool pending() const { return pending_; }
  /// The earliest time of the events this rank holds for other ranks (picoseconds), INT64_MAX
  /// if none: the minimum over ranks of min(next_event_ps(), pending_min_ps()) is the earliest
  /// event time anywhere once they are exchanged, so one reduction serves both.
  int64_t pending_min_ps() const { return pending_min_ps_; }
  /// Declares the window being executed to end (exclusive) at `end_ps`, for send()'s check.
  void set_window_end(int64_t end_ps) { window_end_ps_ = end_ps; }
  /// Counts a window run by a driver of its own (windows()).
  void count_window() { ++windows_; }

  /// Runs windows until no rank has an event at or before `stop_at`, or until some rank's
  /// handler called Simulator::request_stop() (all ranks then stop at the end of that window).
  /// Collective: every rank calls it. Returns true if stopped by request_stop().
  bool run(SimTime stop_at = SimTime::max());

  uint64_t windows() const { return windows_; }
  uint64_t remote_sent() const { return remote_sent_; }
  uint64_t remote_received() const { return remote_received_; }

 private:
  void append(uint16_t receiver, int64_t t_ps, uint64_t key, LpId lp, const void* data,
              uint32_t size);

  Simulator& sim_;
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  std::vector<int> rank_of_lp_;
  int64_t lookahead_ps_;
  int64_t window_end_ps_ = 0;  ///< exclusive end of the window being executed
  struct Rx {
    void* obj;
    Receiver fn;
  };
  std::vector<Rx> receivers_;
  std::vector<std::vector<std::byte>> out_;  ///< per destination rank: encoded events
  uint64_t windows_ = 0, remote_sent_ = 0, remote_received_ = 0;
  bool stop_requested_ = false;
  bool pending_ = false;                ///< out_ holds something
  int64_t pending_min_ps_ = INT64_MAX;  ///< the earliest event in out_
};

}  // namespace fabricsim
