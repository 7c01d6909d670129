// What a measured log says about the hardware, fitted: link bandwidth and per-message overhead
// from perftest, latency and bandwidth per regime from nccl-tests, held-out prediction error,
// and the hints a user should see (sockets, GPUDirect off, a slow link).
//
// Models (alpha-beta, Hockney 1994; nccl-tests' algbw/busbw, doc/PERFORMANCE.md):
//   perftest BW     a message of s bytes costs t(s) = s / BW_avg(s) = α + s/β: α the
//                   per-message overhead, β the payload bandwidth the link sustains;
//   perftest lat    base latency = t_typical (median) of the smallest message;
//   nccl-tests      t(S) = a + S/b per regime (1 to 3 segments, breakpoints by BIC: NCCL's
//                   algorithm/protocol switches), busbw = (S/t) × nccl-tests' factor.
// Fits are weighted by 1/t² (relative errors: sizes span bytes to GiB).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/nccl_log.hpp"
#include "calibration/perftest.hpp"

namespace fabricsim {

/// A fitted value and the half-width of its 95 % confidence interval (NaN when unknown).
struct Estimate {
  double value = 0;
  double ci95 = 0;
};

/// ib_{write,read,send}_bw fitted as t(s) = α + s/β: with 6 sizes or more, piecewise (up to
/// two regimes by BIC, overhead-bound and bandwidth-bound), α from the first and β from the last.
struct PerftestBwFit {
  std::string path, tool;
  int segments = 1;         ///< regimes found
  Estimate overhead_ns;     ///< α, nanoseconds per message
  Estimate bandwidth_Gbps;  ///< β, payload, 10⁹ bits per second (CI by the delta method)
  double r2 = 0;
  /// β as a line rate: payload plus the headers of each MTU packet (RoCEv2 82 B on the wire,
  /// InfiniBand 26 B; the log's MTU, 4096 if absent), Gb/s.
  double line_rate_Gbps = 0;
  /// The smallest and largest sizes of the last regime, whose slope gives β (the plateau).
  int64_t plateau_first_bytes = 0, plateau_last_bytes = 0;
  struct Point {
    int64_t bytes;
    double measured_Gbps, fitted_Gbps;  ///< BW average and the model's s / t(s)
  };
  std::vector<Point> points;
};

/// Fits the BW rows of `log` (rows with a positive BW average; a bidirectional run counts half
/// of the sum per direction). With one message size there is no overhead to separate: α = 0
/// (NaN interval) and β is that size's bandwidth. Throws std::invalid_argument for a latency
/// log or no usable row.
PerftestBwFit fit_perftest_bw(const PerftestLog& log);

/// ib_*_lat: the base latency (median of the smallest message) and t(s) = l₀ + s/β fitted on
/// t_typical when the log sweeps sizes.
struct PerftestLatFit {
  std::string path, tool;
  double base_latency_us = 0;
  std::optional<Estimate> per_kib_us;  ///< slope × 1024 B, µs per KiB; none for one size
};
/// Throws std::invalid_argument for a BW log or one without rows.
PerftestLatFit fit_perftest_lat(const PerftestLog& log);

/// One regime of an nccl-tests curve.
struct NcclRegime {
  int64_t first_bytes = 0, last_bytes = 0;  ///< sizes it covers
  Estimate latency_us;                      ///< a
  Estimate algbw_GBps;                      ///< b (CI by the delta method)
  double r2 = 0;
};

/// nccl-tests' out-of-place times fitted piecewise.
struct NcclFit {
  std::string path, collective;
  int nranks = 0, nodes = 0;
  std::vector<NcclRegime> regimes;
  /// The last regime's bandwidth as busbw: what the curve tends to, GB/s.
  double busbw_asymptote_GBps = 0;
  struct Point {
    int64_t bytes;
    double measured_busbw_GBps, fitted_busbw_GBps;
    bool heldout;  ///< not used by the fit
  };
  std::vector<Point> points;
  /// Absolute percentage error of busbw over the held-out points; none without any.
  std::optional<double> heldout_median_abs_pct_error, heldout_max_abs_pct_error;
};

/// Fits `log`'s rows with a positive time. Rows of `heldout_from_bytes` and more (0 = none) are
/// left out of the fit and predicted by the regime of the largest fitted size. Throws
/// std::invalid_argument when the log has no collective or rank count (busbw needs them), or
/// fewer than 2 rows are left to fit (with 2, one line and no intervals).
NcclFit fit_nccl(const NcclLog& log, int64_t heldout_from_bytes = 0);

/// A row's out-of-place busbw from its time column, GB/s (10^9 B/s): size / time × nccl-tests'
/// busbw factor for the log's collective and rank count (the printed busbw is rounded to
/// 0.01 GB/s, 0.00 at small sizes). Factor 1 when the log has fewer than 2 ranks. Throws
/// std::invalid_argument for a log without a known collective.
double nccl_row_busbw_GBps(const NcclLog& log, const NcclLogRow& row);

/// Median and maximum of |predicted − measured| / measured × 100 over the pairs. Throws
/// std::invalid_argument for no pairs or a measured value <= 0.
std::pair<double, double> abs_pct_errors(
    const std::vector<std::pair<double, double>>& measured_predicted);

/// A finding a user should act on.
struct HealthHint {
  std::string path;
  std::string message;
};

/// The data rate of the link a log's `## hardware` / `## fabric` header names ("400G",
/// "400 Gb/s", "NDR" = 400, "HDR" = 200, "EDR" = 100), Gb/s, after line coding (SDR/DDR/QDR
/// 8b/10b: 40 Gb/s QDR = 32; FDR 64b/66b); none when it names none.
std::optional<double> nominal_rate_Gbps(const std::map<std::string, std::string>& meta);

/// perftest: β not determined (its interval wider than a quarter of it: the sweep stops before
/// the plateau); else a line rate below 80 % of the nominal (the link negotiated lower, or the
/// host or PCIe limits it), naming the standard rate it is closest to.
std::vector<HealthHint> health_hints(const PerftestLog& log, const PerftestBwFit& fit,
                                     std::optional<double> nominal_Gbps);
/// nccl-tests: the socket transport, GPUDirect RDMA off (neither on a log whose ranks are all
/// on one node: no byte crosses a network there, whatever NCCL initialised), rows with #wrong
/// > 0, and — when a perftest link bandwidth is known and the run spans nodes — busbw below
/// half of it.
std::vector<HealthHint> health_hints(const NcclLog& log, const NcclFit& fit,
                                     std::optional<double> link_GBps);

}  // namespace fabricsim
