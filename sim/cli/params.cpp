// `fabricsim params`: the scenario schema, from the components' tables (sim/config/params.hpp).
#include "sim/cli/params.hpp"

#include "sim/config/loader.hpp"
#include "sim/config/params.hpp"

namespace fabricsim {

int cmd_params(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  constexpr const char* kUsage =
      "usage: fabricsim params [--markdown]\n"
      "  print every scenario key: key path, type and unit, default, range, one line of doc and\n"
      "  when it applies, grouped by section; --markdown prints it as Markdown tables\n";
  bool markdown = false;
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return 0;
    }
    if (a == "--markdown") {
      markdown = true;
      continue;
    }
    std::string message = "fabricsim params: unknown ";
    message += a.rfind('-', 0) == 0 ? "option '" : "argument '";
    message += a + "'";
    if (const std::string guess = closest_match(a, {"--markdown", "--help"}); !guess.empty()) {
      message += "; did you mean '" + guess + "'?";
    }
    err << message << " (fabricsim params takes only --markdown)\n";
    return 2;
  }
  const std::vector<ParamInfo> table = param_table();
  out << (markdown ? params_markdown(table) : params_text(table));
  return 0;
}

}  // namespace fabricsim
