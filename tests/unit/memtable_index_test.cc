// The memtable's index by user key (UserKeyIndex, storage/skiplist_list.h) on its own: a key
// written over and over keeps one node in its chain, a key's nodes stay newest first in whatever
// order concurrent writers chain them, and the buckets count in the memtable's size. Lookups
// through it under a real RocksDB are checked with the rest of the memtable's reads in
// skiplist_memtable_test.cc (its Indexed instances).
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "storage/skiplist_list.h"
#include "storage/skiplist_memtable.h"

namespace basalt {
namespace {

// A key written over and over (a counter) keeps one node in its bucket's chain, not one per
// write: a lookup of another key of the bucket steps over it once. All keys share one bucket
// here.
TEST(SkipListMemTableIndex, AKeyWrittenOverAndOverKeepsOneNodeInItsChain) {
  char tmpl[] = "/tmp/basalt-skiplist-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  rocksdb::Options options;
  options.create_if_missing = true;
  options.memtable_factory = std::make_shared<SkipListMemTableFactory>(true, 1);
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, tmpl, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  ASSERT_TRUE(db->Put({}, "cold", "c").ok());
  const rocksdb::Snapshot* early = nullptr;
  for (int i = 0; i < 10000; i++) {
    ASSERT_TRUE(db->Put({}, "hot", std::to_string(i)).ok());
    if (i == 100) early = db->GetSnapshot();
  }
  std::string value;
  uint64_t before = SkipListMemTableFactory::IndexStepsOnThisThread();
  ASSERT_TRUE(db->Get({}, "cold", &value).ok());
  EXPECT_EQ(value, "c");
  EXPECT_TRUE(db->Get({}, "absent", &value).IsNotFound());
  ASSERT_TRUE(db->Get({}, "hot", &value).ok());
  EXPECT_EQ(value, "9999");
  // Two nodes in the chain: "hot" stepped over twice, "cold" reached last.
  EXPECT_LE(SkipListMemTableFactory::IndexStepsOnThisThread() - before, 4u);
  // Older writes are still found, after the key's newest node in the list.
  rocksdb::ReadOptions at_early;
  at_early.snapshot = early;
  ASSERT_TRUE(db->Get(at_early, "hot", &value).ok());
  EXPECT_EQ(value, "100");
  db->ReleaseSnapshot(early);
  db.reset();
  std::filesystem::remove_all(tmpl);
}

// Concurrent writers chain their nodes in whatever order they finish: the index must still
// keep each key's nodes newest first. Nodes laid out by hand (links, then the entry), linked in
// list order at level 0, chained oldest-last in every order of three writers' inserts.
TEST(SkipListMemTableIndex, ConcurrentAddsKeepAKeysNodesNewestFirstInAnyOrder) {
  using skiplist::Link;
  std::vector<std::unique_ptr<uint64_t[]>> memory;
  auto make_node = [&](const std::string& user_key, uint64_t sequence) {
    std::string entry(1, static_cast<char>(user_key.size() + 8));
    entry += user_key;
    uint64_t trailer = sequence << 8 | 0x1;  // a Put
    for (int i = 0; i < 8; i++) entry.push_back(static_cast<char>(trailer >> (8 * i)));
    entry += std::string("\x01v", 2);
    constexpr int kHeight = 1;  // one list link, then the index's chain link
    memory.emplace_back(new uint64_t[kHeight + 1 + (entry.size() + 7) / 8]());
    char* links = reinterpret_cast<char*>(memory.back().get());
    for (int i = 0; i <= kHeight; i++) new (links + i * sizeof(Link)) Link(nullptr);
    char* node = links + (kHeight + 1) * sizeof(Link);
    std::memcpy(node, entry.data(), entry.size());
    return static_cast<const char*>(node);
  };
  auto lookup = [](const std::string& user_key, uint64_t sequence) {
    std::string key = user_key;
    uint64_t trailer = sequence << 8 | 0xff;
    for (int i = 0; i < 8; i++) key.push_back(static_cast<char>(trailer >> (8 * i)));
    return key;
  };
  std::vector<int> order = {0, 1, 2};
  do {
    skiplist::UserKeyIndex index(1);
    // Sequences 10, 11, 12 of "k" (list order: newest first), and "other" in the same bucket.
    const char* nodes[3] = {make_node("k", 12), make_node("k", 11), make_node("k", 10)};
    skiplist::LinkOf(nodes[0], 0)->store(nodes[1]);
    skiplist::LinkOf(nodes[1], 0)->store(nodes[2]);
    index.AddConcurrently(make_node("other", 5), 1);
    for (int i : order) index.AddConcurrently(nodes[i], 1);
    for (int i = 0; i < 3; i++) {
      std::string key = lookup("k", 12 - i);
      EXPECT_EQ(index.Find(key), nodes[i]) << "order " << order[0] << order[1] << order[2];
    }
    EXPECT_EQ(index.Find(lookup("k", 9)), nullptr);
    EXPECT_EQ(index.Find(lookup("absent", 20)), nullptr);
  } while (std::next_permutation(order.begin(), order.end()));
}

// The index's buckets live outside the memtable's arena: the memtable's size counts them, so
// that RocksDB flushes an indexed memtable when its nodes and its index together reach the
// write buffer size.
TEST(SkipListMemTableIndex, BucketsAreCountedInTheMemtableSize) {
  auto active_size = [](size_t index_buckets) {
    char tmpl[] = "/tmp/basalt-skiplist-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    rocksdb::Options options;
    options.create_if_missing = true;
    options.memtable_factory = std::make_shared<SkipListMemTableFactory>(true, index_buckets);
    rocksdb::DB* raw = nullptr;
    EXPECT_TRUE(rocksdb::DB::Open(options, tmpl, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    EXPECT_TRUE(db->Put({}, "key", "value").ok());
    uint64_t size = 0;
    EXPECT_TRUE(db->GetIntProperty("rocksdb.cur-size-active-mem-table", &size));
    db.reset();
    std::filesystem::remove_all(tmpl);
    return size;
  };
  constexpr size_t kBuckets = 1 << 20;
  uint64_t plain = active_size(0), indexed = active_size(kBuckets);
  EXPECT_LT(plain, kBuckets * 8);
  EXPECT_GE(indexed, plain + kBuckets * 8);
}

}  // namespace
}  // namespace basalt
