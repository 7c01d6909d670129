// TIMELY congestion control (Mittal et al., "TIMELY: RTT-based Congestion Control for the
// Datacenter", SIGCOMM 2015): the sender's rate, from the round-trip time the NIC measures and
// its gradient. Pure state, no events, no allocation: sim/net stamps each data packet's send
// time, the receiver echoes it in the ACK, and the sender calls on_rtt() with now - that time.
//
// Rate computation, once per round trip (as the HPCC authors' ns-3 model of TIMELY does,
// rdma-hw.cc UpdateRateTimely: the first ACK that covers a PSN sent after the last update;
// parameters TimelyConfig, symbols as in the paper's Algorithm 1):
//   new_rtt_diff = rtt - prev_rtt;   rtt_diff = (1 - alpha) rtt_diff + alpha new_rtt_diff
//   gradient = rtt_diff / minRTT
//   rtt < T_low:      increase;
//   rtt > T_high:     rate = rate (1 - beta (1 - T_high / rtt));
//   gradient <= 0:    increase;
//   else:             rate = rate (1 - beta gradient), at least 0 before the floor;
//   increase:         rate + delta, or + N delta once N increases came in a row (HAI);
//   the rate stays within [min_rate, line rate]; a decrease ends the run of increases.
// The first sample only sets prev_rtt. A QP starts at the line rate. No timers: the rate
// changes only on an ACK.
#pragma once

#include <cstdint>

#include "congestion/timely/timely_config.hpp"

namespace fabricsim {

/// Checks `c` for a port of `line_rate_bps` (bits/s). Throws std::invalid_argument naming the
/// parameter: a threshold, min_rtt or rate <= 0, t_high < t_low, alpha outside (0, 1], beta
/// outside [0, 1], hai_threshold < 0, min_rate above the line rate.
void validate_timely(const TimelyConfig& c, int64_t line_rate_bps);

/// One queue pair's TIMELY sender state (the rate computation engine of the paper's Figure 5).
class TimelyRp {
 public:
  /// An inert sender: rate 0; on_rtt() throws.
  TimelyRp() = default;
  /// A queue pair on a port of `line_rate_bps` (bits/s), starting at that rate. `cfg` must
  /// outlive it. Throws std::invalid_argument if cfg is null or validate_timely() rejects it.
  TimelyRp(const TimelyConfig* cfg, int64_t line_rate_bps);

  /// An ACK of cumulative PSN `acked_psn` (the next PSN the receiver expects) echoed the send
  /// time of the packet it answers; rtt_ps = its arrival minus that time (>= 0). `snd_nxt` is
  /// the next PSN the QP sends. Updates the rate if the ACK closes a round trip (acked_psn beyond
  /// the snd_nxt of the last update). Throws std::logic_error on an inert sender,
  /// std::invalid_argument if rtt_ps < 0.
  void on_rtt(uint32_t acked_psn, uint32_t snd_nxt, int64_t rtt_ps);

  int64_t rate_bps() const { return rate_bps_; }  ///< [min_rate, line rate], bits/s
  int64_t line_rate_bps() const { return line_rate_bps_; }
  bool at_line_rate() const { return rate_bps_ == line_rate_bps_; }
  double rtt_diff_ps() const { return rtt_diff_ps_; }  ///< the smoothed RTT difference, ps
  uint32_t samples() const { return samples_; }        ///< RTT samples seen
  uint32_t updates() const { return updates_; }        ///< rate computations (one per RTT)
  uint32_t increases() const { return increases_; }    ///< of which increases (HAI included)
  uint32_t hai_increases() const { return hai_increases_; }
  uint32_t decreases() const { return decreases_; }

 private:
  void update(int64_t rtt_ps);

  const TimelyConfig* cfg_ = nullptr;
  int64_t line_rate_bps_ = 0;
  int64_t rate_bps_ = 0;
  int64_t prev_rtt_ps_ = 0;       // the RTT of the last update
  double rtt_diff_ps_ = 0.0;      // EWMA of RTT differences
  uint32_t last_update_psn_ = 0;  // snd_nxt at the last update
  int32_t inc_stage_ = 0;         // increases in a row
  bool have_prev_ = false;        // a first sample was seen
  uint32_t samples_ = 0;
  uint32_t updates_ = 0;
  uint32_t increases_ = 0;
  uint32_t hai_increases_ = 0;
  uint32_t decreases_ = 0;
};

}  // namespace fabricsim
