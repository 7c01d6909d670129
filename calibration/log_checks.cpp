#include "calibration/log_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "calibration/parse_error.hpp"
#include "collectives/nccl_tests.hpp"

namespace fabricsim {
namespace {

std::string fmt(double v, int digits = 6) {
  std::ostringstream o;
  o.precision(digits);
  o << v;
  return o.str();
}

/// Room for the binary rounding of the numbers themselves, on top of the printed digits.
double slack(double v) {
  return 1e-9 * std::abs(v) + 1e-12;
}

/// busbw_factor's formula as nccl-tests writes it, for messages.
std::string factor_formula(const std::string& collective) {
  if (collective == "all_reduce") return "2(n-1)/n";
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") {
    return "(n-1)/n";
  }
  return "1";
}

/// The rank count n whose factor is `ratio` (busbw / algbw), rounded; 0 when the collective's
/// factor does not depend on n or no n >= 1 gives it.
long implied_ranks(const std::string& collective, double ratio) {
  double n = 0;
  if (collective == "all_reduce" && ratio >= 0 && ratio < 2) {
    n = 2 / (2 - ratio);
  } else if ((collective == "all_gather" || collective == "reduce_scatter" ||
              collective == "alltoall") &&
             ratio >= 0 && ratio < 1) {
    n = 1 / (1 - ratio);
  }
  return n >= 1 && n < 1e9 ? std::lround(n) : 0;
}

}  // namespace

bool numberish(std::string_view s) {
  bool digit = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBC &&
               static_cast<unsigned char>(s[i + 2]) >= 0x90 &&
               static_cast<unsigned char>(s[i + 2]) <= 0x99) {
      digit = true;  // U+FF10..U+FF19, FULLWIDTH DIGIT ZERO..NINE, in UTF-8
      i += 2;
    } else if (c < 0x80) {
      return false;
    }
  }
  return digit;
}

bool starts_like_number(std::string_view s) {
  const auto digit = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  if (digit(0)) return true;
  if (!s.empty() && (s[0] == '+' || s[0] == '-' || s[0] == '.')) {
    return digit(1) || (s[0] != '.' && s.size() > 2 && s[1] == '.' && digit(2));
  }
  return s.size() >= 3 && static_cast<unsigned char>(s[0]) == 0xEF &&
         static_cast<unsigned char>(s[1]) == 0xBC && static_cast<unsigned char>(s[2]) >= 0x90 &&
         static_cast<unsigned char>(s[2]) <= 0x99;
}

std::string non_ascii_hint(std::string_view s) {
  const bool ascii =
      std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  return ascii ? "" : " (non-ASCII characters; expected ASCII digits 0-9)";
}

