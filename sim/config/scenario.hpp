// A scenario as typed, validated values: what `fabricsim run` simulates.
//
// Built only by load_scenario() (sim/config/loader.hpp), which checks every key against the
// schema below, so code downstream never sees a misspelt key, a missing unit or a value out of
// range. Units are in the names: _bps (bits per second), _ps (picoseconds), _bytes.
//
// YAML layout (scenarios/quickstart.yaml is the worked example):
//   name: quickstart            # optional, defaults to the file's stem
//   seed: 1                     # uint64; drives every RNG stream
//   transport: roce             # roce | infiniband (header overhead and flow control: pfc or
//                               # infiniband below)
//   topology: {kind, oversubscription, <keys of the kind>, failed_links, degraded_links,
//              link_bit_error_rates, link_events}
//   link:     {host_rate, fabric_rate, propagation_delay, nvlink_rate, bit_error_rate}
//   routing:  {algorithm, load_balancing, reconvergence_delay, dateline_class}   # optional;
//   dateline_class 0..7,
//             # only on a torus with wraparound, not nic.traffic_class (and PFC lossless)
//   cost_model: configs/cost_example.yaml      # optional
//   switch:   {latency, radix, buffer_model, buffer_per_port | shared_buffer, reserved_per_queue,
//              alpha, cut_through, scheduler, dwrr_weights, profile}
//   nic:      {mtu, traffic_class, ack_interval, rto, qp_rate_limit, message_rate, tx_latency,
//              rx_latency, congestion_control}
//   ecn:      {enabled, kmin, kmax, pmax, mark_at}   # optional
//   pfc:      {enabled, priorities, threshold, xoff | alpha, xon_offset, headroom, response_time,
//              pause_quanta, watchdog, watchdog_detection_time, watchdog_restoration_time,
//              watchdog_action, deadlock_check_interval}
//             # optional, transport roce; xoff with threshold static, alpha with dynamic
//   dcqcn:    {preset, enabled, g, initial_alpha, alpha_timer, rate_timer, byte_counter,
//              fast_recovery_steps, rai, rhai, min_rate, clamp_target_rate,
//              clamp_target_rate_after_time_inc, rate_reduce_monitor_period, max_decrease,
//              cnp_interval, cnp_traffic_class}
//             # optional, transport roce; the preset's values (paper | connectx, default
//             # paper), then the keys given over them; enabled needs ecn.enabled
//   timely:   {t_low, t_high, min_rtt, alpha, beta, rai, rhai, hai_threshold, min_rate}
//             # optional, with nic.congestion_control: timely
//   hpcc:     {eta, max_stage, rate_ai, min_rate, fast_react, window, base_rtt, int_header_bytes}
//             # optional, with nic.congestion_control: hpcc
//   infiniband: {vl_buffer}                  # optional, transport infiniband
//   flow:     {batch_tolerance}              # optional, with mode: flow
//   server:   {profile}                      # optional: a server profile (configs/servers/)
//             # whose topology, link, nic, pcie and nccl keys are this scenario's defaults
//   switches: {NAME: {pfc: {<pfc keys>}, ecn: {<ecn keys>}}, ...}
//             # optional: one switch's pfc and ecn keys over the top-level sections; NAME as
//             # `fabricsim topo --dot` shows it (check_switch_overrides); --set takes
//             # switches.NAME.pfc.KEY=VALUE
//   workload: {collective, algorithm, protocol, datatype, redop, minbytes, maxbytes, stepfactor}
//             # required unless traffic is given
//   traffic:                                 # optional: point-to-point flows, a non-empty list
//     - {src: 0, dst: 5, size: 4MiB}         # src, dst: a host index or name (resolve_traffic)
//     - {src: host1, dst: host5, size: 64MiB, start: 10us, priority: 3, flow: 7}
//             # start default 0; priority (0..7) default nic.traffic_class; flow (0..2^32-1)
//             # default the item's index; edited in the file only (no --set)
//   jobs:                                    # optional, instead of workload: several jobs on
//     - {name: ring, collective: all_reduce, size: 64MiB, gpus: 16, placement: packed}
//     - {name: moe, collective: alltoall, size: 16MiB, gpus: 16, start: 10us, nccl: {...}}
//             # one fabric (jobs/job_params.hpp); edited in the file only (no --set)
//
// Sizes, times and rates are written with their unit and without one in the key's name
// (pfc.xoff: 200KB, pfc.response_time: 1us, dcqcn.rai: 40Mbps).
//
// Every key's type, unit, default, range and one line of doc: `fabricsim params` (the tables in
// sim/config/params_*.cpp, which the loader reads by; the defaults are the initializers below,
// and those of the sections a component owns: collectives/workload_params.hpp for workload and
// training, collectives/nccl_params.hpp for nccl).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collectives/nccl_params.hpp"
#include "collectives/workload_params.hpp"
#include "congestion/ecn.hpp"
#include "congestion/hpcc/hpcc_config.hpp"
#include "congestion/pfc.hpp"
#include "congestion/timely/timely_config.hpp"
#include "jobs/job_params.hpp"
#include "loadbalance/load_balancer.hpp"
#include "perftest/perftest_params.hpp"
#include "servers/pcie.hpp"
#include "sim/core/config_error.hpp"  // KeyOrigin

