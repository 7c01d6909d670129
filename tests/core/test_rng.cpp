// RngStream: FNV-1a and SplitMix64 against their published test vectors, xoshiro256** streams
// per (seed, name), and uniform01's range and mean.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sim/core/rng.hpp"

using namespace fabricsim;

// ---------------------------------------------------------------------------------------------
// RngStream

// Published test vectors: FNV-1a 64 ("" is the offset basis; "a" and "foobar" from the FNV test
// suite), and Vigna's splitmix64.c outputs from state 0.
static_assert(fnv1a64("") == 0xCBF29CE484222325ULL);
static_assert(fnv1a64("a") == 0xAF63DC4C8601EC8CULL);
static_assert(fnv1a64("foobar") == 0x85944171F73967E8ULL);
static_assert([] {
  uint64_t state = 0;
  return splitmix64(state) == 0xE220A8397B1DCDAFULL && splitmix64(state) == 0x6E789E6AA1B965F4ULL &&
         splitmix64(state) == 0x06C45D188009454FULL;
}());

TEST_CASE("RngStream reference values", "[rng]") {
  // The derivation (SplitMix64 over seed ^ FNV-1a(name)) followed by xoshiro256** as published
  // (xoshiro256starstar.c), computed by an independent implementation written from the papers
  // and checked against the vectors above and xoshiro256** from state {1,2,3,4} (11520, 0, …).
  RngStream a(0, "");
  CHECK(a.next() == 0x21382EF092ED7068ULL);
  CHECK(a.next() == 0x5B54C052757ADF62ULL);
  CHECK(a.next() == 0xA64CB2CF68795072ULL);
  RngStream b(42, "ecmp");
  CHECK(b.next() == 0x46AA9C4F42F88A51ULL);
  CHECK(b.next() == 0x79F7C8F35A673AABULL);
  CHECK(b.next() == 0x4EB0352EE7CE29D4ULL);
}

TEST_CASE("RngStream: same (seed, name) gives the same sequence — a different one does not",
          "[rng]") {
  const auto draw = [](uint64_t seed, std::string_view name) {
    RngStream r(seed, name);
    std::vector<uint64_t> v;
    for (int i = 0; i < 1'000; ++i) v.push_back(r.next());
    return v;
  };
  const auto base = draw(1, "ecmp.leaf0");
  CHECK(draw(1, "ecmp.leaf0") == base);
  CHECK(draw(1, "ecmp.leaf1") != base);
  CHECK(draw(2, "ecmp.leaf0") != base);
}

TEST_CASE("RngStream::uniform01 lies in 0..1 (1 excluded) with mean 1/2", "[rng]") {
  RngStream r(2024, "test.uniform");
  constexpr int kDraws = 100'000;
  double sum = 0;
  double lo = 1;
  double hi = 0;
  int out_of_range = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = r.uniform01();
    if (!(u >= 0.0 && u < 1.0)) ++out_of_range;
    sum += u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  CHECK(out_of_range == 0);
  // The standard error of the mean is sqrt(1/12 / 1e5) ≈ 0.0009; 0.01 is over 10 of them.
  CHECK(std::abs(sum / kDraws - 0.5) < 0.01);
  CHECK(lo < 0.001);  // P(min of 1e5 draws >= 0.001) = 0.999^1e5 ≈ e^-100
  CHECK(hi > 0.999);
}
