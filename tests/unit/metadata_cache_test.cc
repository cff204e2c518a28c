// MetadataCache (storage/metadata_cache.h) on its own: lookups, the rule that an entry is only
// replaced by a state at least as new, the floors that keep reads begun before a dropped entry
// out, Clear/Reset, the capacity, and a randomized check against a model of committed history.
// Then inside the engine, over a real RocksDB: the batch-header sequence numbers it relies on,
// reads under concurrent writers with a cache small enough to evict all the time, range
// deletions, batches, and expired entries kept out.
#include "storage/metadata_cache.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/coding.h"
#include "keyspace_fixture.h"
#include "storage/batch.h"
#include "storage/engine.h"

namespace basalt {
namespace {

// "<prefix><n>" (built without operator+, which GCC 12 at -O3 warns about wrongly).
std::string Numbered(const char* prefix, int n) {
  std::string out(prefix);
  out += std::to_string(n);
  return out;
}

constexpr size_t kMiB = 1 << 20;

std::optional<std::string> Read(MetadataCache& cache, const std::string& key, bool* hit) {
  std::string value;
  MetadataCache::Lookup found = cache.Get(key, &value);
  *hit = found != MetadataCache::Lookup::kMiss;
  if (found == MetadataCache::Lookup::kPresent) return value;
  return std::nullopt;
}

// "miss", "absent" or the value.
std::string Show(MetadataCache& cache, const std::string& key) {
  bool hit;
  std::optional<std::string> v = Read(cache, key, &hit);
  if (!hit) return "miss";
  return v ? *v : "absent";
}

void Put(MetadataCache& cache, uint64_t seq, const std::string& key, const std::string& value) {
  std::string_view v(value);
  cache.Apply(seq, key, &v);
}

void FillWith(MetadataCache& cache, const MetadataCache::Ticket& t, const std::string& key,
              const std::string& value) {
  std::string_view v(value);
  cache.Fill(t, key, &v);
}

TEST(MetadataCacheTest, AnswersPresentAndAbsentKeys) {
  MetadataCache cache(kMiB);
  EXPECT_EQ(Show(cache, "a"), "miss");
  Put(cache, 10, "a", "one");
  EXPECT_EQ(Show(cache, "a"), "one");
  cache.Apply(11, "a", nullptr);
  EXPECT_EQ(Show(cache, "a"), "absent");
  cache.Fill(cache.TakeTicket(11), "b", nullptr);
  EXPECT_EQ(Show(cache, "b"), "absent");
  FillWith(cache, cache.TakeTicket(11), "c", "three");
  EXPECT_EQ(Show(cache, "c"), "three");
  MetadataCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.entries, 3);
  EXPECT_EQ(stats.hits, 4);
  EXPECT_EQ(stats.misses, 1);
}

// Prefetching slots without the shards' locks changes no answer, before and after the shards'
// tables have grown under it.
TEST(MetadataCacheTest, PrefetchingSlotsChangesNothing) {
  MetadataCache cache(64 * kMiB);
  std::vector<std::string> keys;
  for (int i = 0; i < 100000; i++) keys.push_back("key:" + std::to_string(i));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  auto value_of = [](int i) {
    std::string value = "v";
    value += std::to_string(i);
    return value;
  };
  cache.PrefetchSlots(views);
  for (int i = 0; i < 100000; i += 2) Put(cache, 10 + i, keys[i], value_of(i));
  cache.PrefetchSlots(views);
  for (int i = 0; i < 100000; i++) {
    EXPECT_EQ(Show(cache, keys[i]), i % 2 == 0 ? value_of(i) : "miss") << keys[i];
  }
}

TEST(MetadataCacheTest, OlderStatesNeverReplaceNewerOnes) {
  MetadataCache cache(kMiB);
  MetadataCache::Ticket before = cache.TakeTicket(5);
  Put(cache, 10, "k", "new");
  FillWith(cache, before, "k", "old");  // a read that began before the write, offered late
  EXPECT_EQ(Show(cache, "k"), "new");
  Put(cache, 8, "k", "older write");  // an Apply that lost the race to a newer one
  EXPECT_EQ(Show(cache, "k"), "new");
  Put(cache, 12, "k", "newer and longer");
  EXPECT_EQ(Show(cache, "k"), "newer and longer");
}

TEST(MetadataCacheTest, InvalidateKeepsEarlierReadsOut) {
  MetadataCache cache(kMiB);
  Put(cache, 10, "k", "v");
  cache.Invalidate(20, "k");
  EXPECT_EQ(Show(cache, "k"), "miss");
  FillWith(cache, cache.TakeTicket(15), "k", "v");
  EXPECT_EQ(Show(cache, "k"), "miss");
  FillWith(cache, cache.TakeTicket(20), "k", "merged");
  EXPECT_EQ(Show(cache, "k"), "merged");
}

TEST(MetadataCacheTest, LongKeysAreNotHeld) {
  MetadataCache cache(kMiB);
  std::string key(MetadataCache::kMaxKeyBytes + 1, 'k');
  Put(cache, 10, key, "v");
  EXPECT_EQ(Show(cache, key), "miss");
  FillWith(cache, cache.TakeTicket(10), key, "v");
  EXPECT_EQ(Show(cache, key), "miss");
  key.pop_back();
  Put(cache, 11, key, "v");
  EXPECT_EQ(Show(cache, key), "v");
}

TEST(MetadataCacheTest, LongValuesAreNotHeldAndKeepEarlierReadsOut) {
  MetadataCache cache(kMiB);
  Put(cache, 10, "k", "short");
  Put(cache, 11, "k", std::string(MetadataCache::kMaxValueBytes + 1, 'x'));
  EXPECT_EQ(Show(cache, "k"), "miss");
  FillWith(cache, cache.TakeTicket(10), "k", "short");
  EXPECT_EQ(Show(cache, "k"), "miss");
  FillWith(cache, cache.TakeTicket(11), "k", std::string(MetadataCache::kMaxValueBytes + 1, 'x'));
  EXPECT_EQ(Show(cache, "k"), "miss");
}

TEST(MetadataCacheTest, EvictionKeepsWithinCapacityAndRefusesReadsOlderThanWhatItDropped) {
  const size_t capacity = 64 * 1024;
  MetadataCache cache(capacity);
  MetadataCache::Ticket early = cache.TakeTicket(50);
  for (int i = 0; i < 20000; i++) Put(cache, 100 + i, Numbered("key", i), "value");
  MetadataCache::Stats stats = cache.stats();
  EXPECT_LE(static_cast<size_t>(stats.bytes), capacity);
  EXPECT_GT(stats.entries, 100);
  EXPECT_LT(stats.entries, 20000);
  int evicted = 0, refilled = 0;
  for (int i = 0; i < 20000; i++) {
    std::string key = Numbered("key", i);
    if (Show(cache, key) != "miss") continue;
    evicted++;
    FillWith(cache, early, key, "stale");  // read before the dropped write: refused
    if (Show(cache, key) != "miss") refilled++;
  }
  EXPECT_GT(evicted, 0);
  EXPECT_EQ(refilled, 0);
}

TEST(MetadataCacheTest, ClearRefusesReadsBeganBeforeIt) {
  MetadataCache cache(kMiB);
  Put(cache, 10, "a", "1");
  cache.Clear(50);
  EXPECT_EQ(Show(cache, "a"), "miss");
  FillWith(cache, cache.TakeTicket(40), "a", "1");
  EXPECT_EQ(Show(cache, "a"), "miss");
  FillWith(cache, cache.TakeTicket(50), "a", "2");
  EXPECT_EQ(Show(cache, "a"), "2");
}

TEST(MetadataCacheTest, ResetRefusesTicketsTakenBeforeItAndForgetsFloors) {
  MetadataCache cache(kMiB);
  Put(cache, 1000, "a", "old database");
  MetadataCache::Ticket before = cache.TakeTicket(1000);
  cache.Reset();
  EXPECT_EQ(Show(cache, "a"), "miss");
  FillWith(cache, before, "a", "old database");
  EXPECT_EQ(Show(cache, "a"), "miss");
  FillWith(cache, cache.TakeTicket(3), "a", "new database");  // sequences start over
  EXPECT_EQ(Show(cache, "a"), "new database");
}

TEST(MetadataCacheTest, DisabledCacheHoldsNothingAndForgetsReadsBeganWhileDisabled) {
  MetadataCache cache(0);
  Put(cache, 10, "a", "1");
  EXPECT_EQ(Show(cache, "a"), "miss");
  MetadataCache::Ticket while_disabled = cache.TakeTicket(10);
  cache.SetCapacity(kMiB);
  FillWith(cache, while_disabled, "a", "1");  // writes were not applied meanwhile
  EXPECT_EQ(Show(cache, "a"), "miss");
  Put(cache, 11, "a", "2");
  EXPECT_EQ(Show(cache, "a"), "2");
  cache.SetCapacity(0);
  EXPECT_EQ(Show(cache, "a"), "miss");
  EXPECT_EQ(cache.stats().entries, 0);
}

TEST(MetadataCacheTest, ACompleteCacheAnswersMissesAsAbsent) {
  MetadataCache cache(kMiB);
  cache.MarkComplete();
  EXPECT_EQ(cache.stats().complete_shards, MetadataCache::kShards);
  EXPECT_EQ(Show(cache, "never written"), "absent");
  Put(cache, 10, "a", "1");
  EXPECT_EQ(Show(cache, "a"), "1");
  cache.Apply(11, "a", nullptr);
  EXPECT_EQ(Show(cache, "a"), "absent");
  MetadataCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.misses, 0);
  EXPECT_EQ(stats.hits, 3);
  // A disabled cache is never complete.
  MetadataCache disabled(0);
  disabled.MarkComplete();
  EXPECT_EQ(disabled.stats().complete_shards, 0);
  EXPECT_EQ(Show(disabled, "x"), "miss");
}

