// Scenario YAML -> Scenario. The schema is fields(): each component's table of keys (section,
// key, required, rule, member, doc; sim/config/params_*.cpp, declared in loader_detail.hpp), in
// parse order; everything else (valid-key lists, required-key lists, override paths, "did you
// mean", `fabricsim params`) is derived from it, so adding a key is one row in its component's
// table.
//
// Order of work: read the file, parse YAML (keeping marks), apply --set overrides to the tree,
// check every map for unknown and duplicate keys, read and check the switch profile (if
// switch.profile names one) and the server profile (server.profile) and add their keys that the
// scenario does not set, then parse each
// field into the Scenario, check the required keys, read the traffic list (its item keys are
// the small table traffic_keys()) and run each component's cross-field checks. The first mistake
// found is thrown as a ConfigError.
#include "sim/config/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <span>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include "sim/config/loader_detail.hpp"
#include "sim/config/yaml_text.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

std::string config_warning(const KeyOrigin& origin, const std::string& key_path,
                           const std::string& message) {
  return "fabricsim: warning: " +
         located_message(origin.where, origin.line, origin.column, key_path, message);
}

std::string read_config_file(const std::string& path, const std::string& noun) {
  try {
    return read_input_file(path, noun, kMaxConfigFileBytes,
                           "a scenario, profile or cost file is a page of YAML");
  } catch (const InputFileError& e) {
    throw ConfigError(path, 0, 0, "", e.what());
  }
}

namespace config_detail {

void read_rule(const Rule& rule, const Value& v, const Slot& slot) {
  switch (rule.kind) {
    case Rule::kInt: {
      const int64_t x = v.integer(rule.min, rule.max);
      if (int* const* p = std::get_if<int*>(&slot)) {
        **p = int(x);
      } else {
        *std::get<int64_t*>(slot) = x;
      }
      return;
    }
    case Rule::kUnsigned:
      *std::get<uint64_t*>(slot) = v.unsigned_integer();
      return;
    case Rule::kQuantity:
      *std::get<int64_t*>(slot) = v.quantity(*rule.quantity);
      return;
    case Rule::kChoice:
      *std::get<std::string*>(slot) = v.choice(*rule.choices);
      return;
    case Rule::kBool:
      *std::get<bool*>(slot) = v.boolean();
      return;
    case Rule::kString:
      *std::get<std::string*>(slot) = v.string();
      return;
    case Rule::kText:
      *std::get<std::string*>(slot) = v.scalar(rule.expected);
      return;
    case Rule::kRatio:
      *std::get<double*>(slot) = v.ratio();
      return;
    case Rule::kFraction:
      *std::get<double*>(slot) = v.fraction(rule.low, rule.high, rule.expected);
      return;
    case Rule::kBitErrorRate:
      *std::get<double*>(slot) = bit_error_rate(v);
      return;
    case Rule::kPositiveNumber:
      *std::get<double*>(slot) = flops_number(v, rule.expected);
      return;
    case Rule::kCustom:
      break;
  }
  throw std::logic_error("read_rule: " + v.path() + " is read by its own parse function");
}

namespace {

const Condition kRocePfc{"transport", "roce", [](const Scenario& s) { return s.transport; },
                         "InfiniBand uses credit-based flow control per virtual lane, not PFC "
                         "(set it in the infiniband section)"};
const Condition kRoceDcqcn{"transport", "roce", [](const Scenario& s) { return s.transport; },
                           "DCQCN is congestion control for RoCE"};
const Condition kInfiniband{"transport", "infiniband",
                            [](const Scenario& s) { return s.transport; },
                            "RoCE's flow control is PFC (the pfc section)"};

}  // namespace

std::span<const Section> sections() {
  static const Section all[] = {
      {"topology", true},
      {"link", true},
      {"switch", true},
      {"nic", false},
      {"routing", false},
      {"ecn", false},
      {"pfc", false, &kRocePfc},
      {"dcqcn", false, &kRoceDcqcn},
      {"timely", false},
      {"hpcc", false},
      {"infiniband", false, &kInfiniband},
      {"flow", false},
      {"switches", false},
      {"workload", true, nullptr, "traffic training perftest background jobs"},
      {"nccl", false},
      {"measured", false},
      {kTrafficSection, false},
      {kTrainingSection, false},
      {kJobsSection, false},
      {"perftest", false},
      {"background", false},
      {"pcie", false},
      {"server", false}};
  return all;
}

/// The condition of the section `name` (nullptr for none or for a top-level key).
const Condition* section_condition(const std::string& name) {
  for (const Section& x : sections()) {
    if (name == x.name) return x.when;
  }
  return nullptr;
}

const std::vector<Field>& fields() {
  static const std::vector<Field> all = [] {
    std::vector<Field> out;
    for (const std::span<const Field> table : {scenario_params(),
                                               topology_params(),
                                               link_params(),
                                               routing_params(),
                                               input_file_params(),
                                               switch_params(),
                                               nic_params(),
                                               ecn_params(),
                                               pfc_params(),
                                               dcqcn_params(),
                                               timely_params(),
                                               hpcc_params(),
                                               infiniband_params(),
                                               flow_params(),
                                               workload_params(),
                                               nccl_params(),
                                               workload_sweep_params(),
                                               perftest_params(),
                                               background_params(),
                                               pcie_params(),
                                               server_params()}) {
      out.insert(out.end(), table.begin(), table.end());
    }
    return out;
  }();
  return all;
}

bool in_list(const char* list_text, const std::string& kind) {
  std::string_view list(list_text);
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(' ', start), list.size());
    if (list.substr(start, end - start) == kind) return true;
    start = end + 1;
  }
  return false;
}

