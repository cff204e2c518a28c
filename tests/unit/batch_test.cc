// Batch: read-your-writes over a real RocksDB, the coalescing of `metadata` writes (only the
// last write of each metadata key reaches the WAL, yet every read, iterator and range operation
// sees the batch's writes in the order they were made), and `subkey`/`zset_score` writes that
// are indexed only once the batch reads their family; reads limited to memory note a miss.
#include "storage/batch.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "keyspace_fixture.h"

namespace basalt {
namespace {

// Lists the entries of one column family that committed batches wrote to the WAL.
class WalCounter : public rocksdb::WriteBatch::Handler {
 public:
  explicit WalCounter(uint32_t cf) : cf_(cf) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice&) override {
    if (cf == cf_) writes.push_back(std::string("put ").append(key.data(), key.size()));
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    if (cf == cf_) writes.push_back(std::string("delete ").append(key.data(), key.size()));
    return rocksdb::Status::OK();
  }
  std::vector<std::string> writes;

 private:
  uint32_t cf_;
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

  // The writes to `cf` of everything committed since `start`.
  std::vector<std::string> WritesSince(rocksdb::SequenceNumber start,
                                       ColumnFamily cf = ColumnFamily::kMetadata) {
    std::unique_ptr<rocksdb::TransactionLogIterator> it;
    EXPECT_TRUE(engine()->db()->GetUpdatesSince(start, &it).ok());
    WalCounter counter(engine()->cf(cf)->GetID());
    for (; it->Valid(); it->Next()) {
      EXPECT_TRUE(it->GetBatch().writeBatchPtr->Iterate(&counter).ok());
    }
    return counter.writes;
  }

  rocksdb::SequenceNumber NextSequence() { return engine()->db()->GetLatestSequenceNumber() + 1; }

  std::vector<std::string> Scan(Batch& batch, ColumnFamily cf) {
    rocksdb::ReadOptions options;
    auto it = batch.NewIterator(cf, &options);
    std::vector<std::string> seen;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      seen.push_back(it->key().ToString() + "=" + it->value().ToString());
    }
    return seen;
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
  std::vector<std::string> writes = WritesSince(start);
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

TEST_F(BatchTest, WritesBeforeTheFirstReadAreSeenByIt) {
  Batch seed(engine());
  seed.Put(ColumnFamily::kSubkey, "old", "o");
  ASSERT_TRUE(seed.Commit().ok());

  rocksdb::SequenceNumber start = NextSequence();
  Batch batch(engine());
  batch.Put(ColumnFamily::kSubkey, "a", "1");
  batch.Put(ColumnFamily::kSubkey, "b", "1");
  batch.Put(ColumnFamily::kSubkey, "a", "2");
  batch.Delete(ColumnFamily::kSubkey, "old");
  batch.Delete(ColumnFamily::kSubkey, "b");
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "a", &value).ok());
  EXPECT_EQ(value, "2");
  EXPECT_TRUE(batch.Get(ColumnFamily::kSubkey, "b", &value).IsNotFound());
  EXPECT_TRUE(batch.Get(ColumnFamily::kSubkey, "old", &value).IsNotFound());
  // Writes after the first read, and an iterator over all of them.
  batch.Put(ColumnFamily::kSubkey, "c", "3");
  batch.Delete(ColumnFamily::kSubkey, "a");
  EXPECT_EQ(Scan(batch, ColumnFamily::kSubkey), (std::vector<std::string>{"c=3"}));

  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "a"), "(none)");
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "b"), "(none)");
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "c"), "3");
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "old"), "(none)");
  // The writes before the read reach the WAL twice (rewritten to index them), in their order.
  EXPECT_EQ(
      WritesSince(start, ColumnFamily::kSubkey),
      (std::vector<std::string>{"put a", "put b", "put a", "delete old", "delete b", "put a",
                                "put b", "put a", "delete old", "delete b", "put c", "delete a"}));
}

