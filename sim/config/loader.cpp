// Scenario YAML -> Scenario. The schema is the table kFields below (one row per key: section,
// key, required, parser); everything else (valid-key lists, required-key lists, override
// paths, "did you mean") is derived from it, so adding a key is one row.
//
// Order of work: read the file, parse YAML (keeping marks), apply --set overrides to the tree,
// check every map for unknown and duplicate keys, read and check the switch profile (if
// switch.profile names one) and add its keys that the scenario does not set, then parse each
// field into the Scenario, check the required keys, read the traffic list (its item keys are
// the small table kTrafficKeys) and run the few cross-field checks. The first mistake found is
// thrown as a ConfigError.
#include "sim/config/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <span>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include "sim/config/yaml_text.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

std::string located_message(const std::string& where, int line, int column,
                            const std::string& key_path, const std::string& message) {
  return where +
         (line > 0 ? ":" + std::to_string(line) + ":" + std::to_string(column) : std::string()) +
         ": " + (key_path.empty() ? std::string() : key_path + ": ") + message;
}

std::string config_warning(const KeyOrigin& origin, const std::string& key_path,
                           const std::string& message) {
  return "fabricsim: warning: " +
         located_message(origin.where, origin.line, origin.column, key_path, message);
}

ConfigError::ConfigError(std::string where, int line, int column, std::string key_path,
                         std::string message)
    : std::runtime_error(located_message(where, line, column, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  // `word` written short: its letters in order in `c`, same first letter, at least half as long.
  const auto abbreviates = [&](const std::string& c) {
    if (word.empty() || c.empty() || word[0] != c[0] || 2 * word.size() < c.size()) return false;
    size_t i = 0;
    for (size_t j = 0; j < c.size() && i < word.size(); ++j) i += word[i] == c[j];
    return i == word.size();
  };
  std::string best, best_abbreviated;
  size_t best_distance = limit + 1, best_abbreviated_distance = std::string::npos;
  std::vector<size_t> row;
  for (const std::string& c : candidates) {
    // Levenshtein distance, one row at a time.
    row.resize(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] != c[j - 1])});
        diagonal = above;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
    if (row[c.size()] < best_abbreviated_distance && abbreviates(c)) {
      best_abbreviated_distance = row[c.size()];
      best_abbreviated = c;
    }
  }
  return best.empty() ? best_abbreviated : best;
}

std::string read_config_file(const std::string& path, const std::string& noun) {
  try {
    return read_input_file(path, noun, kMaxConfigFileBytes,
                           "a scenario, switch profile or cost file is a page of YAML");
  } catch (const InputFileError& e) {
    throw ConfigError(path, 0, 0, "", e.what());
  }
}

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxCount = 1'000'000;               // switches or hosts per dimension
constexpr int64_t kMaxSweepBytes = int64_t{64} << 30;  // 64 GiB

/// "a, b and c".
std::string join_words(const std::vector<std::string>& words, const std::string& last_sep) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? last_sep : ", ";
    out += words[i];
  }
  return out;
}

