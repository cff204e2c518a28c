// The server's configuration: one table declares every key.
//
// Each entry names a key, its kind, its default, how a value is validated and whether CONFIG SET
// may change it while the server runs. The same table drives the config file parser, the
// command-line overrides, CONFIG GET/SET/REWRITE and the documentation in conf/basalt.conf,
// so a key cannot exist in one of those places and be missing in another.
//
// Values that worker threads read on hot paths are atomics; strings are guarded by a mutex and
// read through Get(). Subsystems that must react to a live change (RocksDB options, the
// durability mode, the listening sockets) register an apply hook, which runs before the new
// value is committed and can refuse it. The keys are Basalt's own and every key of Redis 7.2;
// those that mean nothing for a disk store are marked no_effect (config/redis_keys.cc).
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/output_buffer_limits.h"

namespace basalt {

// kOutputBufferLimits is client-output-buffer-limit's "<class> <hard> <soft> <seconds> ..." list;
// a new value is applied on top of the current one, class by class, and a config file line may
// spread it over several words. kList is one of Redis's multi-argument keys (save, bind,
// replicaof, ...): the words are kept joined by single spaces and the key's `check` validates
// them and gives the canonical form. kOctal is unixsocketperm; kMemoryPercent is a memory value
// or "<n>%" (maxmemory-clients).
enum class ConfigKind {
  kString,
  kInt,
  kMemory,
  kBool,
  kEnum,
  kDouble,
  kOutputBufferLimits,
  kList,
  kOctal,
  kMemoryPercent,
};

// Validates a kList or kString value and writes its canonical form; the message of an error is
// Redis's text.
using ConfigCheck = Status (*)(std::string_view input, std::string* canonical);

struct ConfigKey {
  const char* name;
  ConfigKind kind;
  const char* default_value;
  bool live;        // CONFIG SET allowed while running
  int64_t min = 0;  // kInt/kMemory range
  int64_t max = 0;
  const char* choices = "";  // kEnum: "a|b|c"; "b=a" accepts b and shows a
  const char* help = "";     // one line for conf/basalt.conf
  // A Redis key that means nothing for a disk store: accepted, kept, shown and rewritten, and
  // named once at start-up as accepted without effect.
  bool no_effect = false;
  ConfigCheck check = nullptr;
  // CONFIG SET needs enable-protected-configs (dbfilename, as in Redis).
  bool is_protected = false;
  // Basalt's own key: Redis has none of this name. CONFIG SET of such a key that is not live
  // to the value it already has succeeds and changes nothing, so that a tool writing back every
  // pair of CONFIG GET * (Redis's own test suite does) meets refusals only on the keys it knows
  // from Redis to be immutable.
  bool basalt_only = false;
  // Redis's HIDDEN_CONFIG (its test hooks): CONFIG GET shows it when named, not for a pattern.
  bool hidden = false;
};

// notify-keyspace-events classes as bits (Redis's letters: K E g $ l s h z x e t m d n; A is
// g$lshzxetd).
enum NotifyFlag : int {
  kNotifyKeyspace = 1 << 0,  // K
  kNotifyKeyevent = 1 << 1,  // E
  kNotifyGeneric = 1 << 2,   // g
  kNotifyString = 1 << 3,    // $
  kNotifyList = 1 << 4,      // l
  kNotifySet = 1 << 5,       // s
  kNotifyHash = 1 << 6,      // h
  kNotifyZset = 1 << 7,      // z
  kNotifyExpired = 1 << 8,   // x
  kNotifyEvicted = 1 << 9,   // e
  kNotifyStream = 1 << 10,   // t
  kNotifyKeyMiss = 1 << 11,  // m (not part of A)
  kNotifyModule = 1 << 13,   // d
  kNotifyNew = 1 << 14,      // n (not part of A)
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};
// The words of a multi-argument value such as bind or save (split on spaces, as Redis splits a
// CONFIG SET value).
std::vector<std::string> SplitWords(std::string_view value);

// Redis's class letters to flags; -1 for a letter Redis does not know.
int ParseNotifyFlags(std::string_view classes);
std::string FormatNotifyFlags(int flags);

class Config {
 public:
  using ApplyHook = std::function<Status(const std::string& name, const std::string& value)>;

