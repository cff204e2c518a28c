// Keyspace and Context over a real RocksDB: exact key/expire counts, persistence across reopen,
// FLUSHDB/SWAPDB and WATCH invalidation.
#include "types/keyspace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "keyspace_fixture.h"

namespace basalt {
namespace {

class KeyspaceTest : public KeyspaceFixture {};

TEST_F(KeyspaceTest, OpensEmpty) {
  EXPECT_EQ(ks_->databases(), 16);
  for (int db = 0; db < 16; db++) {
    EXPECT_EQ(ks_->KeyCount(db), 0);
    EXPECT_EQ(ks_->ExpireCount(db), 0);
    EXPECT_EQ(ks_->Physical(db), db);
  }
  EXPECT_FALSE(Get(0, "missing").present);
}

TEST_F(KeyspaceTest, WriteLookupDelete) {
  Set(0, "k", "v1");
  KeyState s = Get(0, "k");
  ASSERT_TRUE(s.live());
  EXPECT_EQ(s.meta.type, RedisType::kString);
  EXPECT_EQ(s.meta.value, "v1");
  Set(0, "k", "v2");
  EXPECT_EQ(Get(0, "k").meta.value, "v2");
  Del(0, "k");
  EXPECT_FALSE(Get(0, "k").present);
}

TEST_F(KeyspaceTest, ContextReadsItsOwnWritesAndPublishesOnCommit) {
  Context writer(ks_.get());
  auto old = writer.Lookup(0, "k");
  ASSERT_TRUE(old.ok());
  Metadata m;
  m.type = RedisType::kString;
  m.value = "pending";
  writer.Write(0, "k", m, *old);
  auto mine = writer.Lookup(0, "k");
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE(mine->live());
  EXPECT_EQ(mine->meta.value, "pending");
  EXPECT_FALSE(Get(0, "k").present);  // other contexts don't see it yet
  EXPECT_EQ(ks_->KeyCount(0), 0);
  ASSERT_TRUE(writer.Commit().ok());
  EXPECT_EQ(Get(0, "k").meta.value, "pending");
  EXPECT_EQ(ks_->KeyCount(0), 1);
}

TEST_F(KeyspaceTest, LookupOfTypeChecksType) {
  Set(0, "s", "v");
  Context ctx(ks_.get());
  EXPECT_TRUE(ctx.LookupOfType(0, "s", RedisType::kString).ok());
  auto wrong = ctx.LookupOfType(0, "s", RedisType::kHash);
  EXPECT_EQ(wrong.status().message(), kWrongTypeError);
  EXPECT_TRUE(ctx.LookupOfType(0, "nope", RedisType::kString).status().IsNotFound());
}

TEST_F(KeyspaceTest, PendingKeyDeltaCountsUncommittedWrites) {
  Set(0, "existing", "v");
  Context ctx(ks_.get());
  Metadata m;
  m.type = RedisType::kString;
  for (const char* key : {"existing", "new1", "new2"}) {
    auto old = ctx.Lookup(0, key);
    ASSERT_TRUE(old.ok());
    ctx.Write(0, key, m, *old);
  }
  EXPECT_EQ(ctx.PendingKeyDelta(0), 2);  // the overwrite retires one and registers one
  EXPECT_EQ(ctx.PendingKeyDelta(1), 0);
  auto old = ctx.Lookup(0, "existing");
  ASSERT_TRUE(old.ok());
  ctx.Delete(0, "existing", *old);
  EXPECT_EQ(ctx.PendingKeyDelta(0), 1);
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(ctx.PendingKeyDelta(0), 0);
  EXPECT_EQ(ks_->KeyCount(0), 2);
}

TEST_F(KeyspaceTest, CountsExactAfterWritesOverwritesDeletes) {
  Set(0, "a", "1");
  Set(0, "b", "2");
  Set(0, "c", "3");
  EXPECT_EQ(ks_->KeyCount(0), 3);
  Set(0, "a", "overwritten");
  EXPECT_EQ(ks_->KeyCount(0), 3);
  Del(0, "b");
  EXPECT_EQ(ks_->KeyCount(0), 2);
  Del(0, "b");  // already gone: no-op
  Del(0, "never-existed");
  EXPECT_EQ(ks_->KeyCount(0), 2);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_EQ(ks_->KeyCount(1), 0);
}

TEST_F(KeyspaceTest, CountsExactWithTtlAddRemove) {
  const int64_t later = UnixMillis() + 3600 * 1000;
  Set(0, "k", "v", later);
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  EXPECT_EQ(ExpireIndexSize(), 1);
  Set(0, "k", "v", later + 1000);  // change the TTL
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  EXPECT_EQ(ExpireIndexSize(), 1);
  Set(0, "k", "v");  // PERSIST-like overwrite
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_EQ(ExpireIndexSize(), 0);
  Set(0, "k", "v", later);  // add TTL again
  Set(0, "other", "v", later);
  EXPECT_EQ(ks_->ExpireCount(0), 2);
  Del(0, "k");
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  EXPECT_EQ(ExpireIndexSize(), 1);
}

TEST_F(KeyspaceTest, SeveralWritesToOneKeyInOneContext) {
  Context ctx(ks_.get());
  Metadata m;
  m.type = RedisType::kString;
  m.expire_ms = UnixMillis() + 60000;
  for (int i = 0; i < 5; i++) {
    auto old = ctx.Lookup(0, "k");
    ASSERT_TRUE(old.ok());
    m.value = std::to_string(i);
    m.expire_ms += 1;
    ctx.Write(0, "k", m, *old);
  }
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  EXPECT_EQ(ExpireIndexSize(), 1);
  EXPECT_EQ(Get(0, "k").meta.value, "4");
}

// Every field, including those a type does not use: a Lookup answered from what the Context
// last wrote must be exactly what decoding the batch's value gives.
void ExpectSameMetadata(const Metadata& a, const Metadata& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.encoding, b.encoding);
  EXPECT_EQ(a.expire_ms, b.expire_ms);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.list_head, b.list_head);
  EXPECT_EQ(a.list_tail, b.list_tail);
  EXPECT_EQ(a.segmented, b.segmented);
  EXPECT_EQ(a.segment_shift, b.segment_shift);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.zset.low().mark, b.zset.low().mark);
  EXPECT_EQ(a.zset.low().beyond, b.zset.low().beyond);
  EXPECT_EQ(a.zset.high().mark, b.zset.high().mark);
  EXPECT_EQ(a.zset.high().beyond, b.zset.high().beyond);
}