std::string describe(const YAML::Node& node) {
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
    if (std::find(c.available.begin(), c.available.end(), s) != c.available.end()) return s;
    for (const auto& [alias, canonical] : c.aliases) {
      if (alias == s) return canonical;
    }
    const std::string only = "only " + join_words(c.available, " and ") +
                             (c.available.size() == 1 ? " is" : " are") +
                             " available in this version";
    if (std::find(c.not_built.begin(), c.not_built.end(), s) != c.not_built.end()) {
      fail("'" + s + "' is not built yet: " + only);
    }
    std::vector<std::string> known = c.available;
    known.insert(known.end(), c.not_built.begin(), c.not_built.end());
    for (const auto& alias : c.aliases) known.push_back(alias.first);
    std::string message = std::string("unknown ") + c.noun + " '" + s + "'";
    if (std::string guess = closest_match(s, known); !guess.empty()) {
      for (const auto& [alias, canonical] : c.aliases) {
        if (alias == guess) guess = canonical;  // suggest the name fabricsim writes
      }
      message += "; did you mean '" + guess + "'?";
    } else {
      message += "; expected one of: " + join_words(c.available, ", ");
    }
    fail(message);
  }

 private:
  /// A plain decimal number, or a quotient "a<sep>b" of two; fails naming `expected`.
  double decimal_or_quotient(char sep, const std::string& expected) const {
    const std::string s = scalar(expected);
    const auto number = [&](std::string_view t) {
      double v = 0;
      const auto [end, ec] =
          std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::fixed);
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

// ---- the schema --------------------------------------------------------------------------

// Physical ranges: beyond them simulated time (int64 ps, ~106 days) could overflow, and no real
// link or switch is there. Rates 1 Mb/s to 100 Tb/s; delays up to 1 s.
const QuantitySpec kPositiveRate{"rate",    "400Gbps",           parse_rate_bps,
                                 1'000'000, 100'000'000'000'000, "a rate from 1Mbps to 100Tbps"};
const QuantitySpec kNonNegativeTime{"time", "500ns",           parse_time_ps,
                                    0,      1'000'000'000'000, "a time from 0ns to 1s"};
const QuantitySpec kPositiveSize{"size", "2MiB", parse_size_bytes, 1, kInt64Max, "a positive size"};
const QuantitySpec kNonNegativeSize{"size", "4KiB", parse_size_bytes, 0, kInt64Max, "a size >= 0B"};
const QuantitySpec kTimeout{
    "time", "4ms", parse_time_ps, 1, 1'000'000'000'000, "a positive time up to 1s"};
// A deadlock detector scans every queue each interval: below 1 us it would be most of the run
// (1ps ran 320 us of a 14.5 ms run in 120 s).
const QuantitySpec kCheckInterval{"time",    "100us",           parse_time_ps,
                                  1'000'000, 1'000'000'000'000, "a time from 1us to 1s"};
const QuantitySpec kRateLimit{
    "rate",
    "100Gbps",
    parse_rate_bps,
    1'000'000,
    3'200'000'000'000,
    "a rate from 1Mbps to 3.2Tbps (at most link.host_rate, the NIC's line "
    "rate)",
    "leave qp_rate_limit out for line rate"};
// nic.mtu is the RDMA path MTU, the payload per packet (wire.hpp adds the headers). Both
// transports are IBTA's, whose path MTU is 256, 512, 1024, 2048 or 4096 B; a RoCE NIC on a
// 9000-byte jumbo-frame Ethernet still uses a 4096-B RDMA MTU. Values between are accepted (the
// pfc-victim-flow scenario uses 1000B).
const QuantitySpec kMtu{"size",
                        "4096B",
                        parse_size_bytes,
                        256,
                        4096,
                        "an MTU from 256B to 4096B (the RDMA payload per packet: the IBTA path "
                        "MTUs of RoCE and InfiniBand are 256, 512, 1024, 2048 and 4096 B, also "
                        "over 9000-byte Ethernet jumbo frames)"};
// A NIC port or a switch-to-switch link: the fastest shipping ports are 800 Gb/s (ConnectX-8,
// Tomahawk 5), 1.6 Tb/s announced; 3.2 Tb/s leaves room for the next generation. NVLink and PCIe
// keys keep kPositiveRate (NVLink 5 is 1.8 TB/s = 14.4 Tb/s per GPU).
const QuantitySpec kNetworkRate{"rate",
                                "400Gbps",
                                parse_rate_bps,
                                1'000'000,
                                3'200'000'000'000,
                                "a rate from 1Mbps to 3.2Tbps (the fastest NIC and switch ports "
                                "are 800 Gb/s, 1.6 Tb/s announced)"};
// One link's one-way delay: 1 ms is 200 km of fibre (5 ns/m); a data-centre cable is under
// 1 km (5 us). Longer delays also outgrow the NIC's retransmission timeout.
const QuantitySpec kPropagationDelay{"time",
                                     "500ns",
                                     parse_time_ps,
                                     0,
                                     1'000'000'000,
                                     "a time from 0ns to 1ms (1 ms is 200 km of fibre at 5 ns/m; "
                                     "a data-centre link is under 1 km, 5 us)"};
// A switch's packet buffer: the largest are a few GB (Broadcom Jericho2: 8 GB of HBM).
const QuantitySpec kSwitchBuffer{"size",
                                 "64MB",
                                 parse_size_bytes,
                                 1,
                                 int64_t{64} << 30,
                                 "a size from 1B to 64GiB (the largest switch buffers are a few "
                                 "GB, e.g. Broadcom Jericho2's 8 GB of HBM)"};
const QuantitySpec kSweepSize{"size", "8KiB",         parse_size_bytes,
                              1,      kMaxSweepBytes, "a size from 1B to 64GiB"};
// PFC: a threshold, offset or headroom written is a size; 0 (the derived value) by leaving it out.
const QuantitySpec kXoff{"size",
                         "200KB",
                         parse_size_bytes,
                         1,
                         kInt64Max,
                         "a positive size",
                         "leave xoff out to derive it from the buffer"};
const QuantitySpec kXonOffset{"size",
                              "8KiB",
                              parse_size_bytes,
                              1,
                              kInt64Max,
                              "a positive size",
                              "leave xon_offset out for two MTU frames"};
const QuantitySpec kHeadroom{"size",
                             "100KB",
                             parse_size_bytes,
                             1,
                             kInt64Max,
                             "a positive size",
                             "leave headroom out to size it by the formula"};
/// SONiC's pfcwd accepts detection times to 5 s and restoration times to 60 s.
const QuantitySpec kWatchdogTime{
    "time", "200ms", parse_time_ps, 1, 60'000'000'000'000, "a positive time up to 60s"};
const QuantitySpec kDcqcnRate{"rate",
                              "40Mbps",
                              parse_rate_bps,
                              1'000'000,
                              100'000'000'000'000,
                              "a rate from 1Mbps to 100Tbps"};

/// NCCL_BUFFSIZE: NCCL keeps buffer sizes in an int; fabricsim takes 64 KiB (8 KiB steps) to
/// 1 GiB.
const QuantitySpec kNcclBuffsize{"size", "4MiB",           parse_size_bytes,
                                 65'536, int64_t{1} << 30, "a buffer size from 64KiB to 1GiB"};
const QuantitySpec kNcclLatency{
    "time", "2us", parse_time_ps, 0, 1'000'000'000'000, "a time from 0s to 1s"};
const Choices kTransports{"transport", {"roce", "infiniband"}, {}, {}};
const Choices kModes{"mode", {"packet", "flow"}, {}, {}};
const Choices kTopologyKinds{
    "topology kind", {"spine-leaf", "fat-tree", "rail-optimized", "torus"}, {}, {}};
const Choices kRoutingAlgorithms{
    "routing algorithm", {"auto", "ecmp", "up_down", "dimension_order"}, {}, {}};
const Choices kLoadBalancing{"load balancing", {"per_flow", "per_packet"}, {}, {}};
const Choices kCollectives{
    "collective",
    {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"},
    {},
    // NCCL's own spellings: its API (ncclAllReduce, NCCL_INFO lines "AllReduce: opCount ..."),
    // nccl-tests' binaries (all_reduce_perf), and the common lower-case contractions.
    {{"allreduce", "all_reduce"},
     {"allgather", "all_gather"},
     {"reducescatter", "reduce_scatter"},
     {"all_to_all", "alltoall"},
     {"send_recv", "sendrecv"},
     {"AllReduce", "all_reduce"},
     {"AllGather", "all_gather"},
     {"ReduceScatter", "reduce_scatter"},
     {"Broadcast", "broadcast"},
     {"Reduce", "reduce"},
     {"AllToAll", "alltoall"},
     {"SendRecv", "sendrecv"},
     {"ncclAllReduce", "all_reduce"},
     {"ncclAllGather", "all_gather"},
     {"ncclReduceScatter", "reduce_scatter"},
     {"ncclBroadcast", "broadcast"},
     {"ncclReduce", "reduce"},
     {"all_reduce_perf", "all_reduce"},
     {"all_gather_perf", "all_gather"},
     {"reduce_scatter_perf", "reduce_scatter"},
     {"broadcast_perf", "broadcast"},
     {"reduce_perf", "reduce"},
     {"alltoall_perf", "alltoall"},
     {"sendrecv_perf", "sendrecv"}}};
// NCCL_ALGO and NCCL_PROTO spell them Ring, Tree, LL, LL128, Simple.
const Choices kAlgorithms{"algorithm",
                          {"auto", "ring", "tree", "halving_doubling", "p2p"},
                          {},
                          {{"Ring", "ring"}, {"Tree", "tree"}}};
const Choices kProtocols{"protocol",
                         {"auto", "ll", "ll128", "simple"},
                         {},
                         {{"LL", "ll"}, {"LL128", "ll128"}, {"Simple", "simple"}}};
const Choices kDatatypes{
    "datatype",
    {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16"},
    {},
    {{"char", "int8"},
     {"int", "int32"},
     {"float16", "half"},
     {"float32", "float"},
     {"float64", "double"}}};
const Choices kRedops{"redop", {"sum", "prod", "max", "min", "avg"}, {}, {}};
const Choices kBufferModels{"buffer model", {"static", "shared"}, {}, {}};
const Choices kSchedulers{"scheduler", {"strict", "dwrr"}, {}, {}};
const Choices kEcnMarkAt{"marking point", {"enqueue", "dequeue"}, {}, {}};
const Choices kPfcThresholds{"threshold model", {"static", "dynamic"}, {}, {}};
const Choices kWatchdogActions{"watchdog action", {"drop", "forward"}, {}, {}};
const Choices kDcqcnPresets{"DCQCN preset", {"paper", "connectx"}, {}, {}};

/// Bit error rates: 0 (error-free) to 1e-3.
double bit_error_rate(const Value& v) {
  return v.small_number(1e-3, "a bit error rate from 0 to 1e-3, e.g. 1e-12",
                        "above 1e-3 almost no frame would arrive intact");
}

/// A key that applies only while an earlier choice key has one of some values, e.g.
/// switch.shared_buffer only with switch.buffer_model shared. Like a key of another topology
/// kind, such a key given when it does not apply is an error, not ignored.
struct Condition {
  const char* path;                       ///< the choice key; its row comes earlier in kFields
  const char* values;                     ///< space-separated values under which the key applies
  std::string (*value)(const Scenario&);  ///< that key's value as parsed (or its default)
  const char* note = nullptr;             ///< why, added to the message; nullptr = none
};
const Condition kStaticBuffer{"switch.buffer_model", "static",
                              [](const Scenario& s) { return s.sw.buffer_model; }};
const Condition kSharedBuffer{"switch.buffer_model", "shared",
                              [](const Scenario& s) { return s.sw.buffer_model; }};
const Condition kDwrr{"switch.scheduler", "dwrr", [](const Scenario& s) { return s.sw.scheduler; }};
const Condition kStaticThreshold{"pfc.threshold", "static",
                                 [](const Scenario& s) { return s.pfc.threshold; }};
const Condition kDynamicThreshold{"pfc.threshold", "dynamic",
                                  [](const Scenario& s) { return s.pfc.threshold; }};
const Condition kRocePfc{"transport", "roce", [](const Scenario& s) { return s.transport; },
                         "InfiniBand uses credit-based flow control per virtual lane, not PFC "
                         "(set it in the infiniband section)"};
const Condition kRoceDcqcn{"transport", "roce", [](const Scenario& s) { return s.transport; },
                           "DCQCN is congestion control for RoCE"};
const Condition kInfiniband{"transport", "infiniband",
                            [](const Scenario& s) { return s.transport; },
                            "RoCE's flow control is PFC (the pfc section)"};
const Condition kWraparound{
    "topology.wraparound", "true",
    [](const Scenario& s) { return std::string(s.topology.wraparound ? "true" : "false"); },
    "a mesh (topology.wraparound: false) has no wraparound links for a dateline to cut"};

/// `traffic:` is a list of flows, not a map of keys: its items' keys are kTrafficKeys, not rows
/// of kFields, and --set cannot reach them.
constexpr const char* kTrafficSection = "traffic";
constexpr const char* kTrainingSection = "training";
/// `topology:` may hold a block per kind (topology.spine-leaf: {...}) besides its plain keys.
constexpr const char* kTopologySection = "topology";
/// The keys of `training:` (parse_training reads them; --set training.KEY takes them too).
const std::vector<std::string> kTrainingKeys = {"dp",
                                                "tp",
                                                "pp",
                                                "microbatches",
                                                "bucket_cap",
                                                "first_bucket_cap",
                                                "optimizer_time",
                                                "gpu_peak_flops",
                                                "efficiency",
                                                "layers"};

/// A section of the scenario. `when` applies to every key in it, like Field::when.
struct Section {
  const char* name;
  bool required;
  const Condition* when = nullptr;
  /// A required section is not required when this section is given (its keys neither).
  const char* unless = nullptr;
};
const Section kSections[] = {{"topology", true},
                             {"link", true},
                             {"switch", true},
                             {"nic", false},
                             {"routing", false},
                             {"ecn", false},
                             {"pfc", false, &kRocePfc},
                             {"dcqcn", false, &kRoceDcqcn},
                             {"infiniband", false, &kInfiniband},
                             {"switches", false},
                             {"workload", true, nullptr, "traffic training"},
                             {"nccl", false},
                             {"measured", false},
                             {kTrafficSection, false},
                             {kTrainingSection, false}};
/// `switches:` maps switch names to these sections, whose keys (the same rows of kFields) they
/// override for that switch.
constexpr const char* kSwitchesSection = "switches";
const std::vector<std::string> kPerSwitchSections = {"pfc", "ecn"};

/// The condition of the section `name` (nullptr for none or for a top-level key).
const Condition* section_condition(const std::string& name) {
  for (const Section& x : kSections) {
    if (name == x.name) return x.when;
  }
  return nullptr;
}

struct Field {
  const char* section;  ///< "" for a top-level key
  const char* key;
  bool required;  ///< required (for the kinds below, when they are given)
  void (*parse)(const Value&, Scenario&);
  /// Space-separated topology kinds the key applies to; nullptr = every kind. A key given for
  /// another kind is an error, not ignored.
  const char* kinds = nullptr;
  /// When set, `required` holds only for these kinds (the key stays optional for the others).
  const char* required_kinds = nullptr;
  /// When set, the key applies (and, if `required`, is required) only under this condition.
  const Condition* when = nullptr;
};

bool in_list(const char* list_text, const std::string& kind) {
  std::string_view list(list_text);
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(' ', start), list.size());
    if (list.substr(start, end - start) == kind) return true;
    start = end + 1;
  }
  return false;
}

bool holds(const Condition* c, const Scenario& s) {
  return c == nullptr || in_list(c->values, c->value(s));
}

bool applies_to(const Field& f, const Scenario& s) {
  return (f.kinds == nullptr || in_list(f.kinds, s.topology.kind)) &&
         holds(section_condition(f.section), s) && holds(f.when, s);
}

bool required_for(const Field& f, const Scenario& s) {
  return f.required && applies_to(f, s) &&
         (f.required_kinds == nullptr || in_list(f.required_kinds, s.topology.kind));
}

/// The last part of a dotted path: "buffer_model" of "switch.buffer_model".
std::string leaf(const std::string& path) {
  return path.substr(path.rfind('.') + 1);
}

std::vector<int> int_list(const Value& v, size_t min_len, size_t max_len, int64_t min,
                          int64_t max) {
  std::vector<int> out;
  const std::string what = "a list of " + std::to_string(min_len) + " to " +
                           std::to_string(max_len) + " integers, e.g. [4, 4, 4]";
  for (const Value& item : v.items(what, min_len, max_len)) {
    out.push_back(int(item.integer(min, max)));
  }
  return out;
}

/// pfc.priorities: 1 to 8 distinct priorities 0..7, in the order written.
std::vector<int> priority_list(const Value& v) {
  std::vector<int> out;
  for (const Value& item :
       v.items("a list of 1 to 8 distinct priorities from 0 to 7, e.g. [3]", 1, 8)) {
    const int p = int(item.integer(0, 7));
    if (std::find(out.begin(), out.end(), p) != out.end()) {
      item.fail("priority " + std::to_string(p) + " is listed twice; expected distinct priorities");
    }
    out.push_back(p);
  }
  return out;
}

/// Sets every DCQCN parameter to preset `name`'s; `enabled` is the scenario's to say.
void apply_dcqcn_preset(const std::string& name, Scenario& s) {
  const bool enabled = s.dcqcn.enabled;
  s.dcqcn = dcqcn_preset(name);
  s.dcqcn.enabled = enabled;
  s.dcqcn.preset = name;
}

const std::string kAlphaExpected = "a number from 1/128 to 64, e.g. 1, 0.5 or 1/8";

// clang-format off
const Field kFields[] = {
  {"", "name", false, [](const Value& v, Scenario& s) { s.name = v.string(); }},
  {"", "seed", false, [](const Value& v, Scenario& s) { s.seed = v.unsigned_integer(); }},
  {"", "transport", false, [](const Value& v, Scenario& s) { s.transport = v.choice(kTransports); }},
  {"", "mode", false, [](const Value& v, Scenario& s) { s.mode = v.choice(kModes); }},

  {"topology", "kind", true,
   [](const Value& v, Scenario& s) { s.topology.kind = v.choice(kTopologyKinds); }},
  {"topology", "oversubscription", false,
   [](const Value& v, Scenario& s) { s.topology.oversubscription = v.ratio(); },
   "spine-leaf fat-tree rail-optimized"},
  {"topology", "leaves", true,
   [](const Value& v, Scenario& s) { s.topology.leaves = int(v.integer(1, kMaxCount)); },
   "spine-leaf"},
  {"topology", "spines", true,  // 0 only means something with rail_only (the builders check)
   [](const Value& v, Scenario& s) { s.topology.spines = int(v.integer(0, kMaxCount)); },
   "spine-leaf rail-optimized", "spine-leaf"},
  {"topology", "hosts_per_leaf", true,
   [](const Value& v, Scenario& s) { s.topology.hosts_per_leaf = int(v.integer(1, kMaxCount)); },
   "spine-leaf"},
  {"topology", "k", true,
   [](const Value& v, Scenario& s) { s.topology.k = int(v.integer(2, 65536)); }, "fat-tree"},
  {"topology", "agg_oversubscription", false,
   [](const Value& v, Scenario& s) { s.topology.agg_oversubscription = v.ratio(); }, "fat-tree"},
  {"topology", "gpus_per_server", true,
   [](const Value& v, Scenario& s) { s.topology.gpus_per_server = int(v.integer(1, 1024)); },
   "spine-leaf fat-tree rail-optimized", "rail-optimized"},
  {"topology", "pods", false,
   [](const Value& v, Scenario& s) { s.topology.pods = int(v.integer(1, 65536)); }, "fat-tree"},
  {"topology", "nics_per_server", false,
   [](const Value& v, Scenario& s) { s.topology.nics_per_server = int(v.integer(1, 1024)); },
   "rail-optimized"},
  {"topology", "rails", false,
   [](const Value& v, Scenario& s) { s.topology.rails = int(v.integer(1, 1024)); },
   "rail-optimized"},
  {"topology", "servers_per_su", true,
   [](const Value& v, Scenario& s) { s.topology.servers_per_su = int(v.integer(1, kMaxCount)); },
   "rail-optimized"},
  {"topology", "scalable_units", false,
   [](const Value& v, Scenario& s) { s.topology.scalable_units = int(v.integer(1, kMaxCount)); },
   "rail-optimized"},
  {"topology", "planes", false,
   [](const Value& v, Scenario& s) { s.topology.planes = int(v.integer(1, 64)); },
   "rail-optimized"},
  {"topology", "rail_only", false,
   [](const Value& v, Scenario& s) { s.topology.rail_only = v.boolean(); }, "rail-optimized"},
  {"topology", "dims", true,
   [](const Value& v, Scenario& s) { s.topology.dims = int_list(v, 2, 3, 2, 32767); }, "torus"},
  {"topology", "wraparound", false,
   [](const Value& v, Scenario& s) { s.topology.wraparound = v.boolean(); }, "torus"},
  {"topology", "dim_rates", false,
   [](const Value& v, Scenario& s) {
     s.topology.dim_rates_bps.clear();
     for (const Value& r : v.items("a list of rates, one per dimension, e.g. [400Gbps, 400Gbps]", 1, 3)) {
       s.topology.dim_rates_bps.push_back(r.quantity(kNetworkRate));
     }
   }, "torus"},
  {"topology", "failed_links", false,
   [](const Value& v, Scenario& s) {
     s.topology.failed_links.clear();
     for (const Value& l : v.items("a list of links like leaf0-spine1", 0, 1'000'000)) {
       s.topology.failed_links.push_back(l.string());
     }
   }},
  {"topology", "degraded_links", false,
   [](const Value& v, Scenario& s) {
     s.topology.degraded_links.clear();
     for (const auto& [name, rate] : v.named_entries("a map of links to rates, e.g. {leaf0-spine1: 200Gbps}")) {
       s.topology.degraded_links.emplace_back(name, rate.quantity(kNetworkRate));
     }
   }},
  {"topology", "link_bit_error_rates", false,
   [](const Value& v, Scenario& s) {
     s.topology.link_bit_error_rates.clear();
     for (const auto& [name, ber] : v.named_entries("a map of links to bit error rates, e.g. {leaf0-spine1: 1e-8}")) {
       s.topology.link_bit_error_rates.emplace_back(name, bit_error_rate(ber));
       s.origins[ber.path()] = ber.origin();  // build_fabric's errors point at the entry
     }
   }},

  {"link", "host_rate", true,
   [](const Value& v, Scenario& s) { s.link.host_rate_bps = v.quantity(kNetworkRate); }},
  {"link", "fabric_rate", false,  // default: host_rate (set after all fields are read)
   [](const Value& v, Scenario& s) { s.link.fabric_rate_bps = v.quantity(kNetworkRate); }},
  {"link", "propagation_delay", true,
   [](const Value& v, Scenario& s) { s.link.propagation_delay_ps = v.quantity(kPropagationDelay); }},
  {"link", "nvlink_rate", true,
   [](const Value& v, Scenario& s) { s.link.nvlink_rate_bps = v.quantity(kPositiveRate); },
   "spine-leaf fat-tree rail-optimized", "rail-optimized"},
  {"link", "pcie_rate", false,
   [](const Value& v, Scenario& s) { s.link.pcie_rate_bps = v.quantity(kPositiveRate); }},
  {"link", "pcie_latency", false,
   [](const Value& v, Scenario& s) { s.link.pcie_latency_ps = v.quantity(kNonNegativeTime); }},
  {"link", "bit_error_rate", false,
   [](const Value& v, Scenario& s) { s.link.bit_error_rate = bit_error_rate(v); }},

  {"routing", "algorithm", false,
   [](const Value& v, Scenario& s) { s.routing.algorithm = v.choice(kRoutingAlgorithms); }},
  {"routing", "load_balancing", false,
   [](const Value& v, Scenario& s) { s.routing.load_balancing = v.choice(kLoadBalancing); }},
  {"routing", "dateline_class", false,  // not nic.traffic_class (check_dateline)
   [](const Value& v, Scenario& s) { s.routing.dateline_class = int(v.integer(0, 7)); },
   "torus", nullptr, &kWraparound},
  {"routing", "bounce_class", false,  // a lossless class other than nic.traffic_class (run.cpp)
   [](const Value& v, Scenario& s) { s.routing.bounce_class = int(v.integer(0, 7)); }},

  {"", "cost_model", false, [](const Value& v, Scenario& s) { s.cost_model = v.string(); }},
  {"measured", "nccl_tests", false,
   [](const Value& v, Scenario& s) { s.measured_nccl_tests = v.string(); }},

  {"switch", "latency", true,  // required: it changes every latency-bound result
   [](const Value& v, Scenario& s) { s.sw.latency_ps = v.quantity(kNonNegativeTime); }},
  {"switch", "radix", false,
   [](const Value& v, Scenario& s) { s.sw.radix = int(v.integer(2, 65536)); }},
  {"switch", "buffer_model", false,  // before the keys that apply to one model
   [](const Value& v, Scenario& s) { s.sw.buffer_model = v.choice(kBufferModels); }},
  {"switch", "buffer_per_port", true,
   [](const Value& v, Scenario& s) { s.sw.buffer_per_port_bytes = v.quantity(kSwitchBuffer); },
   nullptr, nullptr, &kStaticBuffer},
  {"switch", "shared_buffer", true,
   [](const Value& v, Scenario& s) { s.sw.shared_buffer_bytes = v.quantity(kSwitchBuffer); },
   nullptr, nullptr, &kSharedBuffer},
  {"switch", "reserved_per_queue", false,  // 8 x it < shared_buffer: checked after all fields
   [](const Value& v, Scenario& s) { s.sw.reserved_per_queue_bytes = v.quantity(kNonNegativeSize); },
   nullptr, nullptr, &kSharedBuffer},
  {"switch", "alpha", false,
   [](const Value& v, Scenario& s) {
     s.sw.alpha = v.fraction(1.0 / 128, 64, kAlphaExpected);
   }, nullptr, nullptr, &kSharedBuffer},
  {"switch", "cut_through", false,
   [](const Value& v, Scenario& s) { s.sw.cut_through = v.boolean(); }},
  {"switch", "scheduler", false,  // before dwrr_weights
   [](const Value& v, Scenario& s) { s.sw.scheduler = v.choice(kSchedulers); }},
  {"switch", "dwrr_weights", false,
   [](const Value& v, Scenario& s) {
     s.sw.dwrr_weights.clear();
     for (const Value& w : v.items("a list of 8 weights from 1 to 255, one per traffic class 0..7, e.g. [1, 1, 1, 4, 1, 1, 1, 1]", 8, 8)) {
       s.sw.dwrr_weights.push_back(int(w.integer(1, 255)));
     }
   }, nullptr, nullptr, &kDwrr},
  // Read, resolved and merged before any field is parsed (merge_profile); kept here so that
  // --set switch.profile=... works and the key is listed with the others.
  {"switch", "profile", false, [](const Value& v, Scenario& s) { s.sw.profile = v.string(); }},

  {"nic", "mtu", false,
   [](const Value& v, Scenario& s) {
     s.nic.mtu_bytes = v.quantity(kMtu);
   }},
  {"nic", "traffic_class", false,
   [](const Value& v, Scenario& s) { s.nic.traffic_class = int(v.integer(0, 7)); }},
  {"nic", "ack_interval", false,
   [](const Value& v, Scenario& s) { s.nic.ack_interval = int(v.integer(1, 65536)); }},
  {"nic", "rto", false, [](const Value& v, Scenario& s) { s.nic.rto_ps = v.quantity(kTimeout); }},
  {"nic", "qp_rate_limit", false,  // absent = line rate
   [](const Value& v, Scenario& s) { s.nic.qp_rate_limit_bps = v.quantity(kRateLimit); }},

  {"ecn", "enabled", false, [](const Value& v, Scenario& s) { s.ecn.enabled = v.boolean(); }},
  {"ecn", "kmin", false,
   [](const Value& v, Scenario& s) { s.ecn.kmin_bytes = v.quantity(kNonNegativeSize); }},
  {"ecn", "kmax", false,
   [](const Value& v, Scenario& s) { s.ecn.kmax_bytes = v.quantity(kPositiveSize); }},
  {"ecn", "pmax", false,
   [](const Value& v, Scenario& s) {
     s.ecn.pmax = v.fraction(1e-6, 1, "a probability above 0 and at most 1, e.g. 0.01 or 1/100");
   }},
  {"ecn", "mark_at", false,
   [](const Value& v, Scenario& s) { s.ecn.mark_at = v.choice(kEcnMarkAt); }},

  // Every pfc, dcqcn and infiniband key also has its section's transport condition (kSections).
  {"pfc", "enabled", false, [](const Value& v, Scenario& s) { s.pfc.enabled = v.boolean(); }},
  {"pfc", "priorities", false,  // absent = nic.traffic_class
   [](const Value& v, Scenario& s) { s.pfc.priorities = priority_list(v); }},
  {"pfc", "threshold", false,  // before xoff and alpha; dynamic needs a shared buffer (check_pfc)
   [](const Value& v, Scenario& s) { s.pfc.threshold = v.choice(kPfcThresholds); }},
  {"pfc", "xoff", false,  // absent = derived from the buffer; xon_offset < xoff (check_pfc)
   [](const Value& v, Scenario& s) { s.pfc.xoff_bytes = v.quantity(kXoff); },
   nullptr, nullptr, &kStaticThreshold},
  {"pfc", "alpha", false,
   [](const Value& v, Scenario& s) { s.pfc.alpha = v.fraction(1.0 / 128, 64, kAlphaExpected); },
   nullptr, nullptr, &kDynamicThreshold},
  {"pfc", "xon_offset", false,  // absent = two MTU frames
   [](const Value& v, Scenario& s) { s.pfc.xon_offset_bytes = v.quantity(kXonOffset); }},
  {"pfc", "headroom", false,  // absent = the formula of congestion/pfc.hpp
   [](const Value& v, Scenario& s) { s.pfc.headroom_bytes = v.quantity(kHeadroom); }},
  {"pfc", "response_time", false,
   [](const Value& v, Scenario& s) { s.pfc.response_time_ps = v.quantity(kNonNegativeTime); }},
  {"pfc", "pause_quanta", false,
   [](const Value& v, Scenario& s) { s.pfc.pause_quanta = int(v.integer(1, 65535)); }},
  {"pfc", "watchdog", false, [](const Value& v, Scenario& s) { s.pfc.watchdog = v.boolean(); }},
  {"pfc", "watchdog_detection_time", false,
   [](const Value& v, Scenario& s) { s.pfc.watchdog_detection_time_ps = v.quantity(kWatchdogTime); }},
  {"pfc", "watchdog_restoration_time", false,
   [](const Value& v, Scenario& s) { s.pfc.watchdog_restoration_time_ps = v.quantity(kWatchdogTime); }},
  {"pfc", "watchdog_action", false,
   [](const Value& v, Scenario& s) { s.pfc.watchdog_action = v.choice(kWatchdogActions); }},
  {"pfc", "deadlock_check_interval", false,
   [](const Value& v, Scenario& s) { s.pfc.deadlock_check_interval_ps = v.quantity(kCheckInterval); }},

  // A dcqcn section starts from dcqcn_preset("paper") (build); preset comes first, so that the
  // keys below override the preset it names. enabled needs ECN marking (check_dcqcn).
  {"dcqcn", "preset", false,
   [](const Value& v, Scenario& s) {
     const std::string name = v.choice(kDcqcnPresets);
     try {
       apply_dcqcn_preset(name, s);
     } catch (const std::invalid_argument& e) {
       v.fail(e.what());
     }
   }},
  {"dcqcn", "enabled", false, [](const Value& v, Scenario& s) { s.dcqcn.enabled = v.boolean(); }},
  {"dcqcn", "g", false,
   [](const Value& v, Scenario& s) {
     s.dcqcn.g = v.fraction(1e-6, 1, "a number above 0 and at most 1, e.g. 1/256");
   }},
  {"dcqcn", "initial_alpha", false,
   [](const Value& v, Scenario& s) {
     s.dcqcn.initial_alpha = v.fraction(0, 1, "a number from 0 to 1, e.g. 1");
   }},
  {"dcqcn", "alpha_timer", false,
   [](const Value& v, Scenario& s) { s.dcqcn.alpha_timer_ps = v.quantity(kTimeout); }},
  {"dcqcn", "rate_timer", false,
   [](const Value& v, Scenario& s) { s.dcqcn.rate_timer_ps = v.quantity(kTimeout); }},
  {"dcqcn", "byte_counter", false,
   [](const Value& v, Scenario& s) { s.dcqcn.byte_counter_bytes = v.quantity(kPositiveSize); }},
  {"dcqcn", "fast_recovery_steps", false,
   [](const Value& v, Scenario& s) { s.dcqcn.fast_recovery_steps = int(v.integer(1, 255)); }},
  {"dcqcn", "rai", false,
   [](const Value& v, Scenario& s) { s.dcqcn.rai_bps = v.quantity(kDcqcnRate); }},
  {"dcqcn", "rhai", false,
   [](const Value& v, Scenario& s) { s.dcqcn.rhai_bps = v.quantity(kDcqcnRate); }},
  {"dcqcn", "min_rate", false,  // below the line rate: checked where the line rate is known
   [](const Value& v, Scenario& s) { s.dcqcn.min_rate_bps = v.quantity(kDcqcnRate); }},
  {"dcqcn", "max_decrease", false,
   [](const Value& v, Scenario& s) {
     s.dcqcn.max_decrease = v.fraction(1e-6, 1, "a number above 0 and at most 1, e.g. 0.5 or 1/2");
   }},
  {"dcqcn", "cnp_interval", false,
   [](const Value& v, Scenario& s) { s.dcqcn.cnp_interval_ps = v.quantity(kNonNegativeTime); }},
  {"dcqcn", "cnp_traffic_class", false,
   [](const Value& v, Scenario& s) { s.dcqcn.cnp_traffic_class = int(v.integer(0, 7)); }},

  {"infiniband", "vl_buffer", false,  // absent = the switch's buffer per port
   [](const Value& v, Scenario& s) { s.infiniband.vl_buffer_bytes = v.quantity(kPositiveSize); }},
  {"infiniband", "deadlock_check_interval", false,  // the credit-deadlock detector's period
   [](const Value& v, Scenario& s) { s.pfc.deadlock_check_interval_ps = v.quantity(kCheckInterval); }},

  {"workload", "collective", false,
   [](const Value& v, Scenario& s) { s.workload.collective = v.choice(kCollectives); }},
  {"workload", "algorithm", false,
   [](const Value& v, Scenario& s) { s.workload.algorithm = v.choice(kAlgorithms); }},
  {"workload", "protocol", false,
   [](const Value& v, Scenario& s) { s.workload.protocol = v.choice(kProtocols); }},
  {"workload", "datatype", false,
   [](const Value& v, Scenario& s) { s.workload.datatype = v.choice(kDatatypes); }},
  {"workload", "redop", false,
   [](const Value& v, Scenario& s) { s.workload.redop = v.choice(kRedops); }},
  {"workload", "op", false,  // nccl-tests' -o; the same setting as redop
   [](const Value& v, Scenario& s) { s.workload.redop = v.choice(kRedops); }},
  {"workload", "ngpus", false,
   [](const Value& v, Scenario& s) { s.workload.ngpus = int(v.integer(2, 1 << 20)); }},
  {"workload", "ranks_per_server", false,
   [](const Value& v, Scenario& s) { s.workload.ranks_per_server = int(v.integer(1, 1024)); }},
  {"workload", "root", false,
   [](const Value& v, Scenario& s) { s.workload.root = int(v.integer(0, (1 << 20) - 1)); }},
  {"nccl", "algo", false, [](const Value& v, Scenario& s) { s.nccl.algo = v.string(); }},
  {"nccl", "proto", false, [](const Value& v, Scenario& s) { s.nccl.proto = v.string(); }},
  {"nccl", "buffsize", false,
   [](const Value& v, Scenario& s) { s.nccl.buffsize_bytes = v.quantity(kNcclBuffsize); }},
  {"nccl", "nchannels", false,  // NCCL_NCHANNELS of older NCCL: both bounds
   [](const Value& v, Scenario& s) { s.nccl.min_nchannels = s.nccl.max_nchannels = int(v.integer(1, 64)); }},
  {"nccl", "min_nchannels", false,
   [](const Value& v, Scenario& s) { s.nccl.min_nchannels = int(v.integer(1, 64)); }},
  {"nccl", "max_nchannels", false,
   [](const Value& v, Scenario& s) { s.nccl.max_nchannels = int(v.integer(1, 64)); }},
  {"nccl", "net_gdr_level", false,
   [](const Value& v, Scenario& s) { s.nccl.net_gdr_level = v.scalar("a level: LOC, PIX, PXB, PHB or SYS"); }},
  {"nccl", "ib_disable", false, [](const Value& v, Scenario& s) { s.nccl.ib_disable = v.boolean(); }},
  {"nccl", "net", false, [](const Value& v, Scenario& s) { s.nccl.net = v.scalar("IB or Socket"); }},
  {"nccl", "step_latency", false,  // absent = NCCL's per-step constants
   [](const Value& v, Scenario& s) { s.nccl.step_latency_ps = v.quantity(kNcclLatency); }},
  {"nccl", "launch_latency", false,  // absent = NCCL's base latency
   [](const Value& v, Scenario& s) { s.nccl.launch_latency_ps = v.quantity(kNcclLatency); }},
  {"workload", "minbytes", true,
   [](const Value& v, Scenario& s) { s.workload.minbytes = v.quantity(kSweepSize); }},
  {"workload", "maxbytes", true,
   [](const Value& v, Scenario& s) { s.workload.maxbytes = v.quantity(kSweepSize); }},
  {"workload", "stepfactor", false,
   [](const Value& v, Scenario& s) { s.workload.stepfactor = v.integer(2, kInt64Max); }},
};
// clang-format on

std::string path_of(const Field& f) {
  return *f.section ? std::string(f.section) + "." + f.key : std::string(f.key);
}

/// The keys allowed directly under `section` ("" = top level, which also holds the sections).
/// With `sc`, only those that apply to it; required ones are those required of it, or without
/// `sc`, of any topology kind under the default choices (buffer_model static).
std::vector<std::string> keys_of(const std::string& section, bool required_only = false,
                                 const Scenario* sc = nullptr) {
  static const Scenario kDefaults;
  std::vector<std::string> keys;
  for (const Field& f : kFields) {
    if (f.section != section || (sc && !applies_to(f, *sc))) continue;
    if (required_only && !(sc ? required_for(f, *sc) : f.required && holds(f.when, kDefaults))) {
      continue;
    }
    keys.emplace_back(f.key);
  }
  if (section.empty() && !required_only) {
    for (const Section& s : kSections) keys.emplace_back(s.name);
  }
  return keys;
}

bool is_section(const std::string& name) {
  return std::any_of(std::begin(kSections), std::end(kSections),
                     [&](const Section& s) { return name == s.name; });
}

/// Every leaf key path: what --set accepts.
std::vector<std::string> all_paths() {
  std::vector<std::string> paths;
  for (const Field& f : kFields) paths.push_back(path_of(f));
  return paths;
}

// ---- traffic ------------------------------------------------------------------------------

const std::string kTrafficExpected =
    "a list of flows, each a map with src, dst and size, e.g. [{src: 0, dst: 1, size: 1MiB}]";

/// Start times: up to an hour (3600s) of simulated time.
const QuantitySpec kFlowStart{
    "time", "10us", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};

/// True when `text` is a host index (digits, optionally after '+'), with `index` its value
/// (kInt64Max when it does not fit); false for a host name.
bool host_index(const std::string& text, int64_t& index) {
  const size_t first = !text.empty() && text[0] == '+';
  if (first == text.size()) return false;
  for (size_t i = first; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  const auto [end, ec] = std::from_chars(text.data() + first, text.data() + text.size(), index);
  if (ec == std::errc::result_out_of_range) index = kInt64Max;
  return true;
}

/// A flow's src or dst as written: a host index >= 0 or a host name (resolve_traffic checks
/// either against the fabric).
std::string flow_host(const Value& v) {
  const std::string expected = "a host index (an integer >= 0) or a host name, e.g. 3 or host3";
  const std::string s = v.scalar(expected);
  if (s.empty()) v.fail("expected " + expected + ", got ''");
  int64_t index = 0;
  if (s[0] == '-' && host_index(s.substr(1), index)) {
    v.fail("expected " + expected + ", got a negative index '" + s + "'");
  }
  return s;
}

/// One key of a flow (an item of `traffic:`); the kFields of a list item.
struct TrafficKey {
  const char* key;
  bool required;
  void (*parse)(const Value&, TrafficFlow&);
};
// clang-format off
const TrafficKey kTrafficKeys[] = {
  {"src", true, [](const Value& v, TrafficFlow& f) { f.src = flow_host(v); }},
  {"dst", true, [](const Value& v, TrafficFlow& f) { f.dst = flow_host(v); }},
  {"size", true, [](const Value& v, TrafficFlow& f) { f.bytes = v.quantity(kSweepSize); }},
  {"start", false, [](const Value& v, TrafficFlow& f) { f.start_ps = v.quantity(kFlowStart); }},
  {"priority", false, [](const Value& v, TrafficFlow& f) { f.priority = int(v.integer(0, 7)); }},
  {"flow", false, [](const Value& v, TrafficFlow& f) { f.flow = v.integer(0, 4'294'967'295); }},
};
/// What ns-3 RDMA flow files and other tools call these keys: "did you mean" for them too.
const std::pair<const char*, const char*> kTrafficAliases[] = {
  {"source", "src"}, {"destination", "dst"}, {"dest", "dst"},
  {"bytes", "size"}, {"size_bytes", "size"}, {"message_size", "size"},
  {"start_time", "start"}, {"time", "start"},
  {"pg", "priority"}, {"tc", "priority"}, {"traffic_class", "priority"}, {"prio", "priority"},
  {"qp", "flow"}, {"flow_id", "flow"},
};
// clang-format on

// ---- overrides ---------------------------------------------------------------------------

/// Applies one "a.b=value" to the tree and records it in ctx.overrides.
/// "topology.spine-leaf" when `path` is a key of that kind block (topology.spine-leaf.leaves),
/// else "".
std::string kind_block_of(const std::string& path) {
  for (const std::string& kind : kTopologyKinds.available) {
    const std::string block = std::string(kTopologySection) + "." + kind;
    if (path.size() > block.size() + 1 && path.rfind(block + ".", 0) == 0) return block;
  }
  return "";
}

void apply_override(YAML::Node& root, const std::string& text, const std::string& flag,
                    Context& ctx) {
  // A line break (a value pasted from a file, $'…\n---\n…') would start a line or a YAML
  // document that the value's reading drops: refused, with the text shown on one line.
  std::string where = flag + " ";
  for (const char c : text) {
    where += c == '\n' ? std::string("\\n") : c == '\r' ? "\\r" : std::string(1, c);
  }
  if (const size_t br = text.find_first_of("\r\n"); br != std::string::npos) {
    throw ConfigError(where, 0, 0, "",
                      "expected KEY=VALUE on one line; found a line break after '" +
                          text.substr(0, br) + "' (what follows it would be dropped)");
  }
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw ConfigError(where, 0, 0, text, "expected KEY=VALUE, e.g. topology.oversubscription=3");
  }
  const std::string path = text.substr(0, eq);
  const std::string value_text = text.substr(eq + 1);
  const auto fail = [&](const std::string& message) -> void {
    throw ConfigError(where, 0, 0, path, message);
  };

  // The path must be a leaf of the schema, or a switch's override of one: the YAML keys it
  // names, in order.
  const std::vector<std::string> paths = all_paths();
  if (path.empty()) fail("expected a key before '=', e.g. topology.oversubscription=3");
  std::vector<std::string> keys;
  const std::string switches = std::string(kSwitchesSection) + ".";
  const std::string traffic = kTrafficSection;
  if (path == traffic || path.rfind(traffic + ".", 0) == 0 || path.rfind(traffic + "[", 0) == 0) {
    fail("traffic is a list; edit it in the file");
  }
  const std::string training = std::string(kTrainingSection) + ".";
  if (path.rfind(training, 0) == 0) {
    const std::string key = path.substr(training.size());
    if (std::find(kTrainingKeys.begin(), kTrainingKeys.end(), key) == kTrainingKeys.end()) {
      const std::string guess = closest_match(key, kTrainingKeys);
      fail("unknown key" + (guess.empty() ? "; training has only " + join_words(kTrainingKeys, ", ")
                                          : "; did you mean '" + training + guess + "'?"));
    }
    keys = {kTrainingSection, key};
  } else if (path.rfind(switches, 0) == 0) {
    // switches.NAME.SECTION.KEY (NAME may hold dots: SECTION and KEY are the last two parts)
    const std::string expected = "expected switches.SWITCH." +
                                 join_words(kPerSwitchSections, ".KEY or switches.SWITCH.") +
                                 ".KEY, e.g. switches.leaf0.pfc.xoff=100KB";
    const size_t key_dot = path.rfind('.');
    const size_t section_dot = path.rfind('.', key_dot - 1);
    if (section_dot == std::string::npos || section_dot < switches.size() + 1) fail(expected);
    const std::string name = path.substr(switches.size(), section_dot - switches.size());
    const std::string leaf_path = path.substr(section_dot + 1);
    std::vector<std::string> switch_paths;
    for (const Field& f : kFields) {
      if (std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(), f.section) !=
          kPerSwitchSections.end()) {
        switch_paths.push_back(path_of(f));
      }
    }
    if (std::find(switch_paths.begin(), switch_paths.end(), leaf_path) == switch_paths.end()) {
      const std::string guess = closest_match(leaf_path, switch_paths);
      fail(guess.empty() ? "unknown key; " + expected
                         : "unknown key; did you mean '" + switches + name + "." + guess + "'?");
    }
    keys = {kSwitchesSection, name, path.substr(section_dot + 1, key_dot - section_dot - 1),
            path.substr(key_dot + 1)};
  } else if (const std::string block = kind_block_of(path); !block.empty()) {
    // topology.KIND.KEY: a key of one kind's block
    const std::string key = path.substr(block.size() + 1);
    const std::vector<std::string> valid = keys_of(kTopologySection);
    if (key == "kind" || std::find(valid.begin(), valid.end(), key) == valid.end()) {
      const std::string guess = closest_match(key, valid);
      fail(key == "kind"   ? "a kind block cannot change the kind; set topology.kind"
           : guess.empty() ? "unknown key; valid keys are: " + join_words(valid, ", ")
                           : "unknown key; did you mean '" + block + "." + guess + "'?");
    }
    keys = {kTopologySection, block.substr(block.find('.') + 1), key};
  } else if (std::find(paths.begin(), paths.end(), path) != paths.end()) {
    for (size_t start = 0, dot = 0; dot != std::string::npos; start = dot + 1) {
      dot = path.find('.', start);
      keys.push_back(path.substr(start, dot - start));
    }
  } else {
    if (path == kSwitchesSection) {
      fail("'" + path + "' is a section; set a switch's key, e.g. switches.leaf0.pfc.xoff");
    }
    if (const std::string kind = path.substr(path.find('.') + 1);
        path.rfind(std::string(kTopologySection) + ".", 0) == 0 &&
        std::find(kTopologyKinds.available.begin(), kTopologyKinds.available.end(), kind) !=
            kTopologyKinds.available.end()) {
      // topology.KIND={...}: a whole kind block
      YAML::Node map;
      try {
        map = parse_yaml_value(value_text);
      } catch (const YAML::ParserException&) {
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      if (!map.IsMap())
        fail("expected a map of " + kind + " topology keys, e.g. " + path + "={...}");
      if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
      if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
      YAML::Node topology = root[kTopologySection];
      if (!topology.IsDefined() || topology.IsNull()) {
        root[kTopologySection] = YAML::Node(YAML::NodeType::Map);
      } else if (!topology.IsMap()) {
        fail("cannot set a key under 'topology': in " + ctx.file + " it is " + describe(topology) +
             ", not a map");
      }
      root[kTopologySection][kind] = map;
      ctx.overrides[path] = where;
      for (const auto& entry : map) {
        if (entry.first.IsScalar()) ctx.overrides[path + "." + entry.first.Scalar()] = where;
      }
      return;
    }
    if (is_section(path)) {
      // A whole section as a map replaces the file's (how a sweep compares fabric families:
      // --vary 'topology={kind: fat-tree, k: 8},{kind: spine-leaf, ...}').
      YAML::Node map;
      try {
        map = parse_yaml_value(value_text);
      } catch (const YAML::ParserException&) {
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      if (!map.IsMap()) {
        const std::vector<std::string> section_keys =
            path == kTrainingSection ? kTrainingKeys : keys_of(path);
        const std::string first = section_keys.empty() ? "KEY" : section_keys.front();
        fail("'" + path + "' is a section; set one of its keys, e.g. " + path + "." + first +
             ", or give the whole section as a map, e.g. " + path + "={" + first + ": ...}");
      }
      if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
      if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
      root[path] = map;
      ctx.overrides[path] = where;
      for (const auto& entry : map) {
        if (entry.first.IsScalar()) ctx.overrides[path + "." + entry.first.Scalar()] = where;
      }
      return;
    }
    for (const std::string& p : paths) {
      if (path.rfind(p + ".", 0) == 0) {
        fail("cannot set a key under '" + p + "': it is a value, not a map");
      }
    }
    // Suggestions include the kind blocks (topology.spine-leaf) and their keys, so a misspelt
    // block name finds its block rather than the nearest plain key.
    std::vector<std::string> candidates = paths;
    for (const std::string& kind : kTopologyKinds.available) {
      const std::string block = std::string(kTopologySection) + "." + kind;
      candidates.push_back(block);
      for (const std::string& key : keys_of(kTopologySection)) {
        if (key != "kind") candidates.push_back(block + "." + key);
      }
    }
    const std::string guess = closest_match(path, candidates);
    fail("unknown key" + (guess.empty() ? "; valid keys are: " + join_words(paths, ", ")
                                        : "; did you mean '" + guess + "'?"));
  }

  // The value: one YAML scalar.
  YAML::Node value;
  try {
    value = parse_yaml_value(value_text);
  } catch (const YAML::ParserException& e) {
    fail("cannot read the value as YAML: " + e.msg);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  if (value.IsNull()) fail("expected a value after '='");
  // Any YAML value: the key's own parser says whether a list or a map fits it.

  // Place it, creating the sections (and a switch's maps) the file does not have.
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
  YAML::Node node = root;  // shares root's node: what is set in it is set in root
  std::string above;       // the dotted path of `node`
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    above += (i > 0 ? "." : "") + keys[i];
    const YAML::Node existing = static_cast<const YAML::Node&>(node)[keys[i]];
    if (!existing.IsDefined() || existing.IsNull()) {
      node[keys[i]] = YAML::Node(YAML::NodeType::Map);
    } else if (!existing.IsMap()) {
      const YAML::Mark m = existing.Mark();
      fail("cannot set a key under '" + above + "': in " + ctx.file +
           (m.is_null() ? "" : ":" + std::to_string(m.line + 1)) + " it is " + describe(existing) +
           ", not a map");
    }
    node.reset(node[keys[i]]);
  }
  node[keys.back()] = value;
  ctx.overrides[path] = where;
}

/// topology.KIND.KEY -> topology.KEY: a kind block's key and the plain key are one setting.
std::string setting_of(const std::string& path) {
  const std::string block = kind_block_of(path);
  return block.empty() ? path : std::string(kTopologySection) + path.substr(block.size());
}

/// A --vary `text` (KEY=VALUE, already applied) on a setting that a --set also gave (`set`:
/// the paths the --set overrides wrote, each with its "--set KEY=VALUE"), or on a section that
/// holds one: each point's value would replace the --set's without a word, as a sweep refuses
/// --seed beside --vary seed=. Throws ConfigError naming both.
void check_not_set(const std::string& text, const std::map<std::string, std::string>& set) {
  const std::string path = text.substr(0, text.find('='));
  const std::string varied = setting_of(path);
  for (const auto& [key, where] : set) {
    const std::string given = setting_of(key);
    if (given == varied || given.rfind(varied + ".", 0) == 0) {
      throw ConfigError("--vary " + text, 0, 0, path,
                        "also given by " + where +
                            ": each point's --vary value would replace it; drop the --set or "
                            "the --vary");
    }
  }
}

// ---- validation --------------------------------------------------------------------------

/// Checks the keys of one map (unknown, duplicate, not a name) and adds its values to `found`,
/// keyed by dotted path. With a `base` ("switches.leaf0."), the map is one switch's override of
/// `section` (pfc or ecn): errors and values carry the full path, `found` the section's path.
void collect(const Context& ctx, const YAML::Node& map, const std::string& section,
             std::map<std::string, Value>& found, const std::string& base = "") {
  const std::vector<std::string> valid = keys_of(section);
  const std::string prefix = section.empty() ? "" : section + ".";
  std::map<std::string, int> first_line;
  for (const auto& entry : map) {  // yaml-cpp's iterator yields pairs by value
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) {
      ctx.fail(base + section, key.Mark(), "expected a key name, got " + describe(key));
    }
    const std::string name = key.Scalar();
    const std::string path = prefix + name;
    const auto& kinds = kTopologyKinds.available;
    const bool kind_block = section == kTopologySection && base.empty() &&
                            std::find(kinds.begin(), kinds.end(), name) != kinds.end();
    if (!kind_block && std::find(valid.begin(), valid.end(), name) == valid.end()) {
      // A key of another section, spelt right, says more than a near miss in this one.
      std::vector<std::string> sections, paths;
      for (const Field& f : kFields) {
        if (name != f.key || section == f.section) continue;
        if (!base.empty() && std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(),
                                       f.section) == kPerSwitchSections.end()) {
          continue;  // a switch overrides only these
        }
        sections.emplace_back(*f.section ? "the " + std::string(f.section) + " section"
                                         : std::string("the top level"));
        paths.push_back(base + path_of(f));
      }
      std::string message = "unknown key '" + name + "'";
      if (!sections.empty()) {
        message += "; it belongs in " + join_words(sections, " or ") + " (" +
                   join_words(paths, " or ") + ")";
      } else if (const std::string guess = closest_match(name, valid); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
      } else {
        message += "; valid keys are: " + join_words(valid, ", ");
      }
      ctx.fail(base + path, key.Mark(), message);
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      ctx.fail(base + path, key.Mark(),
               "duplicate key '" + name + "' (first given at line " + std::to_string(seen->second) +
                   ")");
    }
    found.emplace(path, Value(&ctx, base + path, entry.second, key.Mark()));
  }
}

/// How directly a value was given: 2 by --set, 1 in the file being loaded (`main`), 0 in a
/// switch profile it names. A cross-field error blames the more direct of two values.
int directness(const Context& main, const Value& v) {
  return v.overridden() ? 2 : &v.context() == &main ? 1 : 0;
}

/// "FILE:LINE:COL", or the --set (or the file alone) when there is no position.
std::string place(const KeyOrigin& o) {
  return o.line > 0 ? o.where + ":" + std::to_string(o.line) + ":" + std::to_string(o.column)
                    : o.where;
}

/// Parses the values in `found` into `s` row by row of kFields (so a choice key such as
/// topology.kind or switch.buffer_model is read before the keys that depend on it) and, with
/// `require`, fails on a missing required key. `main` is the file being loaded: the scenario,
/// or a switch profile checked on its own (`whose` says which in messages). A profile's value
/// that applies only to a buffer_model or scheduler other than the one the scenario itself
/// chose is a default made moot by that choice, and is left out.
///
/// For one switch's overrides (switches.NAME), `found` holds its pfc and ecn values, `s` starts
/// as the scenario with its top-level sections parsed, and `inherited` is the scenario's
/// `found`: a choice the switch does not make itself (pfc.threshold) is the top-level one.
void parse_fields(const Context& main, const std::map<std::string, Value>& found, Scenario& s,
                  bool require, const std::string& whose,
                  const std::map<std::string, Value>* inherited = nullptr) {
  for (const Field& f : kFields) {
    const auto it = found.find(path_of(f));
    if (it == found.end()) continue;
    const Value& v = it->second;
    if (f.kinds && !in_list(f.kinds, s.topology.kind)) {  // topology.kind is parsed first
      std::string hint;
      if (f.section == std::string(kTopologySection)) {
        // How one scenario can describe several families (for --vary topology.kind=...).
        const std::string first = std::string(f.kinds).substr(0, std::string(f.kinds).find(' '));
        hint = "; to keep a shape for each kind in one scenario, put it under topology." + first +
               " (topology." + first + "." + f.key + ")";
      }
      v.fail("applies to topology kind " + std::string(f.kinds) + ", not to " + whose + " kind " +
             s.topology.kind + hint);
    }
    bool moot = false;  // a profile's key for another choice than the scenario's
    for (const Condition* when : {section_condition(f.section), f.when}) {
      if (holds(when, s)) continue;
      const std::string when_path = when->path;
      const std::string choice_section = when_path.substr(0, when_path.find('.'));
      const bool per_switch =
          inherited && std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(),
                                 choice_section) != kPerSwitchSections.end();
      // The value that made the choice: given here, or (for a switch) at the top level.
      const Value* chooser = nullptr;
      bool from_top_level = false;
      if (const auto c = found.find(when_path); c != found.end()) {
        chooser = &c->second;
      } else if (inherited) {
        if (const auto t = inherited->find(when_path); t != inherited->end()) {
          chooser = &t->second;
          from_top_level = true;
        }
      }
      const bool given = chooser != nullptr;
      const bool chosen_here = given && &chooser->context() == &main;
      if (&v.context() != &main && chosen_here) {
        moot = true;
        break;
      }
      std::string why = given ? "" : " (the default)";
      if (given && !chosen_here) why = " (set in " + place(chooser->origin()) + ")";
      if (from_top_level && per_switch) {
        why = " (from the top-level " + when_path + " at " + place(chooser->origin()) + ")";
      }
      std::string hint;
      if (given && !chosen_here) {
        // Chosen by a profile: say how to keep this key, or how to take the profile's choice.
        hint = std::string("; to keep it, set ") + when->path + " to " + when->values +
               " in the scenario (or --set " + when->path + "=" + when->values +
               "), or delete it to use the profile's " + leaf(when->path);
      }
      if (when->note) hint += std::string("; ") + when->note;
      // A switch's own choice is the switch's; transport and buffer_model are the scenario's.
      const std::string owner = inherited && !per_switch ? "this scenario's" : whose;
      v.fail("applies to " + leaf(when->path) + " " + when->values + ", not to " + owner + " " +
             leaf(when->path) + " " + when->value(s) + why + hint);
    }
    if (moot) continue;
    f.parse(v, s);
    s.origins[v.path()] = v.origin();
    // A key from a kind block (topology.spine-leaf.leaves) also answers for its plain path, so
    // the builders' errors (key_error "topology.leaves") point at it.
    if (v.path() != path_of(f) && v.path().rfind(kTopologySection, 0) == 0) {
      s.origins[path_of(f)] = v.origin();
      s.written_as[path_of(f)] = v.path();
    }
  }
  if (!require) return;
  // Once every choice is known (a profile's buffer_model decides what its scenario needs).
  for (const Field& f : kFields) {
    const std::string path = path_of(f);
    if (found.count(path) || !required_for(f, s)) continue;
    // An optional section left out needs nothing (workload, when traffic replaces it); a
    // required one left out has already failed.
    if (*f.section && !found.count(f.section)) continue;
    // Point at the section's key ("topology:"); a top-level key has no better place.
    const auto parent = found.find(f.section);
    std::string message =
        "missing required key; " + std::string(f.section) +
        (f.kinds ? " of kind " + s.topology.kind : std::string()) +
        (f.when ? " with " + leaf(f.when->path) + " " + f.when->value(s) : std::string()) +
        " needs " + join_words(keys_of(f.section, true, &s), ", ");
    if (const auto profile = found.find("switch.profile");
        profile != found.end() && std::string(f.section) == "switch") {
      message += " (its profile " + profile->second.node().Scalar() + " does not set " + f.key +
                 " either)";
    }
    main.fail(path, parent == found.end() ? YAML::Mark::null_mark() : parent->second.key_mark(),
              message);
  }
}

/// Cross-field rules of the switch section, for a scenario and for a profile on its own.
void check_switch(const Context& main, const std::map<std::string, Value>& found,
                  const Scenario& s) {
  if (s.sw.buffer_model != "shared") return;
  const auto reserved = found.find("switch.reserved_per_queue");
  const auto pool = found.find("switch.shared_buffer");
  if (reserved == found.end() || pool == found.end()) return;
  // 8 x reserved < shared_buffer, written so that it cannot overflow.
  if (s.sw.reserved_per_queue_bytes <= (s.sw.shared_buffer_bytes - 1) / 8) return;
  const std::string r = reserved->second.node().Scalar(), b = pool->second.node().Scalar();
  const std::string why = ": the 8 traffic classes of a single port would reserve all of it";
  if (directness(main, pool->second) > directness(main, reserved->second)) {
    pool->second.fail("shared_buffer (" + b + ") must be more than 8 x reserved_per_queue (" + r +
                      ")" + why);
  }
  reserved->second.fail("8 x reserved_per_queue (" + r + ") must be less than shared_buffer (" + b +
                        ")" + why);
}

/// Reads the switch profile that `profile` (the scenario's switch.profile) names into `pctx`
/// (which must outlive `found`), checks it on its own, and adds each of its switch keys that
/// the scenario does not set to `found`, so the profile's values are defaults that point into
/// the profile file when they are wrong.
void merge_profile(const Context& ctx, const Value& profile, Context& pctx,
                   std::map<std::string, Value>& found) {
  std::filesystem::path file(profile.string());
  if (file.is_relative()) file = std::filesystem::path(ctx.file).parent_path() / file;
  pctx.file = file.lexically_normal().string();
  std::string text;
  try {
    text = read_config_file(pctx.file, "switch profile '" + pctx.file + "'");
  } catch (const ConfigError& e) {
    profile.fail(e.message());
  }
  const YAML::Node root = parse_yaml(pctx.file, text);
  const std::string expected = "a map with a switch section (and optional name and source)";
  if (!root.IsDefined() || root.IsNull()) {
    pctx.fail("", YAML::Mark::null_mark(), "the switch profile is empty; expected " + expected);
  }
  if (!root.IsMap()) pctx.fail("", root.Mark(), "expected " + expected + ", got " + describe(root));

  const std::vector<std::string> top = {"switch", "name", "source"};
  std::map<std::string, int> first_line;
  std::map<std::string, Value> own;  // the profile's switch keys
  bool has_switch = false;
  for (const auto& entry : root) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) pctx.fail("", key.Mark(), "expected a key name, got " + describe(key));
    const std::string name = key.Scalar();
    if (std::find(top.begin(), top.end(), name) == top.end()) {
      std::string message = "unknown key '" + name + "' in a switch profile";
      const std::vector<std::string> switch_keys = keys_of("switch");
      if (const std::string guess = closest_match(name, top); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
      } else if (std::find(switch_keys.begin(), switch_keys.end(), name) != switch_keys.end()) {
        message += "; it belongs in the switch section (switch." + name + ")";
      } else {
        message += "; a switch profile has only " + join_words(top, ", ");
      }
      pctx.fail(name, key.Mark(), message);
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      pctx.fail(name, key.Mark(),
                "duplicate key '" + name + "' (first given at line " +
                    std::to_string(seen->second) + ")");
    }
    const Value v(&pctx, name, entry.second, key.Mark());
    if (name != "switch") {
      v.string();  // name, source: free text for the reader
      continue;
    }
    has_switch = true;
    if (v.node().IsNull()) continue;
    if (!v.node().IsMap()) {
      v.fail("expected a map of switch keys (" + join_words(keys_of("switch"), ", ") + "), got " +
             describe(v.node()));
    }
    for (const auto& item : v.node()) {
      if (item.first.IsScalar() && item.first.Scalar() == "profile") {
        pctx.fail("switch.profile", item.first.Mark(),
                  "a switch profile cannot name another profile");
      }
    }
    collect(pctx, v.node(), "switch", own);
  }
  if (!has_switch) {
    pctx.fail("switch", YAML::Mark::null_mark(),
              "missing required section: a switch profile sets its keys under 'switch:'");
  }

  // On its own first: a wrong or self-contradicting value is the profile's fault, even where
  // the scenario overrides it.
  Scenario alone;
  parse_fields(pctx, own, alone, false, "this profile's");
  check_switch(pctx, own, alone);
  for (const auto& [path, value] : own) found.emplace(path, value);  // the scenario's win
}

/// A pfc value that applies to one switch: its own (`own`), else the scenario's (`top`), else
/// nullptr. `is_own` says which.
const Value* pfc_value(const std::string& key, const std::map<std::string, Value>& own,
                       const std::map<std::string, Value>* top, bool& is_own) {
  const std::string path = "pfc." + key;
  is_own = true;
  if (const auto it = own.find(path); it != own.end()) return &it->second;
  is_own = false;
  if (top == nullptr) return nullptr;
  const auto it = top->find(path);
  return it == top->end() ? nullptr : &it->second;
}

/// Cross-field rules of pfc, for the scenario's (`own` = its values, `sc` its parse) or, with
/// `top` (the scenario's values), for one switch's (`own` = the switch's pfc and ecn values, `sc`
/// the scenario with them applied). A rule broken by values that the switch inherits has
/// already failed for the scenario's section.
void check_pfc(const Context& main, const Scenario& sc, const std::map<std::string, Value>& own,
               const std::map<std::string, Value>* top = nullptr) {
  const PfcConfig& pfc = sc.pfc;
  bool own_threshold = false, own_xoff = false, own_xon = false;
  if (pfc.headroom_bytes > 0 && pfc.headroom_bytes < sc.nic.mtu_bytes) {
    // The headroom takes what is already on the wire when XOFF is sent: less than one frame
    // cannot be lossless (1B ran with 8.9 M headroom drops).
    bool own_headroom = false;
    if (const Value* headroom = pfc_value("headroom", own, top, own_headroom)) {
      headroom->fail("expected a headroom of at least one frame (nic.mtu " +
                     std::to_string(sc.nic.mtu_bytes) +
                     "B) for the bytes in flight after XOFF, got '" + headroom->node().Scalar() +
                     "'; leave headroom out to size it by the formula");
    }
  }
  if (pfc.threshold == "dynamic" && sc.sw.buffer_model != "shared") {
    const Value* threshold = pfc_value("threshold", own, top, own_threshold);
    const auto model = sc.origins.find("switch.buffer_model");
    threshold->fail(
        "threshold dynamic needs switch.buffer_model shared (XOFF at alpha x the free shared "
        "buffer), not " +
        sc.sw.buffer_model +
        (model == sc.origins.end() ? " (the default)" : " (set in " + place(model->second) + ")"));
  }
  if (pfc.threshold != "static" || pfc.xoff_bytes == 0 || pfc.xon_offset_bytes == 0 ||
      pfc.xon_offset_bytes < pfc.xoff_bytes) {
    return;
  }
  const Value* xoff = pfc_value("xoff", own, top, own_xoff);
  const Value* xon = pfc_value("xon_offset", own, top, own_xon);
  const std::string xoff_text = xoff->node().Scalar(), xon_text = xon->node().Scalar();
  const std::string why = ": XON = xoff - xon_offset must be above 0";
  // Blame the switch's own value over an inherited one, then the more direct of the two.
  if (own_xoff != own_xon ? own_xoff : directness(main, *xoff) > directness(main, *xon)) {
    xoff->fail("xoff (" + xoff_text + ") must be more than xon_offset (" + xon_text + ")" + why);
  }
  xon->fail("xon_offset (" + xon_text + ") must be less than xoff (" + xoff_text + ")" + why);
}

/// DCQCN cuts rates on the CNPs that ECN marks cause: with none, it would never act.
void check_dcqcn(const std::map<std::string, Value>& found, const Scenario& s) {
  if (!s.dcqcn.enabled || s.ecn.enabled) return;
  // A fabric with ECN marking on some switches only (switches.NAME.ecn.enabled) is a fabric
  // configured inconsistently, which is what the switches section is for.
  for (const auto& [name, o] : s.switches) {
    if (o.ecn.enabled) return;
  }
  found.at("dcqcn.enabled").fail("DCQCN reacts to ECN marks: set ecn.enabled: true");
}

/// The most bytes one egress queue of the data's class (nic.traffic_class) can hold, and the
/// key that sets it: the whole shared buffer, or (static) the port's buffer for lossy data; 0
/// when it has no such bound (lossless data in static buffers is bounded at the ingress ports,
/// by PFC thresholds or InfiniBand credits, not by the egress buffer).
struct QueueBound {
  int64_t bytes = 0;          ///< 0: no bound to check against
  const char* key = nullptr;  ///< the buffer key that sets it
  std::string why;            ///< how, for the message
};
QueueBound queue_bound(const Scenario& s, const PfcConfig& pfc) {
  const int tc = s.nic.traffic_class;
  const bool listed =
      pfc.priorities.empty() ||
      std::find(pfc.priorities.begin(), pfc.priorities.end(), tc) != pfc.priorities.end();
  const bool lossless =
      s.transport == "infiniband" || (s.transport == "roce" && pfc.enabled && listed);
  if (s.sw.buffer_model == "shared") {
    const int64_t b = s.sw.shared_buffer_bytes;
    if (lossless) {  // lossless frames skip the egress admission: the whole pool
      return {b, "switch.shared_buffer",
              "switch.shared_buffer " + std::to_string(b) + " B for the whole switch"};
    }
    // The dynamic threshold admits a queue while its shared bytes are below alpha x the free
    // pool: alone, q <= alpha (B - q), so q <= alpha / (1 + alpha) x B, plus its reservation
    // (Choudhury & Hahne 1998; an upper bound, the pool being B minus all reservations).
    const auto q = static_cast<int64_t>(s.sw.alpha / (1 + s.sw.alpha) * static_cast<double>(b)) +
                   s.sw.reserved_per_queue_bytes;
    char alpha[32];
    std::snprintf(alpha, sizeof alpha, "%g", s.sw.alpha);
    return {q, "switch.shared_buffer",
            std::to_string(q) + " B per queue: alpha/(1+alpha) of switch.shared_buffer " +
                std::to_string(b) + " B at switch.alpha " + alpha + ", plus the reservation"};
  }
  if (lossless) return {};
  return {s.sw.buffer_per_port_bytes, "switch.buffer_per_port",
          "switch.buffer_per_port " + std::to_string(s.sw.buffer_per_port_bytes) + " B per port"};
}

/// A value of `key` that applies to one switch (`own`, its values) or to the scenario (`top`,
/// or `own` when there is no switch); nullptr when neither gave it.
const Value* given(const std::string& key, const std::map<std::string, Value>& own,
                   const std::map<std::string, Value>* top) {
  if (const auto it = own.find(key); it != own.end()) return &it->second;
  if (top == nullptr) return nullptr;
  const auto it = top->find(key);
  return it == top->end() ? nullptr : &it->second;
}

/// ECN thresholds against the most a queue can hold: a kmin at or above it never marks (an
/// error); a kmax above it stops the RED ramp short of pmax (a warning). For the scenario's ecn
/// (`top` null) or one switch's (`own` its values, `top` the scenario's, `whose` its name).
void check_ecn_reach(const Scenario& s, const EcnConfig& ecn, const PfcConfig& pfc,
                     const std::map<std::string, Value>& own,
                     const std::map<std::string, Value>* top,
                     const std::map<std::string, Value>& all, std::vector<std::string>& warnings) {
  if (!ecn.enabled) return;
  const QueueBound qb = queue_bound(s, pfc);
  const int64_t bound = qb.bytes;
  const char* key = qb.key;
  if (bound <= 0) return;
  const Value* kmin = given("ecn.kmin", own, top);
  const Value* kmax = given("ecn.kmax", own, top);
  const auto buffer = all.find(key);
  const std::string& queue = qb.why;
  if (ecn.kmin_bytes >= bound) {
    const std::string kmin_text = kmin ? "(" + kmin->node().Scalar() + ")"
                                       : std::to_string(ecn.kmin_bytes) + " B (the default)";
    const std::string message =
        "ecn.kmin " + kmin_text + " is at or above the most bytes a queue can hold (" + queue +
        "): ECN could never mark; expected a kmin below " + std::to_string(bound) + " B";
    if (kmin != nullptr || buffer == all.end()) {
      if (kmin) kmin->fail(message);
    } else {
      buffer->second.fail(message);
    }
  }
  if (ecn.kmax_bytes > bound) {
    const double reach = ecn.pmax * static_cast<double>(bound - ecn.kmin_bytes) /
                         static_cast<double>(ecn.kmax_bytes - ecn.kmin_bytes);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.3g", 100 * reach);
    char pmax[32];
    std::snprintf(pmax, sizeof pmax, "%g", ecn.pmax);
    const std::string message =
        "ecn.kmax (" + (kmax ? kmax->node().Scalar() : std::to_string(ecn.kmax_bytes) + " B") +
        ") is above the most bytes a queue can hold (" + queue +
        "): the RED ramp stops at a marking probability of " + pct + " %, never reaching pmax (" +
        pmax + "); expected a kmax of at most " + std::to_string(bound) + " B";
    if (kmax) {
      warnings.push_back(config_warning(kmax->origin(), kmax->path(), message));
    } else if (buffer != all.end()) {
      warnings.push_back(config_warning(buffer->second.origin(), buffer->second.path(), message));
    }
  }
}

/// PFC keys that do nothing: set while PFC is off (at the scenario, or at one switch: `own` its
/// values, `where` " at NAME"), and pfc.priorities without the data's traffic class while PFC is
/// on. Warnings, not errors: a sweep toggling pfc.enabled makes them on purpose.
void warn_pfc(const Scenario& s, const PfcConfig& pfc, const std::map<std::string, Value>& own,
              const std::map<std::string, Value>* top, const std::string& where, bool pfc_somewhere,
              std::vector<std::string>& warnings) {
  if (s.transport != "roce") return;
  if (!pfc.enabled && !pfc_somewhere) {
    const Value* enabled = given("pfc.enabled", own, top);
    const std::string off =
        "PFC is off" + where + " (pfc.enabled " +
        (enabled ? "false at " + place(enabled->origin()) : std::string("false, the default")) +
        ")";
    for (const auto& [path, v] : own) {
      if (path.rfind("pfc.", 0) != 0 || path == "pfc.enabled") continue;
      warnings.push_back(config_warning(
          v.origin(), v.path(), "has no effect: " + off + "; set pfc.enabled: true to use it"));
    }
    return;
  }
  const auto priorities = own.find("pfc.priorities");
  if (!pfc.enabled || priorities == own.end()) return;
  const int tc = s.nic.traffic_class;
  if (std::find(pfc.priorities.begin(), pfc.priorities.end(), tc) != pfc.priorities.end()) return;
  const std::string t = std::to_string(tc);
  warnings.push_back(config_warning(
      priorities->second.origin(), priorities->second.path(),
      "does not include nic.traffic_class " + t + ", the class of the RDMA data" + where +
          ": the data is lossy (tail drops under congestion) and PFC pauses none of it; add " + t +
          " to make it lossless"));
}

/// Where a switch's name was written in `switches:`, or the --set that created it.
KeyOrigin name_origin(const Context& ctx, const std::string& path, const YAML::Mark& mark) {
  if (!mark.is_null()) return KeyOrigin{ctx.file, mark.line + 1, mark.column + 1};
  for (const auto& [key, where] : ctx.overrides) {
    if (key.rfind(path + ".", 0) == 0) return KeyOrigin{where, 0, 0};
  }
  return KeyOrigin{ctx.file, 0, 0};
}

/// `switches:` (the section's value): per switch, the top-level pfc and ecn sections (already
/// in `s`) with that switch's keys applied over them, into s.switches; origins recorded as
/// "switches.NAME" (the name) and "switches.NAME.pfc.xoff" (a key). The names are checked
/// against the fabric later (check_switch_overrides).
void parse_switches(const Context& ctx, const Value& section,
                    const std::map<std::string, Value>& found, Scenario& s) {
  const std::string example = "e.g. {leaf0: {pfc: {xoff: 100KB}, ecn: {kmin: 10KB}}}";
  if (section.node().IsNull()) return;
  if (!section.node().IsMap()) {
    section.fail("expected a map of switch names to their pfc and ecn keys, " + example + ", got " +
                 describe(section.node()));
  }
  Scenario start = s;  // every switch starts from the top-level sections
  start.switches.clear();
  std::map<std::string, int> first_line;
  for (const auto& entry : section.node()) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) {
      ctx.fail(kSwitchesSection, key.Mark(), "expected a switch name, got " + describe(key));
    }
    const std::string name = key.Scalar();
    const std::string path = std::string(kSwitchesSection) + "." + name;
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      ctx.fail(path, key.Mark(),
               "duplicate switch '" + name + "' (first given at line " +
                   std::to_string(seen->second) + ")");
    }
    const Value v(&ctx, path, entry.second, key.Mark());
    const std::vector<std::string>& subsections = kPerSwitchSections;
    std::map<std::string, Value> own;  // "pfc.xoff" -> the switch's value
    if (!v.node().IsNull()) {
      if (!v.node().IsMap()) {
        v.fail("expected a map with the sections a switch overrides (" +
               join_words(subsections, " and ") + "), e.g. {pfc: {xoff: 100KB}}, got " +
               describe(v.node()));
      }
      std::map<std::string, int> sub_line;
      for (const auto& sub : v.node()) {
        const YAML::Node sub_key = sub.first;
        if (!sub_key.IsScalar()) {
          ctx.fail(path, sub_key.Mark(), "expected a section name, got " + describe(sub_key));
        }
        const std::string sub_name = sub_key.Scalar();
        const std::string sub_path = path + "." + sub_name;
        if (std::find(subsections.begin(), subsections.end(), sub_name) == subsections.end()) {
          std::string message = "unknown key '" + sub_name + "'";
          std::vector<std::string> homes;
          for (const std::string& x : subsections) {
            const std::vector<std::string> keys = keys_of(x);
            if (std::find(keys.begin(), keys.end(), sub_name) != keys.end()) {
              homes.push_back(path + "." + x + "." + sub_name);
            }
          }
          if (!homes.empty()) {
            message +=
                "; it belongs in a section under " + name + " (" + join_words(homes, " or ") + ")";
          } else if (const std::string guess = closest_match(sub_name, subsections);
                     !guess.empty()) {
            message += "; did you mean '" + guess + "'?";
          } else {
            message += "; a switch overrides only " + join_words(subsections, " and ") + " keys";
          }
          ctx.fail(sub_path, sub_key.Mark(), message);
        }
        if (auto [seen, inserted] = sub_line.emplace(sub_name, sub_key.Mark().line + 1);
            !inserted) {
          ctx.fail(sub_path, sub_key.Mark(),
                   "duplicate key '" + sub_name + "' (first given at line " +
                       std::to_string(seen->second) + ")");
        }
        const Value sv(&ctx, sub_path, sub.second, sub_key.Mark());
        if (sv.node().IsNull()) continue;
        if (!sv.node().IsMap()) {
          sv.fail("expected a map of " + sub_name + " keys (" +
                  join_words(keys_of(sub_name), ", ") + "), got " + describe(sv.node()));
        }
        collect(ctx, sv.node(), sub_name, own, path + ".");
      }
    }
    Scenario t = start;
    parse_fields(ctx, own, t, false, "switch " + name + "'s", &found);
    check_pfc(ctx, t, own, &found);
    const bool own_ecn = std::any_of(own.begin(), own.end(),
                                     [](const auto& kv) { return kv.first.rfind("ecn.", 0) == 0; });
    if (own_ecn) check_ecn_reach(t, t.ecn, t.pfc, own, &found, found, s.warnings);
    warn_pfc(t, t.pfc, own, &found, " at " + name, false, s.warnings);
    s.switches[name] = SwitchOverride{t.pfc, t.ecn};
    s.origins[path] = name_origin(ctx, path, key.Mark());
    for (const auto& [relative, value] : own) s.origins[value.path()] = value.origin();
  }
}

