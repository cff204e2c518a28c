#include "types/stream.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "common/coding.h"

namespace basalt {

namespace {

constexpr char kEntryTag = 'E';
constexpr char kGroupTag = 'G';
constexpr char kConsumerTag = 'C';
constexpr char kPendingTag = 'P';
constexpr char kConsumerPendingTag = 'Q';

void PutId(std::string* out, StreamId id) {
  PutFixed64(out, id.ms);
  PutFixed64(out, id.seq);
}

bool GetId(std::string_view* in, StreamId* id) {
  return GetFixed64(in, &id->ms) && GetFixed64(in, &id->seq);
}

std::string EntryMember(StreamId id) {
  std::string out(1, kEntryTag);
  PutId(&out, id);
  return out;
}

std::string GroupMember(std::string_view group) {
  std::string out(1, kGroupTag);
  out.append(group);
  return out;
}

// tag | len(4) | group: the start of a group's consumers or pending list.
std::string GroupScoped(char tag, std::string_view group) {
  std::string out(1, tag);
  PutLengthPrefixed(&out, group);
  return out;
}

std::string ConsumerPendingPrefix(std::string_view group, std::string_view consumer) {
  std::string out = GroupScoped(kConsumerPendingTag, group);
  PutLengthPrefixed(&out, consumer);
  return out;
}

std::string EncodeGroup(const StreamGroup& g) {
  std::string out;
  PutId(&out, g.last_id);
  PutFixed64(&out, static_cast<uint64_t>(g.entries_read));
  PutFixed64(&out, g.pending);
  PutFixed64(&out, g.consumers);
  return out;
}

bool DecodeGroup(std::string_view in, StreamGroup* g) {
  uint64_t read;
  if (!GetId(&in, &g->last_id) || !GetFixed64(&in, &read) || !GetFixed64(&in, &g->pending) ||
      !GetFixed64(&in, &g->consumers)) {
    return false;
  }
  g->entries_read = static_cast<int64_t>(read);
  return in.empty();
}

std::string EncodeConsumer(const StreamConsumer& c) {
  std::string out;
  PutFixed64(&out, static_cast<uint64_t>(c.seen_ms));
  PutFixed64(&out, static_cast<uint64_t>(c.active_ms));
  PutFixed64(&out, c.pending);
  return out;
}

bool DecodeConsumer(std::string_view in, StreamConsumer* c) {
  uint64_t seen, active;
  if (!GetFixed64(&in, &seen) || !GetFixed64(&in, &active) || !GetFixed64(&in, &c->pending)) {
    return false;
  }
  c->seen_ms = static_cast<int64_t>(seen);
  c->active_ms = static_cast<int64_t>(active);
  return in.empty();
}

std::string EncodePending(const PendingEntry& p) {
  std::string out;
  PutFixed64(&out, static_cast<uint64_t>(p.delivery_ms));
  PutFixed64(&out, p.delivery_count);
  out.append(p.consumer);
  return out;
}

bool DecodePending(std::string_view in, PendingEntry* p) {
  uint64_t when;
  if (!GetFixed64(&in, &when) || !GetFixed64(&in, &p->delivery_count)) return false;
  p->delivery_ms = static_cast<int64_t>(when);
  p->consumer.assign(in);
  return true;
}

Status Corrupt(const char* what) {
  return Status::IOError(std::string("corrupt stream ") + what);
}

}  // namespace

std::string FormatStreamId(StreamId id) {
  return std::to_string(id.ms) + "-" + std::to_string(id.seq);
}

bool ParseStreamIdPart(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    uint64_t digit = static_cast<uint64_t>(ch - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

bool NextStreamId(StreamId id, StreamId* out) {
  if (id.seq != UINT64_MAX) {
    *out = {id.ms, id.seq + 1};
    return true;
  }
  if (id.ms == UINT64_MAX) return false;
  *out = {id.ms + 1, 0};
  return true;
}

bool PrevStreamId(StreamId id, StreamId* out) {
  if (id.seq != 0) {
    *out = {id.ms, id.seq - 1};
    return true;
  }
  if (id.ms == 0) return false;
  *out = {id.ms - 1, UINT64_MAX};
  return true;
}

std::string EncodeStreamFields(const std::vector<std::string>& argv, size_t first) {
  std::string out;
  size_t bytes = 4;
  for (size_t i = first; i < argv.size(); i++) bytes += 4 + argv[i].size();
  out.reserve(bytes);
  PutFixed32(&out, static_cast<uint32_t>((argv.size() - first) / 2));
  for (size_t i = first; i < argv.size(); i++) PutLengthPrefixed(&out, argv[i]);
  return out;
}

std::string EncodeStreamFields(const StreamFields& fields) {
  std::string out;
  PutFixed32(&out, static_cast<uint32_t>(fields.size()));
  for (const auto& [field, value] : fields) {
    PutLengthPrefixed(&out, field);
    PutLengthPrefixed(&out, value);
  }
  return out;
}

bool DecodeStreamFields(std::string_view stored, StreamFields* out) {
  uint32_t n;
  if (!GetFixed32(&stored, &n) || n > stored.size() / 8) return false;
  out->clear();
  out->reserve(n);
  for (uint32_t i = 0; i < n; i++) {
    std::string_view field, value;
    if (!GetLengthPrefixed(&stored, &field) || !GetLengthPrefixed(&stored, &value)) return false;
    out->emplace_back(field, value);
  }
  return stored.empty();
}

std::string StreamStore::Key(std::string_view member) const {
  return MemberKey(ctx_, db_, key_, version_, member);
}

Status StreamStore::Get(std::string_view member, std::string* value) {
  rocksdb::Status s = ctx_.batch().Get(ColumnFamily::kSubkey, Key(member), value);
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound();
  return Status::IOError(s.ToString());
}

Status StreamStore::Walk(
    std::string_view from, std::string_view to,
    const std::function<bool(std::string_view member, std::string_view value)>& visit) {
  // Bounded just past `to`: the range's end may be followed by many deleted entries (the acked
  // pending entries of a consumer), which an open walk would step over to find nothing.
  std::string limit(to);
  limit.push_back('\0');
  MemberIterator it(ctx_, ColumnFamily::kSubkey, db_, key_, version_, limit);
  for (it.Seek(from); it.Valid() && it.member() <= to; it.Next()) {
    if (!visit(it.member(), it.value())) break;
  }
  return it.status();
}

Status StreamStore::WalkPrefix(
    std::string_view prefix,
    const std::function<bool(std::string_view member, std::string_view value)>& visit) {
  // Bounded at the prefix's end, for the same reason as Walk: the first member after every one
  // that starts with `prefix`. A prefix starts with a tag byte below 0xff, so some byte of it
  // can be raised.
  std::string limit(prefix);
  while (!limit.empty() && static_cast<uint8_t>(limit.back()) == 0xff) limit.pop_back();
  if (!limit.empty()) limit.back() = static_cast<char>(static_cast<uint8_t>(limit.back()) + 1);
  MemberIterator it(ctx_, ColumnFamily::kSubkey, db_, key_, version_, limit);
  for (it.Seek(prefix); it.Valid() && it.member().starts_with(prefix); it.Next()) {
    if (!visit(it.member(), it.value())) break;
  }
  return it.status();
}

Status StreamStore::ScanEntries(const Metadata& meta, StreamId start, StreamId end, bool reverse,
                                uint64_t count, const std::function<bool(StreamEntry&&)>& visit) {
  if (meta.size == 0 || start > end) return Status::OK();
  if (start < meta.stream.first_id) start = meta.stream.first_id;
  if (end > meta.stream.last_id) end = meta.stream.last_id;
  if (start > end) return Status::OK();
  const std::string low = EntryMember(start);
  const std::string high = EntryMember(end);
  // Bounded to the range, so that a walk that reaches its end stops there instead of stepping
  // over what lies beyond: the tombstones of trimmed entries below the first ID, or of deleted
  // ones after the last.
  std::string limit = high;
  limit.push_back('\0');
  MemberIterator it(ctx_, ColumnFamily::kSubkey, db_, key_, version_, low, limit);
  uint64_t seen = 0;
  if (reverse) {
    it.SeekToLast(high);
  } else {
    it.Seek(low);
  }
  while (it.Valid() && (count == 0 || seen < count)) {
    std::string_view member = it.member();
    StreamEntry entry;
    std::string_view id_bytes = member.substr(1);
    if (member[0] != kEntryTag || !GetId(&id_bytes, &entry.id) ||
        !DecodeStreamFields(it.value(), &entry.fields)) {
      return Corrupt("entry");
    }
    seen++;
    if (!visit(std::move(entry))) break;
    if (reverse) {
      it.Prev();
    } else {
      it.Next();
    }
  }
  return it.status();
}

StatusOr<std::optional<StreamEntry>> StreamStore::GetEntry(StreamId id) {
  std::string value;
  Status s = Get(EntryMember(id), &value);
  if (s.IsNotFound()) return std::optional<StreamEntry>();
  if (!s.ok()) return s;
  StreamEntry entry{id, {}};
  if (!DecodeStreamFields(value, &entry.fields)) return Corrupt("entry");
  return std::optional<StreamEntry>(std::move(entry));
}

void StreamStore::PutEntry(StreamId id, std::string_view stored) {
  ctx_.batch().Put(ColumnFamily::kSubkey, Key(EntryMember(id)), stored);
}

void StreamStore::DeleteEntry(StreamId id) {
  ctx_.batch().Delete(ColumnFamily::kSubkey, Key(EntryMember(id)));
}

uint64_t HeadBlockEntries(const Metadata& meta, uint64_t node_entries) {
  const uint64_t before_head =
      meta.stream.entries_added > meta.size ? meta.stream.entries_added - meta.size : 0;
  const uint64_t trimmed_from_block =
      before_head >= meta.stream.block_origin ? before_head - meta.stream.block_origin : 0;
  return node_entries - trimmed_from_block % node_entries;
}

StatusOr<uint64_t> StreamStore::TrimHead(Metadata* meta, std::optional<uint64_t> max_len,
                                         std::optional<StreamId> min_id, bool approx,
                                         uint64_t limit, uint64_t node_entries) {
  // The entries the head may lose: the excess over MAXLEN or those below MINID, at most `limit`.
  const uint64_t cap = limit != 0 ? std::min(limit, meta->size) : meta->size;
  uint64_t want = cap;
  if (max_len) want = std::min(cap, meta->size > *max_len ? meta->size - *max_len : 0);
  if (min_id && meta->stream.first_id >= *min_id) want = 0;
  // A `~` trim that cannot take a whole block reads nothing: a producer trimming on every XADD
  // reads the head once per block, not once per entry.
  const uint64_t head_block = HeadBlockEntries(*meta, node_entries);
  if (approx && want < head_block && want != meta->size && !min_id) want = 0;
  if (want == 0) return uint64_t{0};
  // The IDs from the head: the candidates and the entry after them, which becomes the first.
  std::vector<StreamId> head;
  uint64_t candidates = 0;
  Status s = ScanEntries(*meta, StreamId{}, kMaxStreamId, false, want + 1, [&](StreamEntry&& e) {
    head.push_back(e.id);
    if (candidates == want || (min_id && e.id >= *min_id)) return false;
    candidates++;
    return true;
  });
  if (!s.ok()) return s;
  // `~` takes whole blocks from the head (the last block may be short), as Redis takes whole
  // radix-tree nodes.
  uint64_t removed = candidates;
  if (approx && candidates != meta->size) {
    removed = candidates < head_block
                  ? 0
                  : head_block + (candidates - head_block) / node_entries * node_entries;
  }
  if (removed == 0) return uint64_t{0};
  // Tombstones: the reads seek past them to the first ID, and once flushed they make their file
  // deletion-dense, which RocksDB's compact-on-deletion collector compacts early.
  for (uint64_t i = 0; i < removed; i++) DeleteEntry(head[i]);
  meta->size -= removed;
  meta->stream.first_id = meta->size == 0 ? StreamId{} : head[removed];
  return removed;
}

Status StreamStore::RefreshFirstId(Metadata* meta, StreamId from) {
  if (meta->size == 0) {
    meta->stream.first_id = StreamId{};
    return Status::OK();
  }
  Metadata probe = *meta;
  probe.stream.first_id = from;
  return ScanEntries(probe, from, kMaxStreamId, false, 1, [&](StreamEntry&& e) {
    meta->stream.first_id = e.id;
    return false;
  });
}

StatusOr<StreamId> StreamStore::LastLiveId(const Metadata& meta) {
  StreamId last;
  Status s = ScanEntries(meta, StreamId{}, kMaxStreamId, true, 1, [&](StreamEntry&& e) {
    last = e.id;
    return false;
  });
  if (!s.ok()) return s;
  return last;
}

StatusOr<std::optional<StreamGroup>> StreamStore::GetGroup(std::string_view group) {
  std::string value;
  Status s = Get(GroupMember(group), &value);
  if (s.IsNotFound()) return std::optional<StreamGroup>();
  if (!s.ok()) return s;
  StreamGroup g;
  if (!DecodeGroup(value, &g)) return Corrupt("group");
  return std::optional<StreamGroup>(g);
}

void StreamStore::PutGroup(std::string_view group, const StreamGroup& g) {
  ctx_.batch().Put(ColumnFamily::kSubkey, Key(GroupMember(group)), EncodeGroup(g));
}

StatusOr<std::vector<std::pair<std::string, StreamGroup>>> StreamStore::ListGroups() {
  std::vector<std::pair<std::string, StreamGroup>> out;
  bool corrupt = false;
  Status s =
      WalkPrefix(std::string(1, kGroupTag), [&](std::string_view member, std::string_view value) {
        StreamGroup g;
        if (!DecodeGroup(value, &g)) {
          corrupt = true;
          return false;
        }
        out.emplace_back(member.substr(1), g);
        return true;
      });
  if (!s.ok()) return s;
  if (corrupt) return Corrupt("group");
  return out;
}

Status StreamStore::DeleteGroup(std::string_view group) {
  std::vector<std::string> members;
  for (char tag : {kConsumerTag, kPendingTag, kConsumerPendingTag}) {
    std::string prefix = GroupScoped(tag, group);
    Status s = WalkPrefix(prefix, [&](std::string_view member, std::string_view) {
      members.emplace_back(member);
      return true;
    });
    if (!s.ok()) return s;
  }
  members.push_back(GroupMember(group));
  for (const std::string& member : members) {
    ctx_.batch().Delete(ColumnFamily::kSubkey, Key(member));
  }
  return Status::OK();
}

StatusOr<std::optional<StreamConsumer>> StreamStore::GetConsumer(std::string_view group,
                                                                 std::string_view consumer) {
  std::string member = GroupScoped(kConsumerTag, group);
  member.append(consumer);
  std::string value;
  Status s = Get(member, &value);
  if (s.IsNotFound()) return std::optional<StreamConsumer>();
  if (!s.ok()) return s;
  StreamConsumer c;
  if (!DecodeConsumer(value, &c)) return Corrupt("consumer");
  return std::optional<StreamConsumer>(c);
}

void StreamStore::PutConsumer(std::string_view group, std::string_view consumer,
                              const StreamConsumer& c) {
  std::string member = GroupScoped(kConsumerTag, group);
  member.append(consumer);
  ctx_.batch().Put(ColumnFamily::kSubkey, Key(member), EncodeConsumer(c));
}

void StreamStore::DeleteConsumer(std::string_view group, std::string_view consumer) {
  std::string member = GroupScoped(kConsumerTag, group);
  member.append(consumer);
  ctx_.batch().Delete(ColumnFamily::kSubkey, Key(member));
}

StatusOr<std::vector<std::pair<std::string, StreamConsumer>>> StreamStore::ListConsumers(
    std::string_view group) {
  std::vector<std::pair<std::string, StreamConsumer>> out;
  const std::string prefix = GroupScoped(kConsumerTag, group);
  bool corrupt = false;
  Status s = WalkPrefix(prefix, [&](std::string_view member, std::string_view value) {
    StreamConsumer c;
    if (!DecodeConsumer(value, &c)) {
      corrupt = true;
      return false;
    }
    out.emplace_back(member.substr(prefix.size()), c);
    return true;
  });
  if (!s.ok()) return s;
  if (corrupt) return Corrupt("consumer");
  return out;
}

StatusOr<std::vector<PendingEntry>> StreamStore::ListPending(std::string_view group, StreamId start,
                                                             StreamId end, uint64_t count) {
  std::vector<PendingEntry> out;
  const std::string prefix = GroupScoped(kPendingTag, group);
  std::string from = prefix, to = prefix;
  PutId(&from, start);
  PutId(&to, end);
  bool corrupt = false;
  Status s = Walk(from, to, [&](std::string_view member, std::string_view value) {
    PendingEntry p;
    std::string_view id_bytes = member.substr(prefix.size());
    if (!GetId(&id_bytes, &p.id) || !DecodePending(value, &p)) {
      corrupt = true;
      return false;
    }
    out.push_back(std::move(p));
    return count == 0 || out.size() < count;
  });
  if (!s.ok()) return s;
  if (corrupt) return Corrupt("pending entry");
  return out;
}

StatusOr<std::vector<StreamId>> StreamStore::ListConsumerPending(std::string_view group,
                                                                 std::string_view consumer,
                                                                 StreamId start, StreamId end,
                                                                 uint64_t count) {
  std::vector<StreamId> out;
  const std::string prefix = ConsumerPendingPrefix(group, consumer);
  std::string from = prefix, to = prefix;
  PutId(&from, start);
  PutId(&to, end);
  bool corrupt = false;
  Status s = Walk(from, to, [&](std::string_view member, std::string_view) {
    StreamId id;
    std::string_view id_bytes = member.substr(prefix.size());
    if (!GetId(&id_bytes, &id)) {
      corrupt = true;
      return false;
    }
    out.push_back(id);
    return count == 0 || out.size() < count;
  });
  if (!s.ok()) return s;
  if (corrupt) return Corrupt("pending entry");
  return out;
}

StatusOr<std::optional<PendingEntry>> StreamStore::GetPending(std::string_view group, StreamId id) {
  std::string member = GroupScoped(kPendingTag, group);
  PutId(&member, id);
  std::string value;
  Status s = Get(member, &value);
  if (s.IsNotFound()) return std::optional<PendingEntry>();
  if (!s.ok()) return s;
  PendingEntry p;
  p.id = id;
  if (!DecodePending(value, &p)) return Corrupt("pending entry");
  return std::optional<PendingEntry>(std::move(p));
}

void StreamStore::PutPending(std::string_view group, const PendingEntry& p,
                             const std::string* previous_owner) {
  std::string member = GroupScoped(kPendingTag, group);
  PutId(&member, p.id);
  ctx_.batch().Put(ColumnFamily::kSubkey, Key(member), EncodePending(p));
  if (previous_owner != nullptr && *previous_owner == p.consumer) return;
  if (previous_owner != nullptr) {
    std::string old = ConsumerPendingPrefix(group, *previous_owner);
    PutId(&old, p.id);
    ctx_.batch().Delete(ColumnFamily::kSubkey, Key(old));
  }
  std::string owned = ConsumerPendingPrefix(group, p.consumer);
  PutId(&owned, p.id);
  ctx_.batch().Put(ColumnFamily::kSubkey, Key(owned), "");
}

void StreamStore::DeletePending(std::string_view group, const PendingEntry& p) {
  std::string member = GroupScoped(kPendingTag, group);
  PutId(&member, p.id);
  ctx_.batch().Delete(ColumnFamily::kSubkey, Key(member));
  std::string owned = ConsumerPendingPrefix(group, p.consumer);
  PutId(&owned, p.id);
  ctx_.batch().Delete(ColumnFamily::kSubkey, Key(owned));
}

void StreamStore::WritePendingRecord(std::string_view group, const PendingEntry& p, bool group_list,
                                     bool put) {
  std::string member =
      group_list ? GroupScoped(kPendingTag, group) : ConsumerPendingPrefix(group, p.consumer);
  PutId(&member, p.id);
  if (!put) return ctx_.batch().Delete(ColumnFamily::kSubkey, Key(member));
  ctx_.batch().Put(ColumnFamily::kSubkey, Key(member), group_list ? EncodePending(p) : "");
}

StatusOr<StreamGroupEditor::Loaded*> StreamGroupEditor::Load(std::string_view name) {
  for (auto& [loaded_name, loaded] : consumers_) {
    if (loaded_name == name) return &loaded;
  }
  auto stored = store_.GetConsumer(name_, name);
  if (!stored.ok()) return stored.status();
  Loaded loaded;
  if (stored->has_value()) {
    loaded.consumer = **stored;
    loaded.exists = true;
  }
  consumers_.emplace_back(std::string(name), loaded);
  return &consumers_.back().second;
}

StatusOr<StreamConsumer*> StreamGroupEditor::Consumer(std::string_view name, bool create,
                                                      int64_t now_ms, bool* created) {
  if (created != nullptr) *created = false;
  auto loaded = Load(name);
  if (!loaded.ok()) return loaded.status();
  Loaded* l = *loaded;
  if (!l->exists) {
    if (!create) return static_cast<StreamConsumer*>(nullptr);
    l->exists = true;
    l->dirty = true;
    l->consumer = StreamConsumer{now_ms, -1, 0};
    group_.consumers++;
    if (created != nullptr) *created = true;
  }
  l->dirty = true;
  return &l->consumer;
}

StatusOr<uint64_t> StreamGroupEditor::DeleteConsumer(std::string_view name) {
  auto loaded = Load(name);
  if (!loaded.ok()) return loaded.status();
  Loaded* l = *loaded;
  if (!l->exists) return uint64_t{0};
  auto ids = store_.ListConsumerPending(name_, name, StreamId{}, kMaxStreamId, 0);
  if (!ids.ok()) return ids.status();
  for (StreamId id : *ids) {
    store_.DeletePending(name_, PendingEntry{id, 0, 0, std::string(name)});
  }
  group_.pending -= std::min<uint64_t>(group_.pending, ids->size());
  group_.consumers--;
  l->exists = false;
  l->dirty = true;
  return static_cast<uint64_t>(ids->size());
}

Status StreamGroupEditor::SetPending(const PendingEntry& p, const PendingEntry* previous) {
  auto owner = Load(p.consumer);
  if (!owner.ok()) return owner.status();
  if (previous == nullptr) {
    group_.pending++;
    (*owner)->consumer.pending++;
    (*owner)->dirty = true;
  } else if (previous->consumer != p.consumer) {
    auto before = Load(previous->consumer);
    if (!before.ok()) return before.status();
    if ((*before)->consumer.pending > 0) (*before)->consumer.pending--;
    (*before)->dirty = true;
    (*owner)->consumer.pending++;
    (*owner)->dirty = true;
  }
  store_.PutPending(name_, p, previous != nullptr ? &previous->consumer : nullptr);
  return Status::OK();
}

Status StreamGroupEditor::RemovePending(const PendingEntry& p) {
  auto owner = Load(p.consumer);
  if (!owner.ok()) return owner.status();
  if ((*owner)->consumer.pending > 0) (*owner)->consumer.pending--;
  (*owner)->dirty = true;
  if (group_.pending > 0) group_.pending--;
  store_.DeletePending(name_, p);
  return Status::OK();
}

Status StreamGroupEditor::AddPendingLater(const PendingEntry& p) {
  auto owner = Load(p.consumer);
  if (!owner.ok()) return owner.status();
  group_.pending++;
  (*owner)->consumer.pending++;
  (*owner)->dirty = true;
  later_.push_back(LaterPending{p, true});
  return Status::OK();
}

Status StreamGroupEditor::RemovePendingLater(const PendingEntry& p) {
  auto owner = Load(p.consumer);
  if (!owner.ok()) return owner.status();
  if ((*owner)->consumer.pending > 0) (*owner)->consumer.pending--;
  (*owner)->dirty = true;
  if (group_.pending > 0) group_.pending--;
  later_.push_back(LaterPending{p, false});
  return Status::OK();
}

void StreamGroupEditor::Flush() {
  // Consumer ('C') and group ('G') records sort before the pending lists ('P', then 'Q').
  for (auto& [name, loaded] : consumers_) {
    if (!loaded.dirty) continue;
    if (loaded.exists) {
      store_.PutConsumer(name_, name, loaded.consumer);
    } else {
      store_.DeleteConsumer(name_, name);
    }
    loaded.dirty = false;
  }
  store_.PutGroup(name_, group_);
  if (later_.empty()) return;
  std::stable_sort(later_.begin(), later_.end(), [](const LaterPending& a, const LaterPending& b) {
    return a.entry.id < b.entry.id;
  });
  for (const LaterPending& l : later_) store_.WritePendingRecord(name_, l.entry, true, l.put);
  // A consumer's list sorts by the name's length before the name (ConsumerPendingPrefix).
  std::stable_sort(later_.begin(), later_.end(), [](const LaterPending& a, const LaterPending& b) {
    const std::string& x = a.entry.consumer;
    const std::string& y = b.entry.consumer;
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  for (const LaterPending& l : later_) store_.WritePendingRecord(name_, l.entry, false, l.put);
  later_.clear();
}

int64_t StreamEstimateDistance(const Metadata& meta, StreamId id) {
  const StreamCounters& s = meta.stream;
  const int64_t added = static_cast<int64_t>(s.entries_added);
  if (s.entries_added == 0) return 0;
  if (meta.size == 0 && id <= s.last_id) return added;
  if (id == s.last_id) return added;
  if (id > s.last_id) return -1;
  if (s.max_deleted_id.IsZero() || s.max_deleted_id < s.first_id) {
    if (id < s.first_id) return added - static_cast<int64_t>(meta.size);
    if (id == s.first_id) return added - static_cast<int64_t>(meta.size) + 1;
  }
  return -1;
}

bool StreamHasTombstonesFrom(const Metadata& meta, StreamId start) {
  const StreamCounters& s = meta.stream;
  if (meta.size == 0 || s.max_deleted_id.IsZero()) return false;
  if (s.first_id > s.max_deleted_id) return false;
  return start <= s.max_deleted_id;
}

std::optional<int64_t> StreamGroupLag(const Metadata& meta, const StreamGroup& g) {
  const int64_t added = static_cast<int64_t>(meta.stream.entries_added);
  if (added == 0) return 0;
  if (g.entries_read != -1 && !StreamHasTombstonesFrom(meta, g.last_id)) {
    return added - g.entries_read;
  }
  int64_t read = StreamEstimateDistance(meta, g.last_id);
  if (read == -1) return std::nullopt;
  return added - read;
}

}  // namespace basalt
