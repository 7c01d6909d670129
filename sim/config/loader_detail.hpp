// The loader's own vocabulary, shared by the files that make it up (not a public interface):
// the YAML value with its key path and position (Value), how a key's value is read and checked
// (Rule, QuantitySpec, Choices), the row that declares a key (Field) and the declarations that
// let each component's file hold its own table (params_*.cpp) and validation.
//
// A key is declared once, by one row of its component's table: key path, where its value goes
// (the member of the section's params struct, whose initializer is the default), what it takes
// (the Rule: type, unit and range, the same one that reads and checks it), one line of doc, and
// when it applies (topology kinds, a Condition). fields() lists every row in parse order; the
// loader walks it, and `fabricsim params` prints it (sim/config/params.hpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sim/config/loader.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/units.hpp"

namespace fabricsim::config_detail {

inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMaxCount = 1'000'000;               // switches or hosts per dimension
inline constexpr int64_t kMaxSweepBytes = int64_t{64} << 30;  // 64 GiB

/// "a, b and c".
inline std::string join_words(const std::vector<std::string>& words, const std::string& last_sep) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? last_sep : ", ";
    out += words[i];
  }
  return out;
}

inline std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "nothing";
  }
}

/// Where errors point. Errors on a key set by --set name the override, not the file.
struct Context {
  std::string file;
  std::map<std::string, std::string> overrides;  ///< dotted key path -> "--set a.b=v"

  [[noreturn]] void fail(const std::string& path, const YAML::Mark& mark,
                         const std::string& message) const {
    // A key set by --set, or an item inside one ("topology.dims[1]"), names the override.
    for (const auto& [key, where] : overrides) {
      if (path == key || path.rfind(key + "[", 0) == 0 || path.rfind(key + ".", 0) == 0) {
        throw ConfigError(where, 0, 0, path, message);
      }
    }
    if (mark.is_null()) throw ConfigError(file, 0, 0, path, message);
    throw ConfigError(file, mark.line + 1, mark.column + 1, path, message);
  }
};

/// A quantity with a unit and the range it must fall in.
struct QuantitySpec {
  const char* noun;     ///< "rate", "time", "size"
  const char* example;  ///< e.g. "400Gbps"
  int64_t (*parse)(std::string_view);
  int64_t min, max;
  const char* expected;             ///< the range in words: "a positive rate"
  const char* zero_hint = nullptr;  ///< added to the message for a zero below `min`
};

/// A name from a fixed set: built now, recognised but not built yet, or an alias.
struct Choices {
  const char* noun;  ///< "collective"
  std::vector<std::string> available;
  std::vector<std::string> not_built;
  std::vector<std::pair<std::string, std::string>> aliases;  ///< alias -> canonical name
  /// The key whose values components register (sim/core/choices.hpp), which follow
  /// `available`; nullptr = none.
  const char* registered = nullptr;

  /// The names built now: `available`, then the registered ones.
  std::vector<std::string> values() const {
    std::vector<std::string> out = available;
    if (registered != nullptr) {
      for (std::string& name : registered_choices(registered)) out.push_back(std::move(name));
    }
    return out;
  }
};

/// One value of the YAML tree, with its key path and position for errors.
class Value {
 public:
  Value(const Context* ctx, std::string path, YAML::Node node, YAML::Mark key_mark)
      : ctx_(ctx), path_(std::move(path)), node_(std::move(node)), key_mark_(key_mark) {}

  const YAML::Node& node() const { return node_; }
  const YAML::Mark& key_mark() const { return key_mark_; }
  const std::string& path() const { return path_; }
  /// The file it was read from: the scenario's, or a switch profile's.
  const Context& context() const { return *ctx_; }
  bool overridden() const { return ctx_->overrides.count(path_) > 0; }

  /// Where this value was given: the --set that set it (or set the list it is in), else its
  /// position in the file (the value, or its key when the value is empty).
  KeyOrigin origin() const {
    for (const auto& [key, where] : ctx_->overrides) {
      if (path_ == key || path_.rfind(key + "[", 0) == 0 || path_.rfind(key + ".", 0) == 0) {
        return KeyOrigin{where, 0, 0};
      }
    }
    const bool at_value = node_.IsDefined() && !node_.IsNull() && !node_.Mark().is_null();
    const YAML::Mark m = at_value ? node_.Mark() : key_mark_;
    if (m.is_null()) return KeyOrigin{ctx_->file, 0, 0};
    return KeyOrigin{ctx_->file, m.line + 1, m.column + 1};
  }

