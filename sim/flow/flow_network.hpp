// Flow-level network: messages as fluid flows sharing links by max-min fairness, on the same
// fabric graph, ports and ECMP idea as the packet model, for sweeps too large for packets.
//
// What it models: each message is a flow on one path (FlowRouter: valley-free up-down on the
// Clos families, dimension order on a torus, NVLink between GPUs of one server), sending its
// wire bytes (payload plus per-packet headers, WireFormat) at the max-min fair rate of its
// links (Bertsekas & Gallager, "Data Networks", 2nd ed., §6.5.2: progressive filling), rates
// recomputed whenever a flow starts or ends. A flow completes one path latency after its last
// bit leaves the source: propagation of every hop, plus per switch its forwarding latency and
// (store-and-forward) the serialization of the last packet on the next link.
// ACKs: the receiver answers every ack_interval-th packet and a message's last (as the packet
// model's NICs do), so a flow of n packets also sends ceil(n / ack_interval) ACK frames back
// along its reverse path (FlowRouter::path from the destination). They take their share of
// those links in proportion to the flow's rate: the filling is weighted, a link l with flows f
// of rate r_f and weight w_fl (1 on the data path, ACK wire bits over data wire bits on the
// reverse) holding sum_f w_fl r_f <= capacity (Bertsekas & Gallager §6.5.2 with per-link
// demands), except that only a link its data cross fixes a flow's rate: an RDMA sender does
// not wait for its ACKs. Where a host both sends and receives (a ring), its uplink carries its
// data and the ACKs of what it receives: ACK bytes 2 % of the data bytes at a 4,096-byte MTU,
// 25 % at 256 bytes. A link whose data flows are all fixed is not looked at again, so the ACKs
// of flows fixed elsewhere at a higher rate can fill it past its capacity (108 % at MTU 256 when
// a host sends two flows and receives one faster one).
// What it does not model: queues, PFC pauses, ECN/DCQCN, drops and retransmissions, incast
// transients, per-packet load balancing. Where those matter the packet mode is the answer.
// Logical processes (sim/core/simulator.hpp): max-min fairness couples every flow to every
// other, so the whole flow model, with the collective tasks it serves, is one global LP, lp()
// (one past the node ids); a partitioned run cannot split it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/simulator.hpp"
#include "sim/net/network.hpp"
#include "sim/net/wire.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

/// Paths for flows without a precomputed routing table (memory O(switches × hosts / 8) for
/// the down-sets, not O(hosts × nodes)).
///
/// Clos families (spine-leaf, fat-tree, rail-optimized with spines): valley-free shortest paths.
/// From a GPU: its NVLink when the destination is in its server, else a network port (ECMP).
/// At a switch whose down-set (the hosts reachable by going only down) holds the destination:
/// down to a neighbour that holds it; otherwise up, preferring neighbours that hold it. Equal
/// choices are made as the packet mode's per-flow ECMP makes them (Network::open_qp,
/// Network::hashed_index: the QP's hash of source, destination, flow id and the seed's salt,
/// mixed with each switch's salt; at the source the flow's NIC, flow mod NICs), so a flow
/// takes the path its QP takes in the packet mode and the same flows collide in both; an ACK
/// the path of the packet mode's ACKs (the QP's hash with net_hash::kReverseSalt, hashed at the
/// receiving GPU too). On a torus: dimension order (routing.hpp).
class FlowRouter {
 public:
  /// Throws std::invalid_argument for a fabric it cannot route: rail-only (routes through
  /// GPUs), or down-sets beyond 2 GB.
  FlowRouter(const Fabric& fabric, uint64_t seed);
  /// Appends to `ports` the global port ids (Network::port_id numbering: node v's port i is
  /// first_port(v) + i) of the path from host `src` to host `dst` (src != dst), first hop
  /// first. Throws std::runtime_error when failed links leave no way on (flow mode does not
  /// route around failures; the packet mode does).
  /// `ack`: the path of the ACKs of the flow from `dst` to `src` (the packet mode's).
  void path(int src, int dst, uint32_t flow, std::vector<uint32_t>& ports, bool ack = false) const;
  /// Global id of node v's port 0.
  uint32_t first_port(VertexId v) const { return first_port_[v]; }
  size_t port_count() const { return first_port_.back(); }

 private:
  bool below(VertexId v, int host) const {
    return (down_[static_cast<size_t>(v) * words_ + static_cast<size_t>(host) / 64] >>
            (host % 64)) &
           1;
  }
  const Fabric& fabric_;
  uint32_t ecmp_salt_ = 0;             // as Network's: the seed's "ecmp" stream, first draw
  std::vector<uint32_t> switch_salt_;  // per vertex: that stream's next draws, in vertex order
  bool torus_;
  size_t words_ = 0;            // 64-bit words per down-set
  std::vector<uint64_t> down_;  // per vertex: the hosts below it (switches only)
  std::vector<uint32_t> first_port_;
  std::vector<int32_t> host_of_;  // per vertex: host id or -1
};

