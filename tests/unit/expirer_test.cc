// ActiveExpirer over a real RocksDB: due keys are deleted with both counts retired exactly once,
// also when a compaction filter already dropped the expired metadata or the database was flushed.
#include "types/expirer.h"

#include <gtest/gtest.h>

#include <string>

#include "common/clock.h"
#include "keyspace_fixture.h"

namespace basalt {
namespace {

class ExpirerTest : public KeyspaceFixture {};

TEST_F(ExpirerTest, ExpirerDeletesDueKeyAndDecrementsBothCounts) {
  Set(0, "short", "v", UnixMillis() + 50);
  Set(0, "long", "v", UnixMillis() + 3600 * 1000);
  Set(0, "plain", "v");
  EXPECT_EQ(ks_->KeyCount(0), 3);
  EXPECT_EQ(ks_->ExpireCount(0), 2);
  SleepMs(100);
  KeyState lazy = Get(0, "short");  // present in storage, logically expired
  EXPECT_TRUE(lazy.present);
  EXPECT_TRUE(lazy.expired);
  ActiveExpirer expirer(ks_.get(), config_.get());
  EXPECT_EQ(expirer.RunOnce(), 1);
  EXPECT_EQ(expirer.expired_total(), 1);
  EXPECT_EQ(ks_->KeyCount(0), 2);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  EXPECT_FALSE(Get(0, "short").present);
  EXPECT_EQ(ExpireIndexSize(), 1);
  EXPECT_EQ(expirer.RunOnce(), 0);  // nothing more is due
  EXPECT_EQ(ks_->KeyCount(0), 2);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(ks_->KeyCount(0), 2);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
}

TEST_F(ExpirerTest, CompactionDropsExpiredMetadataThenExpirerRetiresCountOnce) {
  Set(0, "gone", "v", UnixMillis() + 50);
  Set(0, "kept", "v");
  SleepMs(100);
  CompactMetadata();
  EXPECT_FALSE(RawMetadataPresent(0, "gone"));
  EXPECT_TRUE(RawMetadataPresent(0, "kept"));
  // Compaction doesn't touch the counts: the index entry still stands for the key.
  EXPECT_EQ(ks_->KeyCount(0), 2);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  ActiveExpirer expirer(ks_.get(), config_.get());
  expirer.RunOnce();
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_EQ(ExpireIndexSize(), 0);
  for (int i = 0; i < 12; i++) expirer.RunOnce();  // includes a full rescan round
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
}

// The same with the dropped entry still in the metadata cache: the expirer then sees the
// incarnation, deletes it, and retires its count once as well.
TEST_F(ExpirerTest, CompactionDropWhileCachedThenExpirerRetiresCountOnce) {
  Set(0, "gone", "v", UnixMillis() + 50);
  Set(0, "kept", "v");
  SleepMs(100);
  CompactMetadata(/*keep_cache=*/true);
  EXPECT_FALSE(RawMetadataPresent(0, "gone"));
  EXPECT_TRUE(Get(0, "gone").present);  // the cached, expired incarnation
  ActiveExpirer expirer(ks_.get(), config_.get());
  EXPECT_EQ(expirer.RunOnce(), 1);
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_FALSE(Get(0, "gone").present);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
}

TEST_F(ExpirerTest, RewriteAfterCompactionDropKeepsCountsExact) {
  Set(0, "k", "old", UnixMillis() + 50);
  SleepMs(100);
  CompactMetadata();
  ASSERT_FALSE(RawMetadataPresent(0, "k"));
  Set(0, "k", "new");              // Lookup sees nothing: a new incarnation without TTL
  EXPECT_EQ(ks_->KeyCount(0), 2);  // the dropped incarnation is still counted until expiry runs
  ActiveExpirer expirer(ks_.get(), config_.get());
  EXPECT_EQ(expirer.RunOnce(), 0);  // the new incarnation isn't the one that expired
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_EQ(Get(0, "k").meta.value, "new");
}

// After compaction dropped an expired incarnation, re-creating the key with the same expire_ms
// (a Context whose frozen now_ms predates it) must not let one index entry stand for two
// counted incarnations: the writer retires the orphaned entry's count.
TEST_F(ExpirerTest, RecreateWithSameExpiryAfterCompactionDropKeepsCountsExact) {
  const int64_t e = UnixMillis() + 50;
  Set(0, "k", "old", e);
  SleepMs(100);
  CompactMetadata();
  ASSERT_FALSE(RawMetadataPresent(0, "k"));
  Set(0, "k", "new", e);
  ActiveExpirer expirer(ks_.get(), config_.get());
  expirer.RunOnce();
  EXPECT_FALSE(RawMetadataPresent(0, "k"));
  EXPECT_EQ(ks_->KeyCount(0), 0);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
}

TEST_F(ExpirerTest, ExpirerIgnoresIndexEntriesOfFlushedDatabase) {
  Set(0, "ttl", "v", UnixMillis() + 50);
  ASSERT_TRUE(ks_->FlushDatabase(0).ok());
  Set(0, "fresh", "v");
  SleepMs(100);
  ActiveExpirer expirer(ks_.get(), config_.get());
  EXPECT_EQ(expirer.RunOnce(), 0);
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_EQ(ExpireIndexSize(), 0);
}

}  // namespace
}  // namespace basalt
