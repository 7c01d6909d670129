// DCQCN congestion control (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015, §3): the sender's rate state machine (reaction point, RP) and the receiver's CNP
// rule (notification point, NP). Pure state, no events, no allocation: sim/net calls on_cnp()
// when a CNP reaches a queue pair, on_bytes_sent() after each frame it sends, and paces the QP at
// rate_bps(). The timers of the algorithm are evaluated lazily (see DcqcnRp).
//
// Reaction point, per queue pair (paper §3.1; symbols as in the paper, parameters DcqcnConfig):
//   On a CNP (a cut):    Rt = Rc (see clamping below);  Rc = Rc (1 - min(alpha/2, max_decrease)),
//                        at least min_rate;  alpha = (1 - g) alpha + g;  both rate-increase
//                        counters and the byte count go back to 0 and the rate timer and alpha
//                        timer restart.
//   Clamping: the paper sets Rt = Rc on every cut (clamp_target_rate). ConnectX firmware by
//   default (clamp_tgt_rate = 0, clamp_tgt_rate_after_time_inc = 1) does so only if the rate rose
//   since the last cut, by the byte counter or the timer (without the second flag, by the byte
//   counter only: QCN's rule); cuts with no increase between them keep Rt, so fast recovery
//   returns toward the rate before a run of cuts.
//   Rate reduce monitor period P (rate_reduce_monitor_period; 0 in the paper): at most one cut
//   per P. A CNP within P of the last cut only updates alpha; the cut follows at the end of
//   that period (once, however many CNPs came), with the alpha of that moment.
//   Alpha timer K:       alpha = (1 - g) alpha at every K without a CNP (K after the last CNP,
//                        2K, ...). Before the first CNP alpha stays at initial_alpha.
//   Rate increase events, from the rate timer (every T after the last cut: counter tc) and the
//   byte counter (every B bytes sent since the last cut: counter bc; a cut is a CNP's, or with
//   a monitor period the deferred one); after counting the event:
//     fast recovery    max(tc, bc) <= F:        Rc = (Rt + Rc) / 2
//     additive incr.   one of tc, bc above F:   Rt = Rt + R_AI;      Rc = (Rt + Rc) / 2
//     hyper increase   both above F:            Rt = Rt + i R_HAI;   Rc = (Rt + Rc) / 2,
//                                               i = min(tc, bc) - F   (1, 2, ...)
//   Rt never exceeds the line rate. Once Rc reaches the line rate the rate limiter is released
//   (as the NIC releases it, ConnectX's rpg_max_rate = line rate): the rate timer stops, bytes are
//   no longer counted, and nothing changes until the next CNP.
//   The phases follow QCN (IEEE 802.1Qau), which the paper's increase builds on; unlike QCN the
//   timer and byte counter keep their periods T and B in every phase, as the paper states them.
//
// Rates are integers (bits/s): a cut rounds to nearest, a midpoint (Rt + Rc) / 2 rounds up, so
// fast recovery reaches Rt exactly: after k fast-recovery events Rc = Rt - floor((Rt - Rc0) / 2^k).
//
// Notification point (paper §3.1): a receiver sends a CNP for a flow when a CE-marked packet of
// it arrives and no CNP went to that flow in the last N (cnp_interval): dcqcn_cnp_due().
//
// Not modelled (ConnectX firmware knobs without a DcqcnConfig field): rate_to_set_on_first_cnp,
// and the firmware's periodic (not CNP-restarted) alpha update, which differs from the restart
// here by less than one alpha period (ConnectX: 1 us).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sim/config/scenario.hpp"

