// The replica side of replication over a real RocksDB: applying master batches (counts, WATCH,
// events, the stored position, undecodable input, the master's dead-range notes), shared
// checkpoints, and the data swap of a full sync including its crash recovery.
#include <gtest/gtest.h>
#include <rocksdb/transaction_log.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "keyspace_fixture.h"
#include "repl/applier.h"
#include "repl/checkpoint.h"
#include "repl/state.h"
#include "repl/wire.h"
#include "types/compaction.h"
#include "types/metadata.h"

namespace basalt {
namespace {

class ReplicationTest : public KeyspaceFixture {
 protected:
  rocksdb::ColumnFamilyHandle* cf(ColumnFamily which) { return ks_->engine()->cf(which); }

  // A master's batch that creates string `key` in physical db 0, as SET would.
  std::string SetBatch(const std::string& key, const std::string& value) {
    Metadata m;
    m.type = RedisType::kString;
    m.value = value;
    rocksdb::WriteBatch b;
    EXPECT_TRUE(b.Put(cf(ColumnFamily::kMetadata), MetadataKey(0, key), m.Encode()).ok());
    EXPECT_TRUE(b.Merge(cf(ColumnFamily::kCounters), KeysCounterKey(0), EncodeCounter(1)).ok());
    return b.Data();
  }

