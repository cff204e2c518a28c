// Keyspace: the Redis key space over the Engine, and Context, one unit of work on it.
//
// Keyspace owns what every type shares: the engine, the logical->physical database map that
// makes SWAPDB O(1), exact per-database key/expire counts, the key lock table, the watch
// registry, the keyspace notification classes (keyspace_events.h) and the exclusive lock that
// MULTI/EXEC and whole-database commands hold so that no client ever observes half of them.
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
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/rwlock.h"
#include "common/status.h"
#include "config/config.h"
#include "storage/batch.h"
#include "storage/engine.h"
#include "types/key_access.h"
#include "types/keyspace_events.h"
#include "types/lock_table.h"
#include "types/member_filter.h"
#include "types/metadata.h"
#include "types/replication_effects.h"
#include "types/touched_keys.h"
#include "types/watch_registry.h"

namespace basalt {

constexpr int kMaxDatabases = 16;
// The on-disk format version this server reads and writes (docs/encoding.md). Bump it on any
// change that an older server would misread; a data directory with another version is refused
// at start-up. Directories made before the marker file existed are version 1.
constexpr int kDataFormatVersion = 1;
constexpr int kFirstDataFormatVersion = 1;

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
  // Starts loading what the commands about to run on `keys` of `db` read first: each key's
  // metadata cache slot and lock stripe. Takes no lock; a key never used costs only its fetch.
  void PrefetchForCommands(int db, std::span<const std::string_view> keys);
  WatchRegistry& watches() { return watches_; }
  KeyspaceEvents& events() { return events_; }
  // The logical database that physical database `pdb` currently serves.
  int Logical(uint8_t pdb) const;
  MemberFilters& member_filters() { return member_filters_; }
  // Keys' access times and LFU counters (OBJECT IDLETIME / FREQ).
  KeyAccessTable& access() { return *access_; }
  // Held shared by every command and exclusively by EXEC, FLUSHDB/FLUSHALL and SWAPDB.
  WriterPreferringMutex& exclusive() { return exclusive_; }

  // A load that replaces the whole key space (a full sync from a Redis master) holds
  // exclusive() for as long as it runs. It is announced before the lock is taken and withdrawn
  // after it is given back, so that commands answer LOADING instead of waiting that long
  // (commands/admission.h). `total_bytes` is the size of what is loaded.
  void BeginLoading(uint64_t total_bytes);
  void EndLoading();
  bool loading() const { return loading_.load(std::memory_order_acquire); }
  int64_t loading_started_unix() const { return loading_started_unix_.load(); }
  uint64_t loading_total_bytes() const { return loading_total_bytes_.load(); }

  // Told after each commit of every key it changed (blocked clients wait on these). Set once
  // at start-up, before any command runs; nullptr: nobody.
  class TouchListener {
   public:
    virtual ~TouchListener() = default;
    // Whether a touch would do anything now. A commit asks after it is done, when the listener
    // would otherwise check for itself, and skips ordering its keys when nobody listens or
    // watches (most commits).
    virtual bool Listening() const = 0;
    virtual void OnKeyTouched(uint8_t physical_db, std::string_view key) = 0;
    // Every key of the physical database may have changed: SWAPDB moved it to another logical
    // database, or FLUSHDB/FLUSHALL emptied it.
    virtual void OnDatabaseReplaced(uint8_t physical_db) = 0;
  };
  void SetTouchListener(TouchListener* listener) { touch_listener_ = listener; }

  // Client-side caching (commands/tracking.h). A client's command reports what it changed
  // itself (Context::TakeChangedKeys), since only it knows who wrote; this listener hears of
  // the changes no client's command makes: the active expirer's deletions, a replica's applied
  // writes, and flushes. Set once at start-up, before any command runs; nullptr: nobody.
  class InvalidationListener {
   public:
    virtual ~InvalidationListener() = default;
    // Whether any client tracks keys now: one relaxed load.
    virtual bool Listening() const = 0;
    virtual void OnKeysChanged(const std::vector<std::string_view>& keys) = 0;
    // Every key may have changed (FLUSHDB, FLUSHALL, a replica's full sync). Called whether or
    // not a client tracks keys now: the table of keys read earlier is emptied either way.
    virtual void OnAllKeysChanged() = 0;
  };
  void SetInvalidationListener(InvalidationListener* listener) {
    invalidation_listener_ = listener;
  }
  InvalidationListener* invalidation_listener() const { return invalidation_listener_; }

