// Engine: the one RocksDB instance and its column families.
//
// Storage knows nothing of Redis types or of RESP. It opens the database with every column
// family the design names, applies the options from the config table (storage/options.cc),
// commits write batches with the configured durability, and exposes RocksDB statistics for
// INFO. Column-family-specific behaviour that depends on value encodings (compaction filters,
// merge operators) is passed in by the layer that owns those encodings.
//
// For replication it also tells waiters when new writes commit (a master streams its WAL as it
// grows) and can swap the whole database for a RocksDB checkpoint received from a master. The
// swap is crash-safe: Open() finishes or rolls back a swap that a crash interrupted.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "storage/blob_gc.h"
#include "storage/metadata_cache.h"
#include "storage/reclaimer.h"

namespace basalt {

class BatchRecords;
class SkipListMemTableFactory;

// Column families, in the order they are opened. `kDefault` exists because RocksDB requires it
// and stays empty.
enum class ColumnFamily : int {
  kDefault = 0,
  kMetadata,    // one entry per user key: type, expiry, version, size; string values inline
  kSubkey,      // collection members: hash fields, set members, list elements, ...
  kZsetScore,   // sorted-set (score, member) index for ordered range reads
  kPubsub,      // published messages, replicated to replicas' subscribers
  kPropagate,   // non-data events replicas must replay
  kExpire,      // expiry index: (expire time, db, key) so active expiry never scans keys
  kCounters,    // exact per-database key counts, updated by merge in the same batch as writes
  kLargeValue,  // hash field values too large for their `subkey` entry (blob files)
  kCount
};
constexpr int kColumnFamilyCount = static_cast<int>(ColumnFamily::kCount);
const char* ColumnFamilyName(ColumnFamily cf);

// Whether every key of `cf` embeds the version of the collection it belongs to (`subkey`,
// `zset_score`, `large_value`). The types layer never reuses a version, so a reader never asks
// for a key that a range deletion (FLUSHDB) covers there: those deletions only reclaim space,
// and the reads of these families ignore them (Engine::PrepareRead).
bool IsVersioned(ColumnFamily cf);

// Hooks supplied by the types layer: encodings live there, not here.
struct ColumnFamilyHooks {
  std::shared_ptr<rocksdb::CompactionFilterFactory> metadata_filter;
  std::shared_ptr<rocksdb::CompactionFilterFactory> subkey_filter;
  std::shared_ptr<rocksdb::MergeOperator> counters_merge;
  // Whether a `metadata` value read from RocksDB is expired now. Such a value stays out of the
  // metadata cache: once a compaction filter has dropped it, no reader may find it again.
  bool (*metadata_expired)(std::string_view value) = nullptr;
};

enum class Durability { kSync, kLazy, kNoSync };

// Whether the database currently accepts writes. RocksDB stops writes after a hard background
// error (a full disk, a failed WAL append or flush); reads keep working. The engine notices the
// error (from a failed write or RocksDB's listener), and its background thread calls
// DB::Resume() every second until RocksDB accepts writes again.
struct StorageHealth {
  bool writes_stopped = false;
  std::string last_error;  // RocksDB's text of the last error seen (kept after recovery)
  int64_t errors = 0;      // times writes stopped
  int64_t recoveries = 0;  // times they resumed
};

class Engine {
 public:
  ~Engine();
  static StatusOr<std::unique_ptr<Engine>> Open(Config* config, const ColumnFamilyHooks& hooks);

  rocksdb::DB* db() const { return db_; }
  rocksdb::ColumnFamilyHandle* cf(ColumnFamily cf) const { return handles_[static_cast<int>(cf)]; }