/// Settings of the flow model, from the scenario (net_config_for's wire, mtu and latency).
struct FlowConfig {
  WireFormat wire;
  int64_t mtu_bytes = 4096;       ///< payload bytes per packet
  int64_t switch_latency_ps = 0;  ///< forwarding latency of every switch
  bool cut_through = false;       ///< no store-and-forward serialization per hop
  /// Wire bytes of one ACK frame (WireFormat::ack_wire_bytes); 0 = ACKs not modelled.
  int64_t ack_wire_bytes = 0;
  int ack_interval = 1;  ///< the receiver ACKs every ack_interval-th packet (and a message's last)
  /// Flows that end within this fraction of the flows' age (time since the last flow started)
  /// after the first end share one rate computation: until the window's last end the others
  /// keep their rates (still a feasible allocation: the bandwidth of the flows that ended waits),
  /// and the flows ending in it end at their own times. A flow started in the window ends it.
  /// 0 = a computation at every end (exact max-min). Scenario key flow.batch_tolerance.
  double batch_tolerance = 0;
};

/// The flow model's settings from the packet model's (the same wire format, MTU and switches).
inline FlowConfig flow_config_for(const NetConfig& n) {
  FlowConfig c;
  c.wire = n.wire;
  c.mtu_bytes = n.mtu_bytes;
  c.switch_latency_ps = n.switch_latency_ps;
  c.cut_through = n.cut_through;
  c.ack_wire_bytes = n.wire.ack_wire_bytes();
  c.ack_interval = n.ack_interval;
  return c;
}

/// The flow-level counterpart of Network for collectives: send() a message, get
/// CompletionSink::on_message_complete(tag) when its last byte has arrived.
class FlowNetwork {
 public:
  /// Keeps references to `sim`, `fabric` and `router`. Throws std::invalid_argument for
  /// mtu_bytes <= 0.
  FlowNetwork(Simulator& sim, const Fabric& fabric, const FlowRouter& router,
              const FlowConfig& cfg);

  /// Starts a flow of `bytes` payload (>= 0; 0 = one header-only packet) from host `src` to
  /// host `dst` on ECMP flow `flow`. `pace_bps` > 0 caps its payload rate (bits per second of
  /// `bytes`; its wire rate in proportion), as Network::send paces a message: the max-min
  /// filling freezes it at the cap when its links would give it more. Throws
  /// std::invalid_argument for a bad host, src == dst, a negative size or pace; src == dst
  /// with kNicLoopFlowBit in `flow` (a NIC loopback, sim/net/nic_loop.hpp) says that it needs
  /// the packet network (the max-min model has no switch to turn it).
  void send(int src, int dst, int64_t bytes, uint32_t flow, uint64_t tag, int64_t pace_bps = 0);
  void set_sink(CompletionSink* sink) { sink_ = sink; }
  /// The one logical process of the flow model and its collective tasks: one past the node ids.
  LpId lp() const { return LpId(static_cast<uint32_t>(boost::num_vertices(fabric_.graph))); }

  /// Wire bytes of a message of `bytes` payload: per packet of at most mtu payload bytes,
  /// WireFormat::wire_bytes.
  int64_t wire_bytes(int64_t bytes) const;
  /// Picoseconds from the last bit leaving `src` to its arrival at `dst` on flow `flow`'s path,
  /// for a last packet of `last_payload_bytes` (see the file comment).
  int64_t path_latency_ps(int src, int dst, uint32_t flow, int64_t last_payload_bytes) const;

  /// The slowest link rate on flow `flow`'s path from `src` to `dst`, bits per second.
  int64_t path_rate_bps(int src, int dst, uint32_t flow) const;

  /// One link of a path: its rate (bits per second) and propagation delay (picoseconds).
  struct Hop {
    int64_t rate_bps = 0;
    int64_t propagation_ps = 0;
  };
  /// The links of flow `flow`'s path from `src` to `dst`, first hop first (FlowRouter::path).
  std::vector<Hop> path_hops(int src, int dst, uint32_t flow) const;
  /// The line rate of the link leaving by global port `port_id`, bits per second.
  int64_t port_rate_bps(uint32_t port_id) const { return rate_bps_.at(port_id); }
  /// Flow `flow`'s path from `src` to `dst` in one walk: its global port ids (one per directed
  /// link, first hop first, FlowRouter::path) replace `ports`; returns path_latency_ps (for a
  /// last packet of `last_payload_bytes`) and path_rate_bps of that path.
  std::pair<int64_t, int64_t> path_latency_rate(int src, int dst, uint32_t flow,
                                                int64_t last_payload_bytes,
                                                std::vector<uint32_t>& ports) const;