  Config();

  // Loads a config file in Redis's syntax: `key value...` lines with sdssplitargs quoting,
  // multi-argument keys, `include` (glob patterns, nested, relative to the working directory as
  // in Redis, a file including itself is refused), `rename-command` and `user`. An unknown key
  // or a bad value names the file and line.
  Status LoadFile(const std::string& path);
  // The same for text read elsewhere (redis-server's `-` reads the config from stdin); `source`
  // names it in messages. Relative includes resolve against the working directory.
  Status LoadText(std::string_view text, const std::string& source);
  // One directive, already split into words (a config line, or `--key value...` from the command
  // line). `where` prefixes error messages.
  Status ApplyDirective(std::vector<std::string> words, const std::string& where);
  // Applies one key at start-up (file or command line), live or not.
  Status SetAtStartup(std::string_view name, std::string_view value);
  // CONFIG SET: refuses keys that are not live (a Basalt-only key set to its current value
  // excepted); runs the apply hook before committing.
  Status SetLive(std::string_view name, std::string_view value);
  // CONFIG SET k1 v1 k2 v2 ...: all or nothing. Every key must exist, be settable (protected
  // keys need enable-protected-configs yes, or local and `local_client`), appear once (aliases
  // count as their key) and take its value; apply hooks run in order and, if one refuses, the
  // hooks already run are run again with the old values. On error `*bad` is the name Redis's
  // message names (the argument as given, or the key's own name for a bad value), the status is
  // NotFound for an unknown key and its message is Redis's reason.
  Status SetLiveMany(const std::vector<std::pair<std::string, std::string>>& pairs,
                     bool local_client, std::string* bad);
  // Checks that `value` would be accepted for `name` without applying it.
  Status Validate(std::string_view name, std::string_view value) const;
  // CONFIG GET: pairs of (name, value) for every key matching the glob pattern (a hidden key
  // only for its exact name).
  std::vector<std::pair<std::string, std::string>> Match(std::string_view pattern) const;
  // CONFIG REWRITE: writes the current values back to the file it was loaded from, in Redis's
  // syntax: known keys are rewritten in place (extra lines of a key are dropped), comments and
  // other directives are kept, and keys changed from their default that the file lacks are
  // appended after "# Generated by CONFIG REWRITE".
  Status Rewrite() const;

  std::string GetString(std::string_view name) const;
  int64_t GetInt(std::string_view name) const;
  double GetDouble(std::string_view name) const;
  bool GetBool(std::string_view name) const { return GetInt(name) != 0; }

  // A key of the table or an alias of one (lua-time-limit, slaveof, hash-max-ziplist-value...).
  static bool IsKnown(std::string_view name);
  // The table's name for a key or alias; empty when unknown.
  static std::string KeyName(std::string_view name);

  // Before the server serves clients: hooks run without the config's lock held.
  void AddApplyHook(std::string_view name_prefix, ApplyHook hook);

  // rename-command NAME NEW-NAME: a start-up directive rather than a key (as in Redis, CONFIG
  // GET does not show it and CONFIG REWRITE leaves its lines alone). Config only records the
  // directives in order; main applies them to the command table, which validates the names.
  struct CommandRename {
    std::string name;
    std::string new_name;  // empty: the command is disabled
  };
  void AddCommandRename(std::string_view name, std::string_view new_name);
  std::vector<CommandRename> command_renames() const;
  // `user NAME rule...` lines, in order, for main to give to the ACL store.
  struct UserDirective {
    std::string where;               // file:line, for messages
    std::vector<std::string> words;  // name, then rules
  };
  const std::vector<UserDirective>& user_directives() const { return user_directives_; }
  // Keys marked no_effect that the config file or command line set, in the order first set.
  const std::vector<std::string>& no_effect_keys_set() const { return no_effect_keys_set_; }
  const std::string& file_path() const { return file_path_; }
  // Every key: Basalt's own and the Redis keys it honours (config.cc), then Redis's keys that
  // have no effect on a disk store (redis_keys.cc).
  static const std::vector<ConfigKey>& Keys();

