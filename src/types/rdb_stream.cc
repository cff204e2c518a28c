#include "types/rdb_stream.h"

#include <algorithm>
#include <unordered_set>

#include "common/coding.h"
#include "common/rdb_compact.h"
#include "common/strutil.h"
#include "types/collection.h"

namespace basalt {

namespace {

// Entry flags inside a stream listpack (t_stream.c in Redis).
constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;
// The master entry and every entry end with an element this reader checks: the master entry
// with a 0, each entry with its own element count (for backward iteration).
constexpr int64_t kFixedEntryElements = 3;  // flags, ms-diff, seq-diff
// Entries per listpack when writing, Redis's stream-node-max-entries default.
constexpr size_t kEntriesPerNode = 100;

bool ReadUnsigned(rdb::Reader& r, uint64_t* v) {
  bool encoded;
  return r.ReadLength(v, &encoded) && !encoded;
}

// A count of items each taking at least `min_bytes`: no more than the input can hold.
bool ReadBoundedCount(rdb::Reader& r, uint64_t min_bytes, uint64_t* count) {
  return ReadUnsigned(r, count) && r.Fits(*count, min_bytes);
}

bool ReadId(rdb::Reader& r, StreamId* id) {
  return ReadUnsigned(r, &id->ms) && ReadUnsigned(r, &id->seq);
}

// An ID in its raw form: 16 bytes, ms then seq, big-endian.
bool DecodeRawId(std::string_view raw, StreamId* id) {
  if (raw.size() != 16) return false;
  id->ms = DecodeFixed64(raw.data());
  id->seq = DecodeFixed64(raw.data() + 8);
  return true;
}

bool ReadRawId(rdb::Reader& r, StreamId* id) {
  std::string_view raw;
  return r.ReadBytes(16, &raw) && DecodeRawId(raw, id);
}

// A millisecond time: 8 bytes, little-endian.
bool ReadMs(rdb::Reader& r, int64_t* ms) {
  std::string_view raw;
  if (!r.ReadBytes(8, &raw)) return false;
  uint64_t v = 0;
  for (size_t i = 8; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(raw[i]);
  *ms = static_cast<int64_t>(v);
  return true;
}

void AppendRawId(std::string* out, StreamId id) {
  PutFixed64(out, id.ms);
  PutFixed64(out, id.seq);
}

void AppendMs(std::string* out, int64_t ms) {
  auto v = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The elements of one listpack node, read front to back.
class NodeCursor {
 public:
  explicit NodeCursor(const std::vector<std::string>& items) : items_(items) {}
  size_t left() const { return items_.size() - pos_; }
  size_t pos() const { return pos_; }
  bool Int(int64_t* v) {
    if (pos_ >= items_.size()) return false;
    auto parsed = ParseInt64(items_[pos_++]);
    if (!parsed) return false;
    *v = *parsed;
    return true;
  }
  // A count of at most left() / per elements, positive.
  bool Count(size_t per, int64_t* n) {
    return Int(n) && *n > 0 && static_cast<uint64_t>(*n) <= left() / per;
  }
  const std::string& At(size_t i) const { return items_[i]; }
  void Skip(size_t n) { pos_ += n; }

 private:
  const std::vector<std::string>& items_;
  size_t pos_ = 0;
};

// Appends the live entries of the node keyed `master` to *out, whose IDs must keep ascending.
bool ParseNode(StreamId master, const std::vector<std::string>& items,
               std::vector<StreamEntry>* out) {
  NodeCursor c(items);
  int64_t count, deleted, master_fields, terminator;
  if (!c.Int(&count) || !c.Int(&deleted) || !c.Count(1, &master_fields)) return false;
  size_t master_at = c.pos();
  c.Skip(master_fields);
  if (!c.Int(&terminator) || terminator != 0) return false;
  int64_t live = 0, dead = 0;
  while (c.left() > 0) {
    int64_t flags, ms_diff, seq_diff, fields, lp_count;
    if (!c.Int(&flags) || !c.Int(&ms_diff) || !c.Int(&seq_diff)) return false;
    if ((flags & ~(kFlagDeleted | kFlagSameFields)) != 0) return false;
    StreamEntry e;
    e.id = {master.ms + static_cast<uint64_t>(ms_diff),
            master.seq + static_cast<uint64_t>(seq_diff)};
    bool keep = (flags & kFlagDeleted) == 0;
    int64_t expected;
    if (flags & kFlagSameFields) {
      fields = master_fields;
      if (static_cast<uint64_t>(fields) > c.left()) return false;
      for (int64_t k = 0; keep && k < fields; k++)
        e.fields.emplace_back(c.At(master_at + k), c.At(c.pos() + k));
      c.Skip(fields);
      expected = fields + kFixedEntryElements;
    } else {
      if (!c.Count(2, &fields)) return false;
      for (int64_t k = 0; keep && k < fields; k++)
        e.fields.emplace_back(c.At(c.pos() + 2 * k), c.At(c.pos() + 2 * k + 1));
      c.Skip(2 * fields);
      expected = 2 * fields + kFixedEntryElements + 1;
    }
    if (!c.Int(&lp_count) || lp_count != expected) return false;
    if (!keep) {
      dead++;
      continue;
    }
    if (!out->empty() && e.id <= out->back().id) return false;
    out->push_back(std::move(e));
    live++;
  }
  return live == count && dead == deleted && live + dead > 0;
}

bool ReadEntries(rdb::Reader& r, RdbStream* out) {
  uint64_t nodes;
  // A node is at least its 17-byte key and a 7-byte listpack with their lengths.
  if (!ReadBoundedCount(r, 25, &nodes)) return false;
  std::vector<std::string> items;
  for (uint64_t i = 0; i < nodes; i++) {
    std::string key, lp;
    StreamId master;
    if (!r.ReadString(&key) || !DecodeRawId(key, &master) || !r.ReadString(&lp)) return false;
    items.clear();
    if (!rdb::DecodeListpack(lp, &items) || !ParseNode(master, items, &out->entries)) return false;
  }
  return true;
}

bool ReadCounters(rdb::Reader& r, uint8_t type, RdbStream* out) {
  uint64_t length;
  StreamCounters& c = out->counters;
  if (!ReadUnsigned(r, &length) || length != out->entries.size() || !ReadId(r, &c.last_id))
    return false;
  if (!out->entries.empty() && c.last_id < out->entries.back().id) return false;
  c.first_id = out->entries.empty() ? StreamId{} : out->entries.front().id;
  if (type >= kRdbTypeStreamListpacks2) {
    StreamId stored_first;
    if (!ReadId(r, &stored_first) || !ReadId(r, &c.max_deleted_id) ||
        !ReadUnsigned(r, &c.entries_added))
      return false;
  } else {
    c.entries_added = length;
  }
  if (c.entries_added < length) return false;
  // Written back from the head in whole nodes, so the head begins a node.
  c.block_origin = c.entries_added - length;
  return true;
}

// The group's pending list with the NACKs (delivery time and count), owners still unknown.
bool ReadGroupPending(rdb::Reader& r, RdbStreamGroup* g) {
  uint64_t n;
  if (!ReadBoundedCount(r, 25, &n)) return false;
  g->pending.reserve(n);
  for (uint64_t i = 0; i < n; i++) {
    PendingEntry p;
    if (!ReadRawId(r, &p.id) || !ReadMs(r, &p.delivery_ms) || !ReadUnsigned(r, &p.delivery_count))
      return false;
    if (!g->pending.empty() && p.id <= g->pending.back().id) return false;
    g->pending.push_back(std::move(p));
  }
  g->group.pending = n;
  return true;
}

bool ReadConsumers(rdb::Reader& r, uint8_t type, RdbStreamGroup* g) {
  uint64_t n;
  if (!ReadBoundedCount(r, 10, &n)) return false;
  std::unordered_set<std::string> names;
  for (uint64_t i = 0; i < n; i++) {
    std::string name;
    StreamConsumer c;
    if (!r.ReadString(&name) || !names.insert(name).second || !ReadMs(r, &c.seen_ms)) return false;
    if (type >= kRdbTypeStreamListpacks3) {
      if (!ReadMs(r, &c.active_ms)) return false;
    } else {
      c.active_ms = c.seen_ms;
    }
    if (!ReadBoundedCount(r, 16, &c.pending)) return false;
    for (uint64_t k = 0; k < c.pending; k++) {
      StreamId id;
      if (!ReadRawId(r, &id)) return false;
      auto it = std::lower_bound(g->pending.begin(), g->pending.end(), id,
                                 [](const PendingEntry& p, StreamId v) { return p.id < v; });
      if (it == g->pending.end() || it->id != id || !it->consumer.empty()) return false;
      it->consumer = name;
    }
    g->consumers.emplace_back(std::move(name), c);
  }
  g->group.consumers = n;
  for (const auto& p : g->pending)
    if (p.consumer.empty()) return false;
  return true;
}

bool ReadGroups(rdb::Reader& r, uint8_t type, RdbStream* out) {
  uint64_t n;
  if (!ReadBoundedCount(r, 5, &n)) return false;
  Metadata meta;
  meta.size = out->entries.size();
  meta.stream = out->counters;
  std::unordered_set<std::string> names;
  for (uint64_t i = 0; i < n; i++) {
    RdbStreamGroup g;
    if (!r.ReadString(&g.name) || !names.insert(g.name).second || !ReadId(r, &g.group.last_id))
      return false;
    if (type >= kRdbTypeStreamListpacks2) {
      uint64_t read;
      if (!ReadUnsigned(r, &read)) return false;
      g.group.entries_read = static_cast<int64_t>(read);
    } else {
      g.group.entries_read = StreamEstimateDistance(meta, g.group.last_id);
    }
    if (!ReadGroupPending(r, &g) || !ReadConsumers(r, type, &g)) return false;
    out->groups.push_back(std::move(g));
  }
  out->counters.groups = n;
  return true;
}

// The node of entries [first, last) as a listpack: the first entry's field names are the
// master fields, and entries with the same names store their values only.
std::string EncodeNode(std::vector<StreamEntry>::const_iterator first,
                       std::vector<StreamEntry>::const_iterator last) {
  rdb::ListpackBuilder lp;
  const StreamEntry& master = *first;
  lp.AddInt(last - first);
  lp.AddInt(0);
  lp.AddInt(static_cast<int64_t>(master.fields.size()));
  for (const auto& f : master.fields) lp.AddString(f.first);
  lp.AddInt(0);
  for (auto e = first; e != last; ++e) {
    bool same = e->fields.size() == master.fields.size() &&
                std::equal(e->fields.begin(), e->fields.end(), master.fields.begin(),
                           [](const auto& a, const auto& b) { return a.first == b.first; });
    auto n = static_cast<int64_t>(e->fields.size());
    lp.AddInt(same ? kFlagSameFields : 0);
    lp.AddInt(static_cast<int64_t>(e->id.ms - master.id.ms));
    lp.AddInt(static_cast<int64_t>(e->id.seq - master.id.seq));
    if (same) {
      for (const auto& f : e->fields) lp.AddString(f.second);
      lp.AddInt(n + kFixedEntryElements);
    } else {
      lp.AddInt(n);
      for (const auto& f : e->fields) {
        lp.AddString(f.first);
        lp.AddString(f.second);
      }
      lp.AddInt(2 * n + kFixedEntryElements + 1);
    }
  }
  return lp.Finish();
}

Status AppendGroups(StreamStore& store, std::string* out) {
  auto groups = store.ListGroups();
  if (!groups.ok()) return groups.status();
  rdb::AppendLength(out, groups->size());
  for (const auto& [name, g] : *groups) {
    rdb::AppendString(out, name);
    rdb::AppendLength(out, g.last_id.ms);
    rdb::AppendLength(out, g.last_id.seq);
    rdb::AppendLength(out, static_cast<uint64_t>(g.entries_read));
    auto pending = store.ListPending(name, StreamId{}, kMaxStreamId, 0);
    if (!pending.ok()) return pending.status();
    rdb::AppendLength(out, pending->size());
    for (const auto& p : *pending) {
      AppendRawId(out, p.id);
      AppendMs(out, p.delivery_ms);
      rdb::AppendLength(out, p.delivery_count);
    }
    auto consumers = store.ListConsumers(name);
    if (!consumers.ok()) return consumers.status();
    rdb::AppendLength(out, consumers->size());
    for (const auto& [consumer, c] : *consumers) {
      rdb::AppendString(out, consumer);
      AppendMs(out, c.seen_ms);
      auto ids = store.ListConsumerPending(name, consumer, StreamId{}, kMaxStreamId, 0);
      if (!ids.ok()) return ids.status();
      rdb::AppendLength(out, ids->size());
      for (StreamId id : *ids) AppendRawId(out, id);
    }
  }
  return Status::OK();
}

}  // namespace

bool ReadRdbStream(rdb::Reader& r, uint8_t type, RdbStream* out) {
  return ReadEntries(r, out) && ReadCounters(r, type, out) && ReadGroups(r, type, out);
}

Status AppendRdbStream(Context& ctx, int db, std::string_view key, const Metadata& meta,
                       std::string* out) {
  StreamStore store(ctx, db, key, meta.version);
  std::vector<StreamEntry> entries;
  Status s = store.ScanEntries(meta, StreamId{}, kMaxStreamId, false, 0, [&](StreamEntry&& e) {
    entries.push_back(std::move(e));
    return true;
  });
  if (!s.ok()) return s;
  out->push_back(static_cast<char>(kRdbTypeStreamListpacks2));
  rdb::AppendLength(out, (entries.size() + kEntriesPerNode - 1) / kEntriesPerNode);
  for (size_t i = 0; i < entries.size(); i += kEntriesPerNode) {
    std::string master;
    AppendRawId(&master, entries[i].id);
    rdb::AppendString(out, master);
    auto end =
        entries.begin() + static_cast<ptrdiff_t>(std::min(entries.size(), i + kEntriesPerNode));
    rdb::AppendString(out, EncodeNode(entries.begin() + static_cast<ptrdiff_t>(i), end));
  }
  const StreamCounters& c = meta.stream;
  rdb::AppendLength(out, entries.size());
  for (StreamId id : {c.last_id, c.first_id, c.max_deleted_id}) {
    rdb::AppendLength(out, id.ms);
    rdb::AppendLength(out, id.seq);
  }
  rdb::AppendLength(out, c.entries_added);
  return AppendGroups(store, out);
}

Status WriteRdbStream(Context& ctx, int db, std::string_view key, const RdbStream& s,
                      int64_t expire_ms, const KeyState& fresh) {
  Metadata meta = NewCollection(RedisType::kStream);
  meta.size = s.entries.size();
  meta.stream = s.counters;
  meta.expire_ms = expire_ms;
  StreamStore store(ctx, db, key, meta.version);
  for (const auto& e : s.entries) store.PutEntry(e.id, EncodeStreamFields(e.fields));
  for (const auto& g : s.groups) {
    store.PutGroup(g.name, g.group);
    for (const auto& [name, c] : g.consumers) store.PutConsumer(g.name, name, c);
    for (const auto& p : g.pending) store.PutPending(g.name, p, nullptr);
  }
  ctx.Write(db, key, meta, fresh);
  return Status::OK();
}

}  // namespace basalt