  /// Points at the value, or at its key when the value is empty (yaml-cpp marks a null value
  /// at the next token).
  [[noreturn]] void fail(const std::string& message) const {
    const bool at_value = node_.IsDefined() && !node_.IsNull() && !node_.Mark().is_null();
    ctx_->fail(path_, at_value ? node_.Mark() : key_mark_, message);
  }

  /// The scalar's text; fails with "expected <expected>, got a map" for anything else.
  std::string scalar(const std::string& expected) const {
    if (!node_.IsScalar()) fail("expected " + expected + ", got " + describe(node_));
    return node_.Scalar();
  }

  std::string string() const {
    std::string s = scalar("a string");
    if (s.empty()) fail("expected a non-empty string");
    return s;
  }

  int64_t integer(int64_t min, int64_t max) const {
    const std::string range =
        max == kInt64Max ? "an integer >= " + std::to_string(min)
                         : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    const std::string s = scalar(range);
    int64_t v = 0;
    const char* begin = s.data() + (!s.empty() && s[0] == '+');
    const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) fail("expected " + range + ", got '" + s + "'");
    if (ec != std::errc() || end != s.data() + s.size() || begin == s.data() + s.size()) {
      fail("expected an integer, got '" + s + "'");
    }
    if (v < min || v > max) fail("expected " + range + ", got '" + s + "'");
    return v;
  }

  uint64_t unsigned_integer() const {
    const std::string s = scalar("a non-negative integer");
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
      fail("expected a non-negative integer (0 to 2^64-1), got '" + s + "'");
    }
    return v;
  }

  /// A plain decimal number (3, 1.5) or a ratio "a:b"; must be >= 1.
  double ratio() const {
    const std::string expected = "a number >= 1 or a ratio like '3:1'";
    const double v = decimal_or_quotient(':', expected);
    if (v < 1) fail("expected " + expected + ", got '" + node_.Scalar() + "'");
    return v;
  }

  /// A number from `min` to `max`, written as a decimal (0.5, 2) or a fraction ("1/8").
  double fraction(double min, double max, const std::string& expected) const {
    const double v = decimal_or_quotient('/', expected);
    if (v < min || v > max) fail("expected " + expected + ", got '" + node_.Scalar() + "'");
    return v;
  }

  /// A plain number from 0 to `max`, in decimal or scientific notation ("1e-12"): the way bit
  /// error rates are written. `too_high` says why a value above `max` makes no sense.
  double small_number(double max, const std::string& expected, const std::string& too_high) const {
    const std::string s = scalar(expected);
    double v = 0;
    const char* begin = s.data() + (!s.empty() && s[0] == '+');
    const auto [end, ec] =
        std::from_chars(begin, s.data() + s.size(), v, std::chars_format::general);
    if (begin == s.data() + s.size() || ec != std::errc() || end != s.data() + s.size() ||
        !std::isfinite(v)) {
      fail("expected " + expected + ", got '" + s + "'");
    }
    if (v < 0) fail("expected " + expected + ", got a negative number '" + s + "'");
    if (v > max) fail("expected " + expected + ", got '" + s + "': " + too_high);
    return v;
  }

  int64_t quantity(const QuantitySpec& q) const {
    const std::string with_unit = std::string("a ") + q.noun + " with a unit, e.g. " + q.example;
    const std::string s = scalar(with_unit);
    static const std::regex bare_number(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
    if (std::regex_match(s, bare_number)) fail("expected " + with_unit + ", got '" + s + "'");
    if (!s.empty() && s[0] == '-') {
      fail(std::string("expected ") + q.expected + ", got a negative " + q.noun + " '" + s + "'");
    }
    int64_t v = 0;
    try {
      v = q.parse(s);
    } catch (const UnitError& e) {
      fail(e.what());
    }
    if (v < q.min || v > q.max) {
      fail(std::string("expected ") + q.expected + ", got " +
           (v == 0 ? "zero ('" + s + "')" + (q.zero_hint ? std::string("; ") + q.zero_hint : "")
                   : "'" + s + "'"));
    }
    return v;
  }

  /// YAML 1.2 booleans: true / false.
  bool boolean() const {
    const std::string s = scalar("true or false");
    if (s == "true") return true;
    if (s == "false") return false;
    fail("expected true or false, got '" + s + "'");
  }

  /// A YAML sequence; fails with "expected <expected>" for a scalar or a map.
  std::vector<Value> items(const std::string& expected, size_t min_len, size_t max_len) const {
    if (!node_.IsSequence()) fail("expected " + expected + ", got " + describe(node_));
    if (node_.size() < min_len || node_.size() > max_len) {
      fail("expected " + expected + ", got " + std::to_string(node_.size()) +
           (node_.size() == 1 ? " entry" : " entries"));
    }
    std::vector<Value> out;
    for (size_t i = 0; i < node_.size(); ++i) {
      out.emplace_back(ctx_, path_ + "[" + std::to_string(i) + "]", node_[i], key_mark_);
    }
    return out;
  }

  /// A map whose keys are free-form names (not schema keys), e.g. link names -> rates.
  std::vector<std::pair<std::string, Value>> named_entries(const std::string& expected) const {
    if (!node_.IsMap()) fail("expected " + expected + ", got " + describe(node_));
    std::vector<std::pair<std::string, Value>> out;
    for (const auto& entry : node_) {
      const YAML::Node key = entry.first;
      if (!key.IsScalar()) ctx_->fail(path_, key.Mark(), "expected a name, got " + describe(key));
      out.emplace_back(key.Scalar(),
                       Value(ctx_, path_ + "." + key.Scalar(), entry.second, key.Mark()));
    }
    return out;
  }

  /// The canonical name; a recognised but unbuilt name and an unknown one fail differently.
  std::string choice(const Choices& c) const {
    const std::string expected = std::string("a ") + c.noun + " name";
    const std::string s = scalar(expected);
    const std::vector<std::string> available = c.values();
    if (std::find(available.begin(), available.end(), s) != available.end()) return s;
    for (const auto& [alias, canonical] : c.aliases) {
      if (alias == s) return canonical;
    }
    const std::string only = "only " + join_words(available, " and ") +
                             (available.size() == 1 ? " is" : " are") +
                             " available in this version";
    if (std::find(c.not_built.begin(), c.not_built.end(), s) != c.not_built.end()) {
      fail("'" + s + "' is not built yet: " + only);
    }
    std::vector<std::string> known = available;
    known.insert(known.end(), c.not_built.begin(), c.not_built.end());
    for (const auto& alias : c.aliases) known.push_back(alias.first);
    std::string message = std::string("unknown ") + c.noun + " '" + s + "'";
    if (std::string guess = closest_match(s, known); !guess.empty()) {
      for (const auto& [alias, canonical] : c.aliases) {
        if (alias == guess) guess = canonical;  // suggest the name fabricsim writes
      }
      message += "; did you mean '" + guess + "'?";
    } else {
      message += "; expected one of: " + join_words(available, ", ");
    }
    fail(message);
  }

 private:
  /// A plain decimal number (in scientific notation too: 1e-1), or a quotient "a<sep>b" of two;
  /// fails naming `expected`.
  double decimal_or_quotient(char sep, const std::string& expected) const {
    const std::string s = scalar(expected);
    const auto number = [&](std::string_view t) {
      double v = 0;
      const auto [end, ec] =
          std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
      if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) {
        fail("expected " + expected + ", got '" + s + "'");
      }
      return v;
    };
    if (const size_t at = s.find(sep); at != std::string::npos) {
      const double den = number(std::string_view(s).substr(at + 1));
      if (den <= 0) fail("expected " + expected + ", got '" + s + "'");
      return number(std::string_view(s).substr(0, at)) / den;
    }
    return number(s);
  }

  const Context* ctx_;
  std::string path_;
  YAML::Node node_;
  YAML::Mark key_mark_;
};

