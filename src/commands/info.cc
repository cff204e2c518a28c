#include "commands/info.h"

#include <malloc.h>
#include <rocksdb/advanced_cache.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "commands/info_writer.h"
#include "commands/migrate_sockets.h"
#include "commands/saves.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "common/version.h"
#include "stats/error_stats.h"

// jemalloc's control interface, present only when the server binary links jemalloc (the tests
// and sanitizer builds use glibc's malloc).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace basalt {

namespace {

std::atomic<int64_t> g_peak_memory{0};
std::atomic<int64_t> g_startup_memory{0};

int64_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages_total = 0, pages_resident = 0;
  if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
  fclose(f);
  return static_cast<int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
}

size_t JemallocStat(const char* name) {
  size_t value = 0, len = sizeof(value);
  if (mallctl(name, &value, &len, nullptr, 0) != 0) return 0;
  return value;
}

// The allocator's allocated, active and resident bytes.
void AllocatorFigures(MemoryFigures* m) {
  if (mallctl != nullptr) {
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    mallctl("epoch", &epoch, &len, &epoch, len);  // refreshes jemalloc's cached statistics
    m->allocator_allocated = static_cast<int64_t>(JemallocStat("stats.allocated"));
    m->allocator_active = static_cast<int64_t>(JemallocStat("stats.active"));
    m->allocator_resident = static_cast<int64_t>(JemallocStat("stats.resident"));
    return;
  }
  struct mallinfo2 mi = mallinfo2();
  m->allocator_allocated = static_cast<int64_t>(mi.uordblks + mi.hblkhd);
  m->allocator_active = static_cast<int64_t>(mi.arena + mi.hblkhd);
  m->allocator_resident = m->rss;
}

std::string Percent(double value) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f%%", value);
  return buf;
}

double Ratio(int64_t a, int64_t b) {
  return b > 0 ? static_cast<double>(a) / b : 0;
}

void ServerSection(ServerState& s, InfoWriter& w) {
  w.Section("Server");
  w.Field("redis_version", kRedisVersion);
  w.Field("redis_git_sha1", "00000000");
  w.Field("redis_git_dirty", 0);
  w.Field("redis_build_id", "0");
  w.Field("basalt_version", kServerVersion);
  w.Field("redis_mode", "standalone");
  struct utsname name;
  if (uname(&name) == 0) {
    w.Field("os", std::string(name.sysname) + " " + name.release + " " + name.machine);
  }
  w.Field("arch_bits", static_cast<int>(sizeof(void*) * 8));
  if (CommandClock::CountsCpuTicks()) {
    w.Field("monotonic_clock",
            "X86 TSC @ " + std::to_string(static_cast<int64_t>(CommandClock::TicksPerMicro())) +
                " ticks/us");
  } else {
    w.Field("monotonic_clock", "POSIX clock_gettime");
  }
  w.Field("multiplexing_api", "epoll");
  w.Field("atomicvar_api", "c11-builtin");
#ifdef __GNUC__
  w.Field("gcc_version", std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                             std::to_string(__GNUC_PATCHLEVEL__));
#else
  w.Field("gcc_version", "0.0.0");
#endif
  w.Field("process_id", static_cast<int64_t>(getpid()));
  w.Field("process_supervised", "no");
  w.Field("run_id", s.run_id);
  w.Field("tcp_port", s.tcp_port.load());
  w.Field("server_time_usec", UnixMicros());
  int64_t uptime = (UnixMillis() - s.start_time_ms) / 1000;
  w.Field("uptime_in_seconds", uptime);
  w.Field("uptime_in_days", uptime / 86400);
  w.Field("hz", 10);
  w.Field("configured_hz", 10);
  // Redis's LRU clock: seconds, 24 bits.
  w.Field("lru_clock", (UnixMillis() / 1000) & ((1 << 24) - 1));
  w.Field("executable", s.executable);
  w.Field("config_file", s.config->file_path());
  w.Field("io_threads_active", 0);
  w.Field("listener0",
          "name=tcp,bind=" + s.config->GetString("bind") + ",port=" + std::to_string(s.tcp_port));
}

