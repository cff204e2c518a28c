// Summit (storage/skiplist_summit.h): the node a search starts from is the last that sorts before
// the key searched for, also when the keys' eight bytes after the shared prefix tie. Checked
// against a brute-force scan, with keys that share long prefixes (a collection's members), keys
// of two naming schemes side by side, keys of every length around the prefix, and the prefix
// itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "storage/skiplist_summit.h"

namespace basalt::skiplist {
namespace {

struct Level {
  std::vector<std::string> keys;  // sorted
  std::vector<const char*> nodes;
  std::vector<rocksdb::Slice> slices;
  explicit Level(std::vector<std::string> sorted) : keys(std::move(sorted)) {
    // The Summit never reads a node: each key's own bytes stand in for it.
    for (const std::string& key : keys) {
      nodes.push_back(key.data());
      slices.emplace_back(key);
    }
  }
};

// The index of the node LastBefore returned (-1: none).
int IndexOf(const Level& level, const char* node) {
  if (node == nullptr) return -1;
  auto it = std::find(level.nodes.begin(), level.nodes.end(), node);
  EXPECT_NE(it, level.nodes.end());
  return static_cast<int>(it - level.nodes.begin());
}

// The last key below `target` (-1: none).
int LastBelow(const Level& level, const std::string& target) {
  auto it = std::lower_bound(level.keys.begin(), level.keys.end(), target);
  return static_cast<int>(it - level.keys.begin()) - 1;
}

std::string Member(const std::string& prefix, int n, int width) {
  std::string digits = std::to_string(n);
  return prefix + std::string(width - std::min<int>(width, digits.size()), '0') + digits;
}

TEST(SkipListSummit, StartsFromTheLastNodeBeforeTheKey) {
  const std::string prefix("\x00\x05myset\x80\x00\x00\x00\x00\x00\x00\x01element:", 23);
  std::vector<std::string> keys;
  for (int n = 0; n < 1000000; n += 997) keys.push_back(Member(prefix, n, 6));
  Level level(keys);
  Summit summit(3, level.nodes, level.slices);
  EXPECT_EQ(summit.level(), 3);
  std::mt19937 rng(5);
  std::vector<std::string> targets = {prefix,
                                      prefix.substr(0, 10),
                                      prefix + "0",
                                      prefix + "999999",
                                      prefix + "\xff",
                                      std::string("\x00\x05myset\x81", 9),
                                      std::string("\x01", 1),
                                      std::string()};
  for (int i = 0; i < 3000; i++) targets.push_back(Member(prefix, rng() % 1000000, 6));
  for (int i = 0; i < 300; i++) targets.push_back(Member(prefix, rng() % 100000, 5));  // shorter
  for (const std::string& key : keys) targets.push_back(key);
  for (const std::string& target : targets) {
    // Every key's digits differ within the eight bytes after the prefix: no ties.
    EXPECT_EQ(IndexOf(level, summit.LastBefore(target)), LastBelow(level, target))
        << rocksdb::Slice(target).ToString(true);
  }
}

// Keys that agree on the eight bytes after their shared prefix and differ only later: the keys
// themselves tell the tied nodes apart.
TEST(SkipListSummit, TiesAfterThePrefixAreToldApartByTheirKeys) {
  std::vector<std::string> keys;
  for (int n = 0; n < 200; n++)
    keys.push_back("k:" + std::string(8, 'a' + n / 50) + Member("", n, 4));
  std::sort(keys.begin(), keys.end());
  Level level(keys);
  Summit summit(1, level.nodes, level.slices);
  std::mt19937 rng(9);
  for (int i = 0; i < 2000; i++) {
    std::string target = "k:" + std::string(8, 'a' + rng() % 5) + Member("", rng() % 220, 4);
    EXPECT_EQ(IndexOf(level, summit.LastBefore(target)), LastBelow(level, target)) << target;
  }
}

// Two naming schemes on one level share only their first byte (the metadata family's `counter:*`
// and `key:*`, or the members of two collections): every `key:*` word is "key:0000", and
// without the keys the answer for any `key:*` was the last `counter:*` node.
TEST(SkipListSummit, KeysOfTwoSchemesOnOneLevel) {
  const std::string counter = std::string(1, '\0') + "counter:";
  const std::string key = std::string(1, '\0') + "key:";
  std::vector<std::string> keys;
  for (int n = 0; n < 1000000; n += 1009) {
    keys.push_back(Member(counter, n, 12));
    keys.push_back(Member(key, n, 12));
  }
  std::sort(keys.begin(), keys.end());
  Level level(keys);
  Summit summit(4, level.nodes, level.slices);
  std::mt19937 rng(13);
  std::vector<std::string> targets = keys;
  for (int i = 0; i < 3000; i++) {
    targets.push_back(Member(i % 2 ? counter : key, rng() % 1000000, 12));
  }
  for (const std::string& target : targets) {
    EXPECT_EQ(IndexOf(level, summit.LastBefore(target)), LastBelow(level, target))
        << rocksdb::Slice(target).ToString(true);
  }
}

// Keys of every length around their shared prefix, down to the prefix alone.
TEST(SkipListSummit, KeysEndingInsideOrRightAfterThePrefix) {
  std::vector<std::string> keys = {"pre",         "pre\x00",      std::string("pre\x00\x00", 5),
                                   "pre\x01",     "prea",         "preab",
                                   "preabcdefgh", "preabcdefghi", "pre\xff"};
  keys[1] = std::string("pre\x00", 4);
  std::sort(keys.begin(), keys.end());
  Level level(keys);
  Summit summit(2, level.nodes, level.slices);
  std::vector<std::string> targets = keys;
  for (std::string t : {"", "p", "pr", "prd", "prf", "pre", "prea\x00", "preabcdefgg", "prez"}) {
    targets.push_back(t);
  }
  targets.push_back(std::string("pre\x00\x00\x00", 6));
  for (const std::string& target : targets) {
    EXPECT_EQ(IndexOf(level, summit.LastBefore(target)), LastBelow(level, target))
        << rocksdb::Slice(target).ToString(true);
  }
}

}  // namespace
}  // namespace basalt::skiplist
