// The flow bit that marks a loopback through the host's NIC (the SHARP aggregation path).
#pragma once

#include <cstdint>

namespace fabricsim {

/// Set in a flow id whose message goes from a host to itself: with it, the message leaves by one
/// of the host's NIC ports, turns at the first switch (the switch's route to the host leads back
/// down) and is received by the host; its ACKs take the same way. Without it, a message from a
/// host to itself is an NVLink loopback (up to the server's NVSwitch and back). Models the data
/// path of in-network reduction (InfiniBand SHARP, NCCL's CollNet): every byte a head GPU gives
/// the aggregation tree goes up its NIC link, and the reduced result comes back down it. The
/// other bits of the flow id keep their meaning (the connection; its NIC choice among the host's
/// NIC ports: the low bits modulo the number of ports).
inline constexpr uint32_t kNicLoopFlowBit = uint32_t{1} << 30;

}  // namespace fabricsim
