// The list codec: elements addressed by position, both ends growing in O(1).
//
// A list is a collection (type kList) whose metadata also holds list_head and list_tail: the
// elements occupy the indexes [head, tail) and element i (0-based from the left) lives in the
// `subkey` column family at MemberKey(db, key, version, BigEndian64(head + i)). A new list
// starts with head = tail = 2^63 so it can grow either way: LPUSH writes at head - 1, RPUSH at
// tail; pops, LTRIM and LREM only move head/tail. Elements outside [head, tail) are dead: every
// read seeks straight to an index between head and tail (iterator bounds are the exact live
// range), whatever makes an index live again writes its element anew, and the `subkey`
// compaction filter drops the dead ones (types/compaction.h). So a pop writes the metadata and
// no tombstone. size == tail - head always; an emptied list is deleted.
//
// Insertions and removals in the middle (LINSERT, LREM) rewrite the elements on one side of
// the change point: O(N), as in Kvrocks. LINSERT shifts whichever side is shorter.
//
// Every writer here takes the KeyState it looked up (or looks the key up itself), writes the
// elements into the Context's batch and the metadata once with Context::Write (or deletes the
// key when it becomes empty). Nothing here commits. The pop/push/move functions are what the
// blocking commands (BLPOP, BLMOVE, BLMPOP, ...) call too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "types/keyspace.h"

namespace basalt {

constexpr uint64_t kListMiddle = uint64_t{1} << 63;

enum class ListEnd { kLeft, kRight };

// ---- index arithmetic (pure) ----------------------------------------------------------------

// The 8-byte big-endian member part of an element key.
std::string EncodeListIndex(uint64_t index);
// A Redis index (negative counts from the tail) as an offset in [0, size); nullopt when out of
// range (LINDEX, LSET).
std::optional<uint64_t> ListOffset(int64_t index, uint64_t size);
// LRANGE/LTRIM's start/stop as inclusive offsets [first, last]; nullopt when the range is
// empty.
std::optional<std::pair<uint64_t, uint64_t>> ListRange(int64_t start, int64_t stop, uint64_t size);

// ---- reads ----------------------------------------------------------------------------------

// LookupCollection for lists: a live list, a non-live state, or the WRONGTYPE error.
StatusOr<KeyState> LookupList(Context& ctx, int db, std::string_view key);

// Calls visit(value) for the `count` elements from offset `first` (a point lookup for a single
// element, else one seek; one element in memory at a time) until it returns false. The range must
// lie inside the list.
Status ListVisit(Context& ctx, int db, std::string_view key, const Metadata& meta, uint64_t first,
                 uint64_t count, const std::function<bool(std::string_view value)>& visit);

// Appends the `count` elements from offset `first` to *out (as ListVisit reads them). The range
// must lie inside the list.
Status ListRead(Context& ctx, int db, std::string_view key, const Metadata& meta, uint64_t first,
                uint64_t count, std::vector<std::string>* out);

// Calls fn(offset, value) for every element from the left (or from the right if `reverse`)
// until fn returns false. Reads in bounded chunks.
Status ListScan(Context& ctx, int db, std::string_view key, const Metadata& meta, bool reverse,
                const std::function<bool(uint64_t, const std::string&)>& fn);

// ---- writes ---------------------------------------------------------------------------------

// LSET on a live list: overwrites the element at `offset` (< size).
void ListSet(Context& ctx, int db, std::string_view key, const KeyState& state, uint64_t offset,
             std::string_view value);

// Pushes `items` one by one at `end` (LPUSH a b c leaves c first), creating the list when
// `state` is not live. Returns the new length.
uint64_t ListPushTo(Context& ctx, int db, std::string_view key, const KeyState& state, ListEnd end,
                    std::span<const std::string_view> items);

// A new list of `items` (left to right) in place of `old`, whatever it held: SORT ... STORE.
// The key is overwritten, not deleted and created again, so it is no new key if `old` was live.
void ListReplace(Context& ctx, int db, std::string_view key, const KeyState& old,
                 std::span<const std::string_view> items);

// LPUSH/RPUSH (and the X variants with only_if_exists: then 0 when the key is missing).
// Returns the new length, or the WRONGTYPE error.
StatusOr<uint64_t> ListPush(Context& ctx, int db, std::string_view key, ListEnd end,
                            std::span<const std::string_view> items, bool only_if_exists);

// Pops up to `count` elements from `end` of a list looked up as `state` (live, a list), in
// pop order. Deletes the key when it empties.
StatusOr<std::vector<std::string>> ListPopFrom(Context& ctx, int db, std::string_view key,
                                               const KeyState& state, ListEnd end, uint64_t count);

// Pops up to `count` (>= 1) elements from `end`, in pop order. Empty when the key is missing;
// the WRONGTYPE error when it holds another type. Deletes the key when it empties.
StatusOr<std::vector<std::string>> ListPop(Context& ctx, int db, std::string_view key, ListEnd end,
                                           uint64_t count);
StatusOr<std::optional<std::string>> PopFront(Context& ctx, int db, std::string_view key);
StatusOr<std::optional<std::string>> PopBack(Context& ctx, int db, std::string_view key);

// LMOVE/RPOPLPUSH: pops from `from` of src and pushes at `to` of dst (src == dst rotates).
// nullopt when src is missing. WRONGTYPE (src first, then dst) before anything is written.
StatusOr<std::optional<std::string>> ListMove(Context& ctx, int db, std::string_view src,
                                              std::string_view dst, ListEnd from, ListEnd to);

// LINSERT on a live list: the new length, or -1 when the pivot is not found.
StatusOr<int64_t> ListInsert(Context& ctx, int db, std::string_view key, const KeyState& state,
                             bool after, std::string_view pivot, std::string_view element);

// LREM on a live list: removes up to |count| occurrences (all if 0) from the left (count >= 0)
// or the right (count < 0). Returns how many were removed.
StatusOr<int64_t> ListRemove(Context& ctx, int db, std::string_view key, const KeyState& state,
                             int64_t count, std::string_view element);

// LTRIM on a live list. Returns how many elements it removed.
uint64_t ListTrim(Context& ctx, int db, std::string_view key, const KeyState& state, int64_t start,
                  int64_t stop);

}  // namespace basalt
