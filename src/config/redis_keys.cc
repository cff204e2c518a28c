// Redis 7.2's keys that mean nothing for a disk store, with Redis's defaults, ranges, choices
// and mutability (src/config.c's standardConfig table), and the validators of Redis's
// multi-argument keys.
#include "config/redis_keys.h"

#include <climits>
#include <cstdio>

#include "common/strutil.h"

namespace basalt {

namespace {

constexpr const char* kNoEffect = "accepted without effect (Redis compatibility)";
constexpr int64_t kIntMax = INT_MAX;
constexpr int64_t kLongMax = INT64_MAX;

ConfigKey Bool(const char* name, const char* def, bool live) {
  return {name, ConfigKind::kBool, def, live, 0, 0, "", kNoEffect, true};
}
ConfigKey Int(const char* name, const char* def, bool live, int64_t min, int64_t max) {
  return {name, ConfigKind::kInt, def, live, min, max, "", kNoEffect, true};
}
ConfigKey Memory(const char* name, const char* def, bool live, int64_t min, int64_t max) {
  return {name, ConfigKind::kMemory, def, live, min, max, "", kNoEffect, true};
}
ConfigKey String(const char* name, const char* def, bool live) {
  return {name, ConfigKind::kString, def, live, 0, 0, "", kNoEffect, true};
}
ConfigKey Enum(const char* name, const char* def, bool live, const char* choices) {
  return {name, ConfigKind::kEnum, def, live, 0, 0, choices, kNoEffect, true};
}
ConfigKey List(const char* name, const char* def, ConfigCheck check) {
  return {name, ConfigKind::kList, def, true, 0, 0, "", kNoEffect, true, check};
}
ConfigKey Hidden(ConfigKey key) {
  key.hidden = true;
  return key;
}

const std::vector<ConfigKey> kRedisKeys = {
    // Persistence: Basalt's data is RocksDB in `dir` with every write in its WAL (see
    // appendfsync).
    List("save", "3600 1 300 100 60 10000", CheckSave),
    Bool("appendonly", "no", true),
    // RDB and AOF files, which Basalt does not write.
    Bool("rdbchecksum", "yes", false),
    Bool("rdbcompression", "yes", true),
    Bool("rdb-del-sync-files", "no", true),
    Bool("stop-writes-on-bgsave-error", "yes", true),
    Bool("rdb-save-incremental-fsync", "yes", true),
    String("appendfilename", "appendonly.aof", false),
    String("appenddirname", "appendonlydir", false),
    Bool("aof-rewrite-incremental-fsync", "yes", true),
    Bool("no-appendfsync-on-rewrite", "no", true),
    Bool("aof-load-truncated", "yes", true),
    Bool("aof-use-rdb-preamble", "yes", true),
    Bool("aof-timestamp-enabled", "no", true),
    Hidden(Bool("aof-disable-auto-gc", "no", true)),
    Int("auto-aof-rewrite-percentage", "100", true, 0, kIntMax),
    Memory("auto-aof-rewrite-min-size", "64mb", true, 0, kLongMax),
    // Process and memory management of an in-memory server.
    Bool("io-threads-do-reads", "no", false),
    Int("io-threads", "1", false, 1, 128),
    Bool("always-show-logo", "no", false),
    Bool("set-proc-title", "yes", false),
    String("proc-title-template", "{title} {listen-addr} {server-mode}", true),
    Bool("activerehashing", "yes", true),
    Bool("dynamic-hz", "yes", true),
    Bool("lazyfree-lazy-eviction", "no", true),
    Bool("lazyfree-lazy-expire", "no", true),
    Bool("lazyfree-lazy-server-del", "no", true),
    Bool("lazyfree-lazy-user-del", "no", true),
    Bool("lazyfree-lazy-user-flush", "no", true),
    Bool("jemalloc-bg-thread", "yes", true),
    Bool("activedefrag", "no", true),
    Int("active-defrag-cycle-min", "1", true, 1, 99),
    Int("active-defrag-cycle-max", "25", true, 1, 99),
    Int("active-defrag-threshold-lower", "10", true, 0, 1000),
    Int("active-defrag-threshold-upper", "100", true, 0, 1000),
    Memory("active-defrag-ignore-bytes", "100mb", true, 1, kLongMax),
    Int("active-defrag-max-scan-fields", "1000", true, 1, kLongMax),
    Bool("crash-log-enabled", "yes", true),
    Bool("crash-memcheck-enabled", "yes", true),
    Bool("disable-thp", "yes", false),
    Enum("oom-score-adj", "no", true, "no|yes|relative=yes|absolute"),
    List("oom-score-adj-values", "0 200 800", CheckOomScoreAdjValues),
    String("server_cpulist", "", false),
    String("bio_cpulist", "", false),
    String("aof_rewrite_cpulist", "", false),
    String("bgsave_cpulist", "", false),
    String("ignore-warnings", "", true),
    String("locale-collate", "", true),
    Int("active-expire-effort", "1", true, 1, 10),
    Int("shutdown-timeout", "10", true, 0, kIntMax),
    List("shutdown-on-sigint", "default", CheckShutdownOnSignal),
    List("shutdown-on-sigterm", "default", CheckShutdownOnSignal),
    // Redis's test hooks that slow its RDB writing and loading down per key; Basalt's snapshots
    // are not written or loaded key by key.
    Hidden(Int("rdb-key-save-delay", "0", true, INT_MIN, kIntMax)),
    Hidden(Int("key-load-delay", "0", true, INT_MIN, kIntMax)),
    // Eviction: Basalt keeps data on disk and evicts nothing.
    Int("maxmemory-samples", "5", true, 1, kIntMax),
    Int("maxmemory-eviction-tenacity", "10", true, 0, 100),
    {"maxmemory-clients", ConfigKind::kMemoryPercent, "0", true, -100, kLongMax, "", kNoEffect,
     true},
    Bool("replica-ignore-maxmemory", "yes", true),
    // In-memory encodings: Basalt's encodings are its own (docs/encoding.md).
    Int("hash-max-listpack-entries", "512", true, 0, kLongMax),
    Memory("hash-max-listpack-value", "64", true, 0, kLongMax),
    Int("list-max-listpack-size", "-2", true, INT_MIN, kIntMax),
    Int("list-compress-depth", "0", true, 0, kIntMax),
    Int("set-max-intset-entries", "512", true, 0, kLongMax),
    Int("set-max-listpack-entries", "128", true, 0, kLongMax),
    Int("set-max-listpack-value", "64", true, 0, kLongMax),
    Int("zset-max-listpack-entries", "128", true, 0, kLongMax),
    Memory("zset-max-listpack-value", "64", true, 0, kLongMax),
    Memory("stream-node-max-bytes", "4096", true, 0, kLongMax),
    Enum("sanitize-dump-payload", "no", true, "no|yes|clients"),
    // Network details Basalt does not offer.
    String("unixsocket", "", false),
    {"unixsocketperm", ConfigKind::kOctal, "0", false, 0, 0777, "", kNoEffect, true},
    Int("socket-mark-id", "0", false, 0, UINT_MAX),
    String("bind-source-addr", "", true),
    Enum("acl-pubsub-default", "resetchannels", true, "allchannels|resetchannels"),
    // Replication details that Basalt's WAL shipping does not use (docs/replication.md).
    Bool("repl-disable-tcp-nodelay", "no", true),
    Bool("repl-diskless-sync", "yes", true),
    Int("repl-diskless-sync-delay", "5", true, 0, kIntMax),
    Int("repl-diskless-sync-max-replicas", "0", true, 0, kIntMax),
    Enum("repl-diskless-load", "disabled", true, "disabled|on-empty-db|swapdb"),
    Memory("repl-backlog-size", "1mb", true, 1, kLongMax),
    Int("repl-backlog-ttl", "3600", true, 0, kLongMax),
    Bool("replica-lazy-flush", "no", true),
    Int("replica-priority", "100", true, 0, kIntMax),
    String("replica-announce-ip", "", true),
    Int("replica-announce-port", "0", true, 0, 65535),
    Bool("replica-announced", "yes", true),
    Bool("replica-ignore-disk-write-errors", "no", true),
    Enum("propagation-error-behavior", "ignore", true, "ignore|panic|panic-on-replicas"),
    // Cluster: Basalt is not a cluster node.
    Bool("cluster-enabled", "no", false),
    String("cluster-config-file", "nodes.conf", false),
    Int("cluster-node-timeout", "15000", true, 0, kLongMax),
    Int("cluster-port", "0", false, 0, 65535),
    String("cluster-announce-ip", "", true),
    {"cluster-announce-hostname", ConfigKind::kString, "", true, 0, 0, "", kNoEffect, true,
     CheckAnnouncedHostname},
    String("cluster-announce-human-nodename", "", true),
    Int("cluster-announce-port", "0", true, 0, 65535),
    Int("cluster-announce-bus-port", "0", true, 0, 65535),
    Int("cluster-announce-tls-port", "0", true, 0, 65535),
    Int("cluster-replica-validity-factor", "10", true, 0, kIntMax),
    Int("cluster-migration-barrier", "1", true, 0, kIntMax),
    Bool("cluster-require-full-coverage", "yes", true),
    Bool("cluster-replica-no-failover", "no", true),
    Bool("cluster-allow-reads-when-down", "no", true),
    Bool("cluster-allow-pubsubshard-when-down", "yes", true),
    Bool("cluster-allow-replica-migration", "yes", true),
    Enum("cluster-preferred-endpoint-type", "ip", true, "ip|hostname|unknown-endpoint"),
    Memory("cluster-link-sendbuf-limit", "0", true, 0, kLongMax),
    // TLS: Basalt serves plain TCP.
    Int("tls-port", "0", true, 0, 65535),
    String("tls-cert-file", "", true),
    String("tls-key-file", "", true),
    String("tls-key-file-pass", "", true),
    String("tls-client-cert-file", "", true),
    String("tls-client-key-file", "", true),
    String("tls-client-key-file-pass", "", true),
    String("tls-dh-params-file", "", true),
    String("tls-ca-cert-file", "", true),
    String("tls-ca-cert-dir", "", true),
    String("tls-protocols", "", true),
    String("tls-ciphers", "", true),
    String("tls-ciphersuites", "", true),
    Enum("tls-auth-clients", "yes", true, "no|yes|optional"),
    Bool("tls-replication", "no", true),
    Bool("tls-cluster", "no", true),
    Bool("tls-prefer-server-ciphers", "no", true),
    Bool("tls-session-caching", "yes", true),
    Int("tls-session-cache-size", "20480", true, 0, kIntMax),
    Int("tls-session-cache-timeout", "300", true, 0, kIntMax),
};

const std::vector<std::pair<std::string_view, std::string_view>> kAliases = {
    {"lua-time-limit", "busy-reply-threshold"},
    {"slaveof", "replicaof"},
    {"slave-read-only", "replica-read-only"},
    {"slave-serve-stale-data", "replica-serve-stale-data"},
    {"slave-lazy-flush", "replica-lazy-flush"},
    {"slave-priority", "replica-priority"},
    {"slave-announce-ip", "replica-announce-ip"},
    {"slave-announce-port", "replica-announce-port"},
    {"slave-ignore-maxmemory", "replica-ignore-maxmemory"},
    {"repl-ping-slave-period", "repl-ping-replica-period"},
    {"min-slaves-to-write", "min-replicas-to-write"},
    {"min-slaves-max-lag", "min-replicas-max-lag"},
    {"cluster-slave-validity-factor", "cluster-replica-validity-factor"},
    {"cluster-slave-no-failover", "cluster-replica-no-failover"},
    {"hash-max-ziplist-entries", "hash-max-listpack-entries"},
    {"hash-max-ziplist-value", "hash-max-listpack-value"},
    {"zset-max-ziplist-entries", "zset-max-listpack-entries"},
    {"zset-max-ziplist-value", "zset-max-listpack-value"},
    {"list-max-ziplist-size", "list-max-listpack-size"},
};

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// strtoll's rule as Redis applies it to save and oom-score-adj-values: an optional sign and
// digits, nothing after.
bool ParseLoose(const std::string& word, int64_t* out) {
  if (word.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = strtoll(word.c_str(), &end, 10);
  if (*end != '\0' || errno != 0) return false;
  *out = v;
  return true;
}

}  // namespace

const std::vector<ConfigKey>& RedisKeysWithoutEffect() {
  return kRedisKeys;
}

const std::vector<std::pair<std::string_view, std::string_view>>& RedisAliases() {
  return kAliases;
}

std::vector<std::string> SplitWords(std::string_view value) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < value.size()) {
    size_t j = value.find(' ', i);
    if (j == std::string_view::npos) j = value.size();
    if (j > i) words.emplace_back(value.substr(i, j - i));
    i = j + 1;
  }
  return words;
}

