#include "sim/net/wire.hpp"

#include <stdexcept>

namespace fabricsim {

WireFormat roce_v2_wire() {
  constexpr int32_t kEthernet = 14, kIpv4 = 20, kUdp = 8, kBth = 12, kIcrc = 4, kFcs = 4;
  constexpr int32_t kPreambleSfd = 8, kInterFrameGap = 12, kAeth = 4;
  return WireFormat{"roce", kEthernet + kIpv4 + kUdp + kBth + kIcrc + kFcs,
                    kPreambleSfd + kInterFrameGap, 64, kAeth};
}

WireFormat infiniband_wire() {
  constexpr int32_t kLrh = 8, kBth = 12, kIcrc = 4, kVcrc = 2, kAeth = 4;
  return WireFormat{"infiniband", kLrh + kBth + kIcrc + kVcrc, 0, 0, kAeth};
}

WireFormat wire_format_for(const std::string& transport) {
  if (transport == "roce") return roce_v2_wire();
  if (transport == "infiniband") return infiniband_wire();
  throw std::invalid_argument("unknown transport '" + transport +
                              "' (expected roce or infiniband)");
}

}  // namespace fabricsim
