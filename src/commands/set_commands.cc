// Set commands: membership, random pops and samples, SMOVE, the set algebra and SSCAN.
//
// A set is a collection (metadata with the exact member count) whose members are `subkey`
// entries with empty values. Writers read the state once with LookupCollection, change members
// through a CollectionWriter and write the metadata once; a set left empty is deleted.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>

#include "commands/command_util.h"
#include "types/set.h"

namespace basalt {

namespace {

constexpr RedisType kSet = RedisType::kSet;

// The set at `key` (live or not); nullopt after replying WRONGTYPE or an I/O error.
std::optional<KeyState> LookupSet(CommandContext& c, std::string_view key) {
  auto state = LookupCollection(c.ctx, c.db(), key, kSet);
  if (ReplyIfError(c, state.status())) return std::nullopt;
  return *state;
}

// What the members a command adds to a set do to its encoding floor, as Redis's conversions
// (t_set.c, setTypeAddAux) would: a non-integer member turns an intset into a listpack, a
// member longer than set-max-listpack-value or a set longer than set-max-listpack-entries makes
// a hashtable of a listpack, and an intset longer than set-max-intset-entries becomes a
// hashtable too.
class SetFloorOfAdded {
 public:
  void Note(std::string_view member) {
    longest_ = std::max(longest_, member.size());
    non_integer_ = non_integer_ || member.size() > 20 || !ParseInt64(member).has_value();
  }
  // The floor of a set that had `floor` and is `size` long with the noted members.
  SetFloor After(const Config& config, SetFloor floor, uint64_t size) const {
    if (longest_ > static_cast<size_t>(config.GetInt("set-max-listpack-value"))) {
      return SetFloor::kHashtable;
    }
    if (non_integer_ || floor >= SetFloor::kListpack) {
      const auto listpack_max = static_cast<uint64_t>(config.GetInt("set-max-listpack-entries"));
      return size > listpack_max ? SetFloor::kHashtable : std::max(floor, SetFloor::kListpack);
    }
    const auto intset_max = static_cast<uint64_t>(config.GetInt("set-max-intset-entries"));
    return size > intset_max ? SetFloor::kHashtable : floor;
  }