TEST_F(BatchTest, AReadOfAnotherMemberLeavesWritesUnindexed) {
  Batch seed(engine());
  seed.Put(ColumnFamily::kSubkey, "x", "old");
  ASSERT_TRUE(seed.Commit().ok());

  rocksdb::SequenceNumber start = NextSequence();
  Batch batch(engine());
  batch.Put(ColumnFamily::kSubkey, "a", "1");
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "x", &value).ok());  // from the database
  EXPECT_EQ(value, "old");
  EXPECT_TRUE(batch.Get(ColumnFamily::kSubkey, "b", &value).IsNotFound());
  batch.Put(ColumnFamily::kSubkey, "x", "new");
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "x", &value).ok());  // its own write now
  EXPECT_EQ(value, "new");
  batch.Put(ColumnFamily::kSubkey, "b", "2");
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "a"), "1");
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "x"), "new");
  EXPECT_EQ(WritesSince(start, ColumnFamily::kSubkey),
            (std::vector<std::string>{"put a", "put x", "put a", "put x", "put b"}));
}

TEST_F(BatchTest, AnIteratorIsTheFirstRead) {
  Batch batch(engine());
  batch.Put(ColumnFamily::kZsetScore, "s2", "");
  batch.Put(ColumnFamily::kZsetScore, "s1", "");
  batch.Put(ColumnFamily::kSubkey, "m", "x");  // another family: stays out of the index
  EXPECT_EQ(Scan(batch, ColumnFamily::kZsetScore), (std::vector<std::string>{"s1=", "s2="}));
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "m", &value).ok());
  EXPECT_EQ(value, "x");
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read(ColumnFamily::kZsetScore, "s1"), "");
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "m"), "x");
}

// While a batch's only writes to `zset_score` are deletions, its iterators there are the
// database's less the deleted keys, in both directions and for deletions made after them too;
// a put there, or a read that indexes the family, brings the merged iterator back.
TEST_F(BatchTest, ScoreIndexDeletionsAreLeftOutWithoutAnIndex) {
  Batch seed(engine());
  for (const char* key : {"s1", "s2", "s3", "s4"}) seed.Put(ColumnFamily::kZsetScore, key, "");
  ASSERT_TRUE(seed.Commit().ok());

  auto scan_back = [](rocksdb::Iterator* it) {
    std::vector<std::string> seen;
    for (it->SeekToLast(); it->Valid(); it->Prev()) seen.push_back(it->key().ToString());
    return seen;
  };
  Batch batch(engine());
  batch.Delete(ColumnFamily::kZsetScore, "s1");
  batch.Delete(ColumnFamily::kZsetScore, "s3");
  batch.Put(ColumnFamily::kSubkey, "m", "x");  // another family's put changes nothing here
  EXPECT_EQ(Scan(batch, ColumnFamily::kZsetScore), (std::vector<std::string>{"s2=", "s4="}));
  rocksdb::ReadOptions options;
  auto it = batch.NewIterator(ColumnFamily::kZsetScore, &options);
  EXPECT_EQ(scan_back(it.get()), (std::vector<std::string>{"s4", "s2"}));
  it->Seek("s3");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "s4");
  batch.Delete(ColumnFamily::kZsetScore, "s4");
  EXPECT_EQ(scan_back(it.get()), (std::vector<std::string>{"s2"}));

  batch.Put(ColumnFamily::kZsetScore, "s0", "");
  EXPECT_EQ(Scan(batch, ColumnFamily::kZsetScore), (std::vector<std::string>{"s0=", "s2="}));
  batch.Delete(ColumnFamily::kZsetScore, "s2");  // indexed now: still seen as deleted
  EXPECT_EQ(Scan(batch, ColumnFamily::kZsetScore), (std::vector<std::string>{"s0="}));
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read(ColumnFamily::kZsetScore, "s3"), "(none)");
  EXPECT_EQ(Read(ColumnFamily::kZsetScore, "s0"), "");
  Batch after(engine());
  EXPECT_EQ(Scan(after, ColumnFamily::kZsetScore), (std::vector<std::string>{"s0="}));
}

