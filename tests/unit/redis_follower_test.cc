// The command stream parser of a replica following a Redis master: complete, partial and
// malformed multibulk input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "repl/redis_follower.h"
#include "repl/wire.h"

namespace basalt {
namespace {

constexpr size_t kMaxBulk = 1024;

TEST(ParseMultibulkTest, ParsesOneCommandAndReportsItsLength) {
  std::string in = RespCommand({"SET", "k", std::string("a\r\nb\0c", 6)}) + "*1\r\n$4\r\nPING\r\n";
  std::vector<std::string> argv;
  size_t used = 0;
  auto complete = ParseMultibulk(in, kMaxBulk, &argv, &used);
  ASSERT_TRUE(complete.ok());
  EXPECT_TRUE(*complete);
  EXPECT_EQ(used, in.size() - 14);
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[0], "SET");
  EXPECT_EQ(argv[2], std::string("a\r\nb\0c", 6));
}

TEST(ParseMultibulkTest, EveryPrefixIsIncomplete) {
  std::string in = RespCommand({"RPUSH", "list", "element"});
  std::vector<std::string> argv;
  for (size_t n = 0; n < in.size(); n++) {
    size_t used = 7;
    auto complete = ParseMultibulk(std::string_view(in).substr(0, n), kMaxBulk, &argv, &used);
    ASSERT_TRUE(complete.ok()) << n;
    EXPECT_FALSE(*complete) << n;
    EXPECT_EQ(used, 0u);
  }
}

TEST(ParseMultibulkTest, MalformedInputIsAnError) {
  std::vector<std::string> argv;
  size_t used = 0;
  const std::vector<std::string> bad_inputs = {"PING\r\n",         "*0\r\n",
                                               "*-1\r\n",          "*x\r\n",
                                               "*1\r\n+OK\r\n",    "*1\r\n$-1\r\n",
                                               "*1\r\n$2000\r\n",  "*1\r\n$1\r\nab\r\n",
                                               "*99999999999\r\n", std::string(64, '*')};
  for (const std::string& bad : bad_inputs) {
    EXPECT_FALSE(ParseMultibulk(bad, kMaxBulk, &argv, &used).ok()) << bad;
  }
}

}  // namespace
}  // namespace basalt
