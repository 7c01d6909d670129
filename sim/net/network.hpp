// The packet-level network: ports, switches and RDMA NICs over a FabricGraph.
//
// Model (DESIGN.md §3, §5):
//  - A Port is one direction of a full-duplex link: eight egress queues (traffic classes 0..7,
//    IEEE 802.1p), a transmitter that serializes one frame at a time at the link's negotiated
//    rate (serialization_ps of the frame's wire bytes: payload + headers + preamble/IFG), then
//    the propagation delay. Between traffic classes the transmitter picks by the scheduler
//    `switch.scheduler` names (schedulers/: strict priority, 7 highest; deficit weighted round
//    robin; or one registered from outside).
//  - Switches are store-and-forward (a frame is forwarded `switch.latency` after its last bit
//    arrives) or cut-through (forwarded `switch.latency` after its first bit arrives, when the
//    egress is not faster than the ingress; otherwise stored first). The egress port is the
//    routes' choice, by a per-flow ECMP hash (or per packet when spraying), or at a switch by
//    the load balancer's reading of its own queues (adaptive routing per packet or per
//    flowlet, loadbalance/load_balancer.hpp). Buffer admission is
//    the switch's BufferMmu (congestion/buffer_mmu.hpp: static per port, or shared with
//    Choudhury-Hahne dynamic thresholds); a refused frame is tail-dropped and counted.
//  - Bit errors: a link with bit error rate BER corrupts a frame of b bits with probability
//    1 - (1 - BER)^b (independent bit errors, one RNG stream per port). A corrupted frame is
//    dropped by the next store-and-forward receiver (FCS/ICRC check); cut-through switches
//    forward it, as they must.
//  - NICs: reliable-connected queue pairs (IBTA vol. 1 ch. 9). A QP is (source, destination,
//    flow id); messages posted on a QP are sent in order, segmented into MTU packets numbered by
//    a per-QP packet sequence number (PSN). Each NIC port serves its QPs with data to send
//    round-robin, one packet at a time, at line rate, skipping QPs held back by their rate
//    limiter (qp_rate_limit, or what congestion control sets). The receiver accepts only the
//    next expected PSN: it ACKs every ack_interval-th in-order packet and the last of each
//    message, re-ACKs duplicates, and answers the first out-of-sequence packet with one NAK
//    (PSN sequence error). The sender goes back to the NAKed PSN (go-back-N); with packets
//    unacknowledged and no progress for the RTO it goes back to the oldest unacknowledged one.
//    After retry_count consecutive timeouts without progress the QP fails, as a real NIC
//    reports "transport retry counter exceeded", and the run stops saying so.
//    A message is complete when its last packet is received in order. With selective repeat
//    (NetConfig::selective_repeat, nic_selective.cpp) the receiver places out-of-order packets
//    and acknowledges each selectively instead of NAKing, and the sender resends only the
//    packets deemed lost (at the timeout; after reorder_threshold PSNs past them).
//  - Hosts forward other hosts' packets only where the routes say so (rail-only PXN over
//    NVLink); a host's own port queues are unbounded (the NIC generates data only when its
//    port is idle, so they hold ACKs and relayed frames).
//  - Lossless classes: the state machines are congestion/'s, members of the network that it
//    calls without a virtual call: PfcFlowControl (congestion/pfc_flow_control.hpp) owns the
//    switches' ingress accounting, XOFF/XON decisions and headroom and every port's pause state,
//    and answers which classes a pause holds back; CreditFlowControl (congestion/credits.hpp)
//    the InfiniBand credits. The network schedules their events (pause expiry, XOFF refresh,
//    returned credits), builds and sends the PFC frames, kicks ports and tells the observer,
//    each right after the component's decision (sim/net/network.cpp, "lossless").
// Invariants (checked after every run by check_invariants()): every wire byte a NIC injected
// was consumed by its destination NIC, dropped, or is still in the network; a lossless class
// never tail-drops (its losses are headroom overflow, the PFC watchdog and bit errors).
// Hot path: packets come from a pool, events are (function pointer, object, argument) records,
// two events per packet-hop (end of serialization, arrival); nothing is allocated per packet.
// Logical processes (sim/core/simulator.hpp): node v of the fabric graph (a switch, or a host
// with its NIC) is LP v, and every event works on one node's state: a port's end of
// serialization, pause expiry and XOFF refresh on the port's node; an arrival on the node the
// frame reaches; a NIC wake-up and a QP's retransmission timer on the sending host; returned
// InfiniBand credits on the upstream node.
// The periodic lossless check (PFC watchdog and deadlock detector) is no event and runs on no
// LP: it is the simulator's barrier (Simulator::set_barrier), armed deadlock_check_ps after a
// queue was first seen blocked, and runs before any event at its picosecond. Its state machines
// are the LosslessMonitor's (congestion/lossless_monitor.hpp), a member: the network scans the
// watchdog on the owned nodes (set_owned_nodes; all by default), asking the monitor per queue,
// describes their ports in a LosslessSnapshot (congestion/lossless_snapshot.hpp), passes it
// through the snapshot gather (set_snapshot_gather: identity here; a partitioned run's
// allgather + merge), and the monitor finds the deadlock on the merged snapshot alone, so every
// rank reaches the same verdict (sim/net/network_lossless.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "congestion/buffer_mmu.hpp"
#include "congestion/credits.hpp"
#include "congestion/ecn.hpp"
#include "congestion/lossless_monitor.hpp"
#include "congestion/pfc.hpp"
#include "congestion/pfc_flow_control.hpp"
#include "congestion/qp_congestion.hpp"
#include "loadbalance/load_balancer.hpp"
#include "schedulers/egress_scheduler.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/counter_table.hpp"
#include "sim/core/quantile_histogram.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/simulator.hpp"
#include "sim/net/net_config.hpp"
#include "sim/net/net_observer.hpp"
#include "sim/net/net_totals.hpp"
#include "sim/net/nic_loop.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/port.hpp"
#include "sim/net/wire.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