void ClientsSection(ServerState& s, InfoWriter& w) {
  size_t max_in = 0, max_out = 0;
  for (const auto& session : s.clients.Snapshot()) {
    max_in = std::max(max_in, session->query_buffer_bytes.load(std::memory_order_relaxed));
    max_out = std::max(max_out, session->output_buffer_bytes.load(std::memory_order_relaxed));
  }
  w.Section("Clients");
  w.Field("connected_clients", s.clients.size());
  w.Field("cluster_connections", 0);
  w.Field("maxclients", s.config->maxclients.load());
  w.Field("client_recent_max_input_buffer", max_in);
  w.Field("client_recent_max_output_buffer", max_out);
  // A parked command whose wake-up a pause holds is counted once, as parked.
  const size_t held = s.pause.HeldClients([&](uint64_t id) { return !s.blocking.IsBlocked(id); });
  w.Field("blocked_clients", s.blocking.blocked_clients() + held);
  w.Field("tracking_clients", s.tracking.clients());
  w.Field("clients_in_timeout_table", 0);
  w.Field("total_blocking_keys", s.blocking.BlockingKeys());
  w.Field("total_blocking_keys_on_nokey", s.blocking.BlockingKeysOnNokey());
}

void MemorySection(ServerState& s, InfoWriter& w) {
  MemoryFigures m = ReadMemoryFigures(s);
  int64_t maxmemory = s.config->GetInt("maxmemory");
  std::string policy = s.config->GetString("maxmemory-policy");
  w.Section("Memory");
  w.Field("used_memory", m.used);
  w.Field("used_memory_human", HumanBytes(m.used));
  w.Field("used_memory_rss", m.rss);
  w.Field("used_memory_rss_human", HumanBytes(m.rss));
  w.Field("used_memory_peak", m.peak);
  w.Field("used_memory_peak_human", HumanBytes(m.peak));
  w.Field("used_memory_peak_perc", Percent(Ratio(m.used, m.peak) * 100));
  w.Field("used_memory_overhead", m.overhead());
  w.Field("used_memory_startup", m.startup);
  w.Field("used_memory_dataset", m.dataset());
  w.Field("used_memory_dataset_perc",
          Percent(Ratio(m.dataset(), m.used - m.startup > 0 ? m.used - m.startup : 0) * 100));
  w.Field("allocator_allocated", m.allocator_allocated);
  w.Field("allocator_active", m.allocator_active);
  w.Field("allocator_resident", m.allocator_resident);
  w.Field("total_system_memory", m.total_system);
  w.Field("total_system_memory_human", HumanBytes(m.total_system));
  // The Lua interpreters live behind ServerState's opaque Scripting: their memory figures are
  // not reachable from here; the script and function counts are kept in ServerState.
  w.Field("used_memory_lua", 0);
  w.Field("used_memory_vm_eval", 0);
  w.Field("used_memory_lua_human", "0B");
  w.Field("used_memory_scripts_eval", 0);
  w.Field("number_of_cached_scripts", s.cached_scripts.load(std::memory_order_relaxed));
  w.Field("number_of_functions", s.functions.load(std::memory_order_relaxed));
  w.Field("number_of_libraries", s.function_libraries.load(std::memory_order_relaxed));
  w.Field("used_memory_vm_functions", 0);
  w.Field("used_memory_vm_total", 0);
  w.Field("used_memory_vm_total_human", "0B");
  w.Field("used_memory_functions", 0);
  w.Field("used_memory_scripts", 0);
  w.Field("used_memory_scripts_human", "0B");
  w.Field("maxmemory", maxmemory);
  w.Field("maxmemory_human", HumanBytes(maxmemory));
  w.Field("maxmemory_policy", policy.empty() ? "noeviction" : policy);
  w.Fixed("allocator_frag_ratio", Ratio(m.allocator_active, m.allocator_allocated));
  w.Field("allocator_frag_bytes", m.allocator_active - m.allocator_allocated);
  w.Fixed("allocator_rss_ratio", Ratio(m.allocator_resident, m.allocator_active));
  w.Field("allocator_rss_bytes", m.allocator_resident - m.allocator_active);
  w.Fixed("rss_overhead_ratio", Ratio(m.rss, m.allocator_resident));
  w.Field("rss_overhead_bytes", m.rss - m.allocator_resident);
  w.Fixed("mem_fragmentation_ratio", Ratio(m.rss, m.used));
  w.Field("mem_fragmentation_bytes", m.rss - m.used);
  w.Field("mem_not_counted_for_evict", 0);
  w.Field("mem_replication_backlog", 0);
  w.Field("mem_total_replication_buffers", 0);
  w.Field("mem_clients_slaves", m.clients_replicas);
  w.Field("mem_clients_normal", m.clients_normal);
  w.Field("mem_cluster_links", 0);
  w.Field("mem_aof_buffer", 0);
  w.Field("mem_allocator", MemoryAllocatorName());
  w.Field("active_defrag_running", 0);
  w.Field("lazyfree_pending_objects", 0);
  w.Field("lazyfreed_objects", 0);
  // Basalt: where the memory goes.
  w.Field("block_cache_usage", m.block_cache);
  w.Field("block_cache_capacity",
          static_cast<int64_t>(s.keyspace->engine()->block_cache()->GetCapacity()));
  w.Field("memtables_size", m.memtables);
}

