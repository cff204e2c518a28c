// Builds RocksDB options from the config table: the single place where tuning lives.
#pragma once

#include <rocksdb/options.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "storage/engine.h"

namespace basalt {

struct EngineOptions {
  rocksdb::DBOptions db;
  std::vector<rocksdb::ColumnFamilyDescriptor> column_families;
  std::shared_ptr<rocksdb::Cache> block_cache;
};

EngineOptions BuildEngineOptions(const Config& config, const ColumnFamilyHooks& hooks);

// Whether `cf` is read by key (Get), not only by iterators: only those families get a memtable
// bloom filter (with RocksDB's memtable) or index by key (with Basalt's), and SST files with bloom
// filters and hashed data blocks. Each costs every insert or flush work (a memtable filter or
// index a cache miss per insert), and an iterator never consults them (docs/benchmarks.md,
// "Storage upkeep").
bool ServesPointReads(ColumnFamily cf);

// The write buffer of `cf` when `rocksdb.write-buffer-size` is `configured`: that size, except
// for the queue-like families (small memtables, flushed early) and `counters`.
size_t WriteBufferSizeOf(ColumnFamily cf, size_t configured);

// The buckets of the index by user key that each of `cf`'s memtables has (Basalt's memtable),
// for a write buffer of `write_buffer_size`: a bucket per entry a full memtable holds; 0 for
// families that no point read reaches.
size_t MemtableIndexBuckets(ColumnFamily cf, size_t write_buffer_size);

// Maps a live config key ("rocksdb.write-buffer-size") to the RocksDB option name and value
// that SetOptions/SetDBOptions take. Returns false for keys that are not RocksDB options; an
// empty *rocksdb_name for keys the engine applies itself (blob GC governing).
bool MapLiveOption(const std::string& name, const std::string& value, bool* is_db_option,
                   std::string* rocksdb_name, std::string* rocksdb_value);

}  // namespace basalt