TEST_F(BatchTest, WritesNeverReadReachTheWalOnce) {
  rocksdb::SequenceNumber start = NextSequence();
  Batch batch(engine());
  for (int i = 0; i < 4; i++)
    batch.Put(ColumnFamily::kSubkey, std::string("e").append(std::to_string(i)), "v");
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(WritesSince(start, ColumnFamily::kSubkey),
            (std::vector<std::string>{"put e0", "put e1", "put e2", "put e3"}));
  // The next batch on the same object starts unindexed again, and still reads its own writes.
  batch.Put(ColumnFamily::kSubkey, "e0", "w");
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "e0", &value).ok());
  EXPECT_EQ(value, "w");
}

TEST_F(BatchTest, ARangeDeleteCoversEarlierUnreadWrites) {
  Batch batch(engine());
  batch.Put(ColumnFamily::kSubkey, "k1", "v");
  batch.DeleteRange(ColumnFamily::kSubkey, "k0", "k9");
  batch.Put(ColumnFamily::kSubkey, "k2", "v");
  std::string value;
  // The read that indexes the family must not move k1's write after the range.
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "k2", &value).ok());
  ASSERT_TRUE(batch.Commit().ok());
  // Read from RocksDB honouring the range: the engine's reads of `subkey` ignore range
  // deletions (Engine::PrepareRead), which would hide where the batch put k1's write.
  auto raw = [this](const char* key) {
    std::string v;
    rocksdb::Status s =
        engine()->db()->Get(rocksdb::ReadOptions(), engine()->cf(ColumnFamily::kSubkey), key, &v);
    return s.IsNotFound() ? std::string("(none)") : v;
  };
  EXPECT_EQ(raw("k1"), "(none)");
  EXPECT_EQ(raw("k2"), "v");
}

TEST_F(BatchTest, IndexingPassesOverMergesAndRangesOfOtherFamilies) {
  Batch batch(engine());
  batch.Put(ColumnFamily::kSubkey, "m", "x");
  batch.Merge(ColumnFamily::kCounters, "keys", std::string(8, '\0'));
  batch.DeleteRange(ColumnFamily::kZsetScore, "a", "b");
  batch.Put(ColumnFamily::kMetadata, "k", "v");
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "m", &value).ok());
  EXPECT_EQ(value, "x");
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read(ColumnFamily::kSubkey, "m"), "x");
}

// Entries the caller read itself and hands over are held as a pass's are: merged with those
// already held, in key order, answering reads of keys the batch did not write until a commit.
TEST_F(BatchTest, HeldReadAheadAnswersLikeAPass) {
  Batch batch(engine());
  batch.HoldReadAhead({{"h1", "one"}, {"h3", "three"}});
  batch.ReadAhead("h", "h0", "h9", 1 << 20, false);  // nothing there: adds nothing
  batch.HoldReadAhead({{"h2", "two"}, {"h3", "three"}});
  std::string value;
  for (const auto& [key, expected] : std::vector<std::pair<std::string, std::string>>{
           {"h1", "one"}, {"h2", "two"}, {"h3", "three"}}) {
    EXPECT_TRUE(batch.ReadAheadHolds(key)) << key;
    ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, key, &value).ok()) << key;
    EXPECT_EQ(value, expected);
  }
  batch.Put(ColumnFamily::kSubkey, "h2", "mine");
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "h2", &value).ok());
  EXPECT_EQ(value, "mine");
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_FALSE(batch.ReadAheadHolds("h1"));
  EXPECT_TRUE(batch.Get(ColumnFamily::kSubkey, "h1", &value).IsNotFound());
}