void PersistenceSection(ServerState& s, InfoWriter& w) {
  const ServerCounters& c = s.counters;
  w.Section("Persistence");
  const bool loading = s.keyspace->loading();
  w.Field("loading", loading ? 1 : 0);
  w.Field("async_loading", 0);
  if (loading) {
    w.Field("loading_start_time", s.keyspace->loading_started_unix());
    w.Field("loading_total_bytes", static_cast<int64_t>(s.keyspace->loading_total_bytes()));
  }
  w.Field("current_cow_peak", 0);
  w.Field("current_cow_size", 0);
  w.Field("current_cow_size_age", 0);
  w.Field("current_fork_perc", "0.00");
  w.Field("current_save_keys_processed", 0);
  w.Field("current_save_keys_total", 0);
  // Every write is persisted by RocksDB as it happens: nothing waits for a save.
  w.Field("rdb_changes_since_last_save", s.keyspace->changes_since_save());
  Saves::Info saves = s.saves != nullptr ? s.saves->info() : Saves::Info();
  w.Field("rdb_bgsave_in_progress", saves.bgsave_running ? 1 : 0);
  w.Field("rdb_last_save_time", s.last_save_unix.load());
  w.Field("rdb_last_bgsave_status", saves.last_bgsave_ok ? "ok" : "err");
  w.Field("rdb_last_bgsave_time_sec", saves.last_bgsave_seconds);
  w.Field("rdb_current_bgsave_time_sec",
          saves.bgsave_running ? (UnixMillis() - saves.bgsave_started_ms) / 1000 : -1);
  w.Field("rdb_saves", c.rdb_saves.load());
  w.Field("rdb_last_cow_size", 0);
  w.Field("rdb_last_load_keys_expired", 0);
  w.Field("rdb_last_load_keys_loaded", 0);
  w.Field("aof_enabled", 0);
  w.Field("aof_rewrite_in_progress", 0);
  w.Field("aof_rewrite_scheduled", 0);
  w.Field("aof_last_rewrite_time_sec", -1);
  w.Field("aof_current_rewrite_time_sec", -1);
  w.Field("aof_last_bgrewrite_status", "ok");
  w.Field("aof_rewrites", 0);
  w.Field("aof_rewrites_consecutive_failures", 0);
  w.Field("aof_last_write_status", "ok");
  w.Field("aof_last_cow_size", 0);
  w.Field("module_fork_in_progress", 0);
  w.Field("module_fork_last_cow_size", 0);
  // Basalt: the WAL's durability and the storage engine's health.
  w.Field("durability", s.config->GetString("durability"));
  uint64_t wal_sync = s.keyspace->engine()->statistics()->getTickerCount(rocksdb::WAL_FILE_SYNCED);
  w.Field("wal_syncs", wal_sync);
  StorageHealth health = s.keyspace->engine()->health();
  w.Field("storage_write_status", health.writes_stopped ? "err" : "ok");
  w.Field("storage_last_error", health.last_error);
  w.Field("storage_errors", health.errors);
  w.Field("storage_recoveries", health.recoveries);
  // Basalt: the last RDB file's contents (keys left out: docs/data-portability.md), the files
  // sent to SYNC/PSYNC, and BACKUP.
  w.Field("rdb_last_save_keys", saves.last_save_keys);
  w.Field("rdb_syncs", saves.syncs);
  w.Field("backups", saves.backups);
  w.Field("backup_last_time", saves.last_backup_unix);
  w.Field("backup_last_status", saves.last_backup_ok ? "ok" : "err");
}

// instantaneous_ops_per_sec and the kbps figures: rates over the interval between two INFO stats
// at least 100 ms apart (Redis averages samples its cron takes every 100 ms; Basalt has no such
// cron, and monitoring tools poll INFO at a steady pace).
struct Rates {
  int64_t ops_per_sec = 0;
  double input_kbps = 0;
  double output_kbps = 0;
};