bool holds(const Condition* c, const Scenario& s) {
  return c == nullptr || in_list(c->values, c->value(s));
}

bool applies_to(const Field& f, const Scenario& s) {
  return (f.kinds == nullptr || in_list(f.kinds, s.topology.kind)) &&
         holds(section_condition(f.section), s) && holds(f.when, s);
}

bool required_for(const Field& f, const Scenario& s) {
  return f.required && applies_to(f, s) &&
         (f.required_kinds == nullptr || in_list(f.required_kinds, s.topology.kind));
}

/// The last part of a dotted path: "buffer_model" of "switch.buffer_model".
std::string leaf(const std::string& path) {
  return path.substr(path.rfind('.') + 1);
}

std::string path_of(const Field& f) {
  return *f.section ? std::string(f.section) + "." + f.key : std::string(f.key);
}

/// The keys allowed directly under `section` ("" = top level, which also holds the sections).
/// With `sc`, only those that apply to it; required ones are those required of it, or without
/// `sc`, of any topology kind under the default choices (buffer_model static).
std::vector<std::string> keys_of(const std::string& section, bool required_only,
                                 const Scenario* sc) {
  static const Scenario kDefaults;
  std::vector<std::string> keys;
  for (const Field& f : fields()) {
    if (f.section != section || (sc && !applies_to(f, *sc))) continue;
    if (required_only && !(sc ? required_for(f, *sc) : f.required && holds(f.when, kDefaults))) {
      continue;
    }
    keys.emplace_back(f.key);
  }
  if (section.empty() && !required_only) {
    for (const Section& s : sections()) keys.emplace_back(s.name);
  }
  return keys;
}

bool is_section(const std::string& name) {
  const std::span<const Section> all = sections();
  return std::any_of(all.begin(), all.end(), [&](const Section& s) { return name == s.name; });
}

/// Every leaf key path: what --set accepts.
std::vector<std::string> all_paths() {
  std::vector<std::string> paths;
  for (const Field& f : fields()) paths.push_back(path_of(f));
  return paths;
}

// ---- validation --------------------------------------------------------------------------

