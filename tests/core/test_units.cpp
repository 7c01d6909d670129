// Units parser, formatters and serialization_ps. Every expected value is worked out by hand from
// the definitions in units.hpp and time.hpp (K = 10³, Ki = 2¹⁰, 1 byte = 8 bits, 1 s = 10¹² ps).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

using namespace fabricsim;
using Catch::Matchers::Contains;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// The message of the UnitError thrown by parse(text), or a marker if none was thrown.
template <class Parse>
std::string error_of(Parse parse, std::string_view text) {
  try {
    (void)parse(text);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "<no UnitError thrown>";
}

std::string rate_error(std::string_view text) {
  return error_of(parse_rate_bps, text);
}
std::string time_error(std::string_view text) {
  return error_of(parse_time_ps, text);
}
std::string size_error(std::string_view text) {
  return error_of(parse_size_bytes, text);
}

}  // namespace

TEST_CASE("parse_rate_bps: bit rates", "[units]") {
  CHECK(parse_rate_bps("400Gbps") == 400'000'000'000);
  CHECK(parse_rate_bps("400Gb/s") == 400'000'000'000);
  CHECK(parse_rate_bps("1bps") == 1);
  CHECK(parse_rate_bps("1b/s") == 1);
  CHECK(parse_rate_bps("2.5Kbps") == 2'500);
  CHECK(parse_rate_bps("100Mb/s") == 100'000'000);
  CHECK(parse_rate_bps("1.6Tbps") == 1'600'000'000'000);
  CHECK(parse_rate_bps("1Tb/s") == 1'000'000'000'000);
  CHECK(parse_rate_bps("0.001Kbps") == 1);  // 0.001 × 1000
}

TEST_CASE("parse_rate_bps: byte rates are 8 bits per byte", "[units]") {
  CHECK(parse_rate_bps("50GB/s") == 400'000'000'000);  // 50 × 10⁹ × 8
  CHECK(parse_rate_bps("1B/s") == 8);
  CHECK(parse_rate_bps("1KB/s") == 8'000);
  CHECK(parse_rate_bps("12.5MB/s") == 100'000'000);  // 12.5 × 8 × 10⁶
  CHECK(parse_rate_bps("1TB/s") == 8'000'000'000'000);
  CHECK(parse_rate_bps("0.125B/s") == 1);  // 0.125 × 8
}

TEST_CASE("parse_*: spaces between number and unit, leading zeros, zero", "[units]") {
  CHECK(parse_rate_bps("400 Gbps") == 400'000'000'000);
  CHECK(parse_rate_bps("400   Gb/s") == 400'000'000'000);
  CHECK(parse_time_ps("007ns") == 7'000);
  CHECK(parse_time_ps("0ns") == 0);
  CHECK(parse_time_ps("0.0ps") == 0);
  CHECK(parse_rate_bps("0bps") == 0);
  CHECK(parse_size_bytes("0B") == 0);
  CHECK(parse_size_bytes("1500 B") == 1'500);
}

TEST_CASE("parse_time_ps: every unit", "[units]") {
  CHECK(parse_time_ps("1ps") == 1);
  CHECK(parse_time_ps("500ns") == 500'000);
  CHECK(parse_time_ps("1.5ns") == 1'500);
  CHECK(parse_time_ps("1.001ns") == 1'001);
  CHECK(parse_time_ps("1.5us") == 1'500'000);
  CHECK(parse_time_ps("1.5\xC2\xB5s") == 1'500'000);  // U+00B5 MICRO SIGN (as in units.hpp)
  CHECK(parse_time_ps("1.5\xCE\xBCs") == 1'500'000);  // U+03BC GREEK SMALL LETTER MU
  CHECK(parse_time_ps("2ms") == 2'000'000'000);
  CHECK(parse_time_ps("1s") == 1'000'000'000'000);
  CHECK(parse_time_ps("0.000001s") == 1'000'000);
  CHECK(parse_time_ps("1.000ps") == 1);  // trailing zeros in the fraction do not matter
  // Wall-clock limits in minutes and hours (`sweep --max-wall 8h`): 60 s and 3600 s.
  CHECK(parse_time_ps("30min") == 30LL * 60 * 1'000'000'000'000);
  CHECK(parse_time_ps("1.5min") == 90'000'000'000'000);
  CHECK(parse_time_ps("8h") == 8LL * 3600 * 1'000'000'000'000);
  CHECK(parse_time_ps("2562h") == 2562LL * 3600 * 1'000'000'000'000);
  CHECK_THAT(time_error("2563h"), Contains("too large"));  // int64 ps end at 2562.05 h
  CHECK_THAT(time_error("8H"), Contains("case-sensitive"));
}

TEST_CASE("parse_size_bytes: SI and binary units", "[units]") {
  CHECK(parse_size_bytes("1500B") == 1'500);
  CHECK(parse_size_bytes("4KB") == 4'000);
  CHECK(parse_size_bytes("1.5MB") == 1'500'000);
  CHECK(parse_size_bytes("400MB") == 400'000'000);
  CHECK(parse_size_bytes("1GB") == 1'000'000'000);
  CHECK(parse_size_bytes("1TB") == 1'000'000'000'000);
  CHECK(parse_size_bytes("1KiB") == 1'024);
  CHECK(parse_size_bytes("0.5KiB") == 512);
  CHECK(parse_size_bytes("32MiB") == 33'554'432);        // 32 × 2²⁰
  CHECK(parse_size_bytes("1.5GiB") == 1'610'612'736);    // 1.5 × 2³⁰
  CHECK(parse_size_bytes("2TiB") == 2'199'023'255'552);  // 2⁴¹
  // 2⁻⁴⁰ TiB = 1 byte; 2⁻⁴⁰ has 40 decimal places, all needed for an exact result.
  CHECK(parse_size_bytes("0.0000000000009094947017729282379150390625TiB") == 1);
}

TEST_CASE("parse_*: the int64 limit", "[units]") {
  CHECK(parse_time_ps("9223372036854775807ps") == kInt64Max);
  CHECK(parse_time_ps("9223372.036854775807s") == kInt64Max);
  CHECK(parse_size_bytes("8388607TiB") == 9'223'370'937'343'148'032);  // 2⁶³ − 2⁴⁰
  CHECK_THAT(time_error("9223372036854775808ps"), Contains("too large"));
  CHECK_THAT(time_error("9223372.036854775808s"), Contains("too large"));
  CHECK_THAT(time_error("10000000s"), Contains("too large"));  // 10¹⁹ ps
  // The time limit also in hours: (2⁶³ − 1) ps / 3.6 × 10¹⁵ ps per h = 2562.05 h.
  CHECK_THAT(time_error("100000h"),
             Contains("the limit is 9223372036854775807 picoseconds (about 2562 h)"));
  CHECK_THAT(size_error("8388608TiB"), !Contains("(about"));
  CHECK_THAT(time_error("99999999999999999999999999999999999999999ps"), Contains("too large"));
  CHECK_THAT(size_error("8388608TiB"), Contains("too large"));   // 2⁶³
  CHECK_THAT(rate_error("1200000TB/s"), Contains("too large"));  // 9.6 × 10¹⁸
}

TEST_CASE("parse_*: results must be whole base units", "[units]") {
  CHECK_THAT(size_error("0.5B"), Contains("is not a whole number of bytes"));
  CHECK_THAT(size_error("0.001KiB"), Contains("is not a whole number of bytes"));  // 1.024 B
  CHECK_THAT(time_error("1.0000001ps"), Contains("is not a whole number of picoseconds"));
  CHECK_THAT(time_error("0.5ps"), Contains("is not a whole number of picoseconds"));
  CHECK_THAT(time_error("1.0005ns"), Contains("is not a whole number of picoseconds"));
  CHECK_THAT(rate_error("0.1B/s"), Contains("is not a whole number of bits per second"));  // 0.8
  CHECK_THAT(rate_error("1.5bps"), Contains("is not a whole number of bits per second"));
}

TEST_CASE("parse_*: empty input", "[units]") {
  CHECK_THAT(rate_error(""), Contains("empty"));
  CHECK_THAT(time_error(""), Contains("empty"));
  CHECK_THAT(size_error(""), Contains("empty"));
}

TEST_CASE("parse_*: a number without a unit", "[units]") {
  CHECK_THAT(rate_error("400"), Contains("missing unit, e.g. 400Gbps"));
  CHECK_THAT(time_error("400"), Contains("missing unit"));
  CHECK_THAT(size_error("1.5"), Contains("missing unit"));
}

TEST_CASE("parse_rate_bps: a bare prefix is ambiguous (bits or bytes?)", "[units]") {
  const std::string advice = "ambiguous: write 400Gbps (bits) or 400GB/s (bytes)";
  CHECK_THAT(rate_error("400G"), Contains(advice));
  CHECK_THAT(rate_error("400g"), Contains(advice));
  CHECK_THAT(rate_error("400Gb"), Contains(advice));
  CHECK_THAT(rate_error("400gb"), Contains(advice));
  CHECK_THAT(rate_error("400GB"), Contains(advice));
  CHECK_THAT(rate_error("400 G"), Contains(advice));
  CHECK_THAT(rate_error("12.5M"), Contains("write 12.5Mbps (bits) or 12.5MB/s (bytes)"));
  // "GBps" is one letter's case away from "Gbps": a factor of 8, so it is not guessed either.
  CHECK_THAT(rate_error("400GBps"), Contains(advice));
  CHECK_THAT(rate_error("1Bps"), Contains("write 1bps (bits) or 1B/s (bytes)"));
}

TEST_CASE("parse_*: unknown units list the accepted ones", "[units]") {
  CHECK_THAT(rate_error("400Gbit/s"),
             Contains("unknown unit 'Gbit/s'") && Contains("Gbps") && Contains("GB/s"));
  CHECK_THAT(time_error("1.5sec"), Contains("unknown unit 'sec'") && Contains("ps, ns, us"));
  CHECK_THAT(size_error("3furlongs"), Contains("unknown unit") && Contains("MiB"));
  CHECK_THAT(size_error("1b"), Contains("unknown unit 'b'"));  // sizes are in bytes
  // Case carries meaning (M = mega, m = milli; b = bit, B = byte), so a wrong case is an error,
  // with a hint where only a prefix's case is wrong; a b/B mix-up (a factor of 8) gets no hint.
  CHECK_THAT(rate_error("400gbps"), Contains("unknown unit") && Contains("did you mean 'Gbps'"));
  CHECK_THAT(rate_error("400mb/s"), Contains("did you mean 'Mb/s'?"));
  CHECK_THAT(size_error("4kB"), Contains("did you mean 'KB'"));
  CHECK_THAT(time_error("1S"), Contains("did you mean 's'"));
  CHECK_THAT(size_error("4Kib"), Contains("unknown unit 'Kib'") && !Contains("did you mean"));
  CHECK_THAT(rate_error("400Gbit/s"), !Contains("did you mean"));
}

TEST_CASE("parse_*: signs are rejected", "[units]") {
  CHECK_THAT(time_error("-1ns"), Contains("negative values are not allowed"));
  CHECK_THAT(rate_error("-400Gbps"), Contains("negative values are not allowed"));
  CHECK_THAT(size_error("-0B"), Contains("negative values are not allowed"));
  CHECK_THAT(time_error("+1ns"), Contains("sign is not allowed"));
}

TEST_CASE("parse_*: exponents and hexadecimal are rejected", "[units]") {
  CHECK_THAT(rate_error("1e9bps"), Contains("exponents are not allowed"));
  CHECK_THAT(rate_error("1e9"), Contains("exponents are not allowed"));
  CHECK_THAT(time_error("1E3ns"), Contains("exponents are not allowed"));
  CHECK_THAT(time_error("2.5e-3s"), Contains("exponents are not allowed"));
  CHECK_THAT(size_error("0x10B"), Contains("hexadecimal"));
  CHECK_THAT(size_error("0X10B"), Contains("hexadecimal"));
}

TEST_CASE("parse_*: malformed numbers", "[units]") {
  CHECK_THAT(time_error("1.2.3ns"), Contains("more than one '.'"));
  CHECK_THAT(time_error("1.ns"), Contains("expected digits after '.'"));
  CHECK_THAT(time_error("1..2ns"), Contains("expected digits after '.'"));
  CHECK_THAT(time_error(".5ns"), Contains("expected a number"));
  CHECK_THAT(time_error("ns"), Contains("expected a number"));
  CHECK_THAT(rate_error(" 400Gbps"), Contains("expected a number"));
  CHECK_THAT(time_error("1,5ns"), Contains("expected a unit after the number"));
}

TEST_CASE("parse_*: trailing garbage is rejected", "[units]") {
  CHECK_THAT(rate_error("400Gbps extra"), Contains("unexpected ' extra' after the unit"));
  CHECK_THAT(rate_error("400Gbps "), Contains("after the unit"));
  CHECK_THAT(size_error("4KB!"), Contains("unexpected '!' after the unit"));
  CHECK_THAT(time_error("1ns5"), Contains("after the unit"));
  CHECK_THAT(time_error("1ns\n"), Contains("after the unit"));
}

TEST_CASE("parse_*: UnitError is a std::invalid_argument", "[units]") {
  CHECK_THROWS_AS(parse_rate_bps("400G"), std::invalid_argument);
  CHECK_THROWS_AS(parse_time_ps("1e9ns"), UnitError);
  CHECK_THROWS_AS(parse_size_bytes("0.5B"), UnitError);
}

TEST_CASE("format_rate", "[units]") {
  CHECK(format_rate(400'000'000'000) == "400 Gb/s");
  CHECK(format_rate(12'500'000'000) == "12.5 Gb/s");
  CHECK(format_rate(1'600'000'000'000) == "1.6 Tb/s");
  CHECK(format_rate(100'000'000) == "100 Mb/s");
  CHECK(format_rate(1'000) == "1 Kb/s");
  CHECK(format_rate(999) == "999 b/s");
  CHECK(format_rate(0) == "0 b/s");
  // Exact, never rounded: 1 Gb/s + 1 b/s.
  CHECK(format_rate(1'000'000'001) == "1.000000001 Gb/s");
}

TEST_CASE("format_time", "[units]") {
  CHECK(format_time(67'108'864'000) == "67.108864 ms");  // 4.096 us x 2^14, the default RTO
  CHECK(format_time(2'085'280) == "2.08528 us");
  CHECK(format_time(1) == "1 ps");
  CHECK(format_time(1'000) == "1 ns");
  CHECK(format_time(1'000'000'000'000) == "1 s");
  CHECK(format_time(0) == "0 ps");
  CHECK(format_time(-1'500) == "-1.5 ns");
}

TEST_CASE("format_size", "[units]") {
  CHECK(format_size(67'108'864) == "64 MiB");  // 64 × 2²⁰
  CHECK(format_size(1'500) == "1500 B");
  CHECK(format_size(4'000) == "4000 B");  // SI sizes are printed in bytes
  CHECK(format_size(1'024) == "1 KiB");
  CHECK(format_size(1'536) == "1536 B");  // not a whole number of KiB
  CHECK(format_size(3 * (int64_t{1} << 30)) == "3 GiB");
  CHECK(format_size(int64_t{1} << 40) == "1 TiB");
  CHECK(format_size(0) == "0 B");
}

TEST_CASE("format_* output parses back to the same value", "[units]") {
  for (int64_t bps : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{25'000'000'000},
                      int64_t{400'000'000'000}, int64_t{1'000'000'001}, kInt64Max}) {
    CHECK(parse_rate_bps(format_rate(bps)) == bps);
  }
  for (int64_t bytes :
       {int64_t{0}, int64_t{1}, int64_t{1'500}, int64_t{4'096}, int64_t{33'554'432}, kInt64Max}) {
    CHECK(parse_size_bytes(format_size(bytes)) == bytes);
  }
}

TEST_CASE("serialization_ps: ceil(bytes × 8 × 10¹² / rate_bps)", "[units][time]") {
  // 4178 B × 8 = 33424 bit; 33424 / (400 × 10⁹) s = 83.56 ns.
  CHECK(serialization_ps(4'178, 400'000'000'000) == 83'560);
  // 64 B = 512 bit at 400 Gb/s = 1.28 ns.
  CHECK(serialization_ps(64, 400'000'000'000) == 1'280);
  // 1 B at 400 Gb/s = 8 / (400 × 10⁹) s = 20 ps.
  CHECK(serialization_ps(1, 400'000'000'000) == 20);
  // 1500 B = 12000 bit at 100 Gb/s = 120 ns.
  CHECK(serialization_ps(1'500, 100'000'000'000) == 120'000);
  // 1 B at 3 b/s = 8/3 s = 2666666666666.67 ps, rounded up.
  CHECK(serialization_ps(1, 3) == 2'666'666'666'667);
  // 1 B at 8 b/s is exactly 1 s: no rounding when the division is exact.
  static_assert(serialization_ps(1, 8) == 1'000'000'000'000);
  CHECK(serialization_ps(0, 400'000'000'000) == 0);
  // A units-parsed link: 4 KiB at 50 GB/s (= 400 Gb/s): 32768 bit / 400e9 = 81.92 ns.
  CHECK(serialization_ps(parse_size_bytes("4KiB"), parse_rate_bps("50GB/s")) == 81'920);
}

TEST_CASE("serialization_ps: invalid arguments and overflow", "[units][time]") {
  CHECK_THROWS_AS(serialization_ps(1, 0), std::invalid_argument);
  CHECK_THROWS_AS(serialization_ps(1, -5), std::invalid_argument);
  CHECK_THROWS_AS(serialization_ps(-1, 1), std::invalid_argument);
  // 2³⁰ B at 1 b/s is 8.6 × 10²¹ ps, beyond int64.
  CHECK_THROWS_AS(serialization_ps(int64_t{1} << 30, 1), std::overflow_error);
  CHECK_THROWS_AS(serialization_ps(kInt64Max, 1), std::overflow_error);
  // The largest delay that fits: 1'152'921 B at 1 b/s = 9'223'368 × 10¹² ps < 2⁶³ − 1.
  CHECK(serialization_ps(1'152'921, 1) == 9'223'368'000'000'000'000);
  CHECK_THROWS_AS(serialization_ps(1'152'922, 1), std::overflow_error);  // 9'223'376 × 10¹²
}
