// SkipListMemTableFactory under a real RocksDB whose memtable never flushes during a test: every
// read below is answered by the skip list. The results are checked against a std::map model:
// point reads, forward and backward scans, Seek and SeekForPrev at random targets, reads at a
// snapshot (several versions of one key ordered by sequence number), ascending and descending
// insert runs (the splice the single writer reuses), concurrent writers, the newest memtable read
// directly, and each lookup path (RocksDB's comparator, inline bytewise, inline bytewise with the
// index by key; the index on its own is tested in memtable_index_test.cc, the warmed insert paths
// in skiplist_warming_test.cc).
#include "skiplist_memtable_fixture.h"

namespace basalt {
namespace {

TEST_P(SkipListMemTableTest, RandomWritesAgreeWithAModel) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::mt19937 rng(42);
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < 2000; i++) {
      std::string key = RandomKey(&rng);
      if (rng() % 4 == 0) {
        ASSERT_NO_FATAL_FAILURE(Delete(key));
      } else {
        ASSERT_NO_FATAL_FAILURE(Put(key, std::to_string(rng())));
      }
    }
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
  }
  std::string entries;
  ASSERT_TRUE(db_->GetProperty("rocksdb.num-entries-active-mem-table", &entries));
  EXPECT_EQ(entries, "10000");  // every write is still in the skip list
}

// Keys longer than a word that share most of their bytes, with bytes on both sides of 0x80: the
// inline comparison goes eight bytes at a time, then byte by byte, and bytes are unsigned.
TEST_P(SkipListMemTableTest, LongKeysWithHighBytesAgreeWithAModel) {
  ASSERT_NO_FATAL_FAILURE(Open());
  static const char kBytes[] = {'\x00', '\x01', '\x7f', '\x80', '\xfe', '\xff', 'a'};
  std::mt19937 rng(9);
  for (int i = 0; i < 3000; i++) {
    std::string key = std::string(rng() % 2 ? "prefix-0" : "prefix-1") + "shared";
    size_t tail = rng() % 13;
    for (size_t j = 0; j < tail; j++) key.push_back(kBytes[rng() % sizeof(kBytes)]);
    ASSERT_NO_FATAL_FAILURE(Put(key, std::to_string(i)));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

TEST_P(SkipListMemTableTest, SnapshotsSeeTheVersionOfTheirTime) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::mt19937 rng(5);
  std::vector<std::pair<const rocksdb::Snapshot*, Model>> snapshots;
  for (int round = 0; round < 6; round++) {
    for (int i = 0; i < 300; i++) {
      std::string key = RandomKey(&rng);
      if (rng() % 3 == 0) {
        ASSERT_NO_FATAL_FAILURE(Delete(key));
      } else {
        ASSERT_NO_FATAL_FAILURE(Put(key, "r" + std::to_string(round) + "-" + std::to_string(i)));
      }
    }
    snapshots.emplace_back(db_->GetSnapshot(), model_);
  }
  for (auto& [snapshot, model] : snapshots) {
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model, snapshot));
    db_->ReleaseSnapshot(snapshot);
  }
}