/// A dateline moves packets to another class at a wraparound link: the class they start in
/// (nic.traffic_class) would leave the cycle of waits that it is there to break.
void check_dateline(const std::map<std::string, Value>& found, const Scenario& s) {
  const int dateline = s.routing.dateline_class;
  if (dateline < 0 || dateline != s.nic.traffic_class) return;
  // Suggest another lossless priority if pfc lists one, else the next class up that CNPs do
  // not use.
  int other = -1;
  for (const int p : s.pfc.priorities) {
    if (p != dateline && other < 0) other = p;
  }
  for (int step = 1; step < 8 && other < 0; ++step) {
    const int c = (dateline + step) % 8;
    if (c != s.dcqcn.cnp_traffic_class) other = c;
  }
  found.at("routing.dateline_class")
      .fail("dateline_class " + std::to_string(dateline) +
            " is the class packets start in (nic.traffic_class); pick another lossless class, "
            "e.g. " +
            std::to_string(other));
}

/// The keys of the map `item` (at `path`), each once and each one of `keys` (with a "did you
/// mean", from `aliases` (other tools' names) first, then the closest key), as Values. `what`
/// names the map in the message for an unknown key with no guess ("a flow has only …").
std::map<std::string, Value> map_keys(
    const Context& ctx, const Value& item, const std::string& path,
    const std::vector<std::string>& keys, const std::string& what,
    std::span<const std::pair<const char*, const char*>> aliases = {}) {
  std::map<std::string, Value> given;
  std::map<std::string, int> first_line;
  for (const auto& entry : item.node()) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) ctx.fail(path, key.Mark(), "expected a key name, got " + describe(key));
    const std::string name = key.Scalar();
    const std::string key_path = path + "." + name;
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
      std::string guess;
      for (const auto& [alias, canonical] : aliases) {
        if (name == alias) guess = canonical;
      }
      if (guess.empty()) guess = closest_match(name, keys);
      ctx.fail(key_path, key.Mark(),
               "unknown key '" + name + "'" +
                   (guess.empty() ? "; " + what + " has only " + join_words(keys, ", ")
                                  : "; did you mean '" + guess + "'?"));
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      ctx.fail(key_path, key.Mark(),
               "duplicate key '" + name + "' (first given at line " + std::to_string(seen->second) +
                   ")");
    }
    given.emplace(name, Value(&ctx, key_path, entry.second, key.Mark()));
  }
  return given;
}

