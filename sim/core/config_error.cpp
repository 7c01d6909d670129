#include "sim/core/config_error.hpp"

#include <utility>

namespace fabricsim {

std::string located_message(const std::string& where, int line, int column,
                            const std::string& key_path, const std::string& message) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on the same text built with +.
  std::string out = where;
  if (line > 0) {
    out += ':';
    out += std::to_string(line);
    out += ':';
    out += std::to_string(column);
  }
  out += ": ";
  if (!key_path.empty()) {
    out += key_path;
    out += ": ";
  }
  out += message;
  return out;
}

ConfigError::ConfigError(std::string where, int line, int column, std::string key_path,
                         std::string message)
    : std::runtime_error(located_message(where, line, column, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

ConfigError key_error(const KeyPlaces& places, const std::string& key_path,
                      const std::string& message) {
  for (std::string key = key_path;;) {
    if (const auto it = places.origins.find(key); it != places.origins.end()) {
      // A key given in a kind block is named as written (topology.fat-tree.k).
      const auto alias = places.written_as.find(key_path);
      const std::string& named =
          key == key_path && alias != places.written_as.end() ? alias->second : key_path;
      return ConfigError(it->second.where, it->second.line, it->second.column, named, message);
    }
    const size_t dot = key.rfind('.');
    if (dot == std::string::npos) break;
    key.resize(dot);  // fall back to the section
  }
  return ConfigError(places.file, 0, 0, key_path, message);
}

}  // namespace fabricsim
