// The lossless monitor: the PFC watchdog's per-queue state machine and the deadlock detector.
//
// Model:
//  - The check is periodic while the fabric is blocked: armed `deadlock_check_ps` after a queue
//    was first seen blocked (paused, or out of credits for its head), and at instants asked for
//    besides (a queue pair's last retransmission timeouts, so that a deadlock is proven before
//    the queue pair fails). It is no event and runs on no LP: it is the simulator's barrier
//    (Simulator::set_barrier), and runs before any event at its picosecond.
//  - PFC watchdog (as SONiC's pfcwd): an egress queue paused by its peer with frames queued,
//    continuously for the detection time, is declared stormed (seen at each check, so up to
//    one check interval late): PAUSE is ignored from then on, and with action drop the queue is
//    flushed. It is restored (PAUSE honoured again) once no PFC frame paused it for the
//    restoration time.
//  - Deadlock detector: reads only a merged LosslessSnapshot (the owner describes its ports,
//    a partitioned run gathers the parts) and the static wiring, so every rank reaches the same
//    verdict. A cycle of blocked egress queues, each waiting on an ingress whose frames lie
//    only in the cycle's queues and none being sent, that is the same with nothing sent from
//    it at two checks in a row, is a proven deadlock.
// The network (sim/net/network.hpp) owns one LosslessMonitor as a member, scans its own ports
// for the watchdog (asking watchdog_step per queue) and describes them in the snapshot; the
// monitor keeps the check's timing, the candidate cycle and the verdict.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "congestion/lossless_snapshot.hpp"
#include "sim/core/simulator.hpp"

namespace fabricsim {

/// A deadlock the detector proved: a cycle of egress queues (switch, port, priority), each
/// paused (or out of credits) by the next one's switch, none of which can send.
struct DeadlockReport {
  int64_t detected_at_ps = -1;  ///< -1: none
  /// "switch:port:priority" of each queue of the cycle, in wait-for order.
  std::vector<std::string> cycle;
  /// Flows (QPs) with packets in the cycle's queues: "host S -> host D (qp Q)".
  std::vector<std::string> flows;
  /// Per cycle entry, the link its queue sends on: "switch->peer".
  std::vector<std::string> links;
  bool broken_by_watchdog = false;  ///< the run went on: the PFC watchdog broke the cycle
};

class LosslessMonitor {
 public:
  /// Egress queues per port (traffic classes 0..7): a queue id is global port id x 8 + class.
  static constexpr int kClasses = 8;

  struct Settings {
    bool watchdog = false;       ///< PFC watchdog on
    int64_t detection_ps = 0;    ///< watchdog: paused with frames this long = a storm
    int64_t restoration_ps = 0;  ///< watchdog: no PFC frame for this long = restored
    int64_t check_ps = 0;        ///< the check's period while a queue is blocked
    /// InfiniBand credits: a queue without credits waits on its peer whatever its XOFF state.
    bool credits = false;
  };
  /// The static wiring the detector reads: per global port its node and the global id of its
  /// reverse direction; per node the global id of its port 0 (one more entry: the port count).
  struct Wiring {
    std::vector<uint32_t> port_node;
    std::vector<uint32_t> peer_port;
    std::vector<uint32_t> first_port;
  };

  /// What the watchdog decided for one egress queue at a check.
  enum class WatchdogStep : uint8_t {
    kNone,
    kRestore,  ///< stormed, no PFC frame for the restoration time: honour PAUSE again
    kStorm,    ///< paused with frames for the detection time: ignore PAUSE (and flush on drop)
  };

  /// `run_check(owner)` is called at each check (the owner's check: watchdog scan, snapshot,
  /// then judge()). Keeps a reference to `sim`, which must outlive the monitor.
  LosslessMonitor(Simulator& sim, Settings settings, void (*run_check)(void*), void* owner)
      : sim_(sim), settings_(settings), run_check_(run_check), owner_(owner) {}
  /// The wiring, once the owner has built its ports (before any check or find_deadlock()).
  void set_wiring(Wiring wiring) { wiring_ = std::move(wiring); }
  /// Clears the simulator's barrier if it is this monitor's pending check.
  ~LosslessMonitor();
  LosslessMonitor(const LosslessMonitor&) = delete;
  LosslessMonitor& operator=(const LosslessMonitor&) = delete;

  const Settings& settings() const { return settings_; }

