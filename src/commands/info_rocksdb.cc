// INFO rocksdb: Basalt's own section, the storage engine's figures.
#include <cstdio>
#include <cstdlib>
#include <map>

#include "commands/info_writer.h"

namespace basalt {

namespace {

uint64_t IntProperty(Engine* engine, ColumnFamily cf, const std::string& name) {
  uint64_t v = 0;
  engine->db()->GetIntProperty(engine->cf(cf), name, &v);
  return v;
}

// A family's entries, deletions not counted: its SST files' (from their table properties) and its
// memtables'. Exact once a full compaction has dropped what was overwritten or deleted, where
// rocksdb.estimate-num-keys samples the files' properties and can be far off.
uint64_t StoredEntries(Engine* engine, ColumnFamily cf) {
  std::map<std::string, std::string> table;
  uint64_t stored = 0;
  if (engine->db()->GetMapProperty(engine->cf(cf), "rocksdb.aggregated-table-properties", &table)) {
    uint64_t entries = std::strtoull(table["num_entries"].c_str(), nullptr, 10);
    uint64_t deletions = std::strtoull(table["num_deletions"].c_str(), nullptr, 10);
    stored = entries > deletions ? entries - deletions : 0;
  }
  uint64_t memtable = IntProperty(engine, cf, "rocksdb.num-entries-active-mem-table") +
                      IntProperty(engine, cf, "rocksdb.num-entries-imm-mem-tables");
  uint64_t deleted = IntProperty(engine, cf, "rocksdb.num-deletes-active-mem-table") +
                     IntProperty(engine, cf, "rocksdb.num-deletes-imm-mem-tables");
  return stored + (memtable > deleted ? memtable - deleted : 0);
}

}  // namespace

void RocksDbSection(ServerState& s, InfoWriter& w) {
  Engine* engine = s.keyspace->engine();
  rocksdb::Statistics* st = engine->statistics();
  auto ticker = [st](rocksdb::Tickers t) { return static_cast<int64_t>(st->getTickerCount(t)); };
  w.Section("RocksDB");
  for (int i = 0; i < kColumnFamilyCount; i++) {
    auto cf = static_cast<ColumnFamily>(i);
    std::string p = std::string("cf_") + ColumnFamilyName(cf) + "_";
    w.Field(p + "sst_bytes",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.total-sst-files-size")));
    w.Field(p + "live_data_bytes",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.estimate-live-data-size")));
    w.Field(p + "estimate_keys",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.estimate-num-keys")));
    w.Field(p + "stored_entries", static_cast<int64_t>(StoredEntries(engine, cf)));
    w.Field(p + "memtable_bytes",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.cur-size-all-mem-tables")));
    w.Field(p + "blob_files",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.num-blob-files")));
    w.Field(p + "blob_bytes",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.total-blob-file-size")));
    w.Field(p + "live_blob_bytes",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.live-blob-file-size")));
    w.Field(p + "blob_garbage_bytes",
            static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.live-blob-file-garbage-size")));
    w.Field(p + "blob_gc_running", static_cast<int64_t>(engine->blob_gc_running(cf)));
    w.Field(
        p + "pending_compaction_bytes",
        static_cast<int64_t>(IntProperty(engine, cf, "rocksdb.estimate-pending-compaction-bytes")));
  }
  int64_t hits = ticker(rocksdb::BLOCK_CACHE_HIT), misses = ticker(rocksdb::BLOCK_CACHE_MISS);
  w.Field("block_cache_hits", hits);
  w.Field("block_cache_misses", misses);
  char ratio[32];
  snprintf(ratio, sizeof(ratio), "%.4f",
           hits + misses > 0 ? static_cast<double>(hits) / (hits + misses) : 0.0);
  w.Field("block_cache_hit_rate", ratio);
  MetadataCache::Stats meta = engine->metadata_cache_stats();
  w.Field("metadata_cache_hits", meta.hits);
  w.Field("metadata_cache_misses", meta.misses);
  snprintf(ratio, sizeof(ratio), "%.4f",
           meta.hits + meta.misses > 0 ? static_cast<double>(meta.hits) / (meta.hits + meta.misses)
                                       : 0.0);
  w.Field("metadata_cache_hit_rate", ratio);
  w.Field("metadata_cache_entries", meta.entries);
  w.Field("metadata_cache_usage", meta.bytes);
  w.Field("metadata_cache_complete_shards", meta.complete_shards);
  MemberFilters::Stats filters = s.keyspace->member_filters().stats();
  w.Field("member_filters", static_cast<int64_t>(filters.filters));
  w.Field("member_filter_usage", static_cast<int64_t>(filters.bytes));
  w.Field("member_filter_absent_answers", static_cast<int64_t>(filters.absent_answers));
  w.Field("flush_write_bytes", ticker(rocksdb::FLUSH_WRITE_BYTES));
  w.Field("compact_read_bytes", ticker(rocksdb::COMPACT_READ_BYTES));
  w.Field("compact_write_bytes", ticker(rocksdb::COMPACT_WRITE_BYTES));
  // Entries the compaction filters dropped as stale (types/compaction.h), flushes included.
  w.Field("compaction_filter_dropped_keys", ticker(rocksdb::COMPACTION_KEY_DROP_USER));
  w.Field("blob_write_bytes", ticker(rocksdb::BLOB_DB_BLOB_FILE_BYTES_WRITTEN));
  w.Field("blob_read_bytes", ticker(rocksdb::BLOB_DB_BLOB_FILE_BYTES_READ));
  w.Field("blob_gc_relocated_bytes", ticker(rocksdb::BLOB_DB_GC_BYTES_RELOCATED));
  w.Field("wal_bytes", ticker(rocksdb::WAL_FILE_BYTES));
  w.Field("stall_micros", ticker(rocksdb::STALL_MICROS));
  uint64_t bg_errors = 0;
  engine->db()->GetIntProperty("rocksdb.background-errors", &bg_errors);
  w.Field("background_errors", static_cast<int64_t>(bg_errors));
  uint64_t running = 0;
  engine->db()->GetIntProperty("rocksdb.num-running-compactions", &running);
  w.Field("running_compactions", static_cast<int64_t>(running));
  w.Field("manual_compaction_running", engine->manual_compaction_running() ? 1 : 0);
  w.Field("reclaimed_files", static_cast<int64_t>(engine->reclaimed_files()));
  w.Field("latest_sequence", static_cast<int64_t>(engine->db()->GetLatestSequenceNumber()));
}

}  // namespace basalt