// ---- the schema's building blocks ----------------------------------------------------------

// Physical ranges: beyond them simulated time (int64 ps, ~106 days) could overflow, and no real
// link or switch is there. Rates 1 Mb/s to 100 Tb/s; delays up to 1 s.
inline const QuantitySpec kPositiveRate{
    "rate",    "400Gbps",           parse_rate_bps,
    1'000'000, 100'000'000'000'000, "a rate from 1Mbps to 100Tbps"};
inline const QuantitySpec kNonNegativeTime{"time", "500ns",           parse_time_ps,
                                           0,      1'000'000'000'000, "a time from 0ns to 1s"};
inline const QuantitySpec kPositiveSize{"size", "2MiB",    parse_size_bytes,
                                        1,      kInt64Max, "a positive size"};
inline const QuantitySpec kNonNegativeSize{"size", "4KiB",    parse_size_bytes,
                                           0,      kInt64Max, "a size >= 0B"};
inline const QuantitySpec kTimeout{
    "time", "4ms", parse_time_ps, 1, 1'000'000'000'000, "a positive time up to 1s"};
// A deadlock detector scans every queue each interval: below 1 us it would be most of the run
// (1ps ran 320 us of a 14.5 ms run in 120 s).
inline const QuantitySpec kCheckInterval{"time",    "100us",           parse_time_ps,
                                         1'000'000, 1'000'000'000'000, "a time from 1us to 1s"};
