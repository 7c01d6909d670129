// The NIC's own scenario keys (sim/config/params_link_nic.cpp: nic.message_rate, nic.pcie_rate,
// nic.tx_latency, nic.rx_latency) fitted from perftest logs, each with the rows it came from, or
// the reason it could not be. The model's terms (sim/net/nic_transport.cpp):
//   - nic.message_rate: the NIC starts at most this many messages a second over all its QPs,
//     so a BW sweep's message-bound sizes run at MsgRate = message_rate;
//   - nic.pcie_rate: the receiving NIC writes each packet's payload over PCIe in turn, so below
//     the port's data rate the payload bandwidth plateaus at pcie_rate;
//   - nic.tx_latency, nic.rx_latency: a one-way message costs tx + what the model computes for
//     the wire, the propagation and the switches + rx (calibration/simulated/nic_latency.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "calibration/calibrate.hpp"
#include "calibration/perftest.hpp"

namespace fabricsim {

/// One NIC key fitted from one log, or why it was not.
struct NicKeyFit {
  std::string key;   ///< e.g. "nic.message_rate"
  std::string path;  ///< the log
  bool fitted = false;
  double value = 0;    ///< in `unit`
  std::string unit;    ///< "messages/s", "Gb/s", "ns"
  std::string yaml;    ///< the scenario value, e.g. "4.587e6", "80970000000bps", "410000ps"
  std::string rows;    ///< the rows it came from, in the field's terms
  std::string reason;  ///< why it was not fitted ("" when fitted)
};

/// nic.message_rate from a perftest BW sweep: the mean MsgRate (10^6 messages/s; per direction
/// for a bidirectional run) of the message-bound rows, those whose BW average is at most a
/// quarter of the log's top one (the link at most a quarter busy: the NIC's starts, not the
/// wire, set the pace). At least 3 such rows, else not fitted. The rate is one perftest
/// process's over the log's QPs (-q): the model's nic.message_rate is the NIC's over all of them.
NicKeyFit fit_message_rate(const PerftestLog& log);

/// The fraction of the port's payload rate below which a plateau is the host's, not the wire's:
/// a plateau within 5 % of the wire is the link (perftest's own runs on host memory reach
/// 95-99 % of it: 52.5 of the CX-6 Dx log's 52.5, 98.4 Gb/s on 100G in the t9k log's header).
constexpr double kPcieBelowWire = 0.95;

/// nic.pcie_rate from a perftest BW sweep: its plateau β (the bandwidth-bound regime's payload
/// rate, fit.bandwidth_Gbps) when it is below kPcieBelowWire × the port's payload rate
/// (`port_Gbps` × MTU / wire bytes of an MTU packet, the log's transport headers). Not fitted
/// when the sweep does not reach its plateau, the port's rate is unknown (`port_Gbps` none) or
/// the plateau is at the wire rate. `port_source` says where port_Gbps came from.
NicKeyFit fit_pcie_rate(const PerftestLog& log, const PerftestBwFit& fit,
                        std::optional<double> port_Gbps, const std::string& port_source);

}  // namespace fabricsim
