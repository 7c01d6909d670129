// Least-squares fits for calibration: a line y = a + b·x with confidence intervals, and a
// piecewise line whose breakpoints are chosen by the data (the kinks where NCCL switches
// algorithm or protocol, or where a NIC leaves its latency-bound regime).
//
// Sources: ordinary and weighted least squares by Householder QR (Eigen's
// ColPivHouseholderQR); the coefficients' standard errors from s²(XᵀWX)⁻¹ and 95 % intervals
// from Student's t with n − 2 degrees of freedom (Boost.Math); segment count chosen by the
// Bayesian information criterion n·ln(RSS/n) + k·ln(n), k = 3 per segment (intercept, slope,
// breakpoint) — Schwarz, "Estimating the dimension of a model", Ann. Stat. 1978.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace fabricsim {

/// y = intercept + slope · x.
struct LinearFit {
  double intercept = 0;
  double slope = 0;
  /// Half-widths of the 95 % confidence intervals (NaN with fewer than 3 points: no degrees of
  /// freedom left for the residual variance).
  double intercept_ci95 = 0;
  double slope_ci95 = 0;
  /// Coefficient of determination of the weighted fit: 1 − RSS_w / TSS_w.
  double r2 = 0;
  /// y_i − fitted(x_i), in y's unit, one per point.
  std::vector<double> residuals;
  double rss = 0;  ///< weighted residual sum of squares
  double at(double x) const { return intercept + slope * x; }
};

/// Fits y = a + b·x to the points, each weighted by w_i (empty = all 1): minimises
/// Σ w_i (y_i − a − b·x_i)². Weights 1/y_i² fit relative errors, which is what a latency
/// spanning microseconds to seconds needs. Throws std::invalid_argument for fewer than 2
/// points, spans of different lengths, a negative or non-finite weight or value, or all x
/// equal.
LinearFit fit_line(std::span<const double> x, std::span<const double> y,
                   std::span<const double> w = {});

/// One segment of a piecewise fit: points [first, last) (in the order given, which must be
/// increasing in x) and their line.
struct Segment {
  size_t first = 0, last = 0;
  LinearFit fit;
};

/// Piecewise-linear fit with independent segments of at least `min_points` consecutive
/// points, 1 to `max_segments` (at most 3) of them; every segmentation is tried (O(n²) fits
/// for 3 segments: n up to a few hundred points) and the one with the lowest BIC kept.
/// Weights as in fit_line. Throws std::invalid_argument as fit_line, for x not increasing,
/// min_points < 2, max_segments outside 1..3, or fewer than min_points points.
std::vector<Segment> fit_piecewise(std::span<const double> x, std::span<const double> y,
                                   std::span<const double> w, int max_segments, int min_points);

}  // namespace fabricsim
