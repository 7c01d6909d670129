// A queue pair's congestion-control state, as the NIC holds it: the sender half (QpCcSender,
// the reaction point) beside the QP's transport state, the receiver half (QpCcReceiver, the
// notification point) beside its receive state. Each call switches on the network's CcKind:
// DCQCN (DcqcnRp), TIMELY (TimelyRp) and HPCC (HpccRp) run inline, a registered control through its
// CcSender / CcReceiver, made once per QP when the QP is created (congestion/cc_registry.hpp lists
// the calls and when the NIC makes them).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <variant>

#include "congestion/cc_registry.hpp"
#include "congestion/dcqcn.hpp"
#include "congestion/hpcc/hpcc.hpp"
#include "congestion/timely/timely.hpp"

namespace fabricsim {

/// The network's congestion control, from the scenario (nic.congestion_control, dcqcn.*,
/// timely.*, hpcc.*).
struct CcChoice {
  CcKind kind = CcKind::kNone;
  DcqcnConfig dcqcn;                              ///< kDcqcn's parameters
  TimelyConfig timely;                            ///< kTimely's parameters
  HpccConfig hpcc;                                ///< kHpcc's parameters
  const CongestionControl* registered = nullptr;  ///< kRegistered: its entry in the registry
  /// The control measures round-trip times (QpCcSender::on_rtt): the NIC stamps data packets.
  bool needs_rtt() const {
    return kind == CcKind::kTimely ||
           (kind == CcKind::kRegistered && registered != nullptr && registered->needs_rtt);
  }
  /// The control reads in-band telemetry (QpCcSender::on_int): switches append an IntHop to
  /// each data packet and the receiver echoes the records in its ACKs.
  bool needs_int() const {
    return kind == CcKind::kHpcc ||
           (kind == CcKind::kRegistered && registered != nullptr && registered->needs_int);
  }
};

/// The sender half of one queue pair's congestion control.
class QpCcSender {
 public:
  /// An idle sender (kNone): rate 0, no timers.
  QpCcSender() = default;
  /// At the QP's creation under `choice` (which must outlive this): a registered control's
  /// sender is made here, once.
  QpCcSender(const CcChoice& choice, const CcQpInfo& info) : kind_(choice.kind) {
    if (kind_ == CcKind::kRegistered) registered_ = choice.registered->make_sender(info);
  }

  bool started() const { return started_; }
  /// The QP's first message, at now_ps, on a port of line_rate_bps: DCQCN's reaction point,
  /// TIMELY's and HPCC's senders start at the line rate (their constructors and errors); HPCC
  /// with the base RTT base_rtt_ps (HpccConfig::base_rtt_ps, or the QP's idle round trip).
  void start(const CcChoice& choice, int64_t line_rate_bps, int64_t now_ps,
             int64_t base_rtt_ps = 0) {
    started_ = true;
    if (kind_ == CcKind::kDcqcn) {
      state_ = DcqcnRp(&choice.dcqcn, line_rate_bps, now_ps);
    } else if (kind_ == CcKind::kTimely) {
      state_ = TimelyRp(&choice.timely, line_rate_bps);
    } else if (kind_ == CcKind::kHpcc) {
      // Held by pointer: its hop records (about 300 bytes) stay out of every other QP.
      state_ = std::make_unique<HpccRp>(&choice.hpcc, line_rate_bps, base_rtt_ps);
    } else if (kind_ == CcKind::kRegistered) {
      registered_->on_start(now_ps);
    }
  }
  /// True if the control may change the rate (re-time a waiting QP's gap).
  bool adaptive() const { return kind_ != CcKind::kNone; }
  void advance(int64_t now_ps) {
    if (DcqcnRp* rp = std::get_if<DcqcnRp>(&state_)) {
      rp->advance(now_ps);
    } else if (kind_ == CcKind::kRegistered) {
      registered_->advance(now_ps);
    }
  }
  void on_bytes_sent(int64_t wire_bytes, int64_t now_ps) {
    if (DcqcnRp* rp = std::get_if<DcqcnRp>(&state_)) {
      if (!rp->at_line_rate()) rp->on_bytes_sent(wire_bytes, now_ps);
    } else if (kind_ == CcKind::kRegistered) {
      registered_->on_bytes_sent(wire_bytes, now_ps);
    }
  }
  /// Throws std::logic_error without a control (no CNP is sent then).
  void on_cnp(int64_t now_ps) {
    if (kind_ == CcKind::kDcqcn) {
      dcqcn_rp().on_cnp(now_ps);  // an inert RP (not started) throws
    } else if (kind_ == CcKind::kRegistered) {
      registered_->on_cnp(now_ps);
    } else {
      throw std::logic_error("a CNP reached a queue pair without congestion control");
    }
  }
  void on_ack(uint32_t cumulative_psn, int64_t now_ps) {
    if (kind_ == CcKind::kRegistered) registered_->on_ack(cumulative_psn, now_ps);
  }
  /// A round-trip time measured by an ACK or NAK of cumulative PSN acked_psn (CcChoice::
  /// needs_rtt; CcSender::on_rtt). TIMELY: its rate computation (TimelyRp::on_rtt).
  void on_rtt(uint32_t acked_psn, uint32_t snd_nxt, int64_t rtt_ps, int64_t now_ps) {
    if (kind_ == CcKind::kTimely) {
      timely_rp().on_rtt(acked_psn, snd_nxt, rtt_ps);  // an inert sender throws
    } else if (kind_ == CcKind::kRegistered) {
      registered_->on_rtt(acked_psn, snd_nxt, rtt_ps, now_ps);
    }
  }
  /// An ACK or NAK of cumulative PSN acked_psn echoed the INT records `ints` (CcChoice::
  /// needs_int; CcSender::on_int). HPCC: its window and rate computation (HpccRp::on_ack).
  void on_int(uint32_t acked_psn, uint32_t snd_nxt, const IntStack& ints, int64_t now_ps) {
    if (auto* rp = std::get_if<std::unique_ptr<HpccRp>>(&state_)) {
      (*rp)->on_ack(acked_psn, snd_nxt, ints);
    } else if (kind_ == CcKind::kRegistered) {
      registered_->on_int(acked_psn, snd_nxt, ints, now_ps);
    }
  }
  /// The most bytes the QP may have in flight (sent, not acknowledged); 0 = no window.
  int64_t window_bytes() const {
    if (const auto* rp = std::get_if<std::unique_ptr<HpccRp>>(&state_)) {
      return (*rp)->window_bytes();
    }
    if (kind_ == CcKind::kRegistered && registered_) return registered_->window_bytes();
    return 0;
  }
  /// The control's pacing rate, bits/s; 0 = the line rate (DCQCN released, or none).
  int64_t rate_bps() const {
    if (const DcqcnRp* rp = std::get_if<DcqcnRp>(&state_)) {
      return rp->at_line_rate() ? 0 : rp->rate_bps();
    }
    if (const TimelyRp* rp = std::get_if<TimelyRp>(&state_)) {
      return rp->at_line_rate() ? 0 : rp->rate_bps();
    }
    if (const auto* rp = std::get_if<std::unique_ptr<HpccRp>>(&state_)) {
      return (*rp)->at_line_rate() ? 0 : (*rp)->rate_bps();
    }
    if (kind_ == CcKind::kRegistered) return registered_->rate_bps();
    return 0;
  }
  /// When the rate may next change by itself; INT64_MAX if never.
  int64_t next_timer_ps() const {
    if (const DcqcnRp* rp = std::get_if<DcqcnRp>(&state_)) return rp->next_rate_timer_ps();
    if (kind_ == CcKind::kRegistered) return registered_->next_timer_ps();
    return std::numeric_limits<int64_t>::max();
  }
  /// TIMELY's sender state; nullptr unless the kind is kTimely and the QP started.
  const TimelyRp* timely() const { return std::get_if<TimelyRp>(&state_); }
  /// HPCC's sender state; nullptr unless the kind is kHpcc and the QP started.
  const HpccRp* hpcc() const {
    const auto* rp = std::get_if<std::unique_ptr<HpccRp>>(&state_);
    return rp != nullptr ? rp->get() : nullptr;
  }

