// The packet-level network: ports, store-and-forward switches and RDMA NICs over a FabricGraph.
//
// Model (DESIGN.md §3, §5):
//  - A Port is one direction of a full-duplex link: an egress FIFO, a transmitter serializing
//    one packet at a time at the link rate (serialization_ps), then the propagation delay.
//  - A switch receives a whole packet (store-and-forward), waits its forwarding latency, picks
//    an egress port from the ECMP set by a per-flow hash (source, destination, flow id, seeded
//    salt, mixed with a per-switch salt), and queues it if the admission policy admits it (tail
//    drop on a static per-port buffer); otherwise the packet is dropped and counted.
//  - A NIC segments each message into MTU-sized packets with the transport's header overhead
//    and serves its active messages round-robin, one packet at a time, at line rate. A message is
//    complete when its last packet has reached the destination NIC. A host with several ports
//    (a GPU's NIC and its NVLink) has one such engine per port; a message leaves by the port the
//    routes pick for its flow. Hosts forward other hosts' packets only where the fabric allows it
//    (rail-only PXN), queueing them ahead of their own.
//  - Routes come from a RoutingTable (ECMP, up-down or dimension-order); up-down's phase at a
//    switch is whether the packet came in from a higher tier.
//  - Not modelled yet (later issues): ACKs and go-back-N retransmission, PFC, ECN, DCQCN, IB
//    credits, shared-buffer MMU, priorities. A dropped packet is therefore never recovered: the
//    run ends with the workload incomplete and says so.
// Hot path: packets come from a pool, events are (function pointer, object, argument) records,
// dispatch on node kind is a table lookup; nothing is allocated per packet or per event.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "congestion/admission.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/simulator.hpp"
#include "sim/net/wire.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

/// One packet in flight. Small and trivially copyable; owned by the PacketPool.
struct Packet {
  Packet* next;           ///< intrusive link: egress FIFO or pool free list
  uint64_t msg_id;        ///< index into the network's message table
  uint32_t flow_hash;     ///< ECMP flow hash (same for every packet of a flow)
  int32_t dst_host;       ///< destination host id
  int32_t payload_bytes;  ///< message bytes carried
  int32_t wire_bytes;     ///< bytes serialized on each link (payload + overhead)
  uint32_t node;          ///< node the packet is travelling to
  uint16_t in_port;       ///< port of `node` it arrives on
  uint32_t seq;           ///< packet index within its message (per-packet spraying)
};

/// Free-list pool of packets, grown in chunks; get() and put() never touch the heap once warm.
class PacketPool {
 public:
  Packet* get();
  void put(Packet* p) {
    p->next = free_;
    free_ = p;
    --in_use_;
  }
  size_t in_use() const { return in_use_; }
  size_t capacity() const { return chunks_.size() * kChunk; }

 private:
  static constexpr size_t kChunk = 4096;
  std::vector<std::unique_ptr<Packet[]>> chunks_;
  Packet* free_ = nullptr;
  size_t in_use_ = 0;
};

/// Per-port counters (egress side), cumulative over the run.
struct PortCounters {
  int64_t tx_packets = 0;
  int64_t tx_bytes = 0;  ///< wire bytes serialized
  int64_t drops = 0;     ///< packets refused by admission (tail drop)
  int64_t drop_bytes = 0;
  int64_t max_queue_bytes = 0;  ///< peak occupancy, including the packet being serialized
};

struct Port {
  uint32_t node = 0;        ///< owning node (vertex id)
  uint32_t peer_node = 0;   ///< node at the other end
  uint16_t index = 0;       ///< port number at `node`
  uint16_t peer_index = 0;  ///< port number at `peer_node`
  int64_t rate_bps = 0;
  int64_t delay_ps = 0;         ///< propagation
  int64_t peer_ingress_ps = 0;  ///< forwarding latency of the peer (0 for a NIC)
  bool from_above = false;      ///< the peer is on a higher tier (arrivals here descend)
  Packet* head = nullptr;       ///< egress FIFO
  Packet* tail = nullptr;
  Packet* in_tx = nullptr;      ///< packet being serialized, if any
  int64_t occupancy_bytes = 0;  ///< queued + in_tx wire bytes
  PortCounters counters;
};

/// Receives message completions (the collective layer implements it). One call per message.
class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  virtual void on_message_complete(uint64_t tag) = 0;
};

