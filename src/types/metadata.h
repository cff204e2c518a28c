// Metadata: the one entry every user key has in the `metadata` column family, and the key
// encodings of every column family. docs/encoding.md is the prose version of this file.
//
//   metadata key   : db(1) | user key
//   metadata value : flags(1: type in bits 0-3, string encoding hint or set encoding floor
//                    in bits 4-5, bit 6 = segmented string) | expire ms(8, 0 = none) | body
//       string     : body = the value bytes (inline), or, segmented (types/string.h):
//                    version(8) | length(8) | segment shift(1)
//       collection : body = version(8) | size(8) [| list head(8) | list tail(8)]
//       zset       : body = version(8) | size(8) [| low len(4) | low | high len(4) | high]
//       stream     : body = version(8) | size(8) | last id(16) | first id(16) |
//                    max deleted id(16) | entries added(8) | groups(8)
//   subkey key     : db(1) | len(4) | user key | version(8) | member
//   expire key     : expire ms(8) | db(1) | user key      value: flush epoch(8)
//   counters key   : "keys" | db(1), "expires" | db(1)    value: int64 (merge: add)
//                    "epoch" | db(1)                       value: uint64 flush epoch
//                    "dbmap"                               value: 16 physical db bytes
//
// All integers are fixed-width big-endian so byte order is numeric order. The db byte is the
// physical database; SWAPDB swaps the logical->physical map, not the data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace basalt {

enum class RedisType : uint8_t {
  kNone = 0,
  kString = 1,
  kHash = 2,
  kList = 3,
  kSet = 4,
  kZset = 5,
  kStream = 6,
};

const char* RedisTypeName(RedisType type);

// How OBJECT ENCODING should describe a string, mirroring what Redis would hold in memory:
// values written by APPEND/SETRANGE are "raw", INCRBYFLOAT results are never "int".
enum class StringEncoding : uint8_t { kAuto = 0, kRaw = 1, kNoInt = 2 };

// The most compact encoding OBJECT ENCODING may give a set, whatever it holds now. Redis converts
// a set only upwards (intset, listpack, hashtable), so a set that was given a non-integer member
// never reads "intset" again, and one that outgrew listpack never reads "listpack" again.
enum class SetFloor : uint8_t { kIntset = 0, kListpack = 1, kHashtable = 2 };

// One end of a sorted set's score index (entries `score | member`). `mark` is the last entry
// popped from that end (empty: none), and the tombstones of the pops lie beyond it. `beyond`
// lists, ascending, every live entry beyond the mark (below a low one, above a high one): the
// members added there since the last pop. Scans from that end take those first and then seek
// straight to the mark. When an addition would make the list too long, the mark moves to the
// farthest entry instead and the list empties (types/zset.cc).
//
// Pops leave the popped members' `subkey` entries in place (only their `zset_score` entries get
// tombstones): a `subkey` entry whose entry lies beyond the mark and is not listed is dead, and so
// is one from the mark up to `reach` (empty: the mark itself) that the score index no longer
// holds. `reach` is the innermost entry any pop took from this end; it differs from the mark only
// after an addition moved the mark outward (ZsetSubkeyEntry in types/zset.h).
struct ZsetEnd {
  std::string mark;
  std::vector<std::string> beyond;
  std::string reach;
  bool operator==(const ZsetEnd&) const = default;
};

// Both ends of a sorted set, out of line and shared: every command copies and moves its keys'
// Metadata several times, and only a popped sorted set's ends hold anything. A copy shares the
// ends (a popped set's ends were copied, allocation by allocation, four times a pop); the first
// mutable_end() on a shared copy gives it its own.
class ZsetEnds {
 public:
  bool operator==(const ZsetEnds& other) const;

  // The low end (`top` false) or the high one; empty ends when the set was never popped.
  const ZsetEnd& end(bool top) const;
  const ZsetEnd& low() const { return end(false); }
  const ZsetEnd& high() const { return end(true); }
  // The end to change, no longer shared with any copy. The reference is good until this object
  // is next copied from, assigned or cleared.
  ZsetEnd& mutable_end(bool top);
  // Whether either end has a mark (and so may have lists and reaches).
  bool Marked() const { return !low().mark.empty() || !high().mark.empty(); }
  void Clear() { ends_.reset(); }

