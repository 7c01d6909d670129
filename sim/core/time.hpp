// Simulated time: a strong int64 count of picoseconds.
//
// Every timestamp and duration in fabricsim is an integer number of picoseconds, so results are
// bit-for-bit reproducible and never need epsilon comparisons (after htsim's simtime_picosec and
// OMNeT++'s SimTime). int64 picoseconds cover about 106 days of simulated time.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace fabricsim {

/// A point in simulated time or a duration, in picoseconds. Arithmetic is checked: an overflow
/// throws std::overflow_error rather than wrapping silently.
class SimTime {
 public:
  constexpr SimTime() = default;
  constexpr explicit SimTime(int64_t ps) : ps_(ps) {}

  static constexpr SimTime from_ps(int64_t ps) { return SimTime(ps); }
  static constexpr SimTime from_ns(int64_t ns) { return SimTime(checked_mul(ns, 1'000)); }
  static constexpr SimTime from_us(int64_t us) { return SimTime(checked_mul(us, 1'000'000)); }
  static constexpr SimTime from_ms(int64_t ms) { return SimTime(checked_mul(ms, 1'000'000'000)); }
  static constexpr SimTime max() { return SimTime(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return ps_; }
  /// Microseconds as a double, for printing only (never fed back into simulated time).
  constexpr double us() const { return static_cast<double>(ps_) / 1e6; }
  constexpr double seconds() const { return static_cast<double>(ps_) / 1e12; }

  constexpr SimTime operator+(SimTime o) const {
    int64_t r = 0;
    if (__builtin_add_overflow(ps_, o.ps_, &r)) throw std::overflow_error("SimTime overflow");
    return SimTime(r);
  }
  constexpr SimTime operator-(SimTime o) const {
    int64_t r = 0;
    if (__builtin_sub_overflow(ps_, o.ps_, &r)) throw std::overflow_error("SimTime overflow");
    return SimTime(r);
  }
  constexpr SimTime& operator+=(SimTime o) { return *this = *this + o; }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  static constexpr int64_t checked_mul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("SimTime overflow");
    return r;
  }
  int64_t ps_ = 0;
};

/// Serialization delay of `bytes` on a link of `rate_bps` bits per second, in picoseconds:
/// ceil(bytes × 8 × 10¹² / rate_bps). Rounded up so that back-to-back frames never exceed the
/// line rate; every component uses this one function so rounding is the same everywhere.
/// Throws std::invalid_argument if rate_bps <= 0 or bytes < 0, and std::overflow_error if the
/// delay does not fit in int64 picoseconds.
constexpr int64_t serialization_ps(int64_t bytes, int64_t rate_bps) {
  if (rate_bps <= 0) throw std::invalid_argument("serialization_ps: rate_bps must be > 0");
  if (bytes < 0) throw std::invalid_argument("serialization_ps: bytes must be >= 0");
  const __int128 num = static_cast<__int128>(bytes) * 8 * 1'000'000'000'000LL;
  const __int128 ps = (num + rate_bps - 1) / rate_bps;
  if (ps > std::numeric_limits<int64_t>::max()) {
    throw std::overflow_error("serialization_ps: delay beyond int64 picoseconds");
  }
  return static_cast<int64_t>(ps);
}

}  // namespace fabricsim
