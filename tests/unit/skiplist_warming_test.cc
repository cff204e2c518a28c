// The skip-list memtable's warmed inserts (storage/skiplist_warming.cc), under the fixture of
// skiplist_memtable_fixture.h: the walks that find a batch's insert paths before RocksDB inserts
// it, the paths kept by the seeks and lookups that came first, runs of keys in one gap or in one
// direction, and concurrent writers; every result agrees with a model.
#include "skiplist_memtable_fixture.h"

#include <algorithm>
#include <random>

namespace basalt {
namespace {

class SkipListWarmingTest : public SkipListMemTableTest {
 protected:
  // Warms `keys`, writes them in one batch and notes them in the model; returns how many steps
  // the inserts took from their warmed paths.
  uint64_t WarmAndWrite(const std::vector<std::string>& keys, const std::string& value);
};

std::string Numbered(const char* prefix, int n) {
  char key[32];
  snprintf(key, sizeof(key), "%s%06d", prefix, n);
  return key;
}

// Warms the paths of `keys`; returns how many searches ran.
size_t Warm(SkipListMemTableFactory& factory, const std::vector<std::string>& keys) {
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  return factory.WarmInsertPaths(slices);
}

uint64_t SkipListWarmingTest::WarmAndWrite(const std::vector<std::string>& keys,
                                           const std::string& value) {
  rocksdb::WriteBatch batch;
  for (const std::string& key : keys) batch.Put(key, value);
  uint64_t steps = SkipListMemTableFactory::WarmedInsertStepsOnThisThread();
  Warm(*factory_, keys);
  EXPECT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
  for (const std::string& key : keys) model_[key] = value;
  return SkipListMemTableFactory::WarmedInsertStepsOnThisThread() - steps;
}

// Keys that each fall in a gap of their own are each searched; the walk ends for keys before,
// between and after the entries, on an empty memtable too. Only the bytewise path warms.
TEST_P(SkipListWarmingTest, WarmingSearchesEachKeyInAGapOfItsOwn) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::vector<std::string> keys = {Numbered("k", 5), "a", "z"};
  // An empty list is one gap, but all three keys start their lanes before the first ends.
  EXPECT_EQ(Warm(*factory_, keys), bytewise() ? 3u : 0u);
  for (int i = 0; i < 20000; i += 2) ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", i), "v"));
  keys.clear();
  // Distinct gaps: a key drawn twice could start its second search just as a lane found the
  // gap of its first, and be skipped (which depends on the list's random heights).
  std::vector<int> odd(10000);
  for (int i = 0; i < 10000; i++) odd[i] = 2 * i + 1;
  std::shuffle(odd.begin(), odd.end(), std::mt19937(3));
  for (int i = 0; i < 500; i++) keys.push_back(Numbered("k", odd[i]));
  keys.insert(keys.begin() + 100, "a");                // before every entry
  keys.insert(keys.begin() + 200, "z");                // after every entry
  keys.insert(keys.begin() + 300, Numbered("k", 40));  // equal to an entry
  EXPECT_EQ(Warm(*factory_, keys), bytewise() ? keys.size() : 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// A run of keys that land next to each other (pushes to one list) is searched once per lane that
// started before the first search found the gap, not once per key.
TEST_P(SkipListWarmingTest, WarmingSkipsKeysInTheGapJustFound) {
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int i = 0; i < 1000; i++) ASSERT_NO_FATAL_FAILURE(Put(Numbered("m", i), "v"));
  std::vector<std::string> descending, ascending;
  for (int i = 999; i >= 0; i--) descending.push_back(Numbered("l", i));
  for (int i = 0; i < 1000; i++) ascending.push_back(Numbered("n", i));
  // One search per lane at most, and none off the bytewise path.
  size_t most = bytewise() ? SkipListMemTableFactory::kWarmingLanes : 0;
  EXPECT_LE(Warm(*factory_, descending), most);
  EXPECT_LE(Warm(*factory_, ascending), most);
}

// Warming reads the newest memtable while writers fill it and flushes retire it; a walk must never
// reach a memtable RocksDB has freed (the sanitizer build checks this).
TEST_P(SkipListWarmingTest, WarmingFollowsMemtablesAcrossFlushes) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::atomic<bool> done{false};
  std::atomic<size_t> searches{0};
  std::thread warmer([&] {
    std::mt19937 rng(11);
    while (!done.load()) {
      std::vector<std::string> keys;
      for (int i = 0; i < 64; i++) keys.push_back(Numbered("k", static_cast<int>(rng() % 100000)));
      searches += Warm(*factory_, keys);
    }
  });
  std::mt19937 rng(5);
  for (int round = 0; round < 20; round++) {
    rocksdb::WriteBatch batch;
    for (int i = 0; i < 500; i++) batch.Put(Numbered("k", static_cast<int>(rng() % 100000)), "v");
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
    ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  }
  done = true;
  warmer.join();
  EXPECT_EQ(searches.load() > 0, bytewise());
}

// Inserts start from the paths the warming walks left: batches of puts and deletions at random
// places, runs in one gap, keys before and after every entry, the same key twice, keys warmed but
// not written and written but not warmed, other inserts landing in the paths between the walk
// and the write, and a flush in between (a new memtable, where no path applies). Every insert of
// a warmed key, in warming order, uses its path; the result agrees with a model.
TEST_P(SkipListWarmingTest, InsertsFromWarmedPathsAgreeWithAModel) {
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int i = 0; i < 20000; i += 4) ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", i), "v"));
  std::mt19937 rng(17);
  for (int round = 0; round < 60; round++) {
    rocksdb::WriteBatch batch;
    std::vector<std::pair<std::string, std::optional<std::string>>> ops;  // nullopt: deletion
    int start = static_cast<int>(rng() % 20000);
    for (int i = 0; i < 40; i++) {
      std::string key = i % 10 == 9  ? (i % 20 == 9 ? "a" : "z")  // before / after every entry
                        : i % 5 == 0 ? Numbered("k", start + i)   // a run in one gap
                                     : Numbered("k", static_cast<int>(rng() % 20000));
      if (rng() % 4 == 0) {
        ops.emplace_back(key, std::nullopt);
      } else {
        ops.emplace_back(key, "r" + std::to_string(round));
      }
      if (i == 7) ops.emplace_back(key, "again");  // the same key twice
    }
    std::vector<std::string> written, warmed;
    for (const auto& [key, value] : ops) {
      value ? batch.Put(key, *value) : batch.Delete(key);
      written.push_back(key);
    }
    warmed = written;
    if (round % 3 == 1) warmed.erase(warmed.begin() + 5);         // written but not warmed
    if (round % 3 == 2) warmed.insert(warmed.begin() + 5, "k*");  // warmed but not written
    uint64_t before = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread();
    Warm(*factory_, warmed);
    // Entries that land in the recorded paths after the walk, before the batch's inserts; no
    // warmed key ends in '+', so they take no path.
    for (int i = 0; i < 3; i++) {
      ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", static_cast<int>(rng() % 20000)) + "+", "p"));
    }
    bool flushed = round % 10 == 0;
    if (flushed) {
      ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
    }
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
    for (const auto& [key, value] : ops) {
      if (value) {
        model_[key] = *value;
      } else {
        model_.erase(key);
      }
    }
    // Each insert matches the next warmed key or nothing; a new memtable matches nothing.
    size_t expected = 0;
    if (bytewise() && !flushed) {
      size_t next = 0;
      for (const std::string& key : written) {
        if (next < warmed.size() && warmed[next] == key) next++, expected++;
      }
    }
    EXPECT_EQ(SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() - before, expected)
        << "round " << round;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// A random pop seeks a point and deletes the entry it finds; the path its seek walked is kept for
// that key, and the warming starts the key's search there. Rounds of such seeks and writes, with
// keys kept but not written, written but not kept, kept for a key before its seek's target (a
// path that does not fit, so not used), entries landing in the paths between the seek and the
// write, and a flush between the seeks and the warming (the kept paths are the old memtable's):
// every insert uses a warmed path, the warming steps over far fewer nodes than searches from the
// head do, and the result agrees with a model.
TEST_P(SkipListWarmingTest, WarmingStartsFromTheSeeksThatFoundTheKeys) {
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int i = 0; i < 40000; i += 2) ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", i), "v"));
  std::mt19937 rng(29);
  uint64_t steps_kept = 0, steps_unkept = 0;
  for (int round = 0; round < 40; round++) {
    const bool keep = round % 2 == 0;
    const bool flushed = round % 10 == 4;
    std::vector<std::string> keys;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (int i = 0; i < 48; i++) {
      it->Seek(Numbered("k", static_cast<int>(rng() % 40000)));
      if (!it->Valid()) continue;
      std::string found = it->key().ToString();
      if (std::find(keys.begin(), keys.end(), found) != keys.end()) continue;
      if (keep && i == 10) factory_->KeepLastSeekFor("a");            // before its target
      if (keep && i == 20) factory_->KeepLastSeekFor("k-unwritten");  // kept, not written
      if (keep && i != 30) factory_->KeepLastSeekFor(found);          // i == 30: not kept
      keys.push_back(found);
    }
    it.reset();
    keys.push_back("a");
    rocksdb::WriteBatch batch;
    for (const std::string& key : keys) batch.Delete(key);
    for (int i = 0; i < 3; i++) {
      ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", static_cast<int>(rng() % 40000)) + "+", "p"));
    }
    if (flushed) {
      ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
    }
    uint64_t inserts = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread();
    uint64_t steps = SkipListMemTableFactory::WarmingStepsOnThisThread();
    Warm(*factory_, keys);
    steps = SkipListMemTableFactory::WarmingStepsOnThisThread() - steps;
    if (!flushed) {
      (keep ? steps_kept : steps_unkept) += steps;
    }
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
    SkipListMemTableFactory::ForgetKeptSeeks();
    for (const std::string& key : keys) model_.erase(key);
    EXPECT_EQ(SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() - inserts,
              bytewise() ? keys.size() : 0u)
        << "round " << round;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
  if (bytewise()) {
    // A search from the head steps to ~17 nodes in a list of ~20000 entries; one from its seek's
    // path to one or two (16.7k against 1.3k steps over the rounds when this was written).
    EXPECT_LT(steps_kept * 5, steps_unkept);
  } else {
    EXPECT_EQ(steps_kept + steps_unkept, 0u);
  }
}

// Batches whose keys run in one direction (pops from one end of a list delete one existing element
// after another) are warmed one search after another, each from the last one's path: runs of
// neighbours, of keys far apart, before and after every entry, ascending and descending, with
// entries landing in the paths between the walk and the write. Each key in a gap of its own is
// searched, each insert uses its path, and the result agrees with a model.
TEST_P(SkipListWarmingTest, SortedRunsWarmFromTheLastPath) {
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int i = 0; i < 20000; i += 2) ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", i), "v"));
  std::mt19937 rng(23);
  for (int round = 0; round < 40; round++) {
    std::vector<std::string> keys;
    if (round % 4 == 0) keys.push_back("a");  // before every entry
    int at = static_cast<int>(rng() % 18000);
    for (int i = 0; i < 48; i++) {
      // Mostly neighbours (existing entries, each in a gap of its own), sometimes a jump.
      at += rng() % 8 == 0 ? static_cast<int>(rng() % 3000) : 2;
      keys.push_back(Numbered("k", at % 20000));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (round % 4 == 1) keys.push_back("z");  // after every entry
    if (round % 2 == 1) std::reverse(keys.begin(), keys.end());
    rocksdb::WriteBatch batch;
    std::vector<std::optional<std::string>> values;  // nullopt: deletion
    for (const std::string& key : keys) {
      if (rng() % 3 == 0) {
        values.push_back("r" + std::to_string(round));
        batch.Put(key, *values.back());
      } else {
        values.push_back(std::nullopt);
        batch.Delete(key);
      }
    }
    uint64_t before = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread();
    size_t searches = Warm(*factory_, keys);
    // Every key sits in a gap of its own: the entries written so far are all different keys.
    EXPECT_EQ(searches, bytewise() ? keys.size() : 0u) << "round " << round;
    for (int i = 0; i < 3; i++) {
      ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", static_cast<int>(rng() % 20000)) + "+", "p"));
    }
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
    for (size_t i = 0; i < keys.size(); i++) {
      if (values[i]) {
        model_[keys[i]] = *values[i];
      } else {
        model_.erase(keys[i]);
      }
    }
    EXPECT_EQ(SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() - before,
              bytewise() ? keys.size() : 0u)
        << "round " << round;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// New keys that all fall in one gap share one warmed path. An ascending run of them (RPUSH, ZADD
// with rising scores, a load of sequential keys) starts each insert from the one before it, a
// descending run (LPUSH) from the path, and both end where a model says.
TEST_P(SkipListWarmingTest, RunsInOneGapInsertInOrder) {
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int i = 0; i < 1000; i++) {
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("l", i), "v"));
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("n", i), "v"));
  }
  for (int round = 0; round < 6; round++) {
    std::vector<std::string> keys;
    for (int i = 0; i < 200; i++) keys.push_back(Numbered("m", round * 1000 + i));
    if (round % 2 == 1) std::reverse(keys.begin(), keys.end());
    rocksdb::WriteBatch batch;
    for (const std::string& key : keys) batch.Put(key, "r" + std::to_string(round));
    uint64_t before = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread();
    EXPECT_EQ(Warm(*factory_, keys), bytewise() ? 1u : 0u) << "round " << round;
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
    for (const std::string& key : keys) model_[key] = "r" + std::to_string(round);
    EXPECT_EQ(SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() - before,
              bytewise() ? keys.size() : 0u)
        << "round " << round;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// A descending run in one gap (LPUSH) links each key after the run's first straight after the
// nodes that precede the run, without a search: at the front of the list, where the gap's path
// is the head on every level, each of them searched from the top. In a gap in the middle too;
// an ascending run does not, and the list still agrees with a model.
TEST_P(SkipListWarmingTest, DescendingRunsLinkAfterTheNodesBeforeThem) {
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int i = 0; i < 1000; i++) {
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("l", i), "v"));
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("n", i), "v"));
  }
  for (const char* prefix : {"a", "m"}) {  // before every entry, and between "l" and "n"
    for (int round = 0; round < 4; round++) {
      // Each round's keys before the last round's, as successive LPUSH batches write them.
      std::vector<std::string> keys;
      for (int i = 0; i < 500; i++) keys.push_back(Numbered(prefix, 100000 - round * 500 - i));
      uint64_t before = SkipListMemTableFactory::InsertsBeforeRunsOnThisThread();
      WarmAndWrite(keys, "r" + std::to_string(round));
      uint64_t linked = SkipListMemTableFactory::InsertsBeforeRunsOnThisThread() - before;
      // All but the run's first, and the few that link higher than any node of the run before
      // them on levels whose nodes before the run nothing searched (a new record height is
      // about one in log2 of the run's length).
      if (bytewise()) {
        EXPECT_GE(linked, keys.size() - 10) << prefix << " round " << round;
        EXPECT_LE(linked, keys.size() - 1) << prefix << " round " << round;
      } else {
        EXPECT_EQ(linked, 0u) << prefix << " round " << round;
      }
    }
  }
  std::vector<std::string> ascending;
  for (int i = 0; i < 500; i++) ascending.push_back(Numbered("m", 200000 + i));
  uint64_t before = SkipListMemTableFactory::InsertsBeforeRunsOnThisThread();
  WarmAndWrite(ascending, "up");
  EXPECT_EQ(SkipListMemTableFactory::InsertsBeforeRunsOnThisThread() - before, 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// A long ascending run in one gap (a set of thousands moved to a new incarnation, a long RPUSH)
// inserts in steps that do not grow with the run: each insert starts every level from the run's
// last node there. Starting the levels above the last insert's height from the gap instead made
// a node taller than the one before it walk over the whole run so far.
TEST_P(SkipListWarmingTest, LongRunsInOneGapInsertInStepsThatDoNotGrow) {
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int i = 0; i < 1000; i++) {
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("l", i), "v"));
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("n", i), "v"));
  }
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; i++) keys.push_back(Numbered("m", i));
  rocksdb::WriteBatch batch;
  for (const std::string& key : keys) batch.Put(key, "r");
  uint64_t steps = SkipListMemTableFactory::WarmedInsertStepsOnThisThread();
  uint64_t inserts = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread();
  Warm(*factory_, keys);
  ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
  steps = SkipListMemTableFactory::WarmedInsertStepsOnThisThread() - steps;
  inserts = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() - inserts;
  for (const std::string& key : keys) model_[key] = "r";
  // Each insert starts right before its place (measured: no step at all for the 20k inserts;
  // 38.1M steps before the fix). Off the bytewise path nothing is warmed.
  EXPECT_EQ(inserts, bytewise() ? keys.size() : 0u);
  EXPECT_LT(steps, keys.size());
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// Once the list is large enough for a Summit, warming searches start at its level and leave the
// head as their path above it. An insert that links higher still starts each of those levels
// where the level above left it: starting them from the head walked each whole level (measured
// in the memtable bench: 2.4 steps per insert, 0.06 after the fix).
TEST_P(SkipListWarmingTest, TallInsertsAboveTheSummitDoNotWalkWholeLevels) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::mt19937 rng(17);
  for (int i = 0; i < 20000; i++) {
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("k", static_cast<int>(rng() % 1000000)), "v"));
  }
  uint64_t steps = SkipListMemTableFactory::WarmedInsertStepsOnThisThread();
  uint64_t inserts = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread();
  size_t written = 0;
  for (int round = 0; round < 1250; round++) {
    std::vector<std::string> keys;
    for (int i = 0; i < 16; i++) keys.push_back(Numbered("k", static_cast<int>(rng() % 1000000)));
    rocksdb::WriteBatch batch;
    for (const std::string& key : keys) batch.Put(key, "w");
    Warm(*factory_, keys);
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
    for (const std::string& key : keys) model_[key] = "w";
    written += keys.size();
  }
  steps = SkipListMemTableFactory::WarmedInsertStepsOnThisThread() - steps;
  inserts = SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() - inserts;
  EXPECT_EQ(inserts, bytewise() ? written : 0u);
  // One in 64 inserts links above the Summit of a list this size (level 5 of 20k entries):
  // walking those levels from the head cost about 4 steps per insert (0.14 from the level above).
  EXPECT_LT(steps, written / 2);
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// A large batch into an empty memtable, in an order that goes back inside the run so far (MSET
// key:0 ... key:69999 is key:1, key:10, key:100, ... in key order). Its paths were warmed when
// the list had one level, and each insert walked level 0 from the gap over the run so far (a
// 70k-key MSET took 7 s of a worker): the inserts search from the top instead.
TEST_P(SkipListWarmingTest, RunsThatGoBackInsideThemselvesDoNotWalkTheRun) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; i++) keys.push_back("key:" + std::to_string(i));
  uint64_t steps = WarmAndWrite(keys, "v");
  // Measured: 24k steps (about one per insert); 50M with the inserts walking level 0 from the
  // gap's path.
  EXPECT_LT(steps, 5 * keys.size());
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// Batches in no order into one gap of a memtable that already holds many entries: the server
// writes an MSET's keys in hash order, after the keys of the MSET before it. The warmed path is
// as tall as the list there, so the inserts started from it, and from the last insert, which
// walked level 0 over the run between the two keys (a 70k-key MSET took 5 s of a worker).
TEST_P(SkipListWarmingTest, RunsInNoOrderDoNotWalkTheRun) {
  ASSERT_NO_FATAL_FAILURE(Open());
  std::mt19937 rng(5);
  for (const char* prefix : {"key:", "other:", "aaa:"}) {
    std::vector<std::string> keys;
    for (int i = 0; i < 20000; i++) keys.push_back(prefix + std::to_string(i));
    std::shuffle(keys.begin(), keys.end(), rng);
    uint64_t steps = WarmAndWrite(keys, "v");
    // A search down from the run's top level: measured 12-14 steps per insert, where starting
    // from the last insert took 43 for the second batch and 3,082 for the third.
    EXPECT_LT(steps, 40 * keys.size()) << prefix;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(model_));
}

