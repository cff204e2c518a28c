// SstIngestSink: a bulk load's puts, spread over many runs written by background threads,
// become the database's after Ingest() with the last value of each key, merges applied after
// them; a refused write fails the load, and an abandoned load leaves neither data nor files.
#include "storage/sst_ingest.h"

#include <gtest/gtest.h>
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <map>
#include <string>

#include "common/coding.h"
#include "keyspace_fixture.h"

namespace basalt {
namespace {

class SstIngestTest : public KeyspaceFixture {
 protected:
  Engine* engine() { return ks_->engine(); }
  std::string staging() { return dir_ + "/staging"; }
  std::string Read(ColumnFamily cf, const std::string& key) {
    std::string value;
    rocksdb::Status s = engine()->Get(cf, key, &value);
    if (s.IsNotFound()) return "(none)";
    return s.ok() ? value : s.ToString();
  }
  bool StagingEmpty() {
    return !std::filesystem::exists(staging()) || std::filesystem::is_empty(staging());
  }
};

std::string Key(int i) {
  // Keys longer than the sort's 16-byte prefix, and shorter ones, in one family.
  std::string key(i % 3 == 0 ? "k" : "a-long-shared-prefix:");
  key.append(std::to_string(i));
  return key;
}

TEST_F(SstIngestTest, RunsWrittenInTheBackgroundIngestWithTheLastValueOfEachKey) {
  // A run every 4 KiB: the 3,000 keys below make dozens of overlapping runs.
  SstIngestSink sink(engine(), staging(), 4096);
  std::map<std::string, std::string> expected;
  std::string counter_delta;
  PutFixed64(&counter_delta, 1);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 1000; i++) {
      // Descending in one round: the order of the writes is not the order of the keys.
      int n = round == 1 ? 999 - i : i;
      rocksdb::WriteBatch batch;
      std::string value = Key(n);
      value.append("=").append(std::to_string(round));
      batch.Put(engine()->cf(ColumnFamily::kSubkey), Key(n), value);
      expected[Key(n)] = value;
      if (round == 0 && n % 10 == 0) {
        // Put twice in one batch, and a key prefixed by another: the later put wins.
        batch.Put(engine()->cf(ColumnFamily::kSubkey), Key(n), value + "-again");
        batch.Put(engine()->cf(ColumnFamily::kSubkey), Key(n) + std::string(1, '\0'), "longer");
        expected[Key(n)] = value + "-again";
        expected[Key(n) + std::string(1, '\0')] = "longer";
      }
      batch.Merge(engine()->cf(ColumnFamily::kCounters), "c", counter_delta);
      ASSERT_TRUE(sink.Take(&batch).ok());
    }
    if (round == 1) {
      // Puts made straight to the sink join the buffered ones.
      sink.Put(ColumnFamily::kZsetScore, "direct", "put");
    }
  }
  // Nothing is visible before the ingestion.
  EXPECT_EQ(Read(ColumnFamily::kSubkey, Key(1)), "(none)");
  ASSERT_TRUE(sink.Ingest().ok());
  for (const auto& [key, value] : expected)
    ASSERT_EQ(Read(ColumnFamily::kSubkey, key), value) << key;
  EXPECT_EQ(Read(ColumnFamily::kZsetScore, "direct"), "put");
  std::string count = Read(ColumnFamily::kCounters, "c");
  ASSERT_EQ(count.size(), 8u);
  EXPECT_EQ(DecodeFixed64(count.data()), 3000u);
  EXPECT_TRUE(StagingEmpty());
  // Only these keys are there.
  rocksdb::ReadOptions options;
  std::unique_ptr<rocksdb::Iterator> it(
      engine()->db()->NewIterator(options, engine()->cf(ColumnFamily::kSubkey)));
  size_t seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen++;
  EXPECT_EQ(seen, expected.size());
}

TEST_F(SstIngestTest, ADeleteIsRefused) {
  SstIngestSink sink(engine(), staging(), 4096);
  rocksdb::WriteBatch batch;
  batch.Put(engine()->cf(ColumnFamily::kSubkey), "a", "1");
  batch.Delete(engine()->cf(ColumnFamily::kSubkey), "a");
  EXPECT_FALSE(sink.Take(&batch).ok());
}

TEST_F(SstIngestTest, AnAbandonedLoadLeavesNothing) {
  {
    SstIngestSink sink(engine(), staging(), 1024);
    for (int i = 0; i < 2000; i++) {
      rocksdb::WriteBatch batch;
      batch.Put(engine()->cf(ColumnFamily::kSubkey), Key(i), std::string(100, 'x'));
      ASSERT_TRUE(sink.Take(&batch).ok());
    }
    // Dropped while a run may still be being written.
  }
  EXPECT_TRUE(StagingEmpty());
  EXPECT_EQ(Read(ColumnFamily::kSubkey, Key(0)), "(none)");
}

}  // namespace
}  // namespace basalt