// Each way a shard can lose a present key makes its misses misses again; the other shards stay
// complete.
TEST(MetadataCacheTest, CompletenessEndsWhereAPresentKeyIsForgotten) {
  auto shards_after = [](auto&& lose) {
    MetadataCache cache(kMiB);
    cache.MarkComplete();
    lose(cache);
    return cache.stats().complete_shards;
  };
  const int64_t all = MetadataCache::kShards;
  EXPECT_EQ(shards_after([](MetadataCache& c) { c.Invalidate(10, "merged"); }), all - 1);
  EXPECT_EQ(shards_after([](MetadataCache& c) {
              Put(c, 10, "long", std::string(MetadataCache::kMaxValueBytes + 1, 'x'));
            }),
            all - 1);
  EXPECT_EQ(shards_after([](MetadataCache& c) {
              Put(c, 10, std::string(MetadataCache::kMaxKeyBytes + 1, 'k'), "v");
            }),
            all - 1);
  EXPECT_EQ(shards_after([](MetadataCache& c) { c.Clear(10); }), 0);
  EXPECT_EQ(shards_after([](MetadataCache& c) { c.Reset(); }), 0);
  EXPECT_EQ(shards_after([](MetadataCache& c) { c.SetCapacity(0); }), 0);
  // A write refused at the floor (a failed write raised it) is a key the shard does not know.
  EXPECT_EQ(shards_after([](MetadataCache& c) {
              c.Invalidate(50, "k");  // floor 50 in k's shard, which is no longer complete
              c.MarkComplete();
              Put(c, 40, "k", "v");
            }),
            all - 1);
  // Deletions, absent entries and their eviction lose nothing.
  EXPECT_EQ(shards_after([](MetadataCache& c) {
              c.Apply(10, "gone", nullptr);
              c.Fill(c.TakeTicket(10), "absent", nullptr);
            }),
            all);

  // Evicting present entries: misses there are misses again, never "absent".
  MetadataCache small(16 * 1024);
  small.MarkComplete();
  for (int i = 0; i < 5000; i++) Put(small, 100 + i, Numbered("key", i), "value");
  EXPECT_LT(small.stats().complete_shards, MetadataCache::kShards);
  int missed = 0;
  for (int i = 0; i < 5000; i++) {
    std::string shown = Show(small, Numbered("key", i));
    EXPECT_NE(shown, "absent") << i;
    if (shown == "miss") missed++;
  }
  EXPECT_GT(missed, 0);
}