 private:
  bool non_integer_ = false;
  size_t longest_ = 0;
};

// Adds the noted members' effect to the floor of the set that `w` writes.
void RaiseFloor(CommandContext& c, CollectionWriter& w, const SetFloorOfAdded& added) {
  w.RaiseSetFloor(added.After(*c.server.config, w.set_floor(), w.size()));
}

// Whether `member` is in the incarnation `version` of `key`; an I/O error in *s.
bool HasMember(CommandContext& c, std::string_view key, uint64_t version, std::string_view member,
               Status* s) {
  std::string value;
  Status r = GetMember(c.ctx, c.db(), key, version, member, &value);
  if (r.IsNotFound()) return false;
  *s = r;
  return r.ok();
}

void SAddCommand(CommandContext& c) {
  auto state = LookupSet(c, c.arg(1));
  if (!state) return;
  CollectionWriter w(c.ctx, c.db(), c.arg(1), *state, kSet);
  int64_t added = 0;
  SetFloorOfAdded floor;
  for (size_t i = 2; i < c.argc(); i++) {
    Status s;
    // Through the writer's version, so a member named twice is counted once.
    if (w.MayHold(c.arg(i)) && HasMember(c, c.arg(1), w.version(), c.arg(i), &s)) continue;
    if (ReplyIfError(c, s)) return;
    w.Put(c.arg(i), "", true);
    floor.Note(c.arg(i));
    added++;
  }
  if (added != 0) RaiseFloor(c, w, floor);
  w.Finish();
  if (added != 0) {
    Notify(c, notify::kSet, "sadd", c.arg(1));
    CountChanges(c, added);
  }
  c.reply.Integer(added);
}

void SRemCommand(CommandContext& c) {
  auto state = LookupSet(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Integer(0);
  CollectionWriter w(c.ctx, c.db(), c.arg(1), *state, kSet);
  int64_t removed = 0;
  for (size_t i = 2; i < c.argc(); i++) {
    Status s;
    bool found = w.MayHold(c.arg(i)) && HasMember(c, c.arg(1), w.version(), c.arg(i), &s);
    if (ReplyIfError(c, s)) return;
    if (!found) continue;
    w.Remove(c.arg(i));
    removed++;
  }
  w.Finish();
  if (removed != 0) {
    CountChanges(c, removed);
    Notify(c, notify::kSet, "srem", c.arg(1));
    if (static_cast<uint64_t>(removed) >= state->meta.size)
      Notify(c, notify::kGeneric, "del", c.arg(1));
  }
  c.reply.Integer(removed);
}

void SCardCommand(CommandContext& c) {
  auto state = LookupSet(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Integer(state->live() ? static_cast<int64_t>(state->meta.size) : 0);
}

void SIsMemberGeneric(CommandContext& c, bool multi) {
  auto state = LookupSet(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  std::vector<int64_t> found;
  MemberFilterRef filter = MemberFilterOf(c.ctx, state->meta.version);
  for (size_t i = 2; i < c.argc(); i++) {
    Status s;
    bool in = state->live() && filter.MayHold(c.arg(i)) &&
              HasMember(c, c.arg(1), state->meta.version, c.arg(i), &s);
    if (ReplyIfError(c, s)) return;
    found.push_back(in ? 1 : 0);
  }
  if (multi) c.reply.Array(found.size());
  for (int64_t f : found) c.reply.Integer(f);
}

void SIsMemberCommand(CommandContext& c) {
  SIsMemberGeneric(c, false);
}
void SMIsMemberCommand(CommandContext& c) {
  SIsMemberGeneric(c, true);
}

void ReplyMembers(CommandContext& c, const std::vector<std::string>& members) {
  c.reply.Set(members.size());
  for (const auto& m : members) c.reply.Bulk(m);
}

// Streams the members into the reply (the size is known from the metadata), so a huge set costs
// at most max-reply-size of memory.
void SMembersCommand(CommandContext& c) {
  auto state = LookupSet(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Set(0);
  size_t mark = c.reply.buffer()->size();
  c.reply.Set(state->meta.size);
  uint64_t seen = 0;
  MemberIterator it(c.ctx, ColumnFamily::kSubkey, c.db(), c.arg(1), state->meta.version);
  for (it.Seek(); it.Valid() && !c.reply.overflowed(); it.Next(), seen++) c.reply.Bulk(it.member());
  if (c.reply.overflowed()) return;
  Status s = it.status();
  if (s.ok() && seen != state->meta.size)
    s = Status::IOError("set size does not match its members");
  if (!s.ok()) {
    c.reply.buffer()->resize(mark);
    ReplyIfError(c, s);
  }
}

// SPOP's random picks reach replicas as Redis sends them: the whole set popped as its deletion,
// else SREM of the members, 1,024 a command.
void ReplicatePop(CommandContext& c, const std::string& key, const std::vector<Member>& picked,
                  bool whole_set) {
  if (!Replicating(c)) return;
  if (whole_set) return ReplicateDeletion(c, key);
  constexpr size_t kMembersPerSrem = 1024;
  for (size_t first = 0; first < picked.size(); first += kMembersPerSrem) {
    std::vector<std::string> sent = {"SREM", key};
    for (size_t i = first; i < std::min(picked.size(), first + kMembersPerSrem); i++) {
      sent.push_back(picked[i].name);
    }
    ReplicateAs(c, std::move(sent));
  }
}

void SPopCommand(CommandContext& c) {
  if (c.argc() > 3) return c.reply.Error(kSyntaxError);
  std::optional<int64_t> count;
  if (c.argc() == 3) {
    count = IntArg(c, 2, "ERR value is out of range, must be positive");
    if (!count) return;
    if (*count < 0) return c.reply.Error("ERR value is out of range, must be positive");
  }
  auto state = LookupSet(c, c.arg(1));
  if (!state) return;
  if (!state->live() || (count && *count == 0)) return count ? c.reply.Set(0) : c.reply.Null();
  uint64_t n = count ? static_cast<uint64_t>(*count) : 1;
  StatusOr<std::vector<Member>> picked = std::vector<Member>{};
  // A single pop of the last member goes through PopRandomMembers too: a set drained by single
  // pops holds that member in its pool, where a full read steps over the tombstones of the whole
  // drain (632k at the end of a drain of 632k: 178-337 ms, the drain's slowest pop by far).
  if (n >= state->meta.size && count) {
    picked = ReadMembers(c.ctx, c.db(), c.arg(1), state->meta);
    if (ReplyIfError(c, picked.status())) return;
    // Popping every member deletes the key.
    CollectionWriter w(c.ctx, c.db(), c.arg(1), *state, kSet);
    for (const auto& m : *picked) w.Remove(m.name);
    w.Finish();
  } else {
    picked = PopRandomMembers(c.ctx, c.db(), c.arg(1), *state, n);
    if (ReplyIfError(c, picked.status())) return;
  }
  ReplicatePop(c, c.arg(1), *picked, n >= state->meta.size && count);
  Notify(c, notify::kSet, "spop", c.arg(1));
  if (!picked->empty()) CountChanges(c, static_cast<int64_t>(picked->size()));
  if (picked->size() >= state->meta.size) Notify(c, notify::kGeneric, "del", c.arg(1));
  if (!count) return picked->empty() ? c.reply.Null() : c.reply.Bulk(picked->front().name);
  c.reply.Set(picked->size());
  for (const auto& m : *picked) c.reply.Bulk(m.name);
}

void SRandMemberCommand(CommandContext& c) {
  if (c.argc() > 3) return c.reply.Error(kSyntaxError);
  std::optional<int64_t> count;
  if (c.argc() == 3) {
    count = IntArg(c, 2);
    if (!count) return;
    if (*count == LLONG_MIN) {
      return c.reply.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
    }
  }
  auto state = LookupSet(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live() || (count && *count == 0)) return count ? c.reply.Array(0) : c.reply.Null();
  bool repeats = !count || *count < 0;
  uint64_t n = !count ? 1 : static_cast<uint64_t>(*count < 0 ? -*count : *count);
  StatusOr<std::vector<Member>> picked =
      !repeats && n >= state->meta.size
          ? ReadMembers(c.ctx, c.db(), c.arg(1), state->meta)
          : RandomMembers(c.ctx, c.db(), c.arg(1), state->meta, n, repeats);
  if (ReplyIfError(c, picked.status())) return;
  if (!count) return picked->empty() ? c.reply.Null() : c.reply.Bulk(picked->front().name);
  c.reply.Array(picked->size());
  for (const auto& m : *picked) c.reply.Bulk(m.name);
}

void SMoveCommand(CommandContext& c) {
  const std::string &src_key = c.arg(1), &dst_key = c.arg(2), &member = c.arg(3);
  auto src = c.ctx.Lookup(c.db(), src_key);
  if (ReplyIfError(c, src.status())) return;
  auto dst = c.ctx.Lookup(c.db(), dst_key);
  if (ReplyIfError(c, dst.status())) return;
  if (!src->live()) return c.reply.Integer(0);
  if (src->meta.type != kSet || (dst->live() && dst->meta.type != kSet))
    return c.reply.Error(kWrongTypeError);
  Status s;
  bool in_src = MemberFilterOf(c.ctx, src->meta.version).MayHold(member) &&
                HasMember(c, src_key, src->meta.version, member, &s);
  if (ReplyIfError(c, s)) return;
  if (!in_src || src_key == dst_key) return c.reply.Integer(in_src ? 1 : 0);
  bool in_dst = dst->live() && MemberFilterOf(c.ctx, dst->meta.version).MayHold(member) &&
                HasMember(c, dst_key, dst->meta.version, member, &s);
  if (ReplyIfError(c, s)) return;
  CollectionWriter from(c.ctx, c.db(), src_key, *src, kSet);
  from.Remove(member);
  from.Finish();
  Notify(c, notify::kSet, "srem", src_key);
  if (src->meta.size == 1) Notify(c, notify::kGeneric, "del", src_key);
  if (!in_dst) {
    CollectionWriter to(c.ctx, c.db(), dst_key, *dst, kSet);
    to.Put(member, "", true);
    SetFloorOfAdded floor;
    floor.Note(member);
    RaiseFloor(c, to, floor);
    to.Finish();
    Notify(c, notify::kSet, "sadd", dst_key);
  }
  c.reply.Integer(1);
}

enum class SetOp { kInter, kUnion, kDiff };

// The states of the source keys, all type-checked first as Redis does; nullopt after replying.
std::optional<std::vector<KeyState>> LookupSources(CommandContext& c, size_t first, size_t n) {
  std::vector<KeyState> states;
  for (size_t i = first; i < first + n; i++) {
    auto state = LookupSet(c, c.arg(i));
    if (!state) return std::nullopt;
    CountHit(c, c.arg(i), state->live());
    states.push_back(std::move(*state));
  }
  return states;
}

// Whether `member` is in every (kInter) or in none (kDiff) of sources[1..]; `skip` excluded.
// `filters` are the sources' member filters.
StatusOr<bool> CheckOthers(CommandContext& c, size_t first, const std::vector<KeyState>& states,
                           const std::vector<MemberFilterRef>& filters, size_t skip,
                           const std::string& member, bool want_all) {
  for (size_t j = 0; j < states.size(); j++) {
    if (j == skip) continue;
    Status s;
    bool in = states[j].live() && filters[j].MayHold(member) &&
              HasMember(c, c.arg(first + j), states[j].meta.version, member, &s);
    if (!s.ok()) return s;
    if (in != want_all) return false;
  }
  return true;
}

// Computes the operation over the keys argv[first, first + n). `limit` (0 = none) stops an
// intersection early. Members are read from the iterators one at a time, and gathering stops
// once the result's members pass `max_bytes` (*over_budget is then true): a reply gives such a
// result up anyway (max-reply-size), so it must not first hold all of it in memory.
StatusOr<std::vector<std::string>> Compute(CommandContext& c, SetOp op,
                                           const std::vector<KeyState>& states, size_t first,
                                           uint64_t limit = 0, size_t max_bytes = SIZE_MAX,
                                           bool* over_budget = nullptr) {
  std::vector<std::string> out;
  size_t bytes = 0;
  auto within_budget = [&](size_t added) {
    bytes += added;
    if (bytes <= max_bytes) return true;
    if (over_budget) *over_budget = true;
    return false;
  };
  if (op == SetOp::kUnion) {
    std::set<std::string> all;
    for (size_t j = 0; j < states.size(); j++) {
      if (!states[j].live()) continue;
      MemberIterator it(c.ctx, ColumnFamily::kSubkey, c.db(), c.arg(first + j),
                        states[j].meta.version);
      for (it.Seek(); it.Valid(); it.Next()) {
        if (!all.emplace(it.member()).second) continue;
        if (!within_budget(it.member().size())) return out;
      }
      if (Status s = it.status(); !s.ok()) return s;
    }
    return std::vector<std::string>(all.begin(), all.end());
  }
  // Intersection walks the smallest set; difference walks the first.
  size_t base = 0;
  for (size_t j = 0; j < states.size(); j++) {
    if (!states[j].live()) {
      if (op == SetOp::kInter || j == 0) return out;
      continue;
    }
    if (op == SetOp::kInter && states[j].meta.size < states[base].meta.size) base = j;
  }
  std::vector<MemberFilterRef> filters;
  for (const KeyState& state : states) filters.push_back(MemberFilterOf(c.ctx, state.meta.version));
  MemberIterator it(c.ctx, ColumnFamily::kSubkey, c.db(), c.arg(first + base),
                    states[base].meta.version);
  for (it.Seek(); it.Valid(); it.Next()) {
    std::string member(it.member());
    auto keep = CheckOthers(c, first, states, filters, base, member, op == SetOp::kInter);
    if (!keep.ok()) return keep.status();
    if (!*keep) continue;
    if (!within_budget(member.size())) return out;
    out.push_back(std::move(member));
    if (limit != 0 && out.size() >= limit) break;
  }
  if (Status s = it.status(); !s.ok()) return s;
  return out;
}

void SetOpGeneric(CommandContext& c, SetOp op) {
  auto states = LookupSources(c, 1, c.argc() - 1);
  if (!states) return;
  bool over_budget = false;
  auto result = Compute(c, op, *states, 1, 0,
                        static_cast<size_t>(c.server.config->max_reply_size.load()), &over_budget);
  if (ReplyIfError(c, result.status())) return;
  if (over_budget) return c.reply.Overflow();
  ReplyMembers(c, *result);
}

void SetOpStoreGeneric(CommandContext& c, SetOp op) {
  auto states = LookupSources(c, 2, c.argc() - 2);
  if (!states) return;
  auto result = Compute(c, op, *states, 2);
  if (ReplyIfError(c, result.status())) return;
  auto dst = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, dst.status())) return;
  auto w = CollectionWriter::Replace(c.ctx, c.db(), c.arg(1), *dst, kSet);
  SetFloorOfAdded floor;
  for (const auto& m : *result) {
    w.Put(m, "", true);
    floor.Note(m);
  }
  RaiseFloor(c, w, floor);
  w.Finish();
  if (!result->empty()) {
    static constexpr const char* kEvents[] = {"sinterstore", "sunionstore", "sdiffstore"};
    Notify(c, notify::kSet, kEvents[static_cast<int>(op)], c.arg(1));
  } else if (dst->live()) {
    Notify(c, notify::kGeneric, "del", c.arg(1));
  }
  c.reply.Integer(static_cast<int64_t>(result->size()));
}

void SInterCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kInter);
}
void SUnionCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kUnion);
}
void SDiffCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kDiff);
}
void SInterStoreCommand(CommandContext& c) {
  SetOpStoreGeneric(c, SetOp::kInter);
}
void SUnionStoreCommand(CommandContext& c) {
  SetOpStoreGeneric(c, SetOp::kUnion);
}
void SDiffStoreCommand(CommandContext& c) {
  SetOpStoreGeneric(c, SetOp::kDiff);
}

