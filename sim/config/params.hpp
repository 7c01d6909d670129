// The scenario schema as a table: every key the loader accepts, one row each, with its type and
// unit, default, range, one line of doc and the condition under which it applies. Derived from
// the components' own tables (sim/config/params_*.cpp), which the loader walks, so it cannot
// drift from what the loader does: `fabricsim params` prints it, and docs/scenario-reference.md
// is generated from `fabricsim params --markdown`.
#pragma once

#include <string>
#include <vector>

namespace fabricsim {

/// One key of the scenario schema.
struct ParamInfo {
  /// The group it is printed under: "" (top level), "topology", …, "traffic[]", "training",
  /// "training.layers[]".
  std::string section;
  /// Dotted key path as written in a scenario or a --set: "ecn.kmin"; list items as
  /// "traffic[].src".
  std::string path;
  std::string type;           ///< "size (B)", "time (s)", "rate (bit/s)", "integer", "choice", …
  std::string default_value;  ///< in scenario syntax ("5KB", "67.108864ms"), or "required"
  std::string range;          ///< the values it takes, in the words its errors use
  std::string doc;            ///< one line
  std::string condition;      ///< when it applies ("kind torus; topology.wraparound true"); ""
  bool required = false;      ///< required (under its condition)
};

/// Every key, grouped by section in the order the loader reads them; within a section in the
/// order of its component's table. Defaults are the params structs' initializers, read from a
/// default-constructed Scenario (TrafficFlow, TrainingConfig, TrainingLayer for list items).
std::vector<ParamInfo> param_table();

/// The table as text: one row per key, columns aligned, a title line per section.
std::string params_text(const std::vector<ParamInfo>& table);
/// The table as Markdown: a `###` heading and a table per section.
std::string params_markdown(const std::vector<ParamInfo>& table);

}  // namespace fabricsim
