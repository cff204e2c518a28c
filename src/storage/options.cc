#include "storage/options.h"

#include <rocksdb/cache.h>
#include <rocksdb/comparator.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>

#include <map>

#include "storage/blob_gc.h"
#include "storage/skiplist_memtable.h"

namespace basalt {

namespace {

std::vector<rocksdb::CompressionType> CompressionPerLevel(const std::string& mode, int levels) {
  using rocksdb::CompressionType;
  std::vector<CompressionType> out(levels, CompressionType::kNoCompression);
  if (mode == "none") return out;
  for (int i = 0; i < levels; i++) {
    if (mode == "lz4") {
      out[i] = CompressionType::kLZ4Compression;
    } else if (mode == "zstd") {
      out[i] = CompressionType::kZSTD;
    } else {  // tiered: hot small levels uncompressed, middle LZ4, last level ZSTD
      out[i] = i < 2
                   ? CompressionType::kNoCompression
                   : (i == levels - 1 ? CompressionType::kZSTD : CompressionType::kLZ4Compression);
    }
  }
  return out;
}

rocksdb::BlockBasedTableOptions TableOptions(const Config& config,
                                             std::shared_ptr<rocksdb::Cache> cache) {
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = std::move(cache);
  t.block_size = config.GetInt("rocksdb.block-size");
  t.format_version = 5;
  // Partitioned index and filters: only the top-level index stays pinned, partitions are
  // cached like data blocks, so memory use stays bounded on data sets far larger than RAM.
  t.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  t.partition_filters = true;
  t.metadata_block_size = 4096;
  int bits = static_cast<int>(config.GetInt("rocksdb.bloom-bits-per-key"));
  if (bits > 0) t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(bits, false));
  t.optimize_filters_for_memory = true;
  t.cache_index_and_filter_blocks = true;
  t.cache_index_and_filter_blocks_with_high_priority = true;
  t.pin_top_level_index_and_filter = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  double hash_ratio = config.GetDouble("rocksdb.data-block-hash-ratio");
  if (hash_ratio > 0) {
    t.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
    t.data_block_hash_table_util_ratio = hash_ratio;
  }
  return t;
}

rocksdb::ColumnFamilyOptions BaseColumnFamilyOptions(const Config& config,
                                                     const rocksdb::BlockBasedTableOptions& t) {
  rocksdb::ColumnFamilyOptions o;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  o.write_buffer_size = config.GetInt("rocksdb.write-buffer-size");
  o.max_write_buffer_number = static_cast<int>(config.GetInt("rocksdb.max-write-buffer-number"));
  o.target_file_size_base = config.GetInt("rocksdb.target-file-size-base");
  o.max_bytes_for_level_base = config.GetInt("rocksdb.max-bytes-for-level-base");
  o.level0_file_num_compaction_trigger =
      static_cast<int>(config.GetInt("rocksdb.level0-file-num-compaction-trigger"));
  o.level_compaction_dynamic_level_bytes = true;
  o.num_levels = 7;
  o.compression_per_level = CompressionPerLevel(config.GetString("rocksdb.compression"), 7);
  o.bottommost_compression = o.compression_per_level.back();
  o.memtable_prefix_bloom_size_ratio = config.GetDouble("rocksdb.memtable-prefix-bloom-ratio");
  o.memtable_whole_key_filtering = true;
  return o;
}

void EnableBlobFiles(const Config& config, rocksdb::ColumnFamilyOptions* o) {
  o->enable_blob_files = config.GetBool("rocksdb.enable-blob-files");
  o->min_blob_size = config.GetInt("rocksdb.min-blob-size");
  o->blob_file_size = config.GetInt("rocksdb.blob-file-size");
  o->blob_compression_type = rocksdb::kLZ4Compression;
  o->enable_blob_garbage_collection = BlobGcGovernor::InitiallyOn(
      config.GetBool("rocksdb.enable-blob-gc"), config.GetDouble("rocksdb.blob-gc-garbage-ratio"));
  o->blob_garbage_collection_age_cutoff = config.GetDouble("rocksdb.blob-gc-age-cutoff");
  o->blob_garbage_collection_force_threshold = config.GetDouble("rocksdb.blob-gc-force-threshold");
}

// Column families that see pops and range deletes get compacted early once a file is dense
// with tombstones, so that seeks do not crawl over dead entries (the LSM queue problem).
void CompactOnDeletions(rocksdb::ColumnFamilyOptions* o) {
  o->table_properties_collector_factories.emplace_back(
      rocksdb::NewCompactOnDeletionCollectorFactory(128 * 1024, 32 * 1024, 0.3));
}

// About what an entry of an indexed family's memtable takes, for the size of its index. A
// `large_value` put holds a hash field value of at least 4 KiB (types/hash.h), its deletions
// much less; `counters` holds a few keys per database however often they change (a key written
// over and over keeps one node in its chain). Elsewhere keys and values are small.
size_t IndexedEntryBytes(ColumnFamily cf) {
  switch (cf) {
    case ColumnFamily::kLargeValue:
      return 1024;
    case ColumnFamily::kCounters:
      return SIZE_MAX;  // the smallest index
    default:
      return 64;
  }
}

}  // namespace