void SInterCardCommand(CommandContext& c) {
  auto numkeys = ParseInt64(c.arg(1));
  if (!numkeys || *numkeys < 1) return c.reply.Error("ERR numkeys should be greater than 0");
  if (*numkeys > static_cast<int64_t>(c.argc()) - 2)
    return c.reply.Error("ERR Number of keys can't be greater than number of args");
  size_t n = static_cast<size_t>(*numkeys);
  int64_t limit = 0;
  for (size_t j = 2 + n; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "limit") && j + 1 < c.argc()) {
      auto v = IntArg(c, ++j, "ERR LIMIT can't be negative");
      if (!v) return;
      if (*v < 0) return c.reply.Error("ERR LIMIT can't be negative");
      limit = *v;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  auto states = LookupSources(c, 2, n);
  if (!states) return;
  auto result = Compute(c, SetOp::kInter, *states, 2, static_cast<uint64_t>(limit));
  if (ReplyIfError(c, result.status())) return;
  c.reply.Integer(static_cast<int64_t>(result->size()));
}

std::vector<size_t> SInterCardKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> keys;
  auto numkeys = argv.size() > 1 ? ParseInt64(argv[1]) : std::nullopt;
  if (!numkeys || *numkeys < 1) return keys;
  for (size_t i = 2; i < argv.size() && i < 2 + static_cast<size_t>(*numkeys); i++) {
    keys.push_back(i);
  }
  return keys;
}

