// The `pcie:` section (PcieConfig, servers/pcie.hpp): the PCIe links inside a server, used when
// topology.gpu_interconnect is pcie (GPUs peer-to-peer through a PCIe switch, no NVLink).
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

constexpr auto kPcie = &Scenario::pcie;
using P = PcieConfig;

// MPS: the PCIe spec's six values (Device Control register, Max_Payload_Size).
const QuantitySpec kMaxPayload{"size", "256B", parse_size_bytes,
                               128,    4096,   "a size from 128B to 4096B"};

}  // namespace

// clang-format off
std::span<const Field> pcie_params() {
  static const Field rows[] = {
  {"pcie", "generation", false, Int(1, 5), at<kPcie, &P::generation>,
   "with topology.gpu_interconnect pcie: the generation of the GPUs' links, 1 … 5 (2.5 … 32 GT/s a lane)"},
  {"pcie", "lanes", false, Int(1, 16), at<kPcie, &P::lanes>,
   "with topology.gpu_interconnect pcie: lanes per GPU link, 1, 2, 4, 8 or 16"},
  {"pcie", "max_payload", false, Quantity(kMaxPayload), at<kPcie, &P::max_payload_bytes>,
   "with topology.gpu_interconnect pcie: the Max_Payload_Size (MPS) negotiated, 128B … 4096B, a power of two"},
  };
  return rows;
}
// clang-format on

void check_pcie(const Context& main, const std::map<std::string, Value>& found, Scenario& s) {
  const auto lanes = found.find("pcie.lanes");
  if (lanes != found.end() && pcie_detail::index_of(s.pcie.lanes, 1, 5) < 0) {
    lanes->second.fail("expected 1, 2, 4, 8 or 16 lanes, got " + std::to_string(s.pcie.lanes));
  }
  const auto mps = found.find("pcie.max_payload");
  if (mps != found.end() && pcie_detail::index_of(s.pcie.max_payload_bytes, 128, 6) < 0) {
    mps->second.fail("expected 128B, 256B, 512B, 1024B, 2048B or 4096B (a power of two), got " +
                     std::to_string(s.pcie.max_payload_bytes) + "B");
  }
  // Keys of the other interconnect are said, not refused, so one scenario can be swept over
  // both (--vary topology.gpu_interconnect=nvswitch,pcie).
  const auto section = found.find("pcie");
  if (section != found.end() && s.topology.gpu_interconnect != "pcie") {
    s.warnings.push_back(config_warning(
        section->second.origin(), section->second.path(),
        "not used: the pcie section sets the PCIe links between a server's GPUs, which "
        "topology.gpu_interconnect " +
            s.topology.gpu_interconnect + " does not have"));
  }
  if (s.topology.gpu_interconnect == "pcie") {
    for (const char* key : {"link.nvlink_rate", "link.nvlink_efficiency"}) {
      // A server profile's NVLink keys are defaults the scenario's own choice of PCIe leaves out.
      if (const auto it = found.find(key); it != found.end() && &it->second.context() == &main) {
        s.warnings.push_back(
            config_warning(it->second.origin(), it->second.path(),
                           "not used: the servers' GPUs reach each other over PCIe "
                           "(topology.gpu_interconnect: pcie), which has no NVLink"));
      }
    }
  }
}

}  // namespace fabricsim::config_detail
