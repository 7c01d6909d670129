// --set and --vary: a KEY=VALUE applied to the scenario's YAML tree before it is read, the key
// checked against the tables (a leaf, a section given whole, a kind block, a switch's key).
#include "sim/config/loader_detail.hpp"
#include "sim/config/yaml_text.hpp"

namespace fabricsim::config_detail {

/// Applies one "a.b=value" to the tree and records it in ctx.overrides.
/// "topology.spine-leaf" when `path` is a key of that kind block (topology.spine-leaf.leaves),
/// else "".
std::string kind_block_of(const std::string& path) {
  for (const std::string& kind : topology_kinds().values()) {
    const std::string block = std::string(kTopologySection) + "." + kind;
    if (path.size() > block.size() + 1 && path.rfind(block + ".", 0) == 0) return block;
  }
  return "";
}

YAML::Node override_value(const std::string& value_text, const std::string& where,
                          const std::string& path) {
  try {
    return parse_yaml_value(value_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(where, 0, 0, path, "cannot read the value as YAML: " + e.msg);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(where, 0, 0, path, e.what());
  }
}

void apply_override(YAML::Node& root, const std::string& text, const std::string& flag,
                    Context& ctx) {
  // A line break (a value pasted from a file, $'…\n---\n…') would start a line or a YAML
  // document that the value's reading drops: refused, with the text shown on one line.
  std::string where = flag + " ";
  for (const char c : text) {
    where += c == '\n' ? std::string("\\n") : c == '\r' ? "\\r" : std::string(1, c);
  }
  if (const size_t br = text.find_first_of("\r\n"); br != std::string::npos) {
    throw ConfigError(where, 0, 0, "",
                      "expected KEY=VALUE on one line; found a line break after '" +
                          text.substr(0, br) + "' (what follows it would be dropped)");
  }
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw ConfigError(where, 0, 0, text, "expected KEY=VALUE, e.g. topology.oversubscription=3");
  }
  const std::string path = text.substr(0, eq);
  const std::string value_text = text.substr(eq + 1);
  const auto fail = [&](const std::string& message) -> void {
    throw ConfigError(where, 0, 0, path, message);
  };

  // The path must be a leaf of the schema, or a switch's override of one: the YAML keys it
  // names, in order.
  const std::vector<std::string> paths = all_paths();
  if (path.empty()) fail("expected a key before '=', e.g. topology.oversubscription=3");
  std::vector<std::string> keys;
  const std::string switches = std::string(kSwitchesSection) + ".";
  if (apply_jobs_override(root, path, value_text, where, ctx)) return;
  const std::string traffic = kTrafficSection;
  if (path == traffic || path.rfind(traffic + ".", 0) == 0 || path.rfind(traffic + "[", 0) == 0) {
    fail("traffic is a list; edit it in the file");
  }
  const std::string training = std::string(kTrainingSection) + ".";
  if (path.rfind(training, 0) == 0) {
    const std::string key = path.substr(training.size());
    if (std::find(training_key_names().begin(), training_key_names().end(), key) ==
        training_key_names().end()) {
      const std::string guess = closest_match(key, training_key_names());
      fail("unknown key" + (guess.empty()
                                ? "; training has only " + join_words(training_key_names(), ", ")
                                : "; did you mean '" + training + guess + "'?"));
    }
    keys = {kTrainingSection, key};
  } else if (path.rfind(switches, 0) == 0) {
    // switches.NAME.SECTION.KEY (NAME may hold dots: SECTION and KEY are the last two parts)
    const std::string expected = "expected switches.SWITCH." +
                                 join_words(kPerSwitchSections, ".KEY or switches.SWITCH.") +
                                 ".KEY, e.g. switches.leaf0.pfc.xoff=100KB";
    const size_t key_dot = path.rfind('.');
    const size_t section_dot = path.rfind('.', key_dot - 1);
    if (section_dot == std::string::npos || section_dot < switches.size() + 1) fail(expected);
    const std::string name = path.substr(switches.size(), section_dot - switches.size());
    const std::string leaf_path = path.substr(section_dot + 1);
    std::vector<std::string> switch_paths;
    for (const Field& f : fields()) {
      if (std::find(kPerSwitchSections.begin(), kPerSwitchSections.end(), f.section) !=
          kPerSwitchSections.end()) {
        switch_paths.push_back(path_of(f));
      }
    }
    if (std::find(switch_paths.begin(), switch_paths.end(), leaf_path) == switch_paths.end()) {
      const std::string guess = closest_match(leaf_path, switch_paths);
      fail(guess.empty() ? "unknown key; " + expected
                         : "unknown key; did you mean '" + switches + name + "." + guess + "'?");
    }
    keys = {kSwitchesSection, name, path.substr(section_dot + 1, key_dot - section_dot - 1),
            path.substr(key_dot + 1)};
  } else if (const std::string block = kind_block_of(path); !block.empty()) {
    // topology.KIND.KEY: a key of one kind's block
    const std::string key = path.substr(block.size() + 1);
    const std::vector<std::string> valid = keys_of(kTopologySection);
    if (key == "kind" || std::find(valid.begin(), valid.end(), key) == valid.end()) {
      const std::string guess = closest_match(key, valid);
      fail(key == "kind"   ? "a kind block cannot change the kind; set topology.kind"
           : guess.empty() ? "unknown key; valid keys are: " + join_words(valid, ", ")
                           : "unknown key; did you mean '" + block + "." + guess + "'?");
    }
    keys = {kTopologySection, block.substr(block.find('.') + 1), key};
  } else if (std::find(paths.begin(), paths.end(), path) != paths.end()) {
    for (size_t start = 0, dot = 0; dot != std::string::npos; start = dot + 1) {
      dot = path.find('.', start);
      keys.push_back(path.substr(start, dot - start));
    }
  } else {
    if (path == kSwitchesSection) {
      fail("'" + path + "' is a section; set a switch's key, e.g. switches.leaf0.pfc.xoff");
    }
    if (const std::string kind = path.substr(path.find('.') + 1);
        path.rfind(std::string(kTopologySection) + ".", 0) == 0 && [&] {
          const std::vector<std::string> kinds = topology_kinds().values();
          return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
        }()) {
      // topology.KIND={...}: a whole kind block
      YAML::Node map;
      try {
        map = parse_yaml_value(value_text);
      } catch (const YAML::ParserException&) {
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      if (!map.IsMap())
        fail("expected a map of " + kind + " topology keys, e.g. " + path + "={...}");
      if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
      if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
      YAML::Node topology = root[kTopologySection];
      if (!topology.IsDefined() || topology.IsNull()) {
        root[kTopologySection] = YAML::Node(YAML::NodeType::Map);
      } else if (!topology.IsMap()) {
        fail("cannot set a key under 'topology': in " + ctx.file + " it is " + describe(topology) +
             ", not a map");
      }
      root[kTopologySection][kind] = map;
      ctx.overrides[path] = where;
      for (const auto& entry : map) {
        if (entry.first.IsScalar()) ctx.overrides[path + "." + entry.first.Scalar()] = where;
      }
      return;
    }
    if (is_section(path)) {
      // A whole section as a map replaces the file's (how a sweep compares fabric families:
      // --vary 'topology={kind: fat-tree, k: 8},{kind: spine-leaf, ...}').
      YAML::Node map;
      try {
        map = parse_yaml_value(value_text);
      } catch (const YAML::ParserException&) {
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      if (!map.IsMap()) {
        const std::vector<std::string> section_keys =
            path == kTrainingSection ? training_key_names() : keys_of(path);
        const std::string first = section_keys.empty() ? "KEY" : section_keys.front();
        fail("'" + path + "' is a section; set one of its keys, e.g. " + path + "." + first +
             ", or give the whole section as a map, e.g. " + path + "={" + first + ": ...}");
      }
      if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
      if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
      root[path] = map;
      ctx.overrides[path] = where;
      for (const auto& entry : map) {
        if (entry.first.IsScalar()) ctx.overrides[path + "." + entry.first.Scalar()] = where;
      }
      return;
    }
    for (const std::string& p : paths) {
      if (path.rfind(p + ".", 0) == 0) {
        fail("cannot set a key under '" + p + "': it is a value, not a map");
      }
    }
    // Suggestions include the kind blocks (topology.spine-leaf) and their keys, so a misspelt
    // block name finds its block rather than the nearest plain key.
    std::vector<std::string> candidates = paths;
    for (const std::string& kind : topology_kinds().values()) {
      const std::string block = std::string(kTopologySection) + "." + kind;
      candidates.push_back(block);
      for (const std::string& key : keys_of(kTopologySection)) {
        if (key != "kind") candidates.push_back(block + "." + key);
      }
    }
    const std::string guess = closest_match(path, candidates);
    // A known key under the wrong section (link.mtu for nic.mtu), as the file's reading says,
    // unless the closest path keeps the key's name (topology.spinleaf.leaves ->
    // topology.spine-leaf.leaves): the name is more likely right than the section.
    const std::string name = path.substr(path.rfind('.') + 1);
    const auto ends_with_name = [&](const std::string& p) {
      return p == name || (p.size() > name.size() && p[p.size() - name.size() - 1] == '.' &&
                           p.compare(p.size() - name.size(), name.size(), name) == 0);
    };
    if (guess.empty() || !ends_with_name(guess)) {
      std::string homes;
      int count = 0;
      for (const std::string& p : paths) {
        if (ends_with_name(p)) homes += (count++ == 0 ? "'" : "' or '") + p;
      }
      if (count > 0) fail("unknown key; did you mean " + homes + "'?");
    }
    fail("unknown key" + (guess.empty() ? "; valid keys are: " + join_words(paths, ", ")
                                        : "; did you mean '" + guess + "'?"));
  }

  // The value: one YAML scalar.
  const YAML::Node value = override_value(value_text, where, path);
  if (value.IsNull()) fail("expected a value after '='");
  // Any YAML value: the key's own parser says whether a list or a map fits it.

  // Place it, creating the sections (and a switch's maps) the file does not have.
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
  YAML::Node node = root;  // shares root's node: what is set in it is set in root
  std::string above;       // the dotted path of `node`
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    above += (i > 0 ? "." : "") + keys[i];
    const YAML::Node existing = static_cast<const YAML::Node&>(node)[keys[i]];
    if (!existing.IsDefined() || existing.IsNull()) {
      node[keys[i]] = YAML::Node(YAML::NodeType::Map);
    } else if (!existing.IsMap()) {
      const YAML::Mark m = existing.Mark();
      fail("cannot set a key under '" + above + "': in " + ctx.file +
           (m.is_null() ? "" : ":" + std::to_string(m.line + 1)) + " it is " + describe(existing) +
           ", not a map");
    }
    node.reset(node[keys[i]]);
  }
  node[keys.back()] = value;
  ctx.overrides[path] = where;
}

/// topology.KIND.KEY -> topology.KEY: a kind block's key and the plain key are one setting.
std::string setting_of(const std::string& path) {
  const std::string block = kind_block_of(path);
  return block.empty() ? path : std::string(kTopologySection) + path.substr(block.size());
}

/// A --vary `text` (KEY=VALUE, already applied) on a setting that a --set also gave (`set`:
/// the paths the --set overrides wrote, each with its "--set KEY=VALUE"), or on a section that
/// holds one: each point's value would replace the --set's without a word, as a sweep refuses
/// --seed beside --vary seed=. Throws ConfigError naming both.
void check_not_set(const std::string& text, const std::map<std::string, std::string>& set) {
  const std::string path = text.substr(0, text.find('='));
  const std::string varied = setting_of(path);
  for (const auto& [key, where] : set) {
    const std::string given = setting_of(key);
    if (given == varied || given.rfind(varied + ".", 0) == 0) {
      throw ConfigError("--vary " + text, 0, 0, path,
                        "also given by " + where +
                            ": each point's --vary value would replace it; drop the --set or "
                            "the --vary");
    }
  }
}

}  // namespace fabricsim::config_detail
