#include "sim/sweep/vary.hpp"

#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

std::vector<std::string> point_values(const std::vector<SweepAxis>& axes, int64_t index) {
  std::vector<std::string> v(axes.size());
  for (size_t a = axes.size(); a-- > 0;) {
    const auto n = static_cast<int64_t>(axes[a].values.size());
    v[a] = axes[a].values[static_cast<size_t>(index % n)];
    index /= n;
  }
  return v;
}

std::vector<std::string> split_vary_values(const std::string& list, const std::string& where) {
  std::vector<std::string> values;
  std::vector<char> open;  // brackets not yet closed, innermost last
  char quote = 0;
  std::string current;
  const auto take = [&] {
    const std::string v = trim_blanks(current);
    if (v.empty()) {
      throw ConfigError(where, 0, 0, "",
                        "empty value in the list (value " + std::to_string(values.size() + 1) +
                            "); expected KEY=V1,V2,..., e.g. ecn.kmin=10KB,50KB");
    }
    values.push_back(v);
    current.clear();
  };
  for (const char ch : list) {
    if (quote != 0) {
      if (ch == quote) quote = 0;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == '[' || ch == '{') {
      open.push_back(ch == '[' ? ']' : '}');
    } else if (ch == ']' || ch == '}') {
      if (open.empty() || open.back() != ch) {
        throw ConfigError(where, 0, 0, "",
                          std::string("unbalanced '") + ch + "' in the list of values");
      }
      open.pop_back();
    } else if (ch == ',' && open.empty()) {
      take();
      continue;
    }
    current += ch;
  }
  if (quote != 0) {
    throw ConfigError(where, 0, 0, "", std::string("unterminated ") + quote + " in the values");
  }
  if (!open.empty()) {
    throw ConfigError(
        where, 0, 0, "",
        std::string("unclosed '") + (open.back() == ']' ? '[' : '{') + "' in the list of values");
  }
  take();
  return values;
}

std::vector<SweepAxis> parse_vary(const std::vector<std::string>& varies) {
  std::vector<SweepAxis> axes;
  for (const std::string& text : varies) {
    const std::string where = "--vary " + text;
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
      throw ConfigError(where, 0, 0, "", "expected KEY=V1,V2,..., e.g. ecn.kmin=10KB,50KB");
    }
    SweepAxis axis;
    axis.key = trim_blanks(text.substr(0, eq));
    if (axis.key.empty()) {
      throw ConfigError(where, 0, 0, "",
                        "expected a key before '=', e.g. ecn.kmin=10KB,50KB (the paths --set "
                        "takes)");
    }
    for (const SweepAxis& earlier : axes) {
      if (earlier.key == axis.key) {
        throw ConfigError(
            where, 0, 0, axis.key,
            "varied twice; give all its values in one --vary " + axis.key + "=V1,V2,...");
      }
    }
    axis.values = split_vary_values(text.substr(eq + 1), where);
    axes.push_back(std::move(axis));
  }
  return axes;
}

}  // namespace fabricsim
