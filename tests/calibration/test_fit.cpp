// Calibration fits (calibration/fit.hpp) against textbook regression: coefficients from the
// closed forms b = Sxy/Sxx, a = ȳ − b·x̄, standard errors s·√(1/Sxx) and s·√(1/n + x̄²/Sxx),
// Student's t quantile from the printed table, and a piecewise fit that finds a known kink.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "calibration/fit.hpp"

using namespace fabricsim;

TEST_CASE("fit_line: exact data is recovered, R2 1, residuals 0") {
  const std::vector<double> x = {1, 2, 4, 8, 16}, y = {5, 8, 14, 26, 50};  // y = 2 + 3x
  const LinearFit f = fit_line(x, y);
  CHECK(f.intercept == Approx(2).margin(1e-12));
  CHECK(f.slope == Approx(3));
  CHECK(f.r2 == Approx(1));
  for (double r : f.residuals) CHECK(r == Approx(0).margin(1e-12));
  CHECK(f.at(32) == Approx(98));
}

TEST_CASE("fit_line: coefficients and 95% intervals as the textbook closed forms give them") {
  const std::vector<double> x = {1, 2, 3, 4, 5}, y = {2.1, 3.9, 6.2, 7.8, 10.1};
  // x̄ = 3, ȳ = 6.02, Sxx = 10, Sxy = Σ(x−x̄)(y−ȳ) = (−2)(−3.92) + (−1)(−2.12) + 0 + (1)(1.78)
  // + (2)(4.08) = 7.84 + 2.12 + 1.78 + 8.16 = 19.9; b = 1.99, a = 6.02 − 5.97 = 0.05.
  const double b = 1.99, a = 0.05;
  double rss = 0;
  for (size_t i = 0; i < x.size(); ++i) rss += std::pow(y[i] - a - b * x[i], 2);
  const double s = std::sqrt(rss / 3);  // n − 2 = 3 degrees of freedom
  const double t975_df3 = 3.182446;     // Student's t table, 0.975 quantile, 3 d.o.f.
  const LinearFit f = fit_line(x, y);
  CHECK(f.slope == Approx(b));
  CHECK(f.intercept == Approx(a));
  CHECK(f.slope_ci95 == Approx(t975_df3 * s * std::sqrt(1.0 / 10)).epsilon(1e-6));
  CHECK(f.intercept_ci95 == Approx(t975_df3 * s * std::sqrt(1.0 / 5 + 9.0 / 10)).epsilon(1e-6));
  // R² = 1 − RSS/TSS, TSS = Σ(y − ȳ)².
  double tss = 0;
  for (double v : y) tss += (v - 6.02) * (v - 6.02);
  CHECK(f.r2 == Approx(1 - rss / tss));
}

TEST_CASE("fit_line: relative weights fit small values as well as large ones") {
  // Latency-like data: 10 us + s / (10 GB/s), one point 20 % off at the large end. Unweighted,
  // the large point drags the intercept far off; with 1/y² weights the intercept stays near
  // 10 us.
  std::vector<double> x, y, w;
  for (double s = 1e3; s <= 1e9; s *= 10) {
    x.push_back(s);
    y.push_back(10e-6 + s / 10e9);
  }
  y.back() *= 1.2;
  for (double v : y) w.push_back(1 / (v * v));
  const LinearFit weighted = fit_line(x, y, w), plain = fit_line(x, y);
  CHECK(weighted.intercept == Approx(10e-6).epsilon(0.05));
  CHECK(std::abs(plain.intercept - 10e-6) > 10 * std::abs(weighted.intercept - 10e-6));
}

TEST_CASE("fit_piecewise: finds the kink of two regimes and keeps one line for one regime") {
  // 12 sizes on a latency-bound line, then 12 on a bandwidth-bound one.
  std::vector<double> x, y;
  for (int i = 0; i < 24; ++i) {
    x.push_back(i);
    y.push_back(i < 12 ? 5 + 0.1 * i : -50 + 4.7 * i);
  }
  const auto two = fit_piecewise(x, y, {}, 3, 3);
  REQUIRE(two.size() == 2);
  CHECK(two[0].last == 12);
  CHECK(two[1].fit.slope == Approx(4.7));
  CHECK(two[0].fit.intercept == Approx(5));
  std::vector<double> line;
  for (double v : x) line.push_back(1 + 2 * v);
  CHECK(fit_piecewise(x, line, {}, 3, 3).size() == 1);
}

TEST_CASE("fit functions reject bad input") {
  const std::vector<double> one = {1}, two = {1, 2}, same = {3, 3};
  CHECK_THROWS_AS(fit_line(one, one), std::invalid_argument);
  CHECK_THROWS_AS(fit_line(two, one), std::invalid_argument);
  CHECK_THROWS_AS(fit_line(same, two), std::invalid_argument);
  const std::vector<double> nan = {1, std::nan("")};
  CHECK_THROWS_AS(fit_line(two, nan), std::invalid_argument);
  const std::vector<double> down = {2, 1, 0}, ys = {1, 2, 3};
  CHECK_THROWS_AS(fit_piecewise(down, ys, {}, 2, 2), std::invalid_argument);
  CHECK_THROWS_AS(fit_piecewise(ys, ys, {}, 4, 2), std::invalid_argument);
}
