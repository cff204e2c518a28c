// LatencyHistogram: an HDR-style log-linear histogram of latencies in nanoseconds.
//
// Values below 256 ns get a bucket each; above that every power of two is split into 128
// buckets, so a recorded value is reported within 1% of its true value whatever its size,
// from nanoseconds to minutes, in a fixed ~36 KiB. Minimum, maximum and the root mean square
// are kept exactly. Not thread-safe: one histogram per thread, merged at the end.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace basalt_bench {

class LatencyHistogram {
 public:
  LatencyHistogram() : counts_(kBuckets, 0) {}

  void Record(uint64_t ns) {
    counts_[BucketOf(ns)]++;
    count_++;
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
    double us = static_cast<double>(ns) / 1000.0;
    sum_squares_us_ += us * us;
  }

  void Merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < kBuckets; i++) counts_[i] += other.counts_[i];
    count_ += other.count_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
    sum_squares_us_ += other.sum_squares_us_;
  }

  void Reset() { *this = LatencyHistogram(); }

  uint64_t count() const { return count_; }
  double MinMicros() const { return count_ ? static_cast<double>(min_) / 1000.0 : 0; }
  double MaxMicros() const { return count_ ? static_cast<double>(max_) / 1000.0 : 0; }
  double RmsMicros() const { return count_ ? std::sqrt(sum_squares_us_ / count_) : 0; }

  // The value at quantile q (0..1): the upper edge of the bucket holding that rank, capped by
  // the exact maximum.
  double PercentileMicros(double q) const {
    if (count_ == 0) return 0;
    uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
    rank = std::max<uint64_t>(rank, 1);
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; i++) {
      seen += counts_[i];
      if (seen >= rank) return static_cast<double>(std::min(UpperEdge(i), max_)) / 1000.0;
    }
    return MaxMicros();
  }

 private:
  static constexpr int kSubBits = 7;                   // 128 buckets per power of two: < 1% error
  static constexpr uint64_t kLinear = 2u << kSubBits;  // below 256 ns: one bucket per ns
  static constexpr int kMaxExponent = 63;
  static constexpr size_t kBuckets = kLinear + (kMaxExponent - kSubBits) * (1u << kSubBits);

  static size_t BucketOf(uint64_t v) {
    if (v < kLinear) return static_cast<size_t>(v);
    int e = 63 - __builtin_clzll(v);  // >= kSubBits + 1
    int shift = e - kSubBits;
    uint64_t sub = (v >> shift) - (1u << kSubBits);
    return kLinear + static_cast<size_t>(e - kSubBits - 1) * (1u << kSubBits) + sub;
  }

  static uint64_t UpperEdge(size_t bucket) {
    if (bucket < kLinear) return bucket;
    size_t rel = bucket - kLinear;
    int e = static_cast<int>(rel >> kSubBits) + kSubBits + 1;
    uint64_t sub = (rel & ((1u << kSubBits) - 1)) + (1u << kSubBits);
    int shift = e - kSubBits;
    return ((sub + 1) << shift) - 1;
  }

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_ = 0;
  double sum_squares_us_ = 0;
};

}  // namespace basalt_bench
