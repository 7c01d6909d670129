// A message through a pipe between two processes of the same binary (a parent and the child it
// forked): integers and doubles travel as their bytes, strings with their length first. The
// reader tells a whole message from a truncated or malformed one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fabricsim {

/// Appends `v`'s 8 bytes to `s`.
void put_u64(std::string& s, uint64_t v);
/// Appends the 8 bytes of `v` (its bit pattern, so it reads back exactly).
void put_f64(std::string& s, double v);
/// Appends `v`'s length (put_u64), then its bytes.
void put_str(std::string& s, const std::string& v);

/// Reads back what put_u64, put_f64 and put_str wrote, in order. A read past the end marks the
/// message bad (ok() false) and returns 0 or ""; once bad, every later read does the same.
class PipeReader {
 public:
  /// Reads `s`, which must outlive the reader (it keeps a reference).
  explicit PipeReader(const std::string& s) : s_(s) {}
  /// A temporary would be gone before the first read.
  explicit PipeReader(std::string&&) = delete;
  uint64_t u64();
  double f64();
  std::string str();
  bool ok() const { return ok_; }
  /// Marks the message bad (a value the writer never sends).
  void fail() { ok_ = false; }
  /// Every byte has been read.
  bool at_end() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  size_t pos_ = 0;
  bool ok_ = true;
};

/// Writes all of `data` to `fd` (again after EINTR); false when it cannot.
bool write_all(int fd, const std::string& data);

}  // namespace fabricsim
