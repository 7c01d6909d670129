// Units parser and formatters; the rules are documented in units.hpp.
//
// Exact arithmetic only: the integer and fraction digits are read separately, and the fraction's
// contribution is computed digit by digit (decimal long multiplication), so "1.5ns", "0.25KiB"
// or a 40-digit binary fraction of a TiB are exact, and "0.5B" is detected as not whole.
#include "sim/core/units.hpp"

#include <cstddef>
#include <limits>
#include <span>

namespace fabricsim {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

struct UnitDef {
  std::string_view name;
  int64_t factor;  // base units per one of this unit
};

/// One kind of quantity: its unit table and the words used in error messages.
struct QuantityKind {
  std::string_view what;       // "rate", "time", "size"
  std::string_view base_unit;  // "bits per second", "picoseconds", "bytes"
  std::string_view example;    // a unit for the "missing unit" hint, e.g. "Gbps"
  std::string_view accepted;   // the accepted units, for the "unknown unit" message
  std::span<const UnitDef> units;
  bool is_rate;  // a bare prefix ("400G") is then reported as ambiguous (bits or bytes?)
};

constexpr UnitDef kRateUnits[] = {
    {"bps", 1},
    {"Kbps", 1'000},
    {"Mbps", 1'000'000},
    {"Gbps", 1'000'000'000},
    {"Tbps", 1'000'000'000'000},
    {"b/s", 1},
    {"Kb/s", 1'000},
    {"Mb/s", 1'000'000},
    {"Gb/s", 1'000'000'000},
    {"Tb/s", 1'000'000'000'000},
    {"B/s", 8},
    {"KB/s", 8'000},
    {"MB/s", 8'000'000},
    {"GB/s", 8'000'000'000},
    {"TB/s", 8'000'000'000'000},
};

constexpr UnitDef kTimeUnits[] = {
    {"ps", 1},
    {"ns", 1'000},
    {"us", 1'000'000},
    {"\xC2\xB5s", 1'000'000},  // U+00B5 MICRO SIGN, as in units.hpp
    {"\xCE\xBCs", 1'000'000},  // U+03BC GREEK SMALL LETTER MU: renders the same as U+00B5
    {"ms", 1'000'000'000},
    {"s", 1'000'000'000'000},
    {"min", 60'000'000'000'000},   // wall-clock limits (--max-wall 30min)
    {"h", 3'600'000'000'000'000},  // and long runs (--max-wall 8h); int64 ps reach 2562 h
};

constexpr UnitDef kSizeUnits[] = {
    {"B", 1},
    {"KB", 1'000},
    {"MB", 1'000'000},
    {"GB", 1'000'000'000},
    {"TB", 1'000'000'000'000},
    {"KiB", int64_t{1} << 10},
    {"MiB", int64_t{1} << 20},
    {"GiB", int64_t{1} << 30},
    {"TiB", int64_t{1} << 40},
};

constexpr QuantityKind kRate{
    .what = "rate",
    .base_unit = "bits per second",
    .example = "Gbps",
    .accepted =
        "bps, Kbps, Mbps, Gbps, Tbps, b/s, Kb/s, Mb/s, Gb/s, Tb/s (bits); "
        "B/s, KB/s, MB/s, GB/s, TB/s (bytes)",
    .units = kRateUnits,
    .is_rate = true,
};
constexpr QuantityKind kTime{
    .what = "time",
    .base_unit = "picoseconds",
    .example = "ns",
    .accepted = "ps, ns, us (or \xC2\xB5s), ms, s, min, h",
    .units = kTimeUnits,
    .is_rate = false,
};
constexpr QuantityKind kSize{
    .what = "size",
    .base_unit = "bytes",
    .example = "B",
    .accepted = "B, KB, MB, GB, TB (x1000 steps); KiB, MiB, GiB, TiB (x1024 steps)",
    .units = kSizeUnits,
    .is_rate = false,
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
char to_upper(char c) {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

/// True if `typed` is `unit` with only the case of prefix letters wrong ("gbps" for "Gbps",
/// "kB" for "KB"). A b/B difference never matches: that is a factor of 8, not a typo to guess.
bool differs_only_in_case(std::string_view unit, std::string_view typed) {
  if (unit.size() != typed.size()) return false;
  for (size_t i = 0; i < unit.size(); ++i) {
    if (to_lower(unit[i]) != to_lower(typed[i])) return false;
    if (to_lower(unit[i]) == 'b' && unit[i] != typed[i]) return false;
  }
  return true;
}

[[noreturn]] void fail(const QuantityKind& kind, std::string_view text, std::string_view why) {
  std::string msg = "invalid ";
  msg += kind.what;
  msg += " '";
  msg += text;
  msg += "': ";
  msg += why;
  throw UnitError(msg);
}

/// A rate unit that does not say bits or bytes per second: a prefix and no "ps" or "/s" ("G",
/// "g", "Gb", "GB", "b"), or "GBps"/"Bps", one letter's case away from "Gbps"/"bps".
bool is_ambiguous_rate_unit(std::string_view unit) {
  std::string_view rest = unit;
  if (!rest.empty() && std::string_view("KMGTkmgt").find(rest.front()) != std::string_view::npos) {
    rest.remove_prefix(1);
  }
  if (rest == "Bps") return true;
  if (!rest.empty() && (rest.front() == 'b' || rest.front() == 'B')) rest.remove_prefix(1);
  return rest.empty();
}

std::string ambiguous_rate_message(std::string_view number, std::string_view unit) {
  std::string prefix;
  if (!unit.empty() && unit.front() != 'b' && unit.front() != 'B') prefix = to_upper(unit.front());
  std::string msg = "ambiguous: write ";
  msg += number;
  msg += prefix + "bps (bits) or ";
  msg += number;
  msg += prefix + "B/s (bytes)";
  return msg;
}

int64_t parse_quantity(std::string_view text, const QuantityKind& kind) {
  const std::string example_hint = std::string("e.g. 400") + std::string(kind.example);
  if (text.empty()) fail(kind, text, "empty; expected a number and a unit, " + example_hint);

  size_t pos = 0;
  if (text[0] == '-') fail(kind, text, "negative values are not allowed");
  if (text[0] == '+') fail(kind, text, "a sign is not allowed; write the number alone");

  // Integer digits: at least one.
  const size_t int_begin = pos;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  const std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  if (int_digits.empty()) {
    fail(kind, text,
         "expected a number at the start (digits, optionally with one '.'), " + example_hint);
  }
  if (int_digits == "0" && pos < text.size() && (text[pos] == 'x' || text[pos] == 'X')) {
    fail(kind, text, "hexadecimal numbers are not allowed; write a decimal number");
  }

  // Optional '.' and fraction digits: at least one after the '.'.
  std::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t frac_begin = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
    if (frac_digits.empty()) fail(kind, text, "expected digits after '.'");
    if (pos < text.size() && text[pos] == '.') fail(kind, text, "more than one '.' in the number");
  }
  const std::string_view number = text.substr(0, pos);

  // An exponent: 'e' or 'E' followed by a digit or a sign ("1e9", "2E+3").
  if (pos + 1 < text.size() && (text[pos] == 'e' || text[pos] == 'E') &&
      (is_digit(text[pos + 1]) || text[pos + 1] == '+' || text[pos + 1] == '-')) {
    fail(kind, text, "exponents are not allowed; write all the digits or use a larger unit");
  }

  // Optional spaces, then the unit: a run of letters, '/' and non-ASCII bytes (for µ).
  while (pos < text.size() && text[pos] == ' ') ++pos;
  const size_t unit_begin = pos;
  while (pos < text.size() && (is_ascii_letter(text[pos]) || text[pos] == '/' ||
                               static_cast<unsigned char>(text[pos]) >= 0x80)) {
    ++pos;
  }
  const std::string_view unit = text.substr(unit_begin, pos - unit_begin);
  const std::string_view trailing = text.substr(pos);
  if (unit.empty()) {
    if (trailing.empty()) {
      fail(kind, text, "missing unit, e.g. " + std::string(number) + std::string(kind.example));
    }
    fail(kind, text, "expected a unit after the number, found '" + std::string(trailing) + "'");
  }
  if (!trailing.empty()) {
    fail(kind, text, "unexpected '" + std::string(trailing) + "' after the unit");
  }

  // Look the unit up (case-sensitive).
  int64_t factor = 0;
  for (const UnitDef& u : kind.units) {
    if (u.name == unit) factor = u.factor;
  }
  if (factor == 0) {
    if (kind.is_rate && is_ambiguous_rate_unit(unit)) {
      fail(kind, text, ambiguous_rate_message(number, unit));
    }
    std::string msg = "unknown unit '" + std::string(unit) + "'";
    std::string case_hint;
    for (const UnitDef& u : kind.units) {
      if (differs_only_in_case(u.name, unit)) {
        case_hint += case_hint.empty() ? " (units are case-sensitive: did you mean '" : "' or '";
        case_hint += u.name;
      }
    }
    if (!case_hint.empty()) msg += case_hint + "'?)";
    msg += "; accepted units: ";
    msg += kind.accepted;
    fail(kind, text, msg);
  }

  const auto too_large = [&]() {
    fail(kind, text,
         "too large: the limit is " + std::to_string(kInt64Max) + " " +
             std::string(kind.base_unit) +
             // Times are kept in picoseconds: say the limit in the unit a long run is given in.
             (std::string(kind.base_unit) == "picoseconds"
                  ? " (about " + std::to_string(kInt64Max / (int64_t{3'600} * 1'000'000'000'000)) +
                        " h)"
                  : ""));
  };

  // Integer part, capped at int64 (the factor is >= 1, so anything larger overflows anyway).
  __int128 int_value = 0;
  for (char c : int_digits) {
    int_value = int_value * 10 + (c - '0');
    if (int_value > kInt64Max) too_large();
  }

  // Fraction part × factor, exactly: multiply the fraction's digit string by `factor` from the
  // least significant digit up. The product's last frac_digits.size() decimal digits are the
  // part below one base unit and must all be zero; what carries out of the fraction's leading
  // digit is the whole number of base units it contributes (always < factor).
  __int128 carry = 0;
  for (size_t i = frac_digits.size(); i-- > 0;) {
    const __int128 t = static_cast<__int128>(frac_digits[i] - '0') * factor + carry;
    if (t % 10 != 0) {
      fail(kind, text, "the value is not a whole number of " + std::string(kind.base_unit));
    }
    carry = t / 10;
  }

  const __int128 total = int_value * factor + carry;
  if (total > kInt64Max) too_large();
  return static_cast<int64_t>(total);
}

/// Magnitude of v as unsigned (well defined for INT64_MIN too).
uint64_t magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

/// `value / scale` written exactly in decimal, trailing zeros of the fraction dropped
/// ("12.5", "400"). `scale` is a power of ten.
std::string exact_decimal(uint64_t value, uint64_t scale) {
  std::string out = std::to_string(value / scale);
  uint64_t rem = value % scale;
  if (rem == 0) return out;
  std::string frac;
  for (uint64_t s = scale / 10; s > 0; s /= 10) {
    frac += static_cast<char>('0' + rem / s);
    rem %= s;
  }
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return out + "." + frac;
}

}  // namespace

int64_t parse_rate_bps(std::string_view text) {
  return parse_quantity(text, kRate);
}
int64_t parse_time_ps(std::string_view text) {
  return parse_quantity(text, kTime);
}
int64_t parse_size_bytes(std::string_view text) {
  return parse_quantity(text, kSize);
}

namespace {

struct Prefix {
  uint64_t scale;
  const char* unit;
};

/// `value` in the largest unit of `prefixes` (largest first, the last of scale 1) it reaches,
/// as an exact decimal.
std::string format_scaled(int64_t value, std::span<const Prefix> prefixes) {
  const uint64_t mag = magnitude(value);
  const std::string sign = value < 0 ? "-" : "";
  for (const Prefix& p : prefixes) {
    if (mag >= p.scale) return sign + exact_decimal(mag, p.scale) + " " + p.unit;
  }
  return std::string("0 ") + prefixes.back().unit;
}

}  // namespace

std::string format_rate(int64_t rate_bps) {
  static constexpr Prefix kPrefixes[] = {
      {1'000'000'000'000, "Tb/s"},
      {1'000'000'000, "Gb/s"},
      {1'000'000, "Mb/s"},
      {1'000, "Kb/s"},
      {1, "b/s"},
  };
  return format_scaled(rate_bps, kPrefixes);
}

std::string format_time(int64_t ps) {
  static constexpr Prefix kPrefixes[] = {
      {1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}, {1, "ps"},
  };
  return format_scaled(ps, kPrefixes);
}

std::string format_size(int64_t bytes) {
  struct Binary {
    int64_t scale;
    const char* unit;
  };
  static constexpr Binary kUnits[] = {
      {int64_t{1} << 40, "TiB"},
      {int64_t{1} << 30, "GiB"},
      {int64_t{1} << 20, "MiB"},
      {int64_t{1} << 10, "KiB"},
  };
  if (bytes != 0) {
    for (const Binary& u : kUnits) {
      if (bytes % u.scale == 0) return std::to_string(bytes / u.scale) + " " + u.unit;
    }
  }
  return std::to_string(bytes) + " B";
}

std::string format_size_tick(int64_t bytes) {
  static constexpr const char* kUnits[] = {"T", "G", "M", "K"};
  for (int i = 0; i < 4; ++i) {
    const int64_t unit = int64_t{1} << (10 * (4 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + kUnits[i];
  }
  return std::to_string(bytes);
}

std::string trim_blanks(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace fabricsim
