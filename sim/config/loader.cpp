// Scenario YAML -> Scenario. The schema is the table kFields below (one row per key: section,
// key, required, parser); everything else (valid-key lists, required-key lists, override
// paths, "did you mean") is derived from it, so adding a key is one row.
//
// Order of work: read the file, parse YAML (keeping marks), apply --set overrides to the tree,
// check every map for unknown and duplicate keys, then parse each field into the Scenario and
// run the few cross-field checks. The first mistake found is thrown as a ConfigError.
#include "sim/config/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <string_view>
#include <utility>

#include "sim/core/units.hpp"

namespace fabricsim {

ConfigError::ConfigError(std::string where, int line, int column, std::string key_path,
                         std::string message)
    : std::runtime_error(
          where +
          (line > 0 ? ":" + std::to_string(line) + ":" + std::to_string(column) : std::string()) +
          ": " + (key_path.empty() ? std::string() : key_path + ": ") + message),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
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
  }
  return best;
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
  const char* expected;  ///< the range in words: "a positive rate"
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
    double v = 0;
    if (const size_t colon = s.find(':'); colon != std::string::npos) {
      const double den = number(std::string_view(s).substr(colon + 1));
      if (den <= 0) fail("expected " + expected + ", got '" + s + "'");
      v = number(std::string_view(s).substr(0, colon)) / den;
    } else {
      v = number(s);
    }
    if (v < 1) fail("expected " + expected + ", got '" + s + "'");
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
           (v == 0 ? "zero ('" + s + "')" : "'" + s + "'"));
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
    if (const std::string guess = closest_match(s, known); !guess.empty()) {
      message += "; did you mean '" + guess + "'?";
    } else {
      message += "; expected one of: " + join_words(c.available, ", ");
    }
    fail(message);
  }

 private:
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
const QuantitySpec kMtu{"size", "4096B", parse_size_bytes, 64, 65536, "an MTU from 64B to 65536B"};
const QuantitySpec kSweepSize{"size", "8KiB",         parse_size_bytes,
                              1,      kMaxSweepBytes, "a size from 1B to 64GiB"};

const Choices kTransports{"transport", {"roce", "infiniband"}, {}, {}};
const Choices kTopologyKinds{
    "topology kind", {"spine-leaf", "fat-tree", "rail-optimized", "torus"}, {}, {}};
const Choices kRoutingAlgorithms{
    "routing algorithm", {"auto", "ecmp", "up_down", "dimension_order"}, {}, {}};
const Choices kLoadBalancing{"load balancing", {"per_flow", "per_packet"}, {}, {}};
const Choices kCollectives{
    "collective",
    {"all_reduce"},
    {"all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"},
    {}};
const Choices kAlgorithms{"algorithm", {"auto", "ring"}, {"tree", "halving_doubling"}, {}};
const Choices kProtocols{"protocol", {"auto", "simple"}, {"ll", "ll128"}, {}};
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

bool applies_to(const Field& f, const std::string& kind) {
  return f.kinds == nullptr || in_list(f.kinds, kind);
}