  int64_t flows_started() const { return started_; }
  int64_t flows_completed() const { return completed_; }
  int64_t reallocations() const { return reallocations_; }
  /// Flows that ended inside a batch window, without a rate computation of their own.
  int64_t batched_ends() const { return batched_ends_; }
  int64_t max_active_flows() const { return max_active_; }
  /// Sum over flows of wire bytes × hops, their ACKs' included: the packet model's link bytes,
  /// for bytes per second.
  double link_bytes() const { return link_bytes_; }
  size_t active_flows() const { return active_.size() - ended_listed_; }

 private:
  struct Flow {
    uint64_t tag = 0;
    double remaining_bits = 0;
    double rate_bps = 0;
    double cap_bps = 0;  ///< the pace as a wire rate, bits per second; 0 = none
    int64_t latency_ps = 0;
    /// Data ports paths_[path_begin, + path_len), then its ACKs' ports (+ ack_len).
    uint32_t path_begin = 0, path_len = 0, ack_len = 0;
    double ack_weight = 0;  ///< ACK wire bits per data wire bit, on each ACK port
    /// Ended inside a batch window, still listed in active_ until the next rate computation;
    /// `delivered`: its on_deliver has run (the slot is freed when it leaves active_).
    bool ended = false, delivered = false;
  };
  /// Latency of a path (ports) for a last packet of `last_payload_bytes`.
  int64_t latency_of(const uint32_t* ports, size_t hops, int64_t last_payload_bytes) const;
  /// Brings every active flow's remaining bits to now.
  void advance();
  /// Max-min fair rates of the active flows (progressive filling).
  void allocate();
  /// Finishes the flows that have sent everything, reallocates, schedules the next finish.
  void on_update(uint64_t generation);
  void on_deliver(uint64_t flow_index);
  void schedule_update();
  /// Schedules the next on_update at `at_ps` (none for INT64_MAX), superseding a pending one.
  void schedule_next(int64_t at_ps);

  Simulator& sim_;
  const Fabric& fabric_;
  const FlowRouter& router_;
  FlowConfig cfg_;
  CompletionSink* sink_ = nullptr;
  std::vector<int64_t> capacity_bps_;  // per port (directed link); 0 = failed
  std::vector<int64_t> rate_bps_;      // per port: the link's line rate (for serialization)
  std::vector<int64_t> delay_ps_;      // per port: the link's propagation delay
  std::vector<Flow> flows_;            // slots; freed ones listed in free_
  std::vector<uint32_t> free_;
  std::vector<uint32_t> active_;  // indices of flows still sending
  std::vector<uint32_t> paths_;   // port ids, Flow::path_begin … + path_len + ack_len
  size_t live_path_ports_ = 0;    // ports of the paths of active flows
  int64_t last_advance_ps_ = 0;
  uint64_t generation_ = 0;  // the pending update event's; older ones are stale
  bool update_pending_ = false;
  int64_t update_at_ps_ = 0;  // when the pending update runs
  int64_t started_ = 0, completed_ = 0, reallocations_ = 0, max_active_ = 0;
  // Batch windows (FlowConfig::batch_tolerance): the last start, the window's end (-1: none),
  // the ends due in it in time order, and ends taken without a rate computation.
  int64_t last_start_ps_ = 0, window_end_ps_ = -1, batched_ends_ = 0;
  std::vector<std::pair<int64_t, uint32_t>> ends_;
  size_t next_end_ = 0;
  size_t ended_listed_ = 0;  // flows ended in a window, still in active_
  double link_bytes_ = 0;
  // allocate()'s scratch, kept to avoid reallocating
  std::vector<uint32_t> link_count_, link_begin_, link_end_, link_flows_;
  std::vector<double> link_left_bps_;
  std::vector<double> link_weight_;    // per link: the summed weights of its flows not yet fixed
  std::vector<uint32_t> link_data_;    // per link: its flows not yet fixed whose data cross it
  std::vector<uint8_t> link_is_data_;  // parallel to link_flows_: a data entry, not an ACK one
  std::vector<uint32_t> touched_;
  std::vector<uint8_t> frozen_;
  std::vector<double> link_queued_;                // per link: its lowest entry in heap_
  std::vector<std::pair<double, uint32_t>> heap_;  // (share, link): allocate()'s queue
};

}  // namespace fabricsim