Status CheckSave(std::string_view input, std::string* canonical) {
  std::vector<std::string> words = SplitWords(input);
  if (words.size() % 2 != 0) return Status::InvalidArgument("Invalid save parameters");
  for (size_t j = 0; j < words.size(); j++) {
    int64_t v;
    if (!ParseLoose(words[j], &v) || v < (j % 2 == 0 ? 1 : 0))
      return Status::InvalidArgument("Invalid save parameters");
    words[j] = std::to_string(v);
  }
  *canonical = Join(words);
  return Status::OK();
}

Status CheckDbFilename(std::string_view input, std::string* canonical) {
  if (input.find('/') != std::string_view::npos)
    return Status::InvalidArgument("dbfilename can't be a path, just a filename");
  *canonical = std::string(input);
  return Status::OK();
}

Status CheckBind(std::string_view input, std::string* canonical) {
  std::vector<std::string> words = SplitWords(input);
  if (words.size() > 16) return Status::InvalidArgument("Too many bind addresses specified.");
  *canonical = Join(words);
  return Status::OK();
}

Status CheckReplicaOf(std::string_view input, std::string* canonical) {
  std::vector<std::string> words = SplitWords(input);
  if (words.empty()) {  // Basalt's own "no master" value, as CONFIG GET shows it
    canonical->clear();
    return Status::OK();
  }
  if (words.size() != 2) return Status::InvalidArgument("wrong number of arguments");
  if (EqualsIgnoreCase(words[0], "no") && EqualsIgnoreCase(words[1], "one")) {
    canonical->clear();
    return Status::OK();
  }
  int64_t port;
  if (!ParseLoose(words[1], &port) || port < 0 || port > 65535)
    return Status::InvalidArgument("Invalid master port");
  *canonical = words[0] + " " + std::to_string(port);
  return Status::OK();
}