  std::atomic<bool> stop_{false};
};

TEST_F(ReplicationTest, AppliedBatchesUpdateCountsPositionAndWatchers) {
  auto watcher = std::make_shared<WatchState>();
  ks_->watches().Watch(0, "a", watcher);
  BatchApplier applier(ks_.get());
  ASSERT_TRUE(applier.Add(SetBatch("a", "1")).ok());
  ASSERT_TRUE(applier.Add(SetBatch("b", "2")).ok());
  EXPECT_EQ(ks_->KeyCount(0), 0);  // nothing is written before Commit
  EXPECT_FALSE(watcher->dirty);
  ReplicaPosition pos{"masterid", 42, 7};
  ASSERT_TRUE(applier.Commit(pos, stop_).ok());
  EXPECT_TRUE(applier.empty());
  EXPECT_EQ(ks_->KeyCount(0), 2);
  EXPECT_EQ(Get(0, "a").meta.value, "1");
  EXPECT_EQ(Get(0, "b").meta.value, "2");
  EXPECT_TRUE(watcher->dirty);
  auto stored = LoadReplicaPosition(ks_->engine());
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(stored->has_value());
  EXPECT_EQ((*stored)->master_replid, "masterid");
  EXPECT_EQ((*stored)->next_seq, 42u);
  EXPECT_EQ((*stored)->last_hash, 7u);
  // Counts survive a restart: they were written with the data.
  Reopen();
  EXPECT_EQ(ks_->KeyCount(0), 2);
}

TEST_F(ReplicationTest, FlushBatchResetsCountsAndDirtiesTheDatabase) {
  Set(0, "x", "1");
  Set(0, "y", "1");
  auto watcher = std::make_shared<WatchState>();
  ks_->watches().Watch(0, "x", watcher);
  rocksdb::WriteBatch flush;  // what FLUSHDB commits
  for (ColumnFamily c : {ColumnFamily::kMetadata, ColumnFamily::kSubkey, ColumnFamily::kZsetScore})
    ASSERT_TRUE(flush.DeleteRange(cf(c), DatabaseBegin(0), DatabaseEnd(0)).ok());
  std::string epoch(8, '\0');
  epoch[7] = 1;
  ASSERT_TRUE(flush.Put(cf(ColumnFamily::kCounters), KeysCounterKey(0), EncodeCounter(0)).ok());
  ASSERT_TRUE(flush.Put(cf(ColumnFamily::kCounters), EpochKey(0), epoch).ok());
  BatchApplier applier(ks_.get());
  ASSERT_TRUE(applier.Add(flush.Data()).ok());
  ASSERT_TRUE(applier.Commit(ReplicaPosition{"m", 10, 1}, stop_).ok());
  EXPECT_EQ(ks_->KeyCount(0), 0);
  EXPECT_EQ(ks_->Epoch(0), 1u);
  EXPECT_FALSE(Get(0, "x").present);
  EXPECT_TRUE(watcher->dirty);
}

TEST_F(ReplicationTest, SwapBatchMovesTheDatabaseMap) {
  Set(0, "in0", "1");
  auto watcher = std::make_shared<WatchState>();
  ks_->watches().Watch(0, "in0", watcher);
  std::string map;
  for (int i = 0; i < kMaxDatabases; i++) map.push_back(static_cast<char>(i));
  std::swap(map[0], map[1]);
  rocksdb::WriteBatch swap;  // what SWAPDB 0 1 commits
  ASSERT_TRUE(swap.Put(cf(ColumnFamily::kCounters), kDbMapKey, map).ok());
  BatchApplier applier(ks_.get());
  ASSERT_TRUE(applier.Add(swap.Data()).ok());
  ASSERT_TRUE(applier.Commit(ReplicaPosition{"m", 3, 1}, stop_).ok());
  EXPECT_EQ(ks_->Physical(0), 1);
  EXPECT_EQ(ks_->Physical(1), 0);
  EXPECT_EQ(ks_->KeyCount(1), 1);
  EXPECT_EQ(Get(1, "in0").meta.value, "1");
  EXPECT_TRUE(watcher->dirty);
  Reopen();  // the stored map agrees with the one in memory
  EXPECT_EQ(ks_->Physical(0), 1);
}

TEST_F(ReplicationTest, EventPutsReachTheirHandlersInOrderAndLeaveNothingOnDisk) {
  std::vector<std::pair<std::string, std::string>> seen;
  BatchApplier applier(ks_.get());
  applier.SetEventHandler(ColumnFamily::kPubsub, [&](std::string_view k, std::string_view v) {
    seen.emplace_back("pubsub:" + std::string(k), std::string(v));
  });
  applier.SetEventHandler(
      ColumnFamily::kPropagate,
      [&](std::string_view k, std::string_view v) {
        seen.emplace_back("propagate:" + std::string(k), std::string(v));
      },
      [&](std::string_view k) { seen.emplace_back("propagate-delete:" + std::string(k), ""); });
  rocksdb::WriteBatch b;  // written and deleted in one batch, as the master does
  ASSERT_TRUE(b.Put(cf(ColumnFamily::kPubsub), "chan", "hello").ok());
  ASSERT_TRUE(b.Delete(cf(ColumnFamily::kPubsub), "chan").ok());
  ASSERT_TRUE(b.Put(cf(ColumnFamily::kPropagate), "script", "body").ok());
  ASSERT_TRUE(b.Delete(cf(ColumnFamily::kPropagate), "script").ok());
  ASSERT_TRUE(applier.Add(b.Data()).ok());
  EXPECT_TRUE(seen.empty());  // handlers run at Commit, not while decoding
  ASSERT_TRUE(applier.Commit(ReplicaPosition{"m", 5, 1}, stop_).ok());
  ASSERT_EQ(seen.size(), 3u);  // pubsub has no delete handler
  EXPECT_EQ(seen[0], std::make_pair(std::string("pubsub:chan"), std::string("hello")));
  EXPECT_EQ(seen[1], std::make_pair(std::string("propagate:script"), std::string("body")));
  EXPECT_EQ(seen[2], std::make_pair(std::string("propagate-delete:script"), std::string()));
  for (ColumnFamily c : {ColumnFamily::kPubsub, ColumnFamily::kPropagate}) {
    rocksdb::ReadOptions ro;
    auto it = ks_->engine()->NewIterator(c, ro);
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
  }
}

TEST_F(ReplicationTest, BeforeWriteEventsRunBeforeTheGroupsDataIsVisible) {
  // A group that loads a function and then writes a key: a reader that sees the key must be
  // able to call the function, while a subscriber told of a message must see the key.
  std::vector<std::string> seen;
  BatchApplier applier(ks_.get());
  applier.SetEventHandler(
      ColumnFamily::kPropagate,
      [&](std::string_view k, std::string_view) {
        seen.push_back(std::string(k) + (ks_->KeyCount(0) == 0 ? " before" : " after"));
      },
      nullptr, BatchApplier::EventTiming::kBeforeWrite);
  applier.SetEventHandler(ColumnFamily::kPubsub, [&](std::string_view k, std::string_view) {
    seen.push_back(std::string(k) + (ks_->KeyCount(0) == 0 ? " before" : " after"));
  });
  rocksdb::WriteBatch load;
  ASSERT_TRUE(load.Put(cf(ColumnFamily::kPropagate), "library", "code").ok());
  ASSERT_TRUE(load.Delete(cf(ColumnFamily::kPropagate), "library").ok());
  ASSERT_TRUE(applier.Add(load.Data()).ok());
  ASSERT_TRUE(applier.Add(SetBatch("k", "v")).ok());
  rocksdb::WriteBatch publish;
  ASSERT_TRUE(publish.Put(cf(ColumnFamily::kPubsub), "chan", "msg").ok());
  ASSERT_TRUE(publish.Delete(cf(ColumnFamily::kPubsub), "chan").ok());
  ASSERT_TRUE(applier.Add(publish.Data()).ok());
  ASSERT_TRUE(applier.Commit(ReplicaPosition{"m", 9, 3}, stop_).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"library before", "chan after"}));
}

