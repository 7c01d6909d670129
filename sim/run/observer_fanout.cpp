#include "sim/run/observer_fanout.hpp"

namespace fabricsim {

void ObserverFanOut::message_posted(uint64_t seq, int src, int dst, uint32_t qp, int64_t bytes,
                                    int64_t t_ps) {
  for (NetObserver* o : to_) o->message_posted(seq, src, dst, qp, bytes, t_ps);
}

void ObserverFanOut::message_delivered(uint64_t seq, int src, int dst, uint32_t qp, int64_t t_ps) {
  for (NetObserver* o : to_) o->message_delivered(seq, src, dst, qp, t_ps);
}

void ObserverFanOut::queue_changed(uint32_t port, int tc, int64_t bytes, int64_t t_ps) {
  for (NetObserver* o : to_) o->queue_changed(port, tc, bytes, t_ps);
}

void ObserverFanOut::packet_dropped(uint32_t port, int tc, bool corrupt, int64_t t_ps) {
  for (NetObserver* o : to_) o->packet_dropped(port, tc, corrupt, t_ps);
}

void ObserverFanOut::went_back(uint32_t qp, int src, uint32_t from, uint32_t to, bool timeout,
                               int64_t t_ps) {
  for (NetObserver* o : to_) o->went_back(qp, src, from, to, timeout, t_ps);
}

void ObserverFanOut::pfc_decided(uint32_t port, int tc, bool xoff, int64_t ingress_bytes,
                                 int64_t t_ps) {
  for (NetObserver* o : to_) o->pfc_decided(port, tc, xoff, ingress_bytes, t_ps);
}

void ObserverFanOut::pause_changed(uint32_t port, int tc, bool paused, int64_t t_ps) {
  for (NetObserver* o : to_) o->pause_changed(port, tc, paused, t_ps);
}

}  // namespace fabricsim