bool required_for(const Field& f, const std::string& kind) {
  return f.required && applies_to(f, kind) &&
         (f.required_kinds == nullptr || in_list(f.required_kinds, kind));
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

// clang-format off
const Field kFields[] = {
  {"", "name", false, [](const Value& v, Scenario& s) { s.name = v.string(); }},
  {"", "seed", false, [](const Value& v, Scenario& s) { s.seed = v.unsigned_integer(); }},
  {"", "transport", false, [](const Value& v, Scenario& s) { s.transport = v.choice(kTransports); }},

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
   "rail-optimized"},
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
       s.topology.dim_rates_bps.push_back(r.quantity(kPositiveRate));
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
       s.topology.degraded_links.emplace_back(name, rate.quantity(kPositiveRate));
     }
   }},

  {"link", "host_rate", true,
   [](const Value& v, Scenario& s) { s.link.host_rate_bps = v.quantity(kPositiveRate); }},
  {"link", "fabric_rate", false,  // default: host_rate (set after all fields are read)
   [](const Value& v, Scenario& s) { s.link.fabric_rate_bps = v.quantity(kPositiveRate); }},
  {"link", "propagation_delay", true,
   [](const Value& v, Scenario& s) { s.link.propagation_delay_ps = v.quantity(kNonNegativeTime); }},
  {"link", "nvlink_rate", true,
   [](const Value& v, Scenario& s) { s.link.nvlink_rate_bps = v.quantity(kPositiveRate); },
   "rail-optimized"},

  {"routing", "algorithm", false,
   [](const Value& v, Scenario& s) { s.routing.algorithm = v.choice(kRoutingAlgorithms); }},
  {"routing", "load_balancing", false,
   [](const Value& v, Scenario& s) { s.routing.load_balancing = v.choice(kLoadBalancing); }},

  {"", "cost_model", false, [](const Value& v, Scenario& s) { s.cost_model = v.string(); }},

  {"switch", "latency", true,  // required: it changes every latency-bound result
   [](const Value& v, Scenario& s) { s.sw.latency_ps = v.quantity(kNonNegativeTime); }},
  {"switch", "radix", false,
   [](const Value& v, Scenario& s) { s.sw.radix = int(v.integer(2, 65536)); }},
  {"switch", "buffer_per_port", true,
   [](const Value& v, Scenario& s) { s.sw.buffer_per_port_bytes = v.quantity(kPositiveSize); }},

  {"nic", "mtu", false, [](const Value& v, Scenario& s) { s.nic.mtu_bytes = v.quantity(kMtu); }},

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
  {"workload", "minbytes", true,
   [](const Value& v, Scenario& s) { s.workload.minbytes = v.quantity(kSweepSize); }},
  {"workload", "maxbytes", true,
   [](const Value& v, Scenario& s) { s.workload.maxbytes = v.quantity(kSweepSize); }},
  {"workload", "stepfactor", false,
   [](const Value& v, Scenario& s) { s.workload.stepfactor = v.integer(2, kInt64Max); }},
};
// clang-format on

struct Section {
  const char* name;
  bool required;
};
const Section kSections[] = {{"topology", true}, {"link", true},     {"switch", true},
                             {"nic", false},     {"routing", false}, {"workload", true}};

std::string path_of(const Field& f) {
  return *f.section ? std::string(f.section) + "." + f.key : std::string(f.key);
}

/// The keys allowed directly under `section` ("" = top level, which also holds the sections).
std::vector<std::string> keys_of(const std::string& section, bool required_only = false,
                                 const std::string& kind = "") {
  std::vector<std::string> keys;
  for (const Field& f : kFields) {
    if (f.section == section &&
        (!required_only || (kind.empty() ? f.required : required_for(f, kind))) &&
        (kind.empty() || applies_to(f, kind))) {
      keys.emplace_back(f.key);
    }
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

// ---- reading -----------------------------------------------------------------------------

std::string read_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    throw ConfigError(path, 0, 0, "",
                      std::string("cannot open scenario file: ") + std::strerror(errno));
  }
  constexpr size_t kMaxBytes = 16 << 20;  // a scenario is a page of YAML, not a data file
  std::string text;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > kMaxBytes) {
      throw ConfigError(path, 0, 0, "", "not a scenario file: larger than 16 MiB");
    }
  }
  if (std::ferror(f.get())) {
    throw ConfigError(path, 0, 0, "",
                      std::string("cannot read scenario file: ") + std::strerror(errno));
  }
  return text;
}

YAML::Node parse_yaml(const std::string& file, const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + e.msg);
  }
  if (docs.size() > 1) {
    const YAML::Mark m = docs[1].Mark();
    throw ConfigError(file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, "",
                      "expected one YAML document, found " + std::to_string(docs.size()));
  }
  return docs.empty() ? YAML::Node() : docs[0];
}

