#include "commands/info.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "commands/command_table.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "storage/crc32c.h"

// jemalloc's control interface, present only when the server binary links jemalloc (the tests
// and sanitizer builds use glibc's malloc).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace basalt {

namespace {

constexpr const char* kBasaltVersion = "0.1.0";

class InfoWriter {
 public:
  void Section(const char* name) {
    if (!out_.empty()) out_ += "\r\n";
    out_ += "# ";
    out_ += name;
    out_ += "\r\n";
  }
  void Field(const std::string& key, const std::string& value) {
    out_ += key;
    out_ += ':';
    out_ += value;
    out_ += "\r\n";
  }
  void Field(const std::string& key, int64_t value) { Field(key, std::to_string(value)); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string HumanBytes(int64_t n) {
  char buf[64];
  double d = static_cast<double>(n);
  if (n < 1024)
    snprintf(buf, sizeof(buf), "%lldB", static_cast<long long>(n));
  else if (n < 1024 * 1024)
    snprintf(buf, sizeof(buf), "%.2fK", d / 1024);
  else if (n < 1024LL * 1024 * 1024)
    snprintf(buf, sizeof(buf), "%.2fM", d / (1024 * 1024));
  else
    snprintf(buf, sizeof(buf), "%.2fG", d / (1024.0 * 1024 * 1024));
  return buf;
}

// "jemalloc-<version>" as Redis reports it, or "libc".
std::string MemoryAllocator() {
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl != nullptr && mallctl("version", &version, &len, nullptr, 0) == 0 && version) {
    std::string name = "jemalloc-";
    name.append(version, strcspn(version, "-"));  // "5.3.0-0-g54eaed1..." -> "5.3.0"
    return name;
  }
  return "libc";
}

int64_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages_total = 0, pages_resident = 0;
  if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
  fclose(f);
  return static_cast<int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
}

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

void ServerSection(ServerState& s, InfoWriter& w) {
  w.Section("Server");
  w.Field("redis_version", "7.0.15");
  w.Field("basalt_version", kBasaltVersion);
  w.Field("redis_mode", "standalone");
  struct utsname name;
  if (uname(&name) == 0)
    w.Field("os", std::string(name.sysname) + " " + name.release + " " + name.machine);
  w.Field("arch_bits", 64);
  w.Field("multiplexing_api", "epoll");
  w.Field("process_id", static_cast<int64_t>(getpid()));
  w.Field("run_id", s.run_id);
  w.Field("tcp_port", s.tcp_port.load());
  w.Field("server_time_usec", UnixMicros());
  int64_t uptime = (UnixMillis() - s.start_time_ms) / 1000;
  w.Field("uptime_in_seconds", uptime);
  w.Field("uptime_in_days", uptime / 86400);
  w.Field("hz", 10);
  w.Field("executable", s.executable);
  w.Field("config_file", s.config->file_path());
}

void ClientsSection(ServerState& s, InfoWriter& w) {
  w.Section("Clients");
  w.Field("connected_clients", static_cast<int64_t>(s.clients.size()));
  w.Field("maxclients", s.config->maxclients.load());
  w.Field("blocked_clients", static_cast<int64_t>(s.blocking.blocked_clients()));
}

void MemorySection(ServerState& s, InfoWriter& w) {
  Engine* engine = s.keyspace->engine();
  int64_t rss = ResidentBytes();
  w.Section("Memory");
  w.Field("used_memory", rss);
  w.Field("used_memory_human", HumanBytes(rss));
  w.Field("used_memory_rss", rss);
  w.Field("used_memory_rss_human", HumanBytes(rss));
  w.Field("maxmemory", 0);
  w.Field("maxmemory_policy", "noeviction");
  w.Field("mem_allocator", MemoryAllocator());
  w.Field("block_cache_usage", static_cast<int64_t>(engine->block_cache()->GetUsage()));
  w.Field("block_cache_capacity", static_cast<int64_t>(engine->block_cache()->GetCapacity()));
  uint64_t memtables = 0;
  engine->db()->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &memtables);
  w.Field("memtables_size", static_cast<int64_t>(memtables));
}

void PersistenceSection(ServerState& s, InfoWriter& w) {
  w.Section("Persistence");
  w.Field("loading", 0);
  w.Field("rdb_changes_since_last_save", 0);
  w.Field("rdb_bgsave_in_progress", 0);
  w.Field("rdb_last_save_time", s.last_save_unix.load());
  w.Field("aof_enabled", 0);
  w.Field("durability", s.config->GetString("durability"));
  uint64_t wal_sync = s.keyspace->engine()->statistics()->getTickerCount(rocksdb::WAL_FILE_SYNCED);
  w.Field("wal_syncs", static_cast<int64_t>(wal_sync));
  StorageHealth health = s.keyspace->engine()->health();
  w.Field("storage_write_status", health.writes_stopped ? "err" : "ok");
  w.Field("storage_last_error", health.last_error);
  w.Field("storage_errors", health.errors);
  w.Field("storage_recoveries", health.recoveries);
}

