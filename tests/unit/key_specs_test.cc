// Key specifications (commands/key_specs.h): every row names a command Basalt serves, every
// command that takes keys has specifications, and where the specifications locate keys they
// locate the same ones as the command table that the dispatcher uses.
#include "commands/key_specs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "commands/command_table.h"

namespace basalt {
namespace {

TEST(KeySpecs, EveryRowNamesACommandOrSubcommand) {
  const CommandTable& table = CommandTable::Get();
  for (const KeySpecRow& row : kKeySpecRows) {
    std::string name = row.name;
    size_t bar = name.find('|');
    const CommandSpec* spec = table.FindOriginal(name.substr(0, bar));
    ASSERT_NE(spec, nullptr) << name;
    if (bar != std::string::npos) {
      EXPECT_TRUE(table.SubcommandArity(*spec, name.substr(bar + 1)).has_value()) << name;
    }
    EXPECT_FALSE(KeySpecsOf(name).empty()) << name;
  }
}

TEST(KeySpecs, EveryRedisCommandThatTakesKeysHasThem) {
  // Basalt's own commands, which Redis has no specifications for.
  const std::set<std::string> basalt_only = {"compact", "import", "backup"};
  for (const CommandSpec* spec : CommandTable::Get().all()) {
    if (CommandTable::Get().HasSubcommands(*spec)) continue;
    if (spec->first_key <= 0 && spec->key_finder == nullptr) continue;
    if (basalt_only.count(spec->name)) continue;
    EXPECT_FALSE(KeySpecsOf(spec->name).empty()) << spec->name;
  }
}

std::vector<size_t> Located(const std::vector<std::string>& argv) {
  std::vector<size_t> positions;
  for (const auto& [at, spec] : LocateKeys(KeySpecsOf(argv[0]), argv)) positions.push_back(at);
  return positions;
}

TEST(KeySpecs, LocateKeysAgreesWithTheCommandTable) {
  const std::vector<std::vector<std::string>> calls = {
      {"get", "k"},
      {"mset", "a", "1", "b", "2", "c", "3"},
      {"lmove", "s", "d", "left", "right"},
      {"zunionstore", "d", "2", "a", "b", "weights", "1", "2"},
      {"xread", "count", "5", "streams", "s1", "s2", "s3", "0", "0", "0"},
      {"blpop", "a", "b", "c", "0"},
      {"lmpop", "2", "a", "b", "left"},
      {"eval", "return 1", "2", "k1", "k2", "arg"},
      {"migrate", "h", "1", "k", "0", "5"},
  };
  for (const auto& argv : calls) {
    const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
    ASSERT_NE(spec, nullptr) << argv[0];
    std::vector<size_t> table = CommandTable::KeyIndexes(*spec, argv);
    std::vector<size_t> located = Located(argv);
    std::sort(table.begin(), table.end());
    std::sort(located.begin(), located.end());
    EXPECT_EQ(located, table) << argv[0];
  }
}

TEST(KeySpecs, ASpecificationThatDoesNotFitLocatesNothing) {
  // The destination's specification still locates it; the count's locates nothing.
  EXPECT_EQ(Located({"zunionstore", "d", "nine", "a"}), std::vector<size_t>{1});
  EXPECT_EQ(Located({"zunionstore", "d", "5", "a"}), std::vector<size_t>{1});
  EXPECT_EQ(Located({"xread", "count", "1"}), std::vector<size_t>{});
}

}  // namespace
}  // namespace basalt