Rates CurrentRates(const ServerCounters& c) {
  struct Sample {
    int64_t ms = 0, commands = 0, input = 0, output = 0;
  };
  static std::mutex mu;
  static Sample last;
  static Rates rates;
  std::lock_guard<std::mutex> lock(mu);
  Sample now{UnixMillis(), c.commands_processed.load(), c.net_input_bytes.load(),
             c.net_output_bytes.load()};
  int64_t elapsed = now.ms - last.ms;
  if (last.ms != 0 && elapsed >= 100) {
    // A CONFIG RESETSTAT in between makes a counter go back: that interval counts from zero.
    auto per_sec = [elapsed](int64_t from, int64_t to) {
      return static_cast<double>(to >= from ? to - from : to) * 1000 / static_cast<double>(elapsed);
    };
    rates.ops_per_sec = static_cast<int64_t>(per_sec(last.commands, now.commands));
    rates.input_kbps = per_sec(last.input, now.input) / 1024;
    rates.output_kbps = per_sec(last.output, now.output) / 1024;
  }
  if (last.ms == 0 || elapsed >= 100) last = now;
  return rates;
}

void StatsSection(ServerState& s, InfoWriter& w) {
  const ServerCounters& c = s.counters;
  const Rates rates = CurrentRates(c);
  w.Section("Stats");
  w.Field("total_connections_received", c.connections_received.load());
  w.Field("total_commands_processed", c.commands_processed.load());
  w.Field("instantaneous_ops_per_sec", rates.ops_per_sec);
  w.Field("total_net_input_bytes", c.net_input_bytes.load());
  w.Field("total_net_output_bytes", c.net_output_bytes.load());
  w.Field("total_net_repl_input_bytes", 0);
  w.Field("total_net_repl_output_bytes", 0);
  w.Fixed("instantaneous_input_kbps", rates.input_kbps);
  w.Fixed("instantaneous_output_kbps", rates.output_kbps);
  w.Field("instantaneous_input_repl_kbps", "0.00");
  w.Field("instantaneous_output_repl_kbps", "0.00");
  w.Field("rejected_connections", c.rejected_connections.load());
  w.Field("sync_full", 0);
  w.Field("sync_partial_ok", 0);
  w.Field("sync_partial_err", 0);
  w.Field("expired_keys", s.expirer != nullptr ? s.expirer->expired_total() : 0);
  w.Field("expired_stale_perc", "0.00");
  w.Field("expired_time_cap_reached_count", 0);
  w.Field("expire_cycle_cpu_milliseconds", 0);
  w.Field("evicted_keys", 0);
  w.Field("evicted_clients", 0);
  w.Field("total_eviction_exceeded_time", 0);
  w.Field("current_eviction_exceeded_time", 0);
  w.Field("keyspace_hits", c.keyspace_hits.load());
  w.Field("keyspace_misses", c.keyspace_misses.load());
  w.Field("pubsub_channels", s.pubsub.Size(PubSubKind::kChannel));
  w.Field("pubsub_patterns", s.pubsub.Size(PubSubKind::kPattern));
  w.Field("pubsubshard_channels", s.pubsub.Size(PubSubKind::kShard));
  w.Field("latest_fork_usec", 0);
  w.Field("total_forks", 0);
  w.Field("migrate_cached_sockets", MigrateSockets::Get().Count());
  w.Field("slave_expires_tracked_keys", 0);
  w.Field("active_defrag_hits", 0);
  w.Field("active_defrag_misses", 0);
  w.Field("active_defrag_key_hits", 0);
  w.Field("active_defrag_key_misses", 0);
  w.Field("total_active_defrag_time", 0);
  w.Field("current_active_defrag_time", 0);
  w.Field("tracking_total_keys", s.tracking.total_keys());
  w.Field("tracking_total_items", s.tracking.total_items());
  w.Field("tracking_total_prefixes", s.tracking.total_prefixes());
  w.Field("unexpected_error_replies", 0);
  w.Field("total_error_replies", ProcessErrorStats().total());
  w.Field("dump_payload_sanitizations", 0);
  w.Field("total_reads_processed", c.reads_processed.load());
  w.Field("total_writes_processed", c.writes_processed.load());
  w.Field("io_threaded_reads_processed", 0);
  w.Field("io_threaded_writes_processed", 0);
  w.Field("reply_buffer_shrinks", 0);
  w.Field("reply_buffer_expands", 0);
  w.Field("eventloop_cycles", 0);
  w.Field("eventloop_duration_sum", 0);
  w.Field("eventloop_duration_cmd_sum", 0);
  w.Field("instantaneous_eventloop_cycles_per_sec", 0);
  w.Field("instantaneous_eventloop_duration_usec", 0);
  w.Field("acl_access_denied_auth", c.acl_denied_auth.load());
  w.Field("acl_access_denied_cmd", c.acl_denied_cmd.load());
  w.Field("acl_access_denied_key", c.acl_denied_key.load());
  w.Field("acl_access_denied_channel", c.acl_denied_channel.load());
  // Basalt: pipelined writes committed together, writes handed between workers and reads
  // handed to the read threads.
  w.Field("grouped_write_commits", c.grouped_commits.load());
  w.Field("grouped_write_commands", c.grouped_commands.load());
  w.Field("delegated_write_commands", c.delegated_commands.load());
  w.Field("moved_connections", c.moved_connections.load());
  w.Field("offloaded_reads", c.offloaded_reads.load());
  w.Field("client_query_buffer_limit_disconnections", c.query_buffer_disconnections.load());
  w.Field("reply_size_limit_disconnections", c.reply_size_disconnections.load());
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
    int64_t total = static_cast<int64_t>(link.sync_total_bytes);
    int64_t read = static_cast<int64_t>(link.sync_read_bytes);
    w.Field("master_sync_total_bytes", total);
    w.Field("master_sync_read_bytes", read);
    w.Field("master_sync_left_bytes", total - read);
    w.Fixed("master_sync_perc", total > 0 ? Ratio(read, total) * 100 : 0);
    w.Field("master_sync_last_io_seconds_ago",
            link.last_io_unix_ms > 0 ? (now - link.last_io_unix_ms) / 1000 : -1);
  }
  if (!up) {
    w.Field("master_link_down_since_seconds",
            link.down_since_unix_ms > 0 ? (now - link.down_since_unix_ms) / 1000 : -1);
  }
  w.Field("slave_priority", 100);
  w.Field("slave_read_only", snap.read_only ? 1 : 0);
  w.Field("replica_announced", 1);
  // Basalt: which protocol the link speaks (a Redis master's offsets are bytes of its stream,
  // not sequence numbers), and how far behind the master this replica is.
  w.Field("master_kind", link.redis_master ? "redis" : "basalt");
  w.Field("master_latest_seq", link.master_latest_seq);
  w.Field("master_lag_seq", link.master_latest_seq > link.applied_seq
                                ? link.master_latest_seq - link.applied_seq
                                : uint64_t{0});
  w.Fixed("master_lag_seconds", static_cast<double>(link.lag_ms) / 1000, 3);
  if (!link.last_error.empty()) w.Field("master_link_last_error", link.last_error);
}

