#include "types/member_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/hash.h"

namespace basalt {
namespace {

TEST(MemberFilterTest, HoldsEveryMemberAddedThroughGrowthAndRulesOutMostOthers) {
  MemberFilter filter;
  std::mt19937_64 rng(11);
  std::vector<uint64_t> added;
  size_t grew = 0;
  for (int i = 0; i < 200000; i++) {
    // Some hashes have a small counter for their lower half: the fingerprint is the upper half.
    uint64_t hash = i % 5 == 0 ? (rng() & 0xffffffff00000000ull) | i : rng();
    added.push_back(hash);
    if (filter.Add(hash, SIZE_MAX)) grew++;
  }
  EXPECT_GE(grew, 10u);  // from 16 slots to at least 400000
  for (uint64_t hash : added) ASSERT_TRUE(filter.MayContain(hash)) << hash;
  size_t false_matches = 0;
  for (int i = 0; i < 100000; i++) false_matches += filter.MayContain(rng()) ? 1 : 0;
  // A table at most half full of 32-bit fingerprints: a few in ten thousand.
  EXPECT_LT(false_matches, 100u);
  EXPECT_GE(filter.bytes(), 200000 * 2 * sizeof(uint32_t));
}

TEST(MemberFilterTest, AnEmptyFilterRulesOutEverything) {
  MemberFilter filter;
  EXPECT_FALSE(filter.MayContain(HashBytes("a")));
  EXPECT_FALSE(filter.MayContain(0));  // the fingerprint of 0 is not the empty slot's mark
  filter.Add(0, SIZE_MAX);
  EXPECT_TRUE(filter.MayContain(0));
}

TEST(MemberFilterTest, AFilterThatWouldGrowPastItsLimitAnswersMaybeForEverything) {
  MemberFilter filter;
  // Room for one doubling: the 32-slot table beside the 16-slot one while its entries move.
  const size_t limit = filter.bytes() + 32 * sizeof(uint32_t);
  for (uint64_t i = 1; i <= 16; i++) filter.Add(i << 40, limit);
  EXPECT_FALSE(filter.saturated());
  EXPECT_FALSE(filter.MayContain(uint64_t{999} << 40));
  EXPECT_TRUE(filter.Add(uint64_t{17} << 40, limit));  // a second doubling: it gives up
  EXPECT_TRUE(filter.saturated());
  EXPECT_TRUE(filter.MayContain(uint64_t{999} << 40));
  EXPECT_FALSE(filter.Add(uint64_t{18} << 40, limit));
}

TEST(MemberFilterTest, MembersAreFoundWhileTheTableBeforeADoublingIsMovedBitByBit) {
  MemberFilter filter;
  std::mt19937_64 rng(3);
  std::vector<uint64_t> added;
  size_t peak = 0;
  for (int i = 0; i < 6000; i++) {
    added.push_back(rng());
    filter.Add(added.back(), SIZE_MAX);
    peak = std::max(peak, filter.bytes());
    // After every add, whether or not a move is under way, every member added is there.
    if (i % 97 == 0 || (i > 4090 && i < 4200)) {
      for (uint64_t hash : added) ASSERT_TRUE(filter.MayContain(hash)) << i;
    }
  }
  // 6000 members sit in 16384 slots. The doubling came at the 4097th; the 8192-slot table was
  // let go 1024 adds later, once its entries had moved.
  EXPECT_EQ(filter.bytes(), MemberFilter().bytes() + (16384 - 16) * sizeof(uint32_t));
  EXPECT_EQ(peak, MemberFilter().bytes() + (16384 + 8192 - 16) * sizeof(uint32_t));
}

TEST(MemberFiltersTest, AFilterIsBornWithItsIncarnationAndFoundByVersion) {
  MemberFilters filters(1 << 20);
  EXPECT_EQ(filters.Find(7), nullptr);
  auto filter = filters.Start(7);
  ASSERT_NE(filter, nullptr);
  EXPECT_EQ(filters.Find(7), filter);
  EXPECT_EQ(filters.Start(7), nullptr);  // a version started twice is trusted no more
  EXPECT_EQ(filters.stats().filters, 1u);
  filters.Clear();
  EXPECT_EQ(filters.Find(7), nullptr);
  EXPECT_EQ(filters.stats().filters, 0u);
  EXPECT_EQ(filters.stats().bytes, 0u);
}

TEST(MemberFiltersTest, WritersNoteMembersAndLearnWhichAreAbsent) {
  MemberFilters filters(1 << 20);
  {
    MemberFilterRef fresh(filters, 1, true);
    EXPECT_FALSE(fresh.MayHold("f"));
    fresh.Note("f");
    EXPECT_TRUE(fresh.MayHold("f"));
  }
  MemberFilterRef later(filters, 1, false);  // the next command's writer
  EXPECT_TRUE(later.MayHold("f"));
  EXPECT_FALSE(later.MayHold("g"));
  MemberFilterRef unknown(filters, 2, false);  // an incarnation with no filter: anything may be
  EXPECT_TRUE(unknown.MayHold("g"));
  EXPECT_EQ(filters.stats().absent_answers, 2u);
  filters.Clear();
  EXPECT_EQ(filters.stats().absent_answers, 2u);  // kept across the drop
}

TEST(MemberFiltersTest, GrowthPastTheBudgetDropsFiltersNotUsedSinceTheHandPassed) {
  const size_t one = MemberFilter().bytes();
  MemberFilters filters(one * 4 + one / 2);  // room for four small filters
  for (uint64_t v = 1; v <= 4; v++) ASSERT_NE(filters.Start(v), nullptr);
  EXPECT_NE(filters.Find(1), nullptr);  // used: survives one pass of the hand
  ASSERT_NE(filters.Start(5), nullptr);
  EXPECT_NE(filters.Find(1), nullptr);
  EXPECT_EQ(filters.stats().filters, 4u);
  int gone = 0;
  for (uint64_t v = 2; v <= 4; v++) gone += filters.Find(v) == nullptr ? 1 : 0;
  EXPECT_EQ(gone, 1);

  // A filter that would outgrow a quarter of the budget gives up and is dropped; its writer may
  // go on using it, and it then answers "maybe".
  MemberFilterRef big(filters, 6, true);
  for (int i = 0; i < 1000; i++) big.Note(std::to_string(i));
  EXPECT_EQ(filters.Find(6), nullptr);
  EXPECT_TRUE(big.MayHold("999"));
  EXPECT_TRUE(big.MayHold("never written"));
  EXPECT_LE(filters.stats().bytes, one * 4 + one / 2);
}

TEST(MemberFiltersTest, ABudgetOfZeroDropsEveryFilterAndStartsNone) {
  MemberFilters filters(1 << 20);
  ASSERT_NE(filters.Start(1), nullptr);
  filters.SetBudget(0);
  EXPECT_EQ(filters.Find(1), nullptr);
  EXPECT_EQ(filters.Start(2), nullptr);
  MemberFilterRef none(filters, 3, true);
  EXPECT_TRUE(none.MayHold("x"));
  filters.SetBudget(1 << 20);
  EXPECT_NE(filters.Start(4), nullptr);
}

}  // namespace
}  // namespace basalt
