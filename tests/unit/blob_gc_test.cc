// The blob GC governor's decision (storage/blob_gc.h): on above the garbage ratio, off below
// half of it, never in between by itself, always with ratio 0.
#include "storage/blob_gc.h"

#include <gtest/gtest.h>

namespace basalt {
namespace {

TEST(BlobGcTest, StartsAboveTheRatio) {
  EXPECT_FALSE(WantBlobGc(false, 0, 1000, 0.5));
  EXPECT_FALSE(WantBlobGc(false, 500, 1000, 0.5));  // at the ratio: not yet
  EXPECT_TRUE(WantBlobGc(false, 501, 1000, 0.5));
}

TEST(BlobGcTest, KeepsRunningUntilBelowHalfTheRatio) {
  EXPECT_TRUE(WantBlobGc(true, 400, 1000, 0.5));  // would not start here, but does not stop
  EXPECT_TRUE(WantBlobGc(true, 251, 1000, 0.5));
  EXPECT_FALSE(WantBlobGc(true, 250, 1000, 0.5));
  EXPECT_FALSE(WantBlobGc(false, 400, 1000, 0.5));  // and does not start in between
}

TEST(BlobGcTest, RatioZeroMeansAlways) {
  EXPECT_TRUE(WantBlobGc(false, 0, 0, 0));
  EXPECT_TRUE(WantBlobGc(true, 0, 1000, 0));
  EXPECT_TRUE(BlobGcGovernor::InitiallyOn(true, 0));
  EXPECT_FALSE(BlobGcGovernor::InitiallyOn(true, 0.5));
  EXPECT_FALSE(BlobGcGovernor::InitiallyOn(false, 0));
}

TEST(BlobGcTest, NoBlobFilesNoGc) {
  EXPECT_FALSE(WantBlobGc(false, 0, 0, 0.5));
  EXPECT_FALSE(WantBlobGc(true, 0, 0, 0.5));
}

}  // namespace
}  // namespace basalt
