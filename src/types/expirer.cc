#include "types/expirer.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

#include "common/clock.h"
#include "common/coding.h"

namespace basalt {

namespace {
constexpr size_t kSliceSize = 256;
constexpr int kMaxSlicesPerRound = 64;
}  // namespace

ActiveExpirer::ActiveExpirer(Keyspace* keyspace, Config* config)
    : keyspace_(keyspace), config_(config) {}

void ActiveExpirer::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void ActiveExpirer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ActiveExpirer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    // `hz` rounds a second, clamped as Redis clamps it.
    int64_t hz = std::clamp<int64_t>(config_->GetInt("hz"), 1, 500);
    cv_.wait_for(lock, std::chrono::milliseconds(1000 / hz));
    if (stopping_) break;
    if (paused_ || rounds_paused_ || UnixMillis() < paused_until_ms_ ||
        !config_->GetBool("active-expire")) {
      continue;
    }
    lock.unlock();
    RunOnce();
    lock.lock();
  }
}

int64_t ActiveExpirer::RunOnce() {
  // Entries committed after a round's scan began can sort below the low-water mark (a long
  // EXEC registers expiries computed from its start time), so every tenth round rescans from
  // the beginning; the rounds in between start past the tombstones of consumed entries.
  if (++rounds_ % 10 == 0) low_water_.clear();
  int64_t deleted = 0;
  bool more = true;
  for (int i = 0; i < kMaxSlicesPerRound && more; i++) {
    std::string resume = low_water_;
    deleted += ProcessSlice(&resume, &more);
    low_water_ = resume;
  }
  expired_total_ += deleted;
  return deleted;
}

// Consumes up to kSliceSize due entries of the expiry index starting at *resume_from.
int64_t ActiveExpirer::ProcessSlice(std::string* resume_from, bool* more) {
  struct Due {
    std::string index_key;
    int64_t expire_ms;
    uint8_t pdb;
    std::string key;
    uint64_t epoch;
  };
  std::shared_lock<WriterPreferringMutex> shared(keyspace_->exclusive());
  if (paused_ || UnixMillis() < paused_until_ms_) {
    *more = false;
    return 0;
  }
  Engine* engine = keyspace_->engine();
  int64_t now = UnixMillis();
  std::string upper = ExpireKey(now + 1, 0, "");
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper_slice(upper);
  rocksdb::Slice lower_slice(*resume_from);
  ro.iterate_upper_bound = &upper_slice;
  if (!resume_from->empty()) ro.iterate_lower_bound = &lower_slice;
  std::vector<Due> due;
  {
    auto it = engine->NewIterator(ColumnFamily::kExpire, ro);
    for (it->Seek(*resume_from); it->Valid() && due.size() < kSliceSize; it->Next()) {
      Due d;
      std::string_view user_key;
      std::string_view k(it->key().data(), it->key().size());
      if (!ParseExpireKey(k, &d.expire_ms, &d.pdb, &user_key)) continue;
      d.index_key = std::string(k);
      d.key = std::string(user_key);
      d.epoch = it->value().size() == 8 ? DecodeFixed64(it->value().data()) : 0;
      due.push_back(std::move(d));
    }
    *more = due.size() == kSliceSize;
  }
  if (due.empty()) return 0;

  std::vector<size_t> stripes;
  for (const auto& d : due) stripes.push_back(keyspace_->locks().StripeOf(d.pdb, d.key));
  KeyLockGuard guard(&keyspace_->locks(), std::move(stripes), true);

  Context ctx(keyspace_);
  int64_t deleted = 0;
  // Client-side caching hears of the deleted keys once they are gone.
  Keyspace::InvalidationListener* tracking = keyspace_->invalidation_listener();
  if (tracking != nullptr && !tracking->Listening()) tracking = nullptr;
  std::vector<std::string_view> deleted_keys;
  for (const auto& d : due) {
    // A writer may have retired this key between the scan and the lock: then it also removed
    // the index entry, and the key's count is no longer ours to drop.
    std::string unused;
    if (!ctx.batch().Get(ColumnFamily::kExpire, d.index_key, &unused).ok()) continue;
    ctx.batch().Delete(ColumnFamily::kExpire, d.index_key);
    if (d.epoch != keyspace_->Epoch(d.pdb)) continue;  // its database was flushed since
    std::string value;
    std::string meta_key = MetadataKey(d.pdb, d.key);
    rocksdb::Status s = ctx.batch().Get(ColumnFamily::kMetadata, meta_key, &value);
    Metadata meta;
    bool same_incarnation = s.ok() && meta.Decode(value) && meta.expire_ms == d.expire_ms;
    // Whether the entry is still there or a compaction filter already dropped it, this index
    // entry stands for one counted key that nobody has retired yet.
    ctx.key_deltas_[d.pdb]--;
    ctx.expire_deltas_[d.pdb]--;
    if (same_incarnation) {
      ctx.NoteEndedIncarnation(d.pdb, d.key, meta);
      // No change for WATCH, as Context::DeleteExpired.
      ctx.batch().Delete(ColumnFamily::kMetadata, meta_key);
      ctx.Notify(notify::kExpired, "expired", keyspace_->Logical(d.pdb), d.key);
      if (ctx.effects_.capturing())
        ctx.effects_.AddEffect(keyspace_->Logical(d.pdb), {"DEL", d.key});
      if (tracking != nullptr) deleted_keys.push_back(d.key);
      deleted++;
    }
  }
  Status s = ctx.Commit();
  if (!s.ok()) {
    LOG(WARNING) << "active expiry: " << s.message();
    *more = false;
    return 0;
  }
  if (!deleted_keys.empty()) tracking->OnKeysChanged(deleted_keys);
  *resume_from = due.back().index_key;
  resume_from->push_back('\0');  // strictly after the last consumed entry
  return deleted;
}

int64_t ActiveExpirer::ExpireFound(const TouchedKeys& keys) {
  std::vector<std::pair<uint8_t, std::string>> found;
  keys.ForEachDistinct([&](uint8_t pdb, std::string_view key) { found.emplace_back(pdb, key); });
  if (found.empty()) return 0;
  std::shared_lock<WriterPreferringMutex> shared(keyspace_->exclusive());
  if (paused_ || UnixMillis() < paused_until_ms_) return 0;
  std::vector<size_t> stripes;
  for (const auto& [pdb, key] : found) stripes.push_back(keyspace_->locks().StripeOf(pdb, key));
  KeyLockGuard guard(&keyspace_->locks(), std::move(stripes), true);
  Context ctx(keyspace_);
  Keyspace::InvalidationListener* tracking = keyspace_->invalidation_listener();
  if (tracking != nullptr && !tracking->Listening()) tracking = nullptr;
  std::vector<std::string_view> deleted_keys;
  for (const auto& [pdb, key] : found) {
    const int db = keyspace_->Logical(pdb);
    // Written, deleted or expired by someone else since the command looked: nothing to do.
    auto state = ctx.Peek(db, key);
    if (!state.ok() || !state->present || !state->expired) continue;
    ctx.DeleteExpired(db, key, *state);
    deleted_keys.push_back(key);
  }
  if (deleted_keys.empty()) return 0;
  Status s = ctx.Commit();
  if (!s.ok()) {
    LOG(WARNING) << "lazy expiry: " << s.message();
    return 0;
  }
  if (tracking != nullptr) tracking->OnKeysChanged(deleted_keys);
  const auto deleted = static_cast<int64_t>(deleted_keys.size());
  expired_total_ += deleted;
  return deleted;
}

}  // namespace basalt
