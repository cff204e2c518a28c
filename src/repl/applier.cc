#include "repl/applier.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <shared_mutex>

#include "common/coding.h"
#include "types/metadata.h"

namespace basalt {

namespace {

constexpr int64_t kLockSliceMs = 100;

// The user key inside a `subkey`/`zset_score` key: db(1) | len(4) | user key | ...
bool ParseSubkeyUserKey(std::string_view key, uint8_t* db, std::string_view* user_key) {
  return GetFixed8(&key, db) && GetLengthPrefixed(&key, user_key);
}

// Counter puts that change what a whole database means (SWAPDB's map, FLUSHDB's epoch).
bool IsDatabaseWideCounter(std::string_view key) {
  return key == kDbMapKey || key.substr(0, 5) == "epoch";
}

}  // namespace

bool LockKeyspaceExclusive(Keyspace* keyspace, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    if (keyspace->exclusive().try_lock_for_ms(kLockSliceMs)) return true;
  }
  return false;
}

bool LockKeyspaceShared(Keyspace* keyspace, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    if (keyspace->exclusive().try_lock_shared_for_ms(kLockSliceMs)) return true;
  }
  return false;
}

// Copies each operation of a master batch into the applier's group and records what it
// touches: keys to lock and notify, counters to refresh, events to deliver.
class GroupCollector : public rocksdb::WriteBatch::Handler {
 public:
  explicit GroupCollector(BatchApplier* applier) : a_(applier) {
    Engine* engine = a_->keyspace_->engine();
    for (int i = 0; i < kColumnFamilyCount; i++)
      ids_[i] = engine->cf(static_cast<ColumnFamily>(i))->GetID();
  }

  rocksdb::Status PutCF(uint32_t id, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    ColumnFamily cf;
    rocksdb::Status s = Resolve(id, &cf);
    if (!s.ok()) return s;
    Note(cf, key, true);
    NoteEvent(cf, false, key, value);
    NoteCounter(cf, Keyspace::CounterWrite::kPut, key, value);
    return a_->group_.Put(Handle(cf), key, value);
  }

  rocksdb::Status DeleteCF(uint32_t id, const rocksdb::Slice& key) override {
    ColumnFamily cf;
    rocksdb::Status s = Resolve(id, &cf);
    if (!s.ok()) return s;
    Note(cf, key, true);
    NoteCounter(cf, Keyspace::CounterWrite::kDelete, key, rocksdb::Slice());
    NoteEvent(cf, true, key, rocksdb::Slice());
    return a_->group_.Delete(Handle(cf), key);
  }

  rocksdb::Status SingleDeleteCF(uint32_t id, const rocksdb::Slice& key) override {
    ColumnFamily cf;
    rocksdb::Status s = Resolve(id, &cf);
    if (!s.ok()) return s;
    Note(cf, key, true);
    NoteCounter(cf, Keyspace::CounterWrite::kDelete, key, rocksdb::Slice());
    NoteEvent(cf, true, key, rocksdb::Slice());
    return a_->group_.SingleDelete(Handle(cf), key);
  }

  rocksdb::Status MergeCF(uint32_t id, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
    ColumnFamily cf;
    rocksdb::Status s = Resolve(id, &cf);
    if (!s.ok()) return s;
    Note(cf, key, false);
    NoteCounter(cf, Keyspace::CounterWrite::kMerge, key, value);
    return a_->group_.Merge(Handle(cf), key, value);
  }

  rocksdb::Status DeleteRangeCF(uint32_t id, const rocksdb::Slice& begin,
                                const rocksdb::Slice& end) override {
    ColumnFamily cf;
    rocksdb::Status s = Resolve(id, &cf);
    if (!s.ok()) return s;
    a_->needs_exclusive_ = true;
    if (cf == ColumnFamily::kMetadata && !begin.empty()) {
      // Ranges are whole databases: [db, db + 1).
      uint8_t first = static_cast<uint8_t>(begin[0]);
      uint8_t last = end.empty() ? first : static_cast<uint8_t>(end[0]);
      for (int db = first; db <= last && db < kMaxDatabases; db++)
        a_->touched_databases_.insert(static_cast<uint8_t>(db));
    }
    return a_->group_.DeleteRange(Handle(cf), begin, end);
  }

