// Per-family RocksDB options that the engine derives from one config key: the memtable bloom
// filter exists only on families read by key and not indexed (Basalt's memtable indexes those
// families' keys instead), at open and after a live CONFIG SET.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

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