// The held iterator reads the database, not the batch (MayHaveWritten names the keys a caller
// must skip), is made once for the same bounds, and a commit drops it: the next one sees what
// the batch wrote.
TEST_F(BatchTest, HeldIteratorSeesTheDatabaseUntilCommit) {
  auto scan = [](rocksdb::Iterator* it) {
    std::vector<std::string> seen;
    for (it->SeekToFirst(); it->Valid(); it->Next()) seen.push_back(it->key().ToString());
    return seen;
  };
  Batch seed(engine());
  for (const char* key : {"a1", "a2", "b1"}) seed.Put(ColumnFamily::kSubkey, key, "v");
  ASSERT_TRUE(seed.Commit().ok());

  Batch batch(engine());
  batch.Delete(ColumnFamily::kSubkey, "a1");
  batch.Put(ColumnFamily::kSubkey, "a3", "v");
  rocksdb::Iterator* held = batch.HeldIterator("a", "b");
  EXPECT_EQ(scan(held), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_TRUE(batch.MayHaveWritten("a1"));
  EXPECT_FALSE(batch.MayHaveWritten("a2"));
  batch.Delete(ColumnFamily::kSubkey, "a2");  // writes after its creation: still not seen
  EXPECT_EQ(batch.HeldIterator("a", "b"), held);
  EXPECT_EQ(scan(held), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(scan(batch.HeldIterator("b", "c")), (std::vector<std::string>{"b1"}));
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(scan(batch.HeldIterator("a", "b")), (std::vector<std::string>{"a3"}));
}

// ReadInOrder reads the database as it was at its first read, through one iterator over the
// prefix's keys that steps to the next key instead of seeking, and seeks only when the key is
// not the next one. A commit drops it.
TEST_F(BatchTest, ReadInOrderStepsToTheNextKeyAndSeesTheDatabaseUntilCommit) {
  auto p = [](int i) { return std::string("p").append(std::to_string(i)); };
  Batch seed(engine());
  for (int i = 1; i < 10; i++) seed.Put(ColumnFamily::kSubkey, p(i), "v" + std::to_string(i));
  seed.Put(ColumnFamily::kSubkey, "q1", "other");
  ASSERT_TRUE(seed.Commit().ok());
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  auto seeks = [] { return rocksdb::get_perf_context()->seek_on_memtable_count; };
  Batch batch(engine());
  std::string value;
  EXPECT_FALSE(batch.ReadsInOrder("p"));
  for (int i : {2, 3, 3, 4}) {
    ASSERT_TRUE(batch.ReadInOrder("p", p(i), &value).ok()) << i;
    EXPECT_EQ(value, "v" + std::to_string(i));
  }
  EXPECT_EQ(seeks(), 1u);  // the first read only
  EXPECT_TRUE(batch.ReadsInOrder("p"));
  EXPECT_FALSE(batch.ReadsInOrder("q"));
  ASSERT_TRUE(batch.ReadInOrder("p", p(7), &value).ok());  // keys skipped: a seek
  EXPECT_EQ(value, "v7");
  EXPECT_EQ(seeks(), 2u);
  ASSERT_TRUE(batch.ReadInOrder("p", p(8), &value).ok());
  EXPECT_EQ(value, "v8");
  EXPECT_EQ(seeks(), 2u);
  EXPECT_TRUE(batch.ReadInOrder("p", "p65", &value).IsNotFound());
  EXPECT_TRUE(batch.ReadInOrder("p", "q1", &value).IsNotFound());  // past the prefix
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);

  Batch other(engine());
  other.Put(ColumnFamily::kSubkey, p(8), "new");
  ASSERT_TRUE(other.Commit().ok());
  ASSERT_TRUE(batch.ReadInOrder("p", p(8), &value).ok());
  EXPECT_EQ(value, "v8");
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_FALSE(batch.ReadsInOrder("p"));
  ASSERT_TRUE(batch.ReadInOrder("p", p(8), &value).ok());
  EXPECT_EQ(value, "new");
}

// A prefix of 0xff bytes has no key after all of its keys: the iterator over it is unbounded
// above, where a bound of the empty key would leave nothing to read.
TEST_F(BatchTest, ReadInOrderUnderAPrefixOfAllOnesReadsItsKeys) {
  const std::string prefix("\xff\xff");
  Batch seed(engine());
  seed.Put(ColumnFamily::kSubkey, prefix + "1", "one");
  seed.Put(ColumnFamily::kSubkey, prefix + "2", "two");
  ASSERT_TRUE(seed.Commit().ok());
  Batch batch(engine());
  std::string value;
  ASSERT_TRUE(batch.ReadInOrder(prefix, prefix + "1", &value).ok());
  EXPECT_EQ(value, "one");
  ASSERT_TRUE(batch.ReadInOrder(prefix, prefix + "2", &value).ok());
  EXPECT_EQ(value, "two");
}

// A pass down from `upper` whose whole range fits in max_bytes reads it going up: RocksDB's Prev
// costs several times a Next. Only a range that does not fit is read going down.
TEST_F(BatchTest, ReadAheadFromUpperGoesUpWhenTheRangeFits) {
  auto e = [](int i) { return std::string("u").append(std::to_string(i)); };
  Batch seed(engine());
  for (int i = 0; i < 10; i++) seed.Put(ColumnFamily::kSubkey, e(i), "v");
  ASSERT_TRUE(seed.Commit().ok());
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  Batch batch(engine());
  batch.ReadAhead("u", "u0", "u9", 1 << 20, true);
  EXPECT_EQ(rocksdb::get_perf_context()->prev_on_memtable_count, 0u);
  for (int i = 0; i < 10; i++) EXPECT_EQ(batch.ReadAheadHolds(e(i)), i < 9) << i;
  batch.Clear();
  batch.ReadAhead("u", "u0", "u9", 3, true);  // three one-byte values: the top three, going down
  EXPECT_GT(rocksdb::get_perf_context()->prev_on_memtable_count, 0u);
  for (int i = 0; i < 10; i++) EXPECT_EQ(batch.ReadAheadHolds(e(i)), i >= 6 && i < 9) << i;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
}

// Entries read ahead answer the batch's point reads from memory (the database changing behind
// the batch shows it: in the server, the group's locks keep it from changing), the batch's own
// writes come first, and a commit forgets them. The pass stops after max_bytes from either end;
// passes add up.
TEST_F(BatchTest, ReadAheadAnswersUnwrittenKeysUntilCommit) {
  auto e = [](int i) { return std::string("e").append(std::to_string(i)); };
  Batch seed(engine());
  for (int i = 0; i < 10; i++) seed.Put(ColumnFamily::kSubkey, e(i), "v");
  ASSERT_TRUE(seed.Commit().ok());

  Batch batch(engine());
  batch.ReadAhead("e", "e2", "e6", 1 << 20, false);
  for (int i = 0; i < 10; i++) {
    EXPECT_EQ(batch.ReadAheadHolds(e(i)), i >= 2 && i < 6) << i;
  }
  Batch other(engine());
  for (const char* key : {"e1", "e3", "e4", "e5"}) other.Put(ColumnFamily::kSubkey, key, "new");
  ASSERT_TRUE(other.Commit().ok());
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "e3", &value).ok());
  EXPECT_EQ(value, "v");  // read ahead
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "e1", &value).ok());
  EXPECT_EQ(value, "new");  // not read ahead
  EXPECT_FALSE(batch.MayHaveWritten("e4"));
  batch.Put(ColumnFamily::kSubkey, "e4", "mine");
  batch.Delete(ColumnFamily::kSubkey, "e5");
  EXPECT_TRUE(batch.MayHaveWritten("e4"));
  EXPECT_TRUE(batch.MayHaveWritten("e5"));
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "e4", &value).ok());
  EXPECT_EQ(value, "mine");
  EXPECT_TRUE(batch.Get(ColumnFamily::kSubkey, "e5", &value).IsNotFound());
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_FALSE(batch.ReadAheadHolds("e3"));
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "e3", &value).ok());
  EXPECT_EQ(value, "new");

  batch.ReadAhead("e", "e0", "e9", 1, true);  // one value's bytes reach the limit
  EXPECT_TRUE(batch.ReadAheadHolds("e8"));
  EXPECT_FALSE(batch.ReadAheadHolds("e7"));
  batch.ReadAhead("e", "e0", "e9", 2, false);  // "v" is one byte: two values
  EXPECT_TRUE(batch.ReadAheadHolds("e0"));
  EXPECT_TRUE(batch.ReadAheadHolds("e1"));
  EXPECT_FALSE(batch.ReadAheadHolds("e2"));
  EXPECT_TRUE(batch.ReadAheadHolds("e8"));           // a later pass adds to the earlier ones
  batch.ReadAhead("e", "e1", "e3", 1 << 20, false);  // overlapping: e1 is held once
  Batch other2(engine());
  other2.Put(ColumnFamily::kSubkey, "e1", "newer");
  other2.Put(ColumnFamily::kSubkey, "e2", "newer");
  ASSERT_TRUE(other2.Commit().ok());
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "e1", &value).ok());
  EXPECT_EQ(value, "new");
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "e2", &value).ok());
  EXPECT_EQ(value, "v");
  batch.Clear();
  EXPECT_FALSE(batch.ReadAheadHolds("e0"));
  // Once an iterator has indexed the family's writes, every key may be the batch's.
  batch.Put(ColumnFamily::kSubkey, "e4", "mine");
  EXPECT_FALSE(batch.MayHaveWritten("e6"));
  EXPECT_EQ(Scan(batch, ColumnFamily::kSubkey).size(), 9u);  // e5 was deleted
  EXPECT_TRUE(batch.MayHaveWritten("e6"));
}