// What the Context's batch holds for `key` in physical database 0, decoded.
KeyState BatchHolds(Context& ctx, std::string_view key) {
  KeyState state;
  std::string value;
  if (!ctx.batch().Get(ColumnFamily::kMetadata, MetadataKey(0, key), &value).ok()) return state;
  state.present = state.meta.Decode(value);
  return state;
}

TEST_F(KeyspaceTest, ContextLooksUpTheCollectionItLastWroteAsTheBatchHoldsIt) {
  Context ctx(ks_.get());
  Metadata list;
  list.type = RedisType::kList;
  list.version = 7;
  list.size = 1;
  list.list_head = 100;
  list.list_tail = 101;
  Metadata zset;
  zset.type = RedisType::kZset;
  zset.version = 8;
  zset.size = 3;
  zset.zset.mutable_end(false).mark = "low-mark";
  zset.zset.mutable_end(false).beyond = {"a", "b"};
  zset.zset.mutable_end(true).mark = "high-mark";
  for (const Metadata& meta : {list, zset}) {
    const std::string key = meta.type == RedisType::kList ? "L" : "Z";
    auto old = ctx.Lookup(0, key);
    ASSERT_TRUE(old.ok());
    ctx.Write(0, key, meta, *old);
    for (int repeat = 0; repeat < 2; repeat++) {  // the second Lookup reads the batch again
      auto again = ctx.Lookup(0, key);
      ASSERT_TRUE(again.ok());
      ASSERT_TRUE(again->live());
      ExpectSameMetadata(again->meta, BatchHolds(ctx, key).meta);
      ExpectSameMetadata(again->meta, meta);
    }
  }

  // Another write into the batch's metadata, even of another key, is seen.
  auto old = ctx.Lookup(0, "L");
  ASSERT_TRUE(old.ok());
  ctx.Write(0, "L", list, *old);
  Metadata raw = list;
  raw.size = 42;
  ctx.batch().Put(ColumnFamily::kMetadata, MetadataKey(0, "L"), raw.Encode());
  EXPECT_EQ(ctx.Lookup(0, "L")->meta.size, 42u);
  ctx.Write(0, "L", list, *ctx.Lookup(0, "L"));
  ctx.batch().Delete(ColumnFamily::kMetadata, MetadataKey(0, "L"));
  EXPECT_FALSE(ctx.Lookup(0, "L")->present);

  // The same name in another database is another key; expiry is judged at each Lookup.
  Metadata expiring = list;
  expiring.expire_ms = ctx.now_ms() - 1;
  ctx.Write(0, "L", expiring, *ctx.Lookup(0, "L"));
  EXPECT_FALSE(ctx.Lookup(1, "L")->present);
  ctx.Write(0, "L", expiring, *ctx.Lookup(0, "L"));
  auto expired = ctx.Lookup(0, "L");
  EXPECT_TRUE(expired->present);
  EXPECT_TRUE(expired->expired);

  // After a commit the key is the database's again, which another writer may change.
  ctx.Write(0, "L", list, *ctx.Lookup(0, "L"));
  ASSERT_TRUE(ctx.Commit().ok());
  Context other(ks_.get());
  Metadata changed = list;
  changed.size = 9;
  other.Write(0, "L", changed, *other.Lookup(0, "L"));
  ASSERT_TRUE(other.Commit().ok());
  EXPECT_EQ(ctx.Lookup(0, "L")->meta.size, 9u);
}

