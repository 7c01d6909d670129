// FCT slowdown per flow-size bucket (fct_slowdown.hpp).
#include "sim/report/fct_slowdown.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "sim/core/quantile_histogram.hpp"

namespace fabricsim {

namespace {

/// Fills `b`'s statistics from its slowdowns (sorted here).
void summarize(std::vector<double>& v, SlowdownBucket& b) {
  b.count = static_cast<int64_t>(v.size());
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  b.p50 = nearest_rank(v, 50, 100);
  b.p95 = nearest_rank(v, 95, 100);
  b.p99 = nearest_rank(v, 99, 100);
  double sum = 0;
  for (double x : v) sum += x;
  b.mean = sum / static_cast<double>(v.size());
}

/// Sets p50, p95, p99 and mean in `j` (null when the bucket is empty).
void put_stats(nlohmann::ordered_json& j, const SlowdownBucket& b) {
  const auto value = [&](double x) {
    return b.count > 0 ? nlohmann::ordered_json(x) : nlohmann::ordered_json();
  };
  j["p50"] = value(b.p50);
  j["p95"] = value(b.p95);
  j["p99"] = value(b.p99);
  j["mean"] = value(b.mean);
}

std::string fixed4(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", x);
  return buf;
}

}  // namespace

const std::vector<int64_t>& slowdown_bucket_edges() {
  static const std::vector<int64_t> edges = {1'000,   3'000,     10'000,    30'000,     100'000,
                                             300'000, 1'000'000, 3'000'000, 10'000'000, 30'000'000};
  return edges;
}

FctSlowdown fct_slowdown(const std::vector<SlowdownSample>& samples) {
  const std::vector<int64_t>& edges = slowdown_bucket_edges();
  std::vector<std::vector<double>> per(edges.size() + 1);
  std::vector<double> all;
  all.reserve(samples.size());
  for (const SlowdownSample& s : samples) {
    if (s.fct_ps <= 0 || s.ideal_ps <= 0 || s.bytes < 0) {
      throw std::invalid_argument("fct_slowdown: a flow of " + std::to_string(s.bytes) +
                                  " B with FCT " + std::to_string(s.fct_ps) + " ps and ideal " +
                                  std::to_string(s.ideal_ps) + " ps");
    }
    const double x = static_cast<double>(s.fct_ps) / static_cast<double>(s.ideal_ps);
    const size_t k =
        static_cast<size_t>(std::lower_bound(edges.begin(), edges.end(), s.bytes) - edges.begin());
    per[k].push_back(x);
    all.push_back(x);
  }
  FctSlowdown out;
  for (size_t k = 0; k < per.size(); ++k) {
    SlowdownBucket b;
    b.above_bytes = k == 0 ? 0 : edges[k - 1];
    b.max_bytes = k < edges.size() ? edges[k] : -1;
    summarize(per[k], b);
    out.buckets.push_back(b);
  }
  summarize(all, out.all);
  return out;
}

nlohmann::ordered_json fct_slowdown_json(const FctSlowdown& s) {
  if (s.flows() == 0) return nullptr;
  nlohmann::ordered_json j;
  j["flows"] = s.all.count;
  put_stats(j, s.all);
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (const SlowdownBucket& b : s.buckets) {
    nlohmann::ordered_json row;
    row["above_bytes"] = b.above_bytes;
    row["max_bytes"] =
        b.max_bytes < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(b.max_bytes);
    row["count"] = b.count;
    put_stats(row, b);
    buckets.push_back(row);
  }
  j["buckets"] = buckets;
  return j;
}

std::string fct_slowdown_csv(const FctSlowdown& s) {
  std::ostringstream out;
  out << "above_bytes,max_bytes,flows,p50,p95,p99,mean\n";
  const auto line = [&](const std::string& above, const std::string& max, const SlowdownBucket& b) {
    out << above << ',' << max << ',' << b.count << ',' << fixed4(b.p50) << ',' << fixed4(b.p95)
        << ',' << fixed4(b.p99) << ',' << fixed4(b.mean) << '\n';
  };
  for (const SlowdownBucket& b : s.buckets) {
    if (b.count == 0) continue;
    line(std::to_string(b.above_bytes), b.max_bytes < 0 ? "" : std::to_string(b.max_bytes), b);
  }
  line("all", "", s.all);
  return out.str();
}

}  // namespace fabricsim