/// Checks the keys of one map (unknown, duplicate, not a name) and adds its values to `found`,
/// keyed by dotted path. With a `base` ("switches.leaf0."), the map is one switch's override of
/// `section` (pfc or ecn): errors and values carry the full path, `found` the section's path.
void collect(const Context& ctx, const YAML::Node& map, const std::string& section,
             std::map<std::string, Value>& found, const std::string& base) {
  const std::vector<std::string> valid = keys_of(section);
  const std::string prefix = section.empty() ? "" : section + ".";
  std::map<std::string, int> first_line;
  for (const auto& entry : map) {  // yaml-cpp's iterator yields pairs by value
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) {
      ctx.fail(base + section, key.Mark(), "expected a key name, got " + describe(key));
    }
    const std::string name = key.Scalar();
    const std::string path = prefix + name;
    const std::vector<std::string> kinds = topology_kinds().values();
    const bool kind_block = section == kTopologySection && base.empty() &&
                            std::find(kinds.begin(), kinds.end(), name) != kinds.end();
    if (!kind_block && std::find(valid.begin(), valid.end(), name) == valid.end()) {
      // A key of another section, spelt right, says more than a near miss in this one.
      std::vector<std::string> sections, paths;
      for (const Field& f : fields()) {
        if (name != f.key || section == f.section) continue;
        if (!base.empty() && std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(),
                                       f.section) == kPerSwitchSections.end()) {
          continue;  // a switch overrides only these
        }
        sections.emplace_back(*f.section ? "the " + std::string(f.section) + " section"
                                         : std::string("the top level"));
        paths.push_back(base + path_of(f));
      }
      std::string message = "unknown key '" + name + "'";
      if (!sections.empty()) {
        message += "; it belongs in " + join_words(sections, " or ") + " (" +
                   join_words(paths, " or ") + ")";
      } else if (const std::string guess = closest_match(name, valid); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
      } else {
        message += "; valid keys are: " + join_words(valid, ", ");
      }
      ctx.fail(base + path, key.Mark(), message);
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      ctx.fail(base + path, key.Mark(),
               "duplicate key '" + name + "' (first given at line " + std::to_string(seen->second) +
                   ")");
    }
    found.emplace(path, Value(&ctx, base + path, entry.second, key.Mark()));
  }
}

/// How directly a value was given: 2 by --set, 1 in the file being loaded (`main`), 0 in a
/// switch or server profile it names. A cross-field error blames the more direct of two values.
int directness(const Context& main, const Value& v) {
  return v.overridden() ? 2 : &v.context() == &main ? 1 : 0;
}

/// "FILE:LINE:COL", or the --set (or the file alone) when there is no position.
std::string place(const KeyOrigin& o) {
  return o.line > 0 ? o.where + ":" + std::to_string(o.line) + ":" + std::to_string(o.column)
                    : o.where;
}