TEST_F(ReplicationTest, UndecodableBatchIsRefusedAndDiscardsTheGroup) {
  BatchApplier applier(ks_.get());
  ASSERT_TRUE(applier.Add(SetBatch("a", "1")).ok());
  std::string bad = SetBatch("b", "2");
  bad.resize(bad.size() - 3);  // cut inside the last record
  EXPECT_FALSE(applier.Add(bad).ok());
  EXPECT_FALSE(applier.Add("short").ok());
  EXPECT_TRUE(applier.empty());
  EXPECT_FALSE(Get(0, "a").present);
}

TEST_F(ReplicationTest, PositionRoundTripsAndIsDeletedOnPromotion) {
  ReplicaPosition pos{"abc", 1ULL << 40, ~0ULL};
  ReplicaPosition back;
  ASSERT_TRUE(back.Decode(pos.Encode()));
  EXPECT_EQ(back.master_replid, "abc");
  EXPECT_EQ(back.next_seq, 1ULL << 40);
  EXPECT_EQ(back.last_hash, ~0ULL);
  EXPECT_FALSE(back.Decode(pos.Encode() + "x"));
  BatchApplier applier(ks_.get());
  ASSERT_TRUE(applier.WritePosition(pos).ok());
  ASSERT_TRUE(applier.WritePosition(std::nullopt).ok());
  auto stored = LoadReplicaPosition(ks_->engine());
  ASSERT_TRUE(stored.ok());
  EXPECT_FALSE(stored->has_value());
}

TEST_F(ReplicationTest, ReplidPersistsUntilReset) {
  auto first = LoadOrCreateReplid(dir_);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size(), 40u);
  auto again = LoadOrCreateReplid(dir_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  auto reset = ResetReplid(dir_);
  ASSERT_TRUE(reset.ok());
  EXPECT_NE(*reset, *first);
  EXPECT_EQ(*LoadOrCreateReplid(dir_), *reset);
}

TEST_F(ReplicationTest, ConcurrentFullSyncsShareOneCheckpoint) {
  Set(0, "k", "v");
  CheckpointSource source(ks_->engine());
  auto first = source.Acquire();
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = source.Acquire();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(source.created(), 1u);
  std::string dir = (*first)->dir;
  EXPECT_GT((*first)->total_bytes, 0u);
  EXPECT_TRUE(std::filesystem::exists(dir + "/CURRENT"));
  first->reset();
  EXPECT_TRUE(std::filesystem::exists(dir));  // still shipped to the second replica
  second->reset();
  EXPECT_FALSE(std::filesystem::exists(dir));
  auto later = source.Acquire();
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(source.created(), 2u);
}

TEST_F(ReplicationTest, ReplaceDataSwapsInACheckpoint) {
  Set(0, "k", "old");
  std::string copy = dir_ + ".copy";
  {
    CheckpointSource source(ks_->engine());
    auto cp = source.Acquire();
    ASSERT_TRUE(cp.ok());
    std::filesystem::copy((*cp)->dir, copy);
  }
  Set(0, "k", "new");
  Set(0, "other", "1");
  ASSERT_TRUE(ks_->engine()->ReplaceData(copy).ok());
  ASSERT_TRUE(ks_->ReloadState().ok());
  EXPECT_EQ(Get(0, "k").meta.value, "old");
  EXPECT_FALSE(Get(0, "other").present);
  EXPECT_EQ(ks_->KeyCount(0), 1);
  EXPECT_FALSE(std::filesystem::exists(copy));
  EXPECT_FALSE(std::filesystem::exists(dir_ + ".replaced"));
  EXPECT_FALSE(ks_->engine()->ReplaceData(dir_ + ".missing").ok());
  EXPECT_EQ(Get(0, "k").meta.value, "old");  // a refused swap leaves the data alone
}

