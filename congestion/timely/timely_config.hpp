// The `timely:` section's parameters (TimelyConfig): TIMELY's constants, one scenario's worth.
// Kept apart from the algorithm (timely.hpp) so that the scenario can hold them without the
// congestion library.
#pragma once

#include <cstdint>

namespace fabricsim {

/// `timely:` section (optional; nic.congestion_control: timely): TIMELY, the RTT-gradient
/// congestion control of Mittal et al., "TIMELY: RTT-based Congestion Control for the
/// Datacenter", SIGCOMM 2015 (Algorithm 1; symbols in brackets). The defaults are the values the
/// HPCC authors' ns-3 simulator runs TIMELY with for the HPCC paper's comparison (Li et al.,
/// SIGCOMM 2019; alibaba-edu/High-Precision-Congestion-Control, rdma-hw.cc attributes TimelyAlpha,
/// TimelyBeta, TimelyTLow, TimelyTHigh, TimelyMinRtt, and HAI after 5 increases), and the
/// TIMELY authors' published code snippet (people.csail.mit.edu/ghobadi/code/timely.cc:
/// additiveIncrement 10 Mb/s "for 10 Gbps line rate", decreaseFactor 0.8, HAI_Thresh 5) for the
/// increments, which HPCC's ns-3 takes from its command line.
struct TimelyConfig {
  /// Below [T_low] the rate increases whatever the gradient; HPCC's ns-3: 50 us (the snippet:
  /// 50 us with 64 KB segments, 0 with per-packet pacing).
  int64_t t_low_ps = 50'000'000;
  /// Above [T_high] a multiplicative decrease by beta (1 - T_high / rtt); HPCC's ns-3: 500 us
  /// (the authors' published snippet suggests 1 ms).
  int64_t t_high_ps = 500'000'000;
  /// [minRTT], the fixed minimum network RTT that normalizes the gradient; HPCC's ns-3: 20 us.
  int64_t min_rtt_ps = 20'000'000;
  /// EWMA weight of a new RTT difference [alpha]; HPCC's ns-3: 0.875 (one sample per RTT).
  double alpha = 0.875;
  /// Multiplicative decrease factor [beta]; snippet and HPCC's ns-3: 0.8.
  double beta = 0.8;
  /// Additive increment [delta]; the snippet: 10 Mb/s at 10 Gb/s line rate.
  int64_t rai_bps = 10'000'000;
  /// Increment once hyper-active increase (HAI) is on [N x delta]: 5 x 10 Mb/s.
  int64_t rhai_bps = 50'000'000;
  /// HAI after this many increases in a row [N]; snippet (HAI_Thresh) and HPCC's ns-3: 5.
  int hai_threshold = 5;
  /// Floor of the rate; no value in the paper: DCQCN's floor here (DcqcnConfig::min_rate_bps).
  int64_t min_rate_bps = 10'000'000;
};

}  // namespace fabricsim