void read_flows(const Context& ctx, const Value& section, Scenario& s);

/// What a traffic flow takes, read and run, bytes: measured, 300,000 flows of 1 KiB between two
/// hosts of pfc-victim-flow.yaml peaked at 0.98 GB in `fabricsim run` (3.3 KB each; 1,000,000:
/// 2.77 GB), with 0.85 KB of it once read (the flow and its keys' positions).
constexpr double kTrafficFlowBytes = 3500;

/// `traffic:` (the section's value): each item a flow, in order, into s.traffic; origins
/// recorded as "traffic[2]" (the item) and "traffic[2].src" (each key given), where
/// resolve_traffic's errors point.
void parse_traffic(const Context& ctx, const Value& section, Scenario& s) {
  const YAML::Node& list = section.node();
  if (!list.IsSequence()) {
    section.fail("expected " + kTrafficExpected + ", got " + describe(list));
  }
  if (list.size() == 0) section.fail("expected " + kTrafficExpected + ", got an empty list");
  // Refused before any flow is read: YAML aliases make a list of a million flows out of a few
  // megabytes, which a run could not hold.
  const double need_bytes = static_cast<double>(list.size()) * kTrafficFlowBytes;
  if (const MemoryBudget budget = memory_budget(); over_half(need_bytes, budget)) {
    section.fail(std::to_string(list.size()) + " flows would take about " +
                 gigabytes_text(need_bytes) + " to read and run (about " +
                 std::to_string(static_cast<int>(kTrafficFlowBytes)) +
                 " bytes each), more than half of " + budget.text + "; expected fewer flows");
  }
  building([&] { read_flows(ctx, section, s); },
           std::to_string(list.size()) + " traffic flows (" + ctx.file + ": traffic)");
}