  // Redis replicas (commands/replica_stream.h): a commit hands them the effects its Context
  // gathered (types/replication_effects.h), while the writers' locks are still held.
  class EffectsListener {
   public:
    virtual ~EffectsListener() = default;
    // Whether a Context made now gathers effects: one relaxed load. It changes only while the
    // keyspace lock is held exclusively, so no Context under the lock sees it change.
    virtual bool Capturing() const = 0;
    virtual void OnEffects(std::vector<ReplicationEffects::Unit> units) = 0;
  };
  void SetEffectsListener(EffectsListener* listener) { effects_listener_ = listener; }

  // Keys changed since the last save (INFO's rdb_changes_since_last_save): commits add to it,
  // a save takes off what its file holds.
  int64_t changes_since_save() const { return changes_since_save_.load(std::memory_order_relaxed); }
  void SubtractSavedChanges(int64_t saved) {
    changes_since_save_.fetch_sub(saved, std::memory_order_relaxed);
  }

  // Whole-database operations; the caller holds exclusive().
  Status FlushDatabase(int db);
  Status FlushAll();
  Status SwapDatabases(int a, int b);
  // An RDB import into the empty keyspace (types/rdb_loader.h) is all or nothing across a
  // crash: the import is marked, durably, before its first key and unmarked after its last. A
  // keyspace that opens marked held nothing before the import began, so Open() empties it
  // (and removes the import's staging files) and logs which file was interrupted.
  Status MarkImportStarted(std::string_view source);
  Status MarkImportFinished();
  // Where a bulk import stages its SST files (storage/sst_ingest.h).
  std::string ImportStagingDir() const;
  // Starts the flush that drops what FLUSHDB's range deletions cover from the memtables, in
  // the background (Engine::StartFlush), for each family whose memtable holds many entries.
  // FlushDatabase and FlushAll call it; so does a replica that applied its master's.
  void FlushEmptiedMemtables();

  // Replication. A replica writes its master's batches below the Context layer; these bring
  // the in-memory state derived from the data back in line and tell WATCHers and blocked
  // clients what changed, as Context::Commit() does for local writes.
  // Re-reads counts, epochs and the database map after the data was replaced wholesale, and
  // marks every watched key dirty. The caller holds exclusive().
  Status ReloadState();
  // Members of collections were written without the writers (a replicated batch, a full sync):
  // what the pools of set pops and the member filters assumed about them no longer holds. The
  // caller still holds the locks of the keys written.
  void NoteUntrackedMemberWrites();
  // Applies to the in-memory counts, epochs and database map the `counters` writes of a batch
  // just committed, in batch order (a put sets, a merge adds, a delete resets), the same
  // effect they had on the stored values; so no stored counter has to be read back (a count
  // with many pending merge operands is expensive to read).
  struct CounterWrite {
    enum Kind { kPut, kMerge, kDelete } kind;
    std::string key;
    std::string value;
  };
  void ApplyCounterWrites(const std::vector<CounterWrite>& writes);
  void NotifyKeyChanged(uint8_t physical_db, std::string_view key);
  void NotifyDatabaseChanged(uint8_t physical_db);
  // Tells the invalidation listener that every key may have changed (flushes, a replica's full
  // sync, or the flushes in a batch of its master's).
  void InvalidateAllTracked();

  void Close();

 private:
  friend class Context;
  friend class ActiveExpirer;
  Keyspace() = default;
  Status LoadState();
  // Open()'s half of MarkImportStarted: empties a keyspace an import left marked.
  Status DropInterruptedImport();
  // The batch that empties logical databases [first, end), committed; FlushDatabase and
  // FlushAll then start one flush.
  Status EmptyDatabases(int first, int end);
  // The watched keys of logical database `db` that are live there or, unless `other` is -1, in
  // logical database `other`: the keys whose watchers Redis marks dirty when FLUSHDB, FLUSHALL
  // or SWAPDB changes them (a watched key that exists on neither side keeps its transaction).
  std::vector<std::string> WatchedKeysLiveIn(int db, int other);
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
  MemberFilters member_filters_{0};
  std::unique_ptr<KeyAccessTable> access_;
  TouchListener* touch_listener_ = nullptr;
  InvalidationListener* invalidation_listener_ = nullptr;
  EffectsListener* effects_listener_ = nullptr;
  std::atomic<int64_t> changes_since_save_{0};
  KeyspaceEvents events_;
  WriterPreferringMutex exclusive_;
  std::atomic<bool> loading_{false};
  std::atomic<int64_t> loading_started_unix_{0};
  std::atomic<uint64_t> loading_total_bytes_{0};
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