 private:
  struct Both {
    ZsetEnd low, high;
  };
  std::shared_ptr<Both> ends_;
};

// A stream entry ID: milliseconds and sequence number, ordered as a pair.
struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamId&) const = default;
  bool IsZero() const { return ms == 0 && seq == 0; }
};

// What a stream's metadata holds besides its version and length (docs/encoding.md, Streams):
// Redis's counters, kept exactly as Redis keeps them.
struct StreamCounters {
  StreamId last_id;         // the greatest ID ever added or set: the floor of the next XADD
  StreamId first_id;        // the smallest live entry's ID; 0-0 when the stream is empty
  StreamId max_deleted_id;  // the greatest ID XDEL removed
  uint64_t entries_added = 0;
  uint64_t groups = 0;
  // entries_added when the stream last grew from empty: where Redis began the radix-tree nodes
  // it holds now, the blocks that `~` trims by.
  uint64_t block_origin = 0;
  bool operator==(const StreamCounters&) const = default;
};

struct Metadata {
  RedisType type = RedisType::kNone;
  StringEncoding encoding = StringEncoding::kAuto;  // strings only
  SetFloor set_floor = SetFloor::kIntset;           // sets only
  int64_t expire_ms = 0;                            // absolute Unix ms; 0 = no expiry
  uint64_t version = 0;  // collections: identifies this incarnation's subkeys
  uint64_t size = 0;     // collections: member count
  uint64_t list_head = 0;
  uint64_t list_tail = 0;
  // Strings: an inline value lives in `value`; a segmented one in `subkey` entries, with its
  // length in `size` and its incarnation in `version` (see types/string.h).
  bool segmented = false;
  uint8_t segment_shift = 0;  // segmented strings: each segment holds 1 << shift bytes
  std::string value;          // inline strings: the whole value
  // Sorted sets: what the pops from each end of the score index left there, so that the next
  // scan from that end seeks past the tombstones of earlier pops instead of stepping over them.
  ZsetEnds zset;
  StreamCounters stream;  // streams only

  bool IsCollection() const { return type != RedisType::kString && type != RedisType::kNone; }
  // Whether entries in `subkey` belong to this key (under its version).
  bool HasSubkeys() const { return IsCollection() || (type == RedisType::kString && segmented); }
  bool ExpiredAt(int64_t now_ms) const { return expire_ms != 0 && expire_ms <= now_ms; }
  bool operator==(const Metadata&) const = default;

  // Writes the encoding over *out, whose capacity a caller that encodes often keeps.
  void EncodeTo(std::string* out) const;
  std::string Encode() const {
    std::string out;
    EncodeTo(&out);
    return out;
  }
  // False when the bytes are not a metadata value this version understands.
  bool Decode(std::string_view in);
  // Reads only the type and expiry, without copying the body.
  static bool DecodeHeader(std::string_view in, RedisType* type, int64_t* expire_ms);
};

std::string MetadataKey(uint8_t db, std::string_view user_key);
// Appends MetadataKey(db, user_key) to `out`.
void AppendMetadataKey(std::string* out, uint8_t db, std::string_view user_key);
// Splits a metadata key into its db and user key.
bool ParseMetadataKey(std::string_view key, uint8_t* db, std::string_view* user_key);
// [begin, end) covering every metadata key of one database.
std::string DatabaseBegin(uint8_t db);
std::string DatabaseEnd(uint8_t db);

// `room_after`: bytes the caller will append (a member), reserved so that appending them does
// not allocate again.
std::string SubkeyPrefix(uint8_t db, std::string_view user_key, uint64_t version,
                         size_t room_after = 0);

std::string ExpireKey(int64_t expire_ms, uint8_t db, std::string_view user_key);
bool ParseExpireKey(std::string_view key, int64_t* expire_ms, uint8_t* db,
                    std::string_view* user_key);

std::string KeysCounterKey(uint8_t db);
std::string ExpiresCounterKey(uint8_t db);
std::string EpochKey(uint8_t db);
constexpr std::string_view kDbMapKey = "dbmap";
// Present while an RDB import runs (Keyspace::MarkImportStarted); its value names the file.
constexpr std::string_view kImportMarkerKey = "importing";

// A new collection version: microseconds since the epoch with a counter in the low bits, so
// versions only grow, also across restarts.
uint64_t NewVersion();

}  // namespace basalt
