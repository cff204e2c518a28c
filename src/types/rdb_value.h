// Keys as Redis's DUMP payloads: a whole value of any type read into an RdbValue and serialized
// as the RDB object encoding (what DUMP returns), and a payload body parsed back into an
// RdbValue and written as a key (what RESTORE does).
//
// Writing produces RDB version 10 objects that Redis 7.0 and later read: a string as type 0,
// a list as type 1 (RDB_TYPE_LIST), a set as type 2, a hash as type 4 and a sorted set as type 5
// (RDB_TYPE_ZSET_2, binary scores) and a stream as type 19 (types/rdb_stream.h). Parsing also
// accepts the compact encodings Redis 6.0-7.2 write for small values (intsets, listpacks,
// ziplists, quicklists) and all three stream types. Parsing completes, and
// validates everything, before anything is written, so a bad payload changes nothing.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/rdb_encoding.h"
#include "common/status.h"
#include "types/keyspace.h"
#include "types/rdb_stream.h"
#include "types/zset.h"

namespace basalt {

struct RdbValue {
  RedisType type = RedisType::kNone;
  std::string str;                                          // strings
  std::vector<std::string> items;                           // lists (in order), sets
  std::vector<std::pair<std::string, std::string>> fields;  // hashes
  std::vector<ScoredMember> scored;                         // sorted sets
  RdbStream stream;                                         // streams
};

// The DUMP payload of the live key `meta` (object, RDB version and CRC-64 footer).
StatusOr<std::string> DumpKey(Context& ctx, int db, std::string_view key, const Metadata& meta);

// Parses a payload body (the footer already checked and removed): one object type byte, the
// object, and nothing after it. False on any malformed or empty value, or duplicate members.
bool ParseRdbObject(std::string_view body, RdbValue* out);
// The object of type `type` at the front of `r` (an RDB file's value after its type byte).
bool ParseRdbObject(rdb::Reader& r, uint8_t type, RdbValue* out);

// Writes `value` as `key`, in place of `old` (deleted first if present), expiring at `expire_ms`
// (0: never).
Status WriteRdbValue(Context& ctx, int db, std::string_view key, const RdbValue& value,
                     int64_t expire_ms, const KeyState& old);

}  // namespace basalt
