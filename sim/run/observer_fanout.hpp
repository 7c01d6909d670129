// One NetObserver that forwards every event to several, in order: the network has one observer
// slot, which the trace observer and run hooks (run_hooks.hpp) may want at once. Installed only
// when more than one observer is attached, so a run with none or one pays nothing more.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/net/network.hpp"

namespace fabricsim {

class ObserverFanOut final : public NetObserver {
 public:
  /// Forwards to `observers` (not null; they must outlive this object), in this order.
  explicit ObserverFanOut(std::vector<NetObserver*> observers) : to_(std::move(observers)) {}
  void message_posted(uint64_t seq, int src, int dst, uint32_t qp, int64_t bytes,
                      int64_t t_ps) override;
  void message_delivered(uint64_t seq, int src, int dst, uint32_t qp, int64_t t_ps) override;
  void queue_changed(uint32_t port, int tc, int64_t bytes, int64_t t_ps) override;
  void packet_dropped(uint32_t port, int tc, bool corrupt, int64_t t_ps) override;
  void went_back(uint32_t qp, int src, uint32_t from, uint32_t to, bool timeout,
                 int64_t t_ps) override;
  void pfc_decided(uint32_t port, int tc, bool xoff, int64_t ingress_bytes, int64_t t_ps) override;
  void pause_changed(uint32_t port, int tc, bool paused, int64_t t_ps) override;

 private:
  std::vector<NetObserver*> to_;
};

/// Sets `net`'s observer to what watches it: nothing, the one observer, or `fanout` (emplaced
/// here) over all of them, in the order given.
template <class FanOutSlot>
void attach_observers(Network& net, const std::vector<NetObserver*>& observers,
                      FanOutSlot& fanout) {
  if (observers.empty()) return;
  if (observers.size() == 1) {
    net.set_observer(observers.front());
    return;
  }
  fanout.emplace(observers);
  net.set_observer(&*fanout);
}

}  // namespace fabricsim