  // Hot-path values, kept as atomics so workers read them without a lock.
  std::atomic<int64_t> proto_max_bulk_len{0};
  std::atomic<int64_t> client_query_buffer_limit{0};
  std::atomic<int64_t> max_reply_size{0};
  std::atomic<int64_t> maxclients{0};
  std::atomic<int64_t> timeout_seconds{0};
  std::atomic<int64_t> worker_idle_polls{0};
  std::atomic<int64_t> worker_move_hand_overs{0};
  std::atomic<int64_t> slowlog_slower_than{0};
  std::atomic<int64_t> slowlog_max_len{0};
  std::atomic<int64_t> hll_sparse_max_bytes{0};
  std::atomic<int64_t> stream_node_entries{100};  // stream-node-max-entries, 0 read as 100
  std::atomic<int64_t> busy_reply_threshold{0};   // ms
  std::atomic<int64_t> min_replicas_to_write{0};
  std::atomic<int64_t> min_replicas_max_lag{0};  // seconds
  std::atomic<bool> replica_serve_stale_data{true};
  std::atomic<int64_t> lua_memory_limit{0};           // bytes
  std::atomic<int64_t> latency_monitor_threshold{0};  // ms, 0 = off
  std::atomic<int64_t> tracking_table_max_keys{0};    // 0 = no limit
  std::atomic<int64_t> maxmemory{0};                  // bytes, 0 = no limit
  std::atomic<bool> maxmemory_noeviction{true};       // maxmemory-policy is noeviction
  std::atomic<bool> maxmemory_lfu{false};             // maxmemory-policy is an LFU one
  std::atomic<int64_t> lfu_log_factor{10};            // types/key_access.h
  std::atomic<int64_t> lfu_decay_time{1};             // minutes
  // notify-keyspace-events as NotifyFlag bits (0: no notifications).
  int notify_keyspace_events() const {
    return notify_keyspace_events_.load(std::memory_order_relaxed);
  }
  // client-output-buffer-limit for one client class.
  OutputBufferLimit output_buffer_limit(ClientClass c) const;

 private:
  struct Value {
    const ConfigKey* key;
    std::string text;    // canonical text form (what CONFIG GET shows)
    int64_t number = 0;  // kInt/kMemory/kBool
    double real = 0;     // kDouble
  };
  Status Parse(const ConfigKey& key, std::string_view input, Value* out) const;
  Status Store(std::string_view name, std::string_view value, bool live);
  Status LoadLines(std::istream& in, const std::string& source);
  Status Include(const std::string& pattern, const std::string& where);
  void RecordNoEffect(const ConfigKey& key);
  Status RunHooks(const std::string& name, const std::string& value) const;
  void PublishAtomics();
  static const ConfigKey* KeyByName(std::string_view name);
  const Value* Find(std::string_view name) const;

  mutable std::mutex mu_;
  std::mutex apply_mu_;  // serializes SetLiveMany
  std::map<std::string, Value, std::less<>> values_;
  std::vector<std::pair<std::string, ApplyHook>> hooks_;
  std::vector<CommandRename> command_renames_;
  std::vector<UserDirective> user_directives_;
  std::vector<std::string> no_effect_keys_set_;
  std::vector<std::string> include_stack_;  // files being loaded, for the include cycle guard
  bool save_seen_in_file_ = false;  // later `save` lines of a file add to the first, as in Redis
  std::atomic<int> notify_keyspace_events_{0};
  std::string file_path_;
  std::array<std::array<std::atomic<int64_t>, 3>, kClientClassCount> output_buffer_limits_{};
};

}  // namespace basalt