namespace fabricsim {

/// Checks `cfg` for use at a port of `line_rate_bps`: g in (0, 1], initial_alpha in [0, 1],
/// alpha_timer and rate_timer > 0, byte_counter >= 0 (0 = no byte counter), fast_recovery_steps
/// >= 0, rai and rhai >= 0, 0 < min_rate <= line rate, max_decrease in [0, 1],
/// rate_reduce_monitor_period >= 0, cnp_interval >= 0,
/// cnp_traffic_class in 0..7. Throws std::invalid_argument naming the first bad field.
void validate_dcqcn(const DcqcnConfig& cfg, int64_t line_rate_bps);

/// Reaction point: DCQCN sender state of one queue pair (the algorithm in this file's header).
///
/// Timers are evaluated lazily: advance(now) applies every alpha-timer and rate-timer expiry up
/// to and including now in time order, exactly as if events had fired at their times; on_cnp and
/// on_bytes_sent call advance first. So any sequence of advance() calls between two updates
/// leaves the same state, bit for bit: callers need no timer events. An expiry at the same time
/// as a CNP or a send is applied before it.
///
/// Cost: O(1) per call plus O(1) per rate-increase event it applies (one per T or per B bytes
/// while throttled); alpha decay over any number of K periods is O(1). No allocation; 144 bytes.
/// Counters are 32-bit and wrap after 2^32 events.
class DcqcnRp {
 public:
  /// An inert RP: rate 0, ignores advance() and on_bytes_sent(); on_cnp() throws.
  DcqcnRp() = default;
  /// A queue pair starting at `now_ps` at its port's line rate (`line_rate_bps`, bits/s) with
  /// Rt = Rc = line rate and alpha = cfg->initial_alpha; no timer runs until the first CNP.
  /// `cfg` must outlive the RP (one config per scenario). Throws std::invalid_argument if cfg is
  /// null, line_rate_bps <= 0, now_ps < 0 or validate_dcqcn() rejects *cfg.
  DcqcnRp(const DcqcnConfig* cfg, int64_t line_rate_bps, int64_t now_ps);

  /// Applies every timer expiry in (last time seen, now_ps]. Throws std::invalid_argument if
  /// now_ps is earlier than a time already seen.
  void advance(int64_t now_ps) {
    if (now_ps < now_ps_) throw_time_backwards(now_ps);
    if (cut_pending_ && now_ps >= cut_due_ps()) {
      run_timers(cut_due_ps());  // expiries up to the deferred cut come first
      cut(cut_due_ps());
    }
    run_timers(now_ps);
  }

  /// A CNP for this queue pair arrived at now_ps: advance(now_ps), then the paper's rate cut and
  /// alpha update, and the increase machinery restarts. Throws std::logic_error on an inert RP,
  /// std::invalid_argument as advance() does.
  void on_cnp(int64_t now_ps);

  /// The QP put `bytes` (>= 0, the frame as the byte counter counts it; sim/net passes wire bytes)
  /// on the wire at now_ps: advance(now_ps), then one byte-counter increase event per B bytes
  /// counted since the last cut. Counts nothing while at line rate. Throws std::invalid_argument
  /// if bytes < 0, or as advance() does.
  void on_bytes_sent(int64_t bytes, int64_t now_ps) {
    advance(now_ps);
    if (rate_bps_ != line_rate_bps_ || bytes < 0) count_bytes(bytes);  // line rate: released
  }

  int64_t rate_bps() const { return rate_bps_; }      ///< current rate Rc, [min_rate, line rate]
  int64_t target_bps() const { return target_bps_; }  ///< target rate Rt, [Rc, line rate]
  int64_t line_rate_bps() const { return line_rate_bps_; }
  double alpha() const { return alpha_; }  ///< as of the last time seen, [0, 1]
  /// At the line rate with no cut waiting: no pacing, and sends need not be counted.
  bool at_line_rate() const { return rate_bps_ == line_rate_bps_ && !cut_pending_; }
  int64_t now_ps() const { return now_ps_; }  ///< the last time seen
  /// When the rate may next change by itself: the next rate-timer increase or a deferred cut
  /// (rate_reduce_monitor_period); INT64_MAX if none (at line rate, or inert). Byte-counter
  /// increases happen inside on_bytes_sent().
  int64_t next_rate_timer_ps() const {
    return cut_pending_ ? std::min(next_rate_ps_, cut_due_ps()) : next_rate_ps_;
  }
  bool cut_pending() const { return cut_pending_; }  ///< a CNP's cut waits for its period

