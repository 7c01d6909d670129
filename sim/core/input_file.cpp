#include "sim/core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sim/core/units.hpp"

namespace fabricsim {
namespace {

/// Closes the descriptor when the read ends, however it ends.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

/// "cannot read NOUN: …" for anything that is not a regular file.
[[noreturn]] void refuse_type(mode_t mode, const std::string& noun) {
  using Kind = InputFileError::Kind;
  if (S_ISDIR(mode)) {
    throw InputFileError(Kind::not_regular, "cannot read " + noun + ": " + std::strerror(EISDIR));
  }
  std::string what;
  std::string hint;
  if (S_ISFIFO(mode)) {
    what = "a pipe or FIFO";
    hint =
        "; save the output to a file first (a pipe, /dev/stdin fed by a pipe or a shell's "
        "<(...) is read once and may never end)";
  } else if (S_ISCHR(mode)) {
    what = "a character device";
    hint = " (/dev/zero, /dev/urandom and terminals never end)";
  } else if (S_ISBLK(mode)) {
    what = "a block device";
  } else if (S_ISSOCK(mode)) {
    what = "a socket";
  } else {
    what = "not a regular file";
  }
  throw InputFileError(Kind::not_regular,
                       "cannot read " + noun + ": it is " + what + ", not a regular file" + hint);
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& noun, int64_t max_bytes,
                            const std::string& why_max) {
  using Kind = InputFileError::Kind;
  // A first look by name, so that a device or FIFO is refused without being opened at all
  // (opening some devices has effects). The fstat below decides: the name may change between.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) refuse_type(st.st_mode, noun);

  Descriptor d;
  do {
    d.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  } while (d.fd < 0 && errno == EINTR);
  if (d.fd < 0) {
    throw InputFileError(Kind::cannot_open, "cannot open " + noun + ": " + std::strerror(errno));
  }
  if (::fstat(d.fd, &st) != 0) {
    throw InputFileError(Kind::cannot_read, "cannot read " + noun + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) refuse_type(st.st_mode, noun);

  const auto too_large = [&] {
    return InputFileError(Kind::too_large, "not a " + noun + ": larger than " +
                                               format_size(max_bytes) +
                                               (why_max.empty() ? "" : " (" + why_max + ")"));
  };
  if (st.st_size > max_bytes) throw too_large();
  std::string text;
  // st_size is a hint only (files in /proc say 0, a file may grow): the loop decides.
  text.reserve(static_cast<size_t>(std::max<int64_t>(st.st_size, 0)) + 1);
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(d.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw InputFileError(Kind::cannot_read, "cannot read " + noun + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > max_bytes) throw too_large();
  }
  return text;
}

}  // namespace fabricsim
