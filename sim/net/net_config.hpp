// The network's device parameters (NetConfig), built from a scenario, and its bad-input error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "congestion/buffer_mmu.hpp"
#include "congestion/dcqcn.hpp"
#include "congestion/ecn.hpp"
#include "congestion/pfc.hpp"
#include "congestion/qp_congestion.hpp"
#include "sim/config/scenario.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/wire.hpp"

namespace fabricsim {

/// Parameters of the devices, from the scenario's `switch:`, `nic:` and `link:` sections.
struct NetConfig {
  WireFormat wire;
  int64_t mtu_bytes = 4096;  ///< payload bytes per packet
  int64_t switch_latency_ps = 0;
  bool cut_through = false;
  BufferModel buffer_model = BufferModel::kStatic;
  int64_t buffer_per_port_bytes = 0;
  int64_t shared_buffer_bytes = 0;
  int64_t reserved_per_queue_bytes = 0;
  double alpha = 1.0;
  /// The egress scheduler at every port: a name in the scheduler registry
  /// (schedulers/registry.hpp: strict, dwrr, or one registered from outside).
  std::string scheduler = "strict";
  std::array<int, kTrafficClasses> dwrr_weights{1, 1, 1, 1, 1, 1, 1, 1};
  int traffic_class = 3;  ///< of data and ACKs
  int ack_interval = 1;
  /// nic.loss_recovery selective_repeat (else go-back-N) and its nic.reorder_threshold.
  bool selective_repeat = false;
  int reorder_threshold = 0;
  int64_t rto_ps = NicConfig{}.rto_ps;
  int64_t qp_rate_limit_bps = 0;  ///< 0 = line rate
  /// The NIC starts a message at most every message_interval_ps (1 / nic.message_rate; 0 = no
  /// limit); its first byte leaves tx_latency_ps after it started; the receiver completes it
  /// rx_latency_ps after its last packet came in (nic.tx_latency, nic.rx_latency).
  int64_t message_interval_ps = 0;
  int64_t tx_latency_ps = 0;
  int64_t rx_latency_ps = 0;
  /// A payload not sent inline is DMA-read from host memory first: dma_read_latency_ps (one
  /// PCIe round trip), then its first packet's payload at pcie_rate_bps; the receiver writes
  /// each packet's payload over PCIe at pcie_rate_bps, one after another (below the port's
  /// data rate that caps what it receives), the last one before the completion. 0 = none.
  int64_t dma_read_latency_ps = 0;
  int64_t pcie_rate_bps = 0;
  int retry_count = 7;  ///< consecutive timeouts before a QP fails (NCCL_IB_RETRY_CNT)
  uint64_t seed = 1;    ///< ECMP salts and bit errors come from streams of this seed
  bool per_packet_spraying = false;
  /// How switches pick among equal-cost ports (loadbalance/load_balancer.hpp).
  LbSettings lb;
  bool ecn = false;             ///< RED ECN marking at switch egress queues
  RedEcn red;                   ///< its thresholds
  bool ecn_at_dequeue = false;  ///< mark when a packet starts to leave (else on arrival)
  /// PFC (RoCE) at every switch, and per-switch overrides by switch name.
  PfcSwitchSettings pfc;
  std::map<std::string, PfcSwitchSettings> pfc_overrides;
  /// ECN per switch where it differs from the fabric-wide `ecn`/`red`/`ecn_at_dequeue`.
  struct EcnOverride {
    bool enabled = false;
    RedEcn red;
    bool at_dequeue = false;
  };
  std::map<std::string, EcnOverride> ecn_overrides;
  /// PFC watchdog (switch egress queues).
  bool pfc_watchdog = false;
  bool watchdog_drop = true;  ///< action drop (else forward)
  int64_t watchdog_detection_ps = PfcConfig{}.watchdog_detection_time_ps;
  int64_t watchdog_restoration_ps = PfcConfig{}.watchdog_restoration_time_ps;
  /// InfiniBand credit-based flow control per VL (= traffic class): input buffer per port and
  /// VL, bytes (credits of 64 bytes). 0 = off.
  bool credits = false;
  int64_t vl_buffer_bytes = 0;
  /// Deadlock detector period while a queue is paused or starved of credits.
  int64_t deadlock_check_ps = PfcConfig{}.deadlock_check_interval_ps;
  /// Torus dateline (Dally & Seitz, "Deadlock-free message routing in multiprocessor
  /// interconnection networks", IEEE ToC 1987): a packet crossing a wraparound link moves to
  /// this traffic class for the rest of the dimension, breaking the ring's cyclic buffer
  /// dependency; -1 = off.
  int dateline_class = -1;
  /// Clos: a packet sent up again after coming down moves to this class (-1 = off).
  int bounce_class = -1;
  /// The congestion control of every QP (nic.congestion_control): none, DCQCN (RoCE with ECN;
  /// its parameters from `dcqcn:`) or a registered one (congestion/cc_registry.hpp).
  CcChoice cc;
  /// flows.csv bound: delivered messages beyond this many are counted, not recorded (a
  /// 1024-GPU ring makes millions per size; a record is 56 B).
  size_t max_flow_records = 1'000'000;
};

/// A device setting that cannot work on this fabric (a PFC threshold below its XON offset, a
/// VL buffer below one frame, …), found while building the Network: bad input. `key` is the
/// scenario key to blame ("pfc.xoff", "ecn.kmin", "switch.buffer_per_port", …) at switch
/// `switch_name` (its `switches:` override if it has one).
struct DeviceConfigError : std::invalid_argument {
  DeviceConfigError(std::string switch_name_, std::string key_, const std::string& message)
      : std::invalid_argument(message),
        switch_name(std::move(switch_name_)),
        key(std::move(key_)) {}
  std::string switch_name;
  std::string key;
};

/// The lossless priorities of a `pfc:` section as a bit mask (bit p = priority p): its
/// `priorities`, or `traffic_class` (nic.traffic_class) when none are listed.
inline uint8_t pfc_lossless_mask(const PfcConfig& pfc, int traffic_class) {
  uint8_t mask = 0;
  for (int p : pfc.priorities) mask |= static_cast<uint8_t>(1u << p);
  return pfc.priorities.empty() ? static_cast<uint8_t>(1u << traffic_class) : mask;
}

/// The device parameters of a scenario. Throws std::invalid_argument for an unknown transport
/// or congestion control (the loader has already rejected both).
NetConfig net_config_for(const Scenario& scenario);

/// The name of the congestion control net_config_for(sc) selects: nic.congestion_control, with
/// auto (and dcqcn off RoCE) resolved to "dcqcn" when dcqcn.enabled on RoCE, else "none".
std::string congestion_control_in_effect(const Scenario& sc);

}  // namespace fabricsim