TEST_F(KeyspaceTest, ConcurrentWritersKeepCountsExact) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < 100; i++) {
        std::string key = std::to_string(t);
        key.append(":").append(std::to_string(i));
        Set(t % 2, key, "v");
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ks_->KeyCount(0), 200);
  EXPECT_EQ(ks_->KeyCount(1), 200);
}

TEST_F(KeyspaceTest, CountsSurviveReopen) {
  const int64_t later = UnixMillis() + 3600 * 1000;
  Set(0, "a", "1");
  Set(0, "b", "2", later);
  Set(3, "c", "3", later);
  Set(3, "d", "4");
  Del(3, "d");
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(ks_->KeyCount(0), 2);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  EXPECT_EQ(ks_->KeyCount(3), 1);
  EXPECT_EQ(ks_->ExpireCount(3), 1);
  EXPECT_EQ(Get(0, "b").meta.value, "2");
  EXPECT_EQ(Get(0, "b").meta.expire_ms, later);
}

TEST_F(KeyspaceTest, FlushDatabaseResetsOnlyThatDatabase) {
  const int64_t later = UnixMillis() + 3600 * 1000;
  Set(0, "a", "1");
  Set(0, "b", "2", later);
  Set(1, "a", "x");
  Set(1, "c", "y", later);
  Set(1, "d", "z");
  ASSERT_TRUE(ks_->FlushDatabase(0).ok());
  EXPECT_EQ(ks_->KeyCount(0), 0);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_FALSE(Get(0, "a").present);
  EXPECT_FALSE(Get(0, "b").present);
  EXPECT_EQ(ks_->KeyCount(1), 3);
  EXPECT_EQ(ks_->ExpireCount(1), 1);
  EXPECT_EQ(Get(1, "a").meta.value, "x");
  // Writing after the flush counts from zero, and all of it persists.
  Set(0, "new", "n");
  EXPECT_EQ(ks_->KeyCount(0), 1);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 0);
  EXPECT_EQ(ks_->KeyCount(1), 3);
  EXPECT_FALSE(Get(0, "a").present);
  EXPECT_TRUE(Get(0, "new").live());
}

