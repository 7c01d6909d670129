// Cost file YAML -> CostModel. The schema is the table kPrices (one row per key); the valid-key
// list, the required-key check and "did you mean" all come from it.
#include "sim/config/cost_model.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <map>
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

/// "a, b, c and d".
std::string key_list() {
  const std::vector<std::string> k = keys();
  std::string out;
  for (size_t i = 0; i < k.size(); ++i) {
    if (i > 0) out += (i + 1 == k.size()) ? " and " : ", ";
    out += k[i];
  }
  return out;
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
  return v;
}

}  // namespace

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
