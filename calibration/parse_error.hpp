// Error thrown by the calibration log parsers (nccl-tests, perftest).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/core/input_file.hpp"

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

/// The largest perftest or nccl-tests log the parsers read. The real logs in tests/data/ are
/// 1 to 19 KB (the largest a 16-rank sweep with NCCL_DEBUG=INFO lines). 16 MiB is a thousand
/// times that and still parses in about 6 s (measured: 15 MB of NCCL INFO lines); a
/// NCCL_DEBUG=INFO log of a very large job can exceed it, and its table is what calibrate reads.
inline constexpr int64_t kMaxLogFileBytes = int64_t{16} << 20;

/// The whole of the log file `path`, bytes as they are: read_input_file (sim/core/input_file.hpp)
/// with the cap kMaxLogFileBytes. Throws ParseError (line 0) with its message when the file is
/// missing, a directory, a pipe, FIFO or device, larger than the cap, or cannot be read.
inline std::string read_log_text(const std::string& path) {
  try {
    return read_input_file(path, "log file", kMaxLogFileBytes,
                           "real perftest and nccl-tests logs are tens of KB; cut what surrounds "
                           "the tool's output, e.g. NCCL_DEBUG=INFO lines");
  } catch (const InputFileError& e) {
    throw ParseError(path, 0, e.what());
  }
}

}  // namespace fabricsim
