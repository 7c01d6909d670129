// HPCC congestion control (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019):
// the sender's window and rate, from the in-band telemetry (INT) each switch on the path writes
// into a data packet and the ACK echoes. Pure state, no events: sim/net appends an IntHop at
// every switch egress a data packet leaves, copies the packet's records into the ACK or NAK it
// causes, and the sender calls on_ack() with them.
//
// Algorithm 1 of the paper, in the rate form of the authors' ns-3 model (rdma-hw.cc
// UpdateRateHp, single rate), symbols as in the paper, T the base RTT:
//   per hop i (against the records of the previous ACK):
//     txRate_i = (txBytes_i - txBytes_i') / (ts_i - ts_i')
//     u_i      = min(qLen_i, qLen_i') / (B_i T) + txRate_i / B_i
//   U = max_i u_i, tau = the ts difference of that hop, at most T;
//   u = (1 - tau / T) u + (tau / T) U                         (u starts at 1, as in ns-3)
//   if u >= eta or incStage >= maxStage:  R = Rc / (u / eta) + R_AI, incStage = 0
//   else:                                 R = Rc + R_AI,            incStage + 1
//   R within [min_rate, line rate]; the window W = R T.
// The reference rate Rc (the paper's Wc / T) and incStage move only at the once-per-RTT update
// (the first ACK that covers a PSN sent after the last update); between them each ACK sets R
// from Rc (fast reaction; HpccConfig::fast_react). The first ACK only stores its records.
// A QP starts at the line rate, with W = line rate x T.
#pragma once

#include <cstdint>

#include "congestion/hpcc/hpcc_config.hpp"
#include "congestion/hpcc/int_record.hpp"

namespace fabricsim {

/// Checks `c` for a port of `line_rate_bps` (bits/s). Throws std::invalid_argument naming the
/// parameter: eta outside (0, 1], max_stage < 0, rate_ai < 0 or above the line rate, min_rate
/// <= 0 or above the line rate, base_rtt < 0, int_header_bytes outside 0..1024.
void validate_hpcc(const HpccConfig& c, int64_t line_rate_bps);

/// The additive increase HPCC runs with on a port of `line_rate_bps`: rate_ai, or, at 0, the
/// line rate / 2,500 (the authors' 10 x bw / 25 Mb/s), bits/s.
int64_t hpcc_rate_ai_bps(const HpccConfig& c, int64_t line_rate_bps);

/// One queue pair's HPCC sender state.
class HpccRp {
 public:
  /// A queue pair on a port of `line_rate_bps` (bits/s) whose base RTT is `base_rtt_ps` (> 0),
  /// starting at the line rate. `cfg` must outlive it. Throws std::invalid_argument if cfg is
  /// null, the rate or the RTT is not positive, or validate_hpcc() rejects cfg.
  HpccRp(const HpccConfig* cfg, int64_t line_rate_bps, int64_t base_rtt_ps);

  /// An ACK or NAK of cumulative PSN `acked_psn` echoed the INT records `ints` of the data
  /// packet it answers; `snd_nxt` is the next PSN the QP sends. Updates the rate (and window).
  void on_ack(uint32_t acked_psn, uint32_t snd_nxt, const IntStack& ints);

  int64_t rate_bps() const { return rate_bps_; }  ///< [min_rate, line rate], bits/s
  int64_t line_rate_bps() const { return line_rate_bps_; }
  bool at_line_rate() const { return rate_bps_ == line_rate_bps_; }
  /// The window W = rate x T, bytes (at least 1); 0 when HpccConfig::window is off.
  int64_t window_bytes() const;
  int64_t base_rtt_ps() const { return base_rtt_ps_; }
  int64_t reference_rate_bps() const { return ref_rate_bps_; }  ///< Rc = Wc / T, bits/s
  double utilization() const { return u_; }                     ///< the smoothed U
  uint32_t updates() const { return updates_; }          ///< once-per-RTT updates that moved Rc
  uint32_t fast_reacts() const { return fast_reacts_; }  ///< per-ACK reactions between them
  bool overflowed() const { return overflowed_; }        ///< an ACK's records missed switch hops

 private:
  const HpccConfig* cfg_ = nullptr;
  int64_t line_rate_bps_ = 0;
  int64_t base_rtt_ps_ = 0;
  int64_t ai_bps_ = 0;
  int64_t rate_bps_ = 0;
  int64_t ref_rate_bps_ = 0;  // Rc
  double u_ = 1.0;
  IntHop prev_[IntStack::kMaxHops];  // the last ACK's records
  uint32_t last_update_psn_ = 0;     // snd_nxt at the last once-per-RTT update
  int32_t inc_stage_ = 0;
  uint8_t nprev_ = 0;
  bool have_prev_ = false;
  bool overflowed_ = false;
  uint32_t updates_ = 0;
  uint32_t fast_reacts_ = 0;
};

}  // namespace fabricsim