  // Commits a batch with the current durability mode (sync mode fsyncs before returning;
  // concurrent writers share that fsync through RocksDB's group commit).
  rocksdb::Status Write(rocksdb::WriteBatch* batch);
  // Commits and fsyncs a batch whatever the durability mode: for a marker that must be on disk
  // before the work it announces starts.
  rocksdb::Status WriteDurably(rocksdb::WriteBatch* batch);
  // The sequence number of the first record of a batch Write() committed. RocksDB stores it in
  // the batch's header (LevelDB's format: little-endian fixed64 sequence, fixed32 count,
  // records), for each writer of a write group too; the unit test
  // MetadataCacheEngineTest.BatchHeaderCarriesItsSequence checks that against this RocksDB.
  static uint64_t CommittedSequence(const rocksdb::WriteBatch& batch);
  // Reads of `metadata` without a snapshot go through the metadata cache (storage/
  // metadata_cache.h); Peek() does too, but leaves out what it read (for background scans,
  // which would push the hot keys out).
  // `tier` kBlockCacheTier reads memory only (memtables, block cache, metadata cache): a read
  // that needs the disk answers Incomplete, and a metadata cache miss is not filled then.
  rocksdb::Status Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value,
                      const rocksdb::Snapshot* snapshot = nullptr,
                      rocksdb::ReadTier tier = rocksdb::kReadAllTier) const;
  rocksdb::Status Peek(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) const;
  // Reads RocksDB itself, never the metadata cache: for a decision that must not rest on it.
  // Between RocksDB publishing a batch and Write() applying it to the cache, the cache still
  // answers with the keys' earlier states; callers that hold no key locks can see that.
  rocksdb::Status ReadStored(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) const;
  // Sets what every read of `cf` needs besides the caller's options: reads of the versioned
  // families ignore range deletions. RocksDB's iterators step over the keys a range deletion
  // covers one at a time while both sit in one memtable, whatever the bounds: after a FLUSHALL,
  // a read that runs past the end of a small set would walk every flushed key sorting after it
  // (docs/benchmarks.md, "Storage upkeep"). Every read path of the engine and of Batch applies it.
  static void PrepareRead(ColumnFamily cf, rocksdb::ReadOptions* options) {
    options->ignore_range_deletions = IsVersioned(cf);
  }
  std::unique_ptr<rocksdb::Iterator> NewIterator(ColumnFamily cf,
                                                 const rocksdb::ReadOptions& options) const;
  // `cf`'s memtables when they are Basalt's skip list (rocksdb.memtable basalt), else nullptr:
  // their NewestReader reads the newest memtable directly, without RocksDB's iterators.
  const SkipListMemTableFactory* memtables(ColumnFamily cf) const {
    return memtables_[static_cast<int>(cf)].get();
  }

  // The calling thread is about to write `key` of `cf`, the key its last seek in `cf` found:
  // the write's warming starts from that seek's path (SkipListMemTableFactory::KeepLastSeekFor).
  void KeepLastSeekFor(ColumnFamily cf, const rocksdb::Slice& key) const;
  // Starts loading the metadata cache's lines for these `metadata` keys, which the caller is
  // about to read one after another (MetadataCache::Prefetch).
  void PrefetchMetadata(std::span<const std::string_view> keys) const {
    metadata_cache_.Prefetch(keys);
  }
  // Only the first line each key's lookup reads, without locks (MetadataCache::PrefetchSlots).
  void PrefetchMetadataSlots(std::span<const std::string_view> keys) const {
    metadata_cache_.PrefetchSlots(keys);
  }

  // [begin, end) of `cf` (subkey or zset_score) holds only dead entries, or will once the
  // caller's write commits (a list's popped elements, an ended incarnation's members): the files
  // mostly made of them are compacted in the background (storage/reclaimer.h).
  void NoteDeadRange(ColumnFamily cf, std::string begin, std::string end) {
    if (cf == ColumnFamily::kSubkey) subkey_reclaimer_.Note(std::move(begin), std::move(end));
    if (cf == ColumnFamily::kZsetScore) score_reclaimer_.Note(std::move(begin), std::move(end));
  }
  // A dead range as it travels to replicas: a LogData blob in the write's batch, which RocksDB
  // keeps in the WAL record and never puts in a memtable. A replica's applier hands it to its own
  // reclaimers (repl/applier.cc). Decode is false for any blob that is not such a note.
  static std::string EncodeDeadRangeNote(ColumnFamily cf, std::string_view begin,
                                         std::string_view end);
  static bool DecodeDeadRangeNote(std::string_view blob, ColumnFamily* cf, std::string* begin,
                                  std::string* end);
  uint64_t reclaimed_files() const {
    return subkey_reclaimer_.files_compacted() + score_reclaimer_.files_compacted();
  }