// ---- overrides ---------------------------------------------------------------------------

/// Applies one "a.b=value" to the tree and records it in ctx.overrides.
void apply_override(YAML::Node& root, const std::string& text, Context& ctx) {
  const std::string where = "--set " + text;
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw ConfigError(where, 0, 0, text, "expected KEY=VALUE, e.g. topology.oversubscription=3");
  }
  const std::string path = text.substr(0, eq);
  const std::string value_text = text.substr(eq + 1);
  const auto fail = [&](const std::string& message) -> void {
    throw ConfigError(where, 0, 0, path, message);
  };

  // The path must be a leaf of the schema.
  const std::vector<std::string> paths = all_paths();
  if (path.empty()) fail("expected a key before '=', e.g. topology.oversubscription=3");
  if (std::find(paths.begin(), paths.end(), path) == paths.end()) {
    if (is_section(path)) {
      fail("'" + path + "' is a section; set one of its keys, e.g. " + path + "." +
           keys_of(path).front());
    }
    for (const std::string& p : paths) {
      if (path.rfind(p + ".", 0) == 0) {
        fail("cannot set a key under '" + p + "': it is a value, not a map");
      }
    }
    const std::string guess = closest_match(path, paths);
    fail("unknown key" + (guess.empty() ? "; valid keys are: " + join_words(paths, ", ")
                                        : "; did you mean '" + guess + "'?"));
  }

  // The value: one YAML scalar.
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::ParserException& e) {
    fail("cannot read the value as YAML: " + e.msg);
  }
  if (value.IsNull()) fail("expected a value after '='");
  // Any YAML value: the key's own parser says whether a list or a map fits it.

  // Place it, creating the section if the file has none.
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
  const size_t dot = path.find('.');
  if (dot == std::string::npos) {
    root[path] = value;
  } else {
    const std::string section = path.substr(0, dot);
    const YAML::Node existing = static_cast<const YAML::Node&>(root)[section];
    if (!existing.IsDefined() || existing.IsNull()) {
      root[section] = YAML::Node(YAML::NodeType::Map);
    } else if (!existing.IsMap()) {
      const YAML::Mark m = existing.Mark();
      fail("cannot set a key under '" + section + "': in " + ctx.file +
           (m.is_null() ? "" : ":" + std::to_string(m.line + 1)) + " it is " + describe(existing) +
           ", not a map");
    }
    YAML::Node section_node = root[section];
    section_node[path.substr(dot + 1)] = value;
  }
  ctx.overrides[path] = where;
}

// ---- validation --------------------------------------------------------------------------

