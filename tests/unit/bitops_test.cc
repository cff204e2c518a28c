// Bit helpers (common/bitops.h): Redis's bit numbering, ranges that start and end inside bytes,
// and BITFIELD's overflow rules.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "common/bitops.h"

namespace basalt {
namespace {

std::string Bytes(std::initializer_list<uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(BitopsTest, PopCount) {
  EXPECT_EQ(PopCount(""), 0u);
  EXPECT_EQ(PopCount("foobar"), 26u);
  EXPECT_EQ(PopCount(std::string(1000, '\xff')), 8000u);
}

TEST(BitopsTest, PopCountBitsHandlesPartialBytes) {
  std::string s = "\xff\xff\xff";
  EXPECT_EQ(PopCountBits(s, 0, 23), 24u);
  EXPECT_EQ(PopCountBits(s, 3, 3), 1u);
  EXPECT_EQ(PopCountBits(s, 0, 0), 1u);
  EXPECT_EQ(PopCountBits(s, 5, 17), 13u);
  EXPECT_EQ(PopCountBits(Bytes({0x0f}), 0, 3), 0u);
  EXPECT_EQ(PopCountBits("\x0f", 4, 7), 4u);
}

TEST(BitopsTest, FindBitUsesMostSignificantFirst) {
  EXPECT_EQ(FindBit(Bytes({0x00, 0x40}), true), 9u);
  EXPECT_EQ(FindBit("\xff\xfe", false), 15u);
  EXPECT_FALSE(FindBit("\xff\xff", false));
  EXPECT_FALSE(FindBit(std::string(3, '\0'), true));
  EXPECT_EQ(FindBitInRange(Bytes({0x80, 0x00, 0x01}), 1, 22, true), std::nullopt);
  EXPECT_EQ(FindBitInRange(Bytes({0x80, 0x00, 0x01}), 1, 23, true), 23u);
  EXPECT_EQ(FindBitInRange("\xff\xff\xfe", 3, 23, false), 23u);
  EXPECT_EQ(FindBitInRange(Bytes({0x00}), 0, 0, false), 0u);
}

TEST(BitopsTest, BitFieldGetAndSet) {
  std::string s(3, '\0');
  SetBitField(&s, 4, 8, 0xab);
  EXPECT_EQ(s, std::string("\x0a\xb0\x00", 3));
  EXPECT_EQ(GetBitField(s, 4, 8), 0xabu);
  EXPECT_EQ(GetBitField(s, 20, 8), 0u);  // past the end reads as zeros
  SetBitField(&s, 0, 1, 1);
  EXPECT_EQ(GetBitField(s, 0, 4), 0x8u);
}

TEST(BitopsTest, ParsesTypesLikeRedis) {
  BitFieldType t;
  EXPECT_TRUE(ParseBitFieldType("i64", &t) && t.is_signed && t.bits == 64);
  EXPECT_TRUE(ParseBitFieldType("u63", &t) && !t.is_signed && t.bits == 63);
  EXPECT_TRUE(ParseBitFieldType("U1", &t));
  EXPECT_FALSE(ParseBitFieldType("u64", &t));
  EXPECT_FALSE(ParseBitFieldType("i0", &t));
  EXPECT_FALSE(ParseBitFieldType("i65", &t));
  EXPECT_FALSE(ParseBitFieldType("x8", &t));
  EXPECT_FALSE(ParseBitFieldType("i", &t));
}

TEST(BitopsTest, OverflowRules) {
  BitFieldType i8{true, 8}, u8{false, 8}, i64{true, 64};
  EXPECT_EQ(FitBitField(127, i8, BitOverflow::kFail), 127);
  EXPECT_EQ(FitBitField(128, i8, BitOverflow::kFail), std::nullopt);
  EXPECT_EQ(FitBitField(128, i8, BitOverflow::kWrap), -128);
  EXPECT_EQ(FitBitField(200, i8, BitOverflow::kSat), 127);
  EXPECT_EQ(FitBitField(-300, i8, BitOverflow::kSat), -128);
  EXPECT_EQ(FitBitField(256 + 5, u8, BitOverflow::kWrap), 5);
  EXPECT_EQ(FitBitField(-1, u8, BitOverflow::kWrap), 255);
  EXPECT_EQ(FitBitField(-1, u8, BitOverflow::kSat), 0);
  __int128 big = static_cast<__int128>(INT64_MAX) + 1;
  EXPECT_EQ(FitBitField(big, i64, BitOverflow::kWrap), INT64_MIN);
  EXPECT_EQ(FitBitField(big, i64, BitOverflow::kSat), INT64_MAX);
  EXPECT_EQ(BitFieldToInt(0xff, i8), -1);
  EXPECT_EQ(BitFieldToInt(0xff, u8), 255);
}

}  // namespace
}  // namespace basalt
