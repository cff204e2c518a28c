// ACL checks over the command table (commands/acl_check.h): every row's categories, and what a
// user needs to run a command with given arguments — the command or subcommand, each key with
// the access Redis's key specs call for, and Pub/Sub channels.
#include "commands/acl_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace basalt {
namespace {

const CommandSpec& Spec(const char* name) {
  const CommandSpec* spec = CommandTable::Get().FindOriginal(name);
  EXPECT_NE(spec, nullptr) << name;
  return *spec;
}

AclUser Make(const std::vector<std::string>& rules) {
  AclUser user;
  for (const auto& rule : rules) EXPECT_TRUE(user.Apply(CommandAclCatalog(), rule).ok()) << rule;
  return user;
}

AclVerdict Check(const AclUser& user, std::vector<std::string> argv) {
  return AclCheck(user, Spec(argv[0].c_str()), argv).verdict;
}

// Each row's categories parse, and agree with its flags the way Redis derives them: writes are
// @write, reads @read (scripts excepted), admin commands @admin and @dangerous, and each command is
// either @fast or @slow. Container rows are checked through their subcommands.
TEST(AclCategoriesOfTheTableTest, EveryCommandHasConsistentCategories) {
  const CommandTable& table = CommandTable::Get();
  for (const CommandSpec* spec : table.all()) {
    uint64_t bits = 0;
    ASSERT_TRUE(ParseAclCategories(spec->acl_categories, &bits)) << spec->name;
    EXPECT_NE(bits & (kAclFast | kAclSlow), 0u) << spec->name;
    EXPECT_NE(bits & (kAclFast | kAclSlow), kAclFast | kAclSlow) << spec->name;
    for (const SubcommandSpec& sub : table.Subcommands(*spec)) {
      uint64_t sub_bits = 0;
      ASSERT_TRUE(ParseAclCategories({sub.acl_categories, sub.acl_categories_len}, &sub_bits))
          << spec->name << "|" << sub.name;
      EXPECT_NE(sub_bits & (kAclFast | kAclSlow), 0u) << spec->name << "|" << sub.name;
      EXPECT_TRUE(!(sub_bits & kAclAdmin) || (sub_bits & kAclDangerous)) << sub.name;
    }
    if (table.HasSubcommands(*spec)) continue;
    auto implies = [&](uint32_t flag, uint64_t categories) {
      return !(spec->flags & flag) || (bits & categories) == categories;
    };
    EXPECT_TRUE(implies(kCmdWrite, kAclWrite)) << spec->name;
    // Redis leaves scripts (EVAL_RO) out of @read: what they read depends on the script.
    EXPECT_TRUE((bits & kAclScripting) || implies(kCmdReadOnly, kAclRead)) << spec->name;
    EXPECT_TRUE(implies(kCmdAdmin, kAclAdmin | kAclDangerous)) << spec->name;
    EXPECT_TRUE(implies(kCmdFast, kAclFast)) << spec->name;
  }
}

// A sample compared with Redis 7.0.15's COMMAND INFO.
TEST(AclCategoriesOfTheTableTest, SampleMatchesRedis) {
  auto cats = [](const char* name) {
    uint64_t bits = 0;
    ParseAclCategories(Spec(name).acl_categories, &bits);
    return bits;
  };
  EXPECT_EQ(cats("get"), kAclRead | kAclString | kAclFast);
  EXPECT_EQ(cats("set"), kAclWrite | kAclString | kAclSlow);
  EXPECT_EQ(cats("flushall"), kAclKeyspace | kAclWrite | kAclSlow | kAclDangerous);
  EXPECT_EQ(cats("keys"), kAclKeyspace | kAclRead | kAclSlow | kAclDangerous);
  EXPECT_EQ(cats("blpop"), kAclWrite | kAclList | kAclSlow | kAclBlocking);
  EXPECT_EQ(cats("zadd"), kAclWrite | kAclSortedSet | kAclFast);
  EXPECT_EQ(cats("info"), kAclSlow | kAclDangerous);
  EXPECT_EQ(cats("multi"), kAclFast | kAclTransaction);
  EXPECT_EQ(cats("config"), kAclSlow);
  const AclCatalog& catalog = CommandAclCatalog();
  EXPECT_EQ(catalog.entry(catalog.Find("config|get")).categories,
            kAclAdmin | kAclSlow | kAclDangerous);
  EXPECT_EQ(catalog.entry(catalog.Find("client|kill")).categories,
            kAclAdmin | kAclSlow | kAclDangerous | kAclConnection);
  EXPECT_EQ(catalog.entry(catalog.Find("acl|whoami")).categories, kAclSlow);
}

TEST(AclCheckTest, CommandsAndSubcommands) {
  AclUser user = Make({"allkeys", "+@read", "+config|get"});
  EXPECT_EQ(Check(user, {"get", "k"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"set", "k", "v"}), AclVerdict::kDeniedCommand);
  EXPECT_EQ(Check(user, {"config", "get", "port"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"CONFIG", "SET", "port", "1"}), AclVerdict::kDeniedCommand);
  // AUTH and HELLO are never refused by command rules.
  EXPECT_EQ(Check(user, {"auth", "x"}), AclVerdict::kAllowed);
}

TEST(AclCheckTest, NoPermissionTextsAreRedis70s) {
  AclUser user = Make({"~k*", "+get", "+config|get"});
  std::vector<std::string> argv = {"config", "set", "a", "b"};
  AclCheckResult r = AclCheck(user, Spec("config"), argv);
  EXPECT_EQ(NoPermissionError(r, Spec("config"), argv),
            "NOPERM this user has no permissions to run the 'config|set' command");
  EXPECT_EQ(DryRunExplanation(r, Spec("config"), argv),
            "This user has no permissions to run the 'config|set' command");
  argv = {"get", "other"};
  r = AclCheck(user, Spec("get"), argv);
  EXPECT_EQ(r.arg, 1u);
  EXPECT_EQ(NoPermissionError(r, Spec("get"), argv),
            "NOPERM this user has no permissions to access one of the keys used as arguments");
  EXPECT_EQ(DryRunExplanation(r, Spec("get"), argv),
            "This user has no permissions to access the 'other' key");
}

TEST(AclCheckTest, EveryKeyArgumentIsChecked) {
  AclUser user = Make({"+@all", "~app:*"});
  EXPECT_EQ(Check(user, {"mget", "app:1", "app:2"}), AclVerdict::kAllowed);
  AclCheckResult r = AclCheck(user, Spec("mset"), {"mset", "app:1", "v", "other", "v"});
  EXPECT_EQ(r.verdict, AclVerdict::kDeniedKey);
  EXPECT_EQ(r.arg, 3u);
  // Keys found by a key finder (numkeys) too.
  EXPECT_EQ(Check(user, {"zunionstore", "app:d", "2", "app:a", "other"}), AclVerdict::kDeniedKey);
  EXPECT_EQ(Check(user, {"zunionstore", "app:d", "2", "app:a", "app:b"}), AclVerdict::kAllowed);
  // Commands without keys need no key pattern.
  EXPECT_EQ(Check(user, {"dbsize"}), AclVerdict::kAllowed);
}

TEST(AclCheckTest, ReadAndWriteKeyAccessFollowsRedisKeySpecs) {
  AclUser user = Make({"+@all", "%R~r:*", "%W~w:*"});
  EXPECT_EQ(Check(user, {"get", "r:1"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"get", "w:1"}), AclVerdict::kDeniedKey);
  EXPECT_EQ(Check(user, {"set", "w:1", "v"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"set", "r:1", "v"}), AclVerdict::kDeniedKey);
  EXPECT_EQ(Check(user, {"set", "w:1", "v", "GET"}), AclVerdict::kDeniedKey);  // reads too
  EXPECT_EQ(Check(user, {"incr", "w:1"}), AclVerdict::kDeniedKey);             // read-modify-write
  EXPECT_EQ(Check(user, {"del", "w:1"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"lpush", "w:1", "x"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"lpop", "w:1"}), AclVerdict::kDeniedKey);
  // Existence and metadata need no access right, only a matching pattern.
  EXPECT_EQ(Check(user, {"exists", "w:1", "r:1"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"type", "w:1"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"exists", "other"}), AclVerdict::kDeniedKey);
  // Source read, destination written.
  EXPECT_EQ(Check(user, {"copy", "r:1", "w:1"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"copy", "w:1", "r:1"}), AclVerdict::kDeniedKey);
  EXPECT_EQ(Check(user, {"sunionstore", "w:d", "r:a", "r:b"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"bitop", "and", "w:d", "r:a", "r:b"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"bitop", "and", "r:d", "r:a"}), AclVerdict::kDeniedKey);
  EXPECT_EQ(Check(user, {"bitfield", "r:1", "GET", "u8", "0"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"bitfield", "r:1", "SET", "u8", "0", "1"}), AclVerdict::kDeniedKey);
}

TEST(AclCheckTest, SelectorsAreAlternativesAndTheWorstReasonWins) {
  AclUser user = Make({"+get", "~a*", "(+set ~b*)"});
  EXPECT_EQ(Check(user, {"get", "a1"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"set", "b1", "v"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"set", "a1", "v"}), AclVerdict::kDeniedKey);  // key beats command
  EXPECT_EQ(Check(user, {"del", "a1"}), AclVerdict::kDeniedCommand);
}

TEST(AclCheckTest, PubSubChannels) {
  AclUser user = Make({"+@all", "~k*", "resetchannels", "&news.*"});
  EXPECT_EQ(Check(user, {"publish", "news.a", "m"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"publish", "other", "m"}), AclVerdict::kDeniedChannel);
  // Shard channels sit in key positions but are channels: ~k* does not apply.
  EXPECT_EQ(Check(user, {"spublish", "news.a", "m"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"ssubscribe", "news.a", "news.b"}), AclVerdict::kAllowed);
  AclCheckResult r = AclCheck(user, Spec("subscribe"), {"subscribe", "news.a", "other"});
  EXPECT_EQ(r.verdict, AclVerdict::kDeniedChannel);
  EXPECT_EQ(r.arg, 2u);
  EXPECT_EQ(Check(user, {"psubscribe", "news.*"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"psubscribe", "news.a*"}), AclVerdict::kDeniedChannel);
  EXPECT_EQ(Check(user, {"unsubscribe", "other"}), AclVerdict::kAllowed);
  EXPECT_EQ(NoPermissionError(r, Spec("subscribe"), {"subscribe", "news.a", "other"}),
            "NOPERM this user has no permissions to access one of the channels used as "
            "arguments");
}

TEST(AclCheckTest, FirstArgumentRulesMatchArgv1) {
  AclUser user = Make({"+select|0"});
  EXPECT_EQ(Check(user, {"select", "0"}), AclVerdict::kAllowed);
  EXPECT_EQ(Check(user, {"select", "1"}), AclVerdict::kDeniedCommand);
}

TEST(AclCheckTest, CommandNamesForRulesAndErrors) {
  EXPECT_EQ(AclCommandName(Spec("config"), {"CONFIG", "GeT", "x"}), "config|get");
  EXPECT_EQ(AclCommandName(Spec("get"), {"GET", "x"}), "get");
  EXPECT_EQ(AclCommandName(Spec("command"), {"command"}), "command");
}

}  // namespace
}  // namespace basalt