// A pop run stays usable while the batch deletes its keys in order, and is forgotten by any
// other write to `zset_score` (a put, an out-of-order deletion), a commit or a clear. Runs of a
// few sorted sets are kept at once.
TEST_F(BatchTest, PopRunsStayTheFirstKeysUnderTheirPrefix) {
  Batch batch(engine());
  auto next = [&](const std::string& prefix, bool descending) {
    const std::string* key = batch.NextOfPopRun(prefix, descending);
    return key == nullptr ? std::string("(none)") : *key;
  };
  batch.RememberPopRun("a", false, {"a1", "a3", "a5"});
  batch.RememberPopRun("b", true, {"b9", "b7"});
  EXPECT_EQ(next("a", false), "a1");
  EXPECT_EQ(next("a", true), "(none)");
  batch.Delete(ColumnFamily::kZsetScore, "a1");
  batch.Delete(ColumnFamily::kZsetScore, "b9");
  batch.Delete(ColumnFamily::kSubkey, "a3");  // another family: no effect
  EXPECT_EQ(next("a", false), "a3");
  EXPECT_EQ(next("b", true), "b7");
  // Puts before a run's last key join it in order; past it, or under another prefix, they
  // change nothing.
  batch.Put(ColumnFamily::kZsetScore, "a2", "");
  batch.Put(ColumnFamily::kZsetScore, "a4", "");
  batch.Put(ColumnFamily::kZsetScore, "a6", "");
  batch.Put(ColumnFamily::kZsetScore, "b8", "");
  batch.Put(ColumnFamily::kZsetScore, "c0", "");
  EXPECT_EQ(next("a", false), "a2");
  EXPECT_EQ(next("b", true), "b8");
  // A deletion inside the run removes that key; one of a key the run does not hold is ignored.
  batch.Delete(ColumnFamily::kZsetScore, "a4");
  batch.Delete(ColumnFamily::kZsetScore, "a35");
  for (std::string key : {"a2", "a3", "a5"}) {
    EXPECT_EQ(next("a", false), key);
    batch.Delete(ColumnFamily::kZsetScore, key);
  }
  EXPECT_EQ(next("a", false), "(none)");  // used up; a6 lies past what was read
  batch.Delete(ColumnFamily::kZsetScore, "b8");
  batch.Delete(ColumnFamily::kZsetScore, "b7");
  EXPECT_EQ(next("b", true), "(none)");

  // A run keeps at most kMaxPopRun keys: a put before the last drops the last.
  std::vector<std::string> many;
  for (int i = 0; i < 64; i++) many.push_back(std::string(1, 'd').append(std::to_string(100 + i)));
  batch.RememberPopRun("d", false, many);
  batch.Put(ColumnFamily::kZsetScore, "d050", "");
  EXPECT_EQ(next("d", false), "d050");
  for (int i = 0; i < 64; i++) batch.Delete(ColumnFamily::kZsetScore, next("d", false));
  EXPECT_EQ(next("d", false), "(none)");  // d163 was dropped, not taken

  // A range deletion in the family, a commit and a clear forget the runs.
  batch.RememberPopRun("a", false, {"a7", "a8"});
  batch.DeleteRange(ColumnFamily::kZsetScore, "x", "y");
  EXPECT_EQ(next("a", false), "(none)");
  batch.RememberPopRun("a", false, {"a7", "a8"});
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(next("a", false), "(none)");
  batch.RememberPopRun("a", false, {"a7", "a8"});
  batch.Clear();
  EXPECT_EQ(next("a", false), "(none)");
}