  uint32_t cnp_received() const { return cnp_received_; }  ///< CNPs seen by on_cnp()
  uint32_t decreases() const { return decreases_; }        ///< CNPs that lowered Rc
  uint32_t fast_recovery_events() const { return fast_recovery_; }
  uint32_t additive_increase_events() const { return additive_increase_; }
  uint32_t hyper_increase_events() const { return hyper_increase_; }
  uint32_t timer_events() const { return timer_events_; }  ///< increase events from the timer T
  uint32_t byte_counter_events() const { return byte_events_; }  ///< ... from the counter B

 private:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  [[noreturn]] void throw_time_backwards(int64_t now_ps) const;
  void run_timers(int64_t now_ps) {  // alpha and rate timer expiries up to now_ps
    now_ps_ = now_ps;
    if (now_ps >= next_alpha_ps_) decay_alpha();
    while (now_ps >= next_rate_ps_) increase(/*from_timer=*/true);
  }
  int64_t cut_due_ps() const {  // when a deferred cut applies
    return last_cut_ps_ > kNever - cfg_->rate_reduce_monitor_period_ps
               ? kNever
               : last_cut_ps_ + cfg_->rate_reduce_monitor_period_ps;
  }
  void cut(int64_t now_ps);         // the rate decrease and the restart of the increase machinery
  void decay_alpha();               // alpha at now_ps_ from the last CNP's alpha and K
  void increase(bool from_timer);   // one rate-increase event (the phases above)
  void count_bytes(int64_t bytes);  // byte counter: an event for every B bytes
  void release();                   // Rc reached the line rate: stop the increase machinery

  const DcqcnConfig* cfg_ = nullptr;
  int64_t line_rate_bps_ = 0;
  int64_t rate_bps_ = 0;            // Rc
  int64_t target_bps_ = 0;          // Rt
  double alpha_ = 0.0;              // alpha at now_ps_
  double alpha_at_cnp_ = 0.0;       // alpha right after the last CNP
  int64_t last_cnp_ps_ = -1;        // -1 = no CNP yet
  int64_t last_cut_ps_ = -1;        // -1 = no cut yet
  int64_t now_ps_ = 0;              // last time seen
  int64_t next_alpha_ps_ = kNever;  // next alpha-timer expiry
  int64_t next_rate_ps_ = kNever;   // next rate-timer expiry
  int64_t bytes_counted_ = 0;       // bytes toward the next byte-counter event, [0, B)
  int32_t timer_stage_ = 0;         // tc: rate-timer events since the last cut
  int32_t byte_stage_ = 0;          // bc: byte-counter events since the last cut
  bool cut_pending_ = false;        // a CNP came within the monitor period of the last cut
  uint32_t cnp_received_ = 0;
  uint32_t decreases_ = 0;
  uint32_t fast_recovery_ = 0;
  uint32_t additive_increase_ = 0;
  uint32_t hyper_increase_ = 0;
  uint32_t timer_events_ = 0;
  uint32_t byte_events_ = 0;
};

/// Notification point rule (paper §3.1: at most one CNP per flow per N, N = cnp_interval_ps):
/// true if a CNP may be sent at now_ps for a flow whose last CNP went at last_cnp_ps (-1 = never),
/// i.e. never sent or now_ps - last_cnp_ps >= cnp_interval_ps; then sets last_cnp_ps = now_ps.
/// Call it for each CE-marked packet of the flow; cnp_interval_ps <= 0 allows every one.
inline bool dcqcn_cnp_due(int64_t& last_cnp_ps, int64_t now_ps, int64_t cnp_interval_ps) {
  if (last_cnp_ps >= 0 && now_ps - last_cnp_ps < cnp_interval_ps) return false;
  last_cnp_ps = now_ps;
  return true;
}

}  // namespace fabricsim
