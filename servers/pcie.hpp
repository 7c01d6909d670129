// A PCIe link's data rate: what one direction of a PCIe link carries as payload of memory
// writes, after the physical layer's encoding, the data link layer's ACK and flow-control
// DLLPs, the SKP ordered sets and each write TLP's own header.
//
// Source: the PCIe bandwidth model of Neugebauer et al., "Understanding PCIe performance for
// end host networking", SIGCOMM'18 (github.com/pcie-bench/pcie-model, model/pcie.py), whose
// terms come from the PCI Express Base Specification 5.0:
//   - raw rate per lane: 2.5 / 5 / 8 / 16 / 32 GT/s (Gen1 … Gen5), 8b/10b encoding for Gen1
//     and Gen2, 128b/130b for Gen3 to Gen5;
//   - an ACK DLLP and a flow-control update DLLP (8 bytes each with framing) per "Ack limit"
//     bytes of TLP traffic, the spec's recommended rates (Base Spec 5.0 Tables 3-7 to 3-9 for
//     ACKs, 2-46 to 2-48 for flow-control updates; the two tables hold the same numbers for
//     x1 … x16), and a 4-byte SKP ordered set every 1538 symbols;
//   - a memory write TLP of MPS payload bytes carries 24 bytes more: 8 of framing, sequence
//     number and LCRC, 4 of TLP header and 12 of a 64-bit address write header (GPU memory
//     sits above 4 GiB).
// PCIe 6.0's FLIT mode (PAM4, 242b/256b, FEC) is not modelled: Gen1 … Gen5 only.
#pragma once

#include <array>
#include <cstdint>

namespace fabricsim {

/// The PCIe links inside a server (scenario `pcie:` section).
struct PcieConfig {
  int generation = 4;               ///< 1 … 5 (PCIe 1.0 … 5.0)
  int lanes = 16;                   ///< x1, x2, x4, x8 or x16
  int64_t max_payload_bytes = 256;  ///< MPS: 128, 256, 512, 1024, 2048 or 4096 bytes
};

namespace pcie_detail {

/// Bytes of TLP traffic per ACK DLLP (and per flow-control update DLLP), by [lanes index]
/// [MPS index]: x1, x2, x4, x8, x16 by 128 … 4096 B (PCIe Base Spec 5.0 Tables 3-7 to 3-9, as
/// the pcie-model transcribes them).
using AckTable = std::array<std::array<int, 6>, 5>;
inline constexpr AckTable kAckGen1{{{237, 416, 559, 1071, 2095, 4143},
                                    {128, 217, 289, 545, 1057, 2081},
                                    {73, 118, 154, 282, 538, 1050},
                                    {67, 107, 86, 150, 278, 534},
                                    {48, 72, 86, 150, 278, 534}}};
inline constexpr AckTable kAckGen2{{{288, 467, 610, 1122, 2146, 4194},
                                    {179, 268, 340, 596, 1108, 2132},
                                    {124, 169, 205, 333, 589, 1101},
                                    {118, 158, 137, 201, 329, 585},
                                    {99, 123, 137, 201, 329, 585}}};
inline constexpr AckTable kAckGen3to5{{{333, 512, 655, 1167, 2191, 4239},
                                       {224, 313, 385, 641, 1153, 2177},
                                       {169, 214, 250, 378, 634, 1146},
                                       {163, 203, 182, 246, 374, 630},
                                       {144, 168, 182, 246, 374, 630}}};
inline constexpr double kDllpBytes = 8;            ///< an ACK or flow-control DLLP with framing
inline constexpr double kSkipBytes = 4;            ///< a SKP ordered set …
inline constexpr double kSkipInterval = 1538;      ///< … every this many symbols
inline constexpr double kWriteOverheadBytes = 24;  ///< a 64-bit memory write TLP's overhead

/// log2(v / unit) when v is unit × a power of two up to unit × 2^(n-1), else -1.
inline int index_of(int64_t v, int64_t unit, int n) {
  for (int i = 0; i < n; ++i) {
    if (v == unit << i) return i;
  }
  return -1;
}

}  // namespace pcie_detail

/// True when `c` is a configuration the model has: generation 1 … 5, x1/x2/x4/x8/x16, MPS a
/// power of two from 128 to 4096 bytes.
inline bool pcie_config_valid(const PcieConfig& c) {
  return c.generation >= 1 && c.generation <= 5 && pcie_detail::index_of(c.lanes, 1, 5) >= 0 &&
         pcie_detail::index_of(c.max_payload_bytes, 128, 6) >= 0;
}

/// The link's rate after encoding, bits per second per direction: GT/s × lanes × 8/10 (Gen1,
/// Gen2) or 128/130 (Gen3 … Gen5). Gen4 x16: 252.06 Gb/s. Requires pcie_config_valid(c).
inline double pcie_raw_rate_bps(const PcieConfig& c) {
  static constexpr double kGts[] = {2.5e9, 5e9, 8e9, 16e9, 32e9};
  const double encoding = c.generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  return kGts[c.generation - 1] * encoding * c.lanes;
}

/// The rate left for TLPs after ACK and flow-control DLLPs at the spec's recommended rates and
/// the SKP ordered sets, bits per second per direction. Gen3 x8, MPS 256: 57.89 Gb/s of 63.02.
inline double pcie_tlp_rate_bps(const PcieConfig& c) {
  using namespace pcie_detail;
  const AckTable& t = c.generation == 1 ? kAckGen1 : c.generation == 2 ? kAckGen2 : kAckGen3to5;
  const double ack = t[index_of(c.lanes, 1, 5)][index_of(c.max_payload_bytes, 128, 6)];
  const double overhead = 2 * kDllpBytes / ack + kSkipBytes / kSkipInterval;
  return pcie_raw_rate_bps(c) * (1 - overhead);
}

/// Payload carried by a stream of MPS-sized memory writes (GPU peer-to-peer stores, a NIC's
/// DMA writes), bits per second per direction, rounded to the nearest bit per second: the TLP
/// rate × MPS / (MPS + 24). Gen4 x16, MPS 256: 207.9 Gb/s (25.99 GB/s).
inline int64_t pcie_write_data_rate_bps(const PcieConfig& c) {
  const double mps = static_cast<double>(c.max_payload_bytes);
  return static_cast<int64_t>(
      pcie_tlp_rate_bps(c) * mps / (mps + pcie_detail::kWriteOverheadBytes) + 0.5);
}

}  // namespace fabricsim
