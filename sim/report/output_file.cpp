#include "sim/report/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <streambuf>
#include <vector>

namespace fabricsim {

OutputError::OutputError(const std::string& path, int error_number)
    : std::runtime_error("cannot write " + path + ": " + std::strerror(error_number)),
      path_(path),
      errno_(error_number),
      reason_(std::strerror(error_number)) {}

/// A stream buffer over a file descriptor that remembers the errno of the first failed write
/// (std::ofstream loses it) and refuses every write after it.
class OutputFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(int fd) : fd_(fd), buf_(kBytes) { setp(buf_.data(), buf_.data() + buf_.size()); }
  /// The errno of the failed write; 0 while none failed.
  int error() const { return error_; }
  /// Writes out what is buffered; false (error() set) when it cannot.
  bool drain() {
    if (error_ != 0) return false;
    if (!write_all(pbase(), static_cast<size_t>(pptr() - pbase()))) return false;
    setp(buf_.data(), buf_.data() + buf_.size());
    return true;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (error_ != 0) return 0;
    if (n > epptr() - pptr()) {
      if (!drain()) return 0;
      if (n >= static_cast<std::streamsize>(buf_.size())) {  // large: past the buffer
        return write_all(s, static_cast<size_t>(n)) ? n : 0;
      }
    }
    std::memcpy(pptr(), s, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  static constexpr size_t kBytes = 64 * 1024;
  bool write_all(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  int fd_;
  int error_ = 0;
  std::vector<char> buf_;
};

namespace {

/// Whether `real` (a resolved path) is a kernel's view of a file rather than a file of its own
/// (/dev/stdout resolves to /proc/self/fd/1, which may be a regular file the shell opened).
bool is_kernel_path(const std::string& real) {
  return real.rfind("/proc/", 0) == 0 || real.rfind("/dev/", 0) == 0;
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path), target_(path) {
  if (path.empty()) throw OutputError(path, ENOENT);
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;  // through symbolic links
  if (exists && S_ISDIR(st.st_mode)) throw OutputError(path, EISDIR);
  bool in_place = exists && !S_ISREG(st.st_mode);
  struct stat lst {};
  if (exists && !in_place && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    // A link to a regular file: replace the file, keep the link.
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      target_ = real;
      std::free(real);
      in_place = is_kernel_path(target_);
    }
  }
  if (in_place) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) throw OutputError(path, errno);
  } else {
    temp_ = target_ + ".tmp-" + std::to_string(::getpid());
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd_ < 0) {
      const int e = errno;
      temp_.clear();
      throw OutputError(path, e);
    }
    // The file replaced keeps its permissions, as rewriting it in place would.
    if (exists) (void)::fchmod(fd_, st.st_mode & 07777);
  }
  buffer_ = std::make_unique<Buffer>(fd_);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

OutputFile::~OutputFile() {
  discard();
}

std::ostream& OutputFile::stream() {
  return *stream_;
}

void OutputFile::check() {
  if (done_) throw std::logic_error("OutputFile: " + path_ + " is already closed");
  if (buffer_->error() != 0) fail(buffer_->error());
  if (!*stream_) fail(EIO);
}

void OutputFile::write(std::string_view bytes) {
  check();
  stream_->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  check();
}

void OutputFile::commit() {
  check();
  if (!buffer_->drain()) fail(buffer_->error());
  const int fd = fd_;
  fd_ = -1;
  // Linux releases the descriptor even when close() is interrupted: EINTR is not a failure.
  if (::close(fd) != 0 && errno != EINTR) fail(errno);
  if (!temp_.empty() && ::rename(temp_.c_str(), target_.c_str()) != 0) fail(errno);
  done_ = true;
}

void OutputFile::discard() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void OutputFile::fail(int error_number) {
  discard();
  throw OutputError(path_, error_number);
}

void write_output_file(const std::string& path, std::string_view text) {
  OutputFile f(path);
  f.write(text);
  f.commit();
}

void rewrite_output_file_in_place(const std::string& path, std::string_view old_text,
                                  std::string_view new_text) {
  size_t prefix = 0;
  while (prefix < old_text.size() && prefix < new_text.size() &&
         old_text[prefix] == new_text[prefix]) {
    ++prefix;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw OutputError(path, errno);
  // Makes the file `text` (which shares `prefix` with what it holds); 0 or the errno.
  const auto put = [&](std::string_view text) {
    for (size_t done = prefix; done < text.size();) {
      const ssize_t w =
          ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return w < 0 ? errno : EIO;
      done += static_cast<size_t>(w);
    }
    return ::ftruncate(fd, static_cast<off_t>(text.size())) == 0 ? 0 : errno;
  };
  const int error = put(new_text);
  const bool restored = error != 0 && put(old_text) == 0;
  const int closed = ::close(fd) == 0 || errno == EINTR ? 0 : errno;
  if (error == 0 && closed == 0) return;
  if (!restored) ::unlink(path.c_str());  // neither text whole: no file rather than a broken one
  throw OutputError(path, error != 0 ? error : closed);
}

void remove_output_file(const std::string& path) noexcept {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
    ::unlink(path.c_str());
  }
}

void check_output_file(const std::string& path) {
  // A device or pipe is not opened to be proved: a pipe's reader would see its end.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return;
  OutputFile f(path);
  f.discard();
}

}  // namespace fabricsim
