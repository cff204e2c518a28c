// RankRange (types/zset.h) against a real RocksDB: the ranks it returns, and its byte budget,
// which lets ZRANGE give up a reply over max-reply-size without first reading the whole range.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "keyspace_fixture.h"
#include "types/zset.h"

namespace basalt {
namespace {

class ZsetRangeTest : public KeyspaceFixture {
 protected:
  // ZADD z <i> m<i> for i in [0, n): every member is 4 bytes ("m000"), in rank order.
  void Fill(int n) {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(0, "z");
    ASSERT_TRUE(old.ok());
    ZsetWriter w(ctx, 0, "z", *old);
    for (int i = 0; i < n; i++) {
      char member[8];
      snprintf(member, sizeof(member), "m%03d", i);
      w.Put(member, i, nullptr);
    }
    w.Finish();
    ASSERT_TRUE(ctx.Commit().ok());
  }

  std::vector<std::string> Range(uint64_t start, uint64_t stop, size_t max_bytes = SIZE_MAX) {
    Context ctx(ks_.get());
    KeyState state = Get(0, "z");
    auto items = RankRange(ctx, 0, "z", state.meta, start, stop, max_bytes);
    EXPECT_TRUE(items.ok());
    std::vector<std::string> members;
    for (const auto& item : *items) members.push_back(item.member);
    return members;
  }
};

TEST_F(ZsetRangeTest, ReturnsTheRanksAskedForFromEitherEnd) {
  ASSERT_NO_FATAL_FAILURE(Fill(100));
  EXPECT_EQ(Range(2, 4), (std::vector<std::string>{"m002", "m003", "m004"}));
  // Nearer the top: read from the high end, still returned ascending.
  EXPECT_EQ(Range(96, 98), (std::vector<std::string>{"m096", "m097", "m098"}));
  EXPECT_EQ(Range(0, 99).size(), 100u);
}

TEST_F(ZsetRangeTest, StopsOnceTheMembersPassTheBudget) {
  ASSERT_NO_FATAL_FAILURE(Fill(100));
  // 4 bytes per member: 10 members make 40 bytes, the 11th passes a 41-byte budget.
  EXPECT_EQ(Range(0, 99, 41).size(), 11u);
  EXPECT_EQ(Range(0, 99, 40).size(), 11u);
  EXPECT_EQ(Range(0, 99, 39).size(), 10u);
  // From the top the gathering stops the same way; what it holds is the top of the range.
  auto top = Range(50, 99, 8);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top.back(), "m099");
  // A range within the budget is whole.
  EXPECT_EQ(Range(10, 19, 40), (std::vector<std::string>{"m010", "m011", "m012", "m013", "m014",
                                                         "m015", "m016", "m017", "m018", "m019"}));
}

}  // namespace
}  // namespace basalt
