// The per-queue-pair congestion controls: what `nic.congestion_control: NAME` runs on every
// queue pair. A control has two halves (the terms of DCQCN, Zhu et al., SIGCOMM 2015, §3):
// the reaction point at the sender, which sets the rate the NIC paces the QP at, and the
// notification point at the receiver, which decides, for each data packet, whether to send the
// sender a congestion notification packet (CNP).
//
// The built-in controls ("none", "dcqcn", "timely", "hpcc") are bound at compile time: the NIC
// switches on a small enum (CcKind, congestion/qp_congestion.hpp) and calls DcqcnRp, TimelyRp or
// HpccRp inline, with no virtual call. A control registered from outside the library (a test, a
// plug-in) implements CcSender and CcReceiver; the network makes one of each per queue pair when it
// creates the QP (never per packet) and calls them through their virtual functions.
//
// The NIC's calls, in sim/net/nic_transport.cpp:
//   on_start       the QP's first message is posted;
//   advance        before the NIC reads the rate of a QP waiting for its pacing gap;
//   on_bytes_sent  after each data frame the QP puts on the wire (wire bytes);
//   on_ack         each ACK or NAK that reaches the sender (its cumulative PSN);
//   on_rtt         then, for a control with needs_rtt, the round-trip time it measured: the
//                  NIC stamps each data packet's send time, the receiver echoes the stamp of
//                  the packet an ACK or NAK answers, and rtt = the ACK's arrival - the stamp;
//   on_int         then, for a control with needs_int, the in-band telemetry the ACK echoes:
//                  each switch egress appends an IntHop to a data packet (congestion/hpcc/
//                  int_record.hpp), and the ACK or NAK it causes carries them back;
//   on_cnp         each CNP that reaches the sender;
//   rate_bps       the rate to pace at (0 = the port's line rate, nothing to pace);
//   window_bytes   the most bytes in flight (0 = no window); an ACK reopens a full window;
//   next_timer_ps  when the rate may change without an event (the NIC wakes then to re-time
//                  a waiting QP's gap);
// and at the receiver, on_data for each data packet that arrives (CE-marked or not), before
// the transport's own checks: true sends a CNP, of class cnp_traffic_class.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "congestion/hpcc/int_record.hpp"

namespace fabricsim {

/// How a control is run: the built-ins inline, registered ones through CcSender/CcReceiver.
enum class CcKind : uint8_t {
  kNone,        ///< no congestion control: the QP sends at its static rate limit or line rate
  kDcqcn,       ///< DCQCN (congestion/dcqcn.hpp), parameters from the `dcqcn:` section
  kTimely,      ///< TIMELY (congestion/timely/), parameters from the `timely:` section
  kHpcc,        ///< HPCC (congestion/hpcc/), parameters from the `hpcc:` section
  kRegistered,  ///< a control registered with register_congestion_control()
};

/// What a registered control learns of a queue pair when the network creates it.
struct CcQpInfo {
  uint32_t qp = 0;  ///< the network's QP id (creation order)
  int src_host = 0, dst_host = 0;
  int tc = 0;                    ///< the QP's traffic class
  int64_t line_rate_bps = 0;     ///< the sending NIC port's rate, bits/s
  int64_t static_limit_bps = 0;  ///< nic.qp_rate_limit (0 = none), which also applies
};

/// The sender half (reaction point) of a registered control, one per queue pair. The defaults
/// do nothing; times are simulated picoseconds and never go backwards.
class CcSender {
 public:
  virtual ~CcSender() = default;
  virtual void on_start(int64_t /*now_ps*/) {}
  virtual void advance(int64_t /*now_ps*/) {}
  virtual void on_bytes_sent(int64_t /*wire_bytes*/, int64_t /*now_ps*/) {}
  virtual void on_ack(uint32_t /*cumulative_psn*/, int64_t /*now_ps*/) {}
  virtual void on_cnp(int64_t /*now_ps*/) {}
  /// With needs_rtt: an ACK or NAK of cumulative PSN `acked_psn` measured `rtt_ps` (its arrival
  /// at now_ps minus the send time of the data packet it answers); `snd_nxt` is the next PSN the
  /// QP sends. Called after on_ack.
  virtual void on_rtt(uint32_t /*acked_psn*/, uint32_t /*snd_nxt*/, int64_t /*rtt_ps*/,
                      int64_t /*now_ps*/) {}
  /// With needs_int: an ACK or NAK of cumulative PSN `acked_psn` echoed the INT records of the
  /// data packet it answers, one per switch egress in path order. Called after on_rtt.
  virtual void on_int(uint32_t /*acked_psn*/, uint32_t /*snd_nxt*/, const IntStack& /*ints*/,
                      int64_t /*now_ps*/) {}
  /// The most bytes the QP may have in flight (sent and not acknowledged), bytes; 0 = no window.
  virtual int64_t window_bytes() const { return 0; }
  /// The rate to pace the QP at, bits/s; 0 = the port's line rate. The lower of this and
  /// nic.qp_rate_limit applies.
  virtual int64_t rate_bps() const = 0;
  /// When the rate may next change by itself; INT64_MAX if never.
  virtual int64_t next_timer_ps() const { return std::numeric_limits<int64_t>::max(); }
};

/// The receiver half (notification point) of a registered control, one per queue pair.
class CcReceiver {
 public:
  virtual ~CcReceiver() = default;
  /// A data packet of the QP arrived at now_ps, marked CE by a switch or not; true: send the
  /// sender a CNP now.
  virtual bool on_data(bool ce_marked, int64_t now_ps) = 0;
};

/// One congestion control.
struct CongestionControl {
  std::string name;  ///< the `nic.congestion_control` value, e.g. "dcqcn"
  std::string doc;   ///< one line: what it is and its source
  CcKind kind = CcKind::kRegistered;
  /// Registered controls: the QP's sender state, made once per QP at its creation (required).
  std::function<std::unique_ptr<CcSender>(const CcQpInfo&)> make_sender;
  /// Registered controls: the QP's receiver state; empty = the receiver sends no CNPs.
  std::function<std::unique_ptr<CcReceiver>(const CcQpInfo&)> make_receiver;
  /// Registered controls: the traffic class of its CNPs, 0..7; -1 = the QP's own class.
  int cnp_traffic_class = -1;
  /// Registered controls: true to receive on_rtt (the NIC then stamps every data packet and
  /// the receiver echoes the stamp in its ACKs: 8 bytes a packet beside the pool).
  bool needs_rtt = false;
  /// Registered controls: true to receive on_int (the switches then append INT records to
  /// every data packet and the receiver echoes them: IntStack bytes a packet beside the pool).
  bool needs_int = false;
};

/// Adds `control` (kind kRegistered) to the table, after the built-in ones, and its name to the
/// loader's valid `nic.congestion_control` values (register_choice). Returns its index in
/// the table. Throws std::invalid_argument when the name is empty, "auto" or already taken,
/// make_sender is empty, the kind is not kRegistered or cnp_traffic_class is outside -1..7.
size_t register_congestion_control(CongestionControl control);

/// The control `name` names; nullptr when none has that name. Pointers stay valid when more
/// controls register.
const CongestionControl* find_congestion_control(const std::string& name);

/// The names in table order: the built-in ones ("none", "dcqcn", "timely", "hpcc"), then the
/// registered ones.
std::vector<std::string> congestion_control_names();

}  // namespace fabricsim
