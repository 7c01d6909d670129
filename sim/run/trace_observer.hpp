// Network events -> trace.json (Chrome trace events, opens in Perfetto).
//
// Layout in the viewer: process 1 "messages" has one track per source host with an async span
// per message (posted -> received in full) and instants for go-back-N (NAK or timeout);
// process 2 "switch egress queues" has one counter track per queue that held a packet
// ("leaf0->host3 tc3", bytes) and instants for drops. Recording stops at the ChromeTrace's cap.
#pragma once

#include <string>
#include <vector>

#include "sim/net/network.hpp"
#include "sim/report/trace.hpp"

namespace fabricsim {

class TraceObserver final : public NetObserver {
 public:
  /// Names tracks after `net`'s nodes. `trace` and `net` must outlive the observer.
  TraceObserver(ChromeTrace& trace, const Network& net);
  void message_posted(uint64_t seq, int src, int dst, uint32_t qp, int64_t bytes,
                      int64_t t_ps) override;
  void message_delivered(uint64_t seq, int src, int dst, uint32_t qp, int64_t t_ps) override;
  void queue_changed(uint32_t port, int tc, int64_t bytes, int64_t t_ps) override;
  void packet_dropped(uint32_t port, int tc, bool corrupt, int64_t t_ps) override;
  /// PFC: a 0/1 counter track per paused egress queue, and XOFF/XON instants at the ingress.
  void pause_changed(uint32_t port, int tc, bool paused, int64_t t_ps) override;
  void pfc_decided(uint32_t port, int tc, bool xoff, int64_t ingress_bytes, int64_t t_ps) override;
  void went_back(uint32_t qp, int src, uint32_t from, uint32_t to, bool timeout,
                 int64_t t_ps) override;

 private:
  static constexpr int kMessagesPid = 1, kQueuesPid = 2, kPfcPid = 3;
  std::string message_name(int src, int dst) const;
  ChromeTrace& trace_;
  const Network& net_;
  std::vector<std::string> port_names_;  ///< "leaf0->host3"
};

}  // namespace fabricsim