/// parse_traffic's reading of each flow, after its checks of the whole list.
void read_flows(const Context& ctx, const Value& section, Scenario& s) {
  const YAML::Node& list = section.node();
  std::vector<std::string> keys, required;
  for (const TrafficKey& k : kTrafficKeys) {
    keys.emplace_back(k.key);
    if (k.required) required.emplace_back(k.key);
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = std::string(kTrafficSection) + "[" + std::to_string(i) + "]";
    const Value item(&ctx, path, list[i], section.key_mark());
    if (!item.node().IsMap()) {
      item.fail("expected a flow: a map with " + join_words(keys, ", ") +
                ", e.g. {src: 0, dst: 1, size: 1MiB}, got " + describe(item.node()));
    }
    const auto given = map_keys(ctx, item, path, keys, "a flow", kTrafficAliases);
    TrafficFlow flow;
    for (const TrafficKey& k : kTrafficKeys) {
      const auto it = given.find(k.key);
      if (it == given.end()) continue;
      k.parse(it->second, flow);
      s.origins[it->second.path()] = it->second.origin();
    }
    for (const std::string& k : required) {
      if (!given.count(k)) {
        ctx.fail(path + "." + k, item.node().Mark(),
                 "missing required key; a flow needs " + join_words(required, ", "));
      }
    }
    const int dateline = s.routing.dateline_class;
    if (flow.priority >= 0 && flow.priority == dateline) {
      given.at("priority")
          .fail("priority " + std::to_string(dateline) +
                " is routing.dateline_class, the class packets move to at a wraparound link; a "
                "flow must start in another class");
    }
    s.origins[path] = item.origin();
    s.traffic.push_back(std::move(flow));
  }
}

