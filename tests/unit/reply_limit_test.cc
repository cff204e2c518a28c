// Reply's size limit (max-reply-size): past it the reply is dropped and nothing more is added.
#include <gtest/gtest.h>

#include <string>

#include "commands/reply.h"

namespace basalt {
namespace {

TEST(ReplyLimitTest, WithinTheLimitNothingChanges) {
  std::string out = "+EARLIER\r\n";
  Reply reply(&out, 2);
  reply.SetLimit(64);
  reply.Array(2);
  reply.Bulk("ab");
  reply.Integer(7);
  EXPECT_FALSE(reply.overflowed());
  EXPECT_EQ(out, "+EARLIER\r\n*2\r\n$2\r\nab\r\n:7\r\n");
}

TEST(ReplyLimitTest, PassingTheLimitDropsOnlyThisReplyAndStopsGrowing) {
  std::string out = "+EARLIER\r\n";
  Reply reply(&out, 2);
  reply.SetLimit(32);
  reply.Array(100);
  for (int i = 0; i < 100; i++) reply.Bulk("0123456789");
  EXPECT_TRUE(reply.overflowed());
  EXPECT_EQ(out, "+EARLIER\r\n");  // the replies before it are kept
  reply.Bulk("more");
  reply.Simple("OK");
  EXPECT_EQ(out, "+EARLIER\r\n");
}

TEST(ReplyLimitTest, OneHugeBulkOverflowsAtOnce) {
  std::string out;
  Reply reply(&out, 3);
  reply.SetLimit(1024);
  reply.Bulk(std::string(4096, 'x'));
  EXPECT_TRUE(reply.overflowed());
  EXPECT_TRUE(out.empty());
}

TEST(ReplyLimitTest, OverflowGivesUpWhatWasWritten) {
  std::string out = ":1\r\n";
  Reply reply(&out, 2);
  reply.SetLimit(1 << 20);
  reply.Array(1);
  reply.Overflow();
  EXPECT_TRUE(reply.overflowed());
  EXPECT_EQ(out, ":1\r\n");
}

TEST(ReplyLimitTest, WithoutALimitReplyIsUnbounded) {
  std::string out;
  Reply reply(&out, 2);
  reply.Bulk(std::string(1 << 20, 'x'));
  EXPECT_FALSE(reply.overflowed());
  EXPECT_EQ(out.size(), (1u << 20) + 12);  // "$1048576\r\n" ... "\r\n"
}

}  // namespace
}  // namespace basalt
