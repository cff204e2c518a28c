#include "types/metadata.h"

#include <atomic>
#include <cstring>

#include "common/clock.h"
#include "common/coding.h"

namespace basalt {

namespace {
constexpr uint8_t kSegmentedFlag = 0x40;
// Segment sizes the decoder accepts (4 KiB .. 1 MiB); anything else is corruption.
constexpr uint8_t kMinSegmentShift = 10;
constexpr uint8_t kMaxSegmentShift = 20;
}  // namespace

const char* RedisTypeName(RedisType type) {
  switch (type) {
    case RedisType::kString:
      return "string";
    case RedisType::kHash:
      return "hash";
    case RedisType::kList:
      return "list";
    case RedisType::kSet:
      return "set";
    case RedisType::kZset:
      return "zset";
    case RedisType::kStream:
      return "stream";
    case RedisType::kNone:
      break;
  }
  return "none";
}

bool ZsetEnds::operator==(const ZsetEnds& other) const {
  // Copies that share their ends (most: a writer's state against the one it was copied from)
  // are equal without comparing their marks and lists.
  if (ends_ == other.ends_) return true;
  return low() == other.low() && high() == other.high();
}

// The ends of a sorted set never popped (a namespace-scope constant: no guard on each read).
const ZsetEnd kNoEnd;

const ZsetEnd& ZsetEnds::end(bool top) const {
  if (!ends_) return kNoEnd;
  return top ? ends_->high : ends_->low;
}

ZsetEnd& ZsetEnds::mutable_end(bool top) {
  // A count of one cannot rise under us: only a copy of this object, on this thread, shares it.
  if (!ends_) {
    ends_ = std::make_shared<Both>();
  } else if (ends_.use_count() > 1) {
    ends_ = std::make_shared<Both>(*ends_);
  } else {
    // Pairs with the release by which the last other copy, perhaps on another thread, dropped
    // its count: its reads of the ends come before the writes through this reference.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return top ? ends_->high : ends_->low;
}

void Metadata::EncodeTo(std::string* out_string) const {
  std::string& out = *out_string;
  bool segmented_string = type == RedisType::kString && segmented;
  // The fixed fields go into one buffer and then into `out` with one append: one growth check
  // instead of one per field.
  char fixed[1 + 5 * 8];
  size_t n = 0;
  const uint8_t hint =
      type == RedisType::kSet ? static_cast<uint8_t>(set_floor) : static_cast<uint8_t>(encoding);
  fixed[n++] = static_cast<char>((static_cast<uint8_t>(type) & 0x0f) | (hint << 4) |
                                 (segmented_string ? kSegmentedFlag : 0));
  EncodeFixed64(fixed + n, static_cast<uint64_t>(expire_ms));
  n += 8;
  if (segmented_string || type != RedisType::kString) {
    EncodeFixed64(fixed + n, version);
    EncodeFixed64(fixed + n + 8, size);
    n += 16;
  }
  if (segmented_string) fixed[n++] = static_cast<char>(segment_shift);
  if (type == RedisType::kList) {
    EncodeFixed64(fixed + n, list_head);
    EncodeFixed64(fixed + n + 8, list_tail);
    n += 16;
  }
  out.clear();
  if (type == RedisType::kString) out.reserve(n + value.size());
  out.append(fixed, n);
  if (segmented_string) return;
  if (type == RedisType::kStream) {
    for (const StreamId& id : {stream.last_id, stream.first_id, stream.max_deleted_id}) {
      PutFixed64(&out, id.ms);
      PutFixed64(&out, id.seq);
    }
    PutFixed64(&out, stream.entries_added);
    PutFixed64(&out, stream.groups);
    // Absent when zero, as in the streams stored before it existed.
    if (stream.block_origin != 0) PutFixed64(&out, stream.block_origin);
    return;
  }
  if (type == RedisType::kString) {
    out.append(value);
    return;
  }
  const ZsetEnd& zset_low = zset.low();
  const ZsetEnd& zset_high = zset.high();
  if (type == RedisType::kZset && zset.Marked()) {
    PutLengthPrefixed(&out, zset_low.mark);
    PutLengthPrefixed(&out, zset_high.mark);
    // Only sets fed beyond a mark since the last pop carry the lists (and older values none),
    // and only those whose mark such feeding moved outward carry the reaches after them.
    bool reaches = !zset_low.reach.empty() || !zset_high.reach.empty();
    if (!zset_low.beyond.empty() || !zset_high.beyond.empty() || reaches) {
      for (const ZsetEnd* end : {&zset_low, &zset_high}) {
        PutFixed32(&out, static_cast<uint32_t>(end->beyond.size()));
        for (const std::string& entry : end->beyond) PutLengthPrefixed(&out, entry);
      }
    }
    if (reaches) {
      PutLengthPrefixed(&out, zset_low.reach);
      PutLengthPrefixed(&out, zset_high.reach);
    }
  }
}

bool Metadata::DecodeHeader(std::string_view in, RedisType* type, int64_t* expire_ms) {
  uint8_t flags;
  uint64_t expire;
  if (!GetFixed8(&in, &flags) || !GetFixed64(&in, &expire)) return false;
  uint8_t t = flags & 0x0f;
  if (t < static_cast<uint8_t>(RedisType::kString) || t > static_cast<uint8_t>(RedisType::kStream))
    return false;
  *type = static_cast<RedisType>(t);
  *expire_ms = static_cast<int64_t>(expire);
  return true;
}

bool Metadata::Decode(std::string_view in) {
  if (!DecodeHeader(in, &type, &expire_ms)) return false;
  stream = StreamCounters();
  uint8_t flags = static_cast<uint8_t>(in[0]);
  const uint8_t hint = (flags >> 4) & 0x03;
  encoding = type == RedisType::kSet ? StringEncoding::kAuto : static_cast<StringEncoding>(hint);
  set_floor = type == RedisType::kSet ? static_cast<SetFloor>(hint) : SetFloor::kIntset;
  segmented = type == RedisType::kString && (flags & kSegmentedFlag) != 0;
  in.remove_prefix(9);
  if (segmented) {
    return GetFixed64(&in, &version) && GetFixed64(&in, &size) && GetFixed8(&in, &segment_shift) &&
           segment_shift >= kMinSegmentShift && segment_shift <= kMaxSegmentShift;
  }
  if (type == RedisType::kString) {
    value.assign(in.data(), in.size());
    return true;
  }
  if (!GetFixed64(&in, &version) || !GetFixed64(&in, &size)) return false;
  if (type == RedisType::kList) {
    if (!GetFixed64(&in, &list_head) || !GetFixed64(&in, &list_tail)) return false;
  }
  zset.Clear();
  if (type == RedisType::kStream) {
    for (StreamId* id : {&stream.last_id, &stream.first_id, &stream.max_deleted_id}) {
      if (!GetFixed64(&in, &id->ms) || !GetFixed64(&in, &id->seq)) return false;
    }
    if (!GetFixed64(&in, &stream.entries_added) || !GetFixed64(&in, &stream.groups)) return false;
    return in.empty() || (GetFixed64(&in, &stream.block_origin) && in.empty());
  }
  if (type == RedisType::kZset && !in.empty()) {
    ZsetEnd& zset_low = zset.mutable_end(false);
    ZsetEnd& zset_high = zset.mutable_end(true);
    std::string_view low, high;
    if (!GetLengthPrefixed(&in, &low) || !GetLengthPrefixed(&in, &high)) return false;
    zset_low.mark.assign(low);
    zset_high.mark.assign(high);
    for (ZsetEnd* end : {&zset_low, &zset_high}) {
      uint32_t n;
      if (in.empty() && end == &zset_low) break;
      if (!GetFixed32(&in, &n) || n > in.size() / 4) return false;
      end->beyond.resize(n);
      for (std::string& entry : end->beyond) {
        std::string_view e;
        if (!GetLengthPrefixed(&in, &e)) return false;
        entry.assign(e);
      }
    }
    if (!in.empty()) {
      std::string_view low_reach, high_reach;
      if (!GetLengthPrefixed(&in, &low_reach) || !GetLengthPrefixed(&in, &high_reach)) return false;
      zset_low.reach.assign(low_reach);
      zset_high.reach.assign(high_reach);
    }
    if (!in.empty()) return false;
  }
  return true;
}

std::string MetadataKey(uint8_t db, std::string_view user_key) {
  std::string out;
  out.reserve(1 + user_key.size());
  AppendMetadataKey(&out, db, user_key);
  return out;
}

void AppendMetadataKey(std::string* out, uint8_t db, std::string_view user_key) {
  PutFixed8(out, db);
  out->append(user_key);
}

bool ParseMetadataKey(std::string_view key, uint8_t* db, std::string_view* user_key) {
  if (!GetFixed8(&key, db)) return false;
  *user_key = key;
  return true;
}

std::string DatabaseBegin(uint8_t db) {
  return std::string(1, static_cast<char>(db));
}
std::string DatabaseEnd(uint8_t db) {
  return std::string(1, static_cast<char>(db + 1));
}

std::string SubkeyPrefix(uint8_t db, std::string_view user_key, uint64_t version,
                         size_t room_after) {
  // Written in place: every member read and write builds one, and four appends cost more than
  // the bytes they copy.
  const size_t size = 13 + user_key.size();
  std::string out;
  out.reserve(size + room_after);
  out.resize(size);
  char* p = out.data();
  *p++ = static_cast<char>(db);
  EncodeFixed32(p, static_cast<uint32_t>(user_key.size()));
  std::memcpy(p + 4, user_key.data(), user_key.size());
  EncodeFixed64(p + 4 + user_key.size(), version);
  return out;
}

std::string ExpireKey(int64_t expire_ms, uint8_t db, std::string_view user_key) {
  std::string out;
  out.reserve(9 + user_key.size());
  PutFixed64(&out, static_cast<uint64_t>(expire_ms));
  PutFixed8(&out, db);
  out.append(user_key);
  return out;
}

bool ParseExpireKey(std::string_view key, int64_t* expire_ms, uint8_t* db,
                    std::string_view* user_key) {
  uint64_t t;
  if (!GetFixed64(&key, &t) || !GetFixed8(&key, db)) return false;
  *expire_ms = static_cast<int64_t>(t);
  *user_key = key;
  return true;
}

std::string KeysCounterKey(uint8_t db) {
  return "keys" + std::string(1, static_cast<char>(db));
}
std::string ExpiresCounterKey(uint8_t db) {
  return "expires" + std::string(1, static_cast<char>(db));
}
std::string EpochKey(uint8_t db) {
  return "epoch" + std::string(1, static_cast<char>(db));
}

uint64_t NewVersion() {
  static std::atomic<uint64_t> last{0};
  uint64_t candidate = static_cast<uint64_t>(UnixMicros()) << 11;
  uint64_t prev = last.load();
  while (true) {
    uint64_t next = candidate > prev ? candidate : prev + 1;
    if (last.compare_exchange_weak(prev, next)) return next;
  }
}

}  // namespace basalt
