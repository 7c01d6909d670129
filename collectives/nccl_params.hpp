// The `nccl:` section's settings: NCCL's environment variables as a scenario gives them. The
// collectives own them (nccl_env.hpp applies the environment over them, nccl_setup.hpp reads
// them); sim/config/scenario.hpp composes them into Scenario::nccl, and the table of their keys
// is sim/config/params_workload.cpp's.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace fabricsim {

/// `nccl:` section: NCCL's environment variables, under their names without NCCL_ and in
/// lower case. The same NCCL_* variables in fabricsim's environment override these (as NCCL
/// reads them at init), and --set overrides both. algo, proto, net_gdr_level and net take
/// NCCL's own syntax; sizes and times take units, booleans true/false.
struct NcclConfig {
  std::string algo;               ///< NCCL_ALGO: "" = every algorithm; "Ring", "Tree", "^Tree" …
  std::string proto;              ///< NCCL_PROTO: "" = every protocol; "Simple", "^LL128" …
  int64_t buffsize_bytes = 0;     ///< NCCL_BUFFSIZE (Simple's buffer); 0 = NCCL's 4 MiB
  int min_nchannels = 0;          ///< NCCL_MIN_NCHANNELS; 0 = unset
  int max_nchannels = 0;          ///< NCCL_MAX_NCHANNELS; 0 = unset
  std::string net_gdr_level;      ///< NCCL_NET_GDR_LEVEL: LOC, PIX, PXB, PHB, SYS; "" = NCCL's
  bool ib_disable = false;        ///< NCCL_IB_DISABLE: true = NCCL's socket transport
  std::string net;                ///< NCCL_NET: "" = IB when there is one, "IB", "Socket"
  int64_t ll_buffsize_bytes = 0;  ///< NCCL_LL_BUFFSIZE (environment only); 0 = NCCL's
  int64_t ll128_buffsize_bytes = 0;  ///< NCCL_LL128_BUFFSIZE (environment only); 0 = NCCL's
  int64_t step_latency_ps = -1;      ///< per-step software latency; -1 = NCCL's constants
  int64_t launch_latency_ps = -1;    ///< per-collective latency; -1 = NCCL's constants
  /// NCCL_NVLS_ENABLE (src/transport/nvls.cc, default 2): 0 off, 1 on without the driver's
  /// multicast query, 2 on where supported.
  int nvls_enable = 2;
  /// NCCL_COLLNET_ENABLE (src/init.cc, default 0): 1 = CollNet (SHARP in-network reduction,
  /// through the nccl-rdma-sharp-plugins) where the fabric has it: InfiniBand switches.
  int collnet_enable = 0;
  /// The GPUs' compute capability, major × 10 + minor (70 V100, 80 A100, 90 H100/H200, 100
  /// B200): what NCCL's tuning tables and NVLS (>= 90) depend on (NCCL reads it from the device,
  /// cudaDevAttrComputeCapabilityMajor/Minor).
  int compute_capability = 90;
  /// nccl.version: the NCCL release whose tuning tables the cost model uses ("2.20", "2.26.6");
  /// "" = the newest modelled (collectives/nccl_versions/nccl_tuning.hpp).
  std::string version;
  /// The version was read from the measured log's "NCCL version" line (measured.nccl_tests), not
  /// written in the scenario: a version no table covers takes the nearest, with a note.
  bool version_from_log = false;
  /// Keys whose value came from the environment: key -> "NCCL_ALGO=Tree".
  std::map<std::string, std::string> from_env;
};

}  // namespace fabricsim