  // Reads the key's metadata through the pending batch; lazy expiry is applied here. With
  // set_touches_keys(true), finding the key live is an access (KeyAccessTable::Touched).
  StatusOr<KeyState> Lookup(int db, std::string_view key);
  // Lookup() that is never an access, as Redis's LOOKUP_NOTOUCH: OBJECT, EXISTS, TYPE, TTL.
  StatusOr<KeyState> Peek(int db, std::string_view key);
  // Peek() that leaves an expired key to others (no NoteExpired), as Redis's keyIsExpired:
  // WATCH and EXEC's check of watched keys.
  StatusOr<KeyState> Inspect(int db, std::string_view key);
  // Whether Lookup() counts as an access: the dispatcher sets it for each client command
  // (off under CLIENT NO-TOUCH, but for TOUCH); other Contexts never touch keys.
  void set_touches_keys(bool touches) { touches_keys_ = touches; }
  // Starts loading what Lookup() of each of these keys will read from the metadata cache, so
  // that a command naming several keys waits for their cache misses together, not in turn
  // (the first MetadataCache::kMaxPrefetch keys).
  void PrefetchMetadata(int db, std::span<const std::string_view> keys);
  // Type-checked read: NotFound if absent, WRONGTYPE if another type.
  StatusOr<KeyState> LookupOfType(int db, std::string_view key, RedisType type);
  // Replaces the key with `meta`, retiring `old` (which must come from Lookup in this Context).
  // Only touches the key when `old` is live and equal to `meta`. When `old` is not live the key
  // is a new one: the `new` notification (and `expired` first if `old` had expired).
  void Write(int db, std::string_view key, const Metadata& meta, const KeyState& old);
  // Removes the key's live or expired entry (an expired one is the `expired` notification).
  // No-op if `old` is not present.
  void Delete(int db, std::string_view key, const KeyState& old);
  // Delete() of an expired key by expiry: no change for WATCH, as Redis does not fail a
  // transaction whose key had expired when watched and is deleted since (a key watched live
  // and gone since fails EXEC through its own check, commands/transaction_commands.cc).
  void DeleteExpired(int db, std::string_view key, const KeyState& old);
  // Write() for a collection, or Delete() once it has no members left, as Redis removes an
  // emptied collection. The members of a deleted incarnation go with compaction.
  void WriteCollection(int db, std::string_view key, const Metadata& meta, const KeyState& old);

  // Keys this Context has added (or removed, if negative) in `db` but not yet committed: DBSIZE
  // inside a transaction counts them, as Redis does.
  int64_t PendingKeyDelta(int db) const { return key_deltas_[keyspace_->Physical(db)]; }

  // Writes the batch and counter merges atomically, then publishes counts and touches watchers.
  Status Commit();
  // Drops everything pending (writes, count deltas, touched keys, AfterCommit callbacks):
  // nothing of it will land. Used for a script stopped by shutdown, whose effects must not land
  // half done.
  void Discard();
  // Runs `fn` after the next successful Commit(), in the order registered; dropped if the commit
  // fails. Pub/sub delivery waits here so a message never overtakes the writes before it.
  void AfterCommit(std::function<void()> fn) { after_commit_.push_back(std::move(fn)); }
  // A keyspace notification (types/keyspace_events.h): `event` of class `event_class` happened
  // to `key` of `db`. Delivered after the next successful Commit(); one relaxed load when the
  // class is off.
  void Notify(uint32_t event_class, std::string_view event, int db, std::string_view key) {
    if (keyspace_->events_.Enabled(event_class)) AddNotification(event_class, event, db, key);
  }
  // Client-side caching: calls fn(key) for each key changed since the last call (written,
  // deleted, or found expired by a lookup while a client tracks keys), repeats included, and
  // forgets them for the next call. The dispatcher asks after each command, so that it knows
  // which client changed them.
  template <typename Fn>
  void TakeChangedKeys(Fn fn) {
    touched_.ForEachFrom(changes_taken_, fn);
    changes_taken_ = touched_.size();
    lazily_expired_.ForEachFrom(0, fn);
    lazily_expired_.clear();
  }
  // Whether pred(pdb, key) holds for one of the key changes this Context recorded since its
  // last commit, from the `first`-th on.
  template <typename Pred>
  bool AnyTouchedFrom(size_t first, Pred pred) const {
    return touched_.AnyFrom(first, pred);
  }
  // Whether a Commit() of this Context wrote anything.
  bool wrote() const { return wrote_; }
  // Key changes (writes and deletions of live keys) so far, commits included: a command changed
  // a key when this grew while it ran.
  uint64_t changes() const { return changes_; }
  // Redis counts a command's changes its own way (LPUSH's elements, SADD's added members, one
  // for LMOVE's or RENAME's two keys), where this Context counts one per key written: a handler
  // adds the difference, so that INFO's rdb_changes_since_last_save counts as Redis's does.
  void AddChanges(int64_t delta) { changes_ += static_cast<uint64_t>(delta); }
  // What Redis replicas are sent of this unit of work (types/replication_effects.h).
  ReplicationEffects& effects() { return effects_; }
  // Keys its lookups found expired (and KEYS/SCAN passed over), at most kMaxFoundExpired: the
  // dispatcher has them deleted after the command (ActiveExpirer::ExpireFound), as Redis's
  // lazy expiry deletes a key it finds expired.
  static constexpr size_t kMaxFoundExpired = 1024;
  void NoteExpired(uint8_t pdb, std::string_view key) {
    if (found_expired_.size() < kMaxFoundExpired) found_expired_.Add(pdb, key);
  }
  bool found_expired() const { return !found_expired_.empty(); }
  TouchedKeys TakeFoundExpired() { return std::exchange(found_expired_, TouchedKeys()); }
  // Limits this unit of work's reads to memory (Batch::set_memory_only): a read that needs the
  // disk fails, and missed_memory() turns true. The caller then discards the Context, whose
  // reads, writes and replies rested on incomplete data, and runs the command again elsewhere.
  void set_memory_only(bool memory_only) { batch_.set_memory_only(memory_only); }
  bool missed_memory() const { return batch_.missed_memory(); }