// Writes `n` strings of 100 bytes, "key:0" to "key:<n-1>", alternating between databases 0 and 1,
// a thousand to a batch.
void WriteStrings(Keyspace* ks, int n) {
  for (int first = 0; first < n; first += 1000) {
    Context ctx(ks);
    for (int i = first; i < std::min(n, first + 1000); i++) {
      std::string key = "key:" + std::to_string(i);
      auto old = ctx.Lookup(i % 2, key);
      ASSERT_TRUE(old.ok());
      Metadata m;
      m.type = RedisType::kString;
      m.value = std::string(100, 'v');
      ctx.Write(i % 2, key, m, *old);
    }
    ASSERT_TRUE(ctx.Commit().ok());
  }
}

// FLUSHALL leaves no dead entries in a memtable that holds many: the flush it starts drops what
// its range deletions cover, so the next writes go to an empty memtable, and the file it writes
// holds next to nothing of the 70k flushed keys. The data written afterwards is all there.
TEST_F(KeyspaceTest, FlushAllEmptiesTheMemtables) {
  extra_config_ = {{"rocksdb.write-buffer-size", "64mb"}};
  ASSERT_NO_FATAL_FAILURE(Reopen());
  rocksdb::DB* db = ks_->engine()->db();
  rocksdb::ColumnFamilyHandle* metadata = ks_->engine()->cf(ColumnFamily::kMetadata);
  ASSERT_NO_FATAL_FAILURE(WriteStrings(ks_.get(), 70000));
  ASSERT_GE(ks_->engine()->ActiveMemtableEntries(ColumnFamily::kMetadata), 70000u);
  ASSERT_TRUE(ks_->FlushAll().ok());
  uint64_t entries = 1;
  uint64_t immutable = 1;
  for (int i = 0; i < 1000 && (entries > 0 || immutable > 0); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    entries = ks_->engine()->ActiveMemtableEntries(ColumnFamily::kMetadata);
    ASSERT_TRUE(db->GetIntProperty(metadata, "rocksdb.num-immutable-mem-table", &immutable));
  }
  EXPECT_EQ(entries, 0u);
  EXPECT_EQ(immutable, 0u);
  uint64_t sst_bytes = 0;
  ASSERT_TRUE(db->GetIntProperty(metadata, "rocksdb.total-sst-files-size", &sst_bytes));
  EXPECT_LT(sst_bytes, 64u * 1024);  // the 70k keys were over 8 MB
  EXPECT_EQ(ks_->KeyCount(0), 0);
  Set(0, "after", "a");
  EXPECT_EQ(Get(0, "after").meta.value, "a");
  EXPECT_FALSE(Get(0, "key:0").present);
  EXPECT_FALSE(Get(1, "key:1").present);
}