/// Parses the values in `found` into `s` row by row of fields() (so a choice key such as
/// topology.kind or switch.buffer_model is read before the keys that depend on it) and, with
/// `require`, fails on a missing required key. `main` is the file being loaded: the scenario,
/// or a switch profile checked on its own (`whose` says which in messages). A profile's value
/// that applies only to a buffer_model or scheduler other than the one the scenario itself
/// chose is a default made moot by that choice, and is left out.
///
/// For one switch's overrides (switches.NAME), `found` holds its pfc and ecn values, `s` starts
/// as the scenario with its top-level sections parsed, and `inherited` is the scenario's
/// `found`: a choice the switch does not make itself (pfc.threshold) is the top-level one.
void parse_fields(const Context& main, const std::map<std::string, Value>& found, Scenario& s,
                  bool require, const std::string& whose,
                  const std::map<std::string, Value>* inherited) {
  for (const Field& f : fields()) {
    const auto it = found.find(path_of(f));
    if (it == found.end()) continue;
    const Value& v = it->second;
    if (f.kinds && !in_list(f.kinds, s.topology.kind)) {  // topology.kind is parsed first
      // A server profile's key for another kind (nics_per_server outside rail-optimized) is a
      // default this scenario has no use for. Said where the profile's server itself is lost:
      // its GPUs per server (a torus node is one GPU), or its PCIe peer-to-peer GPUs (a
      // rail-optimized server has an NVSwitch).
      if (&v.context() != &main) {
        const std::string path = path_of(f);
        if (path == "topology.gpus_per_server" ||
            (path == "topology.gpu_interconnect" && v.node().IsScalar() &&
             v.node().Scalar() == "pcie")) {
          s.warnings.push_back(config_warning(
              v.origin(), path,
              "not used: a " + s.topology.kind + " fabric does not take " + path +
                  " (it applies to topology kind " + std::string(f.kinds) +
                  "), so this server profile's servers are not what the fabric builds"));
        }
        continue;
      }
      std::string hint;
      if (f.section == std::string(kTopologySection)) {
        // How one scenario can describe several families (for --vary topology.kind=...).
        const std::string first = std::string(f.kinds).substr(0, std::string(f.kinds).find(' '));
        hint = "; to keep a shape for each kind in one scenario, put it under topology." + first +
               " (topology." + first + "." + f.key + ")";
      }
      v.fail("applies to topology kind " + std::string(f.kinds) + ", not to " + whose + " kind " +
             s.topology.kind + hint);
    }
    bool moot = false;  // a profile's key for another choice than the scenario's
    for (const Condition* when : {section_condition(f.section), f.when}) {
      if (holds(when, s)) continue;
      const std::string when_path = when->path;
      const std::string choice_section = when_path.substr(0, when_path.find('.'));
      const bool per_switch =
          inherited && std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(),
                                 choice_section) != kPerSwitchSections.end();
      // The value that made the choice: given here, or (for a switch) at the top level.
      const Value* chooser = nullptr;
      bool from_top_level = false;
      if (const auto c = found.find(when_path); c != found.end()) {
        chooser = &c->second;
      } else if (inherited) {
        if (const auto t = inherited->find(when_path); t != inherited->end()) {
          chooser = &t->second;
          from_top_level = true;
        }
      }
      const bool given = chooser != nullptr;
      const bool chosen_here = given && &chooser->context() == &main;
      if (&v.context() != &main && chosen_here) {
        moot = true;
        break;
      }
      std::string why = given ? "" : " (the default)";
      if (given && !chosen_here) why = " (set in " + place(chooser->origin()) + ")";
      if (from_top_level && per_switch) {
        why = " (from the top-level " + when_path + " at " + place(chooser->origin()) + ")";
      }
      std::string hint;
      if (given && !chosen_here) {
        // Chosen by a profile: say how to keep this key, or how to take the profile's choice.
        hint = std::string("; to keep it, set ") + when->path + " to " + when->values +
               " in the scenario (or --set " + when->path + "=" + when->values +
               "), or delete it to use the profile's " + leaf(when->path);
      }
      if (when->note) hint += std::string("; ") + when->note;
      // A switch's own choice is the switch's; transport and buffer_model are the scenario's.
      const std::string owner = inherited && !per_switch ? "this scenario's" : whose;
      v.fail("applies to " + leaf(when->path) + " " + when->values + ", not to " + owner + " " +
             leaf(when->path) + " " + when->value(s) + why + hint);
    }
    if (moot) continue;
    read_field(f, v, s);
    s.origins[v.path()] = v.origin();
    // A key from a kind block (topology.spine-leaf.leaves) also answers for its plain path, so
    // the builders' errors (key_error "topology.leaves") point at it.
    if (v.path() != path_of(f) && v.path().rfind(kTopologySection, 0) == 0) {
      s.origins[path_of(f)] = v.origin();
      s.written_as[path_of(f)] = v.path();
    }
  }
  if (!require) return;
  // Once every choice is known (a profile's buffer_model decides what its scenario needs).
  for (const Field& f : fields()) {
    const std::string path = path_of(f);
    if (found.count(path) || !required_for(f, s)) continue;
    // An optional section left out needs nothing (workload, when traffic replaces it); a
    // required one left out has already failed.
    if (*f.section && !found.count(f.section)) continue;
    // Point at the section's key ("topology:"); a top-level key has no better place.
    const auto parent = found.find(f.section);
    std::string message =
        "missing required key; " + std::string(f.section) +
        (f.kinds ? " of kind " + s.topology.kind : std::string()) +
        (f.when ? " with " + leaf(f.when->path) + " " + f.when->value(s) : std::string()) +
        " needs " + join_words(keys_of(f.section, true, &s), ", ");
    if (const auto profile = found.find("switch.profile");
        profile != found.end() && std::string(f.section) == "switch") {
      message += " (its profile " + profile->second.node().Scalar() + " does not set " + f.key +
                 " either)";
    }
    if (const auto profile = found.find("server.profile");
        profile != found.end() && is_server_profile_key(path)) {
      message += " (its server profile " + profile->second.node().Scalar() + " does not set " +
                 f.key + " either)";
    }
    main.fail(path, parent == found.end() ? YAML::Mark::null_mark() : parent->second.key_mark(),
              message);
  }
}