TEST(MetadataCacheTest, PrefetchChangesNothingTheCacheHolds) {
  MetadataCache cache(kMiB);
  Put(cache, 10, "a", "one");
  cache.Apply(11, "b", nullptr);
  EXPECT_EQ(Show(cache, "a"), "one");
  const MetadataCache::Stats before = cache.stats();
  std::vector<std::string_view> keys = {"a", "b", "never written", "a"};
  cache.Prefetch(keys);
  cache.Prefetch({});
  const MetadataCache::Stats after = cache.stats();
  EXPECT_EQ(after.hits, before.hits);
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.entries, before.entries);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(Show(cache, "a"), "one");
  EXPECT_EQ(Show(cache, "b"), "absent");
  EXPECT_EQ(Show(cache, "never written"), "miss");
}

// Prefetch reads the shards' slot arrays while other threads insert (growing the arrays, which
// frees the old ones) and evict. Under the sanitizers (tools/sanitize) a read outside the
// shard's lock would show up here as a use after free; in any build, every write stays
// readable afterwards.
TEST(MetadataCacheTest, PrefetchWhileOtherThreadsGrowAndEvictTheShards) {
  MetadataCache cache(4 * kMiB);
  const int kKeys = 40000;
  std::atomic<bool> done{false};
  std::thread prefetcher([&] {
    std::vector<std::string> names;
    for (int i = 0; i < 64; i++) names.push_back(Numbered("key", i * 601));
    std::vector<std::string_view> keys(names.begin(), names.end());
    while (!done.load()) cache.Prefetch(keys);
  });
  for (int i = 0; i < kKeys; i++) Put(cache, 10 + i, Numbered("key", i), Numbered("v", i));
  done = true;
  prefetcher.join();
  int held = 0;
  for (int i = kKeys - 1000; i < kKeys; i++) {
    std::string shown = Show(cache, Numbered("key", i));
    if (shown == "miss") continue;  // evicted
    EXPECT_EQ(shown, Numbered("v", i));
    held++;
  }
  EXPECT_GT(held, 0);
}