class Network {
 public:
  /// Builds ports for every edge of `fabric` (both directions) and NIC/switch state. Keeps
  /// references to `sim`, `fabric` and `routes`, which must outlive the Network.
  /// Throws std::invalid_argument for mtu_bytes <= 0, a bad buffer configuration (see
  /// BufferMmu), ack_interval < 1, rto_ps <= 0, a traffic class outside 0..7 or a DWRR weight
  /// outside 1..255.
  Network(Simulator& sim, const Fabric& fabric, const RoutingTable& routes, const NetConfig& cfg);
  /// Clears the simulator's barrier if it is this network's pending check (LosslessMonitor).
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  /// Posts a message of `bytes` (>= 0; a 0-byte message is one header-only packet) from host
  /// `src_host` to `dst_host` on the QP of flow `flow_id` (a QP per (src, dst, flow); flows
  /// pick ECMP paths), in traffic class `tc` (-1 = the configured one).
  /// `src_host` == `dst_host` is a loopback: the message goes up the host's NVLink to its
  /// server's NVSwitch and comes back down the same link (its ACKs too), for a GPU on a
  /// server with an NVSwitch only.
  /// `src_host` == `dst_host` with kNicLoopFlowBit set in `flow_id` (sim/net/nic_loop.hpp) is a
  /// NIC loopback instead (CollNet/SHARP's data path): the message leaves by one of the host's
  /// k NIC ports to a switch, the (flow_id without the bit mod k)-th in port order unless
  /// open_qp chose it (`nic`); the first switch forwards it by its route to the host, back
  /// down the link (with several links to that switch, whichever its ECMP picks), and the host
  /// receives it. Its ACKs, NAKs and CNPs go up the same NIC port and turn the same way. The
  /// NIC's costs (message rate, send and receive latency, PCIe) apply as to any NIC message;
  /// on an idle fabric it takes as long as a message of the same size to a host on the same
  /// switch.
  /// `sink->on_message_complete(tag)` fires when its last packet is received in order.
  /// `inline_payload`: the payload travels inside the work request (IBV_SEND_INLINE), so the
  /// NIC reads none from host memory (no NetConfig::dma_read_latency_ps, no PCIe copy).
  /// Returns the message's run-wide sequence number. Throws std::invalid_argument for a bad
  /// host id, src == dst on a host without an NVLink port (bit clear) or without a NIC port to
  /// a switch (kNicLoopFlowBit set), kNicLoopFlowBit set with src != dst, a negative size or a
  /// tc outside -1..7.
  /// `pace_bps` > 0: the sender produces the message's payload at this rate, bits per second,
  /// starting when it is posted or when the QP's previous paced message is produced, whichever
  /// is later; a packet leaves no earlier than its last byte is produced (a GPU protocol's own
  /// throughput, Transfer::pace_bps), on top of any rate limit or congestion control.
  uint64_t send(int src_host, int dst_host, int64_t bytes, uint32_t flow_id, uint64_t tag,
                int tc = -1, bool inline_payload = false, int64_t pace_bps = 0);
  /// send() on queue pair `qp_id` (an id open_qp returned), without looking the QP up by its
  /// hosts, flow and class. Throws std::out_of_range for an unknown QP, std::invalid_argument
  /// for a negative size or pace.
  uint64_t send_on(uint32_t qp_id, int64_t bytes, uint64_t tag, bool inline_payload = false,
                   int64_t pace_bps = 0);
  /// The QP of (src_host, dst_host, flow_id, tc) (tc -1 = the configured class), created if
  /// new. QP ids are the creation order, so a partitioned run that opens every QP up front in
  /// the same order on every rank agrees on them. Opening does not start the QP's congestion
  /// control (that happens at its first message), so opening early changes no result. Throws
  /// std::invalid_argument as send() does for bad hosts (a NIC loopback's included), a bad tc
  /// or no route.
  /// `nic` >= 0 picks the QP's NIC itself: the (nic mod k)-th of the k ports routing offers
  /// from src_host toward dst_host, in port order, as NCCL gives a GPU's channels its NICs in
  /// turn (a channel's connection uses one NIC: src/graph/search.cc); -1 = the ECMP hash of the
  /// flow, as for traffic flows. Only a host with several NICs toward dst_host has a choice.
  /// For a NIC loopback (src == dst, kNicLoopFlowBit in `flow_id`) the k ports are the host's
  /// NIC ports to a switch, and kNicLoopFlowBit is cleared from `nic` first (a caller may pass
  /// the flow id); -1 = the flow id without the bit, mod k. An NVLink loopback ignores `nic`.
  uint32_t open_qp(int src_host, int dst_host, uint32_t flow_id, int tc = -1, int nic = -1);
  /// When on, send() on a QP not opened by open_qp (or an earlier send) throws std::logic_error.
  void set_require_open_qps(bool on) { require_open_qps_ = on; }

  /// The receiver's copy of a posted message: what the destination host needs to complete it
  /// and record its flow, so it never reads the sender's state.
  struct RxMessage {
    uint64_t seq;  ///< run-wide message number
    uint64_t tag;
    int64_t bytes;
    int64_t start_ps;  ///< when it was posted
    uint32_t first_psn, packets;
    int64_t retransmitted_rx;  ///< packets accepted in order that were resends (kRetransmit)
  };
  /// Where a message was posted in the execution order: a later merge of per-rank runs sorts
  /// these by (t_ps, event_key, index_in_event) to renumber `seq` as the sequential run does.
  struct PostKey {
    int64_t t_ps;
    uint64_t event_key;       ///< Simulator::current_key() of the posting event (0 outside)
    uint32_t index_in_event;  ///< sends before this one in the same event
    uint64_t seq;
  };
  /// Every message posted, in posting order, once set_record_posts(true) (a partitioned run
  /// needs them to renumber messages; 32 bytes per message, so they are not kept otherwise).
  const std::vector<PostKey>& posted() const { return posts_; }
  void set_record_posts(bool on) { record_posts_ = on; }
  /// A hook for partitioned runs: called with each new message's receiver copy; returning true
  /// means it was shipped to the rank of the destination host (which calls accept_rx_message),
  /// so it is not kept here. Unset (or returning false): kept locally.
  void set_remote_post(std::function<bool(uint32_t qp, const RxMessage&)> f) {
    remote_post_ = std::move(f);
  }
  /// The receiving side of set_remote_post: appends message `m` of QP `qp` to the receiver's
  /// list. Throws std::out_of_range for an unknown QP, std::logic_error if `m` does not start
  /// where the QP's previous message ended.
  void accept_rx_message(uint32_t qp, const RxMessage& m);
  void set_sink(CompletionSink* sink) { sink_ = sink; }
  void set_observer(NetObserver* observer) { observer_ = observer; }
  NetObserver* observer() const { return observer_; }
  /// Test hook: the port drops every n-th frame it sends (n >= 1; 0 = off), as a fixed loss
  /// pattern for go-back-N checks.
  void set_drop_every(uint32_t port_id, uint32_t n);

