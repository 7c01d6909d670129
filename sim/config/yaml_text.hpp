// YAML text -> yaml-cpp node tree, for the scenario loader (loader.cpp): one document, checked
// before its tree is built. Internal to sim/config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>

namespace fabricsim {

/// Lists and maps nested deeper than this are refused. A scenario nests at most five deep
/// (training.layers[0].KEY, switches.NAME.pfc.KEY); yaml-cpp's parser recurses once per level
/// and stops at 500 with only "bad file".
inline constexpr int kMaxYamlDepth = 64;

/// The tree yaml-cpp builds takes about this much memory per node (a scalar, list or map):
/// measured, 1,100,000 nodes (100,000 traffic flows of five keys each, written out) peaked at
/// 539 MB in YAML::Load, 490 bytes each.
inline constexpr double kYamlNodeBytes = 500;

/// The one YAML document of `text`, the contents of `file` (a scenario or a switch profile).
/// Directives (%YAML, %TAG) before a document's `---` are part of it. Before the tree is built,
/// the document is read once as events, which checks what yaml-cpp would accept silently or say
/// badly. Throws ConfigError at FILE:LINE:COL for: a NUL byte (a binary file); a second
/// document; a YAML syntax error; lists and maps nested deeper than kMaxYamlDepth; a tag other
/// than YAML's core ones (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq), which fabricsim
/// could not honour; and a tree whose estimate (kYamlNodeBytes per node) is over half of
/// memory_budget() (sim/core/memory_budget.hpp). Throws UnitError for a FABRICSIM_MAX_MEMORY
/// that is not a size.
YAML::Node parse_yaml(const std::string& file, std::string text);

/// A --set or --vary value as YAML: `text` must be one line (a line break would start a second
/// line or document that yaml-cpp drops). Throws std::invalid_argument with the message alone
/// (no position) for a line break, nesting deeper than kMaxYamlDepth or a tag other than the
/// core ones; yaml-cpp's YAML::ParserException for a syntax error.
YAML::Node parse_yaml_value(const std::string& text);

}  // namespace fabricsim