void ReplicationSection(ServerState& s, InfoWriter& w) {
  ReplicationSnapshot snap = s.replication->Snapshot();
  w.Section("Replication");
  w.Field("role", snap.replica ? "slave" : "master");
  if (snap.replica) ReplicaLinkFields(snap, w);
  // Basalt replicas, then Redis replicas of the command stream (commands/replica_stream.h),
  // whose offsets count bytes of that stream.
  const std::vector<Saves::RedisReplica> redis_replicas =
      s.saves != nullptr ? s.saves->RedisReplicas() : std::vector<Saves::RedisReplica>();
  w.Field("connected_slaves", snap.replicas.size() + redis_replicas.size());
  int64_t now = UnixMillis();
  size_t index = 0;
  for (const auto& r : snap.replicas) {
    uint64_t behind = snap.latest_seq > r.acked_seq ? snap.latest_seq - r.acked_seq : 0;
    int64_t lag = r.last_ack_unix_ms > 0 ? (now - r.last_ack_unix_ms) / 1000 : -1;
    w.Field("slave" + std::to_string(index++),
            "ip=" + r.ip + ",port=" + std::to_string(r.port) +
                ",state=" + FeederStateName(r.state) + ",offset=" + std::to_string(r.acked_seq) +
                ",lag=" + std::to_string(lag) + ",lag_seq=" + std::to_string(behind));
  }
  for (const auto& r : redis_replicas) {
    int64_t lag = r.last_ack_unix_ms > 0 ? (now - r.last_ack_unix_ms) / 1000 : -1;
    w.Field("slave" + std::to_string(index++),
            "ip=" + r.ip + ",port=" + std::to_string(r.port) +
                ",state=" + (r.online ? "online" : "wait_bgsave") +
                ",offset=" + std::to_string(r.offset) + ",lag=" + std::to_string(lag));
  }
  w.Field("master_failover_state",
          s.failover != nullptr ? s.failover->state_name() : "no-failover");
  // A replica of a Redis master shows its master's replication id and offset, as Redis does.
  const bool redis_master = snap.replica && snap.link.redis_master && snap.link.has_position;
  w.Field("master_replid", redis_master ? snap.link.master_replid : snap.replid);
  w.Field("master_replid2", std::string(40, '0'));
  w.Field("master_repl_offset", redis_master ? snap.link.applied_seq : snap.latest_seq);
  w.Field("second_repl_offset", -1);
  // Replicas catch up from the RocksDB WAL, not from an in-memory backlog.
  w.Field("repl_backlog_active", 0);
  w.Field("repl_backlog_size", 1048576);
  w.Field("repl_backlog_first_byte_offset", 0);
  w.Field("repl_backlog_histlen", 0);
  w.Field("repl_checkpoints_created", snap.checkpoints_created);
}

