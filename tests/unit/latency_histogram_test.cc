// LatencyHistogram: bucket boundaries, precision and percentiles.
#include "stats/latency_histogram.h"

#include <gtest/gtest.h>

namespace basalt {
namespace {

TEST(LatencyHistogram, SmallValuesHaveABucketEach) {
  for (uint64_t v = 0; v < 256; v++) {
    size_t b = LatencyHistogram::BucketOf(v);
    EXPECT_EQ(LatencyHistogram::BucketLowest(b), v);
    EXPECT_EQ(LatencyHistogram::BucketHighest(b), v);
  }
}

TEST(LatencyHistogram, EveryValueLiesInItsBucketWithinOnePercent) {
  for (uint64_t v = 1; v < (uint64_t{1} << 36); v = v * 3 / 2 + 7) {
    size_t b = LatencyHistogram::BucketOf(v);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    uint64_t low = LatencyHistogram::BucketLowest(b), high = LatencyHistogram::BucketHighest(b);
    EXPECT_LE(low, v);
    EXPECT_GE(high, v);
    EXPECT_LE(static_cast<double>(high - low), static_cast<double>(v) / 128) << v;
  }
}

TEST(LatencyHistogram, BucketsAreContiguous) {
  for (size_t b = 1; b < LatencyHistogram::kBuckets; b++) {
    EXPECT_EQ(LatencyHistogram::BucketLowest(b), LatencyHistogram::BucketHighest(b - 1) + 1) << b;
  }
}

TEST(LatencyHistogram, HugeValuesCountInTheLastBucket) {
  EXPECT_EQ(LatencyHistogram::BucketOf(UINT64_MAX), LatencyHistogram::kBuckets - 1);
}

TEST(LatencyHistogram, PercentilesOfAKnownDistribution) {
  LatencyHistogram h;
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  for (uint64_t v = 1; v <= 1000; v++) h.Record(v * 1000);  // 1 us .. 1 ms
  EXPECT_EQ(h.count(), 1000u);
  auto near = [](uint64_t got, uint64_t want) {
    return got >= want && static_cast<double>(got) <= static_cast<double>(want) * 1.01;
  };
  EXPECT_TRUE(near(h.ValueAtPercentile(50), 500000)) << h.ValueAtPercentile(50);
  EXPECT_TRUE(near(h.ValueAtPercentile(99), 990000)) << h.ValueAtPercentile(99);
  EXPECT_TRUE(near(h.ValueAtPercentile(100), 1000000)) << h.ValueAtPercentile(100);
  EXPECT_TRUE(near(h.ValueAtPercentile(0), 1000)) << h.ValueAtPercentile(0);
  h.Reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.ValueAtPercentile(99), 0u);
}

}  // namespace
}  // namespace basalt