  // The master's dead-range notes (Engine::EncodeDeadRangeNote): this replica's pops and
  // deletions write nothing over the entries they leave dead either, so its reclaimers need the
  // same hints. The blob stays in the group for this replica's own replicas.
  void LogData(const rocksdb::Slice& blob) override {
    if (!a_->group_.PutLogData(blob).ok()) return;  // fails only past a batch size limit
    BatchApplier::DeadRange range;
    if (Engine::DecodeDeadRangeNote(std::string_view(blob.data(), blob.size()), &range.cf,
                                    &range.begin, &range.end)) {
      a_->dead_ranges_.push_back(std::move(range));
    }
  }

 private:
  rocksdb::Status Resolve(uint32_t id, ColumnFamily* cf) const {
    for (int i = 0; i < kColumnFamilyCount; i++) {
      if (ids_[i] == id) {
        *cf = static_cast<ColumnFamily>(i);
        return rocksdb::Status::OK();
      }
    }
    return rocksdb::Status::InvalidArgument("batch names an unknown column family id " +
                                            std::to_string(id));
  }

  rocksdb::ColumnFamilyHandle* Handle(ColumnFamily cf) const {
    return a_->keyspace_->engine()->cf(cf);
  }

  void LockKey(uint8_t db, std::string_view key) {
    a_->stripes_.push_back(a_->keyspace_->locks().StripeOf(db, key));
  }

  void Note(ColumnFamily cf, const rocksdb::Slice& raw_key, bool replaces) {
    std::string_view key(raw_key.data(), raw_key.size());
    uint8_t db;
    std::string_view user_key;
    int64_t expire_ms;
    switch (cf) {
      case ColumnFamily::kMetadata:
        if (ParseMetadataKey(key, &db, &user_key)) {
          LockKey(db, user_key);
          a_->touched_keys_.emplace(db, std::string(user_key));
        }
        break;
      case ColumnFamily::kSubkey:
      case ColumnFamily::kZsetScore:
      case ColumnFamily::kLargeValue:
        if (ParseSubkeyUserKey(key, &db, &user_key)) LockKey(db, user_key);
        break;
      case ColumnFamily::kExpire:
        if (ParseExpireKey(key, &expire_ms, &db, &user_key)) LockKey(db, user_key);
        break;
      case ColumnFamily::kCounters:
        if (replaces && IsDatabaseWideCounter(key)) a_->needs_exclusive_ = true;
        break;
      default:
        break;
    }
  }

  void NoteCounter(ColumnFamily cf, Keyspace::CounterWrite::Kind kind, const rocksdb::Slice& key,
                   const rocksdb::Slice& value) {
    // A chained master's own position is not a counter.
    if (cf != ColumnFamily::kCounters || key == rocksdb::Slice(kReplicaPositionKey)) return;
    a_->counter_writes_.push_back({kind, key.ToString(), value.ToString()});
  }

  void NoteEvent(ColumnFamily cf, bool deleted, const rocksdb::Slice& key,
                 const rocksdb::Slice& value) {
    if (cf != ColumnFamily::kPubsub && cf != ColumnFamily::kPropagate) return;
    a_->events_.push_back({cf, deleted, key.ToString(), value.ToString()});
  }

  BatchApplier* a_;
  std::array<uint32_t, kColumnFamilyCount> ids_{};
};

BatchApplier::BatchApplier(Keyspace* keyspace) : keyspace_(keyspace) {}

void BatchApplier::SetEventHandler(ColumnFamily cf, ReplicationEventHandler on_put,
                                   ReplicationDeleteHandler on_delete, EventTiming timing) {
  put_handlers_[static_cast<int>(cf)] = std::move(on_put);
  delete_handlers_[static_cast<int>(cf)] = std::move(on_delete);
  event_timings_[static_cast<int>(cf)] = timing;
}

void BatchApplier::DeliverEvents(EventTiming timing) {
  for (const Event& e : events_) {
    int i = static_cast<int>(e.cf);
    if (event_timings_[i] != timing) continue;
    if (e.deleted && delete_handlers_[i]) delete_handlers_[i](e.key);
    if (!e.deleted && put_handlers_[i]) put_handlers_[i](e.key, e.value);
  }
}

