// Scenario YAML -> Scenario, with errors that say where and what.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config/scenario.hpp"
#include "sim/core/choices.hpp"       // register_choice
#include "sim/core/config_error.hpp"  // ConfigError, located_message, KeyOrigin
#include "sim/core/strings.hpp"       // closest_match

namespace fabricsim {

/// A warning about a key that is valid but does nothing (or less than it says) under the
/// scenario's other choices: "fabricsim: warning: FILE:LINE:COL: KEY.PATH: MESSAGE", positioned
/// like a ConfigError (`origin` of the key as Scenario::origins records it).
std::string config_warning(const KeyOrigin& origin, const std::string& key_path,
                           const std::string& message);

/// Loads and validates the scenario at `path`, after applying `overrides` ("a.b.c=value", the
/// CLI's --set; the value is read as YAML, on one line) in order. Throws ConfigError for a
/// missing or unreadable file, a YAML syntax error, a second YAML document, lists and maps
/// nested over 64 deep, a YAML tag other than the core ones (!!str, !!int, …), an override
/// with a line break, an unknown key (with a suggestion), a wrong type, a missing or wrong
/// unit, or a value out of range; and, with an estimate, for a YAML tree or a traffic list
/// that would take over half of memory_budget() (sim/core/memory_budget.hpp). An allocation
/// that fails all the same throws OutOfMemory naming what was being read. A switch profile
/// (`switch.profile`) and a server profile (`server.profile`) are read too; their errors point
/// into the profile file, and `origins` records their keys there. Settings that do nothing under
/// the other choices are not errors: they are listed in Scenario::warnings. `varied` are applied
/// after `overrides`, the same way; their errors name them as a sweep's `--vary KEY=VALUE` rather
/// than `--set KEY=VALUE`, and one on a key an override also sets (or on a section holding one;
/// topology.KIND.KEY and topology.KEY are one key) is refused: its value would replace the
/// override's without a word.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {},
                       const std::vector<std::string>& varied = {});

/// The dotted paths --set and --vary take: every key of the schema, every section (given whole
/// as a map), each topology kind block and its keys (topology.fat-tree.k), the training keys,
/// and each per-switch key under the example switches leaf0 and spine0
/// (switches.leaf0.pfc.xoff). For the fuzzers (fuzz/fuzz_set.cpp) and help texts.
std::vector<std::string> override_paths();

/// A ConfigError about `key_path` of a loaded scenario, positioned where the key (or, failing
/// that, its section) was written, or naming the --set that gave it; the file alone when the key
/// was not given. For checks made after loading: `throw key_error(sc, "topology.k", "…");`.
ConfigError key_error(const Scenario& scenario, const std::string& key_path,
                      const std::string& message);

/// Checks that every switch named in the scenario's `switches:` section is one of
/// `switch_names` (the fabric's switches, as `fabricsim topo --dot` names them), which the
/// loader cannot know. Throws ConfigError at the name as written (or the --set that gave it),
/// with a "did you mean" among `switch_names`; names are checked in the order written.
void check_switch_overrides(const Scenario& sc, const std::vector<std::string>& switch_names);

/// Resolves each flow of the scenario's `traffic:` section against the fabric's hosts, setting
/// src_host and dst_host from src and dst as written: a host index (must be below
/// host_names.size()) or a host name (one of `host_names`, where host_names[i] names host i, as
/// `fabricsim topo --dot` shows it, e.g. "host3"). Throws ConfigError at the value as written
/// ("traffic[2].dst") for a host that does not exist (with a "did you mean" for a name) and for
/// a flow whose src and dst are the same host; flows are checked in order, src before dst.
void resolve_traffic(Scenario& sc, const std::vector<std::string>& host_names);

/// The largest YAML file fabricsim reads (a scenario, a switch profile, a cost file): a scenario
/// is a page of YAML, the largest in scenarios/ and configs/ a few KB.
inline constexpr int64_t kMaxConfigFileBytes = int64_t{16} << 20;

/// The text of the YAML file `path` that `noun` names ("scenario file", "switch profile 'x'",
/// "cost file"), read with read_input_file (sim/core/input_file.hpp): a regular file of at most
/// kMaxConfigFileBytes. Throws ConfigError (the path, no position) with read_input_file's
/// message for a missing file, a directory, a FIFO or device, a larger file or a read error.
std::string read_config_file(const std::string& path, const std::string& noun);

}  // namespace fabricsim
