#include "config/config.h"

#include <fstream>
#include <sstream>

#include "common/strutil.h"

namespace basalt {

namespace {

constexpr int64_t kMB = 1024 * 1024;

// The table. Keep conf/basalt.conf in step with it (tests/unit/config_test checks that every
// key here appears there).
const std::vector<ConfigKey> kKeys = {
    // Network and process
    {"bind", ConfigKind::kString, "127.0.0.1", false, 0, 0, "",
     "address to listen on (one address)"},
    {"port", ConfigKind::kInt, "6379", false, 0, 65535, "", "TCP port"},
    {"protected-mode", ConfigKind::kBool, "yes", true, 0, 0, "",
     "refuse non-loopback clients while no password is set"},
    {"dir", ConfigKind::kString, "./data", false, 0, 0, "", "data directory (RocksDB lives here)"},
    {"workers", ConfigKind::kInt, "2", false, 1, 256, "", "worker threads serving connections"},
    {"worker-idle-polls", ConfigKind::kInt, "3", true, 0, 1000, "",
     "times a worker that found no input polls its sockets again, yielding the CPU in between, "
     "before it sleeps (0 = sleep at once)"},
    {"worker-move-hand-overs", ConfigKind::kInt, "4", true, 0, 1000000, "",
     "a client whose writes are handed to one other worker this many times in a row moves to "
     "that worker (0 = never)"},
    {"databases", ConfigKind::kInt, "16", false, 1, 16, "", "number of logical databases"},
    {"loglevel", ConfigKind::kEnum, "notice", true, 0, 0, "debug|verbose|notice|warning",
     "log verbosity"},
    {"logfile", ConfigKind::kString, "", false, 0, 0, "", "log file; empty logs to stderr"},
    // Limits
    {"maxclients", ConfigKind::kInt, "10000", true, 1, 1000000, "", "maximum connected clients"},
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
    {"max-reply-size", ConfigKind::kMemory, "512mb", true, 1024 * 1024, INT64_MAX, "",
     "largest reply one command may build; past it the client is closed"},
    // Security
    {"requirepass", ConfigKind::kString, "", true, 0, 0, "",
     "the default user's password (AUTH <password>); empty: the default user needs none"},
    {"aclfile", ConfigKind::kString, "", false, 0, 0, "",
     "ACL users file, loaded at start-up, written by ACL SAVE (empty: users live in memory)"},
    {"acllog-max-len", ConfigKind::kInt, "128", true, 0, INT64_MAX, "",
     "entries kept in the ACL LOG of denied commands and failed logins"},
    // Durability and expiry
    {"durability", ConfigKind::kEnum, "lazy", true, 0, 0, "sync|lazy|nosync",
     "sync: fsync WAL before reply; lazy: fsync every second; nosync: never fsync"},
    {"active-expire", ConfigKind::kBool, "yes", true, 0, 0, "",
     "delete expired keys in the background through the expiry index"},
    // Scripting
    {"busy-reply-threshold", ConfigKind::kInt, "5000", true, 0, INT64_MAX, "",
     "ms a script may run before other clients get BUSY and SCRIPT KILL works (0 = never)"},
    {"lua-memory-limit", ConfigKind::kMemory, "1gb", true, 1 * kMB, INT64_MAX, "",
     "memory the Lua interpreter may allocate; beyond it a script fails with an error"},
    // Replication
    {"replicaof", ConfigKind::kString, "", false, 0, 0, "",
     "\"host port\": start as a replica of that master (empty: start as a master)"},
    {"masterauth", ConfigKind::kString, "", true, 0, 0, "",
     "password a replica sends (AUTH) to a master that has requirepass"},
    {"masteruser", ConfigKind::kString, "", true, 0, 0, "",
     "ACL user a replica authenticates as (with masterauth); empty: the default user"},
    {"replica-read-only", ConfigKind::kBool, "yes", true, 0, 0, "",
     "refuse write commands from clients while this server is a replica"},
    {"repl-timeout", ConfigKind::kInt, "60", true, 1, INT32_MAX, "",
     "seconds without traffic after which a replication link is dropped and retried"},
    {"repl-wal-ttl", ConfigKind::kInt, "3600", false, 0, INT32_MAX, "",
     "seconds the master keeps obsolete WAL files for replicas to resume from (0 = none)"},
    {"repl-wal-size-limit", ConfigKind::kMemory, "1gb", false, 0, INT64_MAX, "",
     "total size of obsolete WAL files kept for replicas, in whole MB (0 = no size limit)"},
    // Slow log
    {"slowlog-log-slower-than", ConfigKind::kInt, "10000", true, -1, INT64_MAX, "",
     "log commands slower than this many microseconds (-1 disables)"},
    {"slowlog-max-len", ConfigKind::kInt, "128", true, 0, INT64_MAX, "",
     "entries kept in the slow log"},
    // Data types
    {"hll-sparse-max-bytes", ConfigKind::kMemory, "3000", true, 0, INT64_MAX, "",
     "largest sparse HyperLogLog value (header included) before it turns dense"},
    // Accepted for client compatibility; RocksDB persists every write, so these do nothing.
    {"save", ConfigKind::kString, "", true, 0, 0, "",
     "compatibility only: snapshots are not used, data is always on disk"},
    {"appendonly", ConfigKind::kBool, "no", true, 0, 0, "",
     "compatibility only: the RocksDB WAL plays this role (see durability)"},
    {"maxmemory", ConfigKind::kMemory, "0", true, 0, INT64_MAX, "",
     "compatibility only: data lives on disk; memory is bounded by the cache sizes below"},
    {"metadata-cache-size", ConfigKind::kMemory, "256mb", true, 0, INT64_MAX, "",
     "Basalt's cache of recent metadata entries (key types, sizes, short strings) (0 disables)"},
    {"member-filter-size", ConfigKind::kMemory, "64mb", true, 0, INT64_MAX, "",
     "filters of the members written into hashes, sets and sorted sets (0 disables)"},
    // RocksDB
    {"rocksdb.block-cache-size", ConfigKind::kMemory, "512mb", true, 1 * kMB, INT64_MAX, "",
     "one LRU block cache shared by all column families"},
    {"rocksdb.block-cache-high-pri-ratio", ConfigKind::kDouble, "0.5", false, 0, 0, "",
     "share of the block cache reserved for index and filter blocks"},
    {"rocksdb.row-cache-size", ConfigKind::kMemory, "64mb", false, 0, INT64_MAX, "",
     "row cache for hot point lookups (0 disables)"},
    {"rocksdb.write-buffer-size", ConfigKind::kMemory, "64mb", true, 1 * kMB, INT64_MAX, "",
     "memtable size per column family"},
    {"rocksdb.max-write-buffer-number", ConfigKind::kInt, "4", true, 2, 64, "",
     "memtables per column family before writes stall"},
    {"rocksdb.max-background-jobs", ConfigKind::kInt, "4", true, 1, 64, "",
     "flush and compaction threads"},
    {"rocksdb.target-file-size-base", ConfigKind::kMemory, "64mb", true, 1 * kMB, INT64_MAX, "",
     "SST file size at L1"},
    {"rocksdb.max-bytes-for-level-base", ConfigKind::kMemory, "256mb", true, 1 * kMB, INT64_MAX, "",
     "total size of L1"},
    {"rocksdb.level0-file-num-compaction-trigger", ConfigKind::kInt, "4", true, 1, 1024, "",
     "L0 files that trigger a compaction"},
    {"rocksdb.block-size", ConfigKind::kMemory, "16kb", false, 1024, 64 * kMB, "",
     "data block size"},
    {"rocksdb.bloom-bits-per-key", ConfigKind::kInt, "10", false, 0, 64, "",
     "bloom filter bits per key (0 disables filters)"},
    {"rocksdb.data-block-hash-ratio", ConfigKind::kDouble, "0.75", false, 0, 0, "",
     "data block hash index utilisation ratio (0 disables the hash index)"},
    {"rocksdb.memtable-prefix-bloom-ratio", ConfigKind::kDouble, "0.1", true, 0, 0, "",
     "share of the memtable given to its bloom filter (rocksdb memtable only; basalt's indexes "
     "keys instead)"},
    {"rocksdb.compression", ConfigKind::kEnum, "tiered", false, 0, 0, "tiered|none|lz4|zstd",
     "tiered: none on L0/L1, LZ4 in the middle, ZSTD on the last level"},
    {"rocksdb.memtable", ConfigKind::kEnum, "basalt", false, 0, 0, "basalt|rocksdb",
     "memtable skip list: basalt (built with the server) or RocksDB's own"},
    {"rocksdb.max-open-files", ConfigKind::kInt, "1000", false, -1, INT32_MAX, "",
     "open SST files kept (-1 = unlimited)"},
    {"rocksdb.enable-blob-files", ConfigKind::kBool, "yes", true, 0, 0, "",
     "key-value separation for large values on metadata and subkey"},
    {"rocksdb.min-blob-size", ConfigKind::kMemory, "4096", true, 0, INT64_MAX, "",
     "values at least this large go to blob files"},
    {"rocksdb.blob-file-size", ConfigKind::kMemory, "256mb", true, 1 * kMB, INT64_MAX, "",
     "target blob file size"},
    {"rocksdb.enable-blob-gc", ConfigKind::kBool, "yes", true, 0, 0, "",
     "allow blob GC: relocating live blobs of old blob files during compaction"},
    {"rocksdb.blob-gc-garbage-ratio", ConfigKind::kDouble, "0.5", true, 0, 0, "",
     "blob GC runs while garbage exceeds this share of the blob bytes (0: always)"},
    {"rocksdb.blob-gc-age-cutoff", ConfigKind::kDouble, "0.25", true, 0, 0, "",
     "oldest share of blob files eligible for GC"},
    {"rocksdb.blob-gc-force-threshold", ConfigKind::kDouble, "0.8", true, 0, 0, "",
     "garbage ratio that forces compaction of the oldest blob files"},
    // ---- Protected commands (h-client: DEBUG, MODULE); merge as one block ----
    {"enable-debug-command", ConfigKind::kEnum, "no", false, 0, 0, "no|yes|local",
     "who may run DEBUG: nobody, everybody, or loopback connections only (as in Redis 7)"},
    {"enable-module-command", ConfigKind::kEnum, "no", false, 0, 0, "no|yes|local",
     "who may run MODULE LOAD/LOADEX/UNLOAD (which always fail: Basalt has no modules)"},
    // ---- end of protected commands block ----
};

// Old names Redis still accepts, resolved to the key they stand for.
const std::vector<std::pair<std::string_view, std::string_view>> kAliases = {
    {"lua-time-limit", "busy-reply-threshold"},
};

std::string CanonicalName(std::string_view name) {
  std::string lower = ToLower(name);
  for (const auto& [alias, target] : kAliases) {
    if (lower == alias) return std::string(target);
  }
  return lower;
}

std::string CanonicalBool(bool v) {
  return v ? "yes" : "no";
}

// Splits a config line into words as Redis does (sdssplitargs quoting and escapes). Comment
// lines are empty, whatever quotes they contain.
bool SplitConfigLine(const std::string& line, std::vector<std::string>* words) {
  size_t first = line.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || line[first] == '#') return true;
  return SplitArgs(line, words);
}

}  // namespace

