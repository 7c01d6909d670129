// The network's prefetch hints (Simulator::add_hint): what the next event of a packet-hop will
// read, fetched while the event before it runs. They change no state and no result.
#include <cstddef>

#include "sim/net/network.hpp"

namespace fabricsim {

void Network::register_hints() {
  // A packet-hop's two events each begin with a cache miss on large fabrics (the packet, the
  // port): the simulator prefetches them while the event before runs.
  sim_.add_hint(Simulator::handler<&Network::on_arrival, Network>(), &Network::hint_arrival);
  sim_.add_hint(Simulator::handler<&Network::on_tx_done, Network>(), &Network::hint_tx_done);
  if (cfg_.credits) {
    sim_.add_hint(Simulator::handler<&Network::on_credit, Network>(), &Network::hint_credit);
  }
}

void Network::hint_arrival(const Event& next) {
  __builtin_prefetch(reinterpret_cast<const void*>(next.arg));
}

void Network::hint_credit(const Event& next) {
  const auto* net = static_cast<const Network*>(next.obj);
  const auto port_id = static_cast<uint32_t>(next.arg >> 24);
  __builtin_prefetch(net->credit_fc_.ports_data(port_id) + (next.arg >> 21 & 7));
  const auto* port = reinterpret_cast<const char*>(net->ports_.data() + port_id);
  __builtin_prefetch(port + offsetof(Port, transmitting));
}

void Network::hint_tx_done(const Event& next) {
  const auto* net = static_cast<const Network*>(next.obj);
  const auto* port = reinterpret_cast<const char*>(net->ports_.data() + next.arg);
  for (size_t offset = 0; offset < sizeof(Port); offset += 64) __builtin_prefetch(port + offset);
}

}  // namespace fabricsim