// A model of committed history: writes get increasing sequence numbers; a read takes its ticket,
// observes the state at some later moment and offers it afterwards, possibly after more writes.
// Whatever the interleaving and however much is evicted, a hit must be the latest state.
// With the cache marked complete at the start (when every key is absent), its misses are
// answers too, and must be the latest state as well.
TEST(MetadataCacheTest, RandomHistoriesNeverReturnAReplacedState) {
  int all_hits = 0;
  for (auto [capacity, complete] : {std::pair{size_t{16384}, false},
                                    {size_t{131072}, false},
                                    {kMiB, false},
                                    {size_t{16384}, true},
                                    {kMiB, true}}) {
    MetadataCache cache(capacity);
    if (complete) cache.MarkComplete();
    std::mt19937_64 rng(capacity + complete);
    const int kKeys = 300;
    // key -> [(sequence, state)], state nullopt = absent
    std::vector<std::vector<std::pair<uint64_t, std::optional<std::string>>>> history(kKeys);
    uint64_t seq = 10;  // tickets reach back up to two sequence numbers
    auto state_at = [&](int key, uint64_t at) -> std::optional<std::string> {
      std::optional<std::string> state;
      for (const auto& [s, v] : history[key])
        if (s <= at) state = v;
      return state;
    };
    struct PendingRead {
      MetadataCache::Ticket ticket;
      int key;
      std::optional<std::string> seen;
    };
    std::vector<PendingRead> pending;
    int hits = 0;
    for (int step = 0; step < 60000; step++) {
      int key = static_cast<int>(rng() % kKeys);
      std::string name = Numbered("k", key);
      switch (rng() % 4) {
        case 0: {  // commit a write
          seq++;
          std::optional<std::string> v;
          int kind = static_cast<int>(rng() % 10);
          if (kind == 0) {
            cache.Apply(seq, name, nullptr);
          } else {
            v = std::string(kind == 1 ? MetadataCache::kMaxValueBytes + 5 : rng() % 40, 'a');
            v->append(std::to_string(seq));
            std::string_view view(*v);
            cache.Apply(seq, name, &view);
          }
          history[key].emplace_back(seq, v);
          break;
        }
        case 1: {  // a read begins and observes the state at some moment since its ticket
          MetadataCache::Ticket t = cache.TakeTicket(seq - rng() % 3);
          pending.push_back({t, key, state_at(key, t.sequence + rng() % (seq - t.sequence + 1))});
          break;
        }
        case 2: {  // a read that began earlier offers what it saw
          if (pending.empty()) break;
          size_t i = rng() % pending.size();
          PendingRead r = pending[i];
          pending.erase(pending.begin() + static_cast<long>(i));
          std::string rn = Numbered("k", r.key);
          if (r.seen) {
            std::string_view view(*r.seen);
            cache.Fill(r.ticket, rn, &view);
          } else {
            cache.Fill(r.ticket, rn, nullptr);
          }
          break;
        }
        default: {  // a lookup
          bool hit;
          std::optional<std::string> got = Read(cache, name, &hit);
          if (!hit) break;
          hits++;
          ASSERT_EQ(got, state_at(key, seq)) << name << " at step " << step;
        }
      }
    }
    EXPECT_GT(hits, 0) << capacity;
    EXPECT_LE(static_cast<size_t>(cache.stats().bytes), capacity);
    all_hits += hits;
  }
  EXPECT_GT(all_hits, 1000);
}

