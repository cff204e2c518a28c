// CRC-64, LZF and the RDB string encoding that DUMP payloads use. The expected bytes come from
// Redis itself: its CRC-64 check value, and strings as redis-server 7.0 writes them.
#include "common/rdb_encoding.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/crc64.h"
#include "common/lzf.h"

namespace basalt {
namespace {

TEST(Crc64Test, RedisCheckValueAndIncrementalUse) {
  // Redis's crc64.c test: crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(Crc64(0, ""), 0u);
  std::string text = "This is a test of the emergency broadcast system.";
  for (size_t split = 0; split <= text.size(); split++) {
    EXPECT_EQ(Crc64(Crc64(0, text.substr(0, split)), text.substr(split)), Crc64(0, text));
  }
}

TEST(Crc64Test, SlicedPathAgreesWithBytewise) {
  std::string data;
  for (int i = 0; i < 1000; i++) data.push_back(static_cast<char>(i * 7 + 3));
  uint64_t bytewise = 0;
  for (char ch : data) bytewise = Crc64(bytewise, std::string_view(&ch, 1));
  EXPECT_EQ(Crc64(0, data), bytewise);
}

TEST(LzfTest, DecompressesLiteralsAndOverlappingReferences) {
  // A literal run "ab" then a back reference of length 6 to offset 2: "abababab".
  std::string compressed = std::string(
                               "\x01"
                               "ab",
                               3) +
                           std::string("\x80\x01", 2);
  std::string out;
  ASSERT_TRUE(LzfDecompress(compressed, 8, &out));
  EXPECT_EQ(out, "abababab");
}

TEST(LzfTest, RefusesMalformedStreams) {
  std::string out;
  EXPECT_FALSE(LzfDecompress(std::string("\x05"
                                         "ab",
                                         3),
                             6, &out));                              // literal past the input
  EXPECT_FALSE(LzfDecompress(std::string("\x80\x05", 2), 4, &out));  // reference before start
  EXPECT_FALSE(LzfDecompress(std::string("\x01"
                                         "ab",
                                         3),
                             3, &out));  // too short an output
  EXPECT_FALSE(LzfDecompress(std::string("\x01"
                                         "ab",
                                         3),
                             1, &out));  // too long an output
}

TEST(RdbEncodingTest, LengthsRoundTripInEveryForm) {
  for (uint64_t len : {0ull, 63ull, 64ull, 16383ull, 16384ull, 0xffffffffull, 0x100000000ull}) {
    std::string buf;
    rdb::AppendLength(&buf, len);
    rdb::Reader reader(buf);
    uint64_t read = 0;
    bool encoded = true;
    ASSERT_TRUE(reader.ReadLength(&read, &encoded)) << len;
    EXPECT_FALSE(encoded);
    EXPECT_EQ(read, len);
    EXPECT_EQ(reader.remaining(), 0u);
  }
}

// The string `encoded` decodes to; nullopt if the reader refuses it. (A Reader views its
// input: the bytes must outlive it.)
std::optional<std::string> Decode(const std::string& encoded) {
  rdb::Reader reader(encoded);
  std::string out;
  if (!reader.ReadString(&out)) return std::nullopt;
  return out;
}

TEST(RdbEncodingTest, ReadsIntegerAndCompressedStrings) {
  // Redis's integer encodings: 0xc0 int8, 0xc1 int16, 0xc2 int32, little-endian.
  EXPECT_EQ(Decode(std::string("\xc0\xfb", 2)), "-5");
  EXPECT_EQ(Decode(std::string("\xc1\x39\x30", 3)), "12345");
  EXPECT_EQ(Decode(std::string("\xc2\x15\xcd\x5b\x07", 5)), "123456789");
  // 0xc3: LZF, compressed length 5, plain length 8.
  EXPECT_EQ(Decode(std::string("\xc3\x05\x08\x01"
                               "ab\x80\x01",
                               8)),
            "abababab");
}

TEST(RdbEncodingTest, RefusesLengthsBeyondTheInput) {
  EXPECT_EQ(Decode(std::string("\x05"
                               "abc",
                               4)),
            std::nullopt);
  // An LZF string that claims 2^31 plain bytes from five compressed ones.
  EXPECT_EQ(Decode(std::string("\xc3\x05\x80\x80\x00\x00\x00"
                               "aaaaa",
                               12)),
            std::nullopt);
  EXPECT_EQ(Decode(std::string("\x80\x00", 2)), std::nullopt);
}

TEST(RdbEncodingTest, DumpFooterVerifies) {
  std::string payload;
  payload.push_back(static_cast<char>(rdb::kOpcodeFunction2));
  rdb::AppendString(&payload, "#!lua name=x\n");
  std::string body = payload;
  rdb::AppendDumpFooter(&payload);
  ASSERT_EQ(payload.size(), body.size() + 10);
  EXPECT_EQ(payload[body.size()], 10);  // RDB version 10, little-endian
  uint16_t version = 0;
  std::string_view verified;
  ASSERT_TRUE(rdb::VerifyDumpPayload(payload, &version, &verified));
  EXPECT_EQ(version, 10);
  EXPECT_EQ(verified, body);
  for (size_t i = 0; i < payload.size(); i++) {
    std::string corrupt = payload;
    corrupt[i] ^= 1;
    EXPECT_FALSE(rdb::VerifyDumpPayload(corrupt, &version, &verified)) << i;
  }
  std::string newer = body;
  rdb::AppendDumpFooter(&newer, 12);
  EXPECT_FALSE(rdb::VerifyDumpPayload(newer, &version, &verified));
}

}  // namespace
}  // namespace basalt
