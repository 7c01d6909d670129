// The `server:` section (ServerConfig, scenario.hpp): server.profile names a server profile
// (configs/servers/*.yaml), a file of the keys that describe one server model (GPUs, NICs,
// NVLink, PCIe, compute capability) under their own sections, which the loader adds to the
// scenario as defaults, as it adds a switch profile's switch keys (merge_profile,
// params_link_nic.cpp).
#include <filesystem>

#include "sim/config/loader_detail.hpp"
#include "sim/config/yaml_text.hpp"

namespace fabricsim::config_detail {

namespace {

constexpr auto kServer = &Scenario::server;
using V = ServerConfig;

/// A server profile's keys in `section` (nullptr for a section it has none in).
const std::vector<std::string>* allowed_in(const std::string& section) {
  for (const auto& [name, keys] : server_profile_keys()) {
    if (name == section) return &keys;
  }
  return nullptr;
}

/// The section whose server-profile keys hold `key` ("" for none).
std::string section_of_server_key(const std::string& key) {
  for (const auto& [section, keys] : server_profile_keys()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return section;
  }
  return "";
}

/// "a server profile's topology keys are gpus_per_server, gpu_interconnect and nics_per_server".
std::string allowed_text(const std::string& section) {
  return "a server profile's " + section + " keys are " + join_words(*allowed_in(section), " and ");
}

/// Fails on a key of `section` that a server profile does not set: a fabric or run key of that
/// section, a server key of another section, or a misspelling.
[[noreturn]] void refuse_key(const Context& pctx, const std::string& section,
                             const std::string& name, const YAML::Mark& mark) {
  const std::string path = section + "." + name;
  const std::vector<std::string> scenario_keys = keys_of(section);
  std::string message;
  if (std::find(scenario_keys.begin(), scenario_keys.end(), name) != scenario_keys.end()) {
    message = path + " describes the fabric or the run, not a server: set it in the scenario (" +
              allowed_text(section) + ")";
  } else if (const std::string guess = closest_match(name, *allowed_in(section)); !guess.empty()) {
    message = "unknown key '" + name + "'; did you mean '" + guess + "'?";
  } else if (const std::string other = section_of_server_key(name); !other.empty()) {
    message = "unknown key '" + name + "'; it belongs in the " + other + " section (" + other +
              "." + name + ")";
  } else {
    message = "unknown key '" + name + "'; " + allowed_text(section);
  }
  pctx.fail(path, mark, message);
}

}  // namespace

// clang-format off
std::span<const Field> server_params() {
  static const Field rows[] = {
  // Read, resolved and merged before any field is parsed (merge_server_profile); kept here so
  // that --set server.profile=... works and the key is listed with the others.
  {"server", "profile", false, String(), at<kServer, &V::profile>,
   "server profile (configs/servers/*.yaml) whose topology, link, nic, pcie and nccl keys are defaults"},
  };
  return rows;
}
// clang-format on

const std::vector<std::pair<std::string, std::vector<std::string>>>& server_profile_keys() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> keys = {
      {"topology", {"gpus_per_server", "gpu_interconnect", "nics_per_server"}},
      {"link", {"host_rate", "nvlink_rate", "nvlink_efficiency", "pcie_rate", "pcie_latency"}},
      {"nic", {"mtu", "message_rate", "tx_latency", "rx_latency", "dma_read_latency", "pcie_rate"}},
      {"pcie", {"generation", "lanes", "max_payload"}},
      {"nccl", {"compute_capability", "nvls_enable"}},
  };
  return keys;
}

bool is_server_profile_key(const std::string& path) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) return false;
  const std::vector<std::string>* keys = allowed_in(path.substr(0, dot));
  return keys && std::find(keys->begin(), keys->end(), path.substr(dot + 1)) != keys->end();
}

/// Reads the server profile that `profile` (the scenario's server.profile) names into `pctx`
/// (which must outlive `found`), checks it on its own, and adds each of its keys that the
/// scenario does not set to `found`: the profile's values are defaults that point into the
/// profile file when they are wrong. A key for another topology kind than the scenario's is
/// left out when the fields are parsed (parse_fields), not refused.
void merge_server_profile(const Context& ctx, const Value& profile, Context& pctx,
                          std::map<std::string, Value>& found) {
  std::vector<std::string> top = {"name", "source"}, sections;
  for (const auto& [section, keys] : server_profile_keys()) sections.push_back(section);
  top.insert(top.end(), sections.begin(), sections.end());
  const YAML::Node root = read_profile(ctx, profile, pctx, "server",
                                       "a map with the sections " + join_words(sections, " and ") +
                                           " (and optional name and source)");

  std::map<std::string, int> first_line;
  std::map<std::string, Value> own;  // the profile's keys, by dotted path
  bool has_section = false;
  for (const auto& entry : root) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) pctx.fail("", key.Mark(), "expected a key name, got " + describe(key));
    const std::string name = key.Scalar();
    if (std::find(top.begin(), top.end(), name) == top.end()) {
      std::string message = "unknown key '" + name + "' in a server profile";
      if (name == "server") {
        message = "a server profile cannot name another profile";
      } else if (name == "switch") {
        message +=
            "; switches are the fabric's: set them in the scenario, or name a switch "
            "profile there (switch.profile)";
      } else if (is_section(name)) {
        message += "; the " + name +
                   " section describes the fabric or the run, not a server: "
                   "set it in the scenario";
      } else if (const std::string guess = closest_match(name, top); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
      } else if (const std::string section = section_of_server_key(name); !section.empty()) {
        message += "; it belongs in the " + section + " section (" + section + "." + name + ")";
      } else {
        message += "; a server profile has only " + join_words(top, ", ");
      }
      pctx.fail(name, key.Mark(), message);
    }
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      pctx.fail(name, key.Mark(),
                "duplicate key '" + name + "' (first given at line " +
                    std::to_string(seen->second) + ")");
    }
    const Value v(&pctx, name, entry.second, key.Mark());
    if (name == "name" || name == "source") {
      v.string();  // free text for the reader
      continue;
    }
    has_section = true;
    if (v.node().IsNull()) continue;
    if (!v.node().IsMap()) {
      v.fail("expected a map of " + name + " keys (" + allowed_text(name) + "), got " +
             describe(v.node()));
    }
    for (const auto& item : v.node()) {
      if (!item.first.IsScalar()) continue;  // collect says so
      const std::string k = item.first.Scalar();
      if (!is_server_profile_key(name + "." + k)) refuse_key(pctx, name, k, item.first.Mark());
    }
    collect(pctx, v.node(), name, own);
  }
  if (!has_section) {
    pctx.fail("", YAML::Mark::null_mark(),
              "a server profile sets its keys under " + join_words(sections, " or ") +
                  "; this one has none");
  }

  // On its own first: a wrong value is the profile's fault, even where the scenario overrides
  // it or where the scenario's topology kind does not use it.
  Scenario alone;
  for (const Field& f : fields()) {
    if (const auto it = own.find(path_of(f)); it != own.end()) read_field(f, it->second, alone);
  }
  check_nic(pctx, own, alone);
  check_pcie(pctx, own, alone);
  for (const auto& [path, value] : own) found.emplace(path, value);  // the scenario's win
}

}  // namespace fabricsim::config_detail
