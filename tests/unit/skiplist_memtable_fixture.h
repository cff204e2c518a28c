// The fixture of the skip-list memtable's tests (skiplist_memtable_test.cc and
// skiplist_warming_test.cc): a real RocksDB whose memtable never flushes during a test unless
// asked, opened with SkipListMemTableFactory along one of its lookup paths, a std::map model of
// what it holds, and a check that every way of reading the memtable agrees with the model.
#pragma once

#include <gtest/gtest.h>
#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/statistics.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/skiplist_memtable.h"

namespace basalt {

using Model = std::map<std::string, std::string, std::less<>>;

// How the memtable under test compares and finds keys: through RocksDB's comparator, inline
// bytewise, or inline bytewise with the index by user key answering point lookups (a small one,
// so that its chains are long and mix many keys).
enum class Lookups { kRocksDBComparator, kBytewise, kIndexed };
inline constexpr size_t kTestIndexBuckets = 64;

class SkipListMemTableTest : public ::testing::TestWithParam<Lookups> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/basalt-skiplist-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    db_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  bool bytewise() const { return GetParam() != Lookups::kRocksDBComparator; }

  void Open(bool concurrent_writes = false) {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = 256 << 20;  // nothing reaches an SST file during a test
    options.allow_concurrent_memtable_write = concurrent_writes;
    factory_ = std::make_shared<SkipListMemTableFactory>(
        bytewise(), GetParam() == Lookups::kIndexed ? kTestIndexBuckets : 0);
    options.memtable_factory = factory_;
    options.statistics = rocksdb::CreateDBStatistics();
    statistics_ = options.statistics;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, &db).ok());
    db_.reset(db);
  }

  void Put(const std::string& key, const std::string& value) {
    ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), key, value).ok());
    model_[key] = value;
  }

  void Delete(const std::string& key) {
    ASSERT_TRUE(db_->Delete(rocksdb::WriteOptions(), key).ok());
    model_.erase(key);
  }

  // Everything the model holds, read every way the memtable is read.
  void ExpectMatchesModel(const Model& model, const rocksdb::Snapshot* snapshot = nullptr) {
    rocksdb::ReadOptions read;
    read.snapshot = snapshot;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read));
    auto expected = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++expected) {
      ASSERT_NE(expected, model.end()) << "extra key " << it->key().ToString();
      ASSERT_EQ(it->key().ToString(), expected->first);
      ASSERT_EQ(it->value().ToString(), expected->second);
    }
    ASSERT_TRUE(it->status().ok());
    ASSERT_EQ(expected, model.end());

    auto reverse = model.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++reverse) {
      ASSERT_NE(reverse, model.rend());
      ASSERT_EQ(it->key().ToString(), reverse->first);
    }
    ASSERT_EQ(reverse, model.rend());

    for (const auto& [key, value] : model) {
      std::string got;
      ASSERT_TRUE(db_->Get(read, key, &got).ok()) << key;
      ASSERT_EQ(got, value);
    }

    std::mt19937 rng(7);
    for (int i = 0; i < 200; i++) {
      std::string target = RandomKey(&rng);
      std::string probe_absent;
      if (!model.count(target)) {
        ASSERT_TRUE(db_->Get(read, target, &probe_absent).IsNotFound()) << target;
      }
      it->Seek(target);
      auto ge = model.lower_bound(target);
      ASSERT_EQ(it->Valid(), ge != model.end()) << target;
      if (it->Valid()) {
        ASSERT_EQ(it->key().ToString(), ge->first);
      }
      it->SeekForPrev(target);
      auto le = model.upper_bound(target);
      ASSERT_EQ(it->Valid(), le != model.begin()) << target;
      if (it->Valid()) {
        ASSERT_EQ(it->key().ToString(), std::prev(le)->first);
      }
    }
  }

  // Runs `writers` threads that write batches until enough of their writes joined another
  // writer's group (with concurrent memtable writes on, each such write went through
  // InsertConcurrently), within a bound; fill(writer, batch_number, rng, batch) makes each batch.
  // Returns how many batches each wrote.
  template <typename Fill>
  std::vector<int> WriteInGroups(int writers, const Fill& fill) {
    constexpr int kMinBatches = 300, kMaxBatches = 50000;
    constexpr uint64_t kGroupedWrites = 200;
    std::vector<int> batches(writers, 0);
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; w++) {
      threads.emplace_back([&, w] {
        std::mt19937 rng(w);
        while (batches[w] < kMaxBatches &&
               (batches[w] < kMinBatches ||
                statistics_->getTickerCount(rocksdb::WRITE_DONE_BY_OTHER) < kGroupedWrites)) {
          rocksdb::WriteBatch batch;
          fill(w, batches[w], rng, batch);
          ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
          batches[w]++;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_GE(statistics_->getTickerCount(rocksdb::WRITE_DONE_BY_OTHER), kGroupedWrites);
    return batches;
  }

  static std::string RandomKey(std::mt19937* rng) {
    // Short keys sharing prefixes, so that user keys often compare equal up to their length.
    static const char kAlphabet[] = "abc";
    std::string key = "k";
    int length = static_cast<int>((*rng)() % 5);
    for (int i = 0; i < length; i++) key.push_back(kAlphabet[(*rng)() % 3]);
    return key;
  }

  std::string dir_;
  std::shared_ptr<SkipListMemTableFactory> factory_;
  std::unique_ptr<rocksdb::DB> db_;
  std::shared_ptr<rocksdb::Statistics> statistics_;
  Model model_;
};

// Names the instances of a suite over every lookup path.
inline std::string LookupsName(const ::testing::TestParamInfo<Lookups>& info) {
  switch (info.param) {
    case Lookups::kRocksDBComparator:
      return "RocksDB";
    case Lookups::kBytewise:
      return "Bytewise";
    case Lookups::kIndexed:
      return "Indexed";
  }
  return "";
}

}  // namespace basalt
