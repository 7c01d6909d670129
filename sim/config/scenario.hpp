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
//   topology: {kind, leaves, spines, hosts_per_leaf, oversubscription}
//   link:     {host_rate, fabric_rate, propagation_delay}
//   switch:   {latency, buffer_per_port}
//   nic:      {mtu}
//   workload: {collective, algorithm, protocol, datatype, redop, minbytes, maxbytes, stepfactor}
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim {

/// `topology:` section. Only `kind: spine-leaf` is built so far (fat-tree, rail-optimized and
/// torus come with the topology issue; the loader names them as not yet available).
struct TopologyConfig {
  std::string kind = "spine-leaf";
  int leaves = 0;          ///< leaf (top-of-rack) switches, >= 1
  int spines = 0;          ///< spine switches, >= 1
  int hosts_per_leaf = 0;  ///< hosts (one GPU + one NIC each) under each leaf, >= 1
  /// Oversubscription o of o:1 at the leaf: host-facing capacity / uplink capacity. Written
  /// as a number (3) or a ratio string ("3:1"). Must be >= 1.
  double oversubscription = 1.0;
};

/// `link:` section.
struct LinkConfig {
  int64_t host_rate_bps = 0;         ///< host NIC <-> leaf link rate, e.g. "400Gbps"
  int64_t fabric_rate_bps = 0;       ///< leaf <-> spine link rate; defaults to host_rate
  int64_t propagation_delay_ps = 0;  ///< per link, one way, e.g. "500ns" (~100 m of fibre)
};

/// `switch:` section (every switch of the fabric).
struct SwitchConfig {
  int64_t latency_ps = 0;             ///< forwarding latency from full reception to egress enqueue
  int64_t buffer_per_port_bytes = 0;  ///< static egress buffer per port; tail drop beyond it
};

/// `nic:` section.
struct NicConfig {
  /// RDMA path MTU: payload bytes per packet (256 … 4096 for RoCE/IB). The loader accepts
  /// 64B … 65536B.
  int64_t mtu_bytes = 4096;
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
};

/// Bytes per element of an nccl-tests datatype name; 0 if unknown.
int datatype_bytes(const std::string& datatype);

}  // namespace fabricsim