  // ---- partitioned runs (sim/parallel/README.md; sim/parallel/mpi_engine.cpp) ----
  /// The handlers of the network's events that go from one node to another over a link: a
  /// frame's arrival (its argument is the Packet*) and returned InfiniBand credits.
  static EventFn arrival_handler();
  static EventFn credit_handler();
  /// Bytes of a frame crossing ranks: the Packet, then its side record (PacketPool).
  size_t departed_bytes() const { return sizeof(Packet) + pool_.side_bytes(); }
  /// An arrival event's frame, copied to `out` (departed_bytes() long), its Packet handed back
  /// to the pool: the frame leaves this rank. `arg` is the argument of an arrival_handler()
  /// event.
  void take_departed(uint64_t arg, std::byte* out);
  /// Pushes the arrival at `t` on `lp` of a copy of `frame` (departed_bytes() long, come from
  /// another rank), with the key the sender's rank took for it.
  void inject_arrival(SimTime t, uint64_t key, LpId lp, const std::byte* frame);
  /// Registers a per-packet field of its own for a component (PacketPool::add_side): before
  /// the first packet is sent, e.g. from the component's setup. Throws std::logic_error later.
  template <class T>
  PacketSide<T> add_packet_side() {
    return pool_.add_side<T>();
  }
  /// Packet `p`'s side field `f`.
  template <class T>
  T& packet_side(const Packet* p, PacketSide<T> f) {
    return pool_.side(p, f);
  }
  /// The destination host of queue pair `qp` (opened by open_qp). Throws std::out_of_range.
  int qp_dst_host(uint32_t qp) const { return qps_.at(qp).dst_host; }
  /// Replaces the flow records (delivered messages, in delivery order) and the count of those
  /// not recorded: a partitioned run's rank 0 with every rank's, merged.
  void set_flows(std::vector<FlowRecord> flows, int64_t unrecorded) {
    flows_ = std::move(flows);
    flows_unrecorded_ = unrecorded;
  }
  /// When failure() was first set, picoseconds (-1: no failure).
  int64_t failure_ps() const { return failure_ps_; }
  /// The key of the event in which failure() was first set (with failure_ps(), its place in
  /// the run's order).
  uint64_t failure_key() const { return failure_key_; }
  /// Adopts a failure another rank found first (the run stops everywhere for it).
  void set_failure(std::string text, int64_t t_ps) {
    failure_ = std::move(text);
    failure_ps_ = t_ps;
  }
  /// The state the nodes with owned_nodes[v] != 0 keep (their ports' counters, queues,
  /// occupancy and lossless state, switch buffers, NIC pause intervals) and this process's
  /// share of the run-wide counters (bytes sent, delivered, dropped, in flight; retransmits,
  /// NAKs, RTOs, CE, CNPs), as bytes for the same binary on another rank. Call
  /// settle_statistics() first.
  std::vector<std::byte> export_state(const std::vector<uint8_t>& owned_nodes) const;
  /// Overlays an export_state() of another rank: its nodes' state replaces this one's, its
  /// counters are added. Queued packets do not travel: the ports' queues read as empty.
  /// Throws std::runtime_error for a blob of another fabric.
  void import_state(std::span<const std::byte> blob);

  const std::vector<Port>& ports() const { return ports_; }
  /// Frames that port `port_id` sent and its peer received (counted at the peer's ingress).
  const ArrivalCounters& arrived_from(uint32_t port_id) const {
    return arrivals_[ports_[port_id].peer_port];
  }
  /// Global id of node `v`'s port `index`.
  uint32_t port_id(VertexId v, uint16_t index) const { return first_port_[v] + index; }

  // ---- links changing during the run (sim/run/link_events.hpp plans them) ----
  /// kDown: this end of the link is down: the port sends nothing and its node receives nothing
  /// over the link; its queues are lost, frames sent to it and frames arriving over the link
  /// are dropped (PortCounters::link_down_drops), and a switch picks
  /// another of its equal-cost ports for what it forwards (local fast failover). kUp: it
  /// carries frames again (at `rate_bps` if > 0). kRate: it serializes at `rate_bps` from its
  /// next frame.
  enum class PortChange : uint8_t { kDown, kUp, kRate };
  /// Changes port `port_id` at `at_ps` (an event of its node, made on the rank that owns it;
  /// call before the run, after the simulator's partition is set). Each
  /// direction of a link is a port: change both. Throws std::out_of_range for an unknown
  /// port, std::invalid_argument for kRate without a rate > 0.
  void schedule_port_change(int64_t at_ps, uint32_t port_id, PortChange change, int64_t rate_bps);
  /// Every node forwards by `routes` (which must outlive the Network) from `at_ps` on: the
  /// fabric's routing has reconverged (an event per node). Throws std::invalid_argument for
  /// nullptr.
  void schedule_routes(int64_t at_ps, const RoutingTable* routes);
  /// The longest wait of a queue pair, with packets outstanding, for its acknowledged PSN to
  /// advance: from its last advance (or from sending into an empty window) to the next,
  /// picoseconds; on a tie the lowest QP id, then the earliest. A wait still open (packets
  /// outstanding, no progress since) counts up to now. This rank's QPs only.
  QpStall longest_stall() const;
  /// Packets lost at a node whose routes, after a link event, had no way to their destination.
  int64_t no_route_drops() const { return no_route_drops_; }
  /// The source and destination host of QP `qp_id`. Throws std::out_of_range.
  std::pair<int, int> qp_hosts(uint32_t qp_id) const;
  const QueueCounters& queue(uint32_t port_id, int tc) const {
    return queues_[static_cast<size_t>(port_id) * kTrafficClasses + tc];
  }
  const Occupancy& port_occupancy(uint32_t port_id) const { return port_occ_[port_id]; }
  const OccupancyHistogram& port_histogram(uint32_t port_id) const { return port_hist_[port_id]; }
  const BufferMmu* mmu(VertexId v) const { return is_switch_[v] ? &mmus_[v] : nullptr; }
  const Fabric& fabric() const { return fabric_; }
  /// The logical process of fabric node `v` (its vertex id).
  static LpId node_lp(uint32_t v) { return LpId(v); }

