#include "calibration/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fabricsim {

namespace {

void check_points(std::span<const double> x, std::span<const double> y, std::span<const double> w,
                  size_t min_points) {
  if (x.size() != y.size() || (!w.empty() && w.size() != x.size())) {
    throw std::invalid_argument("fit: x, y and weights must have the same length");
  }
  if (x.size() < min_points) {
    throw std::invalid_argument("fit: needs at least " + std::to_string(min_points) + " points");
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]) ||
        (!w.empty() && (!std::isfinite(w[i]) || w[i] < 0))) {
      throw std::invalid_argument("fit: non-finite value or negative weight at point " +
                                  std::to_string(i));
    }
  }
}

}  // namespace

LinearFit fit_line(std::span<const double> x, std::span<const double> y,
                   std::span<const double> w) {
  check_points(x, y, w, 2);
  const Eigen::Index n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double sw = w.empty() ? 1.0 : std::sqrt(w[static_cast<size_t>(i)]);
    a(i, 0) = sw;
    a(i, 1) = sw * x[static_cast<size_t>(i)];
    b(i) = sw * y[static_cast<size_t>(i)];
  }
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  if (qr.rank() < 2) throw std::invalid_argument("fit: all x are equal (no slope to fit)");
  const Eigen::Vector2d coef = qr.solve(b);

  LinearFit f;
  f.intercept = coef(0);
  f.slope = coef(1);
  double wsum = 0, wy = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double wi = w.empty() ? 1.0 : w[static_cast<size_t>(i)];
    wsum += wi;
    wy += wi * y[static_cast<size_t>(i)];
  }
  const double mean = wsum > 0 ? wy / wsum : 0;
  double tss = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    const double wi = w.empty() ? 1.0 : w[k];
    const double r = y[k] - f.at(x[k]);
    f.residuals.push_back(r);
    f.rss += wi * r * r;
    tss += wi * (y[k] - mean) * (y[k] - mean);
  }
  f.r2 = tss > 0 ? 1.0 - f.rss / tss : 1.0;
  if (n > 2) {
    const double s2 = f.rss / static_cast<double>(n - 2);
    const Eigen::Matrix2d cov = s2 * (a.transpose() * a).inverse();
    const boost::math::students_t t(static_cast<double>(n - 2));
    const double q = boost::math::quantile(boost::math::complement(t, 0.025));
    f.intercept_ci95 = q * std::sqrt(std::max(0.0, cov(0, 0)));
    f.slope_ci95 = q * std::sqrt(std::max(0.0, cov(1, 1)));
  } else {
    f.intercept_ci95 = f.slope_ci95 = std::numeric_limits<double>::quiet_NaN();
  }
  return f;
}

std::vector<Segment> fit_piecewise(std::span<const double> x, std::span<const double> y,
                                   std::span<const double> w, int max_segments, int min_points) {
  if (min_points < 2 || max_segments < 1 || max_segments > 3) {
    throw std::invalid_argument("fit_piecewise: needs min_points >= 2 and 1 to 3 segments");
  }
  check_points(x, y, w, static_cast<size_t>(min_points));
  for (size_t i = 1; i < x.size(); ++i) {
    if (!(x[i] > x[i - 1])) throw std::invalid_argument("fit_piecewise: x must be increasing");
  }
  const size_t n = x.size(), m = static_cast<size_t>(min_points);
  // rss(i, j): the weighted RSS of one line through points [i, j); a segment whose x are all
  // equal cannot happen (x increasing, at least 2 points).
  auto seg = [&](size_t i, size_t j) {
    return fit_line(x.subspan(i, j - i), y.subspan(i, j - i), w.empty() ? w : w.subspan(i, j - i));
  };
  // RSS below a billionth of one line's, or 1e-18 of the data's weighted spread, is rounding:
  // floor it there, so exact data is not split further for a few ulps.
  double floor_rss = 1e-300;
  {
    double wsum = 0, wy = 0, tss = 0;
    for (size_t i = 0; i < n; ++i) {
      const double wi = w.empty() ? 1.0 : w[i];
      wsum += wi;
      wy += wi * y[i];
    }
    for (size_t i = 0; i < n; ++i) {
      const double wi = w.empty() ? 1.0 : w[i];
      tss += wi * (y[i] - wy / wsum) * (y[i] - wy / wsum);
    }
    floor_rss = std::max({floor_rss, 1e-9 * fit_line(x, y, w).rss, 1e-18 * tss});
  }
  std::vector<Segment> best;
  double best_bic = std::numeric_limits<double>::infinity();
  const auto consider = [&](std::vector<size_t> cuts) {  // cuts: segment starts after the first
    std::vector<Segment> s;
    size_t start = 0;
    cuts.push_back(n);
    double rss = 0;
    for (size_t c : cuts) {
      s.push_back(Segment{start, c, seg(start, c)});
      rss += s.back().fit.rss;
      start = c;
    }
    const double k = 3.0 * static_cast<double>(s.size()) - 1.0;  // no breakpoint before the first
    const double dn = static_cast<double>(n);
    const double bic = dn * std::log(std::max(rss, floor_rss) / dn) + k * std::log(dn);
    if (bic < best_bic) {
      best_bic = bic;
      best = std::move(s);
    }
  };
  consider({});
  if (max_segments >= 2) {
    for (size_t c1 = m; c1 + m <= n; ++c1) {
      consider({c1});
      if (max_segments >= 3) {
        for (size_t c2 = c1 + m; c2 + m <= n; ++c2) consider({c1, c2});
      }
    }
  }
  return best;
}

}  // namespace fabricsim
