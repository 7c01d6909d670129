// Per-component random number streams, all derived from the scenario seed.
//
// Each component (an ECMP salt, a RED marker, a jitter source) asks for its own stream by a
// stable name, so adding a component never shifts another's random sequence, and the same
// seed gives the same run on any platform: the generator (xoshiro256**, Blackman & Vigna 2018)
// and the derivation (SplitMix64 over seed ⊕ FNV-1a(name)) are written here, not taken from
// the standard library, whose distributions differ between implementations.
#pragma once

#include <cstdint>
#include <string_view>

namespace fabricsim {

/// SplitMix64 step (Steele, Lea & Flood 2014): a good 64-bit mixer.
constexpr uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// FNV-1a 64-bit hash of a name; stable across platforms and runs.
constexpr uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

class RngStream {
 public:
  /// The stream for component `name` under scenario seed `seed`.
  RngStream(uint64_t seed, std::string_view name) {
    uint64_t sm = seed ^ fnv1a64(name);
    for (auto& w : s_) w = splitmix64(sm);
  }

  /// Next 64 uniformly distributed bits (xoshiro256**).
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace fabricsim