Status CheckAnnouncedHostname(std::string_view input, std::string* canonical) {
  for (char c : input) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.';
    if (!ok)
      return Status::InvalidArgument(
          "Hostnames may only contain alphanumeric characters, hyphens or dots");
  }
  *canonical = std::string(input);
  return Status::OK();
}

Status CheckNotifyKeyspaceEvents(std::string_view input, std::string* canonical) {
  int flags = ParseNotifyFlags(input);
  if (flags < 0)
    return Status::InvalidArgument("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
  *canonical = FormatNotifyFlags(flags);
  return Status::OK();
}

Status CheckShutdownOnSignal(std::string_view input, std::string* canonical) {
  static const char* const kFlags[] = {"save", "nosave", "now", "force"};
  std::vector<std::string> words = SplitWords(input);
  if (words.empty())
    return Status::InvalidArgument(
        "argument(s) must be one of the following: default, save, nosave, now, force");
  int bits = 0;
  for (const auto& w : words) {
    int bit = -1;
    if (EqualsIgnoreCase(w, "default")) bit = 0;
    for (int f = 0; f < 4; f++) {
      if (EqualsIgnoreCase(w, kFlags[f])) bit = 1 << f;
    }
    if (bit < 0)
      return Status::InvalidArgument(
          "argument(s) must be one of the following: default, save, nosave, now, force");
    bits |= bit;
  }
  if ((bits & 1) && (bits & 2))
    return Status::InvalidArgument("shutdown options SAVE and NOSAVE can't be used simultaneously");
  std::vector<std::string> names;
  for (int f = 0; f < 4; f++) {
    if (bits & (1 << f)) names.emplace_back(kFlags[f]);
  }
  *canonical = names.empty() ? "default" : Join(names);
  return Status::OK();
}

Status CheckOomScoreAdjValues(std::string_view input, std::string* canonical) {
  std::vector<std::string> words = SplitWords(input);
  if (words.size() != 3) return Status::InvalidArgument("wrong number of arguments");
  for (auto& w : words) {
    int64_t v;
    if (!ParseLoose(w, &v) || v < -2000 || v > 2000)
      return Status::InvalidArgument(
          "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
    w = std::to_string(v);
  }
  *canonical = Join(words);
  return Status::OK();
}

Status CheckLatencyPercentiles(std::string_view input, std::string* canonical) {
  std::vector<std::string> words = SplitWords(input);
  for (auto& w : words) {
    auto v = ParseDouble(w, false);
    if (!v) return Status::InvalidArgument("Invalid latency-tracking-info-percentiles parameters");
    if (*v < 0 || *v > 100)
      return Status::InvalidArgument(
          "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
    char buf[64];
    snprintf(buf, sizeof(buf), "%f", *v);
    std::string text = buf;  // "%f" with trailing zeros (and a bare '.') removed, as Redis shows
    while (!text.empty() && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
    w = text;
  }
  *canonical = Join(words);
  return Status::OK();
}

int ParseNotifyFlags(std::string_view classes) {
  int flags = 0;
  for (char c : classes) {
    switch (c) {
      case 'A':
        flags |= kNotifyAll;
        break;
      case 'g':
        flags |= kNotifyGeneric;
        break;
      case '$':
        flags |= kNotifyString;
        break;
      case 'l':
        flags |= kNotifyList;
        break;
      case 's':
        flags |= kNotifySet;
        break;
      case 'h':
        flags |= kNotifyHash;
        break;
      case 'z':
        flags |= kNotifyZset;
        break;
      case 'x':
        flags |= kNotifyExpired;
        break;
      case 'e':
        flags |= kNotifyEvicted;
        break;
      case 'K':
        flags |= kNotifyKeyspace;
        break;
      case 'E':
        flags |= kNotifyKeyevent;
        break;
      case 't':
        flags |= kNotifyStream;
        break;
      case 'm':
        flags |= kNotifyKeyMiss;
        break;
      case 'd':
        flags |= kNotifyModule;
        break;
      case 'n':
        flags |= kNotifyNew;
        break;
      default:
        return -1;
    }
  }
  return flags;
}

std::string FormatNotifyFlags(int flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out += 'A';
    if (flags & kNotifyNew) out += 'n';  // outside A; Redis's own text drops it here
  } else {
    static const std::pair<int, char> kClasses[] = {
        {kNotifyGeneric, 'g'}, {kNotifyString, '$'}, {kNotifyList, 'l'},    {kNotifySet, 's'},
        {kNotifyHash, 'h'},    {kNotifyZset, 'z'},   {kNotifyExpired, 'x'}, {kNotifyEvicted, 'e'},
        {kNotifyStream, 't'},  {kNotifyModule, 'd'}, {kNotifyNew, 'n'}};
    for (const auto& [bit, letter] : kClasses) {
      if (flags & bit) out += letter;
    }
  }
  if (flags & kNotifyKeyspace) out += 'K';
  if (flags & kNotifyKeyevent) out += 'E';
  if (flags & kNotifyKeyMiss) out += 'm';
  return out;
}

}  // namespace basalt
