// QuantileHistogram (sim/core/quantile_histogram.hpp): percentiles within 1/1024 of the exact
// nearest-rank values computed here by sorting, exact below 2048 and at the maximum, and merges
// that equal recording everything in one histogram.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/core/quantile_histogram.hpp"

using fabricsim::QuantileHistogram;

namespace {

/// The nearest-rank percentile num/den of `v` (sorted here): the value at rank ceil(p x N).
int64_t exact_percentile(std::vector<int64_t> v, int64_t num, int64_t den) {
  std::sort(v.begin(), v.end());
  const auto n = static_cast<int64_t>(v.size());
  const int64_t rank = std::max<int64_t>(1, (num * n + den - 1) / den);
  return v[static_cast<size_t>(rank - 1)];
}

}  // namespace

TEST_CASE("QuantileHistogram: exact below 2048, and an empty one says so") {
  QuantileHistogram h;
  CHECK(h.count() == 0);
  CHECK(h.percentile(50, 100) == -1);
  CHECK(h.max() == -1);
  for (int64_t v = 1; v <= 1000; ++v) h.record(v);
  CHECK(h.count() == 1000);
  CHECK(h.percentile(50, 100) == 500);
  CHECK(h.percentile(99, 100) == 990);
  CHECK(h.percentile(1, 1) == 1000);
  CHECK(h.max() == 1000);
  CHECK_THROWS_AS(h.record(-1), std::invalid_argument);
  CHECK_THROWS_AS(h.percentile(0, 100), std::invalid_argument);
  CHECK_THROWS_AS(h.percentile(101, 100), std::invalid_argument);
}

TEST_CASE("QuantileHistogram: percentiles of a million FCTs within 1/1024 of the exact ones") {
  // Flow completion times from 1 us to 20 ms (log-uniform), in picoseconds: the range a
  // 512-GPU AllToAll's messages span.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log_us(0.0, std::log(20'000.0));
  std::vector<int64_t> values;
  QuantileHistogram h;
  for (int i = 0; i < 1'000'000; ++i) {
    const auto ps = static_cast<int64_t>(std::exp(log_us(rng)) * 1e6);
    values.push_back(ps);
    h.record(ps);
  }
  for (const auto& [num, den] : {std::pair{1, 100}, {50, 100}, {99, 100}, {999, 1000}, {1, 1}}) {
    const int64_t exact = exact_percentile(values, num, den);
    const int64_t read = h.percentile(num, den);
    INFO("p" << num << "/" << den << ": exact " << exact << ", read " << read);
    CHECK(read >= exact);
    CHECK(static_cast<double>(read - exact) <=
          static_cast<double>(exact) * QuantileHistogram::kMaxRelativeError);
  }
  CHECK(h.max() == *std::max_element(values.begin(), values.end()));
  CHECK(h.percentile(1, 1) == h.max());
  // Bounded memory: buckets up to 20 ms, not one per value.
  CHECK(h.counts().size() < 40'000);
}

TEST_CASE("QuantileHistogram: merging parts equals recording everything, and parts round-trip") {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> d(0, int64_t{1} << 40);
  QuantileHistogram all, a, b;
  for (int i = 0; i < 10'000; ++i) {
    const int64_t v = d(rng);
    all.record(v);
    (i % 3 == 0 ? a : b).record(v);
  }
  QuantileHistogram merged = b;
  merged.merge(a);
  CHECK(merged == all);
  CHECK(QuantileHistogram::from_parts(all.counts(), all.max()) == all);
  CHECK_THROWS_AS(QuantileHistogram::from_parts(all.counts(), 5), std::invalid_argument);
  CHECK(QuantileHistogram::from_parts({}, -1).count() == 0);
}

TEST_CASE("QuantileHistogram: bucket edges tile the int64 range") {
  // Every bucket starts one past the previous one's highest value: no gap, no overlap.
  size_t bad = 0, buckets = QuantileHistogram::index(INT64_MAX) + 1;
  for (size_t i = 1; i < buckets; ++i) {
    if (QuantileHistogram::index(QuantileHistogram::highest_in(i - 1) + 1) != i ||
        QuantileHistogram::index(QuantileHistogram::highest_in(i)) != i) {
      ++bad;
    }
  }
  CHECK(bad == 0);
  CHECK(buckets == 2048 + 52 * 1024);  // 2^11 exact, then 1024 per power of two up to 2^63
  CHECK(QuantileHistogram::highest_in(QuantileHistogram::index(INT64_MAX)) == INT64_MAX);
}
