// FCT slowdown: each flow's completion time over its ideal, the time it would take alone on an
// idle fabric, summarized per flow-size bucket at p50 / p95 / p99 as HPCC (Li et al.,
// SIGCOMM 2019, §5), Parsimon (Zhao et al., NSDI 2023) and m3 (Li et al., SIGCOMM 2024) report
// congestion control results: slowdown against flow size, one curve per setting.
//
// The buckets have fixed edges (decimal bytes: 1 KB, 3 KB, 10 KB, … 30 MB, then above), so the
// curves of several runs of a sweep line up. Percentiles are nearest-rank, as the run's FCT
// percentiles (report.hpp: fct_summary).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim {

/// One completed flow: its size, its completion time and its ideal (both picoseconds, > 0).
struct SlowdownSample {
  int64_t bytes = 0;
  int64_t fct_ps = 0;
  int64_t ideal_ps = 0;
};

/// The slowdowns (FCT / ideal, >= 1 up to rounding) of the flows of one size bucket.
struct SlowdownBucket {
  int64_t above_bytes = 0;  ///< sizes > this …
  int64_t max_bytes = -1;   ///< … and <= this; -1: no upper edge (the last bucket, or `all`)
  int64_t count = 0;        ///< flows in the bucket (0: p50/p95/p99 are 0, printed as null)
  double p50 = 0, p95 = 0, p99 = 0;
  double mean = 0;
};

/// The slowdown of a run's flows: per bucket (every bucket, empty ones with count 0) and over
/// all of them.
struct FctSlowdown {
  std::vector<SlowdownBucket> buckets;
  SlowdownBucket all;
  int64_t flows() const { return all.count; }
};

/// The upper edges of the size buckets, bytes (decimal: 1e3, 3e3, 1e4, … 3e7); a last bucket
/// holds the sizes above the last edge.
const std::vector<int64_t>& slowdown_bucket_edges();

/// Summarizes `samples`. Throws std::invalid_argument for a sample with fct_ps or ideal_ps <= 0
/// or bytes < 0.
FctSlowdown fct_slowdown(const std::vector<SlowdownSample>& samples);

/// results.json's `fct_slowdown`: {flows, p50, p95, p99, mean, buckets: [{above_bytes,
/// max_bytes (null for the last), count, p50, p95, p99, mean}]} (empty buckets' statistics
/// null); null when `s` has no flow.
nlohmann::ordered_json fct_slowdown_json(const FctSlowdown& s);

/// slowdown.csv's text: a header `above_bytes,max_bytes,flows,p50,p95,p99,mean`, one line per
/// non-empty bucket (max_bytes empty for the last), then an `all` line; statistics %.4f.
std::string fct_slowdown_csv(const FctSlowdown& s);

}  // namespace fabricsim