TEST_P(SkipListMemTableTest, AscendingAndDescendingRunsInterleaved) {
  ASSERT_NO_FATAL_FAILURE(Open());
  // Two lists growing at both ends, pushes alternating between them, the way LPUSH and RPUSH
  // write indexes: each run of inserts lands next to the previous one.
  for (int i = 0; i < 3000; i++) {
    char index[16];
    snprintf(index, sizeof(index), "%08d", 50000 - i);
    ASSERT_NO_FATAL_FAILURE(Put(std::string("left:") + index, "v"));
    snprintf(index, sizeof(index), "%08d", 50000 + i);
    ASSERT_NO_FATAL_FAILURE(Put(std::string("right:") + index, "v"));
    if (i % 7 == 0) {
      ASSERT_NO_FATAL_FAILURE(Put("middle:" + std::to_string(i), "v"));
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

std::string WriterKey(int writer, uint32_t n) {
  char key[32];
  snprintf(key, sizeof(key), "w%d:%u", writer, n);
  return key;
}

TEST_P(SkipListMemTableTest, ConcurrentWritersLoseNothing) {
  ASSERT_NO_FATAL_FAILURE(Open(/*concurrent_writes=*/true));
  constexpr int kWriters = 4, kPerBatch = 8;
  std::atomic<bool> done{false};
  std::atomic<int> disorder{0};
  std::thread reader([&] {
    while (!done.load()) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
      std::string last;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (!last.empty() && it->key().ToString() <= last) disorder++;
        last = it->key().ToString();
      }
    }
  });
  std::vector<int> batches =
      WriteInGroups(kWriters, [](int w, int, std::mt19937& rng, rocksdb::WriteBatch& batch) {
        for (int i = 0; i < kPerBatch; i++) ASSERT_TRUE(batch.Put(WriterKey(w, rng()), "v").ok());
      });
  done = true;
  reader.join();
  EXPECT_EQ(disorder.load(), 0);
  for (int w = 0; w < kWriters; w++) {
    std::mt19937 rng(w);
    for (int i = 0; i < batches[w] * kPerBatch; i++) {
      model_.emplace(WriterKey(w, rng()), std::string(1, 'v'));
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// Writers in one write group insert concurrently, and their sequence numbers interleave: several
// of them writing the same few keys put versions of a key into the memtable out of sequence
// order. A point lookup (through the index, when there is one) must still find, at any
// snapshot, the version an iterator over the list finds there.
TEST_P(SkipListMemTableTest, ConcurrentWritersOfTheSameKeysReadTheirNewestVersions) {
  ASSERT_NO_FATAL_FAILURE(Open(/*concurrent_writes=*/true));
  constexpr int kWriters = 4, kKeys = 24, kPerBatch = 8;
  auto key_of = [](uint32_t n) { return "same:" + std::to_string(n % kKeys); };
  std::atomic<bool> written{false};
  std::thread writing([&] {
    WriteInGroups(kWriters, [&](int w, int number, std::mt19937& rng, rocksdb::WriteBatch& batch) {
      for (int i = 0; i < kPerBatch; i++) {
        std::string value =
            std::to_string(w) + "-" + std::to_string(number) + "-" + std::to_string(i);
        uint32_t n = rng();
        // A key twice in one batch: its second value is the newer.
        ASSERT_TRUE((n % 5 == 0 ? batch.Delete(key_of(n)) : batch.Put(key_of(n), value)).ok());
      }
    });
    written = true;
  });
  // Snapshots all along: a later write of a key by a lone writer repairs the order of its
  // index chain, so a misplaced node shows only in the snapshots taken before that.
  std::vector<const rocksdb::Snapshot*> snapshots;
  while (!written.load() && snapshots.size() < 20000) {
    snapshots.push_back(db_->GetSnapshot());
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  writing.join();
  snapshots.push_back(nullptr);  // the latest state
  for (const rocksdb::Snapshot* snapshot : snapshots) {
    rocksdb::ReadOptions read;
    read.snapshot = snapshot;
    Model listed;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      listed[it->key().ToString()] = it->value().ToString();
    }
    for (int n = 0; n < kKeys; n++) {
      std::string key = key_of(n), got;
      rocksdb::Status s = db_->Get(read, key, &got);
      auto found = listed.find(key);
      ASSERT_EQ(s.ok(), found != listed.end()) << key << ": " << s.ToString();
      if (s.ok()) {
        ASSERT_EQ(got, found->second) << key;
      }
    }
    if (snapshot != nullptr) db_->ReleaseSnapshot(snapshot);
  }
}

// Only RocksDB's comparator knows a non-bytewise order; the engine passes bytewise=false for it.
TEST(SkipListMemTableComparator, ReverseOrderThroughRocksDBComparator) {
  char tmpl[] = "/tmp/basalt-skiplist-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  rocksdb::Options options;
  options.create_if_missing = true;
  options.comparator = rocksdb::ReverseBytewiseComparator();
  options.memtable_factory = std::make_shared<SkipListMemTableFactory>(false);
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, tmpl, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (const char* key : {"b", "a", "c", "ab"}) ASSERT_TRUE(db->Put({}, key, key).ok());
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator({}));
  std::string order;
  for (it->SeekToFirst(); it->Valid(); it->Next()) order += it->key().ToString() + " ";
  EXPECT_EQ(order, "c b ab a ");
  it.reset();
  db.reset();
  std::filesystem::remove_all(tmpl);
}

// The newest memtable read directly: every user key written to it, once, in order, with its
// newest entry (a value, or a deletion or merge, which are not values), from any Seek target.
// A memtable that does not compare bytewise is not read at all.
TEST_P(SkipListMemTableTest, NewestReaderSeesEachKeysNewestEntry) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::mt19937 rng(9);
  std::map<std::string, std::optional<std::string>> newest;  // nullopt: deleted or merged
  for (int i = 0; i < 3000; i++) {
    std::string key = RandomKey(&rng) + RandomKey(&rng);
    switch (rng() % 4) {
      case 0:
        ASSERT_NO_FATAL_FAILURE(Delete(key));
        newest[key] = std::nullopt;
        break;
      case 1:
        ASSERT_TRUE(db_->SingleDelete(rocksdb::WriteOptions(), key).ok());
        newest[key] = std::nullopt;
        break;
      default:
        ASSERT_NO_FATAL_FAILURE(Put(key, "v" + std::to_string(i)));
        newest[key] = "v" + std::to_string(i);
    }
  }
  for (const std::string& target :
       {std::string(), std::string("kb"), std::string("kcc"), std::string("zz"), RandomKey(&rng)}) {
    SkipListMemTableFactory::NewestReader reader = factory_->ReadNewest();
    reader.Seek(target);
    if (!bytewise()) {
      EXPECT_FALSE(reader.Valid());
      continue;
    }
    auto expected = newest.lower_bound(target);
    for (; reader.Valid(); reader.Next(), ++expected) {
      ASSERT_NE(expected, newest.end()) << "extra key " << reader.user_key().ToString();
      ASSERT_EQ(reader.user_key().ToString(), expected->first);
      ASSERT_EQ(reader.is_value(), expected->second.has_value()) << expected->first;
      if (reader.is_value()) {
        ASSERT_EQ(reader.value().ToString(), *expected->second);
      }
    }
    EXPECT_EQ(expected, newest.end()) << target;
  }
}

// Only the newest memtable is read: what a flush moved to a file, or an older memtable holds,
// is not there. A reader keeps its memtable alive: the flush that retires it waits.
TEST_P(SkipListMemTableTest, NewestReaderReadsOnlyTheNewestMemtable) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(Put("a", "1"));
  ASSERT_NO_FATAL_FAILURE(Put("c", "1"));
  if (!bytewise()) {  // not bytewise: nothing is read
    SkipListMemTableFactory::NewestReader reader = factory_->ReadNewest();
    reader.Seek("");
    EXPECT_FALSE(reader.Valid());
    return;
  }
  std::optional<SkipListMemTableFactory::NewestReader> reader(factory_->ReadNewest());
  std::thread flush([&] { ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  reader->Seek("b");  // the flushed memtable, still alive
  ASSERT_TRUE(reader->Valid());
  EXPECT_EQ(reader->user_key().ToString(), "c");
  reader.reset();
  flush.join();
  ASSERT_NO_FATAL_FAILURE(Put("b", "2"));
  SkipListMemTableFactory::NewestReader newest = factory_->ReadNewest();
  newest.Seek("");
  ASSERT_TRUE(newest.Valid());
  EXPECT_EQ(newest.user_key().ToString(), "b");
  EXPECT_EQ(newest.value().ToString(), "2");
  newest.Next();
  EXPECT_FALSE(newest.Valid());
}

INSTANTIATE_TEST_SUITE_P(EachLookupPath, SkipListMemTableTest,
                         ::testing::Values(Lookups::kRocksDBComparator, Lookups::kBytewise,
                                           Lookups::kIndexed),
                         LookupsName);

}  // namespace
}  // namespace basalt
