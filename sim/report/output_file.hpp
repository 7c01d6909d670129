// Output files written whole or not at all: results.json and the CSVs, trace.json (streamed
// during the run), sweep tables and plots, calibrate's fragment and report, `topo --dot`.
//
// Bytes go to NAME.tmp-PID in NAME's folder; commit() flushes, closes (both checked) and renames
// it over NAME. On any failure the temporary file is removed and OutputError says which file and
// why (strerror of the errno: "No space left on device", "File too large", ...), so a reader
// never finds half a file under NAME: either the whole new one or what was there before.
// Nothing is fsync'ed: the point is a full disk or a quota, not a power cut.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fabricsim {

/// An output file that could not be written whole. what() is "cannot write PATH: REASON".
class OutputError : public std::runtime_error {
 public:
  /// `error_number` is the errno of the failed call; REASON is std::strerror of it.
  OutputError(const std::string& path, int error_number);
  /// The file the user asked for (never the temporary name).
  const std::string& path() const noexcept { return path_; }
  int error_number() const noexcept { return errno_; }
  /// std::strerror(error_number()), e.g. "No space left on device" for ENOSPC.
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  int errno_;
  std::string reason_;
};

/// One output file being written. A NAME that exists and is not a regular file (a terminal,
/// /dev/stdout, a pipe, /dev/full) cannot be replaced: it is written in place, every write and
/// the close still checked. A symbolic link to a regular file is followed (the link stays).
class OutputFile {
 public:
  /// Opens the temporary file. Throws OutputError: NAME is a directory (EISDIR), its folder
  /// does not exist or is not writable.
  explicit OutputFile(const std::string& path);
  /// Removes the temporary file unless commit() succeeded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// The buffered stream to write to. A failed write sets its badbit and is remembered;
  /// commit() (or write()) reports it.
  std::ostream& stream();
  /// Throws OutputError (the temporary file removed) if a write through stream() failed.
  void check();
  /// Appends `bytes`. Throws OutputError (the temporary file removed) when they cannot be
  /// written, or when an earlier write through stream() failed.
  void write(std::string_view bytes);
  /// Flushes, closes and renames over NAME. Throws OutputError (the temporary file removed).
  /// Once only: later calls, and writes after it, throw std::logic_error.
  void commit();
  /// Gives up: the temporary file is removed, NAME is left as it was.
  void discard() noexcept;
  /// NAME as given.
  const std::string& path() const noexcept { return path_; }

 private:
  class Buffer;
  /// Throws the OutputError of the recorded errno after discarding.
  [[noreturn]] void fail(int error_number);
  std::string path_;    ///< as given, for messages
  std::string target_;  ///< what is replaced (a symbolic link resolved)
  std::string temp_;    ///< NAME.tmp-PID; "" when written in place
  int fd_ = -1;
  bool done_ = false;  ///< committed or discarded
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

/// Writes `text` to `path` whole (OutputFile, then commit). Throws OutputError.
void write_output_file(const std::string& path, std::string_view text);

/// Changes `path`, which holds `old_text` (this process wrote it), to `new_text` in place, for
/// when a second, temporary copy does not fit (a full disk): only the bytes after the texts'
/// common prefix are written, so the disk needs room for the growth alone (usually inside the
/// file's last block). Not atomic: on a failure the old bytes are put back, or, when even that
/// fails, the file is removed; then throws OutputError.
void rewrite_output_file_in_place(const std::string& path, std::string_view old_text,
                                  std::string_view new_text);

/// Removes what an earlier run left at `path` (a file, or a symbolic link: not what it names),
/// so that it does not pass for this run's; a directory, device or pipe there is left alone.
/// Errors are ignored.
void remove_output_file(const std::string& path) noexcept;

/// Proves that an OutputFile for `path` can be opened (creates and removes its temporary file),
/// so a long computation does not end on a folder that cannot take its result; an existing
/// device or pipe is left unopened. Throws OutputError.
void check_output_file(const std::string& path);

}  // namespace fabricsim