// A NIC port or a switch-to-switch link: the fastest shipping ports are 800 Gb/s (ConnectX-8,
// Tomahawk 5), 1.6 Tb/s announced; 3.2 Tb/s leaves room for the next generation. NVLink and PCIe
// keys keep kPositiveRate (NVLink 5 is 1.8 TB/s = 14.4 Tb/s per GPU).
inline const QuantitySpec kNetworkRate{"rate",
                                       "400Gbps",
                                       parse_rate_bps,
                                       1'000'000,
                                       3'200'000'000'000,
                                       "a rate from 1Mbps to 3.2Tbps (the fastest NIC and switch "
                                       "ports are 800 Gb/s, 1.6 Tb/s announced)"};
inline const QuantitySpec kSweepSize{"size", "8KiB",         parse_size_bytes,
                                     1,      kMaxSweepBytes, "a size from 1B to 64GiB"};
/// switch.alpha and pfc.alpha.
inline constexpr const char* kAlphaExpected = "a number from 1/128 to 64, e.g. 1, 0.5 or 1/8";
/// The valid `topology.kind` values: the fabric families' kinds, as their registry
/// (topologies/registry.cpp) registers them (register_choice, sim/core/choices.hpp).
const Choices& topology_kinds();
/// The valid `workload.algorithm` values: auto (NCCL's cost model chooses), then the collective
/// algorithms' names, as their registry (collectives/algorithm_registry.cpp) registers them.
const Choices& workload_algorithms();
/// The valid `switch.scheduler` values: the built-in schedulers (strict, dwrr), then those
/// registered from outside the library (register_scheduler, schedulers/registry.hpp).
const Choices& switch_schedulers();
/// The valid `nic.congestion_control` values: auto and the built-in controls (none, dcqcn),
/// then those registered from outside the library (register_congestion_control,
/// congestion/cc_registry.hpp).
const Choices& congestion_controls();
inline const Choices kRedops{"redop", {"sum", "prod", "max", "min", "avg"}, {}, {}};

/// Bit error rates: 0 (error-free) to 1e-3.
inline double bit_error_rate(const Value& v) {
  return v.small_number(1e-3, "a bit error rate from 0 to 1e-3, e.g. 1e-12",
                        "above 1e-3 almost no frame would arrive intact");
}

/// A positive number of FLOPs or FLOP/s, decimal or scientific ("989e12").
inline double flops_number(const Value& v, const std::string& expected) {
  const double x = v.small_number(1e30, expected, "beyond any machine");
  if (!(x > 0)) v.fail("expected " + expected + ", got zero");
  return x;
}