  // ---- timing ----
  /// Arms the check deadlock_check_ps from now (the simulator's barrier), or at the earliest
  /// requested check if sooner, unless one is armed or a deadlock stopped the detector.
  void schedule_check() {
    if (check_at_ps_ != INT64_MAX || (deadlock_.detected_at_ps >= 0 && !settings_.watchdog)) {
      return;
    }
    arm_periodic();
  }
  /// Asks for a check at `t_ps` (> now) besides the periodic ones.
  void request_check_at(int64_t t_ps) {
    requested_checks_.push(t_ps);
    if (t_ps < check_at_ps_) arm_check_at(t_ps);
  }
  /// Arms the check at `t_ps` (>= now), replacing the one armed here.
  void arm_check_at(int64_t t_ps) {
    check_at_ps_ = t_ps;
    sim_.set_barrier(check_at_ps_, run_check_, owner_);
  }
  /// When the pending check runs, INT64_MAX when none is armed.
  int64_t next_check_ps() const { return check_at_ps_; }

  // ---- the parts of the fabric this process sees ----
  /// The nodes this process owns (bit per vertex: 1 = owned; empty = all, the default). Throws
  /// std::invalid_argument unless empty or one entry per fabric node.
  void set_owned_nodes(std::vector<uint8_t> owned);
  /// The owned nodes, nullptr when all are.
  const std::vector<uint8_t>* owned_nodes() const { return owned_.empty() ? nullptr : &owned_; }
  bool owns(uint32_t node) const { return owned_.empty() || owned_[node]; }
  /// Replaces the step that turns the local snapshot into the whole fabric's (default:
  /// identity; nullptr restores it). The result must be the same on every rank.
  void set_snapshot_gather(std::function<LosslessSnapshot(LosslessSnapshot)> gather) {
    gather_ = std::move(gather);
  }

  // ---- the check ----
  /// The watchdog's step for one egress queue at `now`: `stormed` and `paused` its state,
  /// `has_frames` whether frames wait in it, `last_pfc_rx_ps` the last PFC frame that paused
  /// it, `paused_since_ps` the start of its current counted pause; `stuck_since_ps` is the
  /// queue's own watchdog state (-1 = not stuck), updated here.
  WatchdogStep watchdog_step(bool stormed, bool paused, bool has_frames, int64_t last_pfc_rx_ps,
                             int64_t paused_since_ps, int64_t& stuck_since_ps, int64_t now) const {
    if (stormed) {
      if (now - last_pfc_rx_ps >= settings_.restoration_ps) {
        stuck_since_ps = -1;
        return WatchdogStep::kRestore;
      }
      return WatchdogStep::kNone;
    }
    if (!paused || !has_frames) {
      stuck_since_ps = -1;
      return WatchdogStep::kNone;
    }
    if (stuck_since_ps < 0) stuck_since_ps = paused_since_ps;
    if (now - stuck_since_ps >= settings_.detection_ps) {
      stuck_since_ps = -1;
      return WatchdogStep::kStorm;
    }
    return WatchdogStep::kNone;
  }
  /// Starts a check: none is armed any more.
  void begin_check() { check_at_ps_ = INT64_MAX; }
  /// The whole fabric's snapshot from this part's `local` (through the gather).
  LosslessSnapshot gather(LosslessSnapshot local) const {
    return gather_ ? gather_(std::move(local)) : std::move(local);
  }
  /// The verdict on the merged snapshot `snap` at `now`: keeps the candidate cycle, arms the
  /// next check, stops the simulator on a proven deadlock without the watchdog. Returns the
  /// cycle proven at this check (queue ids in wait-for order; empty if none), whose
  /// DeadlockReport entries the owner then names (report()).
  std::vector<uint64_t> judge(const LosslessSnapshot& snap, int64_t now);
  /// The stuck cycle of egress queue ids (port x 8 + class) in wait-for order that the merged
  /// snapshot `s` proves, if any (else empty). Reads only `s` and the static wiring.
  std::vector<uint64_t> find_deadlock(const LosslessSnapshot& s) const;

  /// The deadlock found (detected_at_ps >= 0), if any.
  const DeadlockReport& deadlock() const { return deadlock_; }
  /// Its text entries, for the owner to fill for the cycle judge() returned.
  DeadlockReport& report() { return deadlock_; }
  /// The detector still looks for a deadlock.
  bool detecting() const { return deadlock_.detected_at_ps < 0; }

 private:
  void arm_periodic();

  Simulator& sim_;
  Settings settings_;
  Wiring wiring_;
  void (*run_check_)(void*);
  void* owner_;
  // The check's own state, the same on every rank (derived from merged snapshots only).
  int64_t check_at_ps_ = INT64_MAX;  ///< the armed check's time; INT64_MAX: none
  /// Checks asked for by request_check_at, earliest on top (times in the past are skipped).
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> requested_checks_;
  std::vector<uint64_t> last_cycle_;    ///< the candidate cycle of the previous check
  std::vector<int64_t> last_cycle_tx_;  ///< per queue of last_cycle_: its tx_packets then
  std::vector<uint8_t> owned_;          ///< per node: owned (empty: all)
  std::function<LosslessSnapshot(LosslessSnapshot)> gather_;  ///< empty: identity
  DeadlockReport deadlock_;
};

}  // namespace fabricsim