 private:
  friend class ActiveExpirer;
  void AddNotification(uint32_t event_class, std::string_view event, int db, std::string_view key);
  void Retire(uint8_t pdb, std::string_view key, const Metadata& old);
  void Register(uint8_t pdb, std::string_view key, const Metadata& meta);
  void RetireOrphanedExpiry(uint8_t pdb, std::string_view key, int64_t expire_ms);
  // Removes the key's entry, live or expired; an expired one is the `expired` notification and,
  // for Redis replicas, a DEL.
  void RemoveEntry(int db, std::string_view key, const KeyState& old);
  // Hands the closed effect units to the listener after a successful commit.
  void PublishEffects();
  // A write or deletion ended the incarnation `old` of a collection: with many members, their
  // range goes to the engine's reclaimer (storage/reclaimer.h), since no write over those keys
  // will ever bring a compaction to their files. Smaller ones wait for ordinary compactions.
  void NoteEndedIncarnation(uint8_t pdb, std::string_view key, const Metadata& old);
  // `meta` is now the batch's metadata of `key`: the next Lookup of it takes it (last_write_).
  void RememberWrite(uint8_t pdb, std::string_view key, const Metadata& meta);
  // `key`'s `metadata` key, in metadata_key_: valid until the next call.
  const std::string& EncodeMetadataKey(uint8_t pdb, std::string_view key);
  static constexpr uint64_t kReclaimedIncarnation = 4096;

  Keyspace* keyspace_;
  Batch batch_;
  int64_t now_ms_;
  std::array<int64_t, kMaxDatabases> key_deltas_{};
  std::array<int64_t, kMaxDatabases> expire_deltas_{};
  // Keys written, repeats included (a sorted set cost a node and a search per write; the
  // repeats go at commit).
  TouchedKeys touched_;
  // How many of touched_ TakeChangedKeys() has handed out; and the keys lookups found expired,
  // recorded only while a client tracks keys (Redis deletes such a key as it reads it, which
  // invalidates it; here the active expirer deletes it later).
  size_t changes_taken_ = 0;
  TouchedKeys lazily_expired_;
  TouchedKeys found_expired_;
  std::vector<std::function<void()>> after_commit_;
  ReplicationEffects effects_;
  uint64_t changes_ = 0;
  uint64_t changes_committed_ = 0;  // changes_ at the last commit
  bool wrote_ = false;
  bool touches_keys_ = false;
  // The collection this Context last wrote, as written: each command of a write group on one
  // hot key looks that key up again, and finds it here instead of hashing, copying and decoding
  // the batch's value. It is that value for as long as the batch's metadata epoch is `epoch`,
  // and the first Lookup() of it takes it.
  struct LastWrite {
    uint64_t epoch = 0;  // 0: none
    uint8_t pdb = 0;
    std::string key;
    Metadata meta;
  };
  LastWrite last_write_;
  // Where Write() encodes metadata, its capacity kept for the group's next write (one
  // allocation fewer per write command), unless a large string value grew it.
  std::string encoded_metadata_;
  // Where Lookup(), Write() and Delete() encode a `metadata` key: one of redis-benchmark's keys
  // ("key:000000123456") is past a string's inline capacity, so each encoding was an allocation.
  std::string metadata_key_;
};

extern const char* const kWrongTypeError;

}  // namespace basalt
