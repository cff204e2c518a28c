// The list codec's pure index arithmetic (types/list.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "common/coding.h"
#include "types/list.h"

namespace basalt {
namespace {

TEST(ListCodecTest, IndexEncodingSortsNumerically) {
  EXPECT_EQ(EncodeListIndex(kListMiddle).size(), 8u);
  EXPECT_EQ(DecodeFixed64(EncodeListIndex(kListMiddle).data()), kListMiddle);
  EXPECT_LT(EncodeListIndex(kListMiddle - 1), EncodeListIndex(kListMiddle));
  EXPECT_LT(EncodeListIndex(255), EncodeListIndex(256));
  EXPECT_LT(EncodeListIndex(0), EncodeListIndex(UINT64_MAX));
}

TEST(ListCodecTest, Offset) {
  EXPECT_EQ(ListOffset(0, 3), 0u);
  EXPECT_EQ(ListOffset(2, 3), 2u);
  EXPECT_EQ(ListOffset(-1, 3), 2u);
  EXPECT_EQ(ListOffset(-3, 3), 0u);
  EXPECT_FALSE(ListOffset(3, 3));
  EXPECT_FALSE(ListOffset(-4, 3));
  EXPECT_FALSE(ListOffset(0, 0));
  EXPECT_FALSE(ListOffset(INT64_MIN, 3));
  EXPECT_FALSE(ListOffset(INT64_MAX, 3));
}

TEST(ListCodecTest, Range) {
  using R = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(ListRange(0, -1, 5), R(0, 4));
  EXPECT_EQ(ListRange(-2, -1, 5), R(3, 4));
  EXPECT_EQ(ListRange(-100, 100, 5), R(0, 4));
  EXPECT_EQ(ListRange(1, 1, 5), R(1, 1));
  EXPECT_EQ(ListRange(INT64_MIN, INT64_MAX, 5), R(0, 4));
  EXPECT_FALSE(ListRange(3, 2, 5));
  EXPECT_FALSE(ListRange(5, 10, 5));
  EXPECT_FALSE(ListRange(0, -6, 5));
  EXPECT_FALSE(ListRange(0, -1, 0));
  EXPECT_FALSE(ListRange(INT64_MAX, INT64_MAX, 5));
}

}  // namespace
}  // namespace basalt
