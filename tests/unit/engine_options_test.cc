// Per-family memtable options: the memtable bloom filter exists only on families read by key and
// not indexed (Basalt's memtable indexes those families' keys instead), at open and after a live
// CONFIG SET; each index is sized for its family's entries. SST files have bloom filters and
// data-block hash indexes only in the families read by key.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include "keyspace_fixture.h"
#include "storage/options.h"
#include "storage/skiplist_memtable.h"

namespace basalt {
namespace {

class EngineOptionsTest : public KeyspaceFixture {
 protected:
  double BloomRatio(ColumnFamily cf) {
    Engine* engine = ks_->engine();
    return engine->db()->GetOptions(engine->cf(cf)).memtable_prefix_bloom_size_ratio;
  }
};

constexpr ColumnFamily kReadByKey[] = {ColumnFamily::kMetadata, ColumnFamily::kSubkey,
                                       ColumnFamily::kExpire, ColumnFamily::kCounters,
                                       ColumnFamily::kLargeValue};
constexpr ColumnFamily kScanned[] = {ColumnFamily::kZsetScore, ColumnFamily::kPubsub,
                                     ColumnFamily::kPropagate};

TEST_F(EngineOptionsTest, IndexedMemtablesInsteadOfBloomWhereKeysAreRead) {
  for (ColumnFamily cf : kReadByKey) {
    EXPECT_TRUE(ServesPointReads(cf)) << ColumnFamilyName(cf);
    const SkipListMemTableFactory* memtables = ks_->engine()->memtables(cf);
    ASSERT_NE(memtables, nullptr) << ColumnFamilyName(cf);
    EXPECT_TRUE(memtables->indexed()) << ColumnFamilyName(cf);
    EXPECT_DOUBLE_EQ(BloomRatio(cf), 0) << ColumnFamilyName(cf);
  }
  for (ColumnFamily cf : kScanned) {
    EXPECT_FALSE(ServesPointReads(cf)) << ColumnFamilyName(cf);
    const SkipListMemTableFactory* memtables = ks_->engine()->memtables(cf);
    ASSERT_NE(memtables, nullptr) << ColumnFamilyName(cf);
    EXPECT_FALSE(memtables->indexed()) << ColumnFamilyName(cf);
    EXPECT_DOUBLE_EQ(BloomRatio(cf), 0) << ColumnFamilyName(cf);
  }
}

TEST_F(EngineOptionsTest, OnlyFamiliesReadByKeyBuildBloomFiltersAndBlockHashIndexes) {
  Engine* engine = ks_->engine();
  auto table_options = [&](ColumnFamily cf) {
    auto factory = engine->db()->GetOptions(engine->cf(cf)).table_factory;
    return factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  };
  for (ColumnFamily cf : kReadByKey) {
    EXPECT_NE(table_options(cf)->filter_policy, nullptr) << ColumnFamilyName(cf);
    EXPECT_EQ(table_options(cf)->data_block_index_type,
              rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash)
        << ColumnFamilyName(cf);
  }
  for (ColumnFamily cf : kScanned) {
    EXPECT_EQ(table_options(cf)->filter_policy, nullptr) << ColumnFamilyName(cf);
    EXPECT_EQ(table_options(cf)->data_block_index_type,
              rocksdb::BlockBasedTableOptions::kDataBlockBinarySearch)
        << ColumnFamilyName(cf);
  }
  // The files flushed say the same.
  rocksdb::WriteBatch batch;
  for (int i = 0; i < 1000; i++) {
    std::string key = "key" + std::to_string(i);
    ASSERT_TRUE(batch.Put(engine->cf(ColumnFamily::kSubkey), key, "v").ok());
    ASSERT_TRUE(batch.Put(engine->cf(ColumnFamily::kZsetScore), key, "").ok());
  }
  ASSERT_TRUE(engine->db()->Write(rocksdb::WriteOptions(), &batch).ok());
  for (ColumnFamily cf : {ColumnFamily::kSubkey, ColumnFamily::kZsetScore}) {
    ASSERT_TRUE(engine->db()->Flush(rocksdb::FlushOptions(), engine->cf(cf)).ok());
    rocksdb::TablePropertiesCollection files;
    ASSERT_TRUE(engine->db()->GetPropertiesOfAllTables(engine->cf(cf), &files).ok());
    ASSERT_FALSE(files.empty()) << ColumnFamilyName(cf);
    for (const auto& [name, props] : files) {
      if (cf == ColumnFamily::kSubkey) {
        EXPECT_GT(props->filter_size, 0u) << name;
      } else {
        EXPECT_EQ(props->filter_size, 0u) << name;
      }
    }
  }
}

// An index has a bucket per entry its family's full memtable holds: small keys and values in
// most families, values of 4 KiB or more in `large_value` (whose index is 16 times smaller than a
// small-entry index would be), a few keys in `counters` (the smallest index).
TEST_F(EngineOptionsTest, EachIndexIsSizedForWhatItsFamilysEntriesTake) {
  auto write_buffer = [&](ColumnFamily cf) {
    return ks_->engine()->db()->GetOptions(ks_->engine()->cf(cf)).write_buffer_size;
  };
  auto buckets = [&](ColumnFamily cf) { return ks_->engine()->memtables(cf)->index_buckets(); };
  for (ColumnFamily cf : {ColumnFamily::kMetadata, ColumnFamily::kSubkey, ColumnFamily::kExpire}) {
    EXPECT_GE(buckets(cf), write_buffer(cf) / 64) << ColumnFamilyName(cf);
    EXPECT_LT(buckets(cf), write_buffer(cf) / 32) << ColumnFamilyName(cf);
  }
  EXPECT_GE(buckets(ColumnFamily::kLargeValue), write_buffer(ColumnFamily::kLargeValue) / 1024);
  EXPECT_LT(buckets(ColumnFamily::kLargeValue), write_buffer(ColumnFamily::kLargeValue) / 512);
  EXPECT_EQ(buckets(ColumnFamily::kCounters), 1024u);
}

// A live write buffer size reaches the families that follow the setting, and their indexes
// follow it from the next memtable on (with the starting size's index, a memtable four times as
// large chained four nodes to a bucket); the queue-like families and `counters` keep theirs.
TEST_F(EngineOptionsTest, LiveWriteBufferSizeResizesTheIndexesOfTheFamiliesThatFollowIt) {
  auto write_buffer = [&](ColumnFamily cf) {
    return ks_->engine()->db()->GetOptions(ks_->engine()->cf(cf)).write_buffer_size;
  };
  auto buckets = [&](ColumnFamily cf) { return ks_->engine()->memtables(cf)->index_buckets(); };
  size_t expire_buffer = write_buffer(ColumnFamily::kExpire);
  size_t counters_buffer = write_buffer(ColumnFamily::kCounters);
  size_t expire_buckets = buckets(ColumnFamily::kExpire);
  size_t metadata_buckets = buckets(ColumnFamily::kMetadata);
  size_t large_value_buckets = buckets(ColumnFamily::kLargeValue);
  size_t size = write_buffer(ColumnFamily::kMetadata) * 4;
  ASSERT_TRUE(config_->SetLive("rocksdb.write-buffer-size", std::to_string(size)).ok());
  for (ColumnFamily cf : {ColumnFamily::kMetadata, ColumnFamily::kSubkey, ColumnFamily::kZsetScore,
                          ColumnFamily::kLargeValue}) {
    EXPECT_EQ(write_buffer(cf), size) << ColumnFamilyName(cf);
  }
  EXPECT_EQ(write_buffer(ColumnFamily::kExpire), expire_buffer);
  EXPECT_EQ(write_buffer(ColumnFamily::kCounters), counters_buffer);
  EXPECT_EQ(buckets(ColumnFamily::kMetadata), metadata_buckets * 4);
  EXPECT_EQ(buckets(ColumnFamily::kSubkey), metadata_buckets * 4);
  EXPECT_EQ(buckets(ColumnFamily::kLargeValue), large_value_buckets * 4);
  EXPECT_EQ(buckets(ColumnFamily::kExpire), expire_buckets);
  EXPECT_FALSE(ks_->engine()->memtables(ColumnFamily::kZsetScore)->indexed());
  EXPECT_EQ(buckets(ColumnFamily::kCounters), 1024u);
}

TEST_F(EngineOptionsTest, LiveBloomRatioLeavesIndexedMemtablesWithout) {
  ASSERT_TRUE(config_->SetLive("rocksdb.memtable-prefix-bloom-ratio", "0.2").ok());
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kMetadata), 0);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kSubkey), 0);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kZsetScore), 0);
}

class RocksDBMemtableOptionsTest : public EngineOptionsTest {
 protected:
  void SetUp() override {
    extra_config_ = {{"rocksdb.memtable", "rocksdb"}};
    EngineOptionsTest::SetUp();
  }
};

TEST_F(RocksDBMemtableOptionsTest, MemtableBloomOnlyWhereKeysAreRead) {
  for (ColumnFamily cf : kReadByKey) {
    EXPECT_DOUBLE_EQ(BloomRatio(cf), 0.1) << ColumnFamilyName(cf);
  }
  for (ColumnFamily cf : kScanned) {
    EXPECT_DOUBLE_EQ(BloomRatio(cf), 0) << ColumnFamilyName(cf);
  }
}

TEST_F(RocksDBMemtableOptionsTest, LiveBloomRatioLeavesScannedFamiliesWithout) {
  ASSERT_TRUE(config_->SetLive("rocksdb.memtable-prefix-bloom-ratio", "0.2").ok());
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kMetadata), 0.2);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kSubkey), 0.2);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kZsetScore), 0);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kPropagate), 0);
}

}  // namespace
}  // namespace basalt