  // ---- the periodic lossless check (PFC watchdog and deadlock detector) ----
  /// When the pending check runs (the simulator's barrier), INT64_MAX when none is armed.
  int64_t next_check_ps() const { return monitor_.next_check_ps(); }
  /// Arms the lossless check at `t_ps` (>= now), replacing the one armed here: a partitioned
  /// run's ranks agree on the earliest any of them armed (each arms from its own traffic).
  void arm_check_at(int64_t t_ps) { monitor_.arm_check_at(t_ps); }
  /// The nodes this process owns (bit per vertex: 1 = owned; empty = all, the default): the
  /// watchdog scans and local_snapshot() describes only their ports. Throws
  /// std::invalid_argument unless empty or one entry per fabric node.
  void set_owned_nodes(std::vector<uint8_t> owned) { monitor_.set_owned_nodes(std::move(owned)); }
  /// The lossless state of the ports of the nodes `owned_nodes` marks (all when nullptr): the
  /// blocked flag, and while no deadlock is proven the records find_deadlock() reads.
  LosslessSnapshot local_snapshot(const std::vector<uint8_t>* owned_nodes) const;
  /// Replaces the step of the check that turns the local snapshot into the whole fabric's
  /// (default: identity). A partitioned run installs an allgather of encode()d snapshots and
  /// merges them; the result must be the same on every rank. nullptr restores the default.
  void set_snapshot_gather(std::function<LosslessSnapshot(LosslessSnapshot)> gather) {
    monitor_.set_snapshot_gather(std::move(gather));
  }
  /// The stuck cycle of egress queue ids (port x 8 + class) in wait-for order that the merged
  /// snapshot `s` proves, if any (else empty). Reads only `s` and the static topology.
  std::vector<uint64_t> find_deadlock(const LosslessSnapshot& s) const {
    return monitor_.find_deadlock(s);
  }
  NetTotals totals() const;
  /// Adds `value` to registered counter `counter` (an index register_counter() returned
  /// before this network was built) at `port`: an array add, unchecked.
  void add(uint32_t counter, uint32_t port, int64_t value) {
    registered_[size_t{counter - kBuiltinCounters} * ports_.size() + port] += value;
  }
  /// Registered counter `counter` at `port` (0 for a counter registered after this network).
  int64_t registered_counter(uint32_t counter, uint32_t port) const;
  /// Packets the pool holds (its high-water mark, in chunks: packets in flight at the busiest
  /// moment, rounded up) and the size of one.
  size_t packet_pool_capacity() const { return pool_.capacity() + imported_pool_capacity_; }
  static constexpr size_t packet_bytes() { return sizeof(Packet); }
  /// Messages posted but not yet received in full.
  size_t messages_in_flight() const { return in_flight_; }
  const NetConfig& config() const { return cfg_; }
  /// Delivered messages, in delivery order, up to NetConfig::max_flow_records.
  const std::vector<FlowRecord>& flows() const { return flows_; }
  /// Queue pairs opened (every rank of a partitioned run opens the same).
  size_t queue_pairs() const { return qps_.size(); }
  /// Delivered messages not recorded because the bound was reached.
  int64_t flows_unrecorded() const { return flows_unrecorded_; }
  /// Completion times (delivery - post, ps) of every delivered message, recorded or not, of
  /// those posted with the tag's top bit clear (`top_tag_bit` false) or set: collectives'
  /// messages and traffic flows (TrafficPlayer::kTagBit) as `fabricsim run` tags them.
  const QuantileHistogram& fct_histogram(bool top_tag_bit) const { return fct_[top_tag_bit]; }
  /// Closes the occupancy integrals at the current time (call before reading averages).
  void settle_statistics();

  /// Wire-byte balance now (walks the packet pool for the bytes in flight).
  ByteBalance byte_balance() const;
  /// Throws std::logic_error if sent != delivered + dropped + in flight.
  void check_conservation() const;
  /// Throws std::logic_error naming the switch, port and class if a queue of a lossless class
  /// (PFC priority or InfiniBand credits) tail-dropped a frame: lossless traffic is lost only
  /// to headroom overflow, the PFC watchdog or a bit error, each counted apart (NetTotals).
  void check_lossless() const;
  /// Throws std::logic_error naming the switch if it ever held more than its buffer: with
  /// static buffers, the lossless bytes that came in on a port above buffer_per_port; with a
  /// shared buffer, all its bytes above shared_buffer plus its PFC headroom pool (the headroom
  /// of every ingress port and lossless priority, memory of its own beside the shared buffer).
  /// Frames beyond those bounds are refused as headroom drops (NetTotals::headroom_drops).
  void check_buffers() const;
  /// The end-of-run invariants: check_conservation(), check_lossless() and check_buffers().
  void check_invariants() const {
    check_conservation();
    check_lossless();
    check_buffers();
  }
  /// Non-empty once a QP has failed (retry counter exceeded); the network stops the simulator.
  const std::string& failure() const { return failure_; }
  /// The deadlock found (detected_at_ps >= 0), if any. Without the PFC watchdog the network
  /// stops the simulator when it proves one.
  const DeadlockReport& deadlock() const { return monitor_.deadlock(); }
  /// Bytes that came in on switch port `port_id` in priority `tc` and are still in the
  /// switch's buffer (the count PFC thresholds apply to).
  int64_t ingress_bytes(uint32_t port_id, int tc) const { return pfc_.ingress_bytes(port_id, tc); }
  /// The PFC state machine: per port and priority thresholds, headroom, XOFF and pause state.
  const PfcFlowControl& pfc() const { return pfc_; }
  /// Picoseconds within [from_ps, to_ps) during which PFC pause frames held at least one NIC
  /// port (a network port, not its NVLink to an NVSwitch) of host `host` in the data traffic
  /// class (NetConfig::traffic_class): the union of
  /// its ports' pause intervals, a pause still running counted up to now. What a NIC's pause
  /// duration counter reports, restricted to a window (e.g. one transfer's flight); 0 without
  /// PFC (InfiniBand credit waits are not pauses). Throws std::out_of_range for a bad host.
  int64_t host_paused_ps(int host, int64_t from_ps, int64_t to_ps) const;
  /// Credits (64-byte blocks) port `port_id` holds for VL `tc` (InfiniBand).
  int64_t credits(uint32_t port_id, int tc) const { return credit_fc_.credits(port_id, tc); }

