// param_table(): the components' tables (loader_detail.hpp) as rows for `fabricsim params`.
#include "sim/config/params.hpp"

#include <cstdio>
#include <map>
#include <sstream>

#include "sim/config/loader_detail.hpp"

namespace fabricsim {

namespace {

using namespace config_detail;

/// `v` / `unit` exactly, in decimal: 67108864000 / 1e9 = "67.108864".
std::string exact_quotient(int64_t v, int64_t unit) {
  std::string text = std::to_string(v / unit);
  int64_t rest = v % unit;
  if (rest == 0) return text;
  text += '.';
  for (int64_t d = unit / 10; d > 0 && rest > 0; d /= 10) {
    text += static_cast<char>('0' + rest / d);
    rest %= d;
  }
  return text;
}

/// A quantity's value in the syntax the scenario takes: "5KB", "25MiB", "67.108864ms".
std::string quantity_text(const QuantitySpec& q, int64_t v) {
  if (v < 0) return std::to_string(v);
  const std::string noun = q.noun;
  if (noun == "size") {
    if (v == 0) return "0B";
    for (const auto& [unit, name] : {std::pair<int64_t, const char*>{int64_t{1} << 30, "GiB"},
                                     {int64_t{1} << 20, "MiB"},
                                     {int64_t{1} << 10, "KiB"},
                                     {1'000'000'000, "GB"},
                                     {1'000'000, "MB"},
                                     {1'000, "KB"}}) {
      if (v % unit == 0) return std::to_string(v / unit) + name;
    }
    return std::to_string(v) + "B";
  }
  const bool time = noun == "time";
  const std::pair<int64_t, const char*> time_units[] = {
      {1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}};
  const std::pair<int64_t, const char*> rate_units[] = {
      {1'000'000'000'000, "Tbps"}, {1'000'000'000, "Gbps"}, {1'000'000, "Mbps"}, {1'000, "Kbps"}};
  for (const auto& [unit, name] : time ? std::span(time_units) : std::span(rate_units)) {
    if (v >= unit) return exact_quotient(v, unit) + name;
  }
  return std::to_string(v) + (time ? "ps" : "bps");
}

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// A list's default: "[]" when empty, else how many items it holds ("[2 items]").
std::string list_text(size_t n, const char* brackets) {
  std::string text(1, brackets[0]);
  if (n > 0) {
    text += std::to_string(n);
    text += " items";
  }
  text += brackets[1];
  return text;
}

/// A member's default value as text (`rule` says how a quantity is written).
std::string default_text(const Rule& rule, const Slot& slot) {
  struct Visitor {
    const Rule& rule;
    std::string operator()(const int* v) const { return std::to_string(*v); }
    std::string operator()(const int64_t* v) const {
      return rule.kind == Rule::kQuantity ? quantity_text(*rule.quantity, *v) : std::to_string(*v);
    }
    std::string operator()(const uint64_t* v) const { return std::to_string(*v); }
    std::string operator()(const double* v) const { return number_text(*v); }
    std::string operator()(const bool* v) const { return *v ? "true" : "false"; }
    std::string operator()(const std::string* v) const { return v->empty() ? "\"\"" : *v; }
    std::string operator()(const std::vector<int>* v) const {
      std::string text = "[";
      for (size_t i = 0; i < v->size(); ++i) text += (i ? ", " : "") + std::to_string((*v)[i]);
      return text + "]";
    }
    std::string operator()(const std::vector<int64_t>* v) const {
      return list_text(v->size(), "[]");
    }
    std::string operator()(const std::vector<std::string>* v) const {
      return list_text(v->size(), "[]");
    }
    std::string operator()(const std::vector<std::pair<std::string, int64_t>>* v) const {
      return list_text(v->size(), "{}");
    }
    std::string operator()(const std::vector<std::pair<std::string, double>>* v) const {
      return list_text(v->size(), "{}");
    }
    std::string operator()(const std::vector<TrainingLayer>* v) const {
      return list_text(v->size(), "[]");
    }
    std::string operator()(const std::vector<LinkEventConfig>* v) const {
      return list_text(v->size(), "[]");
    }
  };
  return std::visit(Visitor{rule}, slot);
}

/// The words an error uses for the expected value, without its article and its example:
/// "a rate from 1Mbps to 100Tbps" -> "rate from 1Mbps to 100Tbps".
std::string range_words(std::string text) {
  for (const char* cut : {" (", ", e.g.", " e.g."}) {
    if (const size_t at = text.find(cut); at != std::string::npos) text.resize(at);
  }
  for (const char* article : {"a ", "an "}) {
    if (text.rfind(article, 0) == 0) return text.substr(std::string(article).size());
  }
  return text;
}

std::string type_text(const Rule& rule) {
  switch (rule.kind) {
    case Rule::kInt:
    case Rule::kUnsigned:
      return "integer";
    case Rule::kQuantity: {
      const std::string noun = rule.quantity->noun;
      return noun + (noun == "size" ? " (B)" : noun == "time" ? " (s)" : " (bit/s)");
    }
    case Rule::kChoice:
      return "choice";
    case Rule::kBool:
      return "boolean";
    case Rule::kString:
    case Rule::kText:
      return "string";
    case Rule::kRatio:
    case Rule::kFraction:
    case Rule::kBitErrorRate:
    case Rule::kPositiveNumber:
      return "number";
    case Rule::kCustom:
      break;
  }
  return rule.type;
}

std::string range_text(const Rule& rule) {
  switch (rule.kind) {
    case Rule::kInt:
      return rule.max == kInt64Max ? ">= " + std::to_string(rule.min)
                                   : std::to_string(rule.min) + " … " + std::to_string(rule.max);
    case Rule::kUnsigned:
      return "0 … 2^64-1";
    case Rule::kQuantity:
      return range_words(rule.quantity->expected);
    case Rule::kChoice: {
      std::string text;
      for (const std::string& name : rule.choices->values()) {
        text += (text.empty() ? "" : " | ") + name;
      }
      return text;
    }
    case Rule::kBool:
      return "true | false";
    case Rule::kString:
      return "non-empty";
    case Rule::kRatio:
      return ">= 1, or a ratio a:b";
    case Rule::kBitErrorRate:
      return "0 … 1e-3";
    case Rule::kText:
    case Rule::kFraction:
    case Rule::kPositiveNumber:
    case Rule::kCustom:
      break;
  }
  return range_words(rule.expected);
}

/// Columns a UTF-8 string takes in a terminal: its code points ("…" is one).
size_t width(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string condition_text(const Field& f) {
  std::vector<std::string> parts;
  if (f.kinds) parts.push_back(std::string("kind ") + f.kinds);
  for (const Condition* c : {section_condition(f.section), f.when}) {
    if (c) parts.push_back(std::string(c->path) + " " + c->values);
  }
  return join_words(parts, "; ");
}

template <class T>
void add_items(std::vector<ParamInfo>& out, const std::string& section,
               std::span<const ItemKey<T>> keys) {
  T defaults{};
  for (const ItemKey<T>& k : keys) {
    ParamInfo p;
    p.section = section;
    p.path = section + "." + k.key;
    p.type = type_text(k.rule);
    p.required = k.required;
    p.default_value = k.required ? "required"
                      : k.member ? default_text(k.rule, k.member(defaults))
                                 : "";
    p.range = range_text(k.rule);
    p.doc = k.doc;
    out.push_back(std::move(p));
  }
}

}  // namespace

std::vector<ParamInfo> param_table() {
  std::vector<ParamInfo> out;
  std::vector<std::string> order;  // sections in the order first met
  std::map<std::string, std::vector<ParamInfo>> by_section;
  Scenario defaults;
  for (const Field& f : fields()) {
    ParamInfo p;
    p.section = f.section;
    p.path = path_of(f);
    p.type = type_text(f.rule);
    p.required = f.required;
    const std::string value = default_text(f.rule, f.member(defaults));
    p.default_value = !f.required ? value
                      : f.required_kinds
                          ? "required for kind " + std::string(f.required_kinds) + "; else " + value
                          : "required";
    p.range = range_text(f.rule);
    p.doc = f.doc;
    p.condition = condition_text(f);
    if (!by_section.count(p.section)) order.push_back(p.section);
    by_section[p.section].push_back(std::move(p));
  }
  for (const std::string& s : order) {
    for (ParamInfo& p : by_section[s]) out.push_back(std::move(p));
  }
  // switches.NAME.pfc.KEY and switches.NAME.ecn.KEY: the pfc and ecn rows, for one switch.
  ParamInfo per_switch;
  per_switch.section = kSwitchesSection;
  per_switch.path = std::string(kSwitchesSection) + ".NAME";
  per_switch.type = "map of " + join_words(kPerSwitchSections, " and ") + " sections";
  per_switch.default_value = "{}";
  per_switch.range = "a switch name as fabricsim topo --dot shows it";
  per_switch.doc = "one switch's " + join_words(kPerSwitchSections, " and ") +
                   " keys over the top-level sections, e.g. switches.leaf0.pfc.xoff";
  out.push_back(std::move(per_switch));
  add_items(out, "topology.link_events[]", link_event_keys());
  add_items(out, std::string(kTrafficSection) + "[]", traffic_keys());
  add_items(out, std::string(kJobsSection) + "[]", job_keys());
  add_items(out, kTrainingSection, training_keys());
  add_items(out, std::string(kTrainingSection) + ".layers[]", layer_keys());
  return out;
}

std::string params_text(const std::vector<ParamInfo>& table) {
  size_t w_path = 3, w_type = 4, w_default = 7, w_range = 5;
  for (const ParamInfo& p : table) {
    w_path = std::max(w_path, width(p.path));
    w_type = std::max(w_type, width(p.type));
    w_default = std::max(w_default, width(p.default_value));
    w_range = std::max(w_range, width(p.range));
  }
  const auto pad = [](const std::string& s, size_t w) {
    const size_t n = width(s);
    return s + std::string(w > n ? w - n : 0, ' ');
  };
  std::ostringstream out;
  out << pad("KEY", w_path) << "  " << pad("TYPE", w_type) << "  " << pad("DEFAULT", w_default)
      << "  " << pad("RANGE", w_range) << "  DOC\n";
  std::string section = "\x01";
  for (const ParamInfo& p : table) {
    if (p.section != section) {
      section = p.section;
      out << "\n" << (section.empty() ? std::string("(top level)") : section) << "\n";
    }
    out << pad(p.path, w_path) << "  " << pad(p.type, w_type) << "  "
        << pad(p.default_value, w_default) << "  " << pad(p.range, w_range) << "  " << p.doc
        << (p.condition.empty() ? "" : " [when " + p.condition + "]") << "\n";
  }
  return out.str();
}

std::string params_markdown(const std::vector<ParamInfo>& table) {
  const auto cell = [](const std::string& s) {
    std::string out;
    for (const char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::ostringstream out;
  std::string section = "\x01";
  for (const ParamInfo& p : table) {
    if (p.section != section) {
      section = p.section;
      out << (out.tellp() > 0 ? "\n" : "") << "### "
          << (section.empty() ? "top level" : "`" + section + "`")
          << "\n\n| Key | Type | Default | Range | Applies when | Description |\n"
          << "|---|---|---|---|---|---|\n";
    }
    out << "| `" << p.path << "` | " << cell(p.type) << " | " << cell(p.default_value) << " | "
        << cell(p.range) << " | " << cell(p.condition) << " | " << cell(p.doc) << " |\n";
  }
  return out.str();
}

}  // namespace fabricsim
