// Empirical flow-size distributions for background traffic, as the field's traffic generators use
// them: a piecewise-linear CDF given as points (size in bytes, cumulative percent), sampled by
// inverse transform with linear interpolation between the points (HPCC's
// traffic_gen/custom_rand.py, github.com/alibaba-edu/High-Precision-Congestion-Control).
//
// The text format is HPCC's *_distribution.txt: one "size percent" pair per line, whitespace
// separated, e.g.
//     0 0
//     10000 15
//     ...
//     30000000 100
// Blank lines are ignored, and so is everything from a '#' that starts a token to the end of its
// line (whole-line and trailing comments).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim {

/// A bad flow-size CDF text. what() reads "NAME: line L, column C: MESSAGE" (the name left out
/// when empty, the position when unknown, i.e. line 0); MESSAGE says what was expected, e.g.
/// "percent 15 is not above the previous 20: a CDF must increase".
class CdfError : public std::runtime_error {
 public:
  CdfError(const std::string& name, int line, int column, const std::string& message);
  int line() const { return line_; }      ///< 1-based; 0 when the error has no position
  int column() const { return column_; }  ///< 1-based byte column; 0 when unknown
  const std::string& message() const { return message_; }

 private:
  int line_, column_;
  std::string message_;
};

/// A flow-size distribution: a piecewise-linear CDF through points (size_bytes, percent).
/// Invariants (checked on construction): at least two points; the first percent is 0 and the
/// last 100; sizes (>= 0, finite) and percents both strictly increase. Sizes may start at 0, as
/// in HPCC's tables, which is why sample_bytes() clamps to 1 byte.
class FlowSizeCdf {
 public:
  using Point = std::pair<double, double>;  ///< (size in bytes, cumulative percent 0..100)

  /// Throws std::invalid_argument naming the offending point (0-based index) when the points
  /// break an invariant above.
  FlowSizeCdf(std::vector<Point> points, std::string name);

  /// The inverse CDF at `u` in [0, 1] (u = 1 gives the largest size), bytes: the size at percent
  /// 100 * u, interpolated linearly within the first segment whose upper percent is >= 100 * u
  /// (custom_rand.py's getValueFromPercentile). Throws std::invalid_argument outside [0, 1].
  double sample(double u) const;
  /// A flow size in whole bytes for uniform `u`: max(1, (int64_t) sample(u)), truncation as
  /// traffic_gen.py's int(customRand.rand()), and never an empty flow.
  int64_t sample_bytes(double u) const;
  /// Mean of the interpolated distribution, bytes: the trapezoid sum over segments of
  /// (x0 + x1) / 2 * (y1 - y0) / 100 (custom_rand.py's getAvg). It ignores sample_bytes()'s
  /// truncation and 1-byte floor, which lower the mean by under one byte.
  double mean_bytes() const;

  const std::vector<Point>& points() const { return points_; }
  /// E.g. "web-search", or the file it was read from.
  std::string name() const { return name_; }

 private:
  std::vector<Point> points_;
  std::string name_;
};

/// DCTCP's web-search distribution (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010,
/// Fig. 4), as tabulated in HPCC's traffic_gen/WebSearch_distribution.txt: 0 B .. 30 MB, mean
/// 1,711,250 B.
FlowSizeCdf web_search_cdf();
/// Facebook's Hadoop distribution (Roy et al., "Inside the Social Network's (Datacenter)
/// Network", SIGCOMM 2015), as tabulated in HPCC's traffic_gen/FbHdp_distribution.txt:
/// 0 B .. 10 MB, mean 120,420.75 B.
FlowSizeCdf hadoop_cdf();

/// A CDF from the text format above, called `name` (a file name, say, used in errors). Throws
/// CdfError at the first bad token: not a number ("expected a number, got 'abc'"), a missing
/// percent or an extra token, a negative size, a percent above 100, a first percent other than
/// 0, a size or percent not above the previous one, a last percent other than 100, fewer than
/// two points.
FlowSizeCdf parse_flow_size_cdf(const std::string& text, const std::string& name);
/// The text format for `cdf`: a comment line naming it, then one "size percent" line per point,
/// each number in the shortest decimal that reads back to the same double, so
/// parse_flow_size_cdf(format_flow_size_cdf(c), n).points() == c.points().
std::string format_flow_size_cdf(const FlowSizeCdf& cdf);

/// The built-in distribution called `name` ("web-search", "hadoop"); throws
/// std::invalid_argument listing the names otherwise.
FlowSizeCdf builtin_flow_size_cdf(const std::string& name);
/// The built-in names, in a fixed order: "web-search", "hadoop".
std::vector<std::string> builtin_flow_size_cdf_names();

}  // namespace fabricsim
