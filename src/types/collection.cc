#include "types/collection.h"

#include "common/coding.h"
#include "types/zset.h"

namespace basalt {

Metadata NewCollection(RedisType type) {
  Metadata meta;
  meta.type = type;
  meta.version = NewVersion();
  meta.size = 0;
  return meta;
}

MemberFilterRef MemberFilterOf(Context& ctx, uint64_t version) {
  return MemberFilterRef(ctx.keyspace()->member_filters(), version, false);
}

StatusOr<KeyState> LookupCollection(Context& ctx, int db, std::string_view key, RedisType type) {
  auto state = ctx.Lookup(db, key);
  if (!state.ok()) return state;
  if (state->live() && state->meta.type != type) return Status::RedisError(kWrongTypeError);
  return state;
}

std::string MemberKey(Context& ctx, int db, std::string_view key, uint64_t version,
                      std::string_view member) {
  std::string out = SubkeyPrefix(ctx.keyspace()->Physical(db), key, version, member.size());
  out.append(member);
  return out;
}

std::string MemberKey(Context& ctx, int db, std::string_view key, uint64_t version,
                      std::string_view member_head, std::string_view member_tail) {
  std::string out = SubkeyPrefix(ctx.keyspace()->Physical(db), key, version,
                                 member_head.size() + member_tail.size());
  out.append(member_head);
  out.append(member_tail);
  return out;
}

MemberIterator::MemberIterator(Context& ctx, ColumnFamily cf, int db, std::string_view key,
                               uint64_t version)
    : prefix_(SubkeyPrefix(ctx.keyspace()->Physical(db), key, version)) {
  // The prefix ends with the 8-byte version; the next version is the exclusive upper bound.
  upper_ = SubkeyPrefix(ctx.keyspace()->Physical(db), key, version + 1);
  OpenThroughBatch(ctx, cf);
}

MemberIterator::MemberIterator(Context& ctx, ColumnFamily cf, int db, std::string_view key,
                               uint64_t version, std::string_view member_limit)
    : prefix_(SubkeyPrefix(ctx.keyspace()->Physical(db), key, version)) {
  upper_ = prefix_;
  upper_.append(member_limit);
  OpenThroughBatch(ctx, cf);
}

MemberIterator::MemberIterator(Context& ctx, ColumnFamily cf, int db, std::string_view key,
                               uint64_t version, std::string_view member_floor,
                               std::string_view member_limit)
    : prefix_(SubkeyPrefix(ctx.keyspace()->Physical(db), key, version)) {
  lower_ = prefix_;
  lower_.append(member_floor);
  upper_ = prefix_;
  upper_.append(member_limit);
  OpenThroughBatch(ctx, cf);
}

void MemberIterator::OpenThroughBatch(Context& ctx, ColumnFamily cf) {
  upper_slice_ = rocksdb::Slice(upper_);
  lower_slice_ = rocksdb::Slice(lower_.empty() ? prefix_ : lower_);
  options_.iterate_upper_bound = &upper_slice_;
  options_.iterate_lower_bound = &lower_slice_;
  owned_ = ctx.batch().NewIterator(cf, &options_);
  it_ = owned_.get();
}

MemberIterator::MemberIterator(Context& ctx, DatabaseOnly, int db, std::string_view key,
                               uint64_t version)
    : prefix_(SubkeyPrefix(ctx.keyspace()->Physical(db), key, version)),
      upper_(SubkeyPrefix(ctx.keyspace()->Physical(db), key, version + 1)),
      upper_slice_(upper_),
      lower_slice_(prefix_),
      held_by_(&ctx.batch()),
      it_(held_by_->HeldIterator(lower_slice_, upper_slice_)) {}

bool MemberIterator::MayBeStale() const {
  return held_by_ != nullptr && held_by_->MayHaveWritten(it_->key());
}

void MemberIterator::Seek(std::string_view member_start) {
  if (held_by_ != nullptr) held_by_->NarrowHeldIterator(nullptr);
  std::string target = prefix_;
  target.append(member_start);
  it_->Seek(target);
  if (popped_from_ != nullptr) StepOverPopped();
}

void MemberIterator::SkipPoppedMembers(Context& ctx, int db, std::string_view key,
                                       const Metadata& meta) {
  // A sorted set never popped has no such entries (ZsetMemberLive would answer at once).
  if (meta.type != RedisType::kZset || !meta.zset.Marked()) return;
  ctx_ = &ctx;
  db_ = db;
  key_ = key;
  popped_from_ = &meta;
}

void MemberIterator::StepOverPopped() {
  for (; check_.ok() && Valid(); it_->Next()) {
    StatusOr<bool> live = ZsetMemberLive(*ctx_, db_, key_, *popped_from_, member(), value());
    if (!live.ok()) check_ = live.status();
    if (!live.ok() || *live) return;
  }
}

void MemberIterator::SeekBelow(std::string_view member_start, std::string_view member_limit) {
  if (held_by_ == nullptr) return Seek(member_start);
  std::string limit = prefix_;
  limit.append(member_limit);
  rocksdb::Slice bound(limit);
  held_by_->NarrowHeldIterator(&bound);
  std::string target = prefix_;
  target.append(member_start);
  it_->Seek(target);
}

void MemberIterator::SeekToLast(std::string_view member_end) {
  if (held_by_ != nullptr) held_by_->NarrowHeldIterator(nullptr);
  // Not it_->SeekToLast(): over a batch, RocksDB's write-batch iterator positions its delta side
  // on the batch's last entry even when that lies past the upper bound (another key written by
  // the same transaction). SeekForPrev on the bound itself is positioned correctly on both sides.
  if (member_end.empty()) {
    it_->SeekForPrev(upper_);
    if (it_->Valid() && it_->key().compare(upper_slice_) >= 0) it_->Prev();
    return;
  }
  std::string target = prefix_;
  target.append(member_end);
  it_->SeekForPrev(target);
}

bool MemberIterator::Valid() const {
  // The bounds are also checked here: the batch side of the iterator does not honour them in
  // every direction, and an entry outside this incarnation must never be taken for a member.
  if (!check_.ok() || !it_->Valid()) return false;
  const rocksdb::Slice k = it_->key();
  return k.starts_with(prefix_) && k.compare(lower_slice_) >= 0 && k.compare(upper_slice_) < 0;
}

std::string_view MemberIterator::member() const {
  rocksdb::Slice k = it_->key();
  return std::string_view(k.data() + prefix_.size(), k.size() - prefix_.size());
}

Status MemberIterator::status() const {
  if (!check_.ok()) return check_;
  if (it_->status().ok()) return Status::OK();
  return Status::IOError(it_->status().ToString());
}

StatusOr<Metadata> CopyMembers(Context& ctx, int src_db, std::string_view src_key,
                               const Metadata& meta, int dst_db, std::string_view dst_key) {
  Metadata copy = meta;
  copy.version = NewVersion();
  for (ColumnFamily cf :
       {ColumnFamily::kSubkey, ColumnFamily::kZsetScore, ColumnFamily::kLargeValue}) {
    if (cf == ColumnFamily::kZsetScore && meta.type != RedisType::kZset) continue;
    if (cf == ColumnFamily::kLargeValue && meta.type != RedisType::kHash) continue;
    MemberIterator it(ctx, cf, src_db, src_key, meta.version);
    // A list's elements outside [head, tail) are dead (types/list.h): only the live ones go.
    std::string first, end;
    if (meta.type == RedisType::kList) {
      PutFixed64(&first, meta.list_head);
      PutFixed64(&end, meta.list_tail);
    }
    // Collect first: writing into the batch while iterating over it is not allowed.
    std::vector<std::pair<std::string, std::string>> entries;
    // So are a sorted set's popped members that kept their `subkey` entries (types/zset.h).
    if (cf == ColumnFamily::kSubkey) it.SkipPoppedMembers(ctx, src_db, src_key, meta);
    for (it.Seek(first); it.Valid() && (end.empty() || it.member() < end); it.Next()) {
      entries.emplace_back(it.member(), it.value());
    }
    Status s = it.status();
    if (!s.ok()) return s;
    for (const auto& [member, value] : entries) {
      ctx.batch().Put(cf, MemberKey(ctx, dst_db, dst_key, copy.version, member), value);
    }
  }
  return copy;
}

}  // namespace basalt