// ---------------------------------------------------------------------------------------------
// Inside the engine

class MetadataCacheEngineTest : public KeyspaceFixture {
 protected:
  Engine* engine() { return ks_->engine(); }

  rocksdb::Status PutMetadata(const std::string& key, const std::string& value) {
    rocksdb::WriteBatch batch;
    batch.Put(engine()->cf(ColumnFamily::kSubkey), "unrelated", "x");  // not the first record
    batch.Put(engine()->cf(ColumnFamily::kMetadata), key, value);
    return engine()->Write(&batch);
  }

  void ExpectReadsNeverGoBackInTime();

  std::string Read(const std::string& key) {
    std::string value;
    rocksdb::Status s = engine()->Get(ColumnFamily::kMetadata, key, &value);
    if (s.IsNotFound()) return "(none)";
    return s.ok() ? value : s.ToString();
  }
};

// The cache orders states by the sequence number RocksDB writes into each committed batch's
// header. Checked here with writers racing, so that RocksDB groups their batches: each batch's
// header must name the sequence under which its own records are in the WAL.
TEST_F(MetadataCacheEngineTest, BatchHeaderCarriesItsSequence) {
  const int kThreads = 4, kWrites = 300;
  std::vector<std::vector<std::pair<uint64_t, std::string>>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; i++) {
        rocksdb::WriteBatch batch;
        std::string key = Numbered("t", t * 100000 + i);
        batch.Put(engine()->cf(ColumnFamily::kMetadata), key, "v");
        batch.Put(engine()->cf(ColumnFamily::kSubkey), key, "w");
        ASSERT_TRUE(engine()->Write(&batch).ok());
        seen[t].emplace_back(Engine::CommittedSequence(batch), batch.Data().substr(12));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::map<uint64_t, std::string> by_sequence;
  for (const auto& list : seen)
    for (const auto& [seq, records] : list) {
      ASSERT_GT(seq, 0u);
      ASSERT_TRUE(by_sequence.emplace(seq, records).second) << "two batches at " << seq;
    }
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  ASSERT_TRUE(engine()->db()->GetUpdatesSince(by_sequence.begin()->first, &it).ok());
  size_t matched = 0;
  for (; it->Valid(); it->Next()) {
    rocksdb::BatchResult result = it->GetBatch();
    // A WAL record may hold a whole write group: its batches follow each other, two records
    // (two sequence numbers) apiece.
    std::string wal = result.writeBatchPtr->Data().substr(12);
    uint64_t seq = result.sequence;
    size_t offset = 0;
    while (offset < wal.size()) {
      auto found = by_sequence.find(seq);
      ASSERT_NE(found, by_sequence.end()) << "no batch claims sequence " << seq;
      ASSERT_EQ(wal.compare(offset, found->second.size(), found->second), 0) << seq;
      offset += found->second.size();
      seq += 2;
      matched++;
    }
  }
  EXPECT_EQ(matched, by_sequence.size());
}