/// Parameters of the devices, from the scenario's `switch:` and `nic:` sections.
struct NetConfig {
  WireFormat wire;
  int64_t mtu_bytes = 4096;  ///< payload bytes per packet
  int64_t switch_latency_ps = 0;
  int64_t buffer_per_port_bytes = 0;
  uint64_t seed = 1;                 ///< ECMP salts come from RngStream(seed, "ecmp")
  bool per_packet_spraying = false;  ///< ECMP choice per packet instead of per flow
};

/// The device parameters of a scenario: its transport's wire format, `nic.mtu`,
/// `switch.latency`, `switch.buffer_per_port` and `seed`. Throws std::invalid_argument for an
/// unknown transport (the loader has already rejected one).
NetConfig net_config_for(const Scenario& scenario);

/// Network-wide totals.
struct NetTotals {
  int64_t drops = 0;
  int64_t packet_hops = 0;        ///< packets serialized on any link
  int64_t packets_delivered = 0;  ///< packets that reached their destination NIC
  int64_t max_queue_bytes = 0;    ///< peak occupancy of any switch egress port
};

class Network {
 public:
  /// Builds ports for every edge of `fabric` (both directions) and NIC/switch state. Keeps
  /// references to `sim`, `fabric` and `routes`, which must outlive the Network.
  /// Throws std::invalid_argument for mtu_bytes <= 0 or a non-positive buffer.
  Network(Simulator& sim, const Fabric& fabric, const RoutingTable& routes, const NetConfig& cfg);

  /// Starts sending `bytes` (>= 0; a 0-byte message is one header-only packet) from host
  /// `src_host` to `dst_host` on flow `flow_id` (flows pick ECMP paths; a flow is like a QP).
  /// `sink->on_message_complete(tag)` fires when the last packet arrives. Returns the message
  /// id. Throws std::invalid_argument for a bad host id or src == dst.
  uint64_t send(int src_host, int dst_host, int64_t bytes, uint32_t flow_id, uint64_t tag);
  void set_sink(CompletionSink* sink) { sink_ = sink; }

  const std::vector<Port>& ports() const { return ports_; }
  const Fabric& fabric() const { return fabric_; }
  NetTotals totals() const;
  /// Messages started but not yet complete.
  size_t messages_in_flight() const { return in_flight_; }
  const NetConfig& config() const { return cfg_; }

 private:
  struct Message {
    int32_t src_host, dst_host;
    int64_t bytes;
    int64_t sent_bytes;
    int64_t packets_total, packets_sent, packets_received;
    uint32_t flow_hash;
    uint64_t tag;
  };
  struct Nic {
    uint32_t port = 0;             ///< global id of the NIC's single port
    std::vector<uint64_t> active;  ///< messages with packets left to send, round-robin
    size_t cursor = 0;
  };

  void on_tx_done(uint64_t port_id);
  void on_arrival(uint64_t packet_addr);
  void start_tx(uint32_t port_id);
  void nic_fill(Nic& nic);
  void switch_forward(Packet* p);
  void enqueue(uint32_t port_id, Packet* p);
  /// The ECMP pick among `choices` at `node` for a packet of `flow_hash` (`seq` when spraying).
  uint16_t pick(std::span<const uint16_t> choices, uint32_t node, uint32_t flow_hash,
                uint32_t seq) const;

  Simulator& sim_;
  const Fabric& fabric_;
  const RoutingTable& routes_;
  NetConfig cfg_;
  StaticTailDrop admission_;
  PacketPool pool_;
  std::vector<Port> ports_;
  std::vector<uint32_t> first_port_;   ///< per node: global id of its port 0
  std::vector<uint8_t> is_switch_;     ///< per node
  std::vector<int32_t> host_of_node_;  ///< per node: host id, or -1 for a switch
  std::vector<uint32_t> switch_salt_;  ///< per node
  std::vector<Nic> nics_;              ///< one per host port
  std::vector<int32_t> nic_of_port_;   ///< global port id -> index in nics_, or -1
  std::vector<Message> messages_;
  uint32_t ecmp_salt_ = 0;
  size_t in_flight_ = 0;
  int64_t delivered_ = 0;
  CompletionSink* sink_ = nullptr;
};

}  // namespace fabricsim
