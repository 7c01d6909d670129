// What the network tells the layers above it: message completions and, optionally, events.
#pragma once

#include <cstdint>

namespace fabricsim {

/// Receives message completions (the collective layer implements it). One call per message.
class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  virtual void on_message_complete(uint64_t tag) = 0;
};

/// Optional observer of network events (trace.json). Called only when set.
class NetObserver {
 public:
  virtual ~NetObserver() = default;
  /// Message `seq` (a run-wide message number) was posted / received in full.
  virtual void message_posted(uint64_t seq, int src, int dst, uint32_t qp, int64_t bytes,
                              int64_t t_ps) = 0;
  virtual void message_delivered(uint64_t seq, int src, int dst, uint32_t qp, int64_t t_ps) = 0;
  /// Occupancy of switch egress queue (port, tc) changed to `bytes`.
  virtual void queue_changed(uint32_t port, int tc, int64_t bytes, int64_t t_ps) = 0;
  /// A frame was dropped: tail drop at egress `port`, or corrupted on the link of `port`.
  virtual void packet_dropped(uint32_t port, int tc, bool corrupt, int64_t t_ps) = 0;
  /// QP `qp` of host `src` went back from PSN `from` to `to` on a NAK or a timeout.
  virtual void went_back(uint32_t qp, int src, uint32_t from, uint32_t to, bool timeout,
                         int64_t t_ps) = 0;
  /// Switch ingress `port` decided XOFF (true) or XON (false) for priority `tc`, its count of
  /// buffered bytes being `ingress_bytes`.
  virtual void pfc_decided(uint32_t /*port*/, int /*tc*/, bool /*xoff*/, int64_t /*ingress_bytes*/,
                           int64_t /*t_ps*/) {}
  /// Egress `port`'s priority `tc` was paused (true) or resumed (false) by its peer.
  virtual void pause_changed(uint32_t /*port*/, int /*tc*/, bool /*paused*/, int64_t /*t_ps*/) {}
};

}  // namespace fabricsim
