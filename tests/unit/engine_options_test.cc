// Per-family RocksDB options that the engine derives from one config key: the memtable bloom
// filter exists only on families read by key, at open and after a live CONFIG SET.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

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

TEST_F(EngineOptionsTest, MemtableBloomOnlyWhereKeysAreRead) {
  for (ColumnFamily cf : {ColumnFamily::kMetadata, ColumnFamily::kSubkey, ColumnFamily::kExpire,
                          ColumnFamily::kCounters, ColumnFamily::kLargeValue}) {
    EXPECT_TRUE(ServesPointReads(cf)) << ColumnFamilyName(cf);
    EXPECT_DOUBLE_EQ(BloomRatio(cf), 0.1) << ColumnFamilyName(cf);
  }
  for (ColumnFamily cf :
       {ColumnFamily::kZsetScore, ColumnFamily::kPubsub, ColumnFamily::kPropagate}) {
    EXPECT_FALSE(ServesPointReads(cf)) << ColumnFamilyName(cf);
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
