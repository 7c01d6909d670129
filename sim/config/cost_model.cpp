// Cost file YAML -> CostModel. The schema is the table kPrices (one row per key); the valid-key
// list, the required-key check and "did you mean" all come from it. switch_port_usd may be a
// map with one price per transport (transport_prices).
#include "sim/config/cost_model.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "sim/config/loader.hpp"

namespace fabricsim {
namespace {

struct Price {
  const char* key;
  double CostModel::*field;
};

const Price kPrices[] = {
    {"switch_port_usd", &CostModel::switch_port_usd},
    {"nic_usd", &CostModel::nic_usd},
    {"host_link_usd", &CostModel::host_link_usd},
    {"fabric_link_usd", &CostModel::fabric_link_usd},
};

std::vector<std::string> keys() {
  std::vector<std::string> out;
  for (const Price& p : kPrices) out.emplace_back(p.key);
  return out;
}

/// "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& k) {
  std::string out;
  for (size_t i = 0; i < k.size(); ++i) {
    if (i > 0) out += (i + 1 == k.size()) ? " and " : ", ";
    out += k[i];
  }
  return out;
}

/// "a, b, c and d".
std::string key_list() {
  return and_list(keys());
}

[[noreturn]] void fail(const std::string& file, const YAML::Mark& mark, const std::string& key,
                       const std::string& message) {
  if (mark.is_null()) throw ConfigError(file, 0, 0, key, message);
  throw ConfigError(file, mark.line + 1, mark.column + 1, key, message);
}

YAML::Node parse(const std::string& path) {
  const std::string text = read_config_file(path, "cost file");
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(path, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + e.msg);
  }
  if (docs.size() > 1) {
    fail(path, docs[1].Mark(), "",
         "expected one YAML document, found " + std::to_string(docs.size()));
  }
  return docs.empty() ? YAML::Node() : docs[0];
}

/// The largest unit price a cost file may give, in US dollars.
constexpr double kMaxUnitPriceUsd = 1e7;

/// A price: a plain non-negative finite number. Points at the value, or at the key when the
/// value is empty (yaml-cpp marks a null value at the next token).
double price(const std::string& file, const std::string& key, const YAML::Node& value,
             const YAML::Mark& key_mark) {
  const std::string expected = "expected a non-negative number of US dollars, e.g. 656, got ";
  if (!value.IsScalar() || value.Scalar().empty()) {
    const bool at_value = value.IsDefined() && !value.IsNull() && !value.Mark().is_null();
    fail(file, at_value ? value.Mark() : key_mark, key,
         expected + (value.IsMap()        ? "a map"
                     : value.IsSequence() ? "a list"
                                          : "nothing"));
  }
  const std::string& s = value.Scalar();
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v < 0) {
    fail(file, value.Mark(), key, expected + "'" + s + "'");
  }
  // One port, NIC or cable: USD 10 million is far above any of them (a whole 64-port QM9700 is
  // USD 42,000, HARDWARE.md §7), and keeps every total finite (1e308 made the total inf, which
  // results.json writes as null, the value that means "no cost model").
  if (v > kMaxUnitPriceUsd) {
    fail(file, value.Mark(), key,
         "a unit price of at most 10000000 US dollars (one switch port, NIC or cable), got '" + s +
             "'");
  }
  return v;
}

/// switch_port_usd's per-transport form `{infiniband: X, roce: Y}`: every transport of
/// cost_model_transports() priced once, nothing else.
std::map<std::string, double> transport_prices(const std::string& file, const std::string& key,
                                               const YAML::Node& value,
                                               const YAML::Mark& key_mark) {
  const std::vector<std::string>& transports = cost_model_transports();
  std::map<std::string, double> out;
  std::map<std::string, int> first_line;
  for (const auto& entry : value) {
    const YAML::Node t = entry.first;
    if (!t.IsScalar()) fail(file, t.Mark(), key, "expected a transport name");
    const std::string name = t.Scalar();
    const std::string path = key + "." + name;
    if (std::find(transports.begin(), transports.end(), name) == transports.end()) {
      const std::string guess = closest_match(name, transports);
      fail(file, t.Mark(), path,
           "unknown transport '" + name + "'" +
               (guess.empty() ? "" : "; did you mean '" + guess + "'?") + " (the transports are " +
               and_list(transports) + ")");
    }
    if (auto [seen, inserted] = first_line.emplace(name, t.Mark().line + 1); !inserted) {
      fail(file, t.Mark(), path,
           "duplicate transport '" + name + "' (first given at line " +
               std::to_string(seen->second) + ")");
    }
    out[name] = price(file, path, entry.second, t.Mark());
  }
  for (const std::string& t : transports) {
    if (!out.count(t)) {
      fail(file, value.Mark().is_null() ? key_mark : value.Mark(), key,
           "no price for transport " + t + "; a per-transport switch_port_usd prices " +
               and_list(transports) + ", e.g. {infiniband: 656.25, roce: 522.95}");
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& cost_model_transports() {
  // The scenario key `transport`'s values (sim/config/loader.cpp kTransports).
  static const std::vector<std::string> kTransportNames = {"infiniband", "roce"};
  return kTransportNames;
}

CostModel for_transport(CostModel model, const std::string& transport) {
  if (model.switch_port_usd_by_transport.empty()) return model;
  const auto it = model.switch_port_usd_by_transport.find(transport);
  if (it == model.switch_port_usd_by_transport.end()) {
    throw std::invalid_argument(model.source + ": switch_port_usd has no price for transport '" +
                                transport + "'");
  }
  model.switch_port_usd = it->second;
  return model;
}

CostModel load_cost_model(const std::string& path) {
  const YAML::Node root = parse(path);
  if (!root.IsDefined() || root.IsNull()) {
    throw ConfigError(path, 0, 0, "", "the cost file is empty; expected the keys " + key_list());
  }
  if (!root.IsMap()) {
    fail(path, root.Mark(), "",
         "expected a map with the keys " + key_list() + ", got " +
             (root.IsSequence() ? std::string("a list") : "'" + root.Scalar() + "'"));
  }
  const std::vector<std::string> valid = keys();
  CostModel model;
  model.source = path;
  std::map<std::string, int> first_line;
  for (const auto& entry : root) {  // yaml-cpp's iterator yields pairs by value
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) fail(path, key.Mark(), "", "expected a key name");
    const std::string name = key.Scalar();
    const Price* row = nullptr;
    for (const Price& p : kPrices) {
      if (name == p.key) row = &p;
    }
    if (!row) {
      const std::string guess = closest_match(name, valid);
      fail(path, key.Mark(), name,
           "unknown key '" + name + "'" +
               (guess.empty() ? "; valid keys are: " + key_list()
                              : "; did you mean '" + guess + "'?"));
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      fail(path, key.Mark(), name,
           "duplicate key '" + name + "' (first given at line " + std::to_string(seen->second) +
               ")");
    }
    if (row->field == &CostModel::switch_port_usd && entry.second.IsMap()) {
      model.switch_port_usd_by_transport = transport_prices(path, name, entry.second, key.Mark());
      continue;
    }
    model.*(row->field) = price(path, name, entry.second, key.Mark());
  }
  for (const Price& p : kPrices) {
    if (!first_line.count(p.key)) {
      throw ConfigError(path, 0, 0, p.key, "missing required key; a cost file needs " + key_list());
    }
  }
  return model;
}

}  // namespace fabricsim
