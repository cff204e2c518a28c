#include "types/hash.h"

#include "common/coding.h"

namespace basalt {

namespace {

constexpr char kInlineTag = 'i';
constexpr char kExternalTag = 'x';

std::string InlineEntry(std::string_view value) {
  std::string out;
  out.reserve(1 + value.size());
  out.push_back(kInlineTag);
  out.append(value);
  return out;
}

std::string ExternalEntry(uint64_t length) {
  std::string out(1, kExternalTag);
  PutFixed64(&out, length);
  return out;
}

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound();
  return Status::IOError(s.ToString());
}

}  // namespace

bool DecodeFieldEntry(std::string_view stored, FieldEntry* out) {
  if (stored.empty()) return false;
  char tag = stored[0];
  stored.remove_prefix(1);
  if (tag == kInlineTag) {
    out->external = false;
    out->length = stored.size();
    out->inline_value = stored;
    return true;
  }
  out->external = true;
  out->inline_value = {};
  return tag == kExternalTag && GetFixed64(&stored, &out->length) && stored.empty();
}

Status GetFieldEntry(Context& ctx, int db, std::string_view key, uint64_t version,
                     std::string_view field, std::string* stored) {
  return FromRocks(
      ctx.batch().Get(ColumnFamily::kSubkey, MemberKey(ctx, db, key, version, field), stored));
}

Status ResolveFieldValue(Context& ctx, int db, std::string_view key, uint64_t version,
                         std::string_view field, std::string_view stored, std::string* value) {
  FieldEntry entry;
  if (!DecodeFieldEntry(stored, &entry)) return Status::IOError("corrupt hash field entry");
  if (!entry.external) {
    value->assign(entry.inline_value);
    return Status::OK();
  }
  Status s = FromRocks(
      ctx.batch().Get(ColumnFamily::kLargeValue, MemberKey(ctx, db, key, version, field), value));
  if (s.IsNotFound()) return Status::IOError("hash field value missing from large_value");
  return s;
}

Status GetFieldValue(Context& ctx, int db, std::string_view key, uint64_t version,
                     std::string_view field, std::string* value) {
  std::string stored;
  Status s = GetFieldEntry(ctx, db, key, version, field, &stored);
  if (!s.ok()) return s;
  return ResolveFieldValue(ctx, db, key, version, field, stored, value);
}

Status ForEachField(
    Context& ctx, int db, std::string_view key, const Metadata& meta, bool with_values,
    const std::function<bool(std::string_view field, std::string_view value)>& visit) {
  std::string value;
  MemberIterator it(ctx, ColumnFamily::kSubkey, db, key, meta.version);
  for (it.Seek(); it.Valid(); it.Next()) {
    if (with_values) {
      Status s = ResolveFieldValue(ctx, db, key, meta.version, it.member(), it.value(), &value);
      if (!s.ok()) return s;
    }
    if (!visit(it.member(), value)) return Status::OK();
  }
  return it.status();
}

StatusOr<std::vector<Member>> ReadFields(Context& ctx, int db, std::string_view key,
                                         const Metadata& meta, bool with_values) {
  std::vector<Member> out;
  out.reserve(meta.size);
  Status s = ForEachField(ctx, db, key, meta, with_values,
                          [&out](std::string_view field, std::string_view value) {
                            out.push_back({std::string(field), std::string(value)});
                            return true;
                          });
  if (!s.ok()) return s;
  return out;
}

HashWriter::HashWriter(Context& ctx, int db, std::string_view key, const KeyState& old)
    : ctx_(ctx), db_(db), key_(key), writer_(ctx, db, key, old, RedisType::kHash) {}

Status HashWriter::Find(std::string_view field, std::string* stored) {
  if (!writer_.MayHold(field)) return Status::NotFound();
  return GetFieldEntry(ctx_, db_, key_, writer_.version(), field, stored);
}

void HashWriter::DropLargeValue(std::string_view field, std::string_view old_stored) {
  FieldEntry entry;
  if (DecodeFieldEntry(old_stored, &entry) && entry.external) {
    ctx_.batch().Delete(ColumnFamily::kLargeValue,
                        MemberKey(ctx_, db_, key_, writer_.version(), field));
  }
}

void HashWriter::Put(std::string_view field, std::string_view value,
                     const std::string* old_stored) {
  if (value.size() >= kLargeFieldValue) {
    ctx_.batch().Put(ColumnFamily::kLargeValue,
                     MemberKey(ctx_, db_, key_, writer_.version(), field), value);
    writer_.Put(field, ExternalEntry(value.size()), old_stored == nullptr);
    return;
  }
  std::string entry = InlineEntry(value);
  // A field set to the value it has (a cache refreshing what it holds) writes nothing; the hash
  // still counts as modified, as in Redis.
  if (old_stored != nullptr && *old_stored == entry) return writer_.KeepAsModified();
  if (old_stored != nullptr) DropLargeValue(field, *old_stored);
  writer_.Put(field, entry, old_stored == nullptr);
}

void HashWriter::Remove(std::string_view field, std::string_view old_stored) {
  DropLargeValue(field, old_stored);
  writer_.Remove(field);
}

}  // namespace basalt