  // Starts flushing the memtables of `families` without waiting for it. After FLUSHDB the flush
  // drops what the range deletions cover from memory, so that later writes go to an empty
  // memtable instead of one full of dead entries (docs/benchmarks.md, "Storage upkeep"). Logs, and
  // otherwise ignores, a failure: the data is already gone either way.
  void StartFlush(std::span<const ColumnFamily> families);
  // Entries (range deletions included) in `cf`'s active memtable.
  uint64_t ActiveMemtableEntries(ColumnFamily cf) const;

  // Removes every key in [begin, end) of a column family. Used by FLUSHDB/FLUSHALL.
  rocksdb::Status DeleteRange(ColumnFamily cf, const std::string& begin, const std::string& end);

  Durability durability() const { return durability_.load(std::memory_order_relaxed); }
  rocksdb::Statistics* statistics() const { return statistics_.get(); }
  const std::string& path() const { return path_; }
  std::shared_ptr<rocksdb::Cache> block_cache() const { return block_cache_; }
  MetadataCache::Stats metadata_cache_stats() const { return metadata_cache_.stats(); }
  // When `metadata` holds no key, tells the metadata cache that it knows them all (none), so that
  // a lookup of a key it has no entry for needs no read (MetadataCache::MarkComplete): the first
  // write of each new key then skips RocksDB's search of the memtables and every level. Call
  // only while no write runs: at open, or under the keyspace's exclusive lock after FLUSHALL.
  void CompleteMetadataCacheIfEmpty();

  // Cheap check for the command path: true while writes would fail.
  bool writes_stopped() const { return writes_stopped_.load(std::memory_order_relaxed); }
  StorageHealth health() const;

  // Compacts every column family to the bottom level on a background thread, which drops
  // everything the compaction filters reject. Busy if one is already running.
  Status StartManualCompaction();
  bool manual_compaction_running() const { return manual_compaction_running_.load(); }

  // Whether RocksDB's blob garbage collection currently runs in `cf` (see storage/blob_gc.h).
  bool blob_gc_running(ColumnFamily cf) const { return blob_gc_.running(static_cast<int>(cf)); }

  // Flushes and fsyncs the WAL, stops background work and closes the database.
  void Close();

  // The sequence number of the latest committed write.
  uint64_t LatestSequence() const { return db_->GetLatestSequenceNumber(); }
  // Waits until a write with a sequence number above `seq` has committed, or `timeout` passed.
  // Returns the latest sequence number.
  uint64_t WaitForSequenceAbove(uint64_t seq, std::chrono::milliseconds timeout);
  // About when (Unix ms, to ~10 ms) the write with sequence `seq` committed: writes sample the
  // clock every 10 ms into a ring covering the last ~80 s; older writes report the oldest
  // sample. Replication reports its lag in seconds from this.
  int64_t CommitTimeOf(uint64_t seq);

  // Replaces the whole database with the RocksDB directory `source_dir` (which is moved, not
  // copied) and reopens it. The caller guarantees that nothing uses the database meanwhile:
  // handles, iterators and snapshots taken before are invalid afterwards. If the new data
  // cannot be opened, the old data is put back and reopened.
  Status ReplaceData(const std::string& source_dir);

  // A snapshot for a long read that holds no keyspace lock (an RDB file being written on a
  // thread of its own). ReplaceData() closes the database under such readers, so it asks them
  // to stop (abandoned() turns true; the reader gives up and destroys this) and waits until
  // they have; none starts while a swap runs.
  class LongSnapshot {
   public:
    LongSnapshot(const LongSnapshot&) = delete;
    LongSnapshot& operator=(const LongSnapshot&) = delete;
    ~LongSnapshot();
    const rocksdb::Snapshot* get() const { return snapshot_; }
    bool abandoned() const { return engine_->replacing_.load(std::memory_order_relaxed); }