namespace fabricsim {

/// One item of `topology.link_events`: a link, or every link of a switch, changing state at a
/// simulated time (sim/run/link_events.hpp says what a run does with it).
struct LinkEventConfig {
  int64_t at_ps = 0;        ///< when, picoseconds from the start of the run
  std::string link;         ///< a link as topology.failed_links names one, or empty
  std::string node;         ///< `switch:` a switch whose every link changes, or empty
  std::string state;        ///< "down", "up", or empty (a rate change)
  int64_t rate_bps = 0;     ///< > 0: the link's rate from then on (with up: the rate it returns at)
  int64_t down_for_ps = 0;  ///< > 0 with down: up again this long after (a flap)
  int64_t every_ps = 0;     ///< with repeat > 1: the event recurs this often
  int repeat = 1;           ///< how many times the event happens
};

/// `topology:` section. Which keys apply depends on `kind`; the loader rejects a key of
/// another kind by name ("topology.k applies to kind fat-tree").
struct TopologyConfig {
  std::string kind = "spine-leaf";  ///< spine-leaf | fat-tree | rail-optimized | torus
  /// Oversubscription o of o:1 at the first switch tier, written as a number (3) or a ratio
  /// string ("3:1"), >= 1. spine-leaf and rail-optimized: host-facing capacity / uplink
  /// capacity of a leaf. fat-tree: host ports / uplink ports of an edge switch (the radix k is
  /// split between them), as Al-Fares' generalisation counts it.
  double oversubscription = 1.0;

  // spine-leaf
  int leaves = 0;          ///< leaf (top-of-rack) switches, >= 1
  int spines = 0;          ///< spine switches, >= 1 (also rail-optimized, unless rail_only)
  int hosts_per_leaf = 0;  ///< hosts (one GPU + one NIC each) under each leaf, >= 1

  // fat-tree: k-ary three-tier fat-tree (Al-Fares et al., SIGCOMM 2008) generalised to a
  // three-tier Clos of radix-k switches with oversubscription at the edge and aggregation tiers.
  int k = 0;                          ///< switch radix, even, >= 2
  double agg_oversubscription = 1.0;  ///< aggregation tier o:1 (down / up ports)
  /// Pods built, 1…k; 0 = k (the full fat-tree). Fewer pods leave core ports free: a fat-tree
  /// bought for its first pods, as clusters are built up.
  int pods = 0;

  // rail-optimized: G-GPU servers, NIC r of each server to the rail-r leaf of its scalable unit
  // (NVIDIA DGX SuperPOD reference architecture), spines joining the leaves of all units.
  /// GPUs per server (NVLink/NVSwitch domain), >= 1. Also spine-leaf and fat-tree (default 1):
  /// G > 1 groups consecutive hosts into servers with one NVSwitch each (link.nvlink_rate),
  /// every GPU keeping its own NIC on its leaf/edge (a "ToR" design, not rail-optimized).
  int gpus_per_server = 0;
  int nics_per_server = 0;  ///< compute NICs per server; 0 = gpus_per_server
  int rails = 0;            ///< rails per plane (leaves per scalable unit); 0 = nics_per_server
  int servers_per_su = 0;   ///< servers per scalable unit, >= 1
  int scalable_units = 1;   ///< >= 1
  int planes = 1;           ///< independent copies of the rail fabric; NICs split across planes
  bool rail_only = false;   ///< no spines: cross-rail traffic goes through NVLink (PXN)
  /// How a server's GPUs reach each other (G > 1): "nvswitch", an NVLink to one NVSwitch per
  /// server at link.nvlink_rate × link.nvlink_efficiency; or "pcie", peer-to-peer through one
  /// PCIe switch per server at the `pcie:` section's write data rate (servers/pcie.hpp).
  std::string gpu_interconnect = "nvswitch";

