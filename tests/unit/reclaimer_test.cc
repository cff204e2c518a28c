// The reclaimer (storage/reclaimer.h) over a real RocksDB holding one file of 10,000 keys below
// level 0: which noted ranges get that file compacted (a range holding all of it or nine tenths
// of its bytes) and which do not (a fifth of it, seven tenths; keys it does not hold), and where
// a level 0 file goes.
#include "storage/reclaimer.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace basalt {
namespace {

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%05d", i);
  return buf;
}

class ReclaimerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/basalt-reclaimer-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    rocksdb::Options options;
    options.create_if_missing = true;
    options.disable_auto_compactions = true;  // only the reclaimer's and the test's compactions
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, &db).ok());
    db_.reset(db);
  }

  void TearDown() override {
    reclaimer_.Stop();
    db_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Writes keys [0, n) with 100-byte values and flushes them into one level 0 file.
  void WriteAndFlush(int n) {
    for (int i = 0; i < n; i++) {
      ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), Key(i), std::string(100, 'v')).ok());
    }
    ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  }

  // Moves everything to the last level.
  void CompactAll() {
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    ASSERT_TRUE(db_->CompactRange(options, nullptr, nullptr).ok());
  }

  // Notes [begin, end) and waits for the pass that takes it (it runs a kPassInterval later).
  void NoteAndWait(int begin, int end) { NoteAllAndWait({{begin, end}}); }

  // Notes each [begin, end) and waits for the pass that takes them all.
  void NoteAllAndWait(const std::vector<std::pair<int, int>>& ranges) {
    uint64_t passes = reclaimer_.passes();
    for (const auto& [begin, end] : ranges) reclaimer_.Note(Key(begin), Key(end));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (reclaimer_.passes() == passes && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_GT(reclaimer_.passes(), passes) << "no pass ran";
  }

  // The level of the database's only file; -1 when it has another number of files.
  int LevelOfOnlyFile() {
    rocksdb::ColumnFamilyMetaData meta;
    db_->GetColumnFamilyMetaData(&meta);
    if (meta.file_count != 1) return -1;
    for (const auto& level : meta.levels) {
      if (!level.files.empty()) return level.level;
    }
    return -1;
  }

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  Reclaimer reclaimer_;
};

TEST_F(ReclaimerTest, CompactsAFileWithNineTenthsOfItsBytesInTheRanges) {
  WriteAndFlush(10000);
  CompactAll();
  int level = LevelOfOnlyFile();
  ASSERT_GT(level, 0);
  reclaimer_.Start(db_.get(), db_->DefaultColumnFamily());
  NoteAndWait(0, 2000);  // a fifth of the file
  EXPECT_EQ(reclaimer_.files_compacted(), 0u);
  NoteAndWait(0, 7000);  // most of it, not enough
  EXPECT_EQ(reclaimer_.files_compacted(), 0u);
  NoteAndWait(20000, 30000);  // keys the file does not hold
  EXPECT_EQ(reclaimer_.files_compacted(), 0u);
  NoteAndWait(0, 9600);
  EXPECT_EQ(reclaimer_.files_compacted(), 1u);
  // Compacted in place: still one file (nothing filters these keys), in the same level.
  EXPECT_EQ(LevelOfOnlyFile(), level);
}

// Pops at a list's right end note [tail, end) at each of many tails: ranges that overlap, whose
// bytes count once. Counted once each, these seven tenths added up to more than the file.
TEST_F(ReclaimerTest, CountsTheBytesOfOverlappingRangesOnce) {
  WriteAndFlush(10000);
  CompactAll();
  reclaimer_.Start(db_.get(), db_->DefaultColumnFamily());
  NoteAllAndWait({{3000, 20000}, {4000, 20000}, {5000, 20000}, {6000, 20000}, {3500, 9000}});
  EXPECT_EQ(reclaimer_.files_compacted(), 0u);
  NoteAllAndWait({{500, 20000}, {2000, 6000}});  // together nine tenths and more
  EXPECT_EQ(reclaimer_.files_compacted(), 1u);
}

TEST_F(ReclaimerTest, CompactsAFileThatLiesInARange) {
  WriteAndFlush(1000);
  CompactAll();
  reclaimer_.Start(db_.get(), db_->DefaultColumnFamily());
  NoteAndWait(0, 5000);
  EXPECT_EQ(reclaimer_.files_compacted(), 1u);
}

TEST_F(ReclaimerTest, CompactsLevelZeroFilesIntoTheBaseLevel) {
  WriteAndFlush(1000);
  ASSERT_EQ(LevelOfOnlyFile(), 0);
  reclaimer_.Start(db_.get(), db_->DefaultColumnFamily());
  NoteAndWait(0, 5000);
  EXPECT_EQ(reclaimer_.files_compacted(), 1u);
  EXPECT_GT(LevelOfOnlyFile(), 0);
}

TEST_F(ReclaimerTest, NotesBeforeStartAndAfterStopAreDropped) {
  WriteAndFlush(1000);
  CompactAll();
  reclaimer_.Note(Key(0), Key(5000));
  reclaimer_.Start(db_.get(), db_->DefaultColumnFamily());
  std::this_thread::sleep_for(Reclaimer::kPassInterval * 2);
  EXPECT_EQ(reclaimer_.passes(), 0u);  // nothing was pending to pass over
  EXPECT_EQ(reclaimer_.files_compacted(), 0u);
  reclaimer_.Stop();
  reclaimer_.Note(Key(0), Key(5000));  // nothing runs to take it; Stop() twice is harmless
  reclaimer_.Stop();
  EXPECT_EQ(reclaimer_.files_compacted(), 0u);
}

}  // namespace
}  // namespace basalt