void StatsSection(ServerState& s, InfoWriter& w) {
  const ServerCounters& c = s.counters;
  w.Section("Stats");
  w.Field("total_connections_received", c.connections_received.load());
  w.Field("total_commands_processed", c.commands_processed.load());
  w.Field("instantaneous_ops_per_sec", 0);
  w.Field("total_net_input_bytes", c.net_input_bytes.load());
  w.Field("total_net_output_bytes", c.net_output_bytes.load());
  w.Field("rejected_connections", c.rejected_connections.load());
  w.Field("client_query_buffer_limit_disconnections", c.query_buffer_disconnections.load());
  w.Field("reply_size_limit_disconnections", c.reply_size_disconnections.load());
  w.Field("grouped_write_commits", c.grouped_commits.load());
  w.Field("grouped_write_commands", c.grouped_commands.load());
  w.Field("delegated_write_commands", c.delegated_commands.load());
  w.Field("moved_connections", c.moved_connections.load());
  w.Field("expired_keys", s.expirer != nullptr ? s.expirer->expired_total() : 0);
  w.Field("evicted_keys", 0);
  w.Field("keyspace_hits", c.keyspace_hits.load());
  w.Field("keyspace_misses", c.keyspace_misses.load());
  w.Field("pubsub_channels", s.pubsub.Size(PubSubKind::kChannel));
  w.Field("pubsub_patterns", s.pubsub.Size(PubSubKind::kPattern));
  w.Field("pubsubshard_channels", s.pubsub.Size(PubSubKind::kShard));
  w.Field("total_error_replies", c.error_replies.load());
}

const char* FeederStateName(ReplicaFeeder::State state) {
  switch (state) {
    case ReplicaFeeder::State::kWaitCheckpoint:
      return "wait_bgsave";
    case ReplicaFeeder::State::kSendCheckpoint:
      return "send_bulk";
    case ReplicaFeeder::State::kOnline:
      return "online";
  }
  return "online";
}

void ReplicaLinkFields(const ReplicationSnapshot& snap, InfoWriter& w) {
  const MasterLink::Info& link = snap.link;
  int64_t now = UnixMillis();
  bool up = link.state == MasterLink::State::kConnected;
  bool syncing = link.state == MasterLink::State::kSync;
  w.Field("master_host", link.host);
  w.Field("master_port", link.port);
  w.Field("master_link_status", up ? "up" : "down");
  w.Field("master_last_io_seconds_ago",
          link.last_io_unix_ms > 0 ? (now - link.last_io_unix_ms) / 1000 : -1);
  w.Field("master_sync_in_progress", syncing ? 1 : 0);
  int64_t applied = link.has_position ? static_cast<int64_t>(link.applied_seq) : 0;
  w.Field("slave_read_repl_offset", applied);
  w.Field("slave_repl_offset", applied);
  if (syncing) {
    w.Field("master_sync_total_bytes", static_cast<int64_t>(link.sync_total_bytes));
    w.Field("master_sync_read_bytes", static_cast<int64_t>(link.sync_read_bytes));
  }
  if (!up) {
    w.Field("master_link_down_since_seconds",
            link.down_since_unix_ms > 0 ? (now - link.down_since_unix_ms) / 1000 : -1);
  }
  // Basalt: how far behind the master this replica is, in sequence numbers and in seconds.
  w.Field("master_latest_seq", static_cast<int64_t>(link.master_latest_seq));
  w.Field("master_lag_seq", static_cast<int64_t>(link.master_latest_seq > link.applied_seq
                                                     ? link.master_latest_seq - link.applied_seq
                                                     : 0));
  char lag[32];
  snprintf(lag, sizeof(lag), "%.3f", static_cast<double>(link.lag_ms) / 1000);
  w.Field("master_lag_seconds", lag);
  if (!link.last_error.empty()) w.Field("master_link_last_error", link.last_error);
  w.Field("slave_priority", 100);
  w.Field("slave_read_only", snap.read_only ? 1 : 0);
  w.Field("replica_announced", 1);
}