/// Where a key's value goes: a member of its component's params struct (a section of Scenario,
/// a traffic flow, the training step or a layer). The member's initializer is the default.
using Slot = std::variant<int*, int64_t*, uint64_t*, double*, bool*, std::string*,
                          std::vector<int>*, std::vector<int64_t>*, std::vector<std::string>*,
                          std::vector<std::pair<std::string, int64_t>>*,
                          std::vector<std::pair<std::string, double>>*, std::vector<TrainingLayer>*,
                          std::vector<LinkEventConfig>*>;

template <class>
struct ClassOf;
template <class T, class M>
struct ClassOf<M T::*> {
  using type = T;
};
/// The member `Member` of a params struct: own<&NicConfig::mtu_bytes> style rows for a struct
/// read on its own (a flow, the training step), own<&Scenario::seed> for a top-level key.
template <auto Member>
Slot own(typename ClassOf<decltype(Member)>::type& t) {
  return &(t.*Member);
}
/// The member `Member` of the section `Section` of a scenario: at<&Scenario::nic,
/// &NicConfig::mtu_bytes>.
template <auto Section, auto Member>
Slot at(Scenario& s) {
  return &(s.*Section.*Member);
}

/// What values a key takes: how it is read and checked, and so its type, unit and range as
/// `fabricsim params` prints them.
struct Rule {
  enum Kind {
    kInt,             ///< an integer from min to max
    kUnsigned,        ///< 0 to 2^64-1
    kQuantity,        ///< a size, time or rate with a unit (*quantity)
    kChoice,          ///< a name of *choices
    kBool,            ///< true | false
    kString,          ///< a non-empty string
    kText,            ///< any scalar (`expected` names it)
    kRatio,           ///< a number >= 1 or "a:b"
    kFraction,        ///< a number from low to high, or "a/b" (`expected` names it)
    kBitErrorRate,    ///< 0 to 1e-3
    kPositiveNumber,  ///< a positive number, scientific allowed (`expected` names it)
    kCustom,          ///< read by the row's own parse function; `type` and `expected` describe it
  };
  Kind kind = kCustom;
  int64_t min = 0, max = 0;
  double low = 0, high = 0;
  const QuantitySpec* quantity = nullptr;
  const Choices* choices = nullptr;
  const char* expected = nullptr;  ///< kText, kFraction, kPositiveNumber; kCustom: its range
  const char* type = nullptr;      ///< kCustom: its type in words
};
inline Rule Int(int64_t min, int64_t max) {
  Rule r{Rule::kInt};
  r.min = min;
  r.max = max;
  return r;
}
inline Rule Unsigned() {
  return Rule{Rule::kUnsigned};
}
inline Rule Quantity(const QuantitySpec& q) {
  Rule r{Rule::kQuantity};
  r.quantity = &q;
  return r;
}
inline Rule Choice(const Choices& c) {
  Rule r{Rule::kChoice};
  r.choices = &c;
  return r;
}
inline Rule Bool() {
  return Rule{Rule::kBool};
}
inline Rule String() {
  return Rule{Rule::kString};
}
inline Rule Text(const char* expected) {
  Rule r{Rule::kText};
  r.expected = expected;
  return r;
}
inline Rule Ratio() {
  return Rule{Rule::kRatio};
}
inline Rule Fraction(double low, double high, const char* expected) {
  Rule r{Rule::kFraction};
  r.low = low;
  r.high = high;
  r.expected = expected;
  return r;
}
inline Rule BitErrorRate() {
  return Rule{Rule::kBitErrorRate};
}
inline Rule PositiveNumber(const char* expected) {
  Rule r{Rule::kPositiveNumber};
  r.expected = expected;
  return r;
}
/// A key read by its row's own parse function (lists, maps, keys that set more than a member).
inline Rule Custom(const char* type, const char* range) {
  Rule r{Rule::kCustom};
  r.type = type;
  r.expected = range;
  return r;
}

/// Reads `v` as `rule` says into `slot` (not for kCustom: the row's parse function reads it).
void read_rule(const Rule& rule, const Value& v, const Slot& slot);

