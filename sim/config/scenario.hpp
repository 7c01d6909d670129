// A scenario as typed, validated values: what `fabricsim run` simulates.
//
// Built only by load_scenario() (sim/config/loader.hpp), which checks every key against the
// schema below, so code downstream never sees a misspelt key, a missing unit or a value out of
// range. Units are in the names: _bps (bits per second), _ps (picoseconds), _bytes.
//
// YAML layout (scenarios/quickstart.yaml is the worked example):
//   name: quickstart            # optional, defaults to the file's stem
//   seed: 1                     # uint64; drives every RNG stream
//   transport: roce             # roce | infiniband (selects header overhead; flow control later)
//   topology: {kind, oversubscription, <keys of the kind>, failed_links, degraded_links,
//              link_bit_error_rates}
//   link:     {host_rate, fabric_rate, propagation_delay, nvlink_rate, bit_error_rate}
//   routing:  {algorithm, load_balancing}     # optional
//   cost_model: configs/cost_example.yaml      # optional
//   switch:   {latency, radix, buffer_model, buffer_per_port | shared_buffer, reserved_per_queue,
//              alpha, cut_through, scheduler, dwrr_weights, profile}
//   nic:      {mtu, traffic_class, ack_interval, rto, qp_rate_limit}
//   ecn:      {enabled, kmin, kmax, pmax, mark_at}   # optional
//   workload: {collective, algorithm, protocol, datatype, redop, minbytes, maxbytes, stepfactor}
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim {

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

  // rail-optimized: G-GPU servers, NIC r of each server to the rail-r leaf of its scalable unit
  // (NVIDIA DGX SuperPOD reference architecture), spines joining the leaves of all units.
  int gpus_per_server = 0;  ///< GPUs per server (NVLink/NVSwitch domain), >= 1
  int nics_per_server = 0;  ///< compute NICs per server; 0 = gpus_per_server
  int rails = 0;            ///< rails per plane (leaves per scalable unit); 0 = nics_per_server
  int servers_per_su = 0;   ///< servers per scalable unit, >= 1
  int scalable_units = 1;   ///< >= 1
  int planes = 1;           ///< independent copies of the rail fabric; NICs split across planes
  bool rail_only = false;   ///< no spines: cross-rail traffic goes through NVLink (PXN)

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
};

/// `routing:` section (optional).
struct RoutingConfig {
  /// auto | ecmp | up_down | dimension_order. auto = up_down on Clos fabrics (spine-leaf,
  /// fat-tree, rail-optimized), dimension_order on tori.
  std::string algorithm = "auto";
  std::string load_balancing = "per_flow";  ///< per_flow (ECMP hash) | per_packet (spraying)
};

/// `link:` section.
struct LinkConfig {
  int64_t host_rate_bps = 0;         ///< host NIC <-> leaf link rate, e.g. "400Gbps"
  int64_t fabric_rate_bps = 0;       ///< leaf <-> spine link rate; defaults to host_rate
  int64_t propagation_delay_ps = 0;  ///< per link, one way, e.g. "500ns" (~100 m of fibre)
  int64_t nvlink_rate_bps = 0;       ///< rail-optimized: GPU <-> NVSwitch, per direction
  /// Bit error rate of every network link (0 = error-free; IEEE 802.3 400GBASE links are
  /// specified at a post-FEC BER below 1e-13). NVLinks are error-free. 0 … 1e-3.
  double bit_error_rate = 0.0;
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

/// `nic:` section.
struct NicConfig {
  /// RDMA path MTU: payload bytes per packet (256 … 4096 for RoCE/IB). The loader accepts
  /// 64B … 65536B.
  int64_t mtu_bytes = 4096;
  /// Traffic class (IEEE 802.1p priority) of RDMA data and its ACKs, 0 … 7. 3 is the common
  /// RoCE deployment choice (NVIDIA's RoCE configuration guides).
  int traffic_class = 3;
  /// The receiver acknowledges every ack_interval-th in-order packet, and always the last
  /// packet of a message; >= 1.
  int ack_interval = 1;
  /// Retransmission timeout of a queue pair: with unacknowledged packets and no ACK progress
  /// for this long the sender goes back to the oldest unacknowledged packet. Default
  /// 4.096 us x 2^14 = 67.108864 ms (IB local ACK timeout exponent 14, perftest's default).
  int64_t rto_ps = 67'108'864'000;
  /// Per-QP rate limit (what congestion control adjusts); 0 = the port's line rate.
  int64_t qp_rate_limit_bps = 0;
};

/// `ecn:` section (optional): RED-style ECN marking on every switch egress queue, after
/// DCQCN (Zhu et al., SIGCOMM 2015, §3.1 and §5): a data packet is marked CE with probability 0
/// while the queue holds at most kmin bytes, pmax x (q - kmin) / (kmax - kmin) between, and 1 at
/// kmax or more, q being the instantaneous queue (bytes of the packets ahead of it).
struct EcnConfig {
  bool enabled = false;
  int64_t kmin_bytes = 5'000;       ///< DCQCN paper: Kmin = 5 KB
  int64_t kmax_bytes = 200'000;     ///< DCQCN paper: Kmax = 200 KB
  double pmax = 0.01;               ///< DCQCN paper: Pmax = 1 %
  std::string mark_at = "enqueue";  ///< enqueue (on arrival) | dequeue (when it starts to leave)
};

/// `workload:` section: an nccl-tests style size sweep of one collective.
struct WorkloadConfig {
  std::string collective = "all_reduce";  ///< nccl-tests name; all_reduce so far
  std::string algorithm = "ring";         ///< auto | ring (tree, halving_doubling later)
  std::string protocol = "simple";        ///< auto | ll | ll128 | simple (only simple modelled)
  std::string datatype = "float";         ///< nccl-tests type names: float, half, double, int8 …
  std::string redop = "sum";              ///< sum | prod | min | max | avg
  int64_t minbytes = 0;                   ///< first size of the sweep, bytes (-b); 1B … maxbytes
  int64_t maxbytes = 0;                   ///< last size of the sweep, bytes (-e); at most 64GiB
  int64_t stepfactor = 2;                 ///< multiplicative step between sizes (-f); >= 2
};

/// Where a key's value came from: the file position of its value, or the --set that gave it.
struct KeyOrigin {
  std::string where;  ///< the file, or "--set KEY=VALUE"
  int line = 0;       ///< 1-based; 0 for an override
  int column = 0;
};

struct Scenario {
  std::string name;  ///< `name:` or the file's stem
  std::string path;  ///< the file it was loaded from
  uint64_t seed = 1;
  std::string transport = "roce";  ///< roce | infiniband
  TopologyConfig topology;
  LinkConfig link;
  SwitchConfig sw;  ///< the `switch:` section (`switch` is a C++ keyword)
  NicConfig nic;
  WorkloadConfig workload;
  RoutingConfig routing;
  EcnConfig ecn;
  /// `cost_model:` path of a unit-price file (configs/cost_*.yaml), resolved against the
  /// scenario's folder; "" = no cost proxy.
  std::string cost_model;
  /// Origin of every key given (dotted path -> where), so checks made after loading, such as
  /// "this oversubscription cannot be built", point where the value was written (key_error).
  std::map<std::string, KeyOrigin> origins;
};

/// Bytes per element of an nccl-tests datatype name; 0 if unknown.
int datatype_bytes(const std::string& datatype);

}  // namespace fabricsim