// Writers bump per-key counters and publish each value once Write() returned; readers must
// never see less than what was published before their read began.
void MetadataCacheEngineTest::ExpectReadsNeverGoBackInTime() {
  const int kWriters = 3, kReaders = 3, kKeys = 2000, kRounds = 6;
  std::vector<std::atomic<int64_t>> published(kKeys);
  for (auto& p : published) p.store(-1);
  std::atomic<bool> done{false};
  std::atomic<int64_t> stale{0}, reads{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < kRounds; round++) {
        for (int k = w; k < kKeys; k += kWriters) {
          std::string value;
          PutFixed64(&value, static_cast<uint64_t>(round));
          ASSERT_TRUE(PutMetadata(Numbered("key", k), value).ok());
          published[k].store(round);
        }
      }
    });
  }
  for (int r = 0; r < kReaders; r++) {
    threads.emplace_back([&, r] {
      uint64_t i = r;
      while (!done.load()) {
        int k = static_cast<int>((i = i * 6364136223846793005ULL + 1442695040888963407ULL) >> 33) %
                kKeys;
        int64_t floor = published[k].load();
        std::string value;
        rocksdb::Status s = engine()->Get(ColumnFamily::kMetadata, Numbered("key", k), &value);
        int64_t got = s.ok() ? static_cast<int64_t>(DecodeFixed64(value.data())) : -1;
        if (got < floor) stale++;
        reads++;
      }
    });
  }
  for (int w = 0; w < kWriters; w++) threads[w].join();
  done = true;
  for (int r = 0; r < kReaders; r++) threads[kWriters + r].join();
  EXPECT_EQ(stale.load(), 0);
  EXPECT_GT(reads.load(), 1000);
  EXPECT_GT(engine()->metadata_cache_stats().hits, 0);
  for (int k = 0; k < kKeys; k++) {
    std::string value;
    ASSERT_TRUE(engine()->Get(ColumnFamily::kMetadata, Numbered("key", k), &value).ok());
    ASSERT_EQ(DecodeFixed64(value.data()), static_cast<uint64_t>(kRounds - 1)) << k;
  }
}

// A cache that holds only a few dozen entries per shard, so that entries are evicted and
// refilled all the time. It starts complete (the database is empty) and stops being so as it
// evicts.
TEST_F(MetadataCacheEngineTest, ReadsNeverGoBackInTimeUnderConcurrentWritersAndEviction) {
  ASSERT_TRUE(config_->SetLive("metadata-cache-size", "64kb").ok());
  ExpectReadsNeverGoBackInTime();
  MetadataCache::Stats stats = engine()->metadata_cache_stats();
  EXPECT_LE(stats.bytes, 64 * 1024);
  EXPECT_EQ(stats.complete_shards, 0);
  EXPECT_GT(stats.misses, 0);
}

// A complete cache (the database was empty at open) answers the readers' misses itself.
TEST_F(MetadataCacheEngineTest, ReadsNeverGoBackInTimeUnderConcurrentWritersWithACompleteCache) {
  EXPECT_EQ(engine()->metadata_cache_stats().complete_shards, MetadataCache::kShards);
  ExpectReadsNeverGoBackInTime();
  MetadataCache::Stats stats = engine()->metadata_cache_stats();
  EXPECT_EQ(stats.complete_shards, MetadataCache::kShards);
  EXPECT_EQ(stats.misses, 0);
}

TEST_F(MetadataCacheEngineTest, AnEmptyDatabaseOpensCompleteAndFlushAllCompletesItAgain) {
  const int64_t all = MetadataCache::kShards;
  EXPECT_EQ(engine()->metadata_cache_stats().complete_shards, all);
  Set(0, "a", "1");
  Set(1, "b", "2");
  EXPECT_TRUE(Get(0, "a").present);
  EXPECT_FALSE(Get(0, "never").present);
  EXPECT_EQ(engine()->metadata_cache_stats().misses, 0);
  // FLUSHDB leaves other databases' keys, which the cleared cache no longer knows.
  ASSERT_TRUE(ks_->FlushDatabase(0).ok());
  EXPECT_EQ(engine()->metadata_cache_stats().complete_shards, 0);
  EXPECT_TRUE(Get(1, "b").present);
  EXPECT_FALSE(Get(0, "a").present);
  ASSERT_TRUE(ks_->FlushAll().ok());
  EXPECT_EQ(engine()->metadata_cache_stats().complete_shards, all);
  EXPECT_FALSE(Get(1, "b").present);
  // A database with keys opens incomplete, and its keys are found.
  Set(2, "c", "3");
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(engine()->metadata_cache_stats().complete_shards, 0);
  EXPECT_TRUE(Get(2, "c").present);
  EXPECT_FALSE(Get(2, "other").present);
  // So does one whose keys were all deleted one by one (their tombstones are not keys).
  Del(2, "c");
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(engine()->metadata_cache_stats().complete_shards, all);
}

