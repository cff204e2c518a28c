// Batch: read-your-writes over a real RocksDB, and the coalescing of `metadata` writes (only the
// last write of each metadata key reaches the WAL, yet every read, iterator and range operation
// sees the batch's writes in the order they were made).
#include "storage/batch.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "keyspace_fixture.h"

namespace basalt {
namespace {

// Counts the entries per column family that a committed batch wrote to the WAL.
class WalCounter : public rocksdb::WriteBatch::Handler {
 public:
  explicit WalCounter(uint32_t metadata_cf) : metadata_cf_(metadata_cf) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice&) override {
    if (cf == metadata_cf_)
      metadata_writes.push_back(std::string("put ").append(key.data(), key.size()));
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    if (cf == metadata_cf_)
      metadata_writes.push_back(std::string("delete ").append(key.data(), key.size()));
    return rocksdb::Status::OK();
  }
  std::vector<std::string> metadata_writes;

 private:
  uint32_t metadata_cf_;
};

class BatchTest : public KeyspaceFixture {
 protected:
  Engine* engine() { return ks_->engine(); }

  std::string Read(ColumnFamily cf, const std::string& key) {
    std::string value;
    rocksdb::Status s = engine()->Get(cf, key, &value);
    if (s.IsNotFound()) return "(none)";
    return s.ok() ? value : s.ToString();
  }

  // The metadata writes of everything committed since `start`.
  std::vector<std::string> MetadataWritesSince(rocksdb::SequenceNumber start) {
    std::unique_ptr<rocksdb::TransactionLogIterator> it;
    EXPECT_TRUE(engine()->db()->GetUpdatesSince(start, &it).ok());
    WalCounter counter(engine()->cf(ColumnFamily::kMetadata)->GetID());
    for (; it->Valid(); it->Next()) {
      EXPECT_TRUE(it->GetBatch().writeBatchPtr->Iterate(&counter).ok());
    }
    return counter.metadata_writes;
  }
};

TEST_F(BatchTest, RepeatedMetadataWritesReachTheWalOnce) {
  rocksdb::SequenceNumber start = engine()->db()->GetLatestSequenceNumber() + 1;
  Batch batch(engine());
  for (int i = 0; i < 16; i++)
    batch.Put(ColumnFamily::kMetadata, "hot", std::string("v").append(std::to_string(i)));
  batch.Put(ColumnFamily::kMetadata, "gone", "x");
  batch.Delete(ColumnFamily::kMetadata, "gone");
  batch.Put(ColumnFamily::kSubkey, "member", "m");
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kMetadata, "hot", &value).ok());
  EXPECT_EQ(value, "v15");
  EXPECT_TRUE(batch.Get(ColumnFamily::kMetadata, "gone", &value).IsNotFound());
  EXPECT_EQ(Read(ColumnFamily::kMetadata, "hot"), "(none)");  // nothing visible yet

  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(Read(ColumnFamily::kMetadata, "hot"), "v15");
  EXPECT_EQ(Read(ColumnFamily::kMetadata, "gone"), "(none)");
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "member"), "m");
  std::vector<std::string> writes = MetadataWritesSince(start);
  std::sort(writes.begin(), writes.end());
  EXPECT_EQ(writes, (std::vector<std::string>{"delete gone", "put hot"}));
}

TEST_F(BatchTest, PendingMetadataIsSeenByIteratorsAndRanges) {
  Batch seed(engine());
  seed.Put(ColumnFamily::kMetadata, "a", "old");
  ASSERT_TRUE(seed.Commit().ok());

  Batch batch(engine());
  batch.Put(ColumnFamily::kMetadata, "a", "new");
  batch.Put(ColumnFamily::kMetadata, "b", "1");
  rocksdb::ReadOptions options;
  auto it = batch.NewIterator(ColumnFamily::kMetadata, &options);
  std::vector<std::string> seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    seen.push_back(it->key().ToString() + "=" + it->value().ToString());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a=new", "b=1"}));
  it.reset();

  // A write before a range delete is covered by it; one after it survives.
  batch.Put(ColumnFamily::kMetadata, "c", "2");
  batch.DeleteRange(ColumnFamily::kMetadata, "a", "z");
  batch.Put(ColumnFamily::kMetadata, "d", "3");
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read(ColumnFamily::kMetadata, "a"), "(none)");
  EXPECT_EQ(Read(ColumnFamily::kMetadata, "c"), "(none)");
  EXPECT_EQ(Read(ColumnFamily::kMetadata, "d"), "3");
}

TEST_F(BatchTest, ClearDropsPendingMetadata) {
  Batch batch(engine());
  batch.Put(ColumnFamily::kMetadata, "k", "v");
  EXPECT_FALSE(batch.empty());
  batch.Clear();
  EXPECT_TRUE(batch.empty());
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read(ColumnFamily::kMetadata, "k"), "(none)");
}

}  // namespace
}  // namespace basalt
