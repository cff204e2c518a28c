#include "types/set.h"

#include <atomic>

#include "common/hash.h"
#include "types/set_removals.h"

namespace basalt {

namespace {

// Per stripe of sets, by the hash of a set's subkey prefix (types/set_removals.h).
constexpr size_t kRemovalStripes = 4096;
std::atomic<uint64_t> removal_counts[kRemovalStripes];
std::atomic<uint64_t> untracked_writes{0};

std::atomic<uint64_t>& RemovalCount(std::string_view prefix) {
  return removal_counts[HashBytes(prefix) % kRemovalStripes];
}

}  // namespace

uint64_t SetRemovals(std::string_view prefix) {
  return RemovalCount(prefix).load();
}

uint64_t UntrackedSetWrites() {
  return untracked_writes.load();
}

void NoteUntrackedSetWrites() {
  untracked_writes.fetch_add(1);
}

Status GetMember(Context& ctx, int db, std::string_view key, uint64_t version,
                 std::string_view member, std::string* value) {
  rocksdb::Status s =
      ctx.batch().Get(ColumnFamily::kSubkey, MemberKey(ctx, db, key, version, member), value);
  if (s.IsNotFound()) return Status::NotFound();
  if (!s.ok()) return Status::IOError(s.ToString());
  return Status::OK();
}

StatusOr<std::vector<Member>> ReadMembers(Context& ctx, int db, std::string_view key,
                                          const Metadata& meta) {
  std::vector<Member> out;
  out.reserve(meta.size);
  MemberIterator it(ctx, ColumnFamily::kSubkey, db, key, meta.version);
  it.SkipPoppedMembers(ctx, db, key, meta);
  for (it.Seek(); it.Valid(); it.Next()) {
    out.push_back({std::string(it.member()), std::string(it.value())});
  }
  Status s = it.status();
  if (!s.ok()) return s;
  return out;
}

CollectionWriter::CollectionWriter(Context& ctx, int db, std::string_view key, const KeyState& old,
                                   Metadata meta, bool fresh)
    : ctx_(ctx),
      db_(db),
      key_(key),
      old_(old),
      meta_(std::move(meta)),
      filter_(ctx.keyspace()->member_filters(), meta_.version, fresh) {}

CollectionWriter::CollectionWriter(Context& ctx, int db, std::string_view key, const KeyState& old,
                                   RedisType type)
    : CollectionWriter(ctx, db, key, old, old.live() ? old.meta : NewCollection(type),
                       !old.live()) {}

CollectionWriter CollectionWriter::Replace(Context& ctx, int db, std::string_view key,
                                           const KeyState& old, RedisType type) {
  CollectionWriter w(ctx, db, key, old, NewCollection(type), true);
  w.changed_ = true;
  return w;
}

CollectionWriter CollectionWriter::Reincarnate(Context& ctx, int db, std::string_view key,
                                               const KeyState& old, RedisType type) {
  CollectionWriter w = Replace(ctx, db, key, old, type);
  w.meta_.expire_ms = old.meta.expire_ms;
  w.meta_.set_floor = old.meta.set_floor;
  return w;
}

void CollectionWriter::Put(std::string_view member, std::string_view value, bool is_new) {
  filter_.Note(member);
  ctx_.batch().Put(ColumnFamily::kSubkey, MemberKey(ctx_, db_, key_, meta_.version, member), value);
  if (is_new) meta_.size++;
  changed_ = true;
}

void CollectionWriter::Remove(std::string_view member) {
  std::string member_key = MemberKey(ctx_, db_, key_, meta_.version, member);
  if (meta_.type == RedisType::kSet) {
    RemovalCount(std::string_view(member_key).substr(0, member_key.size() - member.size()))
        .fetch_add(1);
  }
  ctx_.batch().Delete(ColumnFamily::kSubkey, member_key);
  meta_.size--;
  changed_ = true;
}

void CollectionWriter::Finish() {
  if (!changed_) return;
  ctx_.WriteCollection(db_, key_, meta_, old_);
  changed_ = false;
}

}  // namespace basalt