  // torus: k-ary n-cube, n = dims.size() (2 or 3), one accelerator (host) per router node.
  std::vector<int> dims;               ///< size per dimension, each >= 2, e.g. [4, 4, 4]
  bool wraparound = true;              ///< false = mesh
  std::vector<int64_t> dim_rates_bps;  ///< per-dimension link rate; empty = link.fabric_rate

  // every kind: links named "nodeA-nodeB" (node names as `fabricsim topo --dot` shows them,
  // e.g. "leaf0-spine1"), with "#i" for the i-th parallel link (default #0).
  std::vector<std::string> failed_links;                        ///< links down: routes avoid them
  std::vector<std::pair<std::string, int64_t>> degraded_links;  ///< link -> negotiated rate, bps
  /// link -> bit error rate of that cable (overrides link.bit_error_rate), e.g.
  /// {leaf0-spine1: 1e-8}. A frame of b bits is corrupted with probability 1 - (1 - BER)^b and
  /// dropped by the next store-and-forward hop's FCS check.
  std::vector<std::pair<std::string, double>> link_bit_error_rates;
  /// Links going down, coming back or changing rate during the run (packet mode).
  std::vector<LinkEventConfig> link_events;
};

/// `routing:` section (optional).
struct RoutingConfig {
  /// auto | ecmp | up_down | dimension_order. auto = up_down on Clos fabrics (spine-leaf,
  /// fat-tree, rail-optimized), dimension_order on tori.
  std::string algorithm = "auto";
  /// per_flow (ECMP hash) | per_packet (spraying) | adaptive (least occupied port, per
  /// packet) | flowlet (least occupied port, per flowlet); loadbalance/load_balancer.hpp.
  std::string load_balancing = "per_flow";
  /// flowlet: a flow idle at a switch for longer than this may take another port, ps.
  int64_t flowlet_gap_ps = LbSettings{}.flowlet_gap_ps;
  /// adaptive, flowlet: the hashed port is kept unless another is emptier by more, bytes.
  int64_t ar_threshold_bytes = LbSettings{}.threshold_bytes;
  /// Torus with wraparound: traffic class a packet moves to when it crosses a dimension's
  /// wraparound link (a dateline, Dally & Seitz 1987), back to its own class when it turns
  /// into the next dimension; it must be a PFC lossless priority too. -1 = no dateline.
  int dateline_class = -1;
  /// Clos: traffic class a packet moves to when a switch sends it up again after it came
  /// down (a bounce, which only non-valley-free routes such as ecmp around failed links make),
  /// so bounced packets never wait on the buffers of the class they came down in (after Hu et
  /// al., "Tagger", CoNEXT 2017); it must be a PFC lossless priority. -1 = off.
  int bounce_class = -1;
  /// How long after a link goes down or comes back every node's routes take it into account
  /// (the fabric's routing protocol or subnet manager), ps; -1 = not given (required when
  /// topology.link_events takes a link down).
  int64_t reconvergence_delay_ps = -1;
};

/// `link:` section.
struct LinkConfig {
  int64_t host_rate_bps = 0;         ///< host NIC <-> leaf link rate, e.g. "400Gbps"
  int64_t fabric_rate_bps = 0;       ///< leaf <-> spine link rate; defaults to host_rate
  int64_t propagation_delay_ps = 0;  ///< per link, one way, e.g. "500ns" (~100 m of fibre)
  int64_t nvlink_rate_bps = 0;       ///< rail-optimized: GPU <-> NVSwitch, per direction
  /// Fraction of link.nvlink_rate that NCCL's traffic reaches: NCCL's own per-link NVLink
  /// bandwidth (src/graph/topo.h: SM70_NVLINK_BW and SM80_NVLINK_BW 20.0 GB/s, SM90 20.6,
  /// SM100 40.1) over the link's data rate per direction (NVLink2/3/4: 25 GB/s, NVLink5: 50):
  /// 0.80 for V100, A100 and B200, 0.824 for H100 and H200. The simulated NVLinks run at
  /// nvlink_data_rate_bps(). 0.05 … 1.
  double nvlink_efficiency = 0.8;
  /// GPU <-> host memory over PCIe, per direction: carries NCCL's staging when GPUDirect RDMA
  /// is off. Default PCIe Gen5 x16, 16 × 32 GT/s × 128/130 = 504 Gb/s (HARDWARE.md §1.2).
  int64_t pcie_rate_bps = 504'123'076'923;
  int64_t pcie_latency_ps = 1'000'000;  ///< one crossing of PCIe and host memory (assumed 1 us)
  /// Bit error rate of every network link (0 = error-free; IEEE 802.3 400GBASE links are
  /// specified at a post-FEC BER below 1e-13). NVLinks are error-free. 0 … 1e-3.
  double bit_error_rate = 0.0;