std::string CpuTime(const struct timeval& tv) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec),
           static_cast<long>(tv.tv_usec));
  return buf;
}

void CpuSection(ServerState&, InfoWriter& w) {
  struct rusage self, children, thread;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  w.Section("CPU");
  w.Field("used_cpu_sys", CpuTime(self.ru_stime));
  w.Field("used_cpu_user", CpuTime(self.ru_utime));
  w.Field("used_cpu_sys_children", CpuTime(children.ru_stime));
  w.Field("used_cpu_user_children", CpuTime(children.ru_utime));
  // The thread answering INFO: a worker, Basalt's nearest to Redis's main thread.
  getrusage(RUSAGE_THREAD, &thread);
  w.Field("used_cpu_sys_main_thread", CpuTime(thread.ru_stime));
  w.Field("used_cpu_user_main_thread", CpuTime(thread.ru_utime));
}

void ModulesSection(ServerState&, InfoWriter& w) {
  w.Section("Modules");
}

void ClusterSection(ServerState&, InfoWriter& w) {
  w.Section("Cluster");
  w.Field("cluster_enabled", 0);
}

void KeyspaceSection(ServerState& s, InfoWriter& w) {
  w.Section("Keyspace");
  for (int db = 0; db < s.keyspace->databases(); db++) {
    int64_t keys = s.keyspace->KeyCount(db);
    int64_t expires = s.keyspace->ExpireCount(db);
    if (keys <= 0 && expires <= 0) continue;
    w.Field("db" + std::to_string(db),
            "keys=" + std::to_string(keys) + ",expires=" + std::to_string(expires) + ",avg_ttl=0");
  }
}

struct SectionDef {
  const char* name;
  void (*render)(ServerState&, InfoWriter&);
  bool in_default;
};

// Redis 7.2's order; Basalt's rocksdb section comes last, where Redis puts module sections.
const SectionDef kSections[] = {
    {"server", ServerSection, true},
    {"clients", ClientsSection, true},
    {"memory", MemorySection, true},
    {"persistence", PersistenceSection, true},
    {"stats", StatsSection, true},
    {"replication", ReplicationSection, true},
    {"cpu", CpuSection, true},
    {"modules", ModulesSection, true},
    {"commandstats", CommandStatsSection, false},
    {"errorstats", ErrorStatsSection, true},
    {"latencystats", LatencyStatsSection, false},
    {"cluster", ClusterSection, true},
    {"keyspace", KeyspaceSection, true},
    {"rocksdb", RocksDbSection, true},
};

}  // namespace

void InfoWriter::Fixed(const std::string& key, double value, int decimals) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  Field(key, std::string(buf));
}

