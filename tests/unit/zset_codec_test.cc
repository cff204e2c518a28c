// Sorted-set score encoding (types/zset.h): memcmp order of EncodeScore must be numeric order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "types/zset.h"

namespace basalt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> OrderedScores() {
  return {-kInf,
          -std::numeric_limits<double>::max(),
          -1e300,
          -12345.678,
          -1.5,
          -1,
          -std::numeric_limits<double>::min(),
          -std::numeric_limits<double>::denorm_min(),
          0,
          std::numeric_limits<double>::denorm_min(),
          std::numeric_limits<double>::min(),
          1e-300,
          0.1,
          1,
          1.0000000000000002,
          2,
          9007199254740993.0,
          1e300,
          std::numeric_limits<double>::max(),
          kInf};
}

TEST(ZsetCodecTest, EncodesToEightBytes) {
  for (double d : OrderedScores()) EXPECT_EQ(EncodeScore(d).size(), kScoreBytes);
}

TEST(ZsetCodecTest, RoundTrips) {
  for (double d : OrderedScores()) EXPECT_EQ(DecodeScore(EncodeScore(d)), d) << d;
}

TEST(ZsetCodecTest, MemcmpOrderIsNumericOrder) {
  auto scores = OrderedScores();
  for (size_t i = 0; i + 1 < scores.size(); i++) {
    EXPECT_LT(EncodeScore(scores[i]), EncodeScore(scores[i + 1]))
        << scores[i] << " vs " << scores[i + 1];
  }
}

TEST(ZsetCodecTest, NegativeZeroIsZero) {
  EXPECT_EQ(EncodeScore(-0.0), EncodeScore(0.0));
  double d = DecodeScore(EncodeScore(-0.0));
  EXPECT_EQ(d, 0.0);
  EXPECT_FALSE(std::signbit(d));
}

TEST(ZsetCodecTest, RandomPairsCompareLikeDoubles) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> small(-1000, 1000);
  for (int i = 0; i < 20000; i++) {
    double a, b;
    if (i % 2 == 0) {
      a = small(rng);
      b = small(rng);
    } else {
      uint64_t x = rng(), y = rng();
      std::memcpy(&a, &x, sizeof(a));
      std::memcpy(&b, &y, sizeof(b));
      if (std::isnan(a) || std::isnan(b)) continue;
    }
    std::string ea = EncodeScore(a), eb = EncodeScore(b);
    if (a < b) {
      EXPECT_LT(ea, eb) << a << " " << b;
    } else if (a > b) {
      EXPECT_GT(ea, eb) << a << " " << b;
    } else {
      EXPECT_EQ(ea, eb) << a << " " << b;
    }
  }
}

TEST(ZsetCodecTest, ScoreRangeParsing) {
  ScoreRange r;
  ASSERT_TRUE(ParseScoreRange("(1.5", "+inf", &r));
  EXPECT_TRUE(r.minex);
  EXPECT_FALSE(r.maxex);
  EXPECT_EQ(r.min, 1.5);
  EXPECT_EQ(r.max, kInf);
  EXPECT_FALSE(r.Contains(1.5));
  EXPECT_TRUE(r.Contains(2));
  EXPECT_FALSE(ParseScoreRange("a", "1", &r));
  EXPECT_FALSE(ParseScoreRange("1", "nan", &r));
  ASSERT_TRUE(ParseScoreRange("-inf", "(-inf", &r));
  EXPECT_TRUE(r.Empty());
}

TEST(ZsetCodecTest, LexRangeParsing) {
  LexRange r;
  ASSERT_TRUE(ParseLexRange("[b", "(d", &r));
  EXPECT_FALSE(r.AboveMin("a"));
  EXPECT_TRUE(r.AboveMin("b"));
  EXPECT_TRUE(r.BelowMax("c"));
  EXPECT_FALSE(r.BelowMax("d"));
  EXPECT_FALSE(r.Empty());
  ASSERT_TRUE(ParseLexRange("-", "+", &r));
  EXPECT_TRUE(r.AboveMin(""));
  EXPECT_TRUE(r.BelowMax("\xff\xff"));
  ASSERT_TRUE(ParseLexRange("+", "-", &r));
  EXPECT_TRUE(r.Empty());
  ASSERT_TRUE(ParseLexRange("(a", "[a", &r));
  EXPECT_TRUE(r.Empty());
  EXPECT_FALSE(ParseLexRange("a", "+", &r));
  EXPECT_FALSE(ParseLexRange("-x", "+", &r));
  EXPECT_FALSE(ParseLexRange("", "+", &r));
}

// One end of a sorted set: its mark, the entries listed beyond it, its reach.
ZsetEnd End(std::string mark, std::vector<std::string> beyond = {}, std::string reach = {}) {
  ZsetEnd end;
  end.mark = std::move(mark);
  end.beyond = std::move(beyond);
  end.reach = std::move(reach);
  return end;
}

// Entries are `score | member`; plain strings order the same way and read more easily here.
TEST(ZsetCodecTest, SubkeyEntriesAreJudgedByTheMarksListsAndReaches) {
  Metadata meta;
  meta.type = RedisType::kZset;
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "c"), ZsetSubkeyEntry::kMember);  // never popped
  meta.zset.mutable_end(false) =
      End("d", {"b"});  // pops took everything up to "d"; "b" was added back
  meta.zset.mutable_end(true) = End("w");
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "a"), ZsetSubkeyEntry::kDead);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "b"), ZsetSubkeyEntry::kMember);
  // The mark itself may be the last pop or a member added back with its old score.
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "d"), ZsetSubkeyEntry::kAsk);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "e"), ZsetSubkeyEntry::kMember);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "w"), ZsetSubkeyEntry::kAsk);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "x"), ZsetSubkeyEntry::kDead);
  // An overflow moved the low mark out to "a0": from there up to the reach, only the score
  // index tells popped entries from members.
  meta.zset.mutable_end(false) = End("a0", {}, "d");
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "a"), ZsetSubkeyEntry::kDead);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "a0"), ZsetSubkeyEntry::kAsk);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "c"), ZsetSubkeyEntry::kAsk);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "d"), ZsetSubkeyEntry::kAsk);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "d0"), ZsetSubkeyEntry::kMember);
  // Dead at one end outweighs a member listed at the other.
  meta.zset.mutable_end(true) = End("c", {"x"});
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "d0"), ZsetSubkeyEntry::kDead);
  EXPECT_EQ(JudgeZsetSubkeyEntry(meta, "x"), ZsetSubkeyEntry::kMember);
}

}  // namespace
}  // namespace basalt
