#include "stats/latency_histogram.h"

#include <bit>
#include <cmath>

namespace basalt {

namespace {
constexpr uint64_t kLinearLimit = uint64_t{2} << LatencyHistogram::kSubBucketBits;  // 256
}  // namespace

size_t LatencyHistogram::BucketOf(uint64_t nanos) {
  if (nanos < kLinearLimit) return static_cast<size_t>(nanos);
  int shift = std::bit_width(nanos) - 1 - kSubBucketBits;  // nanos >> shift is in [128, 256)
  if (shift > kMaxShift) return kBuckets - 1;
  return (static_cast<size_t>(shift) << kSubBucketBits) + static_cast<size_t>(nanos >> shift);
}

uint64_t LatencyHistogram::BucketLowest(size_t bucket) {
  if (bucket < kLinearLimit) return bucket;
  size_t shift = (bucket >> kSubBucketBits) - 1;
  uint64_t mantissa = (bucket & ((size_t{1} << kSubBucketBits) - 1)) | (1u << kSubBucketBits);
  return mantissa << shift;
}

uint64_t LatencyHistogram::BucketHighest(size_t bucket) {
  if (bucket < kLinearLimit) return bucket;
  size_t shift = (bucket >> kSubBucketBits) - 1;
  return BucketLowest(bucket) + (uint64_t{1} << shift) - 1;
}

void LatencyHistogram::Reset() {
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_relaxed);
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  uint64_t total = 0;
  for (const auto& b : buckets_) total += b.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  if (percentile > 100) percentile = 100;
  uint64_t wanted = static_cast<uint64_t>(std::ceil(percentile / 100 * static_cast<double>(total)));
  if (wanted == 0) wanted = 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; i++) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen >= wanted) return BucketHighest(i);
  }
  return BucketHighest(kBuckets - 1);
}

}  // namespace basalt
