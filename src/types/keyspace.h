// Keyspace: the Redis key space over the Engine, and Context, one unit of work on it.
//
// Keyspace owns what every type shares: the engine, the logical->physical database map that
// makes SWAPDB O(1), exact per-database key/expire counts, the key lock table, the watch
// registry and the exclusive lock that MULTI/EXEC and whole-database commands hold so that no
// client ever observes half of them.
//
// Context gathers one command's (or one EXEC's) reads and writes into a single Batch. Writers
// Lookup() a key, then Write() or Delete() it passing the state they looked up: the Context
// retires the old incarnation (expiry index entry, counts) and registers the new one in the
// same batch, so counts and the expiry index never drift from the data, also across a crash.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>

#include "common/rwlock.h"
#include "common/status.h"
#include "config/config.h"
#include "storage/batch.h"
#include "storage/engine.h"
#include "types/lock_table.h"
#include "types/metadata.h"
#include "types/watch_registry.h"

namespace basalt {

constexpr int kMaxDatabases = 16;

class Keyspace {
 public:
  ~Keyspace();
  static StatusOr<std::unique_ptr<Keyspace>> Open(Config* config);

  Engine* engine() const { return engine_.get(); }
  int databases() const { return databases_; }
  uint8_t Physical(int db) const { return db_map_[db].load(std::memory_order_relaxed); }
  int64_t KeyCount(int db) const { return keys_[Physical(db)].load(); }
  int64_t ExpireCount(int db) const { return expires_[Physical(db)].load(); }
  uint64_t Epoch(uint8_t physical_db) const { return epochs_[physical_db].load(); }

  LockTable& locks() { return locks_; }
  WatchRegistry& watches() { return watches_; }
  // Held shared by every command and exclusively by EXEC, FLUSHDB/FLUSHALL and SWAPDB.
  WriterPreferringMutex& exclusive() { return exclusive_; }

  // Called after each commit for every key it changed (blocked clients wait on these). Set once
  // at start-up, before any command runs.
  using TouchListener = std::function<void(uint8_t physical_db, std::string_view key)>;
  void SetTouchListener(TouchListener listener) { touch_listener_ = std::move(listener); }

  // Whole-database operations; the caller holds exclusive().
  Status FlushDatabase(int db);
  Status FlushAll();
  Status SwapDatabases(int a, int b);

  void Close();

 private:
  friend class Context;
  friend class ActiveExpirer;
  Keyspace() = default;
  Status LoadState();
  void ApplyCounts(const std::array<int64_t, kMaxDatabases>& keys,
                   const std::array<int64_t, kMaxDatabases>& expires);

  std::unique_ptr<Engine> engine_;
  int databases_ = kMaxDatabases;
  std::array<std::atomic<uint8_t>, kMaxDatabases> db_map_{};
  std::array<std::atomic<int64_t>, kMaxDatabases> keys_{};
  std::array<std::atomic<int64_t>, kMaxDatabases> expires_{};
  std::array<std::atomic<uint64_t>, kMaxDatabases> epochs_{};
  LockTable locks_;
  WatchRegistry watches_;
  TouchListener touch_listener_;
  WriterPreferringMutex exclusive_;
};

// What a writer saw of a key: the stored entry (possibly expired) and whether it is live.
struct KeyState {
  bool present = false;  // an entry exists in metadata, maybe logically expired
  bool expired = false;
  Metadata meta;
  bool live() const { return present && !expired; }
};

class Context {
 public:
  explicit Context(Keyspace* keyspace);

  Keyspace* keyspace() const { return keyspace_; }
  Batch& batch() { return batch_; }
  // Time is frozen for the duration of a command or a transaction, as in Redis.
  int64_t now_ms() const { return now_ms_; }

  // Reads the key's metadata through the pending batch; lazy expiry is applied here.
  StatusOr<KeyState> Lookup(int db, std::string_view key);
  // Type-checked read: NotFound if absent, WRONGTYPE if another type.
  StatusOr<KeyState> LookupOfType(int db, std::string_view key, RedisType type);
  // Replaces the key with `meta`, retiring `old` (which must come from Lookup in this Context).
  void Write(int db, std::string_view key, const Metadata& meta, const KeyState& old);
  // Removes the key's live or expired entry. No-op if `old` is not present.
  void Delete(int db, std::string_view key, const KeyState& old);

  // Keys this Context has added (or removed, if negative) in `db` but not yet committed: DBSIZE
  // inside a transaction counts them, as Redis does.
  int64_t PendingKeyDelta(int db) const { return key_deltas_[keyspace_->Physical(db)]; }

  // Writes the batch and counter merges atomically, then publishes counts and touches watchers.
  Status Commit();

 private:
  friend class ActiveExpirer;
  void Retire(uint8_t pdb, std::string_view key, const Metadata& old);
  void Register(uint8_t pdb, std::string_view key, const Metadata& meta);

  Keyspace* keyspace_;
  Batch batch_;
  int64_t now_ms_;
  std::array<int64_t, kMaxDatabases> key_deltas_{};
  std::array<int64_t, kMaxDatabases> expire_deltas_{};
  std::set<std::pair<uint8_t, std::string>> touched_;
};

extern const char* const kWrongTypeError;

}  // namespace basalt
