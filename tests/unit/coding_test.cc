// Fixed-width big-endian encoding: round trips, byte order = numeric order, truncation.
#include "common/coding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace basalt {
namespace {

TEST(CodingTest, Fixed8RoundTrip) {
  for (int v : {0, 1, 127, 128, 255}) {
    std::string buf;
    PutFixed8(&buf, static_cast<uint8_t>(v));
    ASSERT_EQ(buf.size(), 1u);
    std::string_view in = buf;
    uint8_t out = 0;
    ASSERT_TRUE(GetFixed8(&in, &out));
    EXPECT_EQ(out, v);
    EXPECT_TRUE(in.empty());
  }
}

TEST(CodingTest, Fixed32RoundTrip) {
  const std::vector<uint32_t> values = {0u,          1u,          0xffu,       0x100u,
                                        0x12345678u, 0x7fffffffu, 0x80000000u, UINT32_MAX};
  for (uint32_t v : values) {
    std::string buf;
    PutFixed32(&buf, v);
    ASSERT_EQ(buf.size(), 4u);
    EXPECT_EQ(DecodeFixed32(buf.data()), v);
    std::string_view in = buf;
    uint32_t out = 0;
    ASSERT_TRUE(GetFixed32(&in, &out));
    EXPECT_EQ(out, v);
    EXPECT_TRUE(in.empty());
  }
}

TEST(CodingTest, Fixed64RoundTrip) {
  const std::vector<uint64_t> values = {0ull,
                                        1ull,
                                        0xffull,
                                        0x100ull,
                                        0x0123456789abcdefull,
                                        0x7fffffffffffffffull,
                                        0x8000000000000000ull,
                                        UINT64_MAX};
  for (uint64_t v : values) {
    std::string buf;
    PutFixed64(&buf, v);
    ASSERT_EQ(buf.size(), 8u);
    EXPECT_EQ(DecodeFixed64(buf.data()), v);
    std::string_view in = buf;
    uint64_t out = 0;
    ASSERT_TRUE(GetFixed64(&in, &out));
    EXPECT_EQ(out, v);
    EXPECT_TRUE(in.empty());
  }
}

TEST(CodingTest, Fixed32IsBigEndian) {
  std::string buf;
  PutFixed32(&buf, 0x01020304u);
  EXPECT_EQ(buf, std::string("\x01\x02\x03\x04", 4));
}

TEST(CodingTest, Fixed64IsBigEndian) {
  std::string buf;
  PutFixed64(&buf, 0x0102030405060708ull);
  EXPECT_EQ(buf, std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
}

TEST(CodingTest, Fixed32ByteOrderEqualsNumericOrder) {
  const std::vector<uint32_t> values = {0u,          1u,          2u,          0xffu,
                                        0x100u,      0x101u,      0xffffu,     0x10000u,
                                        0x7fffffffu, 0x80000000u, 0xfffffffeu, UINT32_MAX};
  for (uint32_t a : values) {
    for (uint32_t b : values) {
      std::string ea, eb;
      PutFixed32(&ea, a);
      PutFixed32(&eb, b);
      EXPECT_EQ(a < b, ea < eb) << a << " vs " << b;
      EXPECT_EQ(a == b, ea == eb) << a << " vs " << b;
    }
  }
}

TEST(CodingTest, Fixed64ByteOrderEqualsNumericOrder) {
  std::vector<uint64_t> values = {0, 1, 255, 256, 65535, 65536, UINT64_MAX - 1, UINT64_MAX};
  // A spread of values across all byte positions, including ones that differ in a low byte
  // while sharing the high ones.
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 64; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    values.push_back(x);
    values.push_back(x >> (i % 64));
    values.push_back(x + 1);
  }
  for (uint64_t a : values) {
    for (uint64_t b : values) {
      std::string ea, eb;
      PutFixed64(&ea, a);
      PutFixed64(&eb, b);
      ASSERT_EQ(a < b, ea < eb) << a << " vs " << b;
    }
  }
}

TEST(CodingTest, GetFixedOnShortInputFailsAndConsumesNothing) {
  std::string buf;
  PutFixed64(&buf, 42);
  for (size_t len = 0; len < 8; len++) {
    std::string_view in(buf.data(), len);
    uint64_t v64 = 7;
    EXPECT_FALSE(GetFixed64(&in, &v64)) << len;
    EXPECT_EQ(in.size(), len);
    EXPECT_EQ(v64, 7u);
  }
  for (size_t len = 0; len < 4; len++) {
    std::string_view in(buf.data(), len);
    uint32_t v32 = 7;
    EXPECT_FALSE(GetFixed32(&in, &v32)) << len;
    EXPECT_EQ(in.size(), len);
  }
  std::string_view empty;
  uint8_t v8 = 0;
  EXPECT_FALSE(GetFixed8(&empty, &v8));
}

TEST(CodingTest, GetFixedAdvancesPastWhatItReads) {
  std::string buf;
  PutFixed8(&buf, 9);
  PutFixed32(&buf, 0xdeadbeefu);
  PutFixed64(&buf, 0x1122334455667788ull);
  buf += "tail";
  std::string_view in = buf;
  uint8_t a;
  uint32_t b;
  uint64_t c;
  ASSERT_TRUE(GetFixed8(&in, &a));
  ASSERT_TRUE(GetFixed32(&in, &b));
  ASSERT_TRUE(GetFixed64(&in, &c));
  EXPECT_EQ(a, 9);
  EXPECT_EQ(b, 0xdeadbeefu);
  EXPECT_EQ(c, 0x1122334455667788ull);
  EXPECT_EQ(in, "tail");
}

TEST(CodingTest, LengthPrefixedRoundTrip) {
  std::string buf;
  PutLengthPrefixed(&buf, "hello");
  PutLengthPrefixed(&buf, "");
  PutLengthPrefixed(&buf, std::string_view("a\0b\r\n", 5));
  ASSERT_EQ(buf.size(), 4 + 5 + 4 + 0 + 4 + 5u);
  std::string_view in = buf;
  std::string_view out;
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, "hello");
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, "");
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, std::string_view("a\0b\r\n", 5));
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, LengthPrefixedNeverCollides) {
  std::string ab_c, a_bc;
  PutLengthPrefixed(&ab_c, "ab");
  ab_c += "c";
  PutLengthPrefixed(&a_bc, "a");
  a_bc += "bc";
  EXPECT_NE(ab_c, a_bc);
}

TEST(CodingTest, GetLengthPrefixedOnTruncatedInputFails) {
  std::string buf;
  PutLengthPrefixed(&buf, "hello");
  // Every strict prefix (truncated length header or truncated body) must fail.
  for (size_t len = 0; len < buf.size(); len++) {
    std::string_view in(buf.data(), len);
    std::string_view out;
    EXPECT_FALSE(GetLengthPrefixed(&in, &out)) << "prefix of " << len << " bytes";
  }
  std::string_view in = buf;
  std::string_view out;
  EXPECT_TRUE(GetLengthPrefixed(&in, &out));
}

TEST(CodingTest, GetLengthPrefixedWithHugeDeclaredLengthFails) {
  std::string buf;
  PutFixed32(&buf, UINT32_MAX);
  buf += "abc";
  std::string_view in = buf;
  std::string_view out;
  EXPECT_FALSE(GetLengthPrefixed(&in, &out));
}

}  // namespace
}  // namespace basalt
