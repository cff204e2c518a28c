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
    // Security
    {"requirepass", ConfigKind::kString, "", true, 0, 0, "",
     "password for AUTH; empty disables authentication"},
    // Durability and expiry
    {"durability", ConfigKind::kEnum, "lazy", true, 0, 0, "sync|lazy|nosync",
     "sync: fsync WAL before reply; lazy: fsync every second; nosync: never fsync"},
    {"active-expire", ConfigKind::kBool, "yes", true, 0, 0, "",
     "delete expired keys in the background through the expiry index"},
    // Slow log
    {"slowlog-log-slower-than", ConfigKind::kInt, "10000", true, -1, INT64_MAX, "",
     "log commands slower than this many microseconds (-1 disables)"},
    {"slowlog-max-len", ConfigKind::kInt, "128", true, 0, INT64_MAX, "",
     "entries kept in the slow log"},
    // Accepted for client compatibility; RocksDB persists every write, so these do nothing.
    {"save", ConfigKind::kString, "", true, 0, 0, "",
     "compatibility only: snapshots are not used, data is always on disk"},
    {"appendonly", ConfigKind::kBool, "no", true, 0, 0, "",
     "compatibility only: the RocksDB WAL plays this role (see durability)"},
    {"maxmemory", ConfigKind::kMemory, "0", true, 0, INT64_MAX, "",
     "compatibility only: data lives on disk; memory is bounded by the cache sizes below"},
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
     "share of the memtable given to its bloom filter"},
    {"rocksdb.compression", ConfigKind::kEnum, "tiered", false, 0, 0, "tiered|none|lz4|zstd",
     "tiered: none on L0/L1, LZ4 in the middle, ZSTD on the last level"},
    {"rocksdb.max-open-files", ConfigKind::kInt, "1000", false, -1, INT32_MAX, "",
     "open SST files kept (-1 = unlimited)"},
    {"rocksdb.enable-blob-files", ConfigKind::kBool, "yes", true, 0, 0, "",
     "key-value separation for large values on metadata and subkey"},
    {"rocksdb.min-blob-size", ConfigKind::kMemory, "4096", true, 0, INT64_MAX, "",
     "values at least this large go to blob files"},
    {"rocksdb.blob-file-size", ConfigKind::kMemory, "256mb", true, 1 * kMB, INT64_MAX, "",
     "target blob file size"},
    {"rocksdb.enable-blob-gc", ConfigKind::kBool, "yes", true, 0, 0, "",
     "relocate live blobs out of old blob files during compaction"},
    {"rocksdb.blob-gc-age-cutoff", ConfigKind::kDouble, "0.25", true, 0, 0, "",
     "oldest share of blob files eligible for GC"},
    {"rocksdb.blob-gc-force-threshold", ConfigKind::kDouble, "0.8", true, 0, 0, "",
     "garbage ratio that forces compaction of the oldest blob files"},
};

std::string CanonicalBool(bool v) {
  return v ? "yes" : "no";
}

// Splits a config line into words, honouring "double" and 'single' quotes.
bool SplitConfigLine(const std::string& line, std::vector<std::string>* words) {
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i >= line.size()) break;
    std::string word;
    if (line[i] == '"' || line[i] == '\'') {
      char quote = line[i++];
      while (i < line.size() && line[i] != quote) word.push_back(line[i++]);
      if (i >= line.size()) return false;
      i++;
    } else {
      while (i < line.size() && !isspace(static_cast<unsigned char>(line[i])))
        word.push_back(line[i++]);
    }
    words->push_back(std::move(word));
  }
  return true;
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
  auto it = values_.find(ToLower(name));
  return it == values_.end() ? nullptr : &it->second;
}

Status Config::Store(std::string_view name, std::string_view value, bool live) {
  std::string lower = ToLower(name);
  std::unique_lock<std::mutex> lock(mu_);
  auto it = values_.find(lower);
  if (it == values_.end()) return Status::NotFound("unknown option");
  const ConfigKey& key = *it->second.key;
  if (live && !key.live) return Status::InvalidArgument("can't set immutable config");
  Value parsed;
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
  Value parsed;
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
  maxclients = num("maxclients");
  timeout_seconds = num("timeout");
  slowlog_slower_than = num("slowlog-log-slower-than");
  slowlog_max_len = num("slowlog-max-len");
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
    if (words.empty() || words[0][0] == '#') continue;
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

std::vector<std::pair<std::string, std::string>> Config::Match(std::string_view pattern) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : values_) {
    if (GlobMatch(pattern, name, true)) out.emplace_back(name, value.text);
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
  auto quoted = [](const std::string& v) {
    return v.empty() || v.find(' ') != std::string::npos ? "\"" + v + "\"" : v;
  };
  // Rewrite keys in place where the file mentions them; append the ones that differ from
  // their default and were not mentioned.
  for (auto& l : lines) {
    std::vector<std::string> words;
    if (!SplitConfigLine(l, &words) || words.empty() || words[0][0] == '#') continue;
    const Value* v = Find(words[0]);
    if (v == nullptr) continue;
    l = std::string(v->key->name) + " " + quoted(v->text);
    written[v->key->name] = true;
  }
  for (const auto& [name, value] : values_) {
    if (written.count(name)) continue;
    Value def;
    Parse(*value.key, value.key->default_value, &def);
    if (def.text != value.text) lines.push_back(name + " " + quoted(value.text));
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
