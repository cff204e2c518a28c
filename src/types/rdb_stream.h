// Streams in Redis's RDB object encoding: entries in listpacks keyed by master ID, the stream's
// counters, consumer groups with their pending entries and consumers.
//
// Reading accepts the three stream types Redis 6.0-7.2 write (RDB_TYPE_STREAM_LISTPACKS 15,
// _2 19, _3 21). The input is untrusted: every count is checked against the bytes left before
// anything is reserved for it, and the result must be a stream Basalt's commands can rely on
// (entry IDs strictly ascending and at most the last ID, the length matching the live entries,
// every pending entry owned by exactly one consumer of its group) or it is refused.
//
// Writing produces type 19, which Redis 7.0 and later read; consumers' active times, which type
// 19 lacks, are then estimated by the reader as their seen times (as Redis does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/rdb_encoding.h"
#include "common/status.h"
#include "types/keyspace.h"
#include "types/stream.h"

namespace basalt {

struct RdbStreamGroup {
  std::string name;
  StreamGroup group;                  // pending and consumers counted
  std::vector<PendingEntry> pending;  // in ID order, each with its consumer
  std::vector<std::pair<std::string, StreamConsumer>> consumers;
};

struct RdbStream {
  std::vector<StreamEntry> entries;  // live entries in ID order
  StreamCounters counters;           // groups counted
  std::vector<RdbStreamGroup> groups;
};

inline constexpr uint8_t kRdbTypeStreamListpacks = 15;
inline constexpr uint8_t kRdbTypeStreamListpacks2 = 19;
inline constexpr uint8_t kRdbTypeStreamListpacks3 = 21;

// Reads a stream object of RDB type `type` (after the type byte). False on anything malformed.
bool ReadRdbStream(rdb::Reader& r, uint8_t type, RdbStream* out);

// Appends the type byte and the object of the live stream `meta` at db/key.
Status AppendRdbStream(Context& ctx, int db, std::string_view key, const Metadata& meta,
                       std::string* out);

// Writes `s` as a new incarnation of `key`, which must be absent (`fresh`), with `expire_ms`.
Status WriteRdbStream(Context& ctx, int db, std::string_view key, const RdbStream& s,
                      int64_t expire_ms, const KeyState& fresh);

}  // namespace basalt
