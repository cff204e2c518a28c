#include "commands/object_encoding.h"

#include <algorithm>
#include <climits>

#include "commands/server_state.h"
#include "common/strutil.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/set.h"
#include "types/zset.h"

namespace basalt {

namespace {

// What Redis's listpack spends on one entry: the encoding byte(s) with the data, then the
// back-length that lets it walk backwards.
size_t ListpackEntryBytes(std::string_view value) {
  size_t body;
  auto integer = ParseInt64(value);
  if (integer && value.size() <= 20) {
    int64_t v = *integer;
    if (v >= 0 && v <= 127) {
      body = 1;
    } else if (v >= -4096 && v <= 4095) {
      body = 2;
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
      body = 3;
    } else if (v >= -(1 << 23) && v < (1 << 23)) {
      body = 4;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      body = 5;
    } else {
      body = 9;
    }
  } else if (value.size() < 64) {
    body = 1 + value.size();
  } else if (value.size() < 4096) {
    body = 2 + value.size();
  } else {
    body = 5 + value.size();
  }
  size_t back = body <= 127 ? 1 : body < 16383 ? 2 : body < 2097151 ? 3 : body < 268435455 ? 4 : 5;
  return body + back;
}

constexpr size_t kListpackHeaderAndEnd = 7;

// quicklistNodeExceedsLimit: a negative fill limits a node's bytes (4 KiB .. 64 KiB), a positive
// one its entries (and its bytes to 8 KiB as a safety limit).
bool ExceedsListNode(int64_t fill, size_t bytes, uint64_t count) {
  static constexpr size_t kSizeLevels[] = {4096, 8192, 16384, 32768, 65536};
  if (fill < 0) {
    size_t level = std::min<size_t>(static_cast<size_t>(-(fill + 1)), 4);
    return bytes > kSizeLevels[level];
  }
  if (bytes > 8192) return true;
  return count > static_cast<uint64_t>(fill == 0 ? 1 : fill);
}

StatusOr<std::string> ListEncoding(CommandContext& c, int db, std::string_view key,
                                   const Metadata& meta) {
  const int64_t fill = c.server.config->GetInt("list-max-listpack-size");
  size_t bytes = kListpackHeaderAndEnd;
  bool exceeds = false;
  uint64_t seen = 0;
  Status s = ListScan(c.ctx, db, key, meta, false, [&](uint64_t, const std::string& value) {
    bytes += ListpackEntryBytes(value);
    exceeds = ExceedsListNode(fill, bytes, ++seen);
    return !exceeds;
  });
  if (!s.ok()) return s;
  return std::string(exceeds ? "quicklist" : "listpack");
}

StatusOr<std::string> HashEncoding(CommandContext& c, int db, std::string_view key,
                                   const Metadata& meta) {
  const Config& config = *c.server.config;
  if (meta.size > static_cast<uint64_t>(config.GetInt("hash-max-listpack-entries"))) {
    return std::string("hashtable");
  }
  const size_t max_value = static_cast<size_t>(config.GetInt("hash-max-listpack-value"));
  bool small = true;
  Status s = ForEachField(c.ctx, db, key, meta, true, [&](auto field, auto value) {
    small = field.size() <= max_value && value.size() <= max_value;
    return small;
  });
  if (!s.ok()) return s;
  return std::string(small ? "listpack" : "hashtable");
}

StatusOr<std::string> SetEncoding(CommandContext& c, int db, std::string_view key,
                                  const Metadata& meta) {
  const Config& config = *c.server.config;
  const uint64_t intset_max = static_cast<uint64_t>(config.GetInt("set-max-intset-entries"));
  const uint64_t listpack_max = static_cast<uint64_t>(config.GetInt("set-max-listpack-entries"));
  if (meta.size > std::max(intset_max, listpack_max) || meta.set_floor == SetFloor::kHashtable) {
    return std::string("hashtable");
  }
  auto members = ReadMembers(c.ctx, db, key, meta);
  if (!members.ok()) return members.status();
  const size_t max_value = static_cast<size_t>(config.GetInt("set-max-listpack-value"));
  bool integers = true, short_enough = true;
  for (const Member& m : *members) {
    integers = integers && m.name.size() <= 20 && ParseInt64(m.name).has_value();
    short_enough = short_enough && m.name.size() <= max_value;
  }
  if (integers && meta.size <= intset_max && meta.set_floor == SetFloor::kIntset) {
    return std::string("intset");
  }
  if (short_enough && meta.size <= listpack_max) return std::string("listpack");
  return std::string("hashtable");
}

StatusOr<std::string> ZsetEncoding(CommandContext& c, int db, std::string_view key,
                                   const Metadata& meta) {
  const Config& config = *c.server.config;
  if (meta.size > static_cast<uint64_t>(config.GetInt("zset-max-listpack-entries"))) {
    return std::string("skiplist");
  }
  const size_t max_value = static_cast<size_t>(config.GetInt("zset-max-listpack-value"));
  auto members = ReadAll(c.ctx, db, key, meta);
  if (!members.ok()) return members.status();
  bool small = std::all_of(members->begin(), members->end(),
                           [&](const ScoredMember& m) { return m.member.size() <= max_value; });
  return std::string(small ? "listpack" : "skiplist");
}

// The value of a string Redis would hold as an integer (encoding int), if it is one.
std::optional<int64_t> IntEncodedValue(const KeyState& state) {
  const std::string& v = state.meta.value;
  if (state.meta.encoding != StringEncoding::kAuto || state.meta.segmented || v.size() > 20) {
    return std::nullopt;
  }
  return ParseInt64(v);
}

std::string StringValueEncoding(const KeyState& state) {
  if (state.meta.encoding == StringEncoding::kRaw || state.meta.segmented) return "raw";
  if (IntEncodedValue(state)) return "int";
  return state.meta.value.size() <= 44 ? "embstr" : "raw";
}

}  // namespace

int64_t ObjectRefcount(const Config& config, const KeyState& state) {
  constexpr int64_t kSharedRefcount = 2147483647;  // Redis's OBJ_SHARED_REFCOUNT
  constexpr int64_t kSharedIntegers = 10000;       // Redis's OBJ_SHARED_INTEGERS
  if (state.meta.type != RedisType::kString) return 1;
  std::optional<int64_t> v = IntEncodedValue(state);
  if (!v || *v < 0 || *v >= kSharedIntegers) return 1;
  if (config.maxmemory.load(std::memory_order_relaxed) > 0) {
    const std::string policy = config.GetString("maxmemory-policy");
    if (policy.find("lru") != std::string::npos || policy.find("lfu") != std::string::npos) {
      return 1;
    }
  }
  return kSharedRefcount;
}

StatusOr<std::string> ObjectEncoding(CommandContext& c, int db, std::string_view key,
                                     const KeyState& state) {
  switch (state.meta.type) {
    case RedisType::kList:
      return ListEncoding(c, db, key, state.meta);
    case RedisType::kHash:
      return HashEncoding(c, db, key, state.meta);
    case RedisType::kSet:
      return SetEncoding(c, db, key, state.meta);
    case RedisType::kZset:
      return ZsetEncoding(c, db, key, state.meta);
    case RedisType::kStream:
      return std::string("stream");
    default:
      return StringValueEncoding(state);
  }
}

}  // namespace basalt