/// Checks the keys of one map (unknown, duplicate, not a name) and adds its values to `found`,
/// keyed by dotted path.
void collect(const Context& ctx, const YAML::Node& map, const std::string& section,
             std::map<std::string, Value>& found) {
  const std::vector<std::string> valid = keys_of(section);
  const std::string prefix = section.empty() ? "" : section + ".";
  std::map<std::string, int> first_line;
  for (const auto& entry : map) {  // yaml-cpp's iterator yields pairs by value
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) {
      ctx.fail(section, key.Mark(), "expected a key name, got " + describe(key));
    }
    const std::string name = key.Scalar();
    const std::string path = prefix + name;
    if (std::find(valid.begin(), valid.end(), name) == valid.end()) {
      std::string message = "unknown key '" + name + "'";
      if (const std::string guess = closest_match(name, valid); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
      } else if (const auto home = std::find_if(
                     std::begin(kFields), std::end(kFields),
                     [&](const Field& f) { return name == f.key && section != f.section; });
                 home != std::end(kFields)) {
        message += "; it belongs in " +
                   (*home->section ? "the " + std::string(home->section) + " section"
                                   : std::string("the top level")) +
                   " (" + path_of(*home) + ")";
      } else {
        message += "; valid keys are: " + join_words(valid, ", ");
      }
      ctx.fail(path, key.Mark(), message);
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      ctx.fail(path, key.Mark(),
               "duplicate key '" + name + "' (first given at line " + std::to_string(seen->second) +
                   ")");
    }
    found.emplace(path, Value(&ctx, path, entry.second, key.Mark()));
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

  std::map<std::string, Value> found;
  std::vector<std::pair<std::string, KeyOrigin>> s_origins_pending;
  collect(ctx, root, "", found);
  for (const Section& section : kSections) {
    const auto it = found.find(section.name);
    if (it == found.end()) {
      if (section.required) {
        ctx.fail(section.name, YAML::Mark::null_mark(),
                 "missing required section (with at least " +
                     join_words(keys_of(section.name, true), ", ") + ")");
      }
      continue;
    }
    const YAML::Node& node = it->second.node();
    if (node.IsNull()) continue;  // "nic:" with every key left to its default
    if (!node.IsMap()) {
      it->second.fail("expected a map of " + std::string(section.name) + " keys (" +
                      join_words(keys_of(section.name), ", ") + "), got " + describe(node));
    }
    collect(ctx, node, section.name, found);
  }
  for (const Section& section : kSections) {
    if (const auto it = found.find(section.name); it != found.end()) {
      s_origins_pending.emplace_back(section.name, it->second.origin());
    }
  }

  Scenario s;
  for (auto& [name, origin] : s_origins_pending) s.origins[name] = origin;
  s.path = ctx.file;
  s.name = std::filesystem::path(ctx.file).stem().string();
  for (const Field& f : kFields) {
    const std::string path = path_of(f);
    const bool applies = applies_to(f, s.topology.kind);  // topology.kind is parsed first
    if (const auto it = found.find(path); it != found.end()) {
      if (!applies) {
        it->second.fail("applies to topology kind " + std::string(f.kinds) +
                        ", not to this scenario's kind " + s.topology.kind);
      }
      f.parse(it->second, s);
      s.origins[path] = it->second.origin();
    } else if (required_for(f, s.topology.kind)) {
      // Point at the section's key ("topology:"); a top-level key has no better place.
      const auto parent = found.find(f.section);
      ctx.fail(path, parent == found.end() ? YAML::Mark::null_mark() : parent->second.key_mark(),
               "missing required key; " + std::string(f.section) +
                   (f.kinds ? " of kind " + s.topology.kind : std::string()) + " needs " +
                   join_words(keys_of(f.section, true, s.topology.kind), ", "));
    }
  }

  // Cross-field rules.
  if (!found.count("link.fabric_rate")) s.link.fabric_rate_bps = s.link.host_rate_bps;
  if (s.workload.minbytes > s.workload.maxbytes) {
    const Value& min = found.at("workload.minbytes");
    const Value& max = found.at("workload.maxbytes");
    const std::string min_text = min.node().Scalar(), max_text = max.node().Scalar();
    if (min.overridden() && !max.overridden()) {
      min.fail("minbytes (" + min_text + ") is greater than maxbytes (" + max_text + ")");
    }
    max.fail("maxbytes (" + max_text + ") is less than minbytes (" + min_text + ")");
  }
  return s;
}

}  // namespace

ConfigError key_error(const Scenario& sc, const std::string& key_path, const std::string& message) {
  for (std::string key = key_path;;) {
    if (const auto it = sc.origins.find(key); it != sc.origins.end()) {
      return ConfigError(it->second.where, it->second.line, it->second.column, key_path, message);
    }
    const size_t dot = key.rfind('.');
    if (dot == std::string::npos) break;
    key.resize(dot);  // fall back to the section
  }
  return ConfigError(sc.path, 0, 0, key_path, message);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  Context ctx;
  ctx.file = path;
  YAML::Node root = parse_yaml(path, read_file(path));
  for (const std::string& o : overrides) apply_override(root, o, ctx);
  return build(ctx, root);
}

}  // namespace fabricsim