double half_last_digit(const std::string& printed) {
  const size_t e = printed.find_first_of("eE");
  const std::string mantissa = printed.substr(0, e);
  // strtol, not atoi (undefined beyond int); no double has an exponent beyond +-400 anyway.
  const long exponent =
      e == std::string::npos ? 0 : std::clamp(std::strtol(printed.c_str() + e + 1, nullptr, 10), -400L, 400L);
  const size_t dot = mantissa.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

void check_nccl_time_and_algbw(const std::string& path, int line, const std::string& which,
                               int64_t size_bytes, const NcclBlockText& b) {
  if (!(b.time_us > 0)) {
    throw ParseError(path, line,
                     which + " time " + b.time + " us; expected a positive time in microseconds");
  }
  if (b.time_us > kMaxLogTimeUs) {
    throw ParseError(
        path, line,
        which + " time " + b.time + " us is more than an hour for one collective call (at most " +
            fmt(kMaxLogTimeUs) + " us); nccl-tests prints the time of one call in microseconds");
  }
  if (b.algbw_GBps < 0 || b.busbw_GBps < 0) {
    throw ParseError(
        path, line,
        which + " algbw " + b.algbw + " and busbw " + b.busbw + " GB/s; expected bandwidths >= 0");
  }
  // algbw = size / time: bytes per µs are MB/s, / 1e3 GB/s. The printed time and algbw are
  // each within half a unit of their last digit of the values nccl-tests divided.
  const double size = static_cast<double>(size_bytes);
  const double ht = half_last_digit(b.time), ha = half_last_digit(b.algbw);
  const double lowest = size / ((b.time_us + ht) * 1e3) - ha;
  const double highest = b.time_us - ht > 0 ? size / ((b.time_us - ht) * 1e3) + ha
                                            : std::numeric_limits<double>::infinity();
  if (b.algbw_GBps < lowest - slack(lowest) || b.algbw_GBps > highest + slack(highest)) {
    throw ParseError(path, line,
                     which + " algbw " + b.algbw + " GB/s, but size " + std::to_string(size_bytes) +
                         " B in " + b.time + " us is " + fmt(size / (b.time_us * 1e3), 4) +
                         " GB/s (nccl-tests' algbw = size / time): the row was edited or its "
                         "columns are shifted");
  }
}

void check_nccl_busbw(const std::string& path, int line, const std::string& which,
                      const std::string& collective, int nranks, const std::string& nranks_source,
                      const NcclBlockText& b) {
  const double f = busbw_factor(collective, nranks);
  const double ha = half_last_digit(b.algbw), hb = half_last_digit(b.busbw);
  const double expected = b.algbw_GBps * f;
  const double room = ha * f + hb;
  if (std::abs(expected - b.busbw_GBps) <= room + slack(expected)) return;
  std::string message = which + " busbw " + b.busbw + " GB/s is ";
  long implied = 0;
  if (b.algbw_GBps > 0) {
    const double ratio = b.busbw_GBps / b.algbw_GBps;
    message += fmt(ratio) + " x algbw " + b.algbw + " GB/s";
    implied = implied_ranks(collective, ratio);
  } else {
    message += "not 0 with algbw " + b.algbw + " GB/s";
  }
  message += "; " + collective + " on " + std::to_string(nranks) + " ranks (" + nranks_source +
             ") has busbw = " + factor_formula(collective) + " x algbw = " + fmt(f) + " x " +
             b.algbw + " = " + fmt(expected, 6) + " GB/s (+/- " + fmt(room, 2) + " for rounding)";
  if (implied > 0 && implied != nranks) {
    message += "; busbw / algbw fits " + std::to_string(implied) +
               " ranks: the rank count is from another run, or the row was edited";
  } else {
    message += ": the row was edited, or is from another collective";
  }
  throw ParseError(path, line, message);
}

void check_perftest_latency(const std::string& path, int line, const PerftestLatencyText& r) {
  struct Column {
    const char* name;
    double value;
  };
  const Column t_min{"t_min", r.t_min_us}, t_max{"t_max", r.t_max_us},
      typical{"t_typical", r.t_typical_us}, avg{"t_avg", r.t_avg_us},
      p99{"99% percentile", r.p99_us}, p999{"99.9% percentile", r.p99_9_us};
  for (const Column& c : {t_min, t_max, typical, avg, p99, p999}) {
    if (c.value > kMaxLogTimeUs) {
      throw ParseError(path, line,
                       std::string(c.name) + " " + fmt(c.value) +
                           " us is more than an hour for one message (at most " +
                           fmt(kMaxLogTimeUs) + " us); perftest prints microseconds");
    }
  }
  // Each printed with 2 decimals: two values of the same samples may differ by 0.01 the wrong
  // way after rounding, no more. NaN (a column the table lacks) compares false: no check.
  constexpr double kRounding = 0.01 + 1e-9;
  const std::pair<Column, Column> ordered[] = {{t_min, typical}, {typical, t_max}, {t_min, avg},
                                               {avg, t_max},     {t_min, p99},     {typical, p99},
                                               {p99, p999},      {p999, t_max}};
  for (const auto& [low, high] : ordered) {
    if (low.value > high.value + kRounding) {
      throw ParseError(path, line,
                       std::string(low.name) + " " + fmt(low.value) + " us is above " + high.name +
                           " " + fmt(high.value) +
                           " us; perftest computes both from the same samples, so " + low.name +
                           " <= " + high.name + ": the row was edited or its columns are shifted");
    }
  }
}

void check_perftest_msg_rate(const std::string& path, int line, int64_t bytes,
                             const std::string& bw_avg_text, double scale_Bps,
                             const std::string& msg_rate_text) {
  const double bw = std::strtod(bw_avg_text.c_str(), nullptr);
  const double rate = std::strtod(msg_rate_text.c_str(), nullptr);
  const double per_unit = scale_Bps / static_cast<double>(bytes) / 1e6;  // Mpps per BW unit
  const double expected = bw * per_unit;
  const double room = half_last_digit(bw_avg_text) * per_unit + half_last_digit(msg_rate_text);
  if (std::abs(expected - rate) <= room + slack(expected)) return;
  throw ParseError(path, line,
                   "MsgRate " + msg_rate_text + " Mpps, but BW average " + bw_avg_text + " of " +
                       std::to_string(bytes) + "-byte messages is " + fmt(expected) +
                       " Mpps (perftest's MsgRate = BW average / size): the row was edited or "
                       "its columns are shifted");
}

}  // namespace fabricsim
