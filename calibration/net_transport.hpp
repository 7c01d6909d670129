// Which network transport a measured nccl-tests log ran on, and whether fabricsim models it.
//
// fabricsim models two of NCCL's network transports: NET/IB (RDMA verbs, on InfiniBand and on
// RoCE; with or without GPUDirect RDMA) and NET/Socket (TCP, with its staging copies). A log
// from another transport (AWS EFA through the aws-ofi-nccl plugin, Google's GPUDirect-TCPX and
// -TCPXO, any other net plugin) can be read and printed, but a fit to it or a comparison with
// it says nothing about that transport: `fabricsim calibrate` does not fit it, and `fabricsim
// run` says so beside its comparison and in results.json `limits`.
#pragma once

#include <string>

#include "calibration/nccl_log.hpp"

namespace fabricsim {

/// Whether fabricsim models the network transport of a log.
enum class NetTransportSupport {
  kModelled,     ///< NET/IB (InfiniBand or RoCE) or NET/Socket
  kNotModelled,  ///< EFA / libfabric (aws-ofi-nccl), GPUDirect-TCPX(O), another net plugin
  kNone,         ///< every rank on one host: no inter-node transport carries data
  kUnknown,      ///< the log names no transport
};

/// "modelled", "not_modelled", "none", "unknown" (report.json and results.json values).
const char* to_string(NetTransportSupport s);

/// A log's network transport, with the line that shows it.
struct NetTransport {
  NetTransportSupport support = NetTransportSupport::kUnknown;
  /// What it is, in NCCL's and the vendors' terms: "NET/IB (RoCE)", "NET/Socket",
  /// "AWS EFA (SRD) through aws-ofi-nccl (libfabric)", "Google GPUDirect-TCPX", "none (every
  /// rank on host node01)"; empty when unknown.
  std::string name;
  int line = 0;          ///< 1-based line of the log that shows it; 0 when none does
  std::string evidence;  ///< that line as printed (launcher prefixes stripped)
};

/// Classifies `log`'s network transport from its own lines, in this order:
///  1. none: every rank on one host (NcclLog::nodes == 1, from a complete device list or the
///     "## nodes x GPUs: 1 x G" header). NCCL still prints a NET/Socket or "Using network"
///     line there (it initialises a network for the communicator), but no byte crosses it;
///  2. NCCL's own statement of the transport it chose, "NCCL INFO Using network X" (NVIDIA
///     NCCL src/init.cc: INFO(NCCL_INIT, "Using network %s", ncclNet->name)). X is "IB" or
///     "Socket" for NCCL's built-in transports (src/transport/net_ib.cc, net_socket.cc) and
///     the plugin's name otherwise: "AWS Libfabric", "Libfabric" or "OFI" for aws-ofi-nccl
///     (its ncclNetPlugin_v* .name; the provider from its "NET/OFI Selected Provider is efa"
///     line), "GPUDirectTCPX" for Google's nccl-plugin-gpudirecttcpx (its PRODUCT_NAME),
///     "FasTrak" for GPUDirect-TCPXO; "gIB" for Google's gIB plugin (RDMA verbs over the
///     ConnectX RoCE NICs of A3 Ultra and A4 VMs: taken as NET/IB over RoCE) and "IBext…" for
///     NVIDIA's nccl-rdma-sharp-plugins (HPC-X; its verbs transport, NCCL_IBEXT_DISABLE): both
///     taken as NET/IB;
///  3. without that line, the plugin's or transport's own INFO lines: "NET/OFI …" (aws-ofi-
///     nccl), "NET/GPUDirectTCPX …", "NET/FasTrak …", "NET/IB : Using [0]mlx5_0:1/RoCE …"
///     (src/transport/net_ib.cc), "NET/Socket : Using [0]eth0…" (net_socket.cc);
///  4. without any, the "## fabric:" line of the header fabricsim's collected logs carry
///     (tests/data/nccl/): EFA, aws-ofi-nccl, libfabric, TCPX or FasTrak -> not modelled;
///     InfiniBand or RoCE -> modelled;
///  5. else unknown.
NetTransport classify_net_transport(const NcclLog& log);

/// Why a log whose transport is not modelled is not fitted or is no prediction, as one line:
/// "its network transport, AWS EFA (SRD) …, is not modelled (line 32: `…`); fabricsim models
/// NET/IB (InfiniBand, RoCE) and NET/Socket". Empty unless t.support is kNotModelled.
std::string not_modelled_reason(const NetTransport& t);

}  // namespace fabricsim