 private:
  /// A message as its sender holds it until acknowledged (the receiver has an RxMessage). Not
  /// changed once posted: Qp::cur and Qp::front_end_psn hold copies of its fields.
  struct Message {
    int64_t bytes;
    uint32_t first_psn;
    uint32_t packets;
    int64_t ready_ps;    ///< its first byte may leave from here (message rate, tx latency)
    int64_t pace_bps;    ///< send()'s pace_bps (0 = none)
    int64_t produce_ps;  ///< a paced message's first byte is produced here
  };
  /// A QP's sending half (the source host's state) and its immutable identity, which both ends
  /// and the switches may read; the receiving half is QpRx.
  struct Qp {
    int32_t src_host, dst_host;
    uint32_t flow_hash;
    uint8_t tc;
    uint32_t nic;  ///< sending NIC engine
    // sender
    uint32_t snd_una = 0, snd_nxt = 0, snd_max = 0, psn_end = 0;
    /// first_psn + packets of msgs.front() (meaningless while msgs is empty): receive_ack
    /// releases messages without loading their records. msgs changes in send() (append) and
    /// receive_ack() (release) only; any other change must recompute this and reset cur_msg.
    uint32_t front_end_psn = 0;
    std::deque<uint32_t> msgs;  ///< message slots, oldest first, until acknowledged
    uint64_t msg_base = 0;      ///< absolute number of msgs.front()
    uint64_t snd_msg = 0;       ///< absolute number of the message holding snd_nxt
    /// A copy of message number cur_msg (send_message()): a message is not changed once
    /// posted and its number is never reused, so nic_fill reads the message it sends from the
    /// QP instead of the slot list and the record, two dependent cache misses per packet.
    uint64_t cur_msg = UINT64_MAX;
    Message cur{};
    int64_t rate_bps = 0;  ///< 0 = line rate
    int64_t next_send_ps = 0;
    int64_t pace_base_ps = 0;      ///< the last paced packet's slot started here
    int32_t pace_wire_bytes = 0;   ///< and was this long (0 = not paced)
    int64_t produced_ps = 0;       ///< the last paced message is produced by then
    int64_t rto_deadline_ps = -1;  ///< -1 = disarmed
    bool timer_pending = false;
    bool active = false;  ///< in its NIC's round-robin list
    int retries = 0;      ///< consecutive timeouts without progress
    /// When snd_una last advanced, or the QP sent into an empty window (longest_stall()).
    int64_t progress_ps = 0;
    // Selective repeat (NetConfig::selective_repeat; nic_selective.cpp).
    std::deque<uint8_t> sacked;  ///< [k]: PSN snd_una + k was selectively acknowledged
    uint32_t high_sack = 0;      ///< highest selectively acknowledged PSN + 1 (0 = none)
    uint32_t resend_nxt = 0;     ///< the next PSN to look at for a lost packet to resend
    uint32_t lost_upto = 0;      ///< the timeout deemed every unacknowledged PSN below lost
    /// Congestion control's reaction point (NetConfig::cc): made with the QP, started by its
    /// first message.
    QpCcSender cc;
  };
  /// A QP's receiving half: the destination host's state.
  struct QpRx {
    uint32_t rcv_nxt = 0;
    /// Absolute number of the message holding rcv_nxt, which is msgs.front() (a message leaves
    /// msgs when it completes).
    uint64_t rcv_msg = 0;
    uint32_t unacked = 0;
    bool nak_outstanding = false;
    std::deque<RxMessage> msgs;  ///< posted, not yet complete, oldest first
    /// Selective repeat: [k] = PSN rcv_nxt + 1 + k was placed out of order.
    std::deque<uint8_t> ooo;
    QpCcReceiver cc;  ///< congestion control's notification point (NetConfig::cc)
    /// Received in full, completing after the receive latency (NetConfig::rx_latency_ps),
    /// oldest first: each has its on_rx_complete event pending.
    std::deque<RxMessage> completing;
    int64_t last_done_ps = 0;  ///< when the latest of them completes (completions stay FIFO)
  };
  struct Nic {
    uint32_t port = 0;             ///< global id of the NIC's port
    std::vector<uint32_t> active;  ///< QPs with packets to send, round-robin
    /// Parallel to `active`: before this time (ps) the QP cannot send for a reason fixed until
    /// it sends or goes back (its message not started, its payload not produced, a static
    /// pacing gap), so nic_fill passes it without reading the QP; <= now = look at the QP.
    std::vector<int64_t> not_before_ps;
    size_t cursor = 0;
    int64_t wake_ps = -1;  ///< pending rate-limiter wake-up, -1 = none
    /// When the NIC may start its next message (NetConfig::message_interval_ps after the last).
    int64_t next_message_ps = 0;
  };