// ---- training -----------------------------------------------------------------------------

/// A training layer's compute time: up to an hour of simulated time.
const QuantitySpec kLayerTime{
    "time", "1.5ms", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};

/// A positive number of FLOPs or FLOP/s, decimal or scientific ("989e12").
double flops_number(const Value& v, const std::string& expected) {
  const double x = v.small_number(1e30, expected, "beyond any machine");
  if (!(x > 0)) v.fail("expected " + expected + ", got zero");
  return x;
}

/// `training:` (the section's value) into s.training; layer times from FLOPs resolved here.
void parse_training(const Context& ctx, const Value& section, Scenario& s) {
  const std::string example =
      "e.g. {dp: 16, layers: [{name: block, count: 24, fwd_time: 1ms, params: 50MiB}]}";
  if (!section.node().IsMap()) {
    section.fail("expected a map of training keys, " + example + ", got " +
                 describe(section.node()));
  }
  TrainingConfig& t = s.training;
  t.enabled = true;
  const std::vector<std::string>& keys = kTrainingKeys;
  const auto given = map_keys(ctx, section, kTrainingSection, keys, "training");
  for (const auto& [name, v] : given) s.origins[v.path()] = v.origin();
  const auto get = [&](const char* k) -> const Value* {
    const auto it = given.find(k);
    return it == given.end() ? nullptr : &it->second;
  };
  if (const Value* v = get("dp")) t.dp = int(v->integer(1, 1 << 20));
  if (const Value* v = get("tp")) t.tp = int(v->integer(1, 1024));
  if (const Value* v = get("pp")) t.pp = int(v->integer(1, 1024));
  if (const Value* v = get("microbatches")) t.microbatches = int(v->integer(1, 4096));
  if (const Value* v = get("bucket_cap")) t.bucket_cap_bytes = v->quantity(kPositiveSize);
  if (const Value* v = get("first_bucket_cap"))
    t.first_bucket_cap_bytes = v->quantity(kPositiveSize);
  if (const Value* v = get("optimizer_time")) t.optimizer_ps = v->quantity(kLayerTime);
  if (const Value* v = get("gpu_peak_flops"))
    t.gpu_peak_flops = flops_number(*v, "a peak in FLOP/s, e.g. 989e12 (H100 dense BF16)");
  if (const Value* v = get("efficiency"))
    t.efficiency = v->fraction(1e-6, 1, "a fraction of the peak from 0 to 1, e.g. 0.4");
  const Value* layers = get("layers");
  if (layers == nullptr) {
    ctx.fail(std::string(kTrainingSection) + ".layers", section.node().Mark(),
             "missing required key; a training step needs its layers, " + example);
  }
  const std::vector<std::string> layer_keys = {"name",     "count",     "fwd_time",
                                               "bwd_time", "fwd_flops", "bwd_flops",
                                               "params",   "tp_comm",   "activations"};
  for (const Value& item : layers->items("a list of layers, " + example, 1, 100000)) {
    if (!item.node().IsMap()) {
      item.fail("expected a layer: a map with " + join_words(layer_keys, ", ") + ", got " +
                describe(item.node()));
    }
    const auto lk = map_keys(ctx, item, item.path(), layer_keys, "a layer");
    for (const auto& [name, v] : lk) s.origins[v.path()] = v.origin();
    const auto at = [&](const char* k) -> const Value* {
      const auto it = lk.find(k);
      return it == lk.end() ? nullptr : &it->second;
    };
    TrainingLayer layer;
    layer.name = at("name") ? at("name")->string() : "layer" + std::to_string(t.layers.size());
    if (const Value* v = at("count")) layer.count = int(v->integer(1, 100000));
    if (const Value* v = at("params")) layer.param_bytes = v->quantity(kNonNegativeSize);
    if (const Value* v = at("tp_comm")) layer.tp_comm_bytes = v->quantity(kNonNegativeSize);
    if (const Value* v = at("activations")) layer.activation_bytes = v->quantity(kNonNegativeSize);
    // Forward and backward: a time, or FLOPs at the GPU's peak × efficiency.
    const auto from_flops = [&](const Value& v) {
      const double flops = flops_number(v, "a number of FLOPs, e.g. 2.4e12");
      if (t.gpu_peak_flops <= 0 || t.efficiency <= 0) {
        v.fail(
            "a layer in FLOPs needs training.gpu_peak_flops and training.efficiency (the "
            "time is FLOPs / (peak x efficiency)); give both, or fwd_time/bwd_time");
      }
      const double ps = flops / (t.gpu_peak_flops * t.efficiency) * 1e12;
      if (ps > 3.6e15) v.fail("that is more than an hour of compute for one layer");
      return static_cast<int64_t>(std::llround(ps));
    };
    const Value* ft = at("fwd_time");
    const Value* ff = at("fwd_flops");
    if (ft && ff) ff->fail("give fwd_time or fwd_flops, not both");
    if (!ft && !ff) {
      ctx.fail(item.path() + ".fwd_time", item.node().Mark(),
               "missing required key; a layer needs fwd_time (or fwd_flops)");
    }
    layer.fwd_ps = ft ? ft->quantity(kLayerTime) : from_flops(*ff);
    const Value* bt = at("bwd_time");
    const Value* bf = at("bwd_flops");
    if (bt && bf) bf->fail("give bwd_time or bwd_flops, not both");
    layer.bwd_ps = bt ? bt->quantity(kLayerTime) : bf ? from_flops(*bf) : 2 * layer.fwd_ps;
    s.origins[item.path()] = item.origin();
    t.layers.push_back(std::move(layer));
  }
  // One GPU's compute in the step (every layer, every microbatch) must fit simulated time: at
  // most a day, far below int64 picoseconds (106 days).
  double per_gpu_ps = static_cast<double>(t.optimizer_ps);
  for (const TrainingLayer& l : t.layers) {
    per_gpu_ps += static_cast<double>(t.microbatches) * l.count *
                  (static_cast<double>(l.fwd_ps) + static_cast<double>(l.bwd_ps));
  }
  if (per_gpu_ps > 86'400e12) {
    layers->fail("one GPU's compute in the step would be " +
                 std::to_string(static_cast<int64_t>(per_gpu_ps / 1e12)) +
                 " s (microbatches x layers x (fwd + bwd)); expected at most a day");
  }
}