void SScanCommand(CommandContext& c) {
  ScanMembersCommand(c, RedisType::kSet,
                     [](const Metadata&, std::string_view member, std::string_view,
                        std::vector<std::string>* out) {
                       out->emplace_back(member);
                       return Status::OK();
                     });
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kSetCommands = {
    {"sadd", -3, kW | kCmdFast, 1, 1, 1, SAddCommand, "set",
     "Adds one or more members to a set. Creates the key if it doesn't exist.",
     "@write @set @fast"},
    {"srem", -3, kCmdWrite | kCmdFast, 1, 1, 1, SRemCommand, "set",
     "Removes one or more members from a set. Deletes the set if the last member was removed.",
     "@write @set @fast"},
    {"scard", 2, kR | kCmdFast, 1, 1, 1, SCardCommand, "set",
     "Returns the number of members in a set.", "@read @set @fast"},
    {"sismember", 3, kR | kCmdFast, 1, 1, 1, SIsMemberCommand, "set",
     "Determines whether a member belongs to a set.", "@read @set @fast"},
    {"smismember", -3, kR | kCmdFast, 1, 1, 1, SMIsMemberCommand, "set",
     "Determines whether multiple members belong to a set.", "@read @set @fast"},
    {"smembers", 2, kR, 1, 1, 1, SMembersCommand, "set", "Returns all members of a set.",
     "@read @set @slow"},
    {"spop", -2, kCmdWrite | kCmdFast, 1, 1, 1, SPopCommand, "set",
     "Returns one or more random members from a set after removing them. Deletes the set if the "
     "last member was popped.",
     "@write @set @fast"},
    {"srandmember", -2, kR, 1, 1, 1, SRandMemberCommand, "set",
     "Get one or multiple random members from a set", "@read @set @slow"},
    {"smove", 4, kCmdWrite | kCmdFast, 1, 2, 1, SMoveCommand, "set",
     "Moves a member from one set to another.", "@write @set @fast"},
    {"sinter", -2, kR, 1, -1, 1, SInterCommand, "set", "Returns the intersect of multiple sets.",
     "@read @set @slow"},
    {"sintercard", -3, kR | kCmdMovableKeys, 0, 0, 0, SInterCardCommand, "set",
     "Returns the number of members of the intersect of multiple sets.", "@read @set @slow",
     SInterCardKeys},
    {"sunion", -2, kR, 1, -1, 1, SUnionCommand, "set", "Returns the union of multiple sets.",
     "@read @set @slow"},
    {"sdiff", -2, kR, 1, -1, 1, SDiffCommand, "set", "Returns the difference of multiple sets.",
     "@read @set @slow"},
    {"sinterstore", -3, kW, 1, -1, 1, SInterStoreCommand, "set",
     "Stores the intersect of multiple sets in a key.", "@write @set @slow"},
    {"sunionstore", -3, kW, 1, -1, 1, SUnionStoreCommand, "set",
     "Stores the union of multiple sets in a key.", "@write @set @slow"},
    {"sdiffstore", -3, kW, 1, -1, 1, SDiffStoreCommand, "set",
     "Stores the difference of multiple sets in a key.", "@write @set @slow"},
    {"sscan", -3, kR, 1, 1, 1, SScanCommand, "set", "Iterates over members of a set.",
     "@read @set @slow"},
};

}  // namespace

const std::vector<CommandSpec>& SetCommands() {
  return kSetCommands;
}

}  // namespace basalt