EngineOptions BuildEngineOptions(const Config& config, const ColumnFamilyHooks& hooks) {
  EngineOptions out;
  rocksdb::DBOptions& db = out.db;
  db.create_if_missing = true;
  db.create_missing_column_families = true;
  db.max_background_jobs = static_cast<int>(config.GetInt("rocksdb.max-background-jobs"));
  db.max_open_files = static_cast<int>(config.GetInt("rocksdb.max-open-files"));
  db.use_direct_reads = config.GetBool("rocksdb.use-direct-reads");
  db.bytes_per_sync = 1 << 20;
  db.wal_bytes_per_sync = 0;  // WAL syncing is governed by the durability mode
  db.keep_log_file_num = 10;
  db.max_total_wal_size = 512LL << 20;
  // Replicas resume from the WAL: keep obsolete WAL files in archive/ for this long and up to
  // this size (RocksDB checks every ttl/2, or every 10 minutes when both are set).
  db.WAL_ttl_seconds = static_cast<uint64_t>(config.GetInt("repl-wal-ttl"));
  db.WAL_size_limit_MB = static_cast<uint64_t>(config.GetInt("repl-wal-size-limit")) >> 20;
  db.statistics = rocksdb::CreateDBStatistics();
  // Tickers only: INFO reads no histogram, and timing every Get/Write costs two clock reads each.
  db.statistics->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);

  out.block_cache = rocksdb::NewLRUCache(config.GetInt("rocksdb.block-cache-size"), -1, false,
                                         config.GetDouble("rocksdb.block-cache-high-pri-ratio"));
  // No row cache: RocksDB refuses every write batch with a range deletion while one is
  // configured, and FLUSHDB, FLUSHALL and the deletion of a collection write range deletions.

  rocksdb::BlockBasedTableOptions table = TableOptions(config, out.block_cache);
  // Families only ever scanned in order have no use for what serves point reads: a bloom filter
  // (no prefix extractor, so seeks never consult it) and the data blocks' hash index. Building
  // them in every family's flushes and compactions would take 3.5% of a pipelined ZPOPMIN's
  // CPU, and `zset_score` holds half of what that writes (docs/benchmarks.md, "Storage upkeep").
  rocksdb::BlockBasedTableOptions scan_table = table;
  scan_table.filter_policy.reset();
  scan_table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinarySearch;
  for (int i = 0; i < kColumnFamilyCount; i++) {
    auto cf = static_cast<ColumnFamily>(i);
    rocksdb::ColumnFamilyOptions o =
        BaseColumnFamilyOptions(config, ServesPointReads(cf) ? table : scan_table);
    switch (cf) {
      case ColumnFamily::kMetadata:
        EnableBlobFiles(config, &o);
        o.compaction_filter_factory = hooks.metadata_filter;
        break;
      case ColumnFamily::kSubkey:
      case ColumnFamily::kLargeValue:
        EnableBlobFiles(config, &o);
        o.compaction_filter_factory = hooks.subkey_filter;
        CompactOnDeletions(&o);
        break;
      case ColumnFamily::kZsetScore:
        o.compaction_filter_factory = hooks.subkey_filter;
        CompactOnDeletions(&o);
        break;
      case ColumnFamily::kExpire:
      case ColumnFamily::kPubsub:
      case ColumnFamily::kPropagate:
        CompactOnDeletions(&o);
        break;
      case ColumnFamily::kCounters:
        o.merge_operator = hooks.counters_merge;
        break;
      default:
        break;
    }
    o.write_buffer_size = WriteBufferSizeOf(cf, o.write_buffer_size);
    bool basalt_memtable = config.GetString("rocksdb.memtable") == "basalt";
    if (basalt_memtable) {
      o.memtable_factory =
          std::make_shared<SkipListMemTableFactory>(o.comparator == rocksdb::BytewiseComparator(),
                                                    MemtableIndexBuckets(cf, o.write_buffer_size));
    }
    // An indexed memtable answers for an absent key as its bloom filter would, from one bucket,
    // and an insert then sets no filter bits: one random cache miss per write, not two.
    if (!ServesPointReads(cf) || basalt_memtable) o.memtable_prefix_bloom_size_ratio = 0;
    out.column_families.emplace_back(ColumnFamilyName(cf), o);
  }
  return out;
}

