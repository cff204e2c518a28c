// The server's configuration: one table declares every key.
//
// Each entry names a key, its kind, its default, how a value is validated and whether CONFIG SET
// may change it while the server runs. The same table drives the config file parser, the
// command-line overrides, CONFIG GET/SET/REWRITE and the documentation in conf/basalt.conf,
// so a key cannot exist in one of those places and be missing in another.
//
// Values that worker threads read on hot paths are atomics; strings are guarded by a mutex and
// read through Get(). Subsystems that must react to a live change (RocksDB options, the
// durability mode) register an apply hook, which runs before the new value is committed and can
// refuse it.
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
// spread it over several words.
enum class ConfigKind { kString, kInt, kMemory, kBool, kEnum, kDouble, kOutputBufferLimits };

struct ConfigKey {
  const char* name;
  ConfigKind kind;
  const char* default_value;
  bool live;        // CONFIG SET allowed while running
  int64_t min = 0;  // kInt/kMemory range
  int64_t max = 0;
  const char* choices = "";  // kEnum: "a|b|c"
  const char* help = "";     // one line for conf/basalt.conf
};

class Config {
 public:
  using ApplyHook = std::function<Status(const std::string& name, const std::string& value)>;

  Config();

  // Loads `key value` lines; an unknown key or a bad value names the file and line.
  Status LoadFile(const std::string& path);
  // Applies one key at start-up (file or command line), live or not.
  Status SetAtStartup(std::string_view name, std::string_view value);
  // CONFIG SET: refuses keys that are not live; runs the apply hook before committing.
  Status SetLive(std::string_view name, std::string_view value);
  // Checks that `value` would be accepted for `name` without applying it.
  Status Validate(std::string_view name, std::string_view value) const;
  // CONFIG GET: pairs of (name, value) for every key matching the glob pattern.
  std::vector<std::pair<std::string, std::string>> Match(std::string_view pattern) const;
  // CONFIG REWRITE: writes the current values back to the file it was loaded from.
  Status Rewrite() const;

  std::string GetString(std::string_view name) const;
  int64_t GetInt(std::string_view name) const;
  double GetDouble(std::string_view name) const;
  bool GetBool(std::string_view name) const { return GetInt(name) != 0; }

  // A key of the table or an alias of one (lua-time-limit).
  static bool IsKnown(std::string_view name);

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
  const std::string& file_path() const { return file_path_; }
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
  std::atomic<int64_t> busy_reply_threshold{0};  // ms
  std::atomic<int64_t> lua_memory_limit{0};      // bytes
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
  void PublishAtomics();
  static const ConfigKey* KeyByName(std::string_view name);
  const Value* Find(std::string_view name) const;

  mutable std::mutex mu_;
  std::map<std::string, Value, std::less<>> values_;
  std::vector<std::pair<std::string, ApplyHook>> hooks_;
  std::vector<CommandRename> command_renames_;
  std::string file_path_;
  std::array<std::array<std::atomic<int64_t>, 3>, kClientClassCount> output_buffer_limits_{};
};

}  // namespace basalt