TEST_F(BatchTest, ManyUnindexedWritesDoNotClaimKeysTheyDidNotWrite) {
  // A pipelined group writes hundreds of members; reads of other members must still be known not
  // to need them (a 4096-bit filter claimed about a fifth of them after 1000 writes).
  Batch batch(engine());
  for (int i = 0; i < 1000; i++) {
    batch.Put(ColumnFamily::kSubkey, std::string(1, 'w').append(std::to_string(i)), "v");
  }
  for (int i = 0; i < 1000; i++) {
    EXPECT_TRUE(batch.MayHaveWritten(std::string(1, 'w').append(std::to_string(i)))) << i;
    EXPECT_FALSE(batch.MayHaveWritten(std::string(1, 'r').append(std::to_string(i)))) << i;
  }
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_FALSE(batch.MayHaveWritten("w1"));  // a commit forgets what the batch wrote
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

TEST_F(BatchTest, MemoryOnlyReadsNoteWhatNeedsTheDisk) {
  Batch writer(engine());
  for (int i = 0; i < 100; i++) {
    writer.Put(ColumnFamily::kSubkey, "flushed" + std::to_string(100 + i), std::string(500, 'f'));
  }
  ASSERT_TRUE(writer.Commit().ok());
  // The data blocks of a flushed file are on disk only until something reads them.
  ASSERT_TRUE(
      engine()->db()->Flush(rocksdb::FlushOptions(), engine()->cf(ColumnFamily::kSubkey)).ok());
  writer.Put(ColumnFamily::kSubkey, "memtable", "m");
  ASSERT_TRUE(writer.Commit().ok());

  Batch batch(engine());
  batch.set_memory_only(true);
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kSubkey, "memtable", &value).ok());
  EXPECT_EQ(value, "m");
  EXPECT_FALSE(batch.missed_memory());
  EXPECT_TRUE(batch.Get(ColumnFamily::kSubkey, "flushed150", &value).IsIncomplete());
  EXPECT_TRUE(batch.missed_memory());

  // An iterator that stops for the disk is noted too, though its caller only sees it end.
  Batch scan(engine());
  scan.set_memory_only(true);
  EXPECT_TRUE(Scan(scan, ColumnFamily::kSubkey).empty());
  EXPECT_TRUE(scan.missed_memory());

  // Once a read with the disk allowed has brought the blocks in, memory is enough.
  Batch reader(engine());
  ASSERT_EQ(Scan(reader, ColumnFamily::kSubkey).size(), 101u);
  EXPECT_FALSE(reader.missed_memory());
  Batch again(engine());
  again.set_memory_only(true);
  ASSERT_TRUE(again.Get(ColumnFamily::kSubkey, "flushed150", &value).ok());
  EXPECT_EQ(value, std::string(500, 'f'));
  EXPECT_EQ(Scan(again, ColumnFamily::kSubkey).size(), 101u);
  EXPECT_FALSE(again.missed_memory());
}

}  // namespace
}  // namespace basalt