 private:
  // The started control's state; an inert one (which throws on a CNP or an RTT) before start().
  DcqcnRp& dcqcn_rp() {
    if (DcqcnRp* rp = std::get_if<DcqcnRp>(&state_)) return *rp;
    return state_.emplace<DcqcnRp>();
  }
  TimelyRp& timely_rp() {
    if (TimelyRp* rp = std::get_if<TimelyRp>(&state_)) return *rp;
    return state_.emplace<TimelyRp>();
  }

  /// The built-in control's state, made at start(): DCQCN's reaction point, TIMELY's or HPCC's
  /// sender (monostate before, and for the other kinds).
  std::variant<std::monostate, DcqcnRp, TimelyRp, std::unique_ptr<HpccRp>> state_;
  std::unique_ptr<CcSender> registered_;
  CcKind kind_ = CcKind::kNone;
  bool started_ = false;
};

/// The receiver half of one queue pair's congestion control.
class QpCcReceiver {
 public:
  QpCcReceiver() = default;
  /// At the QP's creation under `choice`: a registered control's receiver is made here, once.
  QpCcReceiver(const CcChoice& choice, const CcQpInfo& info) : kind_(choice.kind) {
    if (kind_ == CcKind::kRegistered && choice.registered->make_receiver) {
      registered_ = choice.registered->make_receiver(info);
    }
  }
  /// A data packet arrived at now_ps (ce: marked CE): true if a CNP goes to the sender now.
  /// DCQCN: a CE-marked packet, at most one CNP per cnp_interval (dcqcn_cnp_due).
  bool cnp_due(const CcChoice& choice, bool ce, int64_t now_ps) {
    if (kind_ == CcKind::kDcqcn) {
      return ce && dcqcn_cnp_due(last_cnp_ps_, now_ps, choice.dcqcn.cnp_interval_ps);
    }
    if (kind_ == CcKind::kRegistered && registered_) return registered_->on_data(ce, now_ps);
    return false;
  }
  /// The class of the CNPs of a QP of class `qp_tc`.
  static int cnp_class(const CcChoice& choice, int qp_tc) {
    if (choice.kind == CcKind::kDcqcn) return choice.dcqcn.cnp_traffic_class;
    const int tc = choice.registered != nullptr ? choice.registered->cnp_traffic_class : -1;
    return tc < 0 ? qp_tc : tc;
  }

 private:
  std::unique_ptr<CcReceiver> registered_;
  int64_t last_cnp_ps_ = -1;  ///< DCQCN: the last CNP sent for this flow (-1 = none yet)
  CcKind kind_ = CcKind::kNone;
};

}  // namespace fabricsim