/// A key that applies only while an earlier choice key has one of some values, e.g.
/// switch.shared_buffer only with switch.buffer_model shared. Like a key of another topology
/// kind, such a key given when it does not apply is an error, not ignored.
struct Condition {
  const char* path;                       ///< the choice key; its row comes earlier in fields()
  const char* values;                     ///< space-separated values under which the key applies
  std::string (*value)(const Scenario&);  ///< that key's value as parsed (or its default)
  const char* note = nullptr;             ///< why, added to the message; nullptr = none
};

/// One key of a scenario section.
struct Field {
  const char* section;  ///< "" for a top-level key
  const char* key;
  bool required;              ///< required (for the kinds below, when they are given)
  Rule rule;                  ///< what it takes
  Slot (*member)(Scenario&);  ///< where it goes; its initializer is the default
  const char* doc;            ///< one line
  /// Space-separated topology kinds the key applies to; nullptr = every kind. A key given for
  /// another kind is an error, not ignored.
  const char* kinds = nullptr;
  /// When set, `required` holds only for these kinds (the key stays optional for the others).
  const char* required_kinds = nullptr;
  /// When set, the key applies (and, if `required`, is required) only under this condition.
  const Condition* when = nullptr;
  /// A kCustom rule's reading; nullptr = read_rule into `member`.
  void (*parse)(const Value&, Scenario&) = nullptr;
};

/// Reads `v` into `s` as the row `f` says.
inline void read_field(const Field& f, const Value& v, Scenario& s) {
  if (f.parse) {
    f.parse(v, s);
  } else {
    read_rule(f.rule, v, f.member(s));
  }
}

/// One key of a map read on its own (a traffic flow, the training step, a layer).
template <class T>
struct ItemKey {
  const char* key;
  bool required;
  Rule rule;
  Slot (*member)(T&);
  const char* doc;
  void (*parse)(const Value&, T&) = nullptr;  ///< nullptr = read_rule into `member`
  /// Read by the section's own code, not row by row (keys that depend on each other).
  bool read_apart = false;
};

/// Reads `v` into `t` as the row `k` says.
template <class T>
void read_item(const ItemKey<T>& k, const Value& v, T& t) {
  if (k.parse) {
    k.parse(v, t);
  } else {
    read_rule(k.rule, v, k.member(t));
  }
}

/// `traffic:` is a list of flows, not a map of keys: its items' keys are traffic_keys(), not
/// rows of fields(), and --set cannot reach them.
inline constexpr const char* kTrafficSection = "traffic";
inline constexpr const char* kTrainingSection = "training";
/// `jobs:` is a list of jobs (job_keys(), params_jobs.cpp), like `traffic:`.
inline constexpr const char* kJobsSection = "jobs";
/// `topology:` may hold a block per kind (topology.spine-leaf: {...}) besides its plain keys.
inline constexpr const char* kTopologySection = "topology";
/// `switches:` maps switch names to these sections, whose keys (the same rows of fields()) they
/// override for that switch.
inline constexpr const char* kSwitchesSection = "switches";
inline const std::vector<std::string> kPerSwitchSections = {"pfc", "ecn"};

/// A section of the scenario. `when` applies to every key in it, like Field::when.
struct Section {
  const char* name;
  bool required;
  const Condition* when = nullptr;
  /// A required section is not required when this section is given (its keys neither).
  const char* unless = nullptr;
};
/// Every section, in the order the loader reads them.
std::span<const Section> sections();

// ---- each component's table, in its own file -----------------------------------------------

