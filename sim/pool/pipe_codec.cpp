#include "sim/pool/pipe_codec.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fabricsim {

void put_u64(std::string& s, uint64_t v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  s.append(b, sizeof v);
}
void put_f64(std::string& s, double v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  put_u64(s, u);
}
void put_str(std::string& s, const std::string& v) {
  put_u64(s, v.size());
  s += v;
}

uint64_t PipeReader::u64() {
  uint64_t v = 0;
  if (!ok_ || s_.size() - pos_ < sizeof v) {
    ok_ = false;
    return 0;
  }
  std::memcpy(&v, s_.data() + pos_, sizeof v);
  pos_ += sizeof v;
  return v;
}

double PipeReader::f64() {
  const uint64_t u = u64();
  double v = 0;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

std::string PipeReader::str() {
  const uint64_t n = u64();
  if (!ok_ || s_.size() - pos_ < n) {
    ok_ = false;
    return std::string();
  }
  std::string v = s_.substr(pos_, n);
  pos_ += n;
  return v;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace fabricsim
