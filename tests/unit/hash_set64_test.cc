#include "common/hash_set64.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_set>

namespace basalt {
namespace {

TEST(HashSet64Test, AgreesWithAModelThroughGrowthAndClears) {
  HashSet64 set;
  std::unordered_set<uint64_t> model;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; round++) {
    // Rounds of very different sizes, so later small rounds run in a table an earlier one grew.
    int inserts = round % 5 == 0 ? 3000 : round % 7;
    for (int i = 0; i < inserts; i++) {
      // Values sharing their low bits probe past each other; 0 is a value like any other.
      uint64_t v = i % 3 == 0 ? (rng() << 20) : rng() % 5000;
      set.Insert(v);
      model.insert(v);
    }
    for (uint64_t v : model) ASSERT_TRUE(set.Contains(v)) << v;
    for (int i = 0; i < 2000; i++) {
      uint64_t v = i % 2 == 0 ? rng() : rng() % 10000;
      EXPECT_EQ(set.Contains(v), model.count(v) > 0) << v;
    }
    EXPECT_EQ(set.empty(), model.empty());
    set.Clear();
    model.clear();
    EXPECT_TRUE(set.empty());
    EXPECT_FALSE(set.Contains(0));
  }
}

}  // namespace
}  // namespace basalt