void BatchApplier::Reset() {
  group_.Clear();
  batches_ = 0;
  needs_exclusive_ = false;
  stripes_.clear();
  touched_keys_.clear();
  touched_databases_.clear();
  counter_writes_.clear();
  events_.clear();
  dead_ranges_.clear();
}

StatusOr<uint32_t> BatchApplier::Add(std::string_view data) {
  if (data.size() < 12) {
    Reset();
    return Status::InvalidArgument("batch shorter than its header");
  }
  rocksdb::WriteBatch batch{std::string(data)};
  GroupCollector collector(this);
  rocksdb::Status s = batch.Iterate(&collector);
  if (!s.ok()) {
    Reset();
    return Status::InvalidArgument("undecodable batch: " + s.ToString());
  }
  batches_++;
  return batch.Count();
}

Status BatchApplier::Commit(const ReplicaPosition& position, const std::atomic<bool>& stop) {
  rocksdb::Status put = group_.Put(keyspace_->engine()->cf(ColumnFamily::kCounters),
                                   kReplicaPositionKey, position.Encode());
  if (!put.ok()) {
    Reset();
    return Status::IOError(put.ToString());
  }
  DeliverEvents(EventTiming::kBeforeWrite);
  std::unique_lock<WriterPreferringMutex> exclusive(keyspace_->exclusive(), std::defer_lock);
  std::shared_lock<WriterPreferringMutex> shared(keyspace_->exclusive(), std::defer_lock);
  KeyLockGuard keys;
  if (needs_exclusive_) {
    if (!LockKeyspaceExclusive(keyspace_, stop)) {
      Reset();
      return Status::Busy("stopping");
    }
    exclusive = std::unique_lock<WriterPreferringMutex>(keyspace_->exclusive(), std::adopt_lock);
  } else {
    if (!LockKeyspaceShared(keyspace_, stop)) {
      Reset();
      return Status::Busy("stopping");
    }
    shared = std::shared_lock<WriterPreferringMutex>(keyspace_->exclusive(), std::adopt_lock);
    std::sort(stripes_.begin(), stripes_.end());
    stripes_.erase(std::unique(stripes_.begin(), stripes_.end()), stripes_.end());
    keys = KeyLockGuard(&keyspace_->locks(), std::move(stripes_), true);
  }
  rocksdb::Status s = keyspace_->engine()->Write(&group_);
  if (!s.ok()) {
    Reset();
    return Status::IOError("applying replicated writes: " + s.ToString());
  }
  for (DeadRange& range : dead_ranges_) {
    keyspace_->engine()->NoteDeadRange(range.cf, std::move(range.begin), std::move(range.end));
  }
  keyspace_->ApplyCounterWrites(counter_writes_);
  keyspace_->NoteUntrackedMemberWrites();
  for (uint8_t db : touched_databases_) keyspace_->NotifyDatabaseChanged(db);
  // A master's FLUSHDB: what it left dead in this replica's memtables goes as on the master,
  // and tracking clients hear of it once, however many databases it emptied.
  if (!touched_databases_.empty()) {
    keyspace_->FlushEmptiedMemtables();
    keyspace_->InvalidateAllTracked();
  }
  for (const auto& [db, key] : touched_keys_) keyspace_->NotifyKeyChanged(db, key);
  keys.Release();
  if (shared.owns_lock()) shared.unlock();
  if (exclusive.owns_lock()) exclusive.unlock();

  DeliverEvents(EventTiming::kAfterWrite);
  Reset();
  return Status::OK();
}

Status BatchApplier::WritePosition(const std::optional<ReplicaPosition>& position) {
  rocksdb::WriteBatch batch;
  rocksdb::ColumnFamilyHandle* counters = keyspace_->engine()->cf(ColumnFamily::kCounters);
  rocksdb::Status s = position ? batch.Put(counters, kReplicaPositionKey, position->Encode())
                               : batch.Delete(counters, kReplicaPositionKey);
  if (s.ok()) s = keyspace_->engine()->Write(&batch);
  return s.ok() ? Status::OK()
                : Status::IOError("writing the replication position: " + s.ToString());
}

}  // namespace basalt