std::span<const Field> scenario_params();        ///< name, seed, transport, mode (params_workload)
std::span<const Field> topology_params();        ///< params_topology.cpp
std::span<const Field> link_params();            ///< params_link_nic.cpp
std::span<const Field> routing_params();         ///< params_routing.cpp
std::span<const Field> input_file_params();      ///< cost_model, measured (params_workload)
std::span<const Field> switch_params();          ///< params_link_nic.cpp
std::span<const Field> nic_params();             ///< params_link_nic.cpp
std::span<const Field> ecn_params();             ///< params_lossless.cpp
std::span<const Field> pfc_params();             ///< params_lossless.cpp
std::span<const Field> dcqcn_params();           ///< params_lossless.cpp
std::span<const Field> timely_params();          ///< params_timely.cpp
std::span<const Field> hpcc_params();            ///< params_hpcc.cpp
std::span<const Field> flow_params();            ///< params_flow.cpp
std::span<const Field> infiniband_params();      ///< params_lossless.cpp
std::span<const Field> workload_params();        ///< collective … root (params_workload)
std::span<const Field> nccl_params();            ///< params_workload.cpp
std::span<const Field> workload_sweep_params();  ///< minbytes, maxbytes, stepfactor
std::span<const Field> perftest_params();        ///< params_perftest.cpp
std::span<const Field> background_params();      ///< params_background.cpp
std::span<const Field> pcie_params();            ///< params_pcie.cpp
std::span<const Field> server_params();          ///< params_server.cpp
/// The keys a server profile may set, by section (topology, link, nic, pcie, nccl): those that
/// describe a server model, not the fabric or the run.
const std::vector<std::pair<std::string, std::vector<std::string>>>& server_profile_keys();
/// Whether the dotted `path` ("link.nvlink_rate") is one of server_profile_keys().
bool is_server_profile_key(const std::string& path);
/// The perftest programs perftest.test names (perftest/perftest.cpp simulates them).
const Choices& perftest_test_names();
std::span<const ItemKey<TrafficFlow>> traffic_keys();         ///< params_traffic.cpp
std::span<const ItemKey<TrainingConfig>> training_keys();     ///< params_training.cpp
std::span<const ItemKey<TrainingLayer>> layer_keys();         ///< params_training.cpp
std::span<const ItemKey<LinkEventConfig>> link_event_keys();  ///< params_link_events.cpp
/// topology.link_events (the key's value): each item a LinkEventConfig; origins recorded as
/// "topology.link_events[2]" and "topology.link_events[2].link".
void parse_link_events(const Value& v, Scenario& s);
/// The keys of a `jobs:` item (params_jobs.cpp).
std::span<const ItemKey<JobConfig>> job_keys();
/// `jobs:` (the section's value): each item a JobConfig, its nccl starting from the scenario's
/// nccl section (parsed before); origins recorded as "jobs[1]" and "jobs[1].gpus".
void parse_jobs(const Context& ctx, const Value& section, Scenario& s);
/// A --set / --vary VALUE read as YAML; throws ConfigError naming `where` and `path` for text
/// that is not (loader_override.cpp).
YAML::Node override_value(const std::string& value_text, const std::string& where,
                          const std::string& path);
/// --set / --vary on jobs: `jobs=[...]` (the whole list), `jobs.KEY=V` (every job's KEY) or
/// `jobs[I].KEY=V` (job I's). Returns false for a path outside jobs; throws ConfigError (exit
/// 2) naming `where` for a bad path or a scenario without a jobs list.
bool apply_jobs_override(YAML::Node& root, const std::string& path, const std::string& value_text,
                         const std::string& where, Context& ctx);

/// Every row, in the order the loader parses them (a choice key before the keys that depend on
/// it; the order also sets which of two mistakes is reported and how keys are listed).
const std::vector<Field>& fields();
/// The keys of `training:` (parse_training reads them; --set training.KEY takes them too).
const std::vector<std::string>& training_key_names();

// ---- shared helpers (loader.cpp) -----------------------------------------------------------

bool in_list(const char* list_text, const std::string& kind);
bool holds(const Condition* c, const Scenario& s);
const Condition* section_condition(const std::string& name);
bool applies_to(const Field& f, const Scenario& s);
bool required_for(const Field& f, const Scenario& s);
std::string leaf(const std::string& path);
std::string path_of(const Field& f);
std::vector<std::string> keys_of(const std::string& section, bool required_only = false,
                                 const Scenario* sc = nullptr);
bool is_section(const std::string& name);
std::vector<std::string> all_paths();
void collect(const Context& ctx, const YAML::Node& map, const std::string& section,
             std::map<std::string, Value>& found, const std::string& base = "");
int directness(const Context& main, const Value& v);
std::string place(const KeyOrigin& o);
void parse_fields(const Context& main, const std::map<std::string, Value>& found, Scenario& s,
                  bool require, const std::string& whose,
                  const std::map<std::string, Value>* inherited = nullptr);