// The same with another writer writing all along, so that RocksDB puts the runs' batches in one
// write group with its batches and every writer inserts its own at once (InsertConcurrently),
// in some rounds at least: whichever path a run takes, its inserts do not walk over the run so
// far, and the result agrees with a model.
TEST_P(SkipListWarmingTest, LongRunsInOneGapInsertInStepsThatDoNotGrowBesideOtherWriters) {
  ASSERT_NO_FATAL_FAILURE(Open(/*concurrent_writes=*/true));
  for (int i = 0; i < 1000; i++) {
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("l", i), "v"));
    ASSERT_NO_FATAL_FAILURE(Put(Numbered("n", i), "v"));
  }
  std::atomic<bool> done{false};
  std::thread other([&] {
    for (int i = 0; !done.load(); i++) {
      ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), Numbered("o", i % 100000), "o").ok());
    }
  });
  uint64_t steps = 0;
  size_t inserted = 0;
  for (int round = 0; round < 20; round++) {
    std::vector<std::string> keys;
    for (int i = 0; i < 5000; i++) keys.push_back(Numbered("m", round * 10000 + i));
    rocksdb::WriteBatch batch;
    for (const std::string& key : keys) batch.Put(key, "r");
    uint64_t before = SkipListMemTableFactory::WarmedInsertStepsOnThisThread();
    Warm(*factory_, keys);
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &batch).ok());
    steps += SkipListMemTableFactory::WarmedInsertStepsOnThisThread() - before;
    for (const std::string& key : keys) model_[key] = "r";
    inserted += keys.size();
  }
  done = true;
  other.join();
  // A few steps per insert: an insert alongside other writers searches down from the gap's path
  // (measured: 5.4 per insert; 1656 when each level started from the gap, 165.6M in all).
  EXPECT_LT(steps, 20 * inserted);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  auto expected = model_.lower_bound("m");
  for (it->Seek("m"); it->Valid() && it->key().starts_with("m"); it->Next(), ++expected) {
    ASSERT_NE(expected, model_.end());
    ASSERT_EQ(it->key().ToString(), expected->first);
  }
  EXPECT_TRUE(expected == model_.end() || !std::string_view(expected->first).starts_with("m"));
}

INSTANTIATE_TEST_SUITE_P(EachLookupPath, SkipListWarmingTest,
                         ::testing::Values(Lookups::kRocksDBComparator, Lookups::kBytewise,
                                           Lookups::kIndexed),
                         LookupsName);

}  // namespace
}  // namespace basalt