/// The keys of the map `item` (at `path`), each once and each one of `keys` (with a "did you
/// mean", from `aliases` (other tools' names) first, then the closest key), as Values. `what`
/// names the map in the message for an unknown key with no guess ("a flow has only …").
std::map<std::string, Value> map_keys(
    const Context& ctx, const Value& item, const std::string& path,
    const std::vector<std::string>& keys, const std::string& what,
    std::span<const std::pair<const char*, const char*>> aliases) {
  std::map<std::string, Value> given;
  std::map<std::string, int> first_line;
  for (const auto& entry : item.node()) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) ctx.fail(path, key.Mark(), "expected a key name, got " + describe(key));
    const std::string name = key.Scalar();
    const std::string key_path = path + "." + name;
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
      std::string guess;
      for (const auto& [alias, canonical] : aliases) {
        if (name == alias) guess = canonical;
      }
      if (guess.empty()) guess = closest_match(name, keys);
      ctx.fail(key_path, key.Mark(),
               "unknown key '" + name + "'" +
                   (guess.empty() ? "; " + what + " has only " + join_words(keys, ", ")
                                  : "; did you mean '" + guess + "'?"));
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      ctx.fail(key_path, key.Mark(),
               "duplicate key '" + name + "' (first given at line " + std::to_string(seen->second) +
                   ")");
    }
    given.emplace(name, Value(&ctx, key_path, entry.second, key.Mark()));
  }
  return given;
}