  struct SwitchPolicy {
    bool ecn = false;
    bool ecn_at_dequeue = false;
    RedEcn red;
    PfcSwitchSettings pfc;  ///< as configured (PfcFlowControl keeps them from setup on)
  };
  bool lossless(uint32_t node, int tc) const { return cfg_.credits || pfc_.lossless(node, tc); }
  /// Classes of `port` that may send now: non-empty, not paused (unless stormed), with credits.
  uint8_t eligible(const Port& port, uint32_t port_id) const;
  /// Starts a frame if the port is idle and has one to send (PFC frames first).
  void kick(uint32_t port_id);
  /// kick(), then lets the NIC of a host port generate a packet if the port is still idle.
  void port_idle(uint32_t port_id);
  void send_pfc_frame(uint32_t port_id);
  void on_pfc_arrival(Packet* p);
  void on_pause_expiry(uint64_t port_id);
  void on_xoff_refresh(uint64_t port_id);
  void on_credit(uint64_t packed);
  static void on_check_barrier(void* network);
  /// The check: watchdog on the owned nodes, snapshot, gather, deadlock detection and report.
  void run_check();
  void pause_queue(uint32_t port_id, int tc, int64_t until_ps);
  void resume_queue(uint32_t port_id, int tc);
  /// Ingress accounting at a switch: `bytes` came in (> 0) or left (< 0) on port `in_pid`; the
  /// XOFF or XON PfcFlowControl decides is acted on at once.
  void ingress_change(uint32_t in_pid, int tc, int64_t bytes);
  /// XON for (in_pid, tc) in XOFF if its count is at or below the XON level now (observer
  /// told, port kicked to send the PFC frame).
  void maybe_xon(uint32_t in_pid, int tc);
  /// Dynamic thresholds, or an XON waiting for the shared pool: maybe_xon for every ingress
  /// of `node` in XOFF.
  void recheck_dynamic_xon(uint32_t node);
  /// XOFF for priority `tc` of switch ingress `in_pid` now, its headroom counted from the bytes
  /// it holds (PFC frame queued, observer told).
  void assert_xoff(uint32_t in_pid, int tc);
  /// The PFC watchdog over the owned switches' egress queues; true if it declared a storm.
  bool watchdog_scan(int64_t now);
  /// Names the proven `cycle`'s queues, links and flows (from the merged snapshot `s`) in the
  /// monitor's DeadlockReport.
  void report_deadlock(const LosslessSnapshot& s, const std::vector<uint64_t>& cycle);
  void on_tx_done(uint64_t port_id);
  void on_arrival(uint64_t packet_addr);
  /// Registers the hints below with the simulator (network_hints.cpp).
  void register_hints();
  /// Simulator::add_hint's prefetches for the next on_arrival (its packet), on_tx_done (its
  /// port) and on_credit (the port's credits and transmitter state).
  static void hint_arrival(const Event& next);
  static void hint_tx_done(const Event& next);
  static void hint_credit(const Event& next);
  void on_nic_wake(uint64_t nic);
  void on_rto(uint64_t qp);
  void on_port_change(uint64_t index);
  void on_routes_change(uint64_t index);
  static void set_port_rate(Port& port, int64_t rate_bps);
  /// For choices[i] (at `node`, whose ports start at `base`) whose link is down: one of the
  /// choices whose link is up, by the same hash over those alone, so the flows of the dead
  /// port spread over the rest as a resilient ECMP group's do (choices[i] when none is up):
  /// local fast failover.
  uint32_t failover(std::span<const uint16_t> choices, uint32_t base, size_t i, uint32_t node,
                    uint32_t flow_hash, uint32_t seq) const;
  /// QP `qp_id`'s acknowledged PSN advanced at `now_ps`: its wait since progress_ps ends.
  void note_progress(Qp& qp, uint32_t qp_id, int64_t now_ps);
  /// The receive latency of QP `qp`'s oldest completing message is over: it completes.
  void on_rx_complete(uint64_t qp);
  /// Message `m` of QP `qp_id` (received in full) completes now: its FCT and flow record, the
  /// observer, the sink (which may post messages: Qp and QpRx references dangle after it).
  void complete_message(uint32_t qp_id, const RxMessage& m);
  void start_tx(uint32_t port_id, uint8_t eligible);
  /// Posts a message on QP `qp_id` (checked by the caller): send()'s work after the lookup.
  uint64_t post(uint32_t qp_id, int64_t bytes, uint64_t tag, bool inline_payload, int64_t pace_bps);
  void nic_fill(uint32_t nic);
  /// Clears QP `qp_id`'s entry in its NIC's Nic::not_before_ps (its next packet changed other
  /// than by sending: go-back-N, or an ACK ahead of it). O(QPs active on the NIC).
  void forget_hold(uint32_t qp_id);
  void forward(Packet* p);
  void deliver(Packet* p);
  void receive_data(Packet* p, const Qp& qp);
  /// Validates a QP key as send() does (messages prefixed by `who`); returns the class.
  int check_qp_key(const char* who, int src_host, int dst_host, uint32_t flow_id, int tc) const;
  /// The QP of a checked key, created if new.
  uint32_t open_checked(const char* who, int src_host, int dst_host, uint32_t flow_id, int tc,
                        int nic = -1);
  /// Hands a new message's receiver copy to the destination (remote_post_, or locally).
  void post_rx(uint32_t qp_id, const RxMessage& m);
  void receive_ack(const Packet* p, Qp& qp, uint32_t qp_id);
  /// A control frame of the QP's receiver to its sender; echo_ps: the send stamp it echoes
  /// (rtt_stamps_; -1 = none, as a CNP's).
  /// answered: the data packet it answers, whose INT records it echoes (int_records_).
  void send_control(uint32_t qp_id, PacketKind kind, uint32_t psn, int tc, int64_t echo_ps = -1,
                    const Packet* answered = nullptr, uint32_t sack_psn = kNoSack);
  /// When the payload of arriving data packet `p` is in memory and its completion could be
  /// written: after its PCIe copy (nic.pcie_rate) and the receive latency, ps.
  int64_t rx_placed_ps(const Packet* p);
  /// The receiver's message msgs.front() is received in full: it completes at `done_ps` (or
  /// after the one completing ahead of it), in order.
  void finish_rx_message(uint32_t qp_id, int64_t done_ps);
  // Selective repeat (nic_selective.cpp): out-of-order placement at the receiver, selective
  // acknowledgement (an ACK's sack_side_ names the out-of-order PSN it answers), and the
  // sender's resend of only the packets deemed lost.
  static constexpr uint32_t kNoSack = UINT32_MAX;
  /// The receiver's answer to data packet `p` that is not the next expected one.
  void place_out_of_order(Packet* p, const Qp& qp, QpRx& rx, int64_t echo);
  /// After rcv_nxt advanced by one: advances it over the packets placed next to it; how many.
  static uint32_t join_placed(QpRx& rx);
  void forget_sacked(Qp& qp, uint32_t acked);
  void on_sack(Qp& qp, uint32_t qp_id, uint32_t psn);
  /// Whether a packet deemed lost waits to be resent (resend_nxt is moved onto it).
  bool hole_pending(Qp& qp) const;
  bool has_to_send(Qp& qp) const {
    return qp.snd_nxt < qp.psn_end || (cfg_.selective_repeat && hole_pending(qp));
  }
  /// The message of `qp` that holds `psn` (sent, not yet acknowledged).
  Message& message_of(Qp& qp, uint32_t psn);
  /// Message snd_msg of `qp`, from the QP's copy (Qp::cur); message_at()'s std::logic_error
  /// if it is not held.
  const Message& send_message(Qp& qp) {
    if (qp.cur_msg != qp.snd_msg) {
      qp.cur = message_at(qp, qp.snd_msg);
      qp.cur_msg = qp.snd_msg;
    }
    return qp.cur;
  }
  /// The timeout under selective repeat: every unacknowledged PSN not selectively acknowledged
  /// is deemed lost and resent.
  void resend_unacknowledged(uint32_t qp_id);
  /// The QP's round trip on an idle fabric, picoseconds: a full data packet along its path
  /// (its flow hash's first PSN) and an ACK back, each serialized, propagated and forwarded at
  /// every hop (store and forward). HPCC's base RTT T when hpcc.base_rtt is 0.
  int64_t idle_rtt_ps(const Qp& qp) const;
  void go_back(uint32_t qp_id, uint32_t psn, bool timeout);
  void arm_timer(uint32_t qp_id);
  /// The LP of a QP's sending side (its NIC's host): runs its timer.
  LpId sender_lp(const Qp& qp) const { return node_lp(ports_[nics_[qp.nic].port].node); }
  void activate(uint32_t qp_id);
  /// The QP's pacing rate: the lower of its static limit and its congestion control's current
  /// rate; 0 = line rate.
  int64_t pacing_rate(const Qp& qp) const {
    int64_t rate = qp.rate_bps;
    if (const int64_t cc = qp.cc.rate_bps(); cc > 0) rate = rate > 0 ? std::min(rate, cc) : cc;
    return rate;
  }
  void enqueue(uint32_t port_id, Packet* p);
  static constexpr uint32_t kNoRoute = UINT32_MAX;
  enum class DropCause : uint8_t { kTail, kCorrupt, kHeadroom, kWatchdog, kLinkDown, kNoRoute };
  /// Drops every frame queued at egress `pid` in class `tc` (the one being sent finishes),
  /// releasing its buffer, ingress and credit accounting; counted as `cause`.
  void flush_queue(uint32_t pid, int tc, DropCause cause);

