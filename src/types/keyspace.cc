#include "types/keyspace.h"

#include <glog/logging.h>

#include <algorithm>
#include <filesystem>

#include "common/clock.h"
#include "common/coding.h"
#include "storage/engine.h"
#include "storage/format_marker.h"
#include "types/compaction.h"
#include "types/pubsub_record.h"
#include "types/set.h"

namespace basalt {

const char* const kWrongTypeError =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

// ---------------------------------------------------------------------------------------------
// Keyspace

StatusOr<std::unique_ptr<Keyspace>> Keyspace::Open(Config* config) {
  std::unique_ptr<Keyspace> ks(new Keyspace());
  ks->databases_ = static_cast<int>(config->GetInt("databases"));
  Status marker =
      CheckFormatMarker(config->GetString("dir"), kDataFormatVersion, kFirstDataFormatVersion);
  if (!marker.ok()) return marker;
  auto subkey_filter = std::make_shared<SubkeyFilterFactory>();
  ColumnFamilyHooks hooks;
  hooks.metadata_filter = NewMetadataFilterFactory();
  hooks.subkey_filter = subkey_filter;
  hooks.counters_merge = NewCounterMergeOperator();
  hooks.metadata_expired = MetadataExpiredNow;
  auto engine = Engine::Open(config, hooks);
  if (!engine.ok()) return engine.status();
  ks->engine_ = std::move(*engine);
  subkey_filter->Attach(ks->engine_.get());
  Status s = ks->LoadState();
  if (s.ok()) s = ks->DropInterruptedImport();
  if (!s.ok()) return s;
  ks->member_filters_.SetBudget(config->GetInt("member-filter-size"));
  ks->access_ = std::make_unique<KeyAccessTable>(config, UnixMillis());
  Keyspace* raw = ks.get();
  // Config validates the letters (its check on the key); a hook only passes the flags on.
  ks->events_.Configure(static_cast<uint32_t>(config->notify_keyspace_events()));
  config->AddApplyHook("notify-keyspace-events", [raw](const std::string&, const std::string& v) {
    raw->events_.Configure(static_cast<uint32_t>(ParseNotifyFlags(v)));
    return Status::OK();
  });
  config->AddApplyHook("member-filter-size", [raw](const std::string&, const std::string& value) {
    raw->member_filters_.SetBudget(std::stoull(value));
    return Status::OK();
  });
  return ks;
}

Keyspace::~Keyspace() {
  Close();
}

void Keyspace::Close() {
  if (engine_) engine_->Close();
}

void Keyspace::BeginLoading(uint64_t total_bytes) {
  loading_total_bytes_ = total_bytes;
  loading_started_unix_ = UnixMillis() / 1000;
  loading_.store(true, std::memory_order_release);
}

void Keyspace::EndLoading() {
  loading_.store(false, std::memory_order_release);
}

Status Keyspace::LoadState() {
  std::string value;
  rocksdb::Status s = engine_->Get(ColumnFamily::kCounters, kDbMapKey, &value);
  for (int i = 0; i < kMaxDatabases; i++) db_map_[i] = static_cast<uint8_t>(i);
  if (s.ok() && value.size() == kMaxDatabases) {
    for (int i = 0; i < kMaxDatabases; i++) db_map_[i] = static_cast<uint8_t>(value[i]);
  } else if (!s.ok() && !s.IsNotFound()) {
    return Status::IOError("reading the database map: " + s.ToString());
  }
  for (int i = 0; i < kMaxDatabases; i++) {
    uint8_t db = static_cast<uint8_t>(i);
    std::string v;
    s = engine_->Get(ColumnFamily::kCounters, KeysCounterKey(db), &v);
    keys_[i] = s.ok() ? DecodeCounter(v) : 0;
    s = engine_->Get(ColumnFamily::kCounters, ExpiresCounterKey(db), &v);
    expires_[i] = s.ok() ? DecodeCounter(v) : 0;
    s = engine_->Get(ColumnFamily::kCounters, EpochKey(db), &v);
    epochs_[i] = s.ok() && v.size() == 8 ? DecodeFixed64(v.data()) : 0;
  }
  return Status::OK();
}

void Keyspace::ApplyCounts(const std::array<int64_t, kMaxDatabases>& keys,
                           const std::array<int64_t, kMaxDatabases>& expires) {
  for (int i = 0; i < kMaxDatabases; i++) {
    if (keys[i] != 0) keys_[i].fetch_add(keys[i]);
    if (expires[i] != 0) expires_[i].fetch_add(expires[i]);
  }
}

namespace {
constexpr ColumnFamily kFlushedFamilies[] = {ColumnFamily::kMetadata, ColumnFamily::kSubkey,
                                             ColumnFamily::kZsetScore, ColumnFamily::kLargeValue};
}  // namespace

Status Keyspace::FlushDatabase(int db) {
  Status s = EmptyDatabases(db, db + 1);
  if (s.ok()) FlushEmptiedMemtables();
  InvalidateAllTracked();
  return s;
}

void Keyspace::InvalidateAllTracked() {
  if (invalidation_listener_ != nullptr) invalidation_listener_->OnAllKeysChanged();
}

void Keyspace::FlushEmptiedMemtables() {
  // A few dead entries cost the next writes little, while a flush costs a memtable switch and a
  // flush job at once: FLUSHALL between a test suite's tests made the commands right after it
  // several times slower.
  constexpr uint64_t kMinDeadEntries = 65536;
  std::vector<ColumnFamily> families;
  for (ColumnFamily cf : kFlushedFamilies) {
    if (engine_->ActiveMemtableEntries(cf) >= kMinDeadEntries) families.push_back(cf);
  }
  if (!families.empty()) engine_->StartFlush(families);
}

std::vector<std::string> Keyspace::WatchedKeysLiveIn(int db, int other) {
  std::vector<std::string> keys = watches_.Keys(Physical(db));
  if (keys.empty()) return keys;
  Context ctx(this);
  auto live_in = [&ctx](int d, const std::string& key) {
    auto state = ctx.Lookup(d, key);
    return !state.ok() || state->live();  // an unreadable key counts as changed
  };
  std::erase_if(keys, [&](const std::string& key) {
    return !live_in(db, key) && (other == -1 || !live_in(other, key));
  });
  return keys;
}

Status Keyspace::EmptyDatabases(int first, int end) {
  struct Emptied {
    uint8_t pdb;
    uint64_t epoch;
    std::vector<std::string> changed;  // watched keys that were live
  };
  std::vector<Emptied> emptied;
  Batch batch(engine_.get());
  for (int db = first; db < end; db++) {
    uint8_t pdb = Physical(db);
    Emptied e{pdb, epochs_[pdb] + 1, WatchedKeysLiveIn(db, -1)};
    // The data goes with range deletes; bumping the epoch orphans this database's expiry index
    // entries, which the expirer then discards without touching the (reset) counts.
    for (ColumnFamily cf : kFlushedFamilies)
      batch.DeleteRange(cf, DatabaseBegin(pdb), DatabaseEnd(pdb));
    // The reclaimers compact the files in the range, which no later write over those keys
    // reaches.
    for (ColumnFamily cf : {ColumnFamily::kSubkey, ColumnFamily::kZsetScore})
      batch.NoteDeadRange(cf, DatabaseBegin(pdb), DatabaseEnd(pdb));
    std::string epoch_value;
    PutFixed64(&epoch_value, e.epoch);
    batch.Put(ColumnFamily::kCounters, KeysCounterKey(pdb), EncodeCounter(0));
    batch.Put(ColumnFamily::kCounters, ExpiresCounterKey(pdb), EncodeCounter(0));
    batch.Put(ColumnFamily::kCounters, EpochKey(pdb), epoch_value);
    emptied.push_back(std::move(e));
  }
  rocksdb::Status s = batch.Commit();
  if (!s.ok()) return Status::IOError(s.ToString());
  // Like Redis, a flush counts one change per key it removed.
  int64_t removed = 0;
  for (const Emptied& e : emptied) {
    removed += static_cast<int64_t>(keys_[e.pdb].load());
    keys_[e.pdb] = 0;
    expires_[e.pdb] = 0;
    epochs_[e.pdb] = e.epoch;
    for (const std::string& key : e.changed) watches_.Touch(e.pdb, key);
    if (touch_listener_ != nullptr && touch_listener_->Listening())
      touch_listener_->OnDatabaseReplaced(e.pdb);
  }
  changes_since_save_.fetch_add(removed, std::memory_order_relaxed);
  return Status::OK();
}

Status Keyspace::MarkImportStarted(std::string_view source) {
  rocksdb::WriteBatch batch;
  batch.Put(engine_->cf(ColumnFamily::kCounters), kImportMarkerKey, source);
  rocksdb::Status s = engine_->WriteDurably(&batch);
  return s.ok() ? Status::OK() : Status::IOError("marking the import: " + s.ToString());
}

Status Keyspace::MarkImportFinished() {
  rocksdb::WriteBatch batch;
  batch.Delete(engine_->cf(ColumnFamily::kCounters), kImportMarkerKey);
  rocksdb::Status s = engine_->WriteDurably(&batch);
  return s.ok() ? Status::OK() : Status::IOError("unmarking the import: " + s.ToString());
}

std::string Keyspace::ImportStagingDir() const {
  return engine_->db()->GetName() + "/import-staging";
}

Status Keyspace::DropInterruptedImport() {
  std::string source;
  rocksdb::Status s = engine_->Get(ColumnFamily::kCounters, kImportMarkerKey, &source);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return Status::IOError("reading the import marker: " + s.ToString());
  LOG(WARNING) << "the RDB import of " << source
               << " did not finish before the server stopped: emptying the keyspace, which "
                  "held nothing before the import began";
  Status flushed = FlushAll();
  if (!flushed.ok()) return flushed;
  std::error_code ignored;  // leftover staging files only waste space
  std::filesystem::remove_all(ImportStagingDir(), ignored);
  return MarkImportFinished();
}

Status Keyspace::FlushAll() {
  // One batch for every database: a replica applies it (and tells its tracking clients) once.
  Status s = EmptyDatabases(0, databases_);
  if (!s.ok()) return s;
  FlushEmptiedMemtables();
  InvalidateAllTracked();
  engine_->CompleteMetadataCacheIfEmpty();
  member_filters_.Clear();  // their collections are gone
  return Status::OK();
}

Status Keyspace::SwapDatabases(int a, int b) {
  if (a == b) return Status::OK();
  std::string map(kMaxDatabases, '\0');
  for (int i = 0; i < kMaxDatabases; i++) map[i] = static_cast<char>(db_map_[i].load());
  std::swap(map[a], map[b]);
  std::vector<std::string> changed_a = WatchedKeysLiveIn(a, b);
  std::vector<std::string> changed_b = WatchedKeysLiveIn(b, a);
  Batch batch(engine_.get());
  batch.Put(ColumnFamily::kCounters, kDbMapKey, map);
  rocksdb::Status s = batch.Commit();
  if (!s.ok()) return Status::IOError(s.ToString());
  uint8_t pa = db_map_[a], pb = db_map_[b];
  db_map_[a] = pb;
  db_map_[b] = pa;
  for (const std::string& key : changed_a) watches_.Touch(pa, key);
  for (const std::string& key : changed_b) watches_.Touch(pb, key);
  if (touch_listener_ != nullptr && touch_listener_->Listening()) {
    touch_listener_->OnDatabaseReplaced(pa);
    touch_listener_->OnDatabaseReplaced(pb);
  }
  return Status::OK();
}

int Keyspace::Logical(uint8_t pdb) const {
  for (int db = 0; db < kMaxDatabases; db++) {
    if (Physical(db) == pdb) return db;
  }
  return pdb;
}

void Keyspace::NoteUntrackedMemberWrites() {
  NoteUntrackedSetWrites();
  member_filters_.Clear();
}

Status Keyspace::ReloadState() {
  Status s = LoadState();
  watches_.TouchAll();
  InvalidateAllTracked();
  return s;
}

void Keyspace::ApplyCounterWrites(const std::vector<CounterWrite>& writes) {
  for (const CounterWrite& w : writes) {
    if (w.key == kDbMapKey) {
      bool valid = w.kind == CounterWrite::kPut && w.value.size() == kMaxDatabases;
      for (int i = 0; i < kMaxDatabases; i++) {
        uint8_t before = db_map_[i];
        uint8_t after = valid ? static_cast<uint8_t>(w.value[i]) : static_cast<uint8_t>(i);
        if (before == after) continue;
        db_map_[i] = after;
        watches_.TouchDatabase(before);
        watches_.TouchDatabase(after);
      }
      continue;
    }
    // "keys" | db, "expires" | db, "epoch" | db (types/metadata.h)
    std::string_view name(w.key);
    if (name.empty()) continue;
    uint8_t db = static_cast<uint8_t>(name.back());
    name.remove_suffix(1);
    if (db >= kMaxDatabases) continue;
    if (name == "epoch") {
      epochs_[db] =
          w.kind == CounterWrite::kPut && w.value.size() == 8 ? DecodeFixed64(w.value.data()) : 0;
      continue;
    }
    std::atomic<int64_t>* count =
        name == "keys" ? &keys_[db] : (name == "expires" ? &expires_[db] : nullptr);
    if (count == nullptr) continue;
    if (w.kind == CounterWrite::kMerge) {
      count->fetch_add(DecodeCounter(w.value));
    } else {
      *count = w.kind == CounterWrite::kPut ? DecodeCounter(w.value) : 0;
    }
  }
}

void Keyspace::NotifyKeyChanged(uint8_t physical_db, std::string_view key) {
  watches_.Touch(physical_db, key);
  if (touch_listener_ != nullptr) touch_listener_->OnKeyTouched(physical_db, key);
  if (invalidation_listener_ != nullptr && invalidation_listener_->Listening()) {
    invalidation_listener_->OnKeysChanged({key});
  }
}

void Keyspace::NotifyDatabaseChanged(uint8_t physical_db) {
  watches_.TouchDatabase(physical_db);
}

// ---------------------------------------------------------------------------------------------
// Context

Context::Context(Keyspace* keyspace)
    : keyspace_(keyspace), batch_(keyspace->engine()), now_ms_(UnixMillis()) {
  Keyspace::EffectsListener* listener = keyspace->effects_listener_;
  effects_.set_capturing(listener != nullptr && listener->Capturing());
}

StatusOr<KeyState> Context::Lookup(int db, std::string_view key) {
  auto state = Peek(db, key);
  if (touches_keys_ && state.ok() && state->live())
    keyspace_->access_->Touched(keyspace_->Physical(db), key, now_ms_);
  return state;
}

StatusOr<KeyState> Context::Peek(int db, std::string_view key) {
  auto state = Inspect(db, key);
  if (state.ok() && state->expired) NoteExpired(keyspace_->Physical(db), key);
  return state;
}

StatusOr<KeyState> Context::Inspect(int db, std::string_view key) {
  KeyState state;
  uint8_t pdb = keyspace_->Physical(db);
  if (last_write_.epoch == batch_.metadata_epoch() && last_write_.pdb == pdb &&
      last_write_.key == key) {
    // Handed over rather than copied: the command that looked the key up writes it again.
    state.present = true;
    state.meta = std::move(last_write_.meta);
    state.expired = state.meta.ExpiredAt(now_ms_);
    last_write_.epoch = 0;
    return state;
  }
  std::string value;
  rocksdb::Status s = batch_.Get(ColumnFamily::kMetadata, EncodeMetadataKey(pdb, key), &value);
  if (s.IsNotFound()) return state;
  if (!s.ok()) return Status::IOError(s.ToString());
  if (!state.meta.Decode(value)) return Status::IOError("corrupt metadata for a key");
  state.present = true;
  state.expired = state.meta.ExpiredAt(now_ms_);
  if (state.expired) {
    Keyspace::InvalidationListener* listener = keyspace_->invalidation_listener_;
    if (listener != nullptr && listener->Listening()) lazily_expired_.Add(pdb, key);
  }
  return state;
}

namespace {

// The `metadata` keys of `keys` in physical database `pdb`, encoded into buffers of the calling
// thread: valid until its next call.
std::span<const std::string_view> EncodedMetadataKeys(uint8_t pdb,
                                                      std::span<const std::string_view> keys) {
  thread_local std::string encoded;
  thread_local std::vector<size_t> ends;
  thread_local std::vector<std::string_view> views;
  encoded.clear();
  ends.clear();
  views.clear();
  for (std::string_view key : keys) {
    AppendMetadataKey(&encoded, pdb, key);
    ends.push_back(encoded.size());
  }
  // The views are taken once `encoded` has stopped growing.
  size_t begin = 0;
  for (size_t end : ends) {
    views.emplace_back(encoded.data() + begin, end - begin);
    begin = end;
  }
  return views;
}

}  // namespace

void Keyspace::PrefetchForCommands(int db, std::span<const std::string_view> keys) {
  const uint8_t pdb = Physical(db);
  for (std::string_view key : keys) locks_.Prefetch(locks_.StripeOf(pdb, key));
  engine_->PrefetchMetadataSlots(EncodedMetadataKeys(pdb, keys));
}

void Context::PrefetchMetadata(int db, std::span<const std::string_view> keys) {
  keyspace_->engine()->PrefetchMetadata(EncodedMetadataKeys(
      keyspace_->Physical(db), keys.first(std::min(keys.size(), MetadataCache::kMaxPrefetch))));
}

StatusOr<KeyState> Context::LookupOfType(int db, std::string_view key, RedisType type) {
  auto state = Lookup(db, key);
  if (!state.ok()) return state;
  if (!state->live()) return Status::NotFound();
  if (state->meta.type != type) return Status::RedisError(kWrongTypeError);
  return state;
}

void Context::AddNotification(uint32_t event_class, std::string_view event, int db,
                              std::string_view key) {
  KeyspaceEvents& events = keyspace_->events_;
  uint32_t classes = events.classes();
  KeyspaceEvents::Sink* sink = events.sink();
  // A key miss happens on a read: it is this server's own, and never travels to replicas.
  bool replicate = event_class != notify::kKeyMiss && sink->Replicating();
  auto channel = [db](std::string_view kind, std::string_view name) {
    std::string out;
    out.reserve(kind.size() + name.size() + 8);
    out.append(kind);
    out.push_back('@');
    out.append(std::to_string(db));
    out.append("__:");
    out.append(name);
    return out;
  };
  auto emit = [&](std::string channel_name, std::string_view message) {
    if (replicate) AddPubsubRecord(batch_, false, channel_name, message);
    AfterCommit([sink, channel_name = std::move(channel_name), message = std::string(message)] {
      sink->Deliver(channel_name, message);
    });
  };
  if (classes & notify::kKeyspace) emit(channel("__keyspace", key), event);
  if (classes & notify::kKeyevent) emit(channel("__keyevent", event), key);
}

void Context::Retire(uint8_t pdb, std::string_view key, const Metadata& old) {
  key_deltas_[pdb]--;
  if (old.expire_ms != 0) {
    expire_deltas_[pdb]--;
    batch_.Delete(ColumnFamily::kExpire, ExpireKey(old.expire_ms, pdb, key));
  }
}

void Context::Register(uint8_t pdb, std::string_view key, const Metadata& meta) {
  key_deltas_[pdb]++;
  if (meta.expire_ms != 0) {
    expire_deltas_[pdb]++;
    std::string epoch;
    PutFixed64(&epoch, keyspace_->Epoch(pdb));
    batch_.Put(ColumnFamily::kExpire, ExpireKey(meta.expire_ms, pdb, key), epoch);
  }
}

void Context::RetireOrphanedExpiry(uint8_t pdb, std::string_view key, int64_t expire_ms) {
  // The writer saw no incarnation, yet an index entry with this exact expiry may survive one the
  // metadata compaction filter dropped; it still stands for a counted key. The new entry is about
  // to overwrite it, so its count is retired here, as the expirer would have done.
  std::string epoch;
  rocksdb::Status s = batch_.Get(ColumnFamily::kExpire, ExpireKey(expire_ms, pdb, key), &epoch);
  if (s.ok() && epoch.size() == 8 && DecodeFixed64(epoch.data()) == keyspace_->Epoch(pdb)) {
    key_deltas_[pdb]--;
    expire_deltas_[pdb]--;
  }
}

void Context::NoteEndedIncarnation(uint8_t pdb, std::string_view key, const Metadata& old) {
  if (!old.IsCollection() || old.size < kReclaimedIncarnation || old.version == UINT64_MAX) return;
  std::string begin = SubkeyPrefix(pdb, key, old.version, 0);
  std::string end = SubkeyPrefix(pdb, key, old.version + 1, 0);
  if (old.type == RedisType::kZset) batch_.NoteDeadRange(ColumnFamily::kZsetScore, begin, end);
  batch_.NoteDeadRange(ColumnFamily::kSubkey, std::move(begin), std::move(end));
}

void Context::Write(int db, std::string_view key, const Metadata& meta, const KeyState& old) {
  uint8_t pdb = keyspace_->Physical(db);
  // A write that leaves the key's metadata as it was (a field or member overwritten, a score
  // moved, LSET, a string set to the value and expiry it has) puts no entry: one insert into
  // `metadata` (and its expiry's two into `expire`) fewer. The key still counts as modified for
  // WATCH and blocked clients, as Redis's signalModifiedKey does for every write command.
  changes_++;
  if (old.live() && meta == old.meta) {
    touched_.Add(pdb, key);
    RememberWrite(pdb, key, meta);
    return;
  }
  if (!old.live()) {
    // As Redis's write lookup deletes an expired key before the command creates it anew.
    if (old.present) {
      Notify(notify::kExpired, "expired", db, key);
      if (effects_.capturing()) effects_.AddEffect(db, {"DEL", std::string(key)});
    }
    Notify(notify::kNew, "new", db, key);
    keyspace_->access_->Created(pdb, key, now_ms_);
  }
  if (old.present) {
    Retire(pdb, key, old.meta);
    if (meta.version != old.meta.version || meta.type != old.meta.type) {
      NoteEndedIncarnation(pdb, key, old.meta);
    }
  } else if (meta.expire_ms != 0) {
    RetireOrphanedExpiry(pdb, key, meta.expire_ms);
  }
  Register(pdb, key, meta);
  meta.EncodeTo(&encoded_metadata_);
  batch_.Put(ColumnFamily::kMetadata, EncodeMetadataKey(pdb, key), encoded_metadata_);
  if (encoded_metadata_.capacity() > 4096) encoded_metadata_ = std::string();
  touched_.Add(pdb, key);
  RememberWrite(pdb, key, meta);
}

const std::string& Context::EncodeMetadataKey(uint8_t pdb, std::string_view key) {
  // A huge key's buffer is kept only until the next key.
  if (metadata_key_.capacity() > 4096) metadata_key_ = std::string();
  metadata_key_.clear();
  AppendMetadataKey(&metadata_key_, pdb, key);
  return metadata_key_;
}

void Context::RememberWrite(uint8_t pdb, std::string_view key, const Metadata& meta) {
  // Only collections: a string's value would be copied, and a string key is seldom written
  // twice in one group.
  last_write_.epoch = 0;
  if (meta.IsCollection()) {
    last_write_.pdb = pdb;
    last_write_.key.assign(key);
    last_write_.meta = meta;
    last_write_.epoch = batch_.metadata_epoch();
  }
}

void Context::WriteCollection(int db, std::string_view key, const Metadata& meta,
                              const KeyState& old) {
  if (meta.size == 0) {
    Delete(db, key, old);
  } else {
    Write(db, key, meta, old);
  }
}

void Context::Delete(int db, std::string_view key, const KeyState& old) {
  if (!old.present) return;
  if (!old.expired) changes_++;
  RemoveEntry(db, key, old);
  touched_.Add(keyspace_->Physical(db), key);
}

void Context::DeleteExpired(int db, std::string_view key, const KeyState& old) {
  if (old.present) RemoveEntry(db, key, old);
}

void Context::RemoveEntry(int db, std::string_view key, const KeyState& old) {
  if (old.expired) {
    Notify(notify::kExpired, "expired", db, key);
    // Redis's replicas keep expired keys until their master deletes them.
    if (effects_.capturing()) effects_.AddEffect(db, {"DEL", std::string(key)});
  }
  uint8_t pdb = keyspace_->Physical(db);
  Retire(pdb, key, old.meta);
  NoteEndedIncarnation(pdb, key, old.meta);
  batch_.Delete(ColumnFamily::kMetadata, EncodeMetadataKey(pdb, key));
}

void Context::Discard() {
  batch_.Clear();
  key_deltas_.fill(0);
  expire_deltas_.fill(0);
  touched_.clear();
  changes_taken_ = 0;
  lazily_expired_.clear();
  found_expired_.clear();
  after_commit_.clear();  // a discarded PUBLISH is not delivered either
  effects_.Clear();
  changes_committed_ = changes_;
}

void Context::PublishEffects() {
  if (changes_ != changes_committed_) {
    keyspace_->changes_since_save_.fetch_add(static_cast<int64_t>(changes_ - changes_committed_),
                                             std::memory_order_relaxed);
    changes_committed_ = changes_;
  }
  Keyspace::EffectsListener* listener = keyspace_->effects_listener_;
  if (effects_.has_closed_units() && listener != nullptr) {
    listener->OnEffects(effects_.TakeClosedUnits());
  }
}

Status Context::Commit() {
  constexpr std::array<int64_t, kMaxDatabases> kNoDeltas{};
  // A command that only read (most of them) has nothing to write, count, touch or run.
  if (batch_.empty() && touched_.empty() && after_commit_.empty() && key_deltas_ == kNoDeltas &&
      expire_deltas_ == kNoDeltas) {
    rocksdb::Status s = batch_.Commit();  // forgets what the reads left (read-ahead, pop runs)
    if (!s.ok()) {
      effects_.Clear();
      return Status::IOError(s.ToString());
    }
    // A self-committing command (FLUSHALL) or PUBLISH leaves effects without a batch.
    PublishEffects();
    return Status::OK();
  }
  for (int i = 0; i < kMaxDatabases; i++) {
    uint8_t pdb = static_cast<uint8_t>(i);
    if (key_deltas_[i] != 0)
      batch_.Merge(ColumnFamily::kCounters, KeysCounterKey(pdb), EncodeCounter(key_deltas_[i]));
    if (expire_deltas_[i] != 0)
      batch_.Merge(ColumnFamily::kCounters, ExpiresCounterKey(pdb),
                   EncodeCounter(expire_deltas_[i]));
  }
  bool writes = !batch_.empty();
  rocksdb::Status s = batch_.Commit();
  if (!s.ok()) {
    key_deltas_.fill(0);
    expire_deltas_.fill(0);
    touched_.clear();
    changes_taken_ = 0;
    after_commit_.clear();
    effects_.Clear();
    return Status::RedisError("ERR write failed: " + s.ToString());
  }
  wrote_ = wrote_ || writes;
  keyspace_->ApplyCounts(key_deltas_, expire_deltas_);
  key_deltas_.fill(0);
  expire_deltas_.fill(0);
  Keyspace::TouchListener* listener = keyspace_->touch_listener_;
  if (keyspace_->watches_.any() || (listener != nullptr && listener->Listening())) {
    touched_.ForEachDistinct([&](uint8_t pdb, std::string_view key) {
      keyspace_->watches_.Touch(pdb, key);
      if (listener != nullptr) listener->OnKeyTouched(pdb, key);
    });
  }
  touched_.clear();
  changes_taken_ = 0;
  lazily_expired_.clear();
  PublishEffects();
  std::vector<std::function<void()>> after;
  after.swap(after_commit_);
  for (auto& fn : after) fn();
  return Status::OK();
}

}  // namespace basalt
