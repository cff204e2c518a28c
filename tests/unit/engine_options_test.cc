// Per-family options: the memtable bloom filter exists only on families read by key, at open and
// after a live CONFIG SET; a live write buffer size reaches the families that follow the setting.
// SST files have bloom filters and data-block hash indexes only in the families read by key.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include "keyspace_fixture.h"
#include "storage/options.h"

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

// A live write buffer size reaches the families that follow the setting; the queue-like
// families and `counters` keep theirs.
TEST_F(EngineOptionsTest, LiveWriteBufferSizeReachesTheFamiliesThatFollowIt) {
  auto write_buffer = [&](ColumnFamily cf) {
    return ks_->engine()->db()->GetOptions(ks_->engine()->cf(cf)).write_buffer_size;
  };
  size_t expire_buffer = write_buffer(ColumnFamily::kExpire);
  size_t counters_buffer = write_buffer(ColumnFamily::kCounters);
  size_t size = write_buffer(ColumnFamily::kMetadata) * 4;
  ASSERT_TRUE(config_->SetLive("rocksdb.write-buffer-size", std::to_string(size)).ok());
  for (ColumnFamily cf : {ColumnFamily::kMetadata, ColumnFamily::kSubkey, ColumnFamily::kZsetScore,
                          ColumnFamily::kLargeValue}) {
    EXPECT_EQ(write_buffer(cf), size) << ColumnFamilyName(cf);
  }
  EXPECT_EQ(write_buffer(ColumnFamily::kExpire), expire_buffer);
  EXPECT_EQ(write_buffer(ColumnFamily::kCounters), counters_buffer);
}

TEST_F(EngineOptionsTest, MemtableBloomOnlyWhereKeysAreRead) {
  for (ColumnFamily cf : kReadByKey) {
    EXPECT_DOUBLE_EQ(BloomRatio(cf), 0.1) << ColumnFamilyName(cf);
  }
  for (ColumnFamily cf : kScanned) {
    EXPECT_DOUBLE_EQ(BloomRatio(cf), 0) << ColumnFamilyName(cf);
  }
}

TEST_F(EngineOptionsTest, LiveBloomRatioLeavesScannedFamiliesWithout) {
  ASSERT_TRUE(config_->SetLive("rocksdb.memtable-prefix-bloom-ratio", "0.2").ok());
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kMetadata), 0.2);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kSubkey), 0.2);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kZsetScore), 0);
  EXPECT_DOUBLE_EQ(BloomRatio(ColumnFamily::kPropagate), 0);
}

}  // namespace
}  // namespace basalt