std::map<std::string, Value> map_keys(
    const Context& ctx, const Value& item, const std::string& path,
    const std::vector<std::string>& keys, const std::string& what,
    std::span<const std::pair<const char*, const char*>> aliases = {});

// ---- overrides (loader_override.cpp) -------------------------------------------------------

std::string kind_block_of(const std::string& path);
void apply_override(YAML::Node& root, const std::string& text, const std::string& flag,
                    Context& ctx);
void check_not_set(const std::string& text, const std::map<std::string, std::string>& set);

// ---- each component's reading and validation -----------------------------------------------

void expand_kind_blocks(const Context& ctx, std::map<std::string, Value>& found);  // topology
void check_link(const std::map<std::string, Value>& found, Scenario& s);           // link
void check_nic(const Context& ctx, const std::map<std::string, Value>& found, const Scenario& s);
void check_switch(const Context& main, const std::map<std::string, Value>& found,
                  const Scenario& s);
/// Reads a `kind` ("switch", "server") profile file that `profile` names, relative to the
/// scenario's folder, into `pctx` (its file name set); its root must be a map (`expected`
/// says what the error calls for). Throws ConfigError at the profile key (unreadable file) or
/// into the profile (empty, not a map, bad YAML).
YAML::Node read_profile(const Context& ctx, const Value& profile, Context& pctx,
                        const std::string& kind, const std::string& expected);
void merge_profile(const Context& ctx, const Value& profile, Context& pctx,
                   std::map<std::string, Value>& found);
void check_dateline(const std::map<std::string, Value>& found, const Scenario& s);  // routing
void apply_dcqcn_preset(const std::string& name, Scenario& s);
void check_pfc(const Context& main, const Scenario& sc, const std::map<std::string, Value>& own,
               const std::map<std::string, Value>* top = nullptr);
void check_dcqcn(const std::map<std::string, Value>& found, const Scenario& s);
void check_timely(const std::map<std::string, Value>& found, Scenario& s);
void check_hpcc(const std::map<std::string, Value>& found, Scenario& s);
/// Warns that the flow section does nothing outside mode: flow (params_flow.cpp).
void check_flow(const std::map<std::string, Value>& found, Scenario& s);
void check_background(const std::map<std::string, Value>& found, Scenario& s);
void check_congestion_control(const std::map<std::string, Value>& found, Scenario& s);  // nic
void check_ecn_reach(const Scenario& s, const EcnConfig& ecn, const PfcConfig& pfc,
                     const std::map<std::string, Value>& own,
                     const std::map<std::string, Value>* top,
                     const std::map<std::string, Value>& all, std::vector<std::string>& warnings);
void warn_pfc(const Scenario& s, const PfcConfig& pfc, const std::map<std::string, Value>& own,
              const std::map<std::string, Value>* top, const std::string& where, bool pfc_somewhere,
              std::vector<std::string>& warnings);
void parse_switches(const Context& ctx, const Value& section,
                    const std::map<std::string, Value>& found, Scenario& s);
void check_workload(const std::map<std::string, Value>& found, Scenario& s);
/// perftest.enabled from the section's presence; a client that is its own server.
void check_perftest(const std::map<std::string, Value>& found, Scenario& s);
/// pcie.lanes and pcie.max_payload take the values PCIe has; the `pcie:` section needs
/// topology.gpu_interconnect: pcie (it changes nothing else).
void check_pcie(const Context& main, const std::map<std::string, Value>& found, Scenario& s);
/// Reads the server profile that server.profile names and adds its keys the scenario does not
/// set to `found` (params_server.cpp), as merge_profile does for a switch profile.
void merge_server_profile(const Context& ctx, const Value& profile, Context& pctx,
                          std::map<std::string, Value>& found);
extern const std::string kTrafficExpected;
bool host_index(const std::string& text, int64_t& index);
void parse_traffic(const Context& ctx, const Value& section, Scenario& s);
/// `path`: where the section is ("training", or a job's "jobs[1].training"), for its keys'
/// paths and errors.
void parse_training(const Context& ctx, const Value& section, Scenario& s,
                    const std::string& path = kTrainingSection);

}  // namespace fabricsim::config_detail