/// topology.KIND blocks: each kind's own shape, so one scenario can describe several fabric
/// families and `--vary topology.kind=...` compare them. Every block's keys are checked (known
/// topology keys that apply to that kind); the chosen kind's keys then stand for the plain
/// ones: a block key overrides the same plain key in the file, and a --set of the plain key
/// overrides the block.
void expand_kind_blocks(const Context& ctx, std::map<std::string, Value>& found) {
  const auto kind_it = found.find(std::string(kTopologySection) + ".kind");
  const std::string chosen = kind_it != found.end() && kind_it->second.node().IsScalar()
                                 ? kind_it->second.node().Scalar()
                                 : std::string();
  const std::vector<std::string> valid = keys_of(kTopologySection);
  for (const std::string& kind : kTopologyKinds.available) {
    const std::string block_path = std::string(kTopologySection) + "." + kind;
    const auto it = found.find(block_path);
    if (it == found.end()) continue;
    const Value block = it->second;
    found.erase(it);
    if (block.node().IsNull()) continue;
    if (!block.node().IsMap()) {
      block.fail("expected a map of " + kind + " topology keys, e.g. {" +
                 (kind == "fat-tree" ? "k: 8"
                  : kind == "torus"  ? "dims: [4, 4, 4]"
                                     : "spines: 4") +
                 "}, got " + describe(block.node()));
    }
    std::map<std::string, int> first_line;
    for (const auto& entry : block.node()) {
      const YAML::Node key = entry.first;
      if (!key.IsScalar()) {
        ctx.fail(block_path, key.Mark(), "expected a key name, got " + describe(key));
      }
      const std::string name = key.Scalar();
      const std::string path = block_path + "." + name;
      const Field* field = nullptr;
      for (const Field& f : kFields) {
        if (f.section == std::string(kTopologySection) && name == f.key) field = &f;
      }
      if (field == nullptr || name == "kind") {
        const std::string guess = closest_match(name, valid);
        ctx.fail(path, key.Mark(),
                 name == "kind" ? "a kind block cannot change the kind; set topology.kind"
                 : guess.empty()
                     ? "unknown key '" + name + "'; valid keys are: " + join_words(valid, ", ")
                     : "unknown key '" + name + "'; did you mean '" + guess + "'?");
      }
      if (field->kinds && !in_list(field->kinds, kind)) {
        ctx.fail(path, key.Mark(),
                 "applies to topology kind " + std::string(field->kinds) + ", not to " + kind);
      }
      if (auto [seen, fresh] = first_line.emplace(name, key.Mark().line + 1); !fresh) {
        ctx.fail(path, key.Mark(),
                 "duplicate key '" + name + "' (first given at line " +
                     std::to_string(seen->second) + ")");
      }
      Value value(&ctx, path, entry.second, key.Mark());
      if (kind != chosen) {
        // Not used in this run, but still read: a bad value fails now, not in the sweep that
        // picks this kind.
        Scenario scratch;
        scratch.topology.kind = kind;
        field->parse(value, scratch);
        continue;
      }
      const std::string plain = std::string(kTopologySection) + "." + name;
      const auto given = found.find(plain);
      if (given == found.end()) {
        found.emplace(plain, value);
      } else if (!given->second.overridden() || value.overridden()) {
        given->second = value;
      }
    }
  }
}

