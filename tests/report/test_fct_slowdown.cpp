// FCT slowdown per size bucket (sim/report/fct_slowdown.hpp): bucket edges, nearest-rank
// percentiles computed by hand here, the JSON and CSV shapes, bad samples.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "sim/report/fct_slowdown.hpp"

using namespace fabricsim;

TEST_CASE("slowdown buckets: sizes up to an edge fall below it, one more byte above it") {
  const FctSlowdown s = fct_slowdown({{1'000, 2'000, 1'000}, {1'001, 3'000, 1'000}, {0, 5, 5}});
  REQUIRE(s.buckets.size() == slowdown_bucket_edges().size() + 1);
  CHECK(s.buckets[0].count == 2);  // 0 B and 1,000 B
  CHECK(s.buckets[0].p99 == 2.0);
  CHECK(s.buckets[1].above_bytes == 1'000);
  CHECK(s.buckets[1].max_bytes == 3'000);
  CHECK(s.buckets[1].count == 1);
  CHECK(s.buckets[1].p50 == 3.0);
  CHECK(s.buckets.back().max_bytes == -1);
  CHECK(s.all.count == 3);
}

TEST_CASE("slowdown percentiles are nearest-rank: of 1..100, p50 = 50, p95 = 95, p99 = 99") {
  std::vector<SlowdownSample> v;
  for (int i = 100; i >= 1; --i) v.push_back({5'000, i * 1'000, 1'000});  // slowdown i
  const FctSlowdown s = fct_slowdown(v);
  CHECK(s.all.p50 == 50.0);
  CHECK(s.all.p95 == 95.0);
  CHECK(s.all.p99 == 99.0);
  CHECK(s.all.mean == Approx(50.5));
  const auto j = fct_slowdown_json(s);
  CHECK(j["flows"] == 100);
  CHECK(j["buckets"][0]["p50"].is_null());  // an empty bucket's statistics are null
  CHECK(j["buckets"][2]["count"] == 100);
  CHECK(fct_slowdown_json(fct_slowdown({})).is_null());
  CHECK(fct_slowdown_csv(s) ==
        "above_bytes,max_bytes,flows,p50,p95,p99,mean\n"
        "3000,10000,100,50.0000,95.0000,99.0000,50.5000\n"
        "all,,100,50.0000,95.0000,99.0000,50.5000\n");
}

TEST_CASE("a sample without a positive FCT or ideal is refused") {
  CHECK_THROWS_AS(fct_slowdown({{10, 0, 5}}), std::invalid_argument);
  CHECK_THROWS_AS(fct_slowdown({{10, 5, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(fct_slowdown({{-1, 5, 5}}), std::invalid_argument);
}
