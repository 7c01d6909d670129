// Priority flow control (IEEE 802.1Qbb-2011): per ingress port and priority thresholds, the
// headroom that makes a priority lossless, and pause times in quanta. sim/net keeps the state
// (bytes per ingress port and priority, XOFF sent, pause timers) and asks these functions.
//
// Model:
//  - A switch counts, per ingress port and lossless priority, the wire bytes of the frames that
//    came in on that port and are still in its buffer (queued or being sent on).
//  - XOFF: when that count reaches the threshold (static bytes, or dynamic: alpha x the free
//    shared buffer, as shared-buffer ASICs set their ingress priority-group limits), the switch
//    sends the upstream port a PFC frame pausing the priority for `pause_quanta` quanta
//    (1 quantum = 512 bit times at the link's rate; at most 65535) and sends it again before it
//    expires while the count stays above XON.
//  - XON: when the count falls to XON = threshold - xon_offset, a PFC frame with 0 quanta
//    resumes the priority.
//  - Frames that arrive after XOFF use the headroom; a lossless frame is refused only if the
//    count would exceed threshold + headroom (a headroom overflow: the headroom was sized too
//    small). Egress limits never drop a lossless frame.
#pragma once

#include <cstdint>

namespace fabricsim {

/// PFC frame on the wire: a 64-byte MAC control frame (opcode 0x0101) plus 8 bytes of preamble
/// and SFD and a 12-byte inter-frame gap.
inline constexpr int64_t kPfcFrameWireBytes = 64 + 20;
/// Bits in one pause quantum (IEEE 802.3 clause 31B, 802.1Qbb).
inline constexpr int64_t kPauseQuantumBits = 512;
inline constexpr int kMaxPauseQuanta = 65535;

/// Time `quanta` pause quanta last on a link of `rate_bps`, ps (rounded up: a sender may not
/// resume early).
inline int64_t pause_time_ps(int64_t quanta, int64_t rate_bps) {
  const __int128 bits = static_cast<__int128>(quanta) * kPauseQuantumBits;
  return static_cast<int64_t>((bits * 1'000'000'000'000 + rate_bps - 1) / rate_bps);
}

/// Upper bound of the PFC response delay, ps: the time a port may take, after a PFC frame has
/// arrived, to stop starting frames of that priority. IEEE 802.3 Annex 31D (Table 31D-1, in
/// pause quanta): 60 at 10 Gb/s, 80 at 25 Gb/s, 118 at 40 Gb/s, 394 at 100 Gb/s, 905 at
/// 400 Gb/s; a rate between listed ones uses the quanta of the next lower listed rate, a rate
/// above 400 Gb/s those of 400 Gb/s.
inline int64_t pfc_response_bound_ps(int64_t rate_bps) {
  const int64_t quanta = rate_bps >= 400'000'000'000   ? 905
                         : rate_bps >= 100'000'000'000 ? 394
                         : rate_bps >= 40'000'000'000  ? 118
                         : rate_bps >= 25'000'000'000  ? 80
                                                       : 60;
  return pause_time_ps(quanta, rate_bps);
}

/// Inputs of the headroom formula for one ingress port.
struct HeadroomInputs {
  int64_t rate_bps = 0;           ///< link rate
  int64_t propagation_ps = 0;     ///< one-way propagation delay of the link (cable length)
  int64_t mtu_frame_bytes = 0;    ///< largest frame on the wire (MTU payload + headers)
  int64_t switch_latency_ps = 0;  ///< the switch's forwarding latency (frames not yet counted)
  int64_t response_ps = 0;        ///< the upstream port's PFC response delay
  /// The switch counts every frame of this port from its first bit (cut-through towards
  /// egresses no faster than this port; a switch with a faster egress stores some frames).
  bool cut_through = false;
};

/// Headroom per ingress port and priority, bytes: what can still arrive after the count
/// crosses XOFF, in the worst case. The terms are those of IEEE 802.1Qbb-2011 Annex N
/// ("Buffer requirements") and Cisco's "Priority Flow Control: Build Reliable Layer 2
/// Infrastructure" (white paper c11-542809): one maximum frame the switch is sending when it
/// decides to pause (the PFC frame cannot preempt it), the PFC frame itself, the cable twice
/// (the PFC frame travels up, the last frames travel down), the sender's response delay and one
/// maximum frame the sender has started; plus, in this model, the bytes in the switch's
/// forwarding pipeline (counted only `switch.latency` after arrival) and, for a
/// store-and-forward switch, the frame being received (counted at its last bit):
///   headroom = rate x (2 x propagation + switch_latency + response) / 8
///              + (cut_through ? 2 : 3) x mtu_frame + PFC frame
/// (PHY/MAC interface delays of 802.3 are not modelled: links here have none.)
inline int64_t pfc_headroom_bytes(const HeadroomInputs& in) {
  const __int128 ps =
      2 * static_cast<__int128>(in.propagation_ps) + in.switch_latency_ps + in.response_ps;
  const __int128 wire_bits = ps * in.rate_bps;
  const int64_t wire_bytes =
      static_cast<int64_t>((wire_bits + 8'000'000'000'000 - 1) / 8'000'000'000'000);
  return wire_bytes + (in.cut_through ? 2 : 3) * in.mtu_frame_bytes + kPfcFrameWireBytes;
}

/// PFC settings of one switch (the scenario's `pfc:` section, or its `switches:` override).
struct PfcSwitchSettings {
  bool enabled = false;
  uint8_t lossless_mask = 0;  ///< bit p: priority p is lossless
  bool dynamic = false;       ///< dynamic thresholds (alpha x free shared buffer)
  int64_t xoff_bytes = 0;     ///< static threshold; 0 = derived (buffer share - headroom)
  double alpha = 1.0;         ///< dynamic
  int64_t xon_offset_bytes = 0;
  int64_t headroom_bytes = 0;  ///< 0 = pfc_headroom_bytes()
  int64_t response_ps = -1;    ///< -1 = pfc_response_bound_ps() of the link
  int pause_quanta = kMaxPauseQuanta;
};

}  // namespace fabricsim