// A write that RocksDB has published and the cache has not applied yet (its writer held up
// between the two; simulated by writing below Engine::Write): the cache still says the key is
// absent, and the subkey compaction filter must not take that for a dead incarnation.
TEST_F(MetadataCacheEngineTest, SubkeyCompactionKeepsWhatRocksDbHoldsBeforeTheCacheApplies) {
  ASSERT_EQ(engine()->metadata_cache_stats().complete_shards, MetadataCache::kShards);
  Metadata meta;
  meta.type = RedisType::kHash;
  meta.version = NewVersion();
  meta.size = 2;
  rocksdb::WriteBatch batch;
  ASSERT_TRUE(
      batch.Put(engine()->cf(ColumnFamily::kMetadata), MetadataKey(0, "h"), meta.Encode()).ok());
  for (const char* field : {"f1", "f2"}) {
    std::string key = SubkeyPrefix(0, "h", meta.version);
    key += field;
    ASSERT_TRUE(batch.Put(engine()->cf(ColumnFamily::kSubkey), key, "v").ok());
  }
  ASSERT_TRUE(engine()->db()->Write(rocksdb::WriteOptions(), &batch).ok());
  std::string value;
  ASSERT_TRUE(engine()->Peek(ColumnFamily::kMetadata, MetadataKey(0, "h"), &value).IsNotFound());
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(engine()
                  ->db()
                  ->CompactRange(options, engine()->cf(ColumnFamily::kSubkey), nullptr, nullptr)
                  .ok());
  std::unique_ptr<rocksdb::Iterator> it(
      engine()->db()->NewIterator(rocksdb::ReadOptions(), engine()->cf(ColumnFamily::kSubkey)));
  int entries = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) entries++;
  EXPECT_EQ(entries, 2);
}

TEST_F(MetadataCacheEngineTest, RangeDeletionEmptiesTheCache) {
  ASSERT_TRUE(PutMetadata("a", "1").ok());
  ASSERT_TRUE(PutMetadata("b", "2").ok());
  EXPECT_EQ(Read("a"), "1");
  EXPECT_GT(engine()->metadata_cache_stats().entries, 0);
  ASSERT_TRUE(engine()->DeleteRange(ColumnFamily::kMetadata, "a", "z").ok());
  EXPECT_EQ(Read("a"), "(none)");
  EXPECT_EQ(Read("b"), "(none)");
}

TEST_F(MetadataCacheEngineTest, BatchReadsSeeTheirOwnMetadataWritesOverTheCache) {
  ASSERT_TRUE(PutMetadata("k", "committed").ok());
  EXPECT_EQ(Read("k"), "committed");  // now cached
  Batch batch(engine());
  batch.Put(ColumnFamily::kMetadata, "k", "pending");
  std::string value;
  ASSERT_TRUE(batch.Get(ColumnFamily::kMetadata, "k", &value).ok());
  EXPECT_EQ(value, "pending");
  // An iterator moves pending metadata into the indexed batch; reads must still see it.
  rocksdb::ReadOptions ro;
  batch.NewIterator(ColumnFamily::kMetadata, &ro).reset();
  ASSERT_TRUE(batch.Get(ColumnFamily::kMetadata, "k", &value).ok());
  EXPECT_EQ(value, "pending");
  batch.Delete(ColumnFamily::kMetadata, "k");
  EXPECT_TRUE(batch.Get(ColumnFamily::kMetadata, "k", &value).IsNotFound());
  ASSERT_TRUE(batch.Commit().ok());
  EXPECT_EQ(Read("k"), "(none)");
}

// An expired entry read from RocksDB stays out of the cache: once a compaction drops it, no
// reader may find it again.
TEST_F(MetadataCacheEngineTest, ExpiredEntriesAreNotCachedFromReads) {
  Set(0, "soon", "v", UnixMillis() + 50);
  Set(0, "later", "v", UnixMillis() + 3600 * 1000);
  SleepMs(100);
  ASSERT_TRUE(config_->SetLive("metadata-cache-size", "0").ok());  // forget the writes
  ASSERT_TRUE(config_->SetLive("metadata-cache-size", "1mb").ok());
  EXPECT_TRUE(Get(0, "soon").present);
  EXPECT_TRUE(Get(0, "later").present);
  EXPECT_EQ(engine()->metadata_cache_stats().entries, 1);  // only "later"
  CompactMetadata(/*keep_cache=*/true);
  EXPECT_FALSE(Get(0, "soon").present);
  EXPECT_TRUE(Get(0, "later").present);
}

}  // namespace
}  // namespace basalt
