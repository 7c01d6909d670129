// The `hpcc:` section's parameters (HpccConfig): HPCC's constants, one scenario's worth. Kept
// apart from the algorithm (hpcc.hpp) so that the scenario can hold them without the congestion
// library.
#pragma once

#include <cstdint>

namespace fabricsim {

/// `hpcc:` section (optional; nic.congestion_control: hpcc): HPCC, the INT-based congestion
/// control of Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019 (Algorithm 1;
/// symbols in brackets). The defaults are the settings the HPCC authors ran their simulations
/// with (alibaba-edu/High-Precision-Congestion-Control, simulation/run.py and the config it
/// writes: U_TARGET 0.95, MI_THRESH 0, FAST_REACT 1, HAS_WIN 1, VAR_WIN 1, RATE_AI
/// 10 x bw / 25 Mb/s, MIN_RATE 1000 Mb/s), which the authors' project page confirms for maxStage
/// ("maxStage = 0, the same as the simulation setting in our paper; the maxStage = 5 in the paper
/// is due to a typo"; liyuliang001.github.io/projects/hpcc).
struct HpccConfig {
  /// Target utilization [eta]: the paper's 95 % (§3.3; run.py --utgt 95).
  double eta = 0.95;
  /// Additive increase stages before a multiplicative update is forced [maxStage]; 0 = every
  /// update is multiplicative (Wc / (U / eta) + W_AI), the authors' simulation setting.
  int max_stage = 0;
  /// Additive increase per update, as a rate [W_AI / T], bits/s; 0 = scaled to the QP's line
  /// rate as the authors' run.py does (10 x bw / 25 Mb/s: 40 Mb/s at 100 Gb/s, 1 / 2,500 of the
  /// line rate).
  int64_t rate_ai_bps = 0;
  /// Floor of the rate; run.py's config: MIN_RATE 1000Mb/s.
  int64_t min_rate_bps = 1'000'000'000;
  /// React to every ACK between the once-per-RTT updates, without moving the reference window
  /// Wc (Algorithm 1's NewAck with updateWc false; run.py: FAST_REACT 1).
  bool fast_react = true;
  /// Limit the bytes in flight to the window W = rate x T (run.py: HAS_WIN 1, VAR_WIN 1); false:
  /// pace at W / T only.
  bool window = true;
  /// [T], the base RTT that converts the window to a rate and normalizes queue lengths,
  /// picoseconds; 0 = each queue pair's own idle round trip (a full data packet out, its ACK
  /// back, on the QP's path). The authors' ns-3 uses one T for all (GLOBAL_T 1: the fabric's
  /// largest), which this key sets.
  int64_t base_rtt_ps = 0;
  /// Bytes the INT header adds to each data packet and each ACK: the authors' ns-3 IntHeader,
  /// 5 hops x 8 bytes + 2 bytes (int-header.h; about 4 % of a 1 KB packet, the overhead the
  /// authors' results page attributes to HPCC-INT). 0 = not counted.
  int int_header_bytes = 42;
};

}  // namespace fabricsim
