// Engine: the one RocksDB instance and its column families.
//
// Storage knows nothing of Redis types or of RESP. It opens the database with every column
// family the design names, applies the options from the config table (storage/options.cc),
// commits write batches with the configured durability, and exposes RocksDB statistics for
// INFO. Column-family-specific behaviour that depends on value encodings (compaction filters,
// merge operators) is passed in by the layer that owns those encodings.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace basalt {

// Column families, in the order they are opened. `kDefault` exists because RocksDB requires it
// and stays empty.
enum class ColumnFamily : int {
  kDefault = 0,
  kMetadata,   // one entry per user key: type, expiry, version, size; string values inline
  kSubkey,     // collection members: hash fields, set members, list elements, ...
  kZsetScore,  // sorted-set (score, member) index for ordered range reads
  kPubsub,     // published messages, replicated to replicas' subscribers
  kPropagate,  // non-data events replicas must replay
  kExpire,     // expiry index: (expire time, db, key) so active expiry never scans keys
  kCounters,   // exact per-database key counts, updated by merge in the same batch as writes
  kCount
};
constexpr int kColumnFamilyCount = static_cast<int>(ColumnFamily::kCount);
const char* ColumnFamilyName(ColumnFamily cf);

// Hooks supplied by the types layer: encodings live there, not here.
struct ColumnFamilyHooks {
  std::shared_ptr<rocksdb::CompactionFilterFactory> metadata_filter;
  std::shared_ptr<rocksdb::CompactionFilterFactory> subkey_filter;
  std::shared_ptr<rocksdb::MergeOperator> counters_merge;
};

enum class Durability { kSync, kLazy, kNoSync };

class Engine {
 public:
  ~Engine();
  static StatusOr<std::unique_ptr<Engine>> Open(Config* config, const ColumnFamilyHooks& hooks);

  rocksdb::DB* db() const { return db_; }
  rocksdb::ColumnFamilyHandle* cf(ColumnFamily cf) const { return handles_[static_cast<int>(cf)]; }

  // Commits a batch with the current durability mode (sync mode fsyncs before returning;
  // concurrent writers share that fsync through RocksDB's group commit).
  rocksdb::Status Write(rocksdb::WriteBatch* batch);
  rocksdb::Status Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value,
                      const rocksdb::Snapshot* snapshot = nullptr) const;
  std::unique_ptr<rocksdb::Iterator> NewIterator(ColumnFamily cf,
                                                 const rocksdb::ReadOptions& options) const;

  // Removes every key in [begin, end) of a column family. Used by FLUSHDB/FLUSHALL.
  rocksdb::Status DeleteRange(ColumnFamily cf, const std::string& begin, const std::string& end);

  Durability durability() const { return durability_.load(std::memory_order_relaxed); }
  rocksdb::Statistics* statistics() const { return statistics_.get(); }
  const std::string& path() const { return path_; }
  std::shared_ptr<rocksdb::Cache> block_cache() const { return block_cache_; }
  std::shared_ptr<rocksdb::Cache> row_cache() const { return row_cache_; }

  // Compacts every column family to the bottom level on a background thread, which drops
  // everything the compaction filters reject. Busy if one is already running.
  Status StartManualCompaction();
  bool manual_compaction_running() const { return manual_compaction_running_.load(); }

  // Flushes and fsyncs the WAL, stops background work and closes the database.
  void Close();

 private:
  Engine() = default;
  Status ApplyLiveOption(const std::string& name, const std::string& value);
  void LazySyncLoop();

  rocksdb::DB* db_ = nullptr;
  std::array<rocksdb::ColumnFamilyHandle*, kColumnFamilyCount> handles_{};
  std::shared_ptr<rocksdb::Statistics> statistics_;
  std::shared_ptr<rocksdb::Cache> block_cache_;
  std::shared_ptr<rocksdb::Cache> row_cache_;
  std::string path_;
  std::atomic<Durability> durability_{Durability::kLazy};

  std::thread manual_compaction_thread_;
  std::atomic<bool> manual_compaction_running_{false};
  std::thread lazy_sync_thread_;
  std::mutex lazy_mu_;
  std::condition_variable lazy_cv_;
  bool closing_ = false;
};

}  // namespace basalt
