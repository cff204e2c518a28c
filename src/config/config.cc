#include "config/config.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <optional>

#include "common/strutil.h"
#include "config/redis_keys.h"

namespace basalt {

namespace {

constexpr int64_t kMB = 1024 * 1024;

ConfigKey BasaltKey(ConfigKey key) {
  key.basalt_only = true;
  return key;
}

// The table. Keep conf/basalt.conf in step with it (tests/unit/config_test checks that every
// key here appears there).
const std::vector<ConfigKey> kKeys = {
    // Network and process
    {"bind", ConfigKind::kList, "127.0.0.1", true, 0, 0, "",
     "addresses to listen on; one prefixed with '-' is skipped if it can't be bound", false,
     CheckBind},
    {"port", ConfigKind::kInt, "6379", true, 0, 65535, "", "TCP port"},
    {"protected-mode", ConfigKind::kBool, "yes", true, 0, 0, "",
     "refuse non-loopback clients while no password is set"},
    {"dir", ConfigKind::kString, "./data", false, 0, 0, "", "data directory (RocksDB lives here)"},
    {"dbfilename", ConfigKind::kString, "dump.rdb", true, 0, 0, "",
     "the RDB file SAVE and BGSAVE write into dir (a file name, not a path)", false,
     CheckDbFilename, true},
    BasaltKey({"workers", ConfigKind::kInt, "2", false, 1, 256, "",
               "worker threads serving connections"}),
    BasaltKey(
        {"read-threads", ConfigKind::kInt, "32", false, 0, 1024, "",
         "threads that run the reads whose data is not in memory, so that workers never wait for "
         "the disk (0 = reads wait on their worker)"}),
    BasaltKey(
        {"worker-idle-polls", ConfigKind::kInt, "3", true, 0, 1000, "",
         "times a worker that found no input polls its sockets again, yielding the CPU in between, "
         "before it sleeps (0 = sleep at once)"}),
    BasaltKey(
        {"worker-move-hand-overs", ConfigKind::kInt, "4", true, 0, 1000000, "",
         "a client whose writes are handed to one other worker this many times in a row moves to "
         "that worker (0 = never)"}),
    {"databases", ConfigKind::kInt, "16", false, 1, 16, "", "number of logical databases"},
    {"tcp-backlog", ConfigKind::kInt, "511", false, 0, INT32_MAX, "",
     "listen() backlog of each listening socket"},
    {"tcp-keepalive", ConfigKind::kInt, "300", true, 0, INT32_MAX, "",
     "seconds between TCP keepalive probes on client sockets (0 = no keepalive)"},
    {"daemonize", ConfigKind::kBool, "no", false, 0, 0, "",
     "fork to the background once the config is valid"},
    {"pidfile", ConfigKind::kString, "", false, 0, 0, "",
     "file the server writes its pid to at start and removes at clean shutdown (empty: none)"},
    {"supervised", ConfigKind::kEnum, "no", false, 0, 0, "upstart|systemd|auto|no",
     "systemd/auto: tell $NOTIFY_SOCKET READY=1 once serving (sd_notify)"},
    {"hz", ConfigKind::kInt, "10", true, 0, INT32_MAX, "",
     "rounds per second of the active expiry (clamped to 1..500)"},
    {"loglevel", ConfigKind::kEnum, "notice", true, 0, 0, "debug|verbose|notice|warning|nothing",
     "log verbosity"},
    {"logfile", ConfigKind::kString, "", false, 0, 0, "", "log file; empty logs to stderr"},
    {"syslog-enabled", ConfigKind::kBool, "no", false, 0, 0, "", "also send log lines to syslog"},
    {"syslog-ident", ConfigKind::kString, "redis", false, 0, 0, "", "syslog identity"},
    {"syslog-facility", ConfigKind::kEnum, "local0", false, 0, 0,
     "user|local0|local1|local2|local3|local4|local5|local6|local7", "syslog facility"},
    // Limits
    {"maxclients", ConfigKind::kInt, "10000", true, 1, UINT32_MAX, "", "maximum connected clients"},
    {"timeout", ConfigKind::kInt, "0", true, 0, INT32_MAX, "",
     "close idle clients after this many seconds (0 = never)"},
    {"proto-max-bulk-len", ConfigKind::kMemory, "512mb", true, 1024 * 1024, INT64_MAX, "",
     "largest bulk string a client may send"},
    {"client-query-buffer-limit", ConfigKind::kMemory, "1gb", true, 1024 * 1024, INT64_MAX, "",
     "largest unparsed input buffered for one client"},
    {"client-output-buffer-limit", ConfigKind::kOutputBufferLimits,
     "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60", true, 0, 0, "",
     "per client class: <class> <hard> <soft> <soft-seconds>; a client whose unsent output "
     "reaches hard, or stays over soft longer than soft-seconds, is disconnected (0 = no limit)"},
    BasaltKey({"max-reply-size", ConfigKind::kMemory, "512mb", true, 1024 * 1024, INT64_MAX, "",
               "largest reply one command may build; past it the client is closed"}),
    // Security
    {"requirepass", ConfigKind::kString, "", true, 0, 0, "",
     "the default user's password (AUTH <password>); empty: the default user needs none"},
    {"aclfile", ConfigKind::kString, "", false, 0, 0, "",
     "ACL users file, loaded at start-up, written by ACL SAVE (empty: users live in memory)"},
    {"acllog-max-len", ConfigKind::kInt, "128", true, 0, INT64_MAX, "",
     "entries kept in the ACL LOG of denied commands and failed logins"},
    {"enable-protected-configs", ConfigKind::kEnum, "no", false, 0, 0, "no|yes|local",
     "whether CONFIG SET may change protected keys (dbfilename); local: from loopback only"},
    {"enable-debug-command", ConfigKind::kEnum, "no", false, 0, 0, "no|yes|local",
     "who may run DEBUG: nobody, everybody, or loopback connections only (as in Redis 7)"},
    {"enable-module-command", ConfigKind::kEnum, "no", false, 0, 0, "no|yes|local",
     "who may run MODULE LOAD/LOADEX/UNLOAD (which always fail: Basalt has no modules)"},
    // Durability and expiry
    BasaltKey({"durability", ConfigKind::kEnum, "lazy", true, 0, 0, "sync|lazy|nosync",
               "sync: fsync WAL before reply; lazy: fsync every second; nosync: never fsync"}),
    {"appendfsync", ConfigKind::kEnum, "everysec", true, 0, 0, "everysec|always|no",
     "Redis's name for durability: always = sync, everysec = lazy, no = nosync"},
    {"notify-keyspace-events", ConfigKind::kString, "", true, 0, 0, "",
     "keyspace notification classes, Redis's letters (K E g $ l s h z x e t m d n A)", false,
     CheckNotifyKeyspaceEvents},
    {"tracking-table-max-keys", ConfigKind::kInt, "1000000", true, 0, INT64_MAX, "",
     "keys the client-side caching table remembers; beyond them keys are forgotten, each with "
     "an invalidation to its readers (0 = no limit)"},
    {"latency-monitor-threshold", ConfigKind::kInt, "0", true, 0, INT64_MAX, "",
     "ms a command must take to be recorded by the latency monitor (0 = off)"},
    {"latency-tracking", ConfigKind::kBool, "yes", true, 0, 0, "",
     "keep a latency histogram per command (INFO latencystats, LATENCY HISTOGRAM)"},
    {"latency-tracking-info-percentiles", ConfigKind::kList, "50 99 99.9", true, 0, 0, "",
     "percentiles INFO latencystats prints, space separated, each 0 to 100", false,
     CheckLatencyPercentiles},
    BasaltKey({"active-expire", ConfigKind::kBool, "yes", true, 0, 0, "",
               "delete expired keys in the background through the expiry index"}),
    // Memory (commands/memory_limit.h)
    {"maxmemory", ConfigKind::kMemory, "0", true, 0, INT64_MAX, "",
     "under noeviction, refuse commands that may grow the data set while used_memory is past "
     "this (0 = no limit)"},
    {"maxmemory-policy", ConfigKind::kEnum, "noeviction", true, 0, 0,
     "volatile-lru|volatile-lfu|volatile-random|volatile-ttl|allkeys-lru|allkeys-lfu|"
     "allkeys-random|noeviction",
     "noeviction enforces maxmemory; the others evict nothing and refuse nothing"},
    {"lfu-log-factor", ConfigKind::kInt, "10", true, 0, INT_MAX, "",
     "how slowly a key's access counter (OBJECT FREQ) grows with accesses"},
    {"lfu-decay-time", ConfigKind::kInt, "1", true, 0, INT_MAX, "",
     "minutes without access that take one from a key's access counter (0 = never)"},
    // Scripting
    {"busy-reply-threshold", ConfigKind::kInt, "5000", true, 0, INT64_MAX, "",
     "ms a script may run before other clients get BUSY and SCRIPT KILL works (0 = never)"},
    BasaltKey({"lua-memory-limit", ConfigKind::kMemory, "1gb", true, 1 * kMB, INT64_MAX, "",
               "memory the Lua interpreter may allocate; beyond it a script fails with an error"}),
    // Replication
    {"replicaof", ConfigKind::kList, "", false, 0, 0, "",
     "host port: start as a replica of that master (absent: start as a master)", false,
     CheckReplicaOf},
    {"masterauth", ConfigKind::kString, "", true, 0, 0, "",
     "password a replica sends (AUTH) to a master that has requirepass"},
    {"masteruser", ConfigKind::kString, "", true, 0, 0, "",
     "ACL user a replica authenticates as (with masterauth); empty: the default user"},
    {"replica-read-only", ConfigKind::kBool, "yes", true, 0, 0, "",
     "refuse write commands from clients while this server is a replica"},
    {"repl-timeout", ConfigKind::kInt, "60", true, 1, INT32_MAX, "",
     "seconds without traffic after which a replication link is dropped and retried"},
    {"repl-ping-replica-period", ConfigKind::kInt, "10", true, 1, INT32_MAX, "",
     "seconds between the PINGs in the command stream of a Redis replica of this server"},
    {"replica-serve-stale-data", ConfigKind::kBool, "yes", true, 0, 0, "",
     "whether a replica whose link is down still serves data (no: MASTERDOWN)"},
    {"min-replicas-to-write", ConfigKind::kInt, "0", true, 0, INT32_MAX, "",
     "replicas that must have acknowledged within min-replicas-max-lag for a write (0: none)"},
    {"min-replicas-max-lag", ConfigKind::kInt, "10", true, 0, INT32_MAX, "",
     "seconds since a replica's last acknowledgement for it to count as good"},
    BasaltKey(
        {"repl-wal-ttl", ConfigKind::kInt, "3600", false, 0, INT32_MAX, "",
         "seconds the master keeps obsolete WAL files for replicas to resume from (0 = none)"}),
    BasaltKey(
        {"repl-wal-size-limit", ConfigKind::kMemory, "1gb", false, 0, INT64_MAX, "",
         "total size of obsolete WAL files kept for replicas, in whole MB (0 = no size limit)"}),
    // Slow log
    {"slowlog-log-slower-than", ConfigKind::kInt, "10000", true, -1, INT64_MAX, "",
     "log commands slower than this many microseconds (-1 disables)"},
    {"slowlog-max-len", ConfigKind::kInt, "128", true, 0, INT64_MAX, "",
     "entries kept in the slow log"},
    // Data types
    {"stream-node-max-entries", ConfigKind::kInt, "100", true, 0, INT64_MAX, "",
     "a stream trimmed with ~ loses whole blocks of this many entries, and XINFO STREAM counts "
     "its radix-tree keys by them, as Redis's nodes (0 = 100)"},
    {"hll-sparse-max-bytes", ConfigKind::kMemory, "3000", true, 0, INT64_MAX, "",
     "largest sparse HyperLogLog value (header included) before it turns dense"},
    BasaltKey({"metadata-cache-size", ConfigKind::kMemory, "256mb", true, 0, INT64_MAX, "",
               "Basalt's cache of recent metadata entries (key types, sizes, short strings) (0 "
               "disables)"}),
    BasaltKey({"member-filter-size", ConfigKind::kMemory, "64mb", true, 0, INT64_MAX, "",
               "filters of the members written into hashes, sets and sorted sets (0 disables)"}),
    // RocksDB
    BasaltKey({"rocksdb.block-cache-size", ConfigKind::kMemory, "512mb", true, 1 * kMB, INT64_MAX,
               "", "one LRU block cache shared by all column families"}),
    BasaltKey({"rocksdb.block-cache-high-pri-ratio", ConfigKind::kDouble, "0.5", false, 0, 0, "",
               "share of the block cache reserved for index and filter blocks"}),
    BasaltKey({"rocksdb.write-buffer-size", ConfigKind::kMemory, "64mb", true, 1 * kMB, INT64_MAX,
               "", "memtable size per column family"}),
    BasaltKey({"rocksdb.max-write-buffer-number", ConfigKind::kInt, "4", true, 2, 64, "",
               "memtables per column family before writes stall"}),
    BasaltKey({"rocksdb.max-background-jobs", ConfigKind::kInt, "4", true, 1, 64, "",
               "flush and compaction threads"}),
    BasaltKey({"rocksdb.target-file-size-base", ConfigKind::kMemory, "64mb", true, 1 * kMB,
               INT64_MAX, "", "SST file size at L1"}),
    BasaltKey({"rocksdb.max-bytes-for-level-base", ConfigKind::kMemory, "256mb", true, 1 * kMB,
               INT64_MAX, "", "total size of L1"}),
    BasaltKey({"rocksdb.level0-file-num-compaction-trigger", ConfigKind::kInt, "4", true, 1, 1024,
               "", "L0 files that trigger a compaction"}),
    BasaltKey({"rocksdb.block-size", ConfigKind::kMemory, "16kb", false, 1024, 64 * kMB, "",
               "data block size"}),
    BasaltKey({"rocksdb.bloom-bits-per-key", ConfigKind::kInt, "10", false, 0, 64, "",
               "bloom filter bits per key (0 disables filters)"}),
    BasaltKey({"rocksdb.data-block-hash-ratio", ConfigKind::kDouble, "0.75", false, 0, 0, "",
               "data block hash index utilisation ratio (0 disables the hash index)"}),
    BasaltKey(
        {"rocksdb.memtable-prefix-bloom-ratio", ConfigKind::kDouble, "0.1", true, 0, 0, "",
         "share of the memtable given to its bloom filter (rocksdb memtable only; basalt's indexes "
         "keys instead)"}),
    BasaltKey({"rocksdb.compression", ConfigKind::kEnum, "tiered", false, 0, 0,
               "tiered|none|lz4|zstd",
               "tiered: none on L0/L1, LZ4 in the middle, ZSTD on the last level"}),
    BasaltKey({"rocksdb.memtable", ConfigKind::kEnum, "basalt", false, 0, 0, "basalt|rocksdb",
               "memtable skip list: basalt (built with the server) or RocksDB's own"}),
    BasaltKey({"rocksdb.max-open-files", ConfigKind::kInt, "1000", false, -1, INT32_MAX, "",
               "open SST files kept (-1 = unlimited)"}),
    BasaltKey(
        {"rocksdb.use-direct-reads", ConfigKind::kBool, "no", false, 0, 0, "",
         "read SST files with O_DIRECT, past the page cache: only the block cache holds data"}),
    BasaltKey({"rocksdb.enable-blob-files", ConfigKind::kBool, "yes", true, 0, 0, "",
               "key-value separation for large values on metadata and subkey"}),
    BasaltKey({"rocksdb.min-blob-size", ConfigKind::kMemory, "4096", true, 0, INT64_MAX, "",
               "values at least this large go to blob files"}),
    BasaltKey({"rocksdb.blob-file-size", ConfigKind::kMemory, "256mb", true, 1 * kMB, INT64_MAX, "",
               "target blob file size"}),
    BasaltKey({"rocksdb.enable-blob-gc", ConfigKind::kBool, "yes", true, 0, 0, "",
               "allow blob GC: relocating live blobs of old blob files during compaction"}),
    BasaltKey({"rocksdb.blob-gc-garbage-ratio", ConfigKind::kDouble, "0.5", true, 0, 0, "",
               "blob GC runs while garbage exceeds this share of the blob bytes (0: always)"}),
    BasaltKey({"rocksdb.blob-gc-age-cutoff", ConfigKind::kDouble, "0.25", true, 0, 0, "",
               "oldest share of blob files eligible for GC"}),
    BasaltKey({"rocksdb.blob-gc-force-threshold", ConfigKind::kDouble, "0.8", true, 0, 0, "",
               "garbage ratio that forces compaction of the oldest blob files"}),
};

std::string CanonicalName(std::string_view name) {
  std::string lower = ToLower(name);
  for (const auto& [alias, target] : RedisAliases()) {
    if (lower == alias) return std::string(target);
  }
  return lower;
}

// "a|b|c" as Redis lists an enum's choices in its error: "a, b, c".
std::string ChoicesText(std::string_view choices) {
  std::string out;
  bool synonym = false;  // skipping the "=shown" part of a choice
  for (char c : choices) {
    if (c == '|') {
      out += ", ";
      synonym = false;
    } else if (c == '=') {
      synonym = true;
    } else if (!synonym) {
      out += c;
    }
  }
  return out;
}

// Values Redis accepts but then keeps within bounds, showing the bounded value: hz within
// 1..500, repl-backlog-size at least 16kb.
int64_t Clamped(const ConfigKey& key, int64_t v) {
  std::string_view name = key.name;
  if (name == "hz") return std::clamp<int64_t>(v, 1, 500);
  if (name == "repl-backlog-size") return std::max<int64_t>(v, 16 * 1024);
  return v;
}

Status RangeError(const ConfigKey& key) {
  return Status::InvalidArgument("argument must be between " + std::to_string(key.min) + " and " +
                                 std::to_string(key.max) + " inclusive");
}

// unixsocketperm: octal digits, shown in octal.
Status ParseOctal(const ConfigKey& key, std::string_view input, int64_t* number,
                  std::string* text) {
  if (input.empty() || input.find_first_not_of("01234567") != std::string_view::npos)
    return Status::InvalidArgument("argument couldn't be parsed into an integer");
  int64_t v = 0;
  for (char c : input) {
    v = v * 8 + (c - '0');
    if (v > key.max) return RangeError(key);
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "%llo", static_cast<unsigned long long>(v));
  *number = v;
  *text = buf;
  return Status::OK();
}

// A size with redis.conf units; for kMemoryPercent also "<n>%", kept negative as Redis keeps it.
Status ParseSize(const ConfigKey& key, std::string_view input, int64_t* number, std::string* text) {
  bool percent = key.kind == ConfigKind::kMemoryPercent && !input.empty() && input.back() == '%';
  std::optional<int64_t> v;
  if (percent) {
    v = ParseInt64(input.substr(0, input.size() - 1));
    if (v && *v >= 0) *v = -*v;
  } else {
    // Redis's memtoull reads "" as 0 and takes leading zeros ("0777" is 777).
    std::string_view digits = input;
    while (digits.size() > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9')
      digits.remove_prefix(1);
    v = digits.empty() ? std::optional<int64_t>(0) : ParseMemory(digits);
  }
  if (!v || (percent && *v > 0))
    return Status::InvalidArgument(key.kind == ConfigKind::kMemory
                                       ? "argument must be a memory value"
                                       : "argument must be a memory or percent value");
  if (percent && *v < key.min)
    return Status::InvalidArgument("percentage argument must be less or equal to " +
                                   std::to_string(-key.min));
  if (*v < key.min || *v > key.max) return RangeError(key);
  *v = Clamped(key, *v);
  *number = *v;
  *text = *v < 0 ? std::to_string(-*v) + "%" : std::to_string(*v);
  return Status::OK();
}

// One of the key's choices, case-insensitive. A choice "name=shown" is a synonym that CONFIG
// GET shows as `shown`, as Redis shows the first name of an enum value.
Status ParseEnum(const ConfigKey& key, std::string_view input, std::string* text) {
  std::string lower = ToLower(input);
  std::string_view choices = key.choices;
  while (!choices.empty()) {
    size_t bar = choices.find('|');
    std::string_view choice = choices.substr(0, bar);
    size_t eq = choice.find('=');
    if (choice.substr(0, eq) == lower) {
      *text = eq == std::string_view::npos ? lower : std::string(choice.substr(eq + 1));
      return Status::OK();
    }
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return Status::InvalidArgument("argument(s) must be one of the following: " +
                                 ChoicesText(key.choices));
}

// appendfsync is Redis's name for Basalt's durability: setting one sets the other.
bool LinkedKey(const std::string& name, const std::string& text, std::string* other,
               std::string* other_text) {
  static const std::pair<const char*, const char*> kPairs[] = {
      {"always", "sync"}, {"everysec", "lazy"}, {"no", "nosync"}};
  for (const auto& [fsync, durability] : kPairs) {
    if (name == "appendfsync" && text == fsync) {
      *other = "durability";
      *other_text = durability;
      return true;
    }
    if (name == "durability" && text == durability) {
      *other = "appendfsync";
      *other_text = fsync;
      return true;
    }
  }
  return false;
}

}  // namespace

const std::vector<ConfigKey>& Config::Keys() {
  static const std::vector<ConfigKey> all = [] {
    std::vector<ConfigKey> keys = kKeys;
    const auto& redis = RedisKeysWithoutEffect();
    keys.insert(keys.end(), redis.begin(), redis.end());
    return keys;
  }();
  return all;
}

Config::Config() {
  for (const auto& key : Keys()) {
    Value v;
    Status s = Parse(key, key.default_value, &v);
    if (!s.ok()) abort();  // a bad default is a programming error caught by the unit tests
    values_.emplace(key.name, v);
  }
  PublishAtomics();
}

Status Config::Parse(const ConfigKey& key, std::string_view input, Value* out) const {
  out->key = &key;
  switch (key.kind) {
    case ConfigKind::kString:
    case ConfigKind::kList:
      if (key.check != nullptr) return key.check(input, &out->text);
      out->text = std::string(input);
      return Status::OK();
    case ConfigKind::kInt: {
      auto v = ParseInt64(input);
      if (!v) return Status::InvalidArgument("argument couldn't be parsed into an integer");
      if (*v < key.min || *v > key.max) return RangeError(key);
      *v = Clamped(key, *v);
      out->number = *v;
      out->text = std::to_string(*v);
      return Status::OK();
    }
    case ConfigKind::kOctal:
      return ParseOctal(key, input, &out->number, &out->text);
    case ConfigKind::kMemory:
    case ConfigKind::kMemoryPercent:
      return ParseSize(key, input, &out->number, &out->text);
    case ConfigKind::kBool: {
      if (EqualsIgnoreCase(input, "yes")) {
        out->number = 1;
      } else if (EqualsIgnoreCase(input, "no")) {
        out->number = 0;
      } else {
        return Status::InvalidArgument("argument must be 'yes' or 'no'");
      }
      out->text = out->number != 0 ? "yes" : "no";
      return Status::OK();
    }
    case ConfigKind::kEnum:
      return ParseEnum(key, input, &out->text);
    case ConfigKind::kOutputBufferLimits: {
      // `out` holds the current value (empty for a default): the input amends it.
      OutputBufferLimits limits{};
      if (!out->text.empty() && !ParseOutputBufferLimits(out->text, &limits).ok())
        return Status::InvalidArgument("corrupt current value");
      Status s = ParseOutputBufferLimits(input, &limits);
      if (!s.ok()) return s;
      out->text = FormatOutputBufferLimits(limits);
      return Status::OK();
    }
    case ConfigKind::kDouble: {
      auto v = ParseDouble(input, false);
      if (!v || *v < 0 || *v > 1)
        return Status::InvalidArgument("argument must be a number between 0 and 1");
      out->real = *v;
      out->text = std::string(input);
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown kind");
}

const Config::Value* Config::Find(std::string_view name) const {
  auto it = values_.find(CanonicalName(name));
  return it == values_.end() ? nullptr : &it->second;
}

std::string Config::KeyName(std::string_view name) {
  std::string canonical = CanonicalName(name);
  for (const auto& key : Keys()) {
    if (canonical == key.name) return canonical;
  }
  return std::string();
}

bool Config::IsKnown(std::string_view name) {
  return !KeyName(name).empty();
}

Status Config::Store(std::string_view name, std::string_view value, bool live) {
  if (live) {
    std::string bad;
    return SetLiveMany({{std::string(name), std::string(value)}}, true, &bad);
  }
  std::string lower = CanonicalName(name);
  std::unique_lock<std::mutex> lock(mu_);
  auto it = values_.find(lower);
  if (it == values_.end()) return Status::NotFound("unknown option");
  Value parsed = it->second;
  Status s = Parse(*parsed.key, value, &parsed);
  if (!s.ok()) return s;
  it->second = parsed;
  std::string other, other_text;
  if (LinkedKey(lower, parsed.text, &other, &other_text)) values_[other].text = other_text;
  PublishAtomics();
  return Status::OK();
}

// Hooks are all added before the server serves clients, so reading `hooks_` needs no lock.
Status Config::RunHooks(const std::string& name, const std::string& value) const {
  for (const auto& [prefix, hook] : hooks_) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    Status s = hook(name, value);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status Config::SetLiveMany(const std::vector<std::pair<std::string, std::string>>& pairs,
                           bool local_client, std::string* bad) {
  // One CONFIG SET at a time; `mu_` is let go while the hooks run, as a hook may wait for
  // another thread (the listener's) that reads the configuration.
  std::lock_guard<std::mutex> serial(apply_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  // Names first, in order, as Redis checks them: unknown, immutable, protected, repeated (an
  // alias and its key are different names to Redis, so both may be given; the last one wins).
  std::vector<std::string> names, given;
  for (const auto& [name, value] : pairs) {
    std::string canonical = CanonicalName(name);
    auto it = values_.find(canonical);
    *bad = name;
    if (it == values_.end()) return Status::NotFound("unknown option");
    if (!it->second.key->live && !it->second.key->basalt_only)
      return Status::InvalidArgument("can't set immutable config");
    if (it->second.key->is_protected) {
      const std::string& allowed = values_.find("enable-protected-configs")->second.text;
      if (allowed == "no" || (allowed == "local" && !local_client))
        return Status::InvalidArgument("can't set protected config");
    }
    std::string lower = ToLower(name);
    for (const auto& seen : given) {
      if (seen == lower) return Status::InvalidArgument("duplicate parameter");
    }
    given.push_back(lower);
    names.push_back(canonical);
  }
  // Then every value; nothing is applied unless all of them parse.
  std::vector<std::pair<std::string, Value>> changes;
  for (size_t i = 0; i < pairs.size(); i++) {
    Value parsed = values_.find(names[i])->second;
    Status s = Parse(*parsed.key, pairs[i].second, &parsed);
    *bad = given[i];
    if (!s.ok()) return s;
    if (!parsed.key->live) {  // a Basalt-only key: its current value only, changing nothing
      if (parsed.text != values_.find(names[i])->second.text)
        return Status::InvalidArgument("can't set immutable config");
      continue;
    }
    std::string other, other_text;
    if (LinkedKey(names[i], parsed.text, &other, &other_text)) {
      Value linked = values_.find(other)->second;
      linked.text = other_text;
      changes.emplace_back(other, linked);
    }
    changes.emplace_back(names[i], parsed);
  }
  std::vector<std::string> old_texts;
  for (const auto& change : changes) old_texts.push_back(values_.find(change.first)->second.text);
  lock.unlock();
  for (size_t i = 0; i < changes.size(); i++) {
    Status s = RunHooks(changes[i].first, changes[i].second.text);
    if (s.ok()) continue;
    for (size_t j = 0; j < i; j++) {
      Status undone = RunHooks(changes[j].first, old_texts[j]);
      (void)undone;  // the old value was accepted before; nothing better to do if it fails now
    }
    *bad = changes[i].first;
    return s;
  }
  lock.lock();
  for (auto& [name, value] : changes) values_.find(name)->second = std::move(value);
  PublishAtomics();
  bad->clear();
  return Status::OK();
}

Status Config::Validate(std::string_view name, std::string_view value) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Value* v = Find(name);
  if (v == nullptr) return Status::NotFound("unknown option");
  if (!v->key->live && !v->key->basalt_only)
    return Status::InvalidArgument("can't set immutable config");
  Value parsed = *v;
  Status s = Parse(*v->key, value, &parsed);
  if (s.ok() && !v->key->live && parsed.text != v->text)
    return Status::InvalidArgument("can't set immutable config");
  return s;
}

Status Config::SetAtStartup(std::string_view name, std::string_view value) {
  return Store(name, value, false);
}

Status Config::SetLive(std::string_view name, std::string_view value) {
  return Store(name, value, true);
}

void Config::PublishAtomics() {
  auto num = [this](const char* name) { return values_.find(name)->second.number; };
  proto_max_bulk_len = num("proto-max-bulk-len");
  client_query_buffer_limit = num("client-query-buffer-limit");
  max_reply_size = num("max-reply-size");
  maxclients = num("maxclients");
  timeout_seconds = num("timeout");
  worker_idle_polls = num("worker-idle-polls");
  worker_move_hand_overs = num("worker-move-hand-overs");
  slowlog_slower_than = num("slowlog-log-slower-than");
  slowlog_max_len = num("slowlog-max-len");
  hll_sparse_max_bytes = num("hll-sparse-max-bytes");
  const int64_t node_entries = num("stream-node-max-entries");
  stream_node_entries = node_entries > 0 ? node_entries : 100;
  busy_reply_threshold = num("busy-reply-threshold");
  min_replicas_to_write = num("min-replicas-to-write");
  min_replicas_max_lag = num("min-replicas-max-lag");
  replica_serve_stale_data = num("replica-serve-stale-data") != 0;
  lua_memory_limit = num("lua-memory-limit");
  latency_monitor_threshold = num("latency-monitor-threshold");
  tracking_table_max_keys = num("tracking-table-max-keys");
  maxmemory = num("maxmemory");
  const std::string& policy = values_.find("maxmemory-policy")->second.text;
  maxmemory_noeviction = policy == "noeviction";
  maxmemory_lfu = policy.size() > 4 && policy.compare(policy.size() - 4, 4, "-lfu") == 0;
  lfu_log_factor = num("lfu-log-factor");
  lfu_decay_time = num("lfu-decay-time");
  notify_keyspace_events_.store(
      ParseNotifyFlags(values_.find("notify-keyspace-events")->second.text),
      std::memory_order_relaxed);
  OutputBufferLimits limits{};
  ParseOutputBufferLimits(values_.find("client-output-buffer-limit")->second.text, &limits);
  for (int c = 0; c < kClientClassCount; c++) {
    output_buffer_limits_[c][0] = limits[c].hard_bytes;
    output_buffer_limits_[c][1] = limits[c].soft_bytes;
    output_buffer_limits_[c][2] = limits[c].soft_seconds;
  }
}

OutputBufferLimit Config::output_buffer_limit(ClientClass c) const {
  const auto& v = output_buffer_limits_[static_cast<int>(c)];
  return OutputBufferLimit{v[0].load(std::memory_order_relaxed),
                           v[1].load(std::memory_order_relaxed),
                           v[2].load(std::memory_order_relaxed)};
}

const ConfigKey* Config::KeyByName(std::string_view name) {
  std::string canonical = CanonicalName(name);
  for (const auto& key : Keys()) {
    if (canonical == key.name) return &key;
  }
  return nullptr;
}

void Config::AddCommandRename(std::string_view name, std::string_view new_name) {
  std::lock_guard<std::mutex> lock(mu_);
  command_renames_.push_back({std::string(name), std::string(new_name)});
}

std::vector<Config::CommandRename> Config::command_renames() const {
  std::lock_guard<std::mutex> lock(mu_);
  return command_renames_;
}

std::vector<std::pair<std::string, std::string>> Config::Match(std::string_view pattern) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  if (pattern.find_first_of("[*?") == std::string_view::npos) {
    // A plain name, hidden or not, is answered under the name as given, as Redis does.
    const Value* v = Find(pattern);
    if (v != nullptr) out.emplace_back(std::string(pattern), v->text);
    return out;
  }
  for (const auto& [name, value] : values_) {
    if (!value.key->hidden && GlobMatch(pattern, name, true)) out.emplace_back(name, value.text);
  }
  for (const auto& [alias, target] : RedisAliases()) {
    if (GlobMatch(pattern, alias, true))
      out.emplace_back(std::string(alias), values_.find(target)->second.text);
  }
  return out;
}

std::string Config::GetString(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Value* v = Find(name);
  return v ? v->text : std::string();
}

int64_t Config::GetInt(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Value* v = Find(name);
  return v ? v->number : 0;
}

double Config::GetDouble(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Value* v = Find(name);
  return v ? v->real : 0;
}

void Config::AddApplyHook(std::string_view name_prefix, ApplyHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.emplace_back(std::string(name_prefix), std::move(hook));
}

}  // namespace basalt