const std::vector<ConfigKey>& Config::Keys() {
  return kKeys;
}

Config::Config() {
  for (const auto& key : kKeys) {
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
      out->text = std::string(input);
      return Status::OK();
    case ConfigKind::kInt: {
      auto v = ParseInt64(input);
      if (!v) return Status::InvalidArgument("argument couldn't be parsed into an integer");
      if (*v < key.min || *v > key.max)
        return Status::InvalidArgument("argument must be between " + std::to_string(key.min) +
                                       " and " + std::to_string(key.max) + " inclusive");
      out->number = *v;
      out->text = std::to_string(*v);
      return Status::OK();
    }
    case ConfigKind::kMemory: {
      auto v = ParseMemory(input);
      if (!v) return Status::InvalidArgument("argument must be a memory value");
      if (*v < key.min || *v > key.max)
        return Status::InvalidArgument("argument must be between " + std::to_string(key.min) +
                                       " and " + std::to_string(key.max) + " inclusive");
      out->number = *v;
      out->text = std::to_string(*v);
      return Status::OK();
    }
    case ConfigKind::kBool: {
      if (EqualsIgnoreCase(input, "yes")) {
        out->number = 1;
      } else if (EqualsIgnoreCase(input, "no")) {
        out->number = 0;
      } else {
        return Status::InvalidArgument("argument must be 'yes' or 'no'");
      }
      out->text = CanonicalBool(out->number != 0);
      return Status::OK();
    }
    case ConfigKind::kEnum: {
      std::string lower = ToLower(input);
      std::string_view choices = key.choices;
      while (!choices.empty()) {
        size_t bar = choices.find('|');
        std::string_view choice = choices.substr(0, bar);
        if (choice == lower) {
          out->text = lower;
          return Status::OK();
        }
        if (bar == std::string_view::npos) break;
        choices.remove_prefix(bar + 1);
      }
      return Status::InvalidArgument("argument(s) must be one of the following: " +
                                     std::string(key.choices));
    }
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

bool Config::IsKnown(std::string_view name) {
  std::string canonical = CanonicalName(name);
  for (const auto& key : kKeys) {
    if (canonical == key.name) return true;
  }
  return false;
}

Status Config::Store(std::string_view name, std::string_view value, bool live) {
  std::string lower = CanonicalName(name);
  std::unique_lock<std::mutex> lock(mu_);
  auto it = values_.find(lower);
  if (it == values_.end()) return Status::NotFound("unknown option");
  const ConfigKey& key = *it->second.key;
  if (live && !key.live) return Status::InvalidArgument("can't set immutable config");
  Value parsed = it->second;
  Status s = Parse(key, value, &parsed);
  if (!s.ok()) return s;
  if (live) {
    for (const auto& [prefix, hook] : hooks_) {
      if (lower.compare(0, prefix.size(), prefix) != 0) continue;
      s = hook(lower, parsed.text);
      if (!s.ok()) return s;
    }
  }
  it->second = parsed;
  PublishAtomics();
  return Status::OK();
}

Status Config::Validate(std::string_view name, std::string_view value) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Value* v = Find(name);
  if (v == nullptr) return Status::NotFound("unknown option");
  if (!v->key->live) return Status::InvalidArgument("can't set immutable config");
  Value parsed = *v;
  return Parse(*v->key, value, &parsed);
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
  busy_reply_threshold = num("busy-reply-threshold");
  lua_memory_limit = num("lua-memory-limit");
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
  for (const auto& key : kKeys) {
    if (EqualsIgnoreCase(key.name, name)) return &key;
  }
  return nullptr;
}

Status Config::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IOError("can't open config file '" + path + "'");
  file_path_ = path;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    std::vector<std::string> words;
    std::string where = path + ":" + std::to_string(lineno) + ": ";
    if (!SplitConfigLine(line, &words)) return Status::InvalidArgument(where + "unbalanced quotes");
    if (words.empty()) continue;
    if (EqualsIgnoreCase(words[0], "rename-command")) {
      if (words.size() != 3)
        return Status::InvalidArgument(where + "expected 'rename-command NAME NEW-NAME'");
      AddCommandRename(words[1], words[2]);
      continue;
    }
    const ConfigKey* key = KeyByName(words[0]);
    if (words.size() > 2 && key != nullptr && key->kind == ConfigKind::kOutputBufferLimits) {
      // "client-output-buffer-limit pubsub 32mb 8mb 60", as in redis.conf.
      for (size_t w = 2; w < words.size(); w++) words[1] += " " + words[w];
      words.resize(2);
    }
    if (words.size() != 2) {
      // Allow "save" with no value and multi-word save lines as Redis does.
      if (words.size() == 1 && EqualsIgnoreCase(words[0], "save"))
        words.push_back("");
      else
        return Status::InvalidArgument(where + "expected 'key value', got " +
                                       std::to_string(words.size()) + " words");
    }
    Status s = SetAtStartup(words[0], words[1]);
    if (s.IsNotFound())
      return Status::InvalidArgument(where + "unknown config key '" + words[0] + "'");
    if (!s.ok())
      return Status::InvalidArgument(where + "bad value for '" + words[0] + "': " + s.message());
  }
  return Status::OK();
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
  for (const auto& [name, value] : values_) {
    if (GlobMatch(pattern, name, true)) out.emplace_back(name, value.text);
  }
  for (const auto& [alias, target] : kAliases) {
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

Status Config::Rewrite() const {
  if (file_path_.empty())
    return Status::RedisError("ERR The server is running without a config file");
  std::ifstream in(file_path_);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  in.close();
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, bool> written;
  // Rewrite keys in place where the file mentions them; append the ones that differ from
  // their default and were not mentioned.
  for (auto& l : lines) {
    std::vector<std::string> words;
    if (!SplitConfigLine(l, &words) || words.empty()) continue;
    const Value* v = Find(words[0]);
    if (v == nullptr) continue;
    l = std::string(v->key->name) + " " + QuoteArg(v->text);
    written[v->key->name] = true;
  }
  for (const auto& [name, value] : values_) {
    if (written.count(name)) continue;
    Value def;
    Parse(*value.key, value.key->default_value, &def);
    if (def.text != value.text) lines.push_back(name + " " + QuoteArg(value.text));
  }
  std::string tmp = file_path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::RedisError("ERR Rewriting config file: can't open " + tmp);
    for (const auto& l : lines) out << l << "\n";
    if (!out.flush()) return Status::RedisError("ERR Rewriting config file: write failed");
  }
  if (rename(tmp.c_str(), file_path_.c_str()) != 0)
    return Status::RedisError("ERR Rewriting config file: rename failed");
  return Status::OK();
}

}  // namespace basalt
