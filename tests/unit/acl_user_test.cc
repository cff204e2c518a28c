// ACL users (security/acl_user.h): the rule language, its error texts, key and channel
// patterns, selectors, and descriptions that rebuild the same permissions. The catalog is the
// real one built from the command table.
#include "security/acl_user.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commands/server_state.h"
#include "common/sha256.h"

namespace basalt {
namespace {

const AclCatalog& Catalog() {
  return CommandAclCatalog();
}

AclUser Make(const std::vector<std::string>& rules) {
  AclUser user;
  for (const auto& rule : rules) {
    Status s = user.Apply(Catalog(), rule);
    EXPECT_TRUE(s.ok()) << rule << ": " << s.message();
  }
  return user;
}

std::string ErrorOf(const std::vector<std::string>& rules) {
  AclUser user;
  for (const auto& rule : rules) {
    Status s = user.Apply(Catalog(), rule);
    if (!s.ok()) return s.message();
  }
  return "";
}

// prefix + text, built with append: GCC 12 warns falsely (-Wrestrict) on "literal" + string&&.
std::string Prefixed(const char* prefix, const std::string& text) {
  std::string out(prefix);
  out.append(text);
  return out;
}

bool Allows(const AclUser& user, const char* command) {
  int id = Catalog().Find(command);
  EXPECT_GE(id, 0) << command;
  return user.root().AllowsCommand(id, nullptr);
}

TEST(AclCategoriesTest, NamesInRedisOrder) {
  const auto& names = AclCategoryNames();
  ASSERT_EQ(names.size(), 21u);
  EXPECT_EQ(names.front(), "keyspace");
  EXPECT_EQ(names.back(), "scripting");
  EXPECT_EQ(AclCategoryByName("READ"), kAclRead);
  EXPECT_EQ(AclCategoryByName("dangerous"), kAclDangerous);
  EXPECT_EQ(AclCategoryByName("nosuch"), 0u);
}

TEST(AclCategoriesTest, ParsesSpacedAndJoinedLists) {
  uint64_t bits = 0;
  ASSERT_TRUE(ParseAclCategories("@read @string @fast", &bits));
  EXPECT_EQ(bits, kAclRead | kAclString | kAclFast);
  ASSERT_TRUE(ParseAclCategories("@admin@slow@dangerous", &bits));
  EXPECT_EQ(bits, kAclAdmin | kAclSlow | kAclDangerous);
  ASSERT_TRUE(ParseAclCategories("", &bits));
  EXPECT_EQ(bits, 0u);
  EXPECT_FALSE(ParseAclCategories("@read @nosuch", &bits));
  EXPECT_FALSE(ParseAclCategories("read", &bits));
}

TEST(AclUserTest, NewUserIsOffWithoutPermissions) {
  AclUser user = Make({});
  EXPECT_FALSE(user.enabled);
  EXPECT_FALSE(Allows(user, "get"));
  EXPECT_EQ(user.Describe(Catalog()), "off resetchannels -@all");
}

TEST(AclUserTest, PasswordsAreStoredAsSha256AndChecked) {
  AclUser user = Make({"on", ">p1", ">p2", Prefixed("#", Sha256::HexHash("p3"))});
  EXPECT_EQ(user.password_hashes.size(), 3u);
  EXPECT_EQ(user.password_hashes[0], Sha256::HexHash("p1"));
  EXPECT_TRUE(user.PasswordMatches("p1"));
  EXPECT_TRUE(user.PasswordMatches("p3"));
  EXPECT_FALSE(user.PasswordMatches("p4"));
  EXPECT_FALSE(user.PasswordMatches(""));
  ASSERT_TRUE(user.Apply(Catalog(), "<p1").ok());
  ASSERT_TRUE(user.Apply(Catalog(), Prefixed("!", Sha256::HexHash("p2"))).ok());
  EXPECT_FALSE(user.PasswordMatches("p1"));
  EXPECT_FALSE(user.PasswordMatches("p2"));
  EXPECT_TRUE(user.PasswordMatches("p3"));
  // The same password twice is stored once.
  ASSERT_TRUE(user.Apply(Catalog(), ">p3").ok());
  EXPECT_EQ(user.password_hashes.size(), 1u);
}

TEST(AclUserTest, NopassAndResetpass) {
  AclUser user = Make({">secret", "nopass"});
  EXPECT_TRUE(user.nopass);
  EXPECT_TRUE(user.password_hashes.empty());
  EXPECT_TRUE(user.PasswordMatches("anything"));
  ASSERT_TRUE(user.Apply(Catalog(), ">x").ok());  // a password ends nopass
  EXPECT_FALSE(user.nopass);
  EXPECT_FALSE(user.PasswordMatches("anything"));
  ASSERT_TRUE(user.Apply(Catalog(), "resetpass").ok());
  EXPECT_FALSE(user.nopass);
  EXPECT_FALSE(user.PasswordMatches("x"));
  EXPECT_FALSE(user.PasswordMatches(""));
}

TEST(AclUserTest, ErrorTextsAreRedis) {
  EXPECT_EQ(ErrorOf({"+nosuch"}), "Unknown command or category name in ACL");
  EXPECT_EQ(ErrorOf({"+@nosuch"}), "Unknown command or category name in ACL");
  EXPECT_EQ(ErrorOf({"+config|nosuch"}), "Unknown command or category name in ACL");
  EXPECT_EQ(ErrorOf({"-select|0"}), "Unknown command or category name in ACL");
  EXPECT_EQ(ErrorOf({"bogus"}), "Syntax error");
  EXPECT_EQ(ErrorOf({"+acl|"}), "Syntax error");
  EXPECT_EQ(ErrorOf({"%X~a"}), "Syntax error");
  EXPECT_EQ(ErrorOf({"%RR~a"}), "Syntax error");
  EXPECT_EQ(ErrorOf({"%~a"}), "Syntax error");
  EXPECT_EQ(ErrorOf({"+acl|whoami|x"}), "Allowing first-arg of a subcommand is not supported");
  EXPECT_EQ(ErrorOf({"#abc"}),
            "The password hash must be exactly 64 characters and contain only lowercase "
            "hexadecimal characters");
  EXPECT_EQ(ErrorOf({Prefixed("#", std::string(64, 'A'))}),
            "The password hash must be exactly 64 characters and contain only lowercase "
            "hexadecimal characters");
  EXPECT_EQ(ErrorOf({"<nope"}),
            "The password you are trying to remove from the user does not exist");
  EXPECT_EQ(ErrorOf({"~*", "~a"}),
            "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
            "not have any effect. Try 'resetkeys' to start with an empty list of patterns");
  EXPECT_EQ(ErrorOf({"allchannels", "&a"}),
            "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
            "does not have any effect. Try 'resetchannels' to start with an empty list of "
            "channels");
}

TEST(AclUserTest, CategoriesCommandsAndSubcommands) {
  AclUser reader = Make({"+@read"});
  EXPECT_TRUE(Allows(reader, "get"));
  EXPECT_TRUE(Allows(reader, "object|encoding"));
  EXPECT_FALSE(Allows(reader, "set"));
  EXPECT_FALSE(Allows(reader, "object|help"));  // @keyspace @slow, not @read

  AclUser safe = Make({"+@all", "-@dangerous"});
  EXPECT_TRUE(Allows(safe, "set"));
  EXPECT_FALSE(Allows(safe, "flushall"));
  EXPECT_FALSE(Allows(safe, "keys"));
  EXPECT_FALSE(Allows(safe, "config|set"));
  EXPECT_TRUE(Allows(safe, "config|help"));  // @slow only, as in Redis
  EXPECT_TRUE(Allows(safe, "client|id"));
  EXPECT_FALSE(Allows(safe, "client|kill"));

  AclUser one = Make({"+config|get"});
  EXPECT_TRUE(Allows(one, "config|get"));
  EXPECT_FALSE(Allows(one, "config|set"));
  AclUser all_config = Make({"+config", "-config|set"});
  EXPECT_TRUE(Allows(all_config, "config|get"));
  EXPECT_TRUE(Allows(all_config, "config|rewrite"));
  EXPECT_FALSE(Allows(all_config, "config|set"));

  AclUser none = Make({"allcommands", "nocommands", "+get"});
  EXPECT_TRUE(Allows(none, "get"));
  EXPECT_FALSE(Allows(none, "set"));
}

TEST(AclUserTest, FirstArgumentRules) {
  AclUser user = Make({"+select|0", "+SELECT|1"});
  int select = Catalog().Find("select");
  std::string zero = "0", one = "1", two = "2";
  EXPECT_TRUE(user.root().AllowsCommand(select, &zero));
  EXPECT_TRUE(user.root().AllowsCommand(select, &one));
  EXPECT_FALSE(user.root().AllowsCommand(select, &two));
  EXPECT_FALSE(user.root().AllowsCommand(select, nullptr));
  EXPECT_EQ(user.root().DescribeCommands(Catalog()), "-@all +select|0 +select|1");
  // A rule for the whole command drops the first-argument ones.
  ASSERT_TRUE(user.Apply(Catalog(), "-select").ok());
  EXPECT_FALSE(user.root().AllowsCommand(select, &zero));
  EXPECT_EQ(user.root().DescribeCommands(Catalog()), "-@all -select");
}

TEST(AclUserTest, KeyPatternsWithAccess) {
  AclUser user = Make({"~app:*", "%R~ro:*", "%W~wo:*", "%R~both", "%W~both"});
  const AclSelector& s = user.root();
  EXPECT_TRUE(s.AllowsKey("app:1", kAclKeyReadWrite));
  EXPECT_TRUE(s.AllowsKey("ro:1", kAclKeyRead));
  EXPECT_FALSE(s.AllowsKey("ro:1", kAclKeyWrite));
  EXPECT_FALSE(s.AllowsKey("ro:1", kAclKeyReadWrite));
  EXPECT_TRUE(s.AllowsKey("wo:1", kAclKeyWrite));
  EXPECT_FALSE(s.AllowsKey("wo:1", kAclKeyRead));
  EXPECT_TRUE(s.AllowsKey("both", kAclKeyReadWrite));  // %R~ and %W~ merge into ~
  EXPECT_TRUE(s.AllowsKey("ro:1", kAclKeyNone));       // metadata access: any pattern
  EXPECT_FALSE(s.AllowsKey("other", kAclKeyNone));
  EXPECT_EQ(s.DescribeKeys(), "~app:* %R~ro:* %W~wo:* ~both");
  ASSERT_TRUE(user.Apply(Catalog(), "allkeys").ok());
  EXPECT_TRUE(user.root().AllowsKey("other", kAclKeyReadWrite));
  EXPECT_EQ(user.root().DescribeKeys(), "~*");
  ASSERT_TRUE(user.Apply(Catalog(), "resetkeys").ok());
  EXPECT_FALSE(user.root().AllowsKey("app:1", kAclKeyNone));
  EXPECT_EQ(user.root().DescribeKeys(), "");
}

TEST(AclUserTest, ChannelPatterns) {
  AclUser user = Make({"&news.*", "&chat"});
  EXPECT_TRUE(user.root().AllowsChannel("news.sport", false));
  EXPECT_FALSE(user.root().AllowsChannel("weather", false));
  // PSUBSCRIBE patterns are compared literally.
  EXPECT_TRUE(user.root().AllowsChannel("news.*", true));
  EXPECT_FALSE(user.root().AllowsChannel("news.s*", true));
  EXPECT_EQ(user.root().DescribeChannels(), "&news.* &chat");
  ASSERT_TRUE(user.Apply(Catalog(), "allchannels").ok());
  EXPECT_TRUE(user.root().AllowsChannel("anything", false));
  EXPECT_EQ(user.root().DescribeChannels(), "&*");
  ASSERT_TRUE(user.Apply(Catalog(), "resetchannels").ok());
  EXPECT_FALSE(user.root().AllowsChannel("anything", false));
}

// Descriptions Redis 7.2 gives for the same rules: its rules as given, each replacing the earlier
// ones for the same command (acl.c, ACLUpdateCommandRules).
TEST(AclUserTest, DescriptionsMatchRedis) {
  EXPECT_EQ(Make({"on", ">p1", "~*", "+@read", "-get"}).Describe(Catalog()),
            Prefixed("on #", Sha256::HexHash("p1")) + " ~* resetchannels -@all +@read -get");
  EXPECT_EQ(Make({"+@all", "-@dangerous", "-flushall", "+client|id"}).Describe(Catalog()),
            "off resetchannels +@all -@dangerous -flushall +client|id");
  EXPECT_EQ(Make({"+@read", "+@write", "-@all", "+get"}).root().DescribeCommands(Catalog()),
            "-@all +get");
  EXPECT_EQ(Make({"+@all", "-set", "+@string"}).root().DescribeCommands(Catalog()),
            "+@all -set +@string");
  EXPECT_EQ(Make({"+@all", "-@admin"}).root().DescribeCommands(Catalog()), "+@all -@admin");
  EXPECT_EQ(Make({"-@all", "+@dangerous"}).root().DescribeCommands(Catalog()), "-@all +@dangerous");
  EXPECT_EQ(Make({"+@all", "-@dangerous", "+config|get"}).root().DescribeCommands(Catalog()),
            "+@all -@dangerous +config|get");
  EXPECT_EQ(Make({"-@all", "+config"}).root().DescribeCommands(Catalog()), "-@all +config");
  EXPECT_EQ(Make({"+config", "-config|set"}).root().DescribeCommands(Catalog()),
            "-@all +config -config|set");
  EXPECT_EQ(Make({"+config|get", "+config|set", "-config"}).root().DescribeCommands(Catalog()),
            "-@all -config");
  EXPECT_EQ(Make({"-@all", "+get", "+@string", "-get"}).root().DescribeCommands(Catalog()),
            "-@all +@string -get");
  EXPECT_EQ(Make({"resetkeys", "%RW~foo", "%R~bar", "%W~bar"}).root().DescribeKeys(), "~foo ~bar");
  EXPECT_EQ(Make({"on", "nopass", "~*", "&*", "+@all"}).Describe(Catalog()),
            "on nopass ~* &* +@all");
  EXPECT_EQ(Make({"reset"}).Describe(Catalog()), "off sanitize-payload resetchannels -@all");
  EXPECT_EQ(Make({"allkeys", "(+get ~x)", "(+set ~y)"}).Describe(Catalog()),
            "off ~* resetchannels -@all (~x resetchannels -@all +get) (~y resetchannels -@all "
            "+set)");
}

// Whatever the rules, applying the description to a new user gives the same permissions.
TEST(AclUserTest, DescriptionRebuildsTheSamePermissions) {
  const std::vector<std::vector<std::string>> kCases = {
      {"+@read", "-@string", "+get"},
      {"+@all", "-@dangerous", "+flushall", "-get"},
      {"+@write", "-@list", "+client|kill", "+select|3"},
      {"+@hash", "+@set", "-@fast", "+config", "-config|rewrite"},
      {"+@all", "-@keyspace", "-@read", "+ttl"},
      {"-@all", "+@bitmap", "+@connection", "-client|list"},
  };
  for (const auto& rules : kCases) {
    AclUser original = Make(rules);
    std::string description = original.root().DescribeCommands(Catalog());
    AclUser rebuilt;
    size_t start = 0;
    while (start < description.size()) {
      size_t space = description.find(' ', start);
      std::string rule = description.substr(start, space - start);
      ASSERT_TRUE(rebuilt.Apply(Catalog(), rule).ok()) << rule;
      start = space == std::string::npos ? description.size() : space + 1;
    }
    for (size_t id = 0; id < Catalog().entries().size(); id++) {
      std::string arg = "3";
      EXPECT_EQ(original.root().AllowsCommand(static_cast<int>(id), &arg),
                rebuilt.root().AllowsCommand(static_cast<int>(id), &arg))
          << Catalog().entries()[id].name << " after '" << description << "'";
    }
    EXPECT_EQ(rebuilt.root().DescribeCommands(Catalog()), description);
  }
}

TEST(AclUserTest, SelectorsAreAlternatives) {
  AclUser user = Make({"on", "+get", "~a*", "(+set ~b*)", "clearselectors", "(+incr ~c*)"});
  ASSERT_EQ(user.selectors.size(), 2u);
  EXPECT_FALSE(user.selectors[1].AllowsCommand(Catalog().Find("set"), nullptr));
  EXPECT_TRUE(user.selectors[1].AllowsCommand(Catalog().Find("incr"), nullptr));
  EXPECT_TRUE(user.selectors[1].AllowsKey("c1", kAclKeyReadWrite));
  EXPECT_FALSE(user.selectors[1].AllowsKey("a1", kAclKeyReadWrite));
  EXPECT_EQ(ErrorOf({"(+get) ", "(bad)"}), "Syntax error");
}

TEST(AclUserTest, MergeSelectorArguments) {
  std::vector<std::string> out;
  size_t bad = 99;
  ASSERT_TRUE(MergeSelectorArguments({"on", "(+get", "~x)", "(+set ~y)", ">p"}, &out, &bad));
  EXPECT_EQ(out, (std::vector<std::string>{"on", "(+get ~x)", "(+set ~y)", ">p"}));
  EXPECT_FALSE(MergeSelectorArguments({"on", "(+get", "~x"}, &out, &bad));
  EXPECT_EQ(bad, 1u);
}

TEST(AclUserTest, NamesMayNotHoldSpaces) {
  EXPECT_TRUE(AclNameIsValid("alice"));
  EXPECT_FALSE(AclNameIsValid("a b"));
  EXPECT_FALSE(AclNameIsValid(std::string("a\0b", 3)));
  EXPECT_FALSE(AclNameIsValid("a\tb"));
  EXPECT_EQ(ErrorOf({"~a b"}), "Syntax error");
}

}  // namespace
}  // namespace basalt
