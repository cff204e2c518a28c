// HyperLogLog codec (types/hyperloglog.h): Redis's byte layout, hashing, sparse and dense
// bodies, the cached cardinality and the estimator. Expected bytes and counts marked "Redis"
// were produced by redis-server 7.0.15 for the same input.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "types/hyperloglog.h"

namespace basalt::hll {
namespace {

using namespace std::string_literals;

Registers Zero() {
  Registers r;
  r.fill(0);
  return r;
}

Registers WithElements(int first, int last) {
  Registers r = Zero();
  for (int i = first; i < last; i++) Add(&r, std::to_string(i));
  return r;
}

TEST(HyperLogLog, NewSparseValueMatchesRedisBytes) {
  // Redis: PFADD k (no elements) stores this: sparse, one XZERO covering 16384 registers,
  // cached cardinality marked stale.
  std::string expected = "HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f\xff"s;
  EXPECT_EQ(Serialize(Zero(), "", true, 3000), expected);
}

TEST(HyperLogLog, ThreeElementsMatchRedisSparseBytes) {
  Registers r = Zero();
  EXPECT_TRUE(Add(&r, "a"));
  EXPECT_TRUE(Add(&r, "b"));
  EXPECT_TRUE(Add(&r, "c"));
  EXPECT_FALSE(Add(&r, "a"));  // same element again changes nothing
  // Redis: PFADD h a b c
  std::string redis =
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a"s;
  EXPECT_EQ(Serialize(r, "", true, 3000), redis);
  Registers back;
  ASSERT_TRUE(ReadRegisters(redis, &back));
  EXPECT_EQ(back, r);
  EXPECT_EQ(Estimate(r), 3u);
}

TEST(HyperLogLog, TwoElementsMatchRedisSparseBytes) {
  Registers r = Zero();
  Add(&r, "hello");
  Add(&r, "world");
  // Redis: PFADD x hello world
  EXPECT_EQ(Serialize(r, "", true, 3000), "HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80J\xb5\x88YH\x80[\xfe"s);
}

TEST(HyperLogLog, MurmurHashUsesEveryByteAndTheSeed) {
  EXPECT_NE(MurmurHash64A("abcdefgh1", 1), MurmurHash64A("abcdefgh2", 1));
  EXPECT_NE(MurmurHash64A("abcdefgh", 1), MurmurHash64A("abcdefgh", 2));
  EXPECT_NE(MurmurHash64A("a", 0), MurmurHash64A(std::string("a\0", 2), 0));
}

TEST(HyperLogLog, DenseLayoutIsSixBitsLeastSignificantFirst) {
  Registers r = Zero();
  r[0] = 63;
  r[1] = 1;
  r[2] = 0x2a;
  r[kRegisters - 1] = 51;
  std::string v = Serialize(r, "", false, 3000);
  ASSERT_EQ(v.size(), kDenseSize);
  EXPECT_EQ(v[4], 0);  // dense
  // register 0 in bits 0-5 of byte 0, register 1 in bits 6-11, register 2 in bits 12-17.
  EXPECT_EQ(static_cast<uint8_t>(v[16]), 0x3f | (1 << 6));
  EXPECT_EQ(static_cast<uint8_t>(v[17]), 0xa0);
  EXPECT_EQ(static_cast<uint8_t>(v[18]), 0x02);
  // the last register fills the top 6 bits of the last byte.
  EXPECT_EQ(static_cast<uint8_t>(v[kDenseSize - 1]), 51 << 2);
  Registers back;
  ASSERT_TRUE(ReadRegisters(v, &back));
  EXPECT_EQ(back, r);
}

TEST(HyperLogLog, RandomRegistersRoundTripBothEncodings) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; round++) {
    Registers r = Zero();
    int filled = round * 40;
    for (int i = 0; i < filled; i++) r[rng() % kRegisters] = 1 + rng() % 32;
    for (bool sparse : {true, false}) {
      std::string v = Serialize(r, "", sparse, 1 << 20);
      ASSERT_TRUE(LooksLikeHll(v));
      EXPECT_EQ(EncodingOf(v), sparse ? Encoding::kSparse : Encoding::kDense);
      Registers back;
      ASSERT_TRUE(ReadRegisters(v, &back));
      EXPECT_EQ(back, r);
    }
  }
}

TEST(HyperLogLog, SparseGivesWayToDense) {
  Registers r = WithElements(0, 1000);
  std::string sparse = Serialize(r, "", true, 3000);
  EXPECT_EQ(EncodingOf(sparse), Encoding::kSparse);
  // The limit counts the whole value, header included.
  EXPECT_EQ(EncodingOf(Serialize(r, "", true, sparse.size())), Encoding::kSparse);
  EXPECT_EQ(EncodingOf(Serialize(r, "", true, sparse.size() - 1)), Encoding::kDense);
  // A value above 32 has no VAL opcode.
  Registers high = Zero();
  high[5] = 33;
  EXPECT_EQ(EncodingOf(Serialize(high, "", true, 3000)), Encoding::kDense);
  high[5] = 32;
  EXPECT_EQ(EncodingOf(Serialize(high, "", true, 3000)), Encoding::kSparse);
}