namespace {

Scenario build(const Context& ctx, const YAML::Node& root) {
  std::vector<std::string> section_names;
  for (const Section& x : sections()) section_names.emplace_back(x.name);
  const std::string sections = join_words(section_names, " and ");
  if (!root.IsDefined() || root.IsNull()) {
    ctx.fail("", YAML::Mark::null_mark(),
             "the scenario is empty; expected a map with the sections " + sections);
  }
  if (!root.IsMap()) {
    ctx.fail("", root.Mark(),
             "expected a map with the sections " + sections + ", got " + describe(root));
  }

  Context profile_context;         // declared first: `found` holds values that point to it
  Context server_profile_context;  // the same
  std::map<std::string, Value> found;
  collect(ctx, root, "", found);
  for (const Section& section : config_detail::sections()) {
    const auto it = found.find(section.name);
    if (it == found.end()) {
      const auto alternative_given = [&] {
        if (!section.unless) return false;
        std::istringstream words(section.unless);
        for (std::string w; words >> w;) {
          if (found.count(w)) return true;
        }
        return false;
      };
      if (section.required && !alternative_given()) {
        // The keys every scenario needs there (a kind's own keys depend on topology.kind).
        std::vector<std::string> needed;
        for (const Field& f : fields()) {
          if (f.section == std::string(section.name) && f.required && f.kinds == nullptr &&
              f.required_kinds == nullptr && holds(f.when, Scenario{})) {
            needed.emplace_back(f.key);
          }
        }
        std::string message =
            "missing required section (with at least " + join_words(needed, ", ") +
            (section.name == std::string(kTopologySection) ? " and the keys of its kind"
                                                           : std::string()) +
            ")";
        if (section.unless) {
          message += ", or a traffic section in its place (" + kTrafficExpected +
                     "), or a training section, or a jobs section";
        }
        ctx.fail(section.name, YAML::Mark::null_mark(), message);
      }
      continue;
    }
    const YAML::Node& node = it->second.node();
    // parse_switches and parse_traffic read these; a list of flows must not be empty.
    if (section.name == std::string(kSwitchesSection) ||
        section.name == std::string(kTrafficSection) ||
        section.name == std::string(kTrainingSection) ||
        section.name == std::string(kJobsSection)) {
      continue;
    }
    if (node.IsNull()) continue;  // "nic:" with every key left to its default
    if (!node.IsMap()) {
      it->second.fail("expected a map of " + std::string(section.name) + " keys (" +
                      join_words(keys_of(section.name), ", ") + "), got " + describe(node));
    }
    collect(ctx, node, section.name, found);
  }
  expand_kind_blocks(ctx, found);
  // Jobs given whole by --set or --vary run instead of the file's workload, training or
  // perftest section (a sweep compares a file's workload with jobs), which are then left out
  // with a warning; a section a --set or --vary also gave stays, and is refused beside jobs.
  std::vector<std::pair<std::string, KeyOrigin>> replaced;
  if (ctx.overrides.count(kJobsSection) && found.count(kJobsSection)) {
    for (const std::string other : {"workload", "training", "perftest"}) {
      if (!found.count(other)) continue;
      const bool overridden = std::any_of(
          ctx.overrides.begin(), ctx.overrides.end(),
          [&](const auto& o) { return o.first == other || o.first.rfind(other + ".", 0) == 0; });
      if (overridden) continue;
      replaced.emplace_back(other, found.at(other).origin());
      for (auto it = found.begin(); it != found.end();) {
        it = it->first == other || it->first.rfind(other + ".", 0) == 0 ? found.erase(it)
                                                                        : std::next(it);
      }
    }
  }

  Scenario s;
  for (const auto& [section, origin] : replaced) {
    s.warnings.push_back(config_warning(origin, section,
                                        "not used: the jobs given by " +
                                            ctx.overrides.at(kJobsSection) +
                                            " run instead of the file's " + section + " section"));
  }
  for (const Section& section : config_detail::sections()) {
    if (const auto it = found.find(section.name); it != found.end()) {
      s.origins[section.name] = it->second.origin();
    }
  }
  if (const auto it = found.find("switch.profile"); it != found.end()) {
    merge_profile(ctx, it->second, profile_context, found);
  }
  if (const auto it = found.find("server.profile"); it != found.end()) {
    merge_server_profile(ctx, it->second, server_profile_context, found);
  }
  s.path = ctx.file;
  s.name = std::filesystem::path(ctx.file).stem().string();
  if (const auto it = found.find("dcqcn"); it != found.end()) {
    // The section's keys override a preset; dcqcn.preset (parsed first) may name another.
    try {
      apply_dcqcn_preset(s.dcqcn.preset, s);
    } catch (const std::invalid_argument& e) {
      it->second.fail(e.what());
    }
  }
  parse_fields(ctx, found, s, true, "this scenario's");
  s.has_workload = found.count("workload") > 0;
  check_dateline(found, s);
  if (const auto it = found.find(kTrafficSection); it != found.end()) {
    parse_traffic(ctx, it->second, s);  // after routing.dateline_class and its check
  }
  if (const auto it = found.find(kTrainingSection); it != found.end()) {
    parse_training(ctx, it->second, s);
  }
  if (const auto it = found.find(kJobsSection); it != found.end()) {
    // Each job is a workload of its own: one run has jobs or the single-workload sections.
    if (found.count("measured.nccl_tests")) {
      it->second.fail(
          "measured.nccl_tests compares a workload section's sweep with a real log; "
          "jobs have none: give the log's collective as a workload section instead");
    }
    for (const char* other : {"workload", kTrainingSection, "perftest"}) {
      if (found.count(other)) {
        it->second.fail("jobs run instead of a " + std::string(other) +
                        " section; give one job per workload, or drop jobs");
      }
    }
    parse_jobs(ctx, it->second, s);  // after the nccl section, which a job's nccl starts from
  }

  // Cross-field rules, each component's.
  check_link(found, s);
  check_workload(found, s);
  check_perftest(found, s);
  check_background(found, s);
  check_pcie(ctx, found, s);
  check_nic(ctx, found, s);
  check_switch(ctx, found, s);
  check_pfc(ctx, s, found);
  check_ecn_reach(s, s.ecn, s.pfc, found, nullptr, found, s.warnings);
  bool pfc_somewhere = false;  // a switch's own pfc.enabled: true uses the top-level keys
  if (const auto it = found.find(kSwitchesSection); it != found.end()) {
    parse_switches(ctx, it->second, found, s);  // after the top-level pfc and ecn
    for (const auto& [name, o] : s.switches) pfc_somewhere |= o.pfc.enabled;
  }
  warn_pfc(s, s.pfc, found, nullptr, "", pfc_somewhere, s.warnings);
  check_dcqcn(found, s);
  check_timely(found, s);
  check_hpcc(found, s);
  check_flow(found, s);
  check_congestion_control(found, s);
  return s;
}

}  // namespace

}  // namespace config_detail

