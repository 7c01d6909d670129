// Bad input, said where it was written: the error every component throws for a value a scenario,
// a --set or an environment variable gave (the CLI maps it to exit code 2), and where each key
// of a loaded scenario came from.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

namespace fabricsim {

/// Where a key's value came from: the file position of its value, or the --set that gave it.
struct KeyOrigin {
  std::string where;  ///< the file, or "--set KEY=VALUE"
  int line = 0;       ///< 1-based; 0 for an override
  int column = 0;
};

/// Bad input in a scenario file or a --set override. what() reads
///   "FILE:LINE:COL: KEY.PATH: MESSAGE"      (position known; LINE and COL 1-based)
///   "FILE: KEY.PATH: MESSAGE"               (no position, e.g. a required key is missing)
///   "--set KEY=VALUE: KEY.PATH: MESSAGE"    (an override)
/// MESSAGE says what was expected and, for an unknown key or name, "did you mean 'x'?".
/// The CLI maps it to exit code 2.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string where, int line, int column, std::string key_path, std::string message);
  const std::string& where() const { return where_; }
  int line() const { return line_; }      ///< 1-based; 0 when unknown
  int column() const { return column_; }  ///< 1-based; 0 when unknown
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  std::string where_, key_path_, message_;
  int line_, column_;
};

/// "WHERE:LINE:COL: KEY.PATH: MESSAGE" (":LINE:COL" left out when line is 0, "KEY.PATH: " when
/// key_path is empty): what a ConfigError says, and what a warning says after its prefix.
std::string located_message(const std::string& where, int line, int column,
                            const std::string& key_path, const std::string& message);

/// Where the keys of a loaded scenario were written (Scenario::path, origins and written_as,
/// sim/config/scenario.hpp), for a component that checks its own keys after loading without
/// knowing the whole Scenario.
struct KeyPlaces {
  const std::string& file;                               ///< the scenario file
  const std::map<std::string, KeyOrigin>& origins;       ///< dotted path -> where
  const std::map<std::string, std::string>& written_as;  ///< topology.k -> topology.fat-tree.k
};

/// A ConfigError about `key_path`, positioned where the key (or, failing that, its section) was
/// written, or naming the --set that gave it; the file alone when the key was not given.
ConfigError key_error(const KeyPlaces& places, const std::string& key_path,
                      const std::string& message);

}  // namespace fabricsim
