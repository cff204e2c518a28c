// LatencyHistogram: a log-linear histogram of durations in nanoseconds, for INFO latencystats and
// LATENCY HISTOGRAM.
//
// Values below 256 ns have a bucket each; above, each power of two is split into 128 buckets, so
// a bucket is at most 1/128 of its values wide (better than two significant digits, as Redis's
// HdrHistogram is configured). Values past ~68 s count in the last bucket. Recording is two
// relaxed atomic adds, safe from any thread; reads are approximate while writers run.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace basalt {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;  // 128 buckets per power of two
  static constexpr int kMaxShift = 29;      // up to 2^36 ns
  static constexpr size_t kBuckets = (kMaxShift + 2) << kSubBucketBits;

  void Record(uint64_t nanos) {
    buckets_[BucketOf(nanos)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t bucket(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }
  void Reset();

  // The smallest recorded value v such that `percentile` % of the values are <= v, reported as
  // the highest value of its bucket (as HdrHistogram reports); 0 when empty.
  uint64_t ValueAtPercentile(double percentile) const;

  static size_t BucketOf(uint64_t nanos);
  static uint64_t BucketLowest(size_t bucket);
  static uint64_t BucketHighest(size_t bucket);

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
};

}  // namespace basalt
