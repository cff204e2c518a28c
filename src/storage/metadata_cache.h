// MetadataCache: recent `metadata` entries, answered without asking RocksDB.
//
// Nearly every command begins with a point read of its key's `metadata` entry (type, expiry,
// version, size; a short string's value), and every write of a new key reads it too, to keep the
// key counts exact. RocksDB answers such a read by searching the memtable skip lists and then, per
// SST file, the bloom filter and the index: a few microseconds for a key at a random place among a
// million (docs/benchmarks.md, "Metadata and its cache"). This cache answers it with one hash
// lookup, for present and for absent keys alike.
//
// The contract: a lookup never returns a state older than one a committed write has replaced.
// Each entry carries the RocksDB sequence number of the state it holds. Committed writes are
// applied with their batch's sequence number (Apply); a value read from RocksDB is offered with a
// ticket taken before the read began (Fill). An entry is only ever replaced by a state at least as
// new. A key without an entry may have had a newer one dropped, so each shard keeps a floor (the
// newest sequence it dropped or declined to hold) and refuses to create entries below it.
// Clear() drops everything and raises every floor; Reset() starts over for a new database (whose
// sequence numbers start elsewhere), refusing fills from tickets taken before it.
//
// A cache that has seen every key the database holds can also answer for keys it has no entry
// for: they are absent. MarkComplete() says so when the database holds no key (at open, after
// FLUSHALL); from then on each shard stays complete for as long as it forgets no present key: an
// eviction of a present entry, a write it cannot hold (Invalidate, a long value or key) or a
// write refused at the floor ends it, and only Clear()/Reset() followed by MarkComplete()
// brings it back. Keys written but not yet applied (between RocksDB's publishing of a batch and
// its Apply) read as they were before: a writer applies before it releases its keys' locks, so
// only a read concurrent with the write can see that, and either answer is then right.
//
// Values longer than kMaxValueBytes and keys longer than kMaxKeyBytes are not held (a large
// string would take the room of hundreds of hot keys). Thread-safe; the shards have their own
// mutexes. A lookup should cost about two cache misses, far fewer than the skip list's dozens: each
// shard is an open-addressing table of (hash, node) slots with linear probing, a node holds its key
// and value in one allocation, and eviction is CLOCK (a hit sets a bit in its node instead of
// relinking a recency list).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

namespace basalt {

class MetadataCache {
 public:
  static constexpr size_t kMaxValueBytes = 256;
  static constexpr size_t kMaxKeyBytes = 1024;
  // What an entry costs besides its key and value: its node header and table slots.
  static constexpr size_t kEntryOverhead = 64;
  static constexpr int kShards = 64;

  explicit MetadataCache(size_t capacity_bytes);
  ~MetadataCache();

  // Takes effect at the next insert of each shard. 0 empties the cache and disables it.
  void SetCapacity(size_t capacity_bytes);
  bool enabled() const { return capacity_.load(std::memory_order_relaxed) > 0; }

  enum class Lookup { kMiss, kPresent, kAbsent };
  Lookup Get(std::string_view key, std::string* value);

  // Starts loading the lines that a Get or Apply of each key will read, its slot and then its
  // node, so that a caller holding several keys overlaps their cache misses (a lookup is about
  // two misses, and a command or a write group with many keys would otherwise wait for each in
  // turn). Only the first kMaxPrefetch keys: the lines of many more would push out the first
  // ones before they are read, so a caller with more prefetches each run of them before using
  // it. Changes nothing the cache holds.
  static constexpr size_t kMaxPrefetch = 64;
  void Prefetch(std::span<const std::string_view> keys) const;
  // Starts loading only the slot each key's lookup reads first, without taking the shards'
  // locks: for keys that may not be looked up at all (the commands a client has sent but the
  // server not yet parsed), where two lock round trips per key would cost more than the miss.
  void PrefetchSlots(std::span<const std::string_view> keys) const;

  // Taken before reading RocksDB, with the latest committed sequence number at that moment.
  struct Ticket {
    uint64_t sequence = 0;
    uint64_t generation = 0;
  };
  Ticket TakeTicket(uint64_t latest_sequence) const;
  // Offers what a read that began with `ticket` found (nullptr: the key is absent).
  void Fill(const Ticket& ticket, std::string_view key, const std::string_view* value);

  // A committed write: `value` (nullptr: deleted) is the key's state as of `sequence`.
  void Apply(uint64_t sequence, std::string_view key, const std::string_view* value);
  // A committed write whose result the cache cannot know (a merge): the key's entry goes.
  void Invalidate(uint64_t sequence, std::string_view key);
  // Drops every entry; nothing read before `sequence` may enter afterwards (a range deletion,
  // a failed write).
  void Clear(uint64_t sequence);
  // Drops every entry and every floor, and refuses fills with tickets taken before (a new
  // database whose sequence numbers are unrelated to the old ones).
  void Reset();
  // The database holds no key that the cache lacks an entry for (it holds none at all): a miss
  // means absent. Call only while no write runs, with nothing in the cache but what the writes
  // since the database was empty applied.
  void MarkComplete();

  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t entries = 0;
    int64_t bytes = 0;
    int64_t complete_shards = 0;  // of kShards; a miss there is an absent key
  };
  Stats stats() const;

 private:
  struct Node;
  struct Shard;

  static bool Holds(std::string_view key, const std::string_view* value) {
    return key.size() <= kMaxKeyBytes && (value == nullptr || value->size() <= kMaxValueBytes);
  }
  Shard& ShardOf(uint64_t hash) const;
  // Sets `key` to `value` (nullptr: absent) as of `sequence`, under the shard's lock; creates
  // an entry only at or above the floor. False when the floor refused it.
  bool Store(Shard& shard, uint64_t hash, uint64_t sequence, std::string_view key,
             const std::string_view* value);

  std::atomic<size_t> capacity_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> misses_{0};
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace basalt