void ReplicationSection(ServerState& s, InfoWriter& w) {
  ReplicationSnapshot snap = s.replication->Snapshot();
  w.Section("Replication");
  w.Field("role", snap.replica ? "slave" : "master");
  if (snap.replica) ReplicaLinkFields(snap, w);
  w.Field("connected_slaves", static_cast<int64_t>(snap.replicas.size()));
  int64_t now = UnixMillis();
  for (size_t i = 0; i < snap.replicas.size(); i++) {
    const auto& r = snap.replicas[i];
    uint64_t behind = snap.latest_seq > r.acked_seq ? snap.latest_seq - r.acked_seq : 0;
    int64_t lag = r.last_ack_unix_ms > 0 ? (now - r.last_ack_unix_ms) / 1000 : -1;
    w.Field("slave" + std::to_string(i),
            "ip=" + r.ip + ",port=" + std::to_string(r.port) +
                ",state=" + FeederStateName(r.state) + ",offset=" + std::to_string(r.acked_seq) +
                ",lag=" + std::to_string(lag) + ",lag_seq=" + std::to_string(behind));
  }
  w.Field("master_failover_state", "no-failover");
  w.Field("master_replid", snap.replid);
  w.Field("master_repl_offset", static_cast<int64_t>(snap.latest_seq));
  w.Field("repl_checkpoints_created", static_cast<int64_t>(snap.checkpoints_created));
}

void CpuSection(ServerState&, InfoWriter& w) {
  struct rusage self;
  getrusage(RUSAGE_SELF, &self);
  char buf[64];
  w.Section("CPU");
  snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(self.ru_stime.tv_sec),
           static_cast<long>(self.ru_stime.tv_usec));
  w.Field("used_cpu_sys", buf);
  snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(self.ru_utime.tv_sec),
           static_cast<long>(self.ru_utime.tv_usec));
  w.Field("used_cpu_user", buf);
}

void CommandStatsSection(ServerState& s, InfoWriter& w) {
  w.Section("Commandstats");
  const auto& all = CommandTable::Get().all();
  for (size_t i = 0; i < all.size() && i < s.command_counters.size(); i++) {
    const CommandCounters& cc = s.command_counters[i];
    int64_t calls = cc.calls.load();
    if (calls == 0) continue;
    int64_t usec = cc.usec.load();
    char per_call[32];
    snprintf(per_call, sizeof(per_call), "%.2f", static_cast<double>(usec) / calls);
    w.Field(std::string("cmdstat_") + all[i]->name,
            "calls=" + std::to_string(calls) + ",usec=" + std::to_string(usec) + ",usec_per_call=" +
                per_call + ",rejected_calls=" + std::to_string(cc.rejected.load()) +
                ",failed_calls=" + std::to_string(cc.failed.load()));
  }
}

void KeyspaceSection(ServerState& s, InfoWriter& w) {
  w.Section("Keyspace");
  for (int db = 0; db < s.keyspace->databases(); db++) {
    int64_t keys = s.keyspace->KeyCount(db);
    if (keys <= 0) continue;
    w.Field("db" + std::to_string(db),
            "keys=" + std::to_string(keys) +
                ",expires=" + std::to_string(s.keyspace->ExpireCount(db)) + ",avg_ttl=0");
  }
}

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
  int64_t row_hits = ticker(rocksdb::ROW_CACHE_HIT), row_misses = ticker(rocksdb::ROW_CACHE_MISS);
  w.Field("row_cache_hits", row_hits);
  w.Field("row_cache_misses", row_misses);
  snprintf(
      ratio, sizeof(ratio), "%.4f",
      row_hits + row_misses > 0 ? static_cast<double>(row_hits) / (row_hits + row_misses) : 0.0);
  w.Field("row_cache_hit_rate", ratio);
  w.Field("row_cache_usage",
          engine->row_cache() ? static_cast<int64_t>(engine->row_cache()->GetUsage()) : 0);
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
  w.Field("crc32c", Crc32cImplementation());
}

struct SectionDef {
  const char* name;
  void (*render)(ServerState&, InfoWriter&);
  bool in_default;
};

const SectionDef kSections[] = {
    {"server", ServerSection, true},     {"clients", ClientsSection, true},
    {"memory", MemorySection, true},     {"persistence", PersistenceSection, true},
    {"stats", StatsSection, true},       {"replication", ReplicationSection, true},
    {"cpu", CpuSection, true},           {"commandstats", CommandStatsSection, false},
    {"keyspace", KeyspaceSection, true}, {"rocksdb", RocksDbSection, true},
};

}  // namespace

std::string BuildInfo(ServerState& server, const std::vector<std::string>& argv) {
  std::set<std::string> wanted;
  bool all = false, defaults = argv.size() <= 1;
  for (size_t i = 1; i < argv.size(); i++) {
    std::string name = ToLower(argv[i]);
    if (name == "all" || name == "everything")
      all = true;
    else if (name == "default")
      defaults = true;
    else
      wanted.insert(name);
  }
  InfoWriter w;
  for (const auto& section : kSections) {
    bool include = all || wanted.count(section.name) || (defaults && section.in_default);
    if (include) section.render(server, w);
  }
  return w.take();
}

}  // namespace basalt