// A memtable of a few entries is left as it is: the flush would cost more than they do.
TEST_F(KeyspaceTest, FlushAllOfAFewKeysStartsNoFlush) {
  ASSERT_NO_FATAL_FAILURE(WriteStrings(ks_.get(), 1000));
  ASSERT_TRUE(ks_->FlushAll().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_GE(ks_->engine()->ActiveMemtableEntries(ColumnFamily::kMetadata), 1000u);
  EXPECT_EQ(ks_->KeyCount(0), 0);
  EXPECT_FALSE(Get(0, "key:0").present);
}

TEST_F(KeyspaceTest, SwapDatabasesSwapsContentsAndPersists) {
  Set(0, "a", "in0");
  Set(1, "b", "in1");
  Set(1, "c", "in1", UnixMillis() + 3600 * 1000);
  ASSERT_TRUE(ks_->SwapDatabases(0, 1).ok());
  EXPECT_EQ(ks_->KeyCount(0), 2);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  EXPECT_EQ(ks_->KeyCount(1), 1);
  EXPECT_EQ(Get(0, "b").meta.value, "in1");
  EXPECT_FALSE(Get(0, "a").present);
  EXPECT_EQ(Get(1, "a").meta.value, "in0");
  Set(0, "d", "after-swap");  // lands in the database now visible as 0
  EXPECT_EQ(ks_->KeyCount(0), 3);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(ks_->Physical(0), 1);
  EXPECT_EQ(ks_->Physical(1), 0);
  EXPECT_EQ(ks_->KeyCount(0), 3);
  EXPECT_EQ(ks_->KeyCount(1), 1);
  EXPECT_EQ(Get(0, "d").meta.value, "after-swap");
  EXPECT_EQ(Get(1, "a").meta.value, "in0");
}

TEST_F(KeyspaceTest, WriteToWatchedKeyMarksWatcherDirty) {
  auto watcher = std::make_shared<WatchState>();
  ks_->watches().Watch(ks_->Physical(0), "watched", watcher);
  Set(0, "unrelated", "v");
  EXPECT_FALSE(watcher->dirty);
  Set(1, "watched", "v");  // same name, other database
  EXPECT_FALSE(watcher->dirty);
  Set(0, "watched", "v");
  EXPECT_TRUE(watcher->dirty);
  // After UNWATCH the key no longer marks the state.
  watcher->dirty = false;
  ks_->watches().Unwatch(ks_->Physical(0), "watched", watcher.get());
  Set(0, "watched", "again");
  EXPECT_FALSE(watcher->dirty);
}

// A write that leaves the metadata as it was (an overwritten field, LSET, a string set to the
// value and expiry it has) puts nothing into RocksDB, yet still marks watchers dirty and keeps
// the counts; one that changes anything, the expiry alone included, is written.
TEST_F(KeyspaceTest, UnchangedWritePutsNothingButStillTouchesWatchers) {
  const int64_t expire_ms = UnixMillis() + 3600 * 1000;
  Set(0, "k", "v", expire_ms);
  auto watcher = std::make_shared<WatchState>();
  ks_->watches().Watch(ks_->Physical(0), "k", watcher);
  const uint64_t before = ks_->engine()->LatestSequence();
  Set(0, "k", "v", expire_ms);
  EXPECT_EQ(ks_->engine()->LatestSequence(), before);
  EXPECT_TRUE(watcher->dirty);
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  Set(0, "k", "v", expire_ms + 1);
  EXPECT_GT(ks_->engine()->LatestSequence(), before);
  EXPECT_EQ(Get(0, "k").meta.expire_ms, expire_ms + 1);
  EXPECT_EQ(ks_->ExpireCount(0), 1);
  const uint64_t after_expiry = ks_->engine()->LatestSequence();
  Set(0, "k", "w", expire_ms + 1);
  EXPECT_GT(ks_->engine()->LatestSequence(), after_expiry);
  EXPECT_EQ(Get(0, "k").meta.value, "w");
}

// Records the keys it is told of, while `listening`.
class RecordingTouchListener : public Keyspace::TouchListener {
 public:
  bool Listening() const override { return listening; }
  void OnKeyTouched(uint8_t pdb, std::string_view key) override {
    touched.emplace_back(pdb, std::string(key));
  }
  void OnDatabaseReplaced(uint8_t pdb) override { replaced.push_back(pdb); }
  bool listening = true;
  std::vector<int> replaced;
  std::vector<std::pair<int, std::string>> touched;
};

TEST_F(KeyspaceTest, TouchListenerSeesEveryCommittedKey) {
  RecordingTouchListener listener;
  ks_->SetTouchListener(&listener);
  Context ctx(ks_.get());
  Metadata m;
  m.type = RedisType::kString;
  for (const char* key : {"b", "a", "b"}) {
    auto old = ctx.Lookup(1, key);
    ASSERT_TRUE(old.ok());
    ctx.Write(1, key, m, *old);
  }
  EXPECT_TRUE(listener.touched.empty());  // nothing before the commit
  ASSERT_TRUE(ctx.Commit().ok());
  const int pdb = ks_->Physical(1);
  // Once each, in key order.
  EXPECT_EQ(listener.touched, (std::vector<std::pair<int, std::string>>{{pdb, "a"}, {pdb, "b"}}));
  ks_->SetTouchListener(nullptr);
}

TEST_F(KeyspaceTest, CommitsTellTheTouchListenerOnlyWhileItListensOrKeysAreWatched) {
  RecordingTouchListener listener;
  listener.listening = false;
  ks_->SetTouchListener(&listener);
  const int pdb = ks_->Physical(0);
  Set(0, "quiet", "v");
  EXPECT_TRUE(listener.touched.empty());
  // A watched key anywhere: the commit touches its keys, and tells the listener too.
  auto watcher = std::make_shared<WatchState>();
  ks_->watches().Watch(pdb, "elsewhere", watcher);
  Set(0, "seen", "v");
  ks_->watches().Unwatch(pdb, "elsewhere", watcher.get());
  EXPECT_FALSE(watcher->dirty);
  EXPECT_EQ(listener.touched, (std::vector<std::pair<int, std::string>>{{pdb, "seen"}}));
  listener.touched.clear();
  Set(0, "quiet", "again");
  EXPECT_TRUE(listener.touched.empty());
  listener.listening = true;
  Set(0, "heard", "v");
  EXPECT_EQ(listener.touched, (std::vector<std::pair<int, std::string>>{{pdb, "heard"}}));
  ks_->SetTouchListener(nullptr);
}

TEST_F(KeyspaceTest, SwapDatabasesTellsTheListeningTouchListenerBothPhysicalDatabases) {
  RecordingTouchListener listener;
  ks_->SetTouchListener(&listener);
  const int pdb0 = ks_->Physical(0), pdb1 = ks_->Physical(1);
  ASSERT_TRUE(ks_->SwapDatabases(0, 1).ok());
  EXPECT_EQ(listener.replaced, (std::vector<int>{pdb0, pdb1}));
  listener.listening = false;
  ASSERT_TRUE(ks_->SwapDatabases(0, 1).ok());
  EXPECT_EQ(listener.replaced.size(), 2u);
  ks_->SetTouchListener(nullptr);
}

TEST_F(KeyspaceTest, FlushesTellTheListeningTouchListenerEachEmptiedDatabase) {
  RecordingTouchListener listener;
  ks_->SetTouchListener(&listener);
  ASSERT_TRUE(ks_->FlushDatabase(2).ok());
  EXPECT_EQ(listener.replaced, (std::vector<int>{ks_->Physical(2)}));
  listener.replaced.clear();
  ASSERT_TRUE(ks_->FlushAll().ok());
  std::vector<int> all;
  for (int db = 0; db < ks_->databases(); db++) all.push_back(ks_->Physical(db));
  EXPECT_EQ(listener.replaced, all);
  ks_->SetTouchListener(nullptr);
}

TEST_F(KeyspaceTest, DeleteAndFlushTouchWatchers) {
  Set(0, "w", "v");
  auto on_delete = std::make_shared<WatchState>();
  ks_->watches().Watch(ks_->Physical(0), "w", on_delete);
  Del(0, "w");
  EXPECT_TRUE(on_delete->dirty);

  // As in Redis, a flush changes only the watched keys that existed in the emptied database.
  Set(0, "present", "v");
  Set(2, "present", "v");
  auto on_flush = std::make_shared<WatchState>();
  auto absent = std::make_shared<WatchState>();
  auto other_db = std::make_shared<WatchState>();
  ks_->watches().Watch(ks_->Physical(0), "present", on_flush);
  ks_->watches().Watch(ks_->Physical(0), "absent", absent);
  ks_->watches().Watch(ks_->Physical(2), "present", other_db);
  ASSERT_TRUE(ks_->FlushDatabase(0).ok());
  EXPECT_TRUE(on_flush->dirty);
  EXPECT_FALSE(absent->dirty);
  EXPECT_FALSE(other_db->dirty);
}

}  // namespace
}  // namespace basalt