TEST_F(ReplicationTest, InterruptedSwapIsRolledBackAtOpen) {
  Set(0, "k", "kept");
  ks_.reset();
  config_.reset();
  // A crash after the old data was moved aside and before the new data moved in.
  std::filesystem::rename(dir_, dir_ + ".replaced");
  std::filesystem::create_directory(dir_);  // what main() does before opening
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(Get(0, "k").meta.value, "kept");
  EXPECT_FALSE(std::filesystem::exists(dir_ + ".replaced"));
}

// A master's dead-range note (a LogData blob in its batch) decodes to what was noted; any other
// blob, or a damaged note, is not taken for one.
TEST(DeadRangeNote, RoundTripsAndOnlyNotesDecode) {
  std::string begin("\x00\x01key\x00", 7), end = "key\xff";
  std::string note = Engine::EncodeDeadRangeNote(ColumnFamily::kZsetScore, begin, end);
  ColumnFamily cf = ColumnFamily::kMetadata;
  std::string b, e;
  ASSERT_TRUE(Engine::DecodeDeadRangeNote(note, &cf, &b, &e));
  EXPECT_EQ(cf, ColumnFamily::kZsetScore);
  EXPECT_EQ(b, begin);
  EXPECT_EQ(e, end);
  EXPECT_FALSE(Engine::DecodeDeadRangeNote("", &cf, &b, &e));
  EXPECT_FALSE(Engine::DecodeDeadRangeNote("some other log data", &cf, &b, &e));
  EXPECT_FALSE(Engine::DecodeDeadRangeNote(note + "x", &cf, &b, &e));
  for (size_t cut = 0; cut < note.size(); cut++) {
    EXPECT_FALSE(Engine::DecodeDeadRangeNote(note.substr(0, cut), &cf, &b, &e)) << cut;
  }
  // Only the families a reclaimer serves.
  EXPECT_FALSE(Engine::DecodeDeadRangeNote(
      Engine::EncodeDeadRangeNote(ColumnFamily::kMetadata, begin, end), &cf, &b, &e));
}

// A master batch carrying a dead-range note is applied like any other, and the note stays in
// the replica's own WAL record for its replicas.
TEST_F(ReplicationTest, DeadRangeNotesAreKeptForChainedReplicas) {
  rocksdb::WriteBatch master(SetBatch("a", "1"));
  ASSERT_TRUE(
      master.PutLogData(Engine::EncodeDeadRangeNote(ColumnFamily::kSubkey, "begin", "end")).ok());
  BatchApplier applier(ks_.get());
  ASSERT_TRUE(applier.Add(master.Data()).ok());
  const uint64_t before = ks_->engine()->LatestSequence();
  ASSERT_TRUE(applier.Commit(ReplicaPosition{"masterid", 1, 0}, stop_).ok());
  EXPECT_EQ(Get(0, "a").meta.value, "1");
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  ASSERT_TRUE(ks_->engine()->db()->GetUpdatesSince(before + 1, &it).ok());
  ASSERT_TRUE(it->Valid());
  struct Notes : rocksdb::WriteBatch::Handler {
    int found = 0;
    rocksdb::Status PutCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
      return rocksdb::Status::OK();
    }
    rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
      return rocksdb::Status::OK();
    }
    void LogData(const rocksdb::Slice& blob) override {
      ColumnFamily cf;
      std::string b, e;
      if (Engine::DecodeDeadRangeNote(blob.ToString(), &cf, &b, &e) &&
          cf == ColumnFamily::kSubkey && b == "begin" && e == "end") {
        found++;
      }
    }
  } notes;
  ASSERT_TRUE(it->GetBatch().writeBatchPtr->Iterate(&notes).ok());
  EXPECT_EQ(notes.found, 1);
}

TEST(ReplicationWire, BatchHashIsStableAndSensitive) {
  EXPECT_EQ(BatchHash("abc"), BatchHash("abc"));
  EXPECT_NE(BatchHash("abc"), BatchHash("abd"));
  EXPECT_NE(BatchHash(""), 0u);
}

}  // namespace
}  // namespace basalt