size_t WriteBufferSizeOf(ColumnFamily cf, size_t configured) {
  switch (cf) {
    case ColumnFamily::kExpire:
    case ColumnFamily::kPubsub:
    case ColumnFamily::kPropagate:
      // Queue-like: written and deleted soon after; small memtables, early compaction.
      return 8 << 20;
    case ColumnFamily::kCounters:
      return 4 << 20;
    default:
      return configured;
  }
}

size_t MemtableIndexBuckets(ColumnFamily cf, size_t write_buffer_size) {
  if (!ServesPointReads(cf)) return 0;
  return SkipListMemTableFactory::IndexBucketsFor(write_buffer_size, IndexedEntryBytes(cf));
}

bool ServesPointReads(ColumnFamily cf) {
  switch (cf) {
    case ColumnFamily::kMetadata:
    case ColumnFamily::kSubkey:
    case ColumnFamily::kExpire:
    case ColumnFamily::kCounters:
    case ColumnFamily::kLargeValue:
      return true;
    default:  // kDefault (unused), kZsetScore, kPubsub, kPropagate: scanned in order
      return false;
  }
}

bool MapLiveOption(const std::string& name, const std::string& value, bool* is_db_option,
                   std::string* rocksdb_name, std::string* rocksdb_value) {
  static const std::map<std::string, std::pair<const char*, bool>> kLive = {
      {"rocksdb.write-buffer-size", {"write_buffer_size", false}},
      {"rocksdb.max-write-buffer-number", {"max_write_buffer_number", false}},
      {"rocksdb.target-file-size-base", {"target_file_size_base", false}},
      {"rocksdb.max-bytes-for-level-base", {"max_bytes_for_level_base", false}},
      {"rocksdb.level0-file-num-compaction-trigger", {"level0_file_num_compaction_trigger", false}},
      {"rocksdb.memtable-prefix-bloom-ratio", {"memtable_prefix_bloom_size_ratio", false}},
      {"rocksdb.enable-blob-files", {"enable_blob_files", false}},
      {"rocksdb.min-blob-size", {"min_blob_size", false}},
      {"rocksdb.blob-file-size", {"blob_file_size", false}},
      // Governed by the engine's background thread (storage/blob_gc.h), which reads them.
      {"rocksdb.enable-blob-gc", {"", false}},
      {"rocksdb.blob-gc-garbage-ratio", {"", false}},
      {"rocksdb.blob-gc-age-cutoff", {"blob_garbage_collection_age_cutoff", false}},
      {"rocksdb.blob-gc-force-threshold", {"blob_garbage_collection_force_threshold", false}},
      {"rocksdb.max-background-jobs", {"max_background_jobs", true}},
  };
  auto it = kLive.find(name);
  if (it == kLive.end()) return false;
  *rocksdb_name = it->second.first;
  *is_db_option = it->second.second;
  *rocksdb_value = value == "yes" ? "true" : (value == "no" ? "false" : value);
  return true;
}

}  // namespace basalt