  /// Drops `p`, counted against `port_id`: the egress (tail, watchdog), the link it came over
  /// (corrupt) or the ingress (headroom).
  void drop(Packet* p, uint32_t port_id, DropCause cause);
  /// InfiniBand: the frame of `wire_bytes` that came in on `in_pid` left its input buffer; the
  /// credits go back to the sending port after the link's delay.
  void return_credits(uint32_t in_pid, int tc, int64_t wire_bytes);
  /// RED ECN at switch egress `port_id` for a data packet seeing `queue_bytes` (ecn.hpp).
  void ecn_mark(Packet* p, uint32_t port_id, int64_t queue_bytes);
  void occupancy_change(uint32_t port_id, int tc, int64_t delta);
  /// Message number `abs` of a QP; throws std::logic_error if it was released or not posted.
  Message& message_at(Qp& qp, uint64_t abs) {
    if (abs < qp.msg_base || abs - qp.msg_base >= qp.msgs.size()) {
      throw std::logic_error("Network: message " + std::to_string(abs) +
                             " of a queue pair is not held");
    }
    return messages_[qp.msgs[abs - qp.msg_base]];
  }
  /// The ECMP pick among `choices` at `node` for a packet of `flow_hash` (`seq` when spraying).
  uint16_t pick(std::span<const uint16_t> choices, uint32_t node, uint32_t flow_hash,
                uint32_t seq) const;
  /// pick()'s index among n choices.
  size_t hashed_index(size_t n, uint32_t node, uint32_t flow_hash, uint32_t seq) const;
  /// The egress port of a frame `p` being forwarded at its node: egress_for()'s hash, or at a
  /// switch under adaptive routing the load balancer's choice by queue depth; kNoRoute when
  /// the node's routes after a link event have no way to its destination.
  uint32_t forward_egress(const Packet* p, bool descending);
  [[noreturn]] [[gnu::cold]] static void no_route(uint32_t node, int dst_host);
  uint32_t egress_for(uint32_t node, int dst_host, uint32_t flow_hash, uint32_t seq,
                      bool descending) const;

