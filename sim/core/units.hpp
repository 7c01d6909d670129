// Units parser: the one place where human-written quantities ("400Gbps", "1.5us", "32MiB")
// become exact integers (bits per second, picoseconds, bytes).
//
// Rules (strict on purpose: a misread unit silently changes a purchase decision):
//  - a decimal number, optional spaces, then a unit; the unit is case-sensitive where case
//    carries meaning (b = bit, B = byte; M = mega, m = milli);
//  - the result must be an exact integer in the base unit ("1.5ns" = 1500 ps is fine,
//    "0.5B" is rejected; "1.0000001ps" is rejected);
//  - no unit, an unknown unit, an ambiguous unit ("400G": bits or bytes?), a sign, an
//    exponent, an empty string, or a result beyond int64 is an error.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fabricsim {

/// Thrown for a malformed or ambiguous quantity; what() says what was expected, with examples.
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Parses a data rate into bits per second.
/// Accepts bit rates bps, Kbps, Mbps, Gbps, Tbps (also written b/s, Kb/s, Mb/s, Gb/s, Tb/s;
/// SI prefixes: K = 10³ … T = 10¹²) and byte rates B/s, KB/s, MB/s, GB/s, TB/s (×8 bits).
/// Examples: "400Gbps" = 400e9, "400Gb/s" = 400e9, "50GB/s" = 400e9. Throws UnitError.
int64_t parse_rate_bps(std::string_view text);

/// Parses a duration into picoseconds. Units: ps, ns, us (or µs), ms, s, min, h.
/// Examples: "1.5us" = 1'500'000, "500ns" = 500'000, "8h" = 28'800'000'000'000'000 (int64
/// picoseconds reach about 2562 h). Throws UnitError.
int64_t parse_time_ps(std::string_view text);

/// Parses a size into bytes. Units: B; KB, MB, GB, TB (SI, 10³ steps); KiB, MiB, GiB, TiB
/// (binary, 2¹⁰ steps). Examples: "32MiB" = 33'554'432, "4KB" = 4000. Throws UnitError.
int64_t parse_size_bytes(std::string_view text);

/// `s` without leading and trailing spaces and tabs (other whitespace stays).
std::string trim_blanks(const std::string& s);

/// Formats bits per second for humans ("400 Gb/s"), for reports only.
std::string format_rate(int64_t rate_bps);
/// Formats picoseconds for humans, exactly ("67.108864 ms", "1 ps"), for reports only.
std::string format_time(int64_t ps);
/// Formats bytes for humans ("64 MiB" when exact in binary units, else "1500 B").
std::string format_size(int64_t bytes);
/// A plot's tick label for a message size, as nccl-tests users say sizes: "64K", "1M", "2G"
/// (binary units, exact multiples only), else the plain byte count ("1000").
std::string format_size_tick(int64_t bytes);

}  // namespace fabricsim