TEST(HyperLogLog, ValidityCheckFollowsRedis) {
  std::string dense = Serialize(Zero(), "", false, 0);
  EXPECT_TRUE(LooksLikeHll(dense));
  EXPECT_FALSE(LooksLikeHll(dense.substr(0, dense.size() - 1)));  // dense size is exact
  EXPECT_FALSE(LooksLikeHll("HYLL"));
  EXPECT_FALSE(LooksLikeHll("hello world, not an HLL"));
  std::string other = Serialize(Zero(), "", true, 3000);
  other[4] = 2;  // unknown encoding
  EXPECT_FALSE(LooksLikeHll(other));
  other[4] = 1;
  other[0] = 'h';
  EXPECT_FALSE(LooksLikeHll(other));
  // A sparse header with any body passes; the body is checked when decoded.
  EXPECT_TRUE(LooksLikeHll("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0"s));
}

TEST(HyperLogLog, CorruptSparseBodiesAreRejected) {
  std::string header = "HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80"s;
  Registers r;
  EXPECT_TRUE(ReadRegisters(header + "\x7f\xff"s, &r));
  EXPECT_FALSE(ReadRegisters(header + "\x7f\xfe"s, &r));      // 16383 registers only
  EXPECT_FALSE(ReadRegisters(header + "\x7f\xff\x00"s, &r));  // one register too many
  EXPECT_FALSE(ReadRegisters(header + "\x7f"s, &r));          // XZERO cut short
  EXPECT_FALSE(ReadRegisters(header, &r));                    // no registers at all
  EXPECT_FALSE(ReadRegisters(header + "\x80\x7f\xff"s, &r));  // 16385 registers
}

TEST(HyperLogLog, CachedCardinalityLivesInTheHeader) {
  std::string v = Serialize(WithElements(0, 10), "", true, 3000);
  EXPECT_FALSE(CachedCardinality(v).has_value());  // every write marks it stale
  SetCachedCardinality(&v, 0x0102030405060708ULL);
  EXPECT_EQ(v.substr(8, 8), "\x08\x07\x06\x05\x04\x03\x02\x01");  // little-endian
  EXPECT_EQ(CachedCardinality(v), 0x0102030405060708ULL);
  // Rewriting keeps the old header bytes and only sets the stale bit, as Redis does.
  Registers r;
  ASSERT_TRUE(ReadRegisters(v, &r));
  std::string again = Serialize(r, v, false, 3000);
  EXPECT_EQ(again.substr(8, 7), v.substr(8, 7));
  EXPECT_EQ(static_cast<uint8_t>(again[15]), 0x81);
  EXPECT_FALSE(CachedCardinality(again).has_value());
}

TEST(HyperLogLog, MergeTakesTheLargerRegister) {
  Registers a = Zero(), b = Zero();
  a[1] = 5;
  a[2] = 1;
  b[2] = 7;
  b[3] = 2;
  Merge(&a, b);
  EXPECT_EQ(a[1], 5);
  EXPECT_EQ(a[2], 7);
  EXPECT_EQ(a[3], 2);
}

TEST(HyperLogLog, EstimatesMatchRedis) {
  EXPECT_EQ(Estimate(Zero()), 0u);
  // Redis: PFADD of the decimal strings 0..999, then 0..99999.
  EXPECT_EQ(Estimate(WithElements(0, 1000)), 1001u);
  EXPECT_EQ(Estimate(WithElements(0, 100000)), 99565u);
  EXPECT_EQ(Serialize(WithElements(0, 1000), "", true, 3000).size(), 1923u);
}

TEST(HyperLogLog, ErrorStaysNearTheStandardError) {
  // 1.04 / sqrt(16384) = 0.81 %: 3 standard errors is a safe deterministic bound.
  for (int n : {5000, 50000, 300000}) {
    uint64_t estimate = Estimate(WithElements(1000000, 1000000 + n));
    double error = std::abs(static_cast<double>(estimate) - n) / n;
    EXPECT_LT(error, 0.0243) << n << " elements estimated as " << estimate;
  }
}

TEST(HyperLogLog, DescribeSparseSpellsTheOpcodesAsRedis) {
  Registers r = Zero();
  Add(&r, "a");
  Add(&r, "b");
  Add(&r, "c");
  // Redis: PFADD h a b c, then PFDEBUG DECODE h
  EXPECT_EQ(DescribeSparse(Serialize(r, "", true, 3000)),
            "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
  EXPECT_EQ(DescribeSparse(Serialize(Zero(), "", true, 3000)), "Z:16384");
  // A ZERO opcode (run 64), then a VAL of value 3 over 2 registers, as written by hand.
  std::string value = Serialize(Zero(), "", true, 3000).substr(0, 16) + "\x3f\x89"s;
  EXPECT_EQ(DescribeSparse(value), "z:64 v:3,2");
}

TEST(HyperLogLog, SelfTestPasses) {
  EXPECT_EQ(SelfTest(3000), "");
  // 40 bytes cannot hold ten registers sparse, yet 10 < 40 / 2 requires it (Redis fails alike).
  EXPECT_EQ(SelfTest(40), "TESTFAILED sparse encoding not used");
}

}  // namespace
}  // namespace basalt::hll
