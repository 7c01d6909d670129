// `fabricsim params [--markdown]`: every scenario key with its type, default, range and doc.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace fabricsim {

/// Runs `fabricsim params` with `args` (what follows "params"): none prints the table
/// (params_text, sim/config/params.hpp) to `out`; --markdown prints it as Markdown
/// (params_markdown); --help / -h the usage. Returns the exit code: 0, or 2 for any other
/// argument, with one line on `err` naming it (and the closest option: "did you mean").
int cmd_params(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace fabricsim
