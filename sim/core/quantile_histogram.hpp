// A histogram of non-negative int64 values (e.g. flow completion times in picoseconds) from
// which percentiles are read with a bounded relative error, in bounded memory, whatever the
// number of values, and which merges exactly (counts add): the log-linear bucketing of
// HdrHistogram (Gil Tene, "HdrHistogram: A High Dynamic Range Histogram",
// hdrhistogram.org), with 11 significant bits.
//
// Buckets: values below 2048 have a bucket each (exact). Above, each power-of-two range
// [2^m, 2^(m+1)) is cut into 1024 equal buckets, so a bucket is at most 1/1024 of its values
// wide: a percentile read back is within 0.098 % of the exact nearest-rank value (and never
// above the largest value recorded, which is kept exactly).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabricsim {

class QuantileHistogram {
 public:
  /// Bits of each value kept exactly: buckets are at most 2^-(kSignificantBits - 1) wide.
  static constexpr int kSignificantBits = 11;
  /// A bound on a read percentile's relative error: |read - exact| <= exact x this.
  static constexpr double kMaxRelativeError = 1.0 / 1024;

  /// Records `value` (>= 0). Throws std::invalid_argument for a negative value.
  void record(int64_t value) {
    if (value < 0) throw std::invalid_argument("QuantileHistogram: negative value");
    const size_t i = index(value);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++count_;
    max_ = std::max(max_, value);
  }
  /// Adds `other`'s values: the histogram of the union.
  void merge(const QuantileHistogram& other) {
    if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
    for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
  }
  /// Values recorded.
  int64_t count() const { return static_cast<int64_t>(count_); }
  /// The largest value recorded, exactly; -1 when none.
  int64_t max() const { return max_; }
  /// The nearest-rank percentile num/den (the value at rank ceil(num/den x N), 1-based), to
  /// within kMaxRelativeError: the largest value of its bucket, or max() if smaller. -1 when
  /// empty. Throws std::invalid_argument unless 0 < num <= den.
  int64_t percentile(int64_t num, int64_t den) const {
    if (num <= 0 || den <= 0 || num > den) {
      throw std::invalid_argument("QuantileHistogram: percentile outside (0, 1]");
    }
    if (count_ == 0) return -1;
    const auto n = static_cast<unsigned __int128>(count_);
    const auto rank = static_cast<uint64_t>(
        std::max<unsigned __int128>(1, (static_cast<unsigned __int128>(num) * n + den - 1) / den));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(highest_in(i), max_);
    }
    return max_;  // unreachable: the counts sum to count_
  }
  /// The bucket counts (index order) and the exact maximum, for a partitioned run's merge;
  /// from_parts() rebuilds the histogram. Throws std::invalid_argument for counts that do not
  /// fit the maximum.
  const std::vector<uint64_t>& counts() const { return counts_; }
  static QuantileHistogram from_parts(std::vector<uint64_t> counts, int64_t max) {
    QuantileHistogram h;
    for (uint64_t c : counts) h.count_ += c;
    if ((h.count_ == 0) != (max < 0) || (max >= 0 && index(max) + 1 != counts.size())) {
      throw std::invalid_argument("QuantileHistogram: parts that do not fit together");
    }
    h.counts_ = std::move(counts);
    h.max_ = max;
    return h;
  }
  bool operator==(const QuantileHistogram&) const = default;

  /// The bucket of `value` (>= 0).
  static size_t index(int64_t value) {
    const auto v = static_cast<uint64_t>(value);
    if (v < kExact) return static_cast<size_t>(v);
    const int shift = std::bit_width(v) - kSignificantBits;  // v >> shift in [1024, 2048)
    return kExact + static_cast<size_t>(shift - 1) * kHalf +
           static_cast<size_t>((v >> shift) - kHalf);
  }
  /// The largest value of bucket `i`.
  static int64_t highest_in(size_t i) {
    if (i < kExact) return static_cast<int64_t>(i);
    const size_t k = i - kExact;
    const int shift = static_cast<int>(k / kHalf) + 1;
    const uint64_t low = (static_cast<uint64_t>(k % kHalf) + kHalf) << shift;
    return static_cast<int64_t>(low + ((uint64_t{1} << shift) - 1));
  }

 private:
  static constexpr uint64_t kExact = uint64_t{1} << kSignificantBits;       // 2048
  static constexpr uint64_t kHalf = uint64_t{1} << (kSignificantBits - 1);  // 1024
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  int64_t max_ = -1;
};

/// The nearest-rank percentile num/den of `sorted` (ascending, not empty): the value at rank
/// ceil(num/den x N), 1-based, at least the first. Exact, where QuantileHistogram bounds it.
template <class T>
const T& nearest_rank(const std::vector<T>& sorted, int64_t num, int64_t den) {
  const auto n = static_cast<int64_t>(sorted.size());
  const int64_t rank = std::max<int64_t>(1, (num * n + den - 1) / den);
  return sorted[static_cast<size_t>(rank - 1)];
}

}  // namespace fabricsim
