#include "sim/run/trace_observer.hpp"

namespace fabricsim {

TraceObserver::TraceObserver(ChromeTrace& trace, const Network& net) : trace_(trace), net_(net) {
  const FabricGraph& g = net.fabric().graph;
  for (const Port& p : net.ports())
    port_names_.push_back(g[p.node].name + "->" + g[p.peer_node].name);
  trace_.process_name(kMessagesPid, "messages (one track per source host)");
  trace_.process_name(kQueuesPid, "switch egress queues (bytes)");
  trace_.process_name(kPfcPid, "PFC (1 = egress queue paused by its peer)");
  for (size_t h = 0; h < net.fabric().hosts.size(); ++h) {
    trace_.thread_name(kMessagesPid, static_cast<int>(h), g[net.fabric().hosts[h]].name);
  }
}

std::string TraceObserver::message_name(int src, int dst) const {
  const FabricGraph& g = net_.fabric().graph;
  return g[net_.fabric().hosts[src]].name + "->" + g[net_.fabric().hosts[dst]].name;
}

void TraceObserver::message_posted(uint64_t seq, int src, int dst, uint32_t qp, int64_t bytes,
                                   int64_t t_ps) {
  if (!trace_.recording()) return trace_.skip(t_ps);
  trace_.async_begin("message", message_name(src, dst), seq, kMessagesPid, src, t_ps,
                     "{\"bytes\":" + std::to_string(bytes) + ",\"qp\":" + std::to_string(qp) + "}");
}

void TraceObserver::message_delivered(uint64_t seq, int src, int dst, uint32_t, int64_t t_ps) {
  if (!trace_.recording()) return trace_.skip(t_ps);
  trace_.async_end("message", message_name(src, dst), seq, kMessagesPid, src, t_ps);
}

void TraceObserver::queue_changed(uint32_t port, int tc, int64_t bytes, int64_t t_ps) {
  if (!trace_.recording()) return trace_.skip(t_ps);
  trace_.counter(kQueuesPid, port_names_[port] + " tc" + std::to_string(tc), t_ps, bytes);
}

void TraceObserver::packet_dropped(uint32_t port, int tc, bool corrupt, int64_t t_ps) {
  if (!trace_.recording()) return trace_.skip(t_ps);
  trace_.instant("drop", (corrupt ? "corrupt frame " : "tail drop ") + port_names_[port],
                 kQueuesPid, 0, t_ps, "{\"tc\":" + std::to_string(tc) + "}");
}

void TraceObserver::pause_changed(uint32_t port, int tc, bool paused, int64_t t_ps) {
  if (!trace_.recording()) return trace_.skip(t_ps);
  trace_.counter(kPfcPid, "paused " + port_names_[port] + " tc" + std::to_string(tc), t_ps,
                 paused ? 1 : 0);
}

void TraceObserver::pfc_decided(uint32_t port, int tc, bool xoff, int64_t ingress_bytes,
                                int64_t t_ps) {
  if (!trace_.recording()) return trace_.skip(t_ps);
  // The ingress port `port` of a switch pauses (or resumes) the peer that sends into it.
  trace_.instant("pfc", std::string(xoff ? "XOFF " : "XON ") + port_names_[port], kPfcPid, 0, t_ps,
                 "{\"tc\":" + std::to_string(tc) +
                     ",\"ingress_bytes\":" + std::to_string(ingress_bytes) + "}");
}

void TraceObserver::went_back(uint32_t qp, int src, uint32_t from, uint32_t to, bool timeout,
                              int64_t t_ps) {
  if (!trace_.recording()) return trace_.skip(t_ps);
  trace_.instant("go-back-N", timeout ? "retransmission timeout" : "NAK (PSN sequence error)",
                 kMessagesPid, src, t_ps,
                 "{\"qp\":" + std::to_string(qp) + ",\"from_psn\":" + std::to_string(from) +
                     ",\"to_psn\":" + std::to_string(to) + "}");
}

}  // namespace fabricsim
