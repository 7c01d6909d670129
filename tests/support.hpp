// Helpers shared by tests: small fabrics built from hand-written Scenario values.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "sim/config/scenario.hpp"
#include "sim/net/network.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace fabricsim::testing {

inline Scenario spine_leaf(int leaves, int spines, int hosts_per_leaf, int64_t rate_bps,
                           int64_t prop_ps, int64_t switch_latency_ps, int64_t buffer_bytes,
                           int64_t mtu_bytes, const char* transport = "roce") {
  Scenario sc;
  sc.name = "test";
  sc.path = "test.yaml";
  sc.transport = transport;
  sc.topology.kind = "spine-leaf";
  sc.topology.leaves = leaves;
  sc.topology.spines = spines;
  sc.topology.hosts_per_leaf = hosts_per_leaf;
  sc.topology.oversubscription = 1.0;
  sc.link.host_rate_bps = rate_bps;
  sc.link.fabric_rate_bps = rate_bps;
  sc.link.propagation_delay_ps = prop_ps;
  sc.sw.latency_ps = switch_latency_ps;
  sc.sw.buffer_per_port_bytes = buffer_bytes;
  sc.nic.mtu_bytes = mtu_bytes;
  return sc;
}

/// A fabric, its routes, a simulator and a network, wired as `fabricsim run` wires them.
struct Bed {
  explicit Bed(const Scenario& sc) : fabric(build_fabric(sc)), routes(build_routes(sc, fabric)) {
    net = std::make_unique<Network>(sim, fabric, routes, net_config_for(sc));
  }
  Fabric fabric;
  RoutingTable routes;
  Simulator sim;
  std::unique_ptr<Network> net;
};

/// Global id of the port of node `from` facing node `to` (names as the builders give them);
/// fails the test if there is none.
inline uint32_t port_between(const Bed& bed, const std::string& from, const std::string& to) {
  const auto& g = bed.fabric.graph;
  const auto& ports = bed.net->ports();
  for (uint32_t pid = 0; pid < ports.size(); ++pid) {
    if (g[ports[pid].node].name == from && g[ports[pid].peer_node].name == to) return pid;
  }
  throw std::logic_error("no port " + from + " -> " + to);
}

/// One leaf with `hosts` hosts: hostI -> leaf0 -> hostJ is 2 links and 1 switch.
inline Scenario one_leaf(int hosts, int64_t rate_bps, int64_t prop_ps, int64_t lat_ps,
                         int64_t buffer_bytes, int64_t mtu) {
  return spine_leaf(1, 1, hosts, rate_bps, prop_ps, lat_ps, buffer_bytes, mtu);
}

/// RoCEv2 wire bytes, written out from the standards (not taken from sim/net): a data frame's
/// overhead is Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 = 62, + preamble/SFD 8 +
/// IFG 12 = 82; an ACK/NAK adds the 4-byte AETH to a header-only frame: 66 (above the 64-byte
/// minimum) + 20 = 86.
inline constexpr int64_t kRoceOverhead = 82;
inline constexpr int64_t kRoceAck = 86;
inline constexpr int64_t kGbps = 1'000'000'000;

/// Serialization time of `bytes` at `rate_bps`, ps, rounded up (written out here, not taken
/// from sim/core).
inline int64_t ser(int64_t bytes, int64_t rate_bps) {
  return static_cast<int64_t>(
      (static_cast<__int128>(bytes) * 8 * 1'000'000'000'000 + rate_bps - 1) / rate_bps);
}

/// Records the completion time of every message tag.
struct Recorder : CompletionSink {
  explicit Recorder(Simulator& s) : sim(s) {}
  void on_message_complete(uint64_t tag) override {
    if (done.size() <= tag) done.resize(tag + 1, -1);
    done[tag] = sim.now_ps();
  }
  Simulator& sim;
  std::vector<int64_t> done;
};

}  // namespace fabricsim::testing
