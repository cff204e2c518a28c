// Parsing of DUMP payload bodies: payloads as redis-server 7.0 writes them (captured from its
// DUMP output) decode to the values written, and damaged containers are refused.
#include "types/rdb_value.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/rdb_compact.h"
#include "common/rdb_encoding.h"

namespace basalt {
namespace {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

bool ParsePayload(std::string_view hex, RdbValue* value) {
  std::string payload = FromHex(hex);
  uint16_t version;
  std::string_view body;
  if (!rdb::VerifyDumpPayload(payload, &version, &body)) return false;
  return ParseRdbObject(body, value);
}

TEST(RdbValueTest, RedisQuicklistOfAnLzfListpack) {
  // RPUSH l a 5 -100 1000 -70000 9000000000 <70 x>; DUMP l (redis-server 7.0.15).
  RdbValue v;
  ASSERT_TRUE(ParsePayload(
      "120102c32a406a1b6a00000007008161020501df9c02c3e802f290eefe04f4001a711802201a0309e04678e0"
      "3c000148ff0a00cfac41078042e290",
      &v));
  EXPECT_EQ(v.type, RedisType::kList);
  std::vector<std::string> want = {
      "a", "5", "-100", "1000", "-70000", "9000000000", std::string(70, 'x')};
  EXPECT_EQ(v.items, want);
}

TEST(RdbValueTest, RedisIntset) {
  // SADD s 3 -1 70000; DUMP s (redis-server 7.0.15).
  RdbValue v;
  ASSERT_TRUE(ParsePayload("0b140400000003000000ffffffff03000000701101000a00faf9076ba102fb14", &v));
  EXPECT_EQ(v.type, RedisType::kSet);
  EXPECT_EQ(v.items, (std::vector<std::string>{"-1", "3", "70000"}));
}

std::string Listpack(const std::string& entries, uint16_t count) {
  std::string lp(6, '\0');
  lp += entries;
  lp.push_back('\xff');
  uint32_t total = static_cast<uint32_t>(lp.size());
  for (int i = 0; i < 4; i++) lp[i] = static_cast<char>((total >> (8 * i)) & 0xff);
  lp[4] = static_cast<char>(count & 0xff);
  lp[5] = static_cast<char>(count >> 8);
  return lp;
}

TEST(RdbCompactTest, ListpackEntriesAndDamage) {
  // 7-bit 5; 13-bit -100 (0x1f9c); 6-bit string "ab"; each followed by its 1-byte back-length.
  std::string entries = std::string("\x05\x01", 2) + "\xdf\x9c\x02" +
                        "\x82"
                        "ab\x03";
  std::vector<std::string> out;
  ASSERT_TRUE(rdb::DecodeListpack(Listpack(entries, 3), &out));
  EXPECT_EQ(out, (std::vector<std::string>{"5", "-100", "ab"}));
  out.clear();
  EXPECT_TRUE(rdb::DecodeListpack(Listpack(entries, 65535), &out));  // count unknown
  out.clear();
  EXPECT_FALSE(rdb::DecodeListpack(Listpack(entries, 4), &out));  // count disagrees
  out.clear();
  EXPECT_FALSE(rdb::DecodeListpack(Listpack(entries.substr(0, entries.size() - 1), 3), &out));
  out.clear();
  std::string long_string = std::string("\x8f", 1) + "ab\x03";  // claims 15 bytes
  EXPECT_FALSE(rdb::DecodeListpack(Listpack(long_string, 1), &out));
  out.clear();
  std::string wrong_total = Listpack(entries, 3);
  wrong_total[0]++;
  EXPECT_FALSE(rdb::DecodeListpack(wrong_total, &out));
}

TEST(RdbCompactTest, IntsetChecks) {
  std::vector<std::string> out;
  std::string header("\x02\x00\x00\x00\x02\x00\x00\x00", 8);
  EXPECT_TRUE(rdb::DecodeIntset(header + std::string("\xff\xff\x07\x00", 4), &out));
  EXPECT_EQ(out, (std::vector<std::string>{"-1", "7"}));
  out.clear();
  EXPECT_FALSE(rdb::DecodeIntset(header + std::string("\x07\x00\xff\xff", 4), &out));  // order
  out.clear();
  EXPECT_FALSE(rdb::DecodeIntset(header + std::string("\x07\x00", 2), &out));  // short
  out.clear();
  std::string bad_width("\x03\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00", 11);
  EXPECT_FALSE(rdb::DecodeIntset(bad_width, &out));
}

TEST(RdbValueTest, RefusesEmptyAndDuplicateCollections) {
  RdbValue v;
  EXPECT_FALSE(ParseRdbObject(std::string("\x02\x00", 2), &v));
  RdbValue w;
  EXPECT_FALSE(ParseRdbObject(std::string("\x02\x02\x01"
                                          "a\x01"
                                          "a",
                                          6),
                              &w));
  RdbValue ok;
  EXPECT_TRUE(ParseRdbObject(std::string("\x02\x02\x01"
                                         "a\x01"
                                         "b",
                                         6),
                             &ok));
}

TEST(RdbCompactTest, ListpackBuilderRoundTripsEveryEncoding) {
  // Integers at each encoding's edges, strings of each length form, and entries long enough to
  // need two- and three-byte back-lengths.
  const std::vector<int64_t> ints = {
      0,          127,           128,          -1,        4095,     -4096,    4096,
      -4097,      32767,         -32768,       32768,     8388607,  -8388608, 8388608,
      2147483647, -2147483648LL, 2147483648LL, INT64_MAX, INT64_MIN};
  const std::vector<std::string> strings = {"",
                                            "a",
                                            std::string(63, 'x'),
                                            std::string(64, 'y'),
                                            std::string(4095, 'z'),
                                            std::string(4096, 'w'),
                                            std::string(20000, 'v')};
  rdb::ListpackBuilder builder;
  std::vector<std::string> expected;
  for (int64_t v : ints) {
    builder.AddInt(v);
    expected.push_back(std::to_string(v));
  }
  for (const auto& s : strings) {
    builder.AddString(s);
    expected.push_back(s);
  }
  std::string lp = builder.Finish();
  std::vector<std::string> decoded;
  ASSERT_TRUE(rdb::DecodeListpack(lp, &decoded));
  EXPECT_EQ(decoded, expected);
  // The smallest encodings: 0 and 127 take one byte each plus a one-byte back-length.
  EXPECT_EQ(static_cast<uint8_t>(lp[6]), 0);
  EXPECT_EQ(static_cast<uint8_t>(lp[8]), 127);
}

TEST(RdbEncodingTest, ReaderWindowSaysWhetherMoreInputWouldHelp) {
  std::string data;
  rdb::AppendString(&data, std::string(100, 'a'));
  // Only 20 of the 101 bytes are in the window, but the input holds them all: exhausted.
  rdb::Reader window(std::string_view(data).substr(0, 20), data.size());
  std::string out;
  EXPECT_FALSE(window.ReadString(&out));
  EXPECT_TRUE(window.exhausted());
  // The same claim with only 50 bytes left in the whole input: plainly malformed.
  rdb::Reader short_input(std::string_view(data).substr(0, 20), 50);
  EXPECT_FALSE(short_input.ReadString(&out));
  EXPECT_FALSE(short_input.exhausted());
  EXPECT_FALSE(short_input.Fits(1000, 1));
  EXPECT_FALSE(short_input.exhausted());
  rdb::Reader whole(data);
  ASSERT_TRUE(whole.ReadString(&out));
  EXPECT_EQ(out, std::string(100, 'a'));
}

}  // namespace
}  // namespace basalt