  Simulator& sim_;
  const Fabric& fabric_;
  const RoutingTable& routes_;
  NetConfig cfg_;
  int64_t ack_wire_bytes_ = 0;
  EgressScheduler scheduler_;  ///< at every port
  PacketPool pool_;
  /// The congestion control measures RTTs (CcChoice::needs_rtt): a data packet's side field
  /// holds its send time, an ACK's or NAK's the stamp it echoes (-1 = none).
  bool rtt_stamps_ = false;
  PacketSide<uint32_t> sack_side_;  ///< selective repeat: an ACK's selectively acked PSN
  PacketSide<int64_t> tx_stamp_;
  /// The congestion control reads in-band telemetry (CcChoice::needs_int): each switch egress
  /// appends an IntHop to a data packet's records; an ACK or NAK holds the records it echoes.
  bool int_records_ = false;
  PacketSide<IntStack> int_side_;
  /// Bytes the INT header adds to each data packet and ACK (HpccConfig::int_header_bytes).
  int32_t int_header_bytes_ = 0;
  std::vector<Port> ports_;
  std::vector<ArrivalCounters> arrivals_;  ///< per receiving port
  std::vector<QueueCounters> queues_;      ///< port x traffic class
  std::vector<Occupancy> port_occ_;
  std::vector<OccupancyHistogram> port_hist_;
  std::vector<RngStream> ber_rng_;     ///< per port (seeded only where BER > 0)
  std::vector<RngStream> ecn_rng_;     ///< per node (seeded for switches when ECN is on)
  std::vector<uint32_t> first_port_;   ///< per node: global id of its port 0
  std::vector<uint8_t> is_switch_;     ///< per node
  std::vector<int32_t> host_of_node_;  ///< per node: host id, or -1 for a switch
  std::vector<uint8_t> nic_port_;      ///< per port: a GPU's network port (not its NVLink)
  std::vector<uint32_t> switch_salt_;  ///< per node
  LoadBalancer lb_;                    ///< adaptive routing's state (flowlet tables)
  std::vector<BufferMmu> mmus_;        ///< per node (used for switches)
  std::vector<Nic> nics_;              ///< one per host port
  std::vector<int32_t> nic_of_port_;   ///< global port id -> index in nics_, or -1
  /// Global port id -> when its NIC's PCIe link has written the last payload received
  /// (NetConfig::pcie_rate_bps); 0 = idle.
  std::vector<int64_t> rx_pcie_free_ps_;
  /// Per host: the global id of its NVLink port to its server's NVSwitch, which a loopback QP
  /// (src == dst host: NVLS's multimem traffic) leaves and comes back by; -1 = none.
  std::vector<int32_t> loopback_port_;
  /// Host h's NIC ports to a switch over a link that is up, which a NIC loopback
  /// (kNicLoopFlowBit) may leave by, in port order: global port ids
  /// nic_loop_ports_[nic_loop_begin_[h] .. nic_loop_begin_[h + 1]).
  std::vector<uint32_t> nic_loop_ports_;
  std::vector<uint32_t> nic_loop_begin_;  ///< per host, + 1
  uint32_t nic_loop_port_count(int host) const {
    return nic_loop_begin_[static_cast<size_t>(host) + 1] -
           nic_loop_begin_[static_cast<size_t>(host)];
  }
  std::vector<Qp> qps_;
  std::vector<QpRx> qp_rx_;                                           ///< by QP id
  std::map<std::tuple<int, int, uint32_t, int>, uint32_t> qp_index_;  ///< (src, dst, flow, tc)
  bool require_open_qps_ = false;
  std::function<bool(uint32_t, const RxMessage&)> remote_post_;
  std::vector<PostKey> posts_;
  bool record_posts_ = false;
  int64_t post_event_ps_ = -1;     ///< time of the event the last post was in
  uint64_t post_event_key_ = 0;    ///< and its key
  bool post_in_event_ = false;     ///< (false: posted outside events)
  uint32_t post_index_ = 0;        ///< posts so far in that event
  std::vector<Message> messages_;  ///< slots, recycled through free_messages_
  std::vector<uint32_t> free_messages_;
  std::vector<FlowRecord> flows_;
  int64_t flows_unrecorded_ = 0;
  QuantileHistogram fct_[2];  ///< by the tag's top bit: every delivered message's FCT
  uint64_t next_seq_ = 0;
  uint32_t ecmp_salt_ = 0;
  size_t in_flight_ = 0;
  int64_t delivered_packets_ = 0;
  int64_t dropped_packets_ = 0;
  int64_t sent_bytes_ = 0, delivered_bytes_ = 0, dropped_bytes_ = 0;
  int64_t retransmits_ = 0, nak_tx_ = 0, rto_timeouts_ = 0, ce_received_ = 0;
  int64_t cnp_tx_ = 0, cnp_rx_ = 0;
  int64_t no_route_drops_ = 0;
  /// The run-wide counters each rank exports and import_state sums, in the blob's order.
  static std::span<int64_t Network::*const> exchanged_counters();
  /// Registered counters: counter (index - kBuiltinCounters) x port.
  std::vector<int64_t> registered_;
  /// Per registered counter: its ports merged as its CounterDef says.
  std::vector<int64_t> registered_totals() const;
  /// Merges another rank's registered_ into this one's, as each CounterDef says.
  void merge_registered(const std::vector<int64_t>& other);
  std::string failure_;
  int64_t failure_ps_ = -1;
  // Links changing during the run (network_links.cpp).
  struct PortChangeItem {
    uint32_t port;
    PortChange change;
    int64_t rate_bps;
  };
  struct RouteChange {
    uint32_t node;
    const RoutingTable* routes;
  };
  std::vector<PortChangeItem> port_changes_;
  std::vector<RouteChange> route_changes_;
  /// The routes each node forwards by now: routes_ until a reconvergence moves it.
  std::vector<const RoutingTable*> node_routes_;
  QpStall stall_;
  uint64_t failure_key_ = 0;
  int64_t imported_in_flight_bytes_ = 0;  ///< wire bytes in other ranks' pools (import_state)
  size_t imported_pool_capacity_ = 0;
  /// PFC: ingress accounting with XOFF/XON decisions, pause state (congestion/pfc_flow_control).
  PfcFlowControl pfc_;
  CreditFlowControl credit_fc_;       ///< InfiniBand: per port x VL (empty without credits)
  std::vector<SwitchPolicy> policy_;  ///< per node (switches)
  bool lossless_any_ = false;         ///< some switch runs PFC, or InfiniBand credits
  /// The PFC watchdog and the deadlock detector (the periodic lossless check).
  LosslessMonitor monitor_;
  CompletionSink* sink_ = nullptr;
  NetObserver* observer_ = nullptr;
};

// Inline: forwarding and the NIC transport (nic_transport.cpp) both queue every frame here.
inline void Network::enqueue(uint32_t port_id, Packet* p) {
  Port& port = ports_[port_id];
  if (port.down) [[unlikely]] {  // a NIC sending to its link while it is down
    drop(p, port_id, DropCause::kLinkDown);
    return;
  }
  const int tc = p->tc;
  p->next = nullptr;
  p->enqueue_ps = sim_.now().ps();
  if (port.tail[tc] == nullptr) {
    port.head[tc] = port.tail[tc] = p;
  } else {
    port.tail[tc]->next = p;
    port.tail[tc] = p;
  }
  port.nonempty |= static_cast<uint8_t>(1u << tc);
  occupancy_change(port_id, tc, p->wire_bytes);
  if (!port.transmitting) kick(port_id);
}

}  // namespace fabricsim