std::string HumanBytes(int64_t n) {
  char buf[64];
  double d = static_cast<double>(n);
  if (n < 1024) {
    snprintf(buf, sizeof(buf), "%lldB", static_cast<long long>(n));
  } else if (n < 1024 * 1024) {
    snprintf(buf, sizeof(buf), "%.2fK", d / 1024);
  } else if (n < 1024LL * 1024 * 1024) {
    snprintf(buf, sizeof(buf), "%.2fM", d / (1024 * 1024));
  } else if (n < 1024LL * 1024 * 1024 * 1024) {
    snprintf(buf, sizeof(buf), "%.2fG", d / (1024.0 * 1024 * 1024));
  } else {
    snprintf(buf, sizeof(buf), "%.2fT", d / (1024.0 * 1024 * 1024 * 1024));
  }
  return buf;
}

std::string MemoryAllocatorName() {
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl != nullptr && mallctl("version", &version, &len, nullptr, 0) == 0 && version) {
    std::string name = "jemalloc-";
    name.append(version, strcspn(version, "-"));  // "5.3.0-0-g54eaed1..." -> "5.3.0"
    return name;
  }
  return "libc";
}

int64_t UsedMemoryBytes() {
  MemoryFigures m;
  AllocatorFigures(&m);
  return m.allocator_allocated > 0 ? m.allocator_allocated : ResidentBytes();
}

MemoryFigures ReadMemoryFigures(ServerState& s) {
  MemoryFigures m;
  m.rss = ResidentBytes();
  AllocatorFigures(&m);
  m.used = m.allocator_allocated > 0 ? m.allocator_allocated : m.rss;
  int64_t peak = g_peak_memory.load(std::memory_order_relaxed);
  while (m.used > peak && !g_peak_memory.compare_exchange_weak(peak, m.used)) {
  }
  m.peak = std::max(peak, m.used);
  m.startup = std::min(g_startup_memory.load(std::memory_order_relaxed), m.used);
  m.total_system = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  for (const auto& session : s.clients.Snapshot()) {
    m.clients_normal += static_cast<int64_t>(session->query_buffer_bytes.load() +
                                             session->output_buffer_bytes.load());
  }
  Engine* engine = s.keyspace->engine();
  m.block_cache = static_cast<int64_t>(engine->block_cache()->GetUsage());
  uint64_t memtables = 0;
  engine->db()->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &memtables);
  m.memtables = static_cast<int64_t>(memtables);
  m.metadata_cache = engine->metadata_cache_stats().bytes;
  m.member_filters = static_cast<int64_t>(s.keyspace->member_filters().stats().bytes);
  return m;
}

std::string BuildInfo(ServerState& server, const std::vector<std::string>& argv) {
  std::set<std::string> wanted;
  bool all = false, defaults = argv.size() <= 1;
  for (size_t i = 1; i < argv.size(); i++) {
    std::string name = ToLower(argv[i]);
    if (name == "all" || name == "everything") {
      all = true;
    } else if (name == "default") {
      defaults = true;
    } else {
      wanted.insert(name == "module_list" ? "modules" : name);
    }
  }
  InfoWriter w;
  for (const auto& section : kSections) {
    bool include = all || wanted.count(section.name) || (defaults && section.in_default);
    if (include) section.render(server, w);
  }
  return w.take();
}

Status InstallStatsConfigHooks(Config& config, ServerState& state) {
  auto percentiles = ParsePercentiles(config.GetString("latency-tracking-info-percentiles"));
  if (!percentiles.ok()) {
    return Status::InvalidArgument("latency-tracking-info-percentiles: " +
                                   percentiles.status().message());
  }
  MemoryFigures m;
  AllocatorFigures(&m);
  g_startup_memory = m.allocator_allocated > 0 ? m.allocator_allocated : ResidentBytes();
  state.latency_tracking = config.GetBool("latency-tracking");
  state.latency_monitor_threshold_ms = config.GetInt("latency-monitor-threshold");
  config.AddApplyHook("latency-tracking",
                      [&state](const std::string& name, const std::string& value) -> Status {
                        if (name == "latency-tracking") {
                          state.latency_tracking = value == "yes";
                        } else if (name == "latency-tracking-info-percentiles") {
                          auto parsed = ParsePercentiles(value);
                          if (!parsed.ok()) return parsed.status();
                        }
                        return Status::OK();
                      });
  config.AddApplyHook("latency-monitor-threshold",
                      [&state](const std::string&, const std::string& value) {
                        state.latency_monitor_threshold_ms = std::stoll(value);
                        return Status::OK();
                      });
  return Status::OK();
}

void ResetServerStats(ServerState& state) {
  state.counters.Reset();
  state.command_stats.Reset();
  ProcessErrorStats().Reset();
}

}  // namespace basalt