Scenario build(const Context& ctx, const YAML::Node& root) {
  std::vector<std::string> section_names;
  for (const Section& x : kSections) section_names.emplace_back(x.name);
  const std::string sections = join_words(section_names, " and ");
  if (!root.IsDefined() || root.IsNull()) {
    ctx.fail("", YAML::Mark::null_mark(),
             "the scenario is empty; expected a map with the sections " + sections);
  }
  if (!root.IsMap()) {
    ctx.fail("", root.Mark(),
             "expected a map with the sections " + sections + ", got " + describe(root));
  }

  Context profile_context;  // declared first: `found` holds values that point to it
  std::map<std::string, Value> found;
  collect(ctx, root, "", found);
  for (const Section& section : kSections) {
    const auto it = found.find(section.name);
    if (it == found.end()) {
      const auto alternative_given = [&] {
        if (!section.unless) return false;
        std::istringstream words(section.unless);
        for (std::string w; words >> w;) {
          if (found.count(w)) return true;
        }
        return false;
      };
      if (section.required && !alternative_given()) {
        // The keys every scenario needs there (a kind's own keys depend on topology.kind).
        std::vector<std::string> needed;
        for (const Field& f : kFields) {
          if (f.section == std::string(section.name) && f.required && f.kinds == nullptr &&
              f.required_kinds == nullptr && holds(f.when, Scenario{})) {
            needed.emplace_back(f.key);
          }
        }
        std::string message =
            "missing required section (with at least " + join_words(needed, ", ") +
            (section.name == std::string(kTopologySection) ? " and the keys of its kind"
                                                           : std::string()) +
            ")";
        if (section.unless) {
          message += ", or a traffic section in its place (" + kTrafficExpected +
                     "), or a training section";
        }
        ctx.fail(section.name, YAML::Mark::null_mark(), message);
      }
      continue;
    }
    const YAML::Node& node = it->second.node();
    // parse_switches and parse_traffic read these; a list of flows must not be empty.
    if (section.name == std::string(kSwitchesSection) ||
        section.name == std::string(kTrafficSection) ||
        section.name == std::string(kTrainingSection)) {
      continue;
    }
    if (node.IsNull()) continue;  // "nic:" with every key left to its default
    if (!node.IsMap()) {
      it->second.fail("expected a map of " + std::string(section.name) + " keys (" +
                      join_words(keys_of(section.name), ", ") + "), got " + describe(node));
    }
    collect(ctx, node, section.name, found);
  }
  expand_kind_blocks(ctx, found);

  Scenario s;
  for (const Section& section : kSections) {
    if (const auto it = found.find(section.name); it != found.end()) {
      s.origins[section.name] = it->second.origin();
    }
  }
  if (const auto it = found.find("switch.profile"); it != found.end()) {
    merge_profile(ctx, it->second, profile_context, found);
  }
  s.path = ctx.file;
  s.name = std::filesystem::path(ctx.file).stem().string();
  if (const auto it = found.find("dcqcn"); it != found.end()) {
    // The section's keys override a preset; dcqcn.preset (parsed first) may name another.
    try {
      apply_dcqcn_preset(s.dcqcn.preset, s);
    } catch (const std::invalid_argument& e) {
      it->second.fail(e.what());
    }
  }
  parse_fields(ctx, found, s, true, "this scenario's");
  s.has_workload = found.count("workload") > 0;
  check_dateline(found, s);
  if (const auto it = found.find(kTrafficSection); it != found.end()) {
    parse_traffic(ctx, it->second, s);  // after routing.dateline_class and its check
  }
  if (const auto it = found.find(kTrainingSection); it != found.end()) {
    parse_training(ctx, it->second, s);
  }

  // Cross-field rules.
  if (!found.count("link.fabric_rate")) s.link.fabric_rate_bps = s.link.host_rate_bps;
  if (found.count("workload.op") && found.count("workload.redop")) {
    // One setting under two names: a --set of either overrides the file's; two in one place
    // contradict each other.
    const Value& op = found.at("workload.op");
    const Value& redop = found.at("workload.redop");
    if (op.overridden() == redop.overridden()) {
      op.fail("op and redop are the same setting (nccl-tests' -o); give one");
    }
    s.workload.redop = (op.overridden() ? op : redop).choice(kRedops);
  }
  if (s.workload.minbytes > s.workload.maxbytes) {
    const Value& min = found.at("workload.minbytes");
    const Value& max = found.at("workload.maxbytes");
    const std::string min_text = min.node().Scalar(), max_text = max.node().Scalar();
    if (min.overridden() && !max.overridden()) {
      min.fail("minbytes (" + min_text + ") is greater than maxbytes (" + max_text + ")");
    }
    max.fail("maxbytes (" + max_text + ") is less than minbytes (" + min_text + ")");
  }
  if (s.nic.qp_rate_limit_bps > s.link.host_rate_bps) {
    // A queue pair's limit above its port's line rate limits nothing.
    const Value& limit = found.at("nic.qp_rate_limit");
    const Value& rate = found.at("link.host_rate");
    const std::string l = limit.node().Scalar(), r = rate.node().Scalar();
    if (directness(ctx, rate) > directness(ctx, limit)) {
      rate.fail("host_rate (" + r + "), the NIC's line rate, is below nic.qp_rate_limit (" + l +
                "): expected a line rate of at least the queue pair's limit");
    }
    limit.fail("qp_rate_limit (" + l + ") is above link.host_rate (" + r +
               "), the NIC's line rate: expected at most " + r +
               ", or leave qp_rate_limit out for line rate");
  }
  check_switch(ctx, found, s);
  check_pfc(ctx, s, found);
  check_ecn_reach(s, s.ecn, s.pfc, found, nullptr, found, s.warnings);
  bool pfc_somewhere = false;  // a switch's own pfc.enabled: true uses the top-level keys
  if (const auto it = found.find(kSwitchesSection); it != found.end()) {
    parse_switches(ctx, it->second, found, s);  // after the top-level pfc and ecn
    for (const auto& [name, o] : s.switches) pfc_somewhere |= o.pfc.enabled;
  }
  warn_pfc(s, s.pfc, found, nullptr, "", pfc_somewhere, s.warnings);
  check_dcqcn(found, s);
  return s;
}

}  // namespace

std::vector<std::string> override_paths() {
  std::vector<std::string> paths = all_paths();
  for (const Section& x : kSections) paths.emplace_back(x.name);
  for (const std::string& kind : kTopologyKinds.available) {
    const std::string block = std::string(kTopologySection) + "." + kind;
    paths.push_back(block);
    for (const std::string& key : keys_of(kTopologySection)) {
      if (key != "kind") paths.push_back(block + "." + key);
    }
  }
  for (const std::string& key : kTrainingKeys) {
    paths.push_back(std::string(kTrainingSection) + "." + key);
  }
  for (const char* name : {"leaf0", "spine0"}) {
    for (const Field& f : kFields) {
      if (std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(), f.section) !=
          kPerSwitchSections.end()) {
        paths.push_back(std::string(kSwitchesSection) + "." + name + "." + path_of(f));
      }
    }
  }
  return paths;
}

ConfigError key_error(const Scenario& sc, const std::string& key_path, const std::string& message) {
  for (std::string key = key_path;;) {
    if (const auto it = sc.origins.find(key); it != sc.origins.end()) {
      // A key given in a kind block is named as written (topology.fat-tree.k).
      const auto alias = sc.written_as.find(key_path);
      const std::string& named =
          key == key_path && alias != sc.written_as.end() ? alias->second : key_path;
      return ConfigError(it->second.where, it->second.line, it->second.column, named, message);
    }
    const size_t dot = key.rfind('.');
    if (dot == std::string::npos) break;
    key.resize(dot);  // fall back to the section
  }
  return ConfigError(sc.path, 0, 0, key_path, message);
}

void check_switch_overrides(const Scenario& sc, const std::vector<std::string>& switch_names) {
  std::vector<std::pair<KeyOrigin, std::string>> unknown;  // in the order written
  for (const auto& [name, settings] : sc.switches) {
    if (std::find(switch_names.begin(), switch_names.end(), name) != switch_names.end()) continue;
    const auto it = sc.origins.find(std::string(kSwitchesSection) + "." + name);
    unknown.emplace_back(it == sc.origins.end() ? KeyOrigin{sc.path, 0, 0} : it->second, name);
  }
  if (unknown.empty()) return;
  const std::string& name =
      std::min_element(unknown.begin(), unknown.end(), [](const auto& a, const auto& b) {
        // The file's names by position, then those only a --set gave.
        return std::make_tuple(a.first.line == 0, a.first.line, a.first.column, a.second) <
               std::make_tuple(b.first.line == 0, b.first.line, b.first.column, b.second);
      })->second;
  const std::string guess = closest_match(name, switch_names);
  throw key_error(sc, std::string(kSwitchesSection) + "." + name,
                  "no switch named '" + name + "'" +
                      (guess.empty() ? " (fabricsim topo --dot shows the names)"
                                     : "; did you mean '" + guess + "'?"));
}

void resolve_traffic(Scenario& sc, const std::vector<std::string>& host_names) {
  const int64_t hosts = static_cast<int64_t>(host_names.size());
  const std::string count = hosts == 0   ? "the fabric has no hosts"
                            : hosts == 1 ? "the fabric has 1 host (0)"
                                         : "the fabric has " + std::to_string(hosts) +
                                               " hosts (0 … " + std::to_string(hosts - 1) + ")";
  const auto resolve = [&](const std::string& text, const std::string& path) {
    int64_t index = 0;
    if (host_index(text, index)) {
      if (index >= hosts) {
        const std::string written = index == kInt64Max ? text : std::to_string(index);
        throw key_error(sc, path, "host " + written + " does not exist: " + count);
      }
      return static_cast<int>(index);
    }
    const auto it = std::find(host_names.begin(), host_names.end(), text);
    if (it != host_names.end()) return static_cast<int>(it - host_names.begin());
    const std::string guess = closest_match(text, host_names);
    throw key_error(
        sc, path,
        "no host named '" + text + "'" +
            (!guess.empty() ? "; did you mean '" + guess + "'?"
             : hosts == 0   ? ": " + count
                            : "; expected a host name such as '" + host_names.front() +
                                "' or an index from 0 to " + std::to_string(hosts - 1)));
  };
  for (size_t i = 0; i < sc.traffic.size(); ++i) {
    TrafficFlow& f = sc.traffic[i];
    const std::string path = std::string(kTrafficSection) + "[" + std::to_string(i) + "]";
    f.src_host = resolve(f.src, path + ".src");
    f.dst_host = resolve(f.dst, path + ".dst");
    if (f.src_host == f.dst_host) {
      const std::string& name = host_names[static_cast<size_t>(f.dst_host)];
      throw key_error(sc, path + ".dst",
                      "dst is host " + std::to_string(f.dst_host) + " (" + name +
                          "), the same host as src; a flow goes between two different hosts");
    }
  }
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::vector<std::string>& varied) {
  Context ctx;
  ctx.file = path;
  YAML::Node root = parse_yaml(path, read_config_file(path, "scenario file"));
  for (const std::string& o : overrides) apply_override(root, o, "--set", ctx);
  const std::map<std::string, std::string> set = ctx.overrides;  // path -> "--set KEY=VALUE"
  for (const std::string& o : varied) {
    apply_override(root, o, "--vary", ctx);
    check_not_set(o, set);
  }
  return building([&] { return build(ctx, root); }, "the scenario from " + path);
}

}  // namespace fabricsim
