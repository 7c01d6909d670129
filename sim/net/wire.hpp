// Bytes on the wire per packet: the header and framing overhead of each transport.
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim {

/// Per-packet overhead model. wire_bytes(payload) is what a port serializes (and what queues
/// and buffers count) for a packet carrying `payload` bytes of message data.
struct WireFormat {
  std::string transport;    ///< "roce" or "infiniband"
  int32_t header_bytes;     ///< protocol headers + trailers inside the frame
  int32_t framing_bytes;    ///< per-frame line overhead outside the frame (preamble, IFG)
  int32_t min_frame_bytes;  ///< frames shorter than this are padded (Ethernet: 64)

  int32_t ack_extra_bytes;  ///< ACK/NAK: the AETH (4 B) added to a header-only packet

  /// Bytes serialized on the link for one packet with `payload_bytes` of data.
  int64_t wire_bytes(int64_t payload_bytes) const {
    const int64_t frame = payload_bytes + header_bytes;
    return (frame < min_frame_bytes ? min_frame_bytes : frame) + framing_bytes;
  }
  /// Bytes serialized for an ACK or NAK (headers + AETH, no payload): RoCEv2 66 + 20 = 86,
  /// InfiniBand 30.
  int64_t ack_wire_bytes() const { return wire_bytes(ack_extra_bytes); }
};

/// RoCEv2 over Ethernet (IBTA RoCEv2 Annex A17; IEEE 802.3): Ethernet header 14 + IPv4 20 +
/// UDP 8 + BTH 12 + ICRC 4 + FCS 4 = 62 header bytes; preamble+SFD 8 + inter-frame gap 12 = 20
/// framing bytes; 64-byte minimum frame. No VLAN tag (DSCP-based PFC) and no RETH/AETH
/// extension headers are counted.
WireFormat roce_v2_wire();

/// InfiniBand (IBTA spec vol. 1, ch. 7): LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 header bytes,
/// no GRH (single subnet), no framing bytes beyond the line coding already inside the data rate.
WireFormat infiniband_wire();

/// The wire format for a scenario `transport:` value ("roce" | "infiniband").
/// Throws std::invalid_argument for anything else.
WireFormat wire_format_for(const std::string& transport);

}  // namespace fabricsim