   private:
    friend class Engine;
    LongSnapshot(Engine* engine, const rocksdb::Snapshot* snapshot)
        : engine_(engine), snapshot_(snapshot) {}
    Engine* engine_;
    const rocksdb::Snapshot* snapshot_;
  };
  // Busy while a swap runs.
  StatusOr<std::unique_ptr<LongSnapshot>> AcquireLongSnapshot();
  // "<data directory><suffix>": a sibling of the data directory, on the same file system (so
  // that checkpoints can hard-link and swaps can rename).
  std::string SiblingPath(const std::string& suffix) const;

 private:
  Engine() = default;
  Status OpenDb();
  friend class StorageErrorListener;
  Status ApplyLiveOption(const std::string& name, const std::string& value);
  // Once a second: the lazy WAL sync and blob GC governing, or DB::Resume() while writes are
  // stopped.
  void LazySyncLoop();
  void GovernBlobGc();
  rocksdb::Status ReadThroughCache(const rocksdb::Slice& key, std::string* value, bool fill,
                                   rocksdb::ReadTier tier = rocksdb::kReadAllTier) const;
  // Brings the metadata cache up to date with a batch Write() just committed (or failed), from
  // the batch's records (nullptr: they could not be read).
  void UpdateMetadataCache(const rocksdb::WriteBatch& batch, const BatchRecords* records,
                           const rocksdb::Status& written);
  // Brings the memtable nodes a batch's inserts will visit into the CPU cache, several keys at
  // a time (SkipListMemTableFactory::WarmInsertPaths).
  void WarmMemtables(const BatchRecords& records);
  void NoteStorageError(const rocksdb::Status& s);
  void NoteRecovered();
  void TryResume();
  void NotifyWriters();
  // ReplaceData() once no LongSnapshot is left.
  Status SwapData(const std::string& source_dir);
  // Finishes or rolls back a ReplaceData() that a crash interrupted.
  Status RecoverInterruptedSwap();

  rocksdb::DB* db_ = nullptr;
  std::array<rocksdb::ColumnFamilyHandle*, kColumnFamilyCount> handles_{};
  // By RocksDB's column family id: the memtables WarmMemtables() warms (null for the others).
  std::vector<std::shared_ptr<SkipListMemTableFactory>> warmed_families_;
  std::array<std::shared_ptr<SkipListMemTableFactory>, kColumnFamilyCount> memtables_;
  std::atomic<bool> ready_{false};  // db_ and handles_ are usable (see Get())
  std::shared_ptr<rocksdb::Statistics> statistics_;
  std::shared_ptr<rocksdb::Cache> block_cache_;
  std::string path_;
  Config* config_ = nullptr;
  ColumnFamilyHooks hooks_;
  std::atomic<Durability> durability_{Durability::kLazy};
  BlobGcGovernor blob_gc_;
  mutable MetadataCache metadata_cache_{0};

  // Writers notify WaitForSequenceAbove() callers; the count spares them the mutex otherwise.
  std::mutex seq_mu_;
  std::condition_variable seq_cv_;
  std::atomic<int> seq_waiters_{0};

  static constexpr size_t kCommitSamples = 8192;
  std::mutex clock_mu_;
  std::array<std::pair<uint64_t, int64_t>, kCommitSamples> commit_samples_{};  // (seq, ms)
  size_t commit_sample_count_ = 0;  // ever written; the ring holds the last kCommitSamples
  std::atomic<int64_t> last_commit_sample_ms_{0};

  Reclaimer subkey_reclaimer_;
  Reclaimer score_reclaimer_;
  std::thread manual_compaction_thread_;
  std::atomic<bool> manual_compaction_running_{false};
  std::thread lazy_sync_thread_;
  std::mutex lazy_mu_;
  std::condition_variable lazy_cv_;
  bool closing_ = false;

  // LongSnapshots alive, and whether ReplaceData() waits for them to go.
  std::mutex long_mu_;
  std::condition_variable long_cv_;
  int long_snapshots_ = 0;
  std::atomic<bool> replacing_{false};

  std::atomic<bool> writes_stopped_{false};
  mutable std::mutex health_mu_;
  StorageHealth health_;  // guarded by health_mu_ (its writes_stopped mirrors writes_stopped_)
};

}  // namespace basalt
