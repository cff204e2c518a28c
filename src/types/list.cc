#include "types/list.h"

#include <rocksdb/iterator.h>

#include <algorithm>
#include <cstring>

#include "common/coding.h"
#include "storage/engine.h"
#include "storage/skiplist_memtable.h"
#include "types/collection.h"

namespace basalt {

namespace {

// Elements read per seek by ListScan.
constexpr uint64_t kScanChunk = 256;

// Reads of up to this many elements (pops, LINDEX) are point lookups: a lookup skips every
// memtable and file whose bloom filter rules the key out, where an iterator has to seek each.
constexpr uint64_t kPointReadLimit = 1;

// How far a run of single pops reads ahead: elements, and bytes of values.
constexpr uint64_t kPopReadAhead = 32;
constexpr size_t kPopReadAheadBytes = 64 << 10;

Status MissingElements(std::string_view key) {
  return Status::IOError("list '" + std::string(key) + "' is missing elements");
}

// Reads the element of list `key` stored under `element_key`, through the batch.
Status ReadElement(Context& ctx, std::string_view key, const std::string& element_key,
                   std::string* value) {
  rocksdb::Status s = ctx.batch().Get(ColumnFamily::kSubkey, element_key, value);
  if (s.IsNotFound()) return MissingElements(key);
  if (!s.ok()) return Status::IOError(s.ToString());
  return Status::OK();
}

// The key of the element stored at absolute index `index`.
std::string IndexKey(Context& ctx, int db, std::string_view key, const Metadata& meta,
                     uint64_t index) {
  return MemberKey(ctx, db, key, meta.version, EncodeListIndex(index));
}

// How far, in multiples of this many indexes, an end moves before the range behind it is
// noted for reclaiming (Engine::NoteDeadRange): 4,096 elements, so that a queue's popped
// elements leave the files soon while a pipeline of pops notes a range every few thousand.
constexpr unsigned kReclaimShift = 12;

// After pops or a trim moved the ends of a list from old_head and old_tail to `after`'s.
void NoteDeadEnds(Context& ctx, int db, std::string_view key, uint64_t old_head, uint64_t old_tail,
                  const Metadata& after) {
  if (old_head >> kReclaimShift != after.list_head >> kReclaimShift) {
    ctx.batch().NoteDeadRange(ColumnFamily::kSubkey, IndexKey(ctx, db, key, after, 0),
                              IndexKey(ctx, db, key, after, after.list_head));
  }
  if (old_tail >> kReclaimShift != after.list_tail >> kReclaimShift) {
    // Past the last index: a key followed by a zero byte is the next possible key.
    ctx.batch().NoteDeadRange(ColumnFamily::kSubkey, IndexKey(ctx, db, key, after, after.list_tail),
                              IndexKey(ctx, db, key, after, UINT64_MAX) + '\0');
  }
}

Metadata NewList() {
  Metadata meta = NewCollection(RedisType::kList);
  meta.list_head = kListMiddle;
  meta.list_tail = kListMiddle;
  return meta;
}

void PushRaw(Context& ctx, int db, std::string_view key, Metadata& meta, ListEnd end,
             std::string_view item) {
  if (end == ListEnd::kLeft) {
    meta.list_head--;
    ctx.batch().Put(ColumnFamily::kSubkey, IndexKey(ctx, db, key, meta, meta.list_head), item);
  } else {
    ctx.batch().Put(ColumnFamily::kSubkey, IndexKey(ctx, db, key, meta, meta.list_tail), item);
    meta.list_tail++;
  }
  meta.size++;
}

// Elements written since the last flush of `subkey` are in its newest memtable, each one step
// from the last: read there, a range of them costs a few dozen instructions an element instead
// of a RocksDB iterator's ~850 (docs/benchmarks.md, "Lists"). Calls visit(index, value) for
// the `count` elements from key `lower` (absolute index `first_index`), in ascending order or,
// if `descending`, from the last one down, while it returns true, when every one is there as
// its key's newest entry and a value; returns false, having visited nothing, when any is not
// (it is in an older memtable or a file, or deleted), and the caller then reads through
// RocksDB. What is found is the database's newest state: a write after the memtable was made
// went to it, and the caller's lock keeps the list's elements from changing. It is not the
// batch's: the caller decides whether its reads must see the batch's own writes.
template <typename Visit>
bool VisitNewestMemtable(Context& ctx, const std::string& lower, uint64_t first_index,
                         uint64_t count, bool descending, Visit&& visit) {
  const SkipListMemTableFactory* memtables =
      ctx.keyspace()->engine()->memtables(ColumnFamily::kSubkey);
  // A read of a snapshot (an RDB save) must not see what was written after it.
  if (memtables == nullptr || ctx.batch().snapshot() != nullptr) return false;
  SkipListMemTableFactory::NewestReader reader = memtables->ReadNewest();
  std::vector<std::string_view> values;
  values.reserve(count);
  const size_t prefix_size = lower.size() - 8;  // an element's key: prefix, then its index
  reader.Seek(lower);
  for (uint64_t i = 0; i < count; i++, reader.Next()) {
    if (!reader.Valid() || !reader.is_value()) return false;
    rocksdb::Slice k = reader.user_key();
    if (k.size() != lower.size() || DecodeFixed64(k.data() + prefix_size) != first_index + i ||
        memcmp(k.data(), lower.data(), prefix_size) != 0) {
      return false;
    }
    rocksdb::Slice value = reader.value();
    values.emplace_back(value.data(), value.size());
  }
  for (uint64_t i = 0; i < count; i++) {
    uint64_t at = descending ? count - 1 - i : i;
    if (!visit(first_index + at, values[at])) break;
  }
  return true;
}

// Reads the element a single pop takes (key `element`, at `end`) into *value. A pop that
// follows another write to the same list in one write group (a pipeline of pops, or many clients
// popping one queue) reads for the pops after it: the next elements at its end, when they are
// all in the newest memtable, else, at the left end, through one iterator the batch keeps, a
// step from the element before, else the next elements in one pass (docs/benchmarks.md,
// "Lists"). The group holds the list's lock until it commits, so what was read stays current.
Status ReadPopped(Context& ctx, int db, std::string_view key, const Metadata& meta, ListEnd end,
                  const std::string& element, std::string* value) {
  Batch& batch = ctx.batch();
  // Nothing to gain where the read is answered already, or needs the batch's own writes (a pop
  // right after a push to the same end).
  if (meta.size < 2 || batch.ReadAheadHolds(element) || batch.MayHaveWritten(element) ||
      !batch.WritesMetadata(MetadataKey(ctx.keyspace()->Physical(db), key))) {
    return ReadElement(ctx, key, element, value);
  }
  const bool from_upper = end == ListEnd::kRight;
  // An element's key is the list's prefix, then its index.
  const rocksdb::Slice prefix(element.data(), element.size() - 8);
  auto read_in_order = [&] {
    rocksdb::Status s = batch.ReadInOrder(prefix, element, value);
    if (s.IsNotFound()) return MissingElements(key);
    if (!s.ok()) return Status::IOError(s.ToString());
    return Status::OK();
  };
  if (!from_upper && batch.ReadsInOrder(prefix)) return read_in_order();
  uint64_t n = std::min(kPopReadAhead, meta.size);
  uint64_t first = from_upper ? meta.list_tail - n : meta.list_head;
  std::string lower = IndexKey(ctx, db, key, meta, first);
  std::vector<std::pair<std::string, std::string>> entries;
  size_t bytes = 0;
  std::string element_key = lower;
  auto hold = [&](uint64_t index, std::string_view v) {
    element_key.replace(element_key.size() - 8, 8, EncodeListIndex(index));
    entries.emplace_back(element_key, v);
    bytes += v.size();
    return bytes < kPopReadAheadBytes;
  };
  if (VisitNewestMemtable(ctx, lower, first, n, from_upper, hold)) {
    if (from_upper) std::reverse(entries.begin(), entries.end());
    batch.HoldReadAhead(std::move(entries));
  } else if (!from_upper) {
    return read_in_order();
  } else {
    batch.ReadAhead(prefix, lower, IndexKey(ctx, db, key, meta, first + n), kPopReadAheadBytes,
                    true);
  }
  return ReadElement(ctx, key, element, value);
}

// Removes up to `count` elements from `end` of `meta` (in pop order into *out) without storing
// the metadata. Only the list's ends move: an element outside [head, tail) is dead to every
// reader, and compaction drops it (types/compaction.h), so a pop writes no tombstone.
Status PopRaw(Context& ctx, int db, std::string_view key, Metadata& meta, ListEnd end,
              uint64_t count, std::vector<std::string>* out) {
  uint64_t n = std::min(count, meta.size);
  uint64_t first = end == ListEnd::kLeft ? 0 : meta.size - n;
  if (n == 1) {
    // A single pop (the common case) builds its element's key once, for the read ahead and the
    // read.
    std::string element = IndexKey(ctx, db, key, meta, meta.list_head + first);
    std::string value;
    Status s = ReadPopped(ctx, db, key, meta, end, element, &value);
    if (!s.ok()) return s;
    out->push_back(std::move(value));
  } else {
    size_t base = out->size();
    Status s = ListRead(ctx, db, key, meta, first, n, out);
    if (!s.ok()) return s;
    if (end == ListEnd::kRight) {
      std::reverse(out->begin() + static_cast<ptrdiff_t>(base), out->end());
    }
  }
  const uint64_t old_head = meta.list_head, old_tail = meta.list_tail;
  if (end == ListEnd::kLeft) {
    meta.list_head += n;
  } else {
    meta.list_tail -= n;
  }
  meta.size -= n;
  NoteDeadEnds(ctx, db, key, old_head, old_tail, meta);
  return Status::OK();
}

}  // namespace

std::string EncodeListIndex(uint64_t index) {
  std::string out;
  PutFixed64(&out, index);
  return out;
}

std::optional<uint64_t> ListOffset(int64_t index, uint64_t size) {
  auto n = static_cast<int64_t>(size);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return std::nullopt;
  return static_cast<uint64_t>(index);
}

std::optional<std::pair<uint64_t, uint64_t>> ListRange(int64_t start, int64_t stop, uint64_t size) {
  auto n = static_cast<int64_t>(size);
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (start > stop || start >= n) return std::nullopt;
  if (stop >= n) stop = n - 1;
  return std::make_pair(static_cast<uint64_t>(start), static_cast<uint64_t>(stop));
}

StatusOr<KeyState> LookupList(Context& ctx, int db, std::string_view key) {
  return LookupCollection(ctx, db, key, RedisType::kList);
}

Status ListRead(Context& ctx, int db, std::string_view key, const Metadata& meta, uint64_t first,
                uint64_t count, std::vector<std::string>* out) {
  return ListVisit(ctx, db, key, meta, first, count, [out](std::string_view value) {
    out->emplace_back(value);
    return true;
  });
}

Status ListVisit(Context& ctx, int db, std::string_view key, const Metadata& meta, uint64_t first,
                 uint64_t count, const std::function<bool(std::string_view value)>& visit) {
  if (count == 0) return Status::OK();
  if (count <= kPointReadLimit) {
    std::string value;
    for (uint64_t i = 0; i < count; i++) {
      Status s =
          ReadElement(ctx, key, IndexKey(ctx, db, key, meta, meta.list_head + first + i), &value);
      if (!s.ok()) return s;
      if (!visit(value)) return Status::OK();
    }
    return Status::OK();
  }
  // The elements are exactly the `count` keys from `lower` to `last`, so the iterator stops by
  // count and needs no upper bound, which RocksDB would compare with every key it steps to. If
  // an element were missing, the count'th key read would not be `last`: a visitor may then have
  // seen keys beyond the range, but the command fails rather than reply.
  std::string lower = IndexKey(ctx, db, key, meta, meta.list_head + first);
  // Reads of a command whose batch holds writes must see them: those take the iterator.
  if (ctx.batch().empty() &&
      VisitNewestMemtable(ctx, lower, meta.list_head + first, count, false,
                          [&visit](uint64_t, std::string_view value) { return visit(value); })) {
    return Status::OK();
  }
  std::string last = IndexKey(ctx, db, key, meta, meta.list_head + first + count - 1);
  rocksdb::Slice lower_slice(lower);
  rocksdb::ReadOptions options;
  options.iterate_lower_bound = &lower_slice;
  options.pin_data = true;  // spares the iterator a copy of each key
  auto it = ctx.batch().NewIterator(ColumnFamily::kSubkey, &options);
  uint64_t n = 0;
  for (it->Seek(lower_slice); it->Valid(); it->Next()) {
    if (++n == count) break;
    if (!visit(std::string_view(it->value().data(), it->value().size()))) return Status::OK();
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  if (n != count || it->key() != rocksdb::Slice(last)) return MissingElements(key);
  visit(std::string_view(it->value().data(), it->value().size()));
  return Status::OK();
}

Status ListScan(Context& ctx, int db, std::string_view key, const Metadata& meta, bool reverse,
                const std::function<bool(uint64_t, const std::string&)>& fn) {
  std::vector<std::string> chunk;
  uint64_t done = 0;
  while (done < meta.size) {
    uint64_t n = std::min(kScanChunk, meta.size - done);
    uint64_t first = reverse ? meta.size - done - n : done;
    chunk.clear();
    Status s = ListRead(ctx, db, key, meta, first, n, &chunk);
    if (!s.ok()) return s;
    for (uint64_t i = 0; i < n; i++) {
      uint64_t j = reverse ? n - 1 - i : i;
      if (!fn(first + j, chunk[j])) return Status::OK();
    }
    done += n;
  }
  return Status::OK();
}

void ListSet(Context& ctx, int db, std::string_view key, const KeyState& state, uint64_t offset,
             std::string_view value) {
  const Metadata& meta = state.meta;
  ctx.batch().Put(ColumnFamily::kSubkey, IndexKey(ctx, db, key, meta, meta.list_head + offset),
                  value);
  ctx.Write(db, key, meta, state);  // unchanged, but marks the key modified for WATCH
}

uint64_t ListPushTo(Context& ctx, int db, std::string_view key, const KeyState& state, ListEnd end,
                    std::span<const std::string_view> items) {
  // Starting from the middle of a 64-bit index space, neither end can run out in practice.
  Metadata meta = state.live() ? state.meta : NewList();
  for (std::string_view item : items) PushRaw(ctx, db, key, meta, end, item);
  ctx.Write(db, key, meta, state);
  return meta.size;
}

void ListReplace(Context& ctx, int db, std::string_view key, const KeyState& old,
                 std::span<const std::string_view> items) {
  Metadata meta = NewList();
  for (std::string_view item : items) PushRaw(ctx, db, key, meta, ListEnd::kRight, item);
  ctx.Write(db, key, meta, old);
}

StatusOr<uint64_t> ListPush(Context& ctx, int db, std::string_view key, ListEnd end,
                            std::span<const std::string_view> items, bool only_if_exists) {
  auto state = LookupList(ctx, db, key);
  if (!state.ok()) return state.status();
  if (only_if_exists && !state->live()) return uint64_t{0};
  return ListPushTo(ctx, db, key, *state, end, items);
}

StatusOr<std::vector<std::string>> ListPopFrom(Context& ctx, int db, std::string_view key,
                                               const KeyState& state, ListEnd end, uint64_t count) {
  Metadata meta = state.meta;
  std::vector<std::string> out;
  Status s = PopRaw(ctx, db, key, meta, end, count, &out);
  if (!s.ok()) return s;
  ctx.WriteCollection(db, key, meta, state);
  return out;
}

StatusOr<std::vector<std::string>> ListPop(Context& ctx, int db, std::string_view key, ListEnd end,
                                           uint64_t count) {
  auto state = LookupList(ctx, db, key);
  if (!state.ok()) return state.status();
  if (!state->live()) return std::vector<std::string>();
  return ListPopFrom(ctx, db, key, *state, end, count);
}

namespace {

StatusOr<std::optional<std::string>> PopOne(Context& ctx, int db, std::string_view key,
                                            ListEnd end) {
  auto popped = ListPop(ctx, db, key, end, 1);
  if (!popped.ok()) return popped.status();
  if (popped->empty()) return std::optional<std::string>();
  return std::optional<std::string>(std::move(popped->front()));
}

}  // namespace

StatusOr<std::optional<std::string>> PopFront(Context& ctx, int db, std::string_view key) {
  return PopOne(ctx, db, key, ListEnd::kLeft);
}

StatusOr<std::optional<std::string>> PopBack(Context& ctx, int db, std::string_view key) {
  return PopOne(ctx, db, key, ListEnd::kRight);
}

StatusOr<std::optional<std::string>> ListMove(Context& ctx, int db, std::string_view src,
                                              std::string_view dst, ListEnd from, ListEnd to) {
  auto src_state = LookupList(ctx, db, src);
  if (!src_state.ok()) return src_state.status();
  if (!src_state->live()) return std::optional<std::string>();
  std::vector<std::string> value;
  if (src == dst) {
    // Rotation: one incarnation throughout, so the key (and its TTL) survives even when it
    // holds a single element.
    Metadata meta = src_state->meta;
    Status s = PopRaw(ctx, db, src, meta, from, 1, &value);
    if (!s.ok()) return s;
    PushRaw(ctx, db, src, meta, to, value[0]);
    ctx.Write(db, src, meta, *src_state);
    return std::optional<std::string>(std::move(value[0]));
  }
  auto dst_state = LookupList(ctx, db, dst);
  if (!dst_state.ok()) return dst_state.status();
  Metadata meta = src_state->meta;
  Status s = PopRaw(ctx, db, src, meta, from, 1, &value);
  if (!s.ok()) return s;
  ctx.WriteCollection(db, src, meta, *src_state);
  const std::string_view moved[] = {value[0]};
  ListPushTo(ctx, db, dst, *dst_state, to, moved);
  return std::optional<std::string>(std::move(value[0]));
}

StatusOr<int64_t> ListInsert(Context& ctx, int db, std::string_view key, const KeyState& state,
                             bool after, std::string_view pivot, std::string_view element) {
  Metadata meta = state.meta;
  const uint64_t size = meta.size;
  // Elements before the pivot, kept only while they could be the shorter side to shift.
  std::vector<std::string> before;
  std::optional<uint64_t> found;
  Status s = ListScan(ctx, db, key, meta, false, [&](uint64_t offset, const std::string& v) {
    if (v == pivot) {
      found = offset;
      return false;
    }
    if (offset <= size / 2) before.push_back(v);
    return true;
  });
  if (!s.ok()) return s;
  if (!found) return int64_t{-1};
  uint64_t pos = *found + (after ? 1 : 0);  // the new element's offset
  auto put = [&](uint64_t index, std::string_view v) {
    ctx.batch().Put(ColumnFamily::kSubkey, IndexKey(ctx, db, key, meta, index), v);
  };
  if (pos < size - pos) {
    // Shift the `pos` elements before the insertion point one to the left.
    if (after) before.push_back(std::string(pivot));
    for (uint64_t i = 0; i < pos; i++) put(meta.list_head - 1 + i, before[i]);
    put(meta.list_head - 1 + pos, element);
    meta.list_head--;
  } else {
    // Shift the elements from the insertion point on one to the right.
    std::vector<std::string> rest;
    s = ListRead(ctx, db, key, meta, pos, size - pos, &rest);
    if (!s.ok()) return s;
    for (uint64_t i = 0; i < rest.size(); i++) put(meta.list_head + pos + 1 + i, rest[i]);
    put(meta.list_head + pos, element);
    meta.list_tail++;
  }
  meta.size++;
  ctx.Write(db, key, meta, state);
  return static_cast<int64_t>(meta.size);
}

StatusOr<int64_t> ListRemove(Context& ctx, int db, std::string_view key, const KeyState& state,
                             int64_t count, std::string_view element) {
  Metadata meta = state.meta;
  const uint64_t size = meta.size;
  std::vector<std::string> all;
  Status s = ListRead(ctx, db, key, meta, 0, size, &all);
  if (!s.ok()) return s;
  const bool from_right = count < 0;
  // count == INT64_MIN: its magnitude does not fit an int64, but any limit >= size is "all".
  uint64_t limit = count == 0  ? size
                   : count < 0 ? static_cast<uint64_t>(-(count + 1)) + 1
                               : static_cast<uint64_t>(count);
  // Walk from the removal side; kept elements slide toward it, and the far end gives up
  // `removed` indexes.
  uint64_t removed = 0;
  uint64_t write = 0;  // steps from the removal side of the next kept element's new place
  bool moving = false;
  auto index_at = [&](uint64_t step) {
    return from_right ? meta.list_tail - 1 - step : meta.list_head + step;
  };
  for (uint64_t step = 0; step < size; step++) {
    const std::string& v = all[from_right ? size - 1 - step : step];
    if (removed < limit && v == element) {
      removed++;
      moving = true;
      continue;
    }
    if (moving) {
      ctx.batch().Put(ColumnFamily::kSubkey, IndexKey(ctx, db, key, meta, index_at(write)), v);
    }
    write++;
  }
  if (removed == 0) return int64_t{0};
  // The far end's `removed` indexes fall outside the list: no deletions (see PopRaw).
  const uint64_t old_head = meta.list_head, old_tail = meta.list_tail;
  if (from_right) {
    meta.list_head += removed;
  } else {
    meta.list_tail -= removed;
  }
  meta.size -= removed;
  NoteDeadEnds(ctx, db, key, old_head, old_tail, meta);
  ctx.WriteCollection(db, key, meta, state);
  return static_cast<int64_t>(removed);
}

uint64_t ListTrim(Context& ctx, int db, std::string_view key, const KeyState& state, int64_t start,
                  int64_t stop) {
  Metadata meta = state.meta;
  auto range = ListRange(start, stop, meta.size);
  if (!range) {
    ctx.Delete(db, key, state);
    return state.meta.size;
  }
  auto [first, last] = *range;
  // Only the ends move: the trimmed elements fall outside the list, as popped ones do (PopRaw),
  // so a trim costs the same however many it drops. Written even when nothing was trimmed:
  // Redis signals the key (WATCH) either way.
  meta.list_tail = meta.list_head + last + 1;
  meta.list_head += first;
  meta.size = last - first + 1;
  NoteDeadEnds(ctx, db, key, state.meta.list_head, state.meta.list_tail, meta);
  ctx.Write(db, key, meta, state);
  return state.meta.size - meta.size;
}

}  // namespace basalt
