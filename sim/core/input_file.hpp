// The one way fabricsim reads a file a user names: a scenario, an include such as a switch
// profile or a cost file, a perftest or nccl-tests log. Every such file is small text, so the
// reader refuses anything that is not a regular file (a FIFO or a pipe would block, a character
// device such as /dev/zero or /dev/urandom never ends, a directory has no text) and anything
// larger than a cap the caller chooses, before it holds more than that cap in memory.
//
// Pipes are refused on purpose: `/dev/stdin` fed by a pipe and a shell's process substitution
// `<(cmd)` are pipes, and a command that reads a file twice or reports its line numbers wants
// the bytes on disk. The message says to save the output to a file first.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fabricsim {

/// Why read_input_file could not return a file's text. what() is a message without the path,
/// e.g. "cannot open scenario file: No such file or directory"; callers put the path in front,
/// in their own error type (ConfigError, ParseError).
class InputFileError : public std::runtime_error {
 public:
  enum class Kind {
    cannot_open,  ///< open(2) failed (missing file, no permission); what() has strerror's text
    not_regular,  ///< a directory, FIFO, socket, character or block device
    too_large,    ///< more than the caller's max_bytes
    cannot_read,  ///< read(2) failed part way
  };
  InputFileError(Kind kind, const std::string& message) : std::runtime_error(message), kind(kind) {}
  Kind kind;
};

/// The whole text of the regular file `path`, bytes as they are.
///
/// `noun` names the file in messages ("scenario file", "switch profile 'x.yaml'", "log file").
/// `max_bytes` (> 0) is the most the file may hold; `why_max` (may be empty) says in a few
/// words why no real file of this kind comes near it, and is appended to the too-large message.
///
/// The path is opened with O_NONBLOCK, so that a FIFO without a writer cannot block the open;
/// the opened descriptor is then fstat'ed and anything but a regular file refused, naming what it
/// is ("a FIFO (named pipe)", "a character device", …; a directory keeps the system's words
/// "Is a directory"). The read loop stops as soon as more than `max_bytes` arrived, so a file
/// that grows while it is read is refused as well.
///
/// Throws InputFileError: cannot_open ("cannot open NOUN: <strerror>"), not_regular ("cannot
/// read NOUN: Is a directory" or "cannot read NOUN: it is a FIFO (named pipe), not a regular
/// file; …"), too_large ("not a NOUN: larger than 16 MiB (WHY)"), cannot_read ("cannot read
/// NOUN: <strerror>").
std::string read_input_file(const std::string& path, const std::string& noun, int64_t max_bytes,
                            const std::string& why_max = "");

}  // namespace fabricsim
