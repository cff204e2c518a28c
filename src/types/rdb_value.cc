#include "types/rdb_value.h"

#include <cmath>
#include <cstring>
#include <unordered_set>

#include "common/rdb_compact.h"
#include "common/rdb_encoding.h"
#include "common/strutil.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/set.h"
#include "types/string.h"

namespace basalt {

namespace {

// Object types (rdb.h in Redis).
constexpr uint8_t kTypeString = 0;
constexpr uint8_t kTypeList = 1;
constexpr uint8_t kTypeSet = 2;
constexpr uint8_t kTypeZset = 3;
constexpr uint8_t kTypeHash = 4;
constexpr uint8_t kTypeZset2 = 5;
constexpr uint8_t kTypeSetIntset = 11;
constexpr uint8_t kTypeZsetZiplist = 12;
constexpr uint8_t kTypeHashZiplist = 13;
constexpr uint8_t kTypeListQuicklist = 14;
constexpr uint8_t kTypeHashListpack = 16;
constexpr uint8_t kTypeZsetListpack = 17;
constexpr uint8_t kTypeListQuicklist2 = 18;
constexpr uint8_t kTypeSetListpack = 20;

// Quicklist 2 node containers.
constexpr uint64_t kNodePlain = 1;
constexpr uint64_t kNodePacked = 2;

void AppendDouble(std::string* out, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

// A count of elements each taking at least `min_bytes`: no more than the input can hold.
bool ReadCount(rdb::Reader& r, uint64_t min_bytes, uint64_t* count) {
  bool encoded;
  if (!r.ReadLength(count, &encoded) || encoded) return false;
  return *count > 0 && r.Fits(*count, min_bytes);
}

bool ParseScore(std::string_view text, double* score) {
  auto d = ParseDouble(text);
  if (!d || std::isnan(*d)) return false;
  *score = *d;
  return true;
}

// Redis's old ZSET encoding: a length byte then the score's text (253 NaN, 254 +inf, 255 -inf).
bool ReadTextScore(rdb::Reader& r, double* score) {
  uint8_t len;
  if (!r.ReadByte(&len)) return false;
  if (len == 253) return false;
  if (len == 254 || len == 255) {
    *score = len == 254 ? INFINITY : -INFINITY;
    return true;
  }
  std::string text;
  for (uint8_t i = 0; i < len; i++) {
    uint8_t c;
    if (!r.ReadByte(&c)) return false;
    text.push_back(static_cast<char>(c));
  }
  return ParseScore(text, score);
}

bool ReadBinaryScore(rdb::Reader& r, double* score) {
  uint64_t bits = 0;
  for (int i = 0; i < 8; i++) {
    uint8_t b;
    if (!r.ReadByte(&b)) return false;
    bits |= static_cast<uint64_t>(b) << (8 * i);
  }
  std::memcpy(score, &bits, sizeof bits);
  return !std::isnan(*score);
}

bool ReadList(rdb::Reader& r, uint8_t type, RdbValue* out) {
  uint64_t count;
  if (type == kTypeList) {
    if (!ReadCount(r, 1, &count)) return false;
    for (uint64_t i = 0; i < count; i++) {
      std::string s;
      if (!r.ReadString(&s)) return false;
      out->items.push_back(std::move(s));
    }
    return true;
  }
  if (!ReadCount(r, 1, &count)) return false;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t container = kNodePacked;
    bool encoded;
    if (type == kTypeListQuicklist2 && (!r.ReadLength(&container, &encoded) || encoded ||
                                        (container != kNodePlain && container != kNodePacked)))
      return false;
    std::string node;
    if (!r.ReadString(&node)) return false;
    if (container == kNodePlain) {
      out->items.push_back(std::move(node));
    } else if (type == kTypeListQuicklist2 ? !rdb::DecodeListpack(node, &out->items)
                                           : !rdb::DecodeZiplist(node, &out->items)) {
      return false;
    }
  }
  return true;
}

// The elements of a compact container held in one RDB string.
bool ReadPacked(rdb::Reader& r, uint8_t type, std::vector<std::string>* out) {
  std::string blob;
  if (!r.ReadString(&blob)) return false;
  if (type == kTypeSetIntset) return rdb::DecodeIntset(blob, out);
  if (type == kTypeZsetZiplist || type == kTypeHashZiplist) return rdb::DecodeZiplist(blob, out);
  return rdb::DecodeListpack(blob, out);
}

bool ReadSet(rdb::Reader& r, uint8_t type, RdbValue* out) {
  if (type == kTypeSet) {
    uint64_t count;
    if (!ReadCount(r, 1, &count)) return false;
    for (uint64_t i = 0; i < count; i++) {
      std::string s;
      if (!r.ReadString(&s)) return false;
      out->items.push_back(std::move(s));
    }
  } else if (!ReadPacked(r, type, &out->items)) {
    return false;
  }
  std::unordered_set<std::string_view> seen;
  for (const auto& m : out->items)
    if (!seen.insert(m).second) return false;
  return true;
}

bool ReadHash(rdb::Reader& r, uint8_t type, RdbValue* out) {
  if (type == kTypeHash) {
    uint64_t count;
    if (!ReadCount(r, 2, &count)) return false;
    for (uint64_t i = 0; i < count; i++) {
      std::string field, value;
      if (!r.ReadString(&field) || !r.ReadString(&value)) return false;
      out->fields.emplace_back(std::move(field), std::move(value));
    }
  } else {
    std::vector<std::string> flat;
    if (!ReadPacked(r, type, &flat) || flat.size() % 2 != 0) return false;
    for (size_t i = 0; i < flat.size(); i += 2)
      out->fields.emplace_back(std::move(flat[i]), std::move(flat[i + 1]));
  }
  std::unordered_set<std::string_view> seen;
  for (const auto& [field, value] : out->fields)
    if (!seen.insert(field).second) return false;
  return true;
}

bool ReadZset(rdb::Reader& r, uint8_t type, RdbValue* out) {
  if (type == kTypeZset || type == kTypeZset2) {
    uint64_t count;
    if (!ReadCount(r, 2, &count)) return false;
    for (uint64_t i = 0; i < count; i++) {
      ScoredMember m;
      if (!r.ReadString(&m.member)) return false;
      if (type == kTypeZset2 ? !ReadBinaryScore(r, &m.score) : !ReadTextScore(r, &m.score))
        return false;
      out->scored.push_back(std::move(m));
    }
  } else {
    std::vector<std::string> flat;
    if (!ReadPacked(r, type, &flat) || flat.size() % 2 != 0) return false;
    for (size_t i = 0; i < flat.size(); i += 2) {
      ScoredMember m;
      m.member = std::move(flat[i]);
      if (!ParseScore(flat[i + 1], &m.score)) return false;
      out->scored.push_back(std::move(m));
    }
  }
  std::unordered_set<std::string_view> seen;
  for (const auto& m : out->scored)
    if (!seen.insert(m.member).second) return false;
  return true;
}

bool ParseObject(rdb::Reader& r, uint8_t type, RdbValue* out) {
  switch (type) {
    case kTypeString:
      out->type = RedisType::kString;
      return r.ReadString(&out->str);
    case kTypeList:
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      out->type = RedisType::kList;
      return ReadList(r, type, out) && !out->items.empty();
    case kTypeSet:
    case kTypeSetIntset:
    case kTypeSetListpack:
      out->type = RedisType::kSet;
      return ReadSet(r, type, out) && !out->items.empty();
    case kTypeHash:
    case kTypeHashZiplist:
    case kTypeHashListpack:
      out->type = RedisType::kHash;
      return ReadHash(r, type, out) && !out->fields.empty();
    case kTypeZset:
    case kTypeZset2:
    case kTypeZsetZiplist:
    case kTypeZsetListpack:
      out->type = RedisType::kZset;
      return ReadZset(r, type, out) && !out->scored.empty();
    case kRdbTypeStreamListpacks:
    case kRdbTypeStreamListpacks2:
    case kRdbTypeStreamListpacks3:
      out->type = RedisType::kStream;
      return ReadRdbStream(r, type, &out->stream);
    default:
      return false;
  }
}

}  // namespace

StatusOr<std::string> DumpKey(Context& ctx, int db, std::string_view key, const Metadata& meta) {
  std::string out;
  Status s;
  switch (meta.type) {
    case RedisType::kString: {
      std::string value;
      s = ReadString(ctx, db, key, meta, &value);
      out.push_back(static_cast<char>(kTypeString));
      rdb::AppendString(&out, value);
      break;
    }
    case RedisType::kList:
      out.push_back(static_cast<char>(kTypeList));
      rdb::AppendLength(&out, meta.size);
      s = ListScan(ctx, db, key, meta, false, [&](uint64_t, const std::string& v) {
        rdb::AppendString(&out, v);
        return true;
      });
      break;
    case RedisType::kSet: {
      auto members = ReadMembers(ctx, db, key, meta);
      if (!members.ok()) return members.status();
      out.push_back(static_cast<char>(kTypeSet));
      rdb::AppendLength(&out, members->size());
      for (const auto& m : *members) rdb::AppendString(&out, m.name);
      break;
    }
    case RedisType::kHash: {
      auto fields = ReadFields(ctx, db, key, meta, true);
      if (!fields.ok()) return fields.status();
      out.push_back(static_cast<char>(kTypeHash));
      rdb::AppendLength(&out, fields->size());
      for (const auto& f : *fields) {
        rdb::AppendString(&out, f.name);
        rdb::AppendString(&out, f.value);
      }
      break;
    }
    case RedisType::kZset: {
      auto members = ReadAll(ctx, db, key, meta);
      if (!members.ok()) return members.status();
      out.push_back(static_cast<char>(kTypeZset2));
      rdb::AppendLength(&out, members->size());
      for (const auto& m : *members) {
        rdb::AppendString(&out, m.member);
        AppendDouble(&out, m.score);
      }
      break;
    }
    case RedisType::kStream:
      s = AppendRdbStream(ctx, db, key, meta, &out);
      break;
    default:
      return Status::RedisError("ERR DUMP of this key type is not supported");
  }
  if (!s.ok()) return s;
  rdb::AppendDumpFooter(&out);
  return out;
}

bool ParseRdbObject(std::string_view body, RdbValue* out) {
  rdb::Reader r(body);
  uint8_t type;
  if (!r.ReadByte(&type)) return false;
  return ParseObject(r, type, out) && r.remaining() == 0;
}

bool ParseRdbObject(rdb::Reader& r, uint8_t type, RdbValue* out) {
  return ParseObject(r, type, out);
}

Status WriteRdbValue(Context& ctx, int db, std::string_view key, const RdbValue& value,
                     int64_t expire_ms, const KeyState& old) {
  if (value.type == RedisType::kString) {
    PutString(ctx, db, key, value.str, expire_ms, old, StringEncoding::kAuto);
    return Status::OK();
  }
  // The key goes first, so every writer below starts a new incarnation.
  KeyState fresh = old;
  if (old.present) {
    ctx.Delete(db, key, old);
    auto gone = ctx.Lookup(db, key);
    if (!gone.ok()) return gone.status();
    fresh = *gone;
  }
  if (value.type == RedisType::kStream)
    return WriteRdbStream(ctx, db, key, value.stream, expire_ms, fresh);
  switch (value.type) {
    case RedisType::kList: {
      std::vector<std::string_view> items(value.items.begin(), value.items.end());
      ListReplace(ctx, db, key, fresh, items);
      break;
    }
    case RedisType::kSet: {
      CollectionWriter w(ctx, db, key, fresh, RedisType::kSet);
      for (const auto& m : value.items) w.Put(m, "", true);
      w.Finish();
      break;
    }
    case RedisType::kHash: {
      HashWriter w(ctx, db, key, fresh);
      for (const auto& [field, v] : value.fields) w.Put(field, v, nullptr);
      w.Finish();
      break;
    }
    default: {
      ZsetWriter w(ctx, db, key, fresh);
      for (const auto& m : value.scored) w.Put(m.member, m.score, nullptr);
      w.Finish();
      break;
    }
  }
  if (expire_ms == 0) return Status::OK();
  auto state = ctx.Lookup(db, key);
  if (!state.ok()) return state.status();
  Metadata meta = state->meta;
  meta.expire_ms = expire_ms;
  ctx.Write(db, key, meta, *state);
  return Status::OK();
}

}  // namespace basalt
