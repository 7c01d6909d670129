// Error thrown by the calibration log parsers (nccl-tests, perftest).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace fabricsim {

/// A log that cannot be read as the expected tool output.
/// `line` is 1-based; 0 means "the file as a whole" (empty file, no table found).
/// what() is "path:line: message".
struct ParseError : std::runtime_error {
  ParseError(std::string path, int line, std::string message)
      : std::runtime_error(path + ":" + std::to_string(line) + ": " + message),
        path(std::move(path)),
        line(line),
        message(std::move(message)) {}

  std::string path;     ///< file name as given to the parser
  int line;             ///< 1-based line number, 0 for the whole file
  std::string message;  ///< description without the "path:line: " prefix
};

/// The whole of the log file `path`, bytes as they are. Throws ParseError (line 0) when it is a
/// directory or cannot be opened or read.
inline std::string read_log_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ParseError(path, 0, "is a directory; expected a log file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ParseError(path, 0, "cannot read file");
  return ss.str();
}

}  // namespace fabricsim