  /// The rate NVLink traffic moves at: nvlink_rate_bps × nvlink_efficiency, rounded to the
  /// nearest bit per second (0 when nvlink_rate_bps is 0).
  int64_t nvlink_data_rate_bps() const {
    return std::llround(static_cast<double>(nvlink_rate_bps) * nvlink_efficiency);
  }
};

/// `switch:` section (every switch of the fabric).
struct SwitchConfig {
  /// Forwarding latency. Store-and-forward: last bit in to first bit out. Cut-through: first
  /// bit in to first bit out, as switch datasheets quote it.
  int64_t latency_ps = 0;
  /// Ports per switch (e.g. 64 for a QM9700 or a 51.2T ASIC at 800G); 0 = not checked. Every
  /// network switch the builder makes must fit in it (NVSwitches are not checked).
  int radix = 0;
  /// static: each egress port owns buffer_per_port bytes. shared: one pool of shared_buffer
  /// bytes per switch, each egress queue (port x traffic class) guaranteed
  /// reserved_per_queue bytes and admitted into the rest while its shared use is below
  /// alpha x (free shared bytes) (Choudhury & Hahne, IEEE/ACM ToN 6(2), 1998).
  std::string buffer_model = "static";
  int64_t buffer_per_port_bytes = 0;     ///< static: egress buffer per port; tail drop beyond it
  int64_t shared_buffer_bytes = 0;       ///< shared: the switch's whole packet buffer
  int64_t reserved_per_queue_bytes = 0;  ///< shared: guaranteed bytes per egress queue
  double alpha = 1.0;                    ///< shared: dynamic threshold factor, 1/128 … 64
  /// Forward a frame once its header is in (when the egress is not faster than the ingress;
  /// otherwise the frame is stored first, as switches do between unequal speeds).
  bool cut_through = false;
  /// Egress scheduling between the 8 traffic classes: strict (7 highest) | dwrr.
  std::string scheduler = "strict";
  /// dwrr: weight per traffic class 0..7 (quantum = weight x one MTU frame); 8 integers 1..255.
  std::vector<int> dwrr_weights = std::vector<int>(8, 1);
  /// `switch.profile:` path of a switch profile (configs/switches/*.yaml) whose `switch:` keys
  /// are defaults for this section, resolved against the scenario's folder; "" = none. Keys
  /// the scenario sets (or --set sets) win; a profile key for a buffer_model or scheduler other
  /// than the one the scenario itself chose is not used (configs/switches/README.md).
  std::string profile;
};

/// `server:` section (optional).
struct ServerConfig {
  /// `server.profile:` path of a server profile (configs/servers/*.yaml), resolved against the
  /// scenario's folder; "" = none. Its keys (the server-describing ones of topology, link, nic,
  /// pcie and nccl: server_profile_keys(), sim/config/params_server.cpp) are defaults: keys the
  /// scenario sets (or --set sets) win, and a key that does not apply to the scenario's
  /// topology kind is not used (configs/servers/README.md).
  std::string profile;
};

/// `nic:` section.
struct NicConfig {
  /// RDMA path MTU: payload bytes per packet, 256 … 4096 (IBTA's path MTUs 256, 512, 1024,
  /// 2048, 4096 for RoCE and InfiniBand; values between are accepted).
  int64_t mtu_bytes = 4096;
  /// Traffic class (IEEE 802.1p priority) of RDMA data and its ACKs, 0 … 7. 3 is the common
  /// RoCE deployment choice (NVIDIA's RoCE configuration guides).
  int traffic_class = 3;
  /// The receiver acknowledges every ack_interval-th in-order packet, and always the last
  /// packet of a message; >= 1.
  int ack_interval = 1;
  /// How a queue pair recovers what did not arrive in order: "go_back_n" (the receiver takes
  /// only the next expected packet and NAKs a gap; the sender resends from there on, IBTA RC)
  /// or "selective_repeat" (the receiver places packets out of order and acknowledges each
  /// out-of-order one selectively; the sender resends only packets not received: at the
  /// timeout, or once the receiver has received reorder_threshold packets past them).
  std::string loss_recovery = "go_back_n";
  /// selective_repeat: a packet counts as lost, and is resent, once packets at least this many
  /// PSNs past it were selectively acknowledged (forward acknowledgement, Mathis & Mahdavi,
  /// SIGCOMM'96; TCP's 3 duplicate ACKs, RFC 5681 §3.2); 0 = only the timeout resends, as a
  /// NIC on a lossless fabric whose adaptive routing reorders packets deeply.
  int reorder_threshold = 0;
  /// Retransmission timeout of a queue pair: with unacknowledged packets and no ACK progress
  /// for this long the sender goes back to the oldest unacknowledged packet. Default
  /// 4.096 us x 2^14 = 67.108864 ms (IB local ACK timeout exponent 14, perftest's default).
  int64_t rto_ps = 67'108'864'000;
  /// Per-QP rate limit (what congestion control adjusts); 0 = the port's line rate.
  int64_t qp_rate_limit_bps = 0;
  /// Work requests (messages) per second the NIC can start, over all its queue pairs: the
  /// message rate NIC datasheets quote (ConnectX-6: 215 million messages/s, NVIDIA ConnectX-6
  /// product brief). 0 = no limit (the default: an idle NIC starts a message at once, as before,
  /// so collective runs, whose NCCL step latencies already hold the NIC's costs, do not change).
  double message_rate = 0;
  /// Send side: from a message's post to its first byte on the wire (doorbell, WQE fetch; a
  /// payload not sent inline adds dma_read_latency and its PCIe copy). Receive side: from its
  /// last byte in to its completion (DMA write, CQE; plus the last packet's PCIe copy). 0 = none
  /// (the default, for the same reason as message_rate).
  int64_t tx_latency_ps = 0;
  int64_t rx_latency_ps = 0;
  /// A payload not sent inline (IBV_SEND_INLINE) is DMA-read from host memory before it
  /// leaves: one PCIe round trip (dma_read_latency), then its first packet's payload at the
  /// NIC's PCIe rate (pcie_rate); the receiving NIC writes each packet's payload at that rate,
  /// one after another, the last before the completion: below the port's data rate that caps
  /// what it receives (a GPU-memory or slow host plateau). 0 = none (the default).
  int64_t dma_read_latency_ps = 0;
  int64_t pcie_rate_bps = 0;
  /// The queue pairs' congestion control (congestion/cc_registry.hpp): auto (dcqcn if
  /// dcqcn.enabled, else none), none, dcqcn (as dcqcn.enabled: true), timely (the timely
  /// section's parameters), or a registered one.
  std::string congestion_control = "auto";
};

/// `ecn:` section (optional): RED-style ECN marking on every switch egress queue, after
/// DCQCN (Zhu et al., SIGCOMM 2015, §3.1 and §5): a data packet is marked CE with probability 0
/// while the queue holds at most kmin bytes, pmax x (q - kmin) / (kmax - kmin) between, and 1 at
/// kmax or more, q being the instantaneous queue (bytes of the packets ahead of it).
/// The thresholds' defaults are RedEcn's (congestion/ecn.hpp), the marking model's own.
struct EcnConfig {
  bool enabled = false;
  int64_t kmin_bytes = RedEcn{}.kmin_bytes;
  int64_t kmax_bytes = RedEcn{}.kmax_bytes;
  double pmax = RedEcn{}.pmax;
  std::string mark_at = "enqueue";  ///< enqueue (on arrival) | dequeue (when it starts to leave)
};

/// `pfc:` section (optional; RoCE only): IEEE 802.1Qbb priority flow control at every switch
/// ingress port for the lossless priorities. A switch counts the bytes each ingress port has in
/// its buffer per priority; when they reach XOFF it sends the upstream port a PAUSE frame for
/// that priority, when they fall to XON a resume (quanta 0). Frames still arriving after XOFF
/// land in the port's headroom; lossless packets are never refused by egress limits, only when
/// the headroom itself overflows (counted as headroom drops).
struct PfcConfig {
  bool enabled = false;
  /// Lossless priorities (0..7); empty = {nic.traffic_class}.
  std::vector<int> priorities;
  /// XOFF threshold model: static (xoff bytes per ingress port and priority) | dynamic (XOFF
  /// when the ingress bytes exceed alpha x the free shared buffer, as shared-buffer ASICs do;
  /// needs switch.buffer_model shared).
  std::string threshold = "static";
  /// static: XOFF threshold per ingress port and priority, bytes. 0 = derived: the port's
  /// share of the buffer (static: buffer_per_port; shared: the pool / ports) minus headroom.
  int64_t xoff_bytes = 0;
  double alpha = 1.0;  ///< dynamic: XOFF at alpha x free shared buffer, 1/128 … 64
  /// XON = XOFF - xon_offset (hysteresis); 0 = two MTU frames.
  int64_t xon_offset_bytes = 0;
  /// Headroom per ingress port and priority, bytes; 0 = sized by the formula (pfc.hpp).
  int64_t headroom_bytes = 0;
  /// Time from a PFC frame's arrival to the sender stopping (after the frame it is sending);
  /// also a term of the headroom formula. -1 = the IEEE 802.3 Annex 31D upper bound for the
  /// link's rate (congestion/pfc.hpp: 905 quanta at 400 Gb/s = 1.16 us).
  int64_t response_time_ps = -1;
  /// Quanta (512 bit times each) carried by an XOFF frame, 1 … 65535 (congestion/pfc.hpp).
  int pause_quanta = kMaxPauseQuanta;
  /// PFC watchdog: a queue paused continuously for detection_time is declared stormed; action
  /// drop (its packets and new arrivals are dropped, PAUSE ignored) or forward (PAUSE ignored);
  /// it is restored after restoration_time without a PAUSE frame received.
  bool watchdog = false;
  int64_t watchdog_detection_time_ps = 200'000'000'000;    ///< 200 ms (SONiC pfcwd default)
  int64_t watchdog_restoration_time_ps = 200'000'000'000;  ///< 200 ms
  std::string watchdog_action = "drop";                    ///< drop | forward
  /// How often the deadlock detector examines the paused queues while any is paused.
  int64_t deadlock_check_interval_ps = 100'000'000;  ///< 100 us
};

/// `dcqcn:` section (optional): DCQCN congestion control (Zhu et al., "Congestion Control for
/// Large-Scale RDMA Deployments", SIGCOMM 2015) on every RoCE queue pair; needs ecn.enabled.
/// `preset` (paper | connectx) fills every parameter (dcqcn_preset(), each value cited there);
/// keys given in the section override the preset's. Names follow the paper (symbol in brackets)
/// and, where they differ, NVIDIA ConnectX firmware's (rpg_*).
///
/// The initializers are the paper preset (dcqcn_preset("paper") is DcqcnConfig{}), each value
/// with its section of the paper.
struct DcqcnConfig {
  bool enabled = false;
  std::string preset = "paper";
  double g = 1.0 / 256;        ///< alpha gain [g]; §3.1/§5: g = 1/256
  double initial_alpha = 1.0;  ///< alpha of a new flow; §5 fluid model: 1, so the first CNP halves
  int64_t alpha_timer_ps = 55'000'000;  ///< alpha decays every [K] without a CNP; §3.1: 55 us
  /// Rate increase timer [T] (rpg_time_reset); §5 parameter choice: 55 us.
  int64_t rate_timer_ps = 55'000'000;
  /// Rate increase every [B] bytes sent (rpg_byte_reset); §5 parameter choice: 10 MB.
  int64_t byte_counter_bytes = 10'000'000;
  int fast_recovery_steps = 5;   ///< [F] (rpg_threshold); §3.1: 5 fast-recovery iterations
  int64_t rai_bps = 40'000'000;  ///< additive increase step [R_AI] (rpg_ai_rate); §5: 40 Mb/s
  /// Hyper increase step [R_HAI] (rpg_hai_rate). The paper leaves hyper increase and the rate
  /// floor to QCN (its reference [1]) and gives no numbers: 10 x R_AI, QCN's R_HAI / R_AI
  /// default ratio (50 / 5 Mb/s, e.g. in the authors' ns-3 code bobzhuyb/ns3-rdma).
  int64_t rhai_bps = 400'000'000;
  /// Floor of the current rate (rpg_min_rate); no value in the paper: kept from this struct's
  /// earlier default.
  int64_t min_rate_bps = 10'000'000;
  /// On a cut, Rt = Rc always (clamp_tgt_rate = 1); §3.1's rate decrease sets Rt = Rc on every
  /// CNP, as the authors' ns-3 model does (bobzhuyb/ns3-rdma, CLAMP_TARGET_RATE 1).
  bool clamp_target_rate = true;
  /// With clamp_target_rate off, Rt = Rc on a cut only if the rate rose since the last cut: by
  /// the byte counter, or also by the rate timer when this is true (ConnectX's
  /// clamp_tgt_rate_after_time_inc; false is QCN's rule, byte counter only). Cuts with no
  /// increase between them keep Rt. Unused while clamp_target_rate.
  bool clamp_target_rate_after_time_inc = true;
  /// At most one cut per [period] (rate_reduce_monitor_period): a CNP within the period of the
  /// last cut is applied at the period's end, several as one. 0 = every CNP cuts on arrival,
  /// as §3.1 describes the reaction point.
  int64_t rate_reduce_monitor_period_ps = 0;
  /// Largest cut per CNP: the rate never drops below (1 - max_decrease) x Rc at one CNP
  /// (rpg_min_dec_fac); 0.5 = the paper's alpha <= 1 (§3.1: one CNP cuts at most Rc / 2).
  double max_decrease = 0.5;
  /// Receiver: at most one CNP per flow per [N]; §3.1: N = 50 us.
  int64_t cnp_interval_ps = 50'000'000;
  /// Priority of CNPs (cnp_802p_prio). The paper only asks for a high priority; ConnectX's
  /// default CNP priority is used.
  int cnp_traffic_class = 6;
};

/// The DCQCN parameters of preset `name` (paper | connectx), each value's source in the
/// implementation. Throws std::invalid_argument for another name.
DcqcnConfig dcqcn_preset(const std::string& name);

/// `infiniband:` section (optional; transport infiniband): credit-based link-level flow
/// control per virtual lane (IBTA vol. 1 §7.9): the receiver advertises its input buffer per VL
/// in 64-byte credits; a sender transmits only with credits for the whole packet.
/// `flow:` section (optional): the flow mode's own settings (mode: flow, sim/flow).
struct FlowModeConfig {
  /// Flows ending within this fraction of their age after the first end share one max-min
  /// rate computation (FlowConfig::batch_tolerance); 0 = one at every end (exact). The others
  /// keep their rates until the window's last end (docs/flow-mode.md measures the effect).
  double batch_tolerance = 0.001;
};

struct InfinibandConfig {
  /// Input buffer per port and VL, bytes (rounded down to 64-byte credits); 0 = the switch's
  /// per-port buffer (static) or the shared buffer / ports (shared).
  int64_t vl_buffer_bytes = 0;
};

/// `switches:` section (optional): per-switch overrides of pfc and ecn keys, by switch name, to
/// model a fabric whose switches are configured inconsistently.
struct SwitchOverride {
  PfcConfig pfc;
  EcnConfig ecn;
};

/// One item of the `traffic:` section: a point-to-point flow (an RDMA write of `bytes` on
/// its own queue pair), as in the flow files of ns-3 RDMA studies (src, dst, priority, size,
/// start time).
struct TrafficFlow {
  std::string src, dst;              ///< as written: a host index ("3") or a host name ("host3")
  int src_host = -1, dst_host = -1;  ///< resolved against the fabric (resolve_traffic)
  int64_t bytes = 0;                 ///< message size, >= 1 byte
  int64_t start_ps = 0;              ///< posted at this simulated time
  int priority = -1;                 ///< traffic class 0..7; -1 = nic.traffic_class
  int64_t flow = -1;                 ///< queue pair id between the pair; -1 = the item's index
  bool background = false;           ///< generated by `background:` (not written by the user)
};

/// `background:` (optional): background traffic as the congestion-control literature generates
/// it (HPCC, Li et al. SIGCOMM 2019; its traffic_gen.py): per host, Poisson flow arrivals whose
/// mean rate offers `load` x the host link's rate, sizes from an empirical CDF, destinations
/// uniform over the other hosts (all-to-all) or over those on the same leaf (rack-local). The
/// flows join `traffic:` (flows.csv's `source` says `background`) and report their FCT slowdown.
/// traffic/ generates them (traffic/poisson_flows.hpp).
struct BackgroundConfig {
  bool enabled = false;  ///< the section is present
  double load = 0.3;     ///< offered load per host link, [0, 1]; 0: no flows (a baseline)
  /// web-search (DCTCP, Alizadeh et al. SIGCOMM 2010) | hadoop (Roy et al. SIGCOMM 2015) | a CDF
  /// file, relative to the scenario's folder: lines "SIZE_BYTES PERCENT", 0 to 100.
  std::string flow_sizes = "web-search";
  std::string pattern = "all-to-all";   ///< all-to-all | rack-local
  int64_t start_ps = 0;                 ///< first arrivals after this time
  int64_t duration_ps = 1'000'000'000;  ///< arrivals in [start, start + duration): 1 ms
  int priority = -1;                    ///< traffic class; -1 = nic.traffic_class
  int64_t max_flows = 1'000'000;        ///< refuse a section expected to generate more
};

struct Scenario {
  std::string name;  ///< `name:` or the file's stem
  std::string path;  ///< the file it was loaded from
  uint64_t seed = 1;
  std::string transport = "roce";  ///< roce | infiniband
  /// packet (every packet through queues, PFC, ECN) | flow (messages as max-min fair fluid
  /// flows, sim/flow: no queues, pauses, marks or drops; for fabrics too large for packets).
  std::string mode = "packet";
  TopologyConfig topology;
  LinkConfig link;
  SwitchConfig sw;  ///< the `switch:` section (`switch` is a C++ keyword)
  NicConfig nic;
  WorkloadConfig workload;
  RoutingConfig routing;
  EcnConfig ecn;
  /// `traffic:` explicit flows, run from time 0 (alone, or beside the workload's sweep).
  NcclConfig nccl;
  std::vector<TrafficFlow> traffic;
  /// `background:` Poisson background flows, added to `traffic` when the run is prepared.
  BackgroundConfig background;
  /// `training:` a training step, after the workload's sweep (or alone).
  TrainingConfig training;
  /// `jobs:` several jobs sharing the fabric, instead of `workload:` (jobs/job_params.hpp).
  std::vector<JobConfig> jobs;
  /// `perftest:` a perftest run between two hosts (alone, or after the workload's sweep).
  PerftestConfig perftest;
  /// `pcie:` the PCIe links inside a server (topology.gpu_interconnect: pcie).
  PcieConfig pcie;
  /// `server:` the server profile the server keys' defaults come from.
  ServerConfig server;
  bool has_workload = true;  ///< false when the scenario has traffic and no workload section
  PfcConfig pfc;
  DcqcnConfig dcqcn;
  /// `timely:` TIMELY's parameters (nic.congestion_control: timely).
  TimelyConfig timely;
  /// `hpcc:` HPCC's parameters (nic.congestion_control: hpcc).
  HpccConfig hpcc;
  InfinibandConfig infiniband;
  /// `flow:` the flow mode's settings (mode: flow).
  FlowModeConfig flow;
  /// Switch name -> its pfc and ecn settings (the top-level sections with that switch's keys
  /// applied over them); switches not listed use the top-level sections.
  std::map<std::string, SwitchOverride> switches;
  /// `cost_model:` path of a unit-price file (configs/cost_*.yaml), resolved against the
  /// scenario's folder; "" = no cost proxy.
  std::string cost_model;
  /// `measured.nccl_tests:` path of a real nccl-tests log of the same collective and rank count
  /// (resolved against the scenario's folder); run prints its busbw beside the simulated one.
  /// "" = none.
  std::string measured_nccl_tests;
  /// `measured.perftest:` path of a real perftest log of the perftest section's test (resolved
  /// against the scenario's folder); run prints its BW average (or t_typical) beside the
  /// simulated one. "" = none.
  std::string measured_perftest;
  /// Origin of every key given (dotted path -> where), so checks made after loading, such as
  /// "this oversubscription cannot be built", point where the value was written (key_error).
  std::map<std::string, KeyOrigin> origins;
  /// Keys given under another name: topology.k -> topology.fat-tree.k when a kind block set
  /// it, so key_error names what the user wrote.
  std::map<std::string, std::string> written_as;
  /// Settings that are valid but do nothing, or less than they say, under the scenario's other
  /// choices (a PFC threshold while PFC is off): each a line of config_warning(), printed once
  /// by the CLI; the run goes on (a sweep toggling pfc.enabled makes them on purpose).
  std::vector<std::string> warnings;
};

}  // namespace fabricsim
