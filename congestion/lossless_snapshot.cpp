#include "congestion/lossless_snapshot.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace fabricsim {

namespace {

// No padding: the bytes of a record are determined by its fields.
static_assert(std::has_unique_object_representations_v<LosslessSnapshot::Blocked>);
static_assert(std::has_unique_object_representations_v<LosslessSnapshot::Xoff>);
static_assert(std::has_unique_object_representations_v<LosslessSnapshot::InTx>);
static_assert(std::has_unique_object_representations_v<LosslessSnapshot::Holds>);
static_assert(std::has_unique_object_representations_v<LosslessSnapshot::Queued>);

template <class T>
void unite(std::vector<T>& into, const std::vector<T>& from) {
  into.insert(into.end(), from.begin(), from.end());
  std::sort(into.begin(), into.end());
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

/// Writes into a buffer sized beforehand (one allocation; no vector growth).
struct Writer {
  std::byte* at;
  void put(const void* p, size_t n) {
    if (n != 0) std::memcpy(at, p, n);
    at += n;
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const uint64_t n = v.size();
    put(&n, sizeof n);
    put(v.data(), n * sizeof(T));
  }
};

template <class T>
size_t vector_bytes(const std::vector<T>& v) {
  return sizeof(uint64_t) + v.size() * sizeof(T);
}

struct Reader {
  std::span<const std::byte> in;
  size_t at = 0;
  void get(void* p, size_t n) {
    if (in.size() - at < n) throw std::invalid_argument("LosslessSnapshot::decode: truncated");
    if (n != 0) std::memcpy(p, in.data() + at, n);
    at += n;
  }
  template <class T>
  void get_vector(std::vector<T>& v) {
    uint64_t n = 0;
    get(&n, sizeof n);
    if (n > (in.size() - at) / sizeof(T)) {
      throw std::invalid_argument("LosslessSnapshot::decode: record count beyond the bytes");
    }
    v.resize(n);
    get(v.data(), n * sizeof(T));
  }
};

constexpr uint32_t kMagic = 0x4C534E31;  // "LSN1"

}  // namespace

void LosslessSnapshot::merge(const LosslessSnapshot& other) {
  blocked |= other.blocked;
  stormed |= other.stormed;
  unite(blocked_queues, other.blocked_queues);
  unite(xoff, other.xoff);
  unite(in_tx, other.in_tx);
  unite(holds, other.holds);
  unite(queued, other.queued);
}

std::vector<std::byte> LosslessSnapshot::encode() const {
  std::vector<std::byte> out(sizeof kMagic + sizeof blocked + sizeof stormed +
                             vector_bytes(blocked_queues) + vector_bytes(xoff) +
                             vector_bytes(in_tx) + vector_bytes(holds) + vector_bytes(queued));
  Writer w{out.data()};
  w.put(&kMagic, sizeof kMagic);
  w.put(&blocked, sizeof blocked);
  w.put(&stormed, sizeof stormed);
  w.put_vector(blocked_queues);
  w.put_vector(xoff);
  w.put_vector(in_tx);
  w.put_vector(holds);
  w.put_vector(queued);
  return out;
}

LosslessSnapshot LosslessSnapshot::decode(std::span<const std::byte> bytes) {
  LosslessSnapshot s;
  Reader r{bytes};
  uint32_t magic = 0;
  r.get(&magic, sizeof magic);
  if (magic != kMagic) throw std::invalid_argument("LosslessSnapshot::decode: not a snapshot");
  r.get(&s.blocked, sizeof s.blocked);
  r.get(&s.stormed, sizeof s.stormed);
  r.get_vector(s.blocked_queues);
  r.get_vector(s.xoff);
  r.get_vector(s.in_tx);
  r.get_vector(s.holds);
  r.get_vector(s.queued);
  if (r.at != bytes.size()) throw std::invalid_argument("LosslessSnapshot::decode: trailing bytes");
  return s;
}

}  // namespace fabricsim