using namespace config_detail;

std::vector<std::string> override_paths() {
  std::vector<std::string> paths = all_paths();
  for (const Section& x : sections()) paths.emplace_back(x.name);
  for (const std::string& kind : topology_kinds().values()) {
    const std::string block = std::string(kTopologySection) + "." + kind;
    paths.push_back(block);
    for (const std::string& key : keys_of(kTopologySection)) {
      if (key != "kind") paths.push_back(block + "." + key);
    }
  }
  for (const std::string& key : training_key_names()) {
    paths.push_back(std::string(kTrainingSection) + "." + key);
  }
  for (const char* name : {"leaf0", "spine0"}) {
    for (const Field& f : fields()) {
      if (std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(), f.section) !=
          kPerSwitchSections.end()) {
        paths.push_back(std::string(kSwitchesSection) + "." + name + "." + path_of(f));
      }
    }
  }
  return paths;
}

ConfigError key_error(const Scenario& sc, const std::string& key_path, const std::string& message) {
  return key_error(KeyPlaces{sc.path, sc.origins, sc.written_as}, key_path, message);
}

void check_switch_overrides(const Scenario& sc, const std::vector<std::string>& switch_names) {
  std::vector<std::pair<KeyOrigin, std::string>> unknown;  // in the order written
  for (const auto& [name, settings] : sc.switches) {
    if (std::find(switch_names.begin(), switch_names.end(), name) != switch_names.end()) continue;
    const auto it = sc.origins.find(std::string(kSwitchesSection) + "." + name);
    unknown.emplace_back(it == sc.origins.end() ? KeyOrigin{sc.path, 0, 0} : it->second, name);
  }
  if (unknown.empty()) return;
  const std::string& name =
      std::min_element(unknown.begin(), unknown.end(), [](const auto& a, const auto& b) {
        // The file's names by position, then those only a --set gave.
        return std::make_tuple(a.first.line == 0, a.first.line, a.first.column, a.second) <
               std::make_tuple(b.first.line == 0, b.first.line, b.first.column, b.second);
      })->second;
  const std::string guess = closest_match(name, switch_names);
  throw key_error(sc, std::string(kSwitchesSection) + "." + name,
                  "no switch named '" + name + "'" +
                      (guess.empty() ? " (fabricsim topo --dot shows the names)"
                                     : "; did you mean '" + guess + "'?"));
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::vector<std::string>& varied) {
  Context ctx;
  ctx.file = path;
  YAML::Node root = parse_yaml(path, read_config_file(path, "scenario file"));
  for (const std::string& o : overrides) apply_override(root, o, "--set", ctx);
  const std::map<std::string, std::string> set = ctx.overrides;  // path -> "--set KEY=VALUE"
  for (const std::string& o : varied) {
    apply_override(root, o, "--vary", ctx);
    check_not_set(o, set);
  }
  return building([&] { return build(ctx, root); }, "the scenario from " + path);
}

}  // namespace fabricsim