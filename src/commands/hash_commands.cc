// Hash commands: HSET/HGET and friends, counters, whole-hash reads, HSCAN and HRANDFIELD.
//
// A hash is a collection (metadata with the exact field count) whose fields are `subkey`
// entries; large values live apart in `large_value` (types/hash.h). Writers read the state once
// with LookupCollection, change fields through a HashWriter and write the metadata once; a hash
// left empty is deleted. Commands that only need a field's existence or length (HEXISTS,
// HSTRLEN, HKEYS) read the field entries alone, never a large value.
#include <climits>
#include <cmath>

#include "commands/command_util.h"
#include "types/hash.h"

namespace basalt {

namespace {

// The hash at `key` (live or not); nullopt after replying WRONGTYPE or an I/O error.
std::optional<KeyState> LookupHash(CommandContext& c, std::string_view key) {
  auto state = LookupCollection(c.ctx, c.db(), key, RedisType::kHash);
  if (ReplyIfError(c, state.status())) return std::nullopt;
  return *state;
}

// One field's value in a live or absent hash: false after replying an I/O error; *found says
// whether the field exists. `filter` is the hash's member filter (one per command, however many
// fields it reads).
bool ReadField(CommandContext& c, std::string_view key, const KeyState& state,
               const MemberFilterRef& filter, std::string_view field, std::string* value,
               bool* found) {
  *found = false;
  if (!state.live() || !filter.MayHold(field)) return true;
  Status s = GetFieldValue(c.ctx, c.db(), key, state.meta.version, field, value);
  if (s.IsNotFound()) return true;
  if (ReplyIfError(c, s)) return false;
  *found = true;
  return true;
}

// One field's entry (not its value): false after replying an I/O error; *found as above.
bool ReadFieldEntry(CommandContext& c, std::string_view key, const KeyState& state,
                    std::string_view field, FieldEntry* entry, bool* found) {
  *found = false;
  if (!state.live() || !MemberFilterOf(c.ctx, state.meta.version).MayHold(field)) return true;
  std::string stored;
  Status s = GetFieldEntry(c.ctx, c.db(), key, state.meta.version, field, &stored);
  if (s.IsNotFound()) return true;
  if (ReplyIfError(c, s)) return false;
  // Only the length survives `stored`; inline_value is not used by callers.
  if (!DecodeFieldEntry(stored, entry)) {
    c.reply.Error("ERR corrupt hash field entry");
    return false;
  }
  entry->inline_value = {};
  *found = true;
  return true;
}

// Sets `field` to the result of `compute(current value or nullopt)`, for HINCRBY and
// HINCRBYFLOAT. `compute` replies and returns nullopt to refuse; `event` is the notification.
template <typename Compute>
void UpdateField(CommandContext& c, const KeyState& state, const char* event, Compute compute) {
  HashWriter w(c.ctx, c.db(), c.arg(1), state);
  std::string stored, value;
  Status s = w.Find(c.arg(2), &stored);
  if (!s.ok() && !s.IsNotFound()) return (void)ReplyIfError(c, s);
  bool found = s.ok();
  if (found && ReplyIfError(c, ResolveFieldValue(c.ctx, c.db(), c.arg(1), w.version(), c.arg(2),
                                                 stored, &value))) {
    return;
  }
  std::optional<std::string> result = compute(found ? &value : nullptr);
  if (!result) return;
  w.Put(c.arg(2), *result, found ? &stored : nullptr);
  w.Finish();
  Notify(c, notify::kHash, event, c.arg(1));
}

void HSetGeneric(CommandContext& c, const char* name, bool reply_ok) {
  if (c.argc() % 2 != 0) return c.reply.Error(WrongArityError(name));
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  HashWriter w(c.ctx, c.db(), c.arg(1), *state);
  int64_t added = 0;
  for (size_t i = 2; i < c.argc(); i += 2) {
    // Through the writer's batch, so a field named twice is counted once.
    std::string old;
    Status s = w.Find(c.arg(i), &old);
    if (!s.ok() && !s.IsNotFound()) return (void)ReplyIfError(c, s);
    w.Put(c.arg(i), c.arg(i + 1), s.ok() ? &old : nullptr);
    if (s.IsNotFound()) added++;
  }
  w.Finish();
  Notify(c, notify::kHash, "hset", c.arg(1));
  // Redis counts each pair, new or not.
  CountChanges(c, static_cast<int64_t>(c.argc() - 2) / 2);
  reply_ok ? c.reply.Ok() : c.reply.Integer(added);
}

void HSetCommand(CommandContext& c) {
  HSetGeneric(c, "hset", false);
}
void HMSetCommand(CommandContext& c) {
  HSetGeneric(c, "hmset", true);
}

void HSetNxCommand(CommandContext& c) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  FieldEntry entry;
  bool found;
  if (!ReadFieldEntry(c, c.arg(1), *state, c.arg(2), &entry, &found)) return;
  if (found) return c.reply.Integer(0);
  HashWriter w(c.ctx, c.db(), c.arg(1), *state);
  w.Put(c.arg(2), c.arg(3), nullptr);
  w.Finish();
  Notify(c, notify::kHash, "hset", c.arg(1));
  c.reply.Integer(1);
}

void HGetCommand(CommandContext& c) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  std::string value;
  bool found;
  if (!ReadField(c, c.arg(1), *state, MemberFilterOf(c.ctx, state->meta.version), c.arg(2), &value,
                 &found)) {
    return;
  }
  CountHit(c, c.arg(1), state->live());
  if (!found) return c.reply.Null();
  c.reply.Bulk(value);
}

void HMGetCommand(CommandContext& c) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  std::vector<std::optional<std::string>> values;
  MemberFilterRef filter = MemberFilterOf(c.ctx, state->meta.version);
  for (size_t i = 2; i < c.argc(); i++) {
    std::string value;
    bool found;
    if (!ReadField(c, c.arg(1), *state, filter, c.arg(i), &value, &found)) return;
    values.push_back(found ? std::optional<std::string>(std::move(value)) : std::nullopt);
  }
  c.reply.Array(values.size());
  for (const auto& v : values) v ? c.reply.Bulk(*v) : c.reply.Null();
}

void HDelCommand(CommandContext& c) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Integer(0);
  HashWriter w(c.ctx, c.db(), c.arg(1), *state);
  int64_t deleted = 0;
  for (size_t i = 2; i < c.argc(); i++) {
    std::string stored;
    Status s = w.Find(c.arg(i), &stored);
    if (s.IsNotFound()) continue;
    if (ReplyIfError(c, s)) return;
    w.Remove(c.arg(i), stored);
    deleted++;
  }
  w.Finish();
  if (deleted != 0) {
    CountChanges(c, deleted);
    Notify(c, notify::kHash, "hdel", c.arg(1));
    if (static_cast<uint64_t>(deleted) >= state->meta.size)
      Notify(c, notify::kGeneric, "del", c.arg(1));
  }
  c.reply.Integer(deleted);
}

void HLenCommand(CommandContext& c) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Integer(state->live() ? static_cast<int64_t>(state->meta.size) : 0);
}

void HStrlenCommand(CommandContext& c) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  FieldEntry entry;
  bool found;
  if (!ReadFieldEntry(c, c.arg(1), *state, c.arg(2), &entry, &found)) return;
  c.reply.Integer(found ? static_cast<int64_t>(entry.length) : 0);
}

void HExistsCommand(CommandContext& c) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  FieldEntry entry;
  bool found;
  if (!ReadFieldEntry(c, c.arg(1), *state, c.arg(2), &entry, &found)) return;
  c.reply.Integer(found ? 1 : 0);
}

void HIncrByCommand(CommandContext& c) {
  auto delta = IntArg(c, 3);
  if (!delta) return;
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  UpdateField(c, *state, "hincrby", [&](const std::string* value) -> std::optional<std::string> {
    int64_t current = 0;
    if (value) {
      auto v = ParseInt64(*value);
      if (!v) {
        c.reply.Error("ERR hash value is not an integer");
        return std::nullopt;
      }
      current = *v;
    }
    if ((*delta < 0 && current < 0 && *delta < LLONG_MIN - current) ||
        (*delta > 0 && current > 0 && *delta > LLONG_MAX - current)) {
      c.reply.Error("ERR increment or decrement would overflow");
      return std::nullopt;
    }
    c.reply.Integer(current + *delta);
    return std::to_string(current + *delta);
  });
}

void HIncrByFloatCommand(CommandContext& c) {
  auto incr = ParseLongDouble(c.arg(3), true);
  if (!incr) return c.reply.Error(kNotFloatError);
  if (std::isnan(*incr) || std::isinf(*incr)) return c.reply.Error("ERR value is NaN or Infinity");
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  UpdateField(c, *state, "hincrbyfloat",
              [&](const std::string* value) -> std::optional<std::string> {
                long double current = 0;
                if (value) {
                  auto v = ParseLongDouble(*value, true);
                  if (!v) {
                    c.reply.Error("ERR hash value is not a float");
                    return std::nullopt;
                  }
                  current = *v;
                }
                long double result = current + *incr;
                if (std::isnan(result) || std::isinf(result)) {
                  c.reply.Error("ERR increment would produce NaN or Infinity");
                  return std::nullopt;
                }
                std::string text = FormatLongDouble(result);
                c.reply.Bulk(text);
                // The value, not the increment, as Redis sends it.
                ReplicateAs(c, {"HSET", c.arg(1), c.arg(2), text});
                return text;
              });
}

enum class Part { kKeys, kValues, kBoth };

// Streams the fields into the reply (the size is known from the metadata), so a huge hash costs
// at most max-reply-size of memory.
void HGetAllGeneric(CommandContext& c, Part part) {
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  uint64_t size = state->live() ? state->meta.size : 0;
  size_t mark = c.reply.buffer()->size();
  if (part == Part::kBoth) {
    c.reply.Map(size);
  } else {
    c.reply.Array(size);
  }
  if (size == 0) return;
  uint64_t seen = 0;
  Status s = ForEachField(c.ctx, c.db(), c.arg(1), state->meta, part != Part::kKeys,
                          [&](std::string_view field, std::string_view value) {
                            if (part != Part::kValues) c.reply.Bulk(field);
                            if (part != Part::kKeys) c.reply.Bulk(value);
                            seen++;
                            return !c.reply.overflowed();
                          });
  if (c.reply.overflowed()) return;
  if (s.ok() && seen != size) s = Status::IOError("hash size does not match its fields");
  if (!s.ok()) {
    c.reply.buffer()->resize(mark);
    ReplyIfError(c, s);
  }
}

void HKeysCommand(CommandContext& c) {
  HGetAllGeneric(c, Part::kKeys);
}
void HValsCommand(CommandContext& c) {
  HGetAllGeneric(c, Part::kValues);
}
void HGetAllCommand(CommandContext& c) {
  HGetAllGeneric(c, Part::kBoth);
}

void ReplyFieldValue(CommandContext& c, const Member& m, bool with_values) {
  if (with_values && c.reply.resp() > 2) c.reply.Array(2);
  c.reply.Bulk(m.name);
  if (with_values) c.reply.Bulk(m.value);
}

void HRandFieldWithCount(CommandContext& c) {
  auto count = IntArg(c, 2);
  if (!count) return;
  if (*count == LLONG_MIN) {
    return c.reply.Error(
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
  }
  bool with_values = c.argc() == 4;
  if (c.argc() > 4 || (with_values && !EqualsIgnoreCase(c.arg(3), "withvalues")))
    return c.reply.Error(kSyntaxError);
  if (with_values && (*count < -LLONG_MAX / 2 || *count > LLONG_MAX / 2))
    return c.reply.Error("ERR value is out of range");
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live() || *count == 0) return c.reply.Array(0);
  bool repeats = *count < 0;
  uint64_t n = repeats ? static_cast<uint64_t>(-*count) : static_cast<uint64_t>(*count);
  StatusOr<std::vector<Member>> picked =
      !repeats && n >= state->meta.size
          ? ReadFields(c.ctx, c.db(), c.arg(1), state->meta, with_values)
          : RandomMembers(c.ctx, c.db(), c.arg(1), state->meta, n, repeats);
  if (ReplyIfError(c, picked.status())) return;
  if (with_values && !(!repeats && n >= state->meta.size)) {
    // Sampled members carry their stored field entries: turn them into values.
    for (auto& m : *picked) {
      std::string stored = std::move(m.value);
      Status s =
          ResolveFieldValue(c.ctx, c.db(), c.arg(1), state->meta.version, m.name, stored, &m.value);
      if (ReplyIfError(c, s)) return;
    }
  }
  c.reply.Array(picked->size() * (with_values && c.reply.resp() == 2 ? 2 : 1));
  for (const auto& m : *picked) ReplyFieldValue(c, m, with_values);
}

void HRandFieldCommand(CommandContext& c) {
  if (c.argc() >= 3) return HRandFieldWithCount(c);
  auto state = LookupHash(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Null();
  auto picked = RandomMembers(c.ctx, c.db(), c.arg(1), state->meta, 1, true);
  if (ReplyIfError(c, picked.status())) return;
  if (picked->empty()) return c.reply.Null();
  c.reply.Bulk(picked->front().name);
}

void HScanCommand(CommandContext& c) {
  ScanMembersCommand(c, RedisType::kHash,
                     [&](const Metadata& meta, std::string_view field, std::string_view stored,
                         std::vector<std::string>* out) {
                       std::string value;
                       Status s = ResolveFieldValue(c.ctx, c.db(), c.arg(1), meta.version, field,
                                                    stored, &value);
                       if (!s.ok()) return s;
                       out->emplace_back(field);
                       out->push_back(std::move(value));
                       return Status::OK();
                     });
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kHashCommands = {
    {"hset", -4, kW | kCmdFast, 1, 1, 1, HSetCommand, "hash",
     "Creates or modifies the value of a field in a hash.", "@write @hash @fast"},
    {"hmset", -4, kW | kCmdFast, 1, 1, 1, HMSetCommand, "hash",
     "Sets the values of multiple fields.", "@write @hash @fast"},
    {"hsetnx", 4, kW | kCmdFast, 1, 1, 1, HSetNxCommand, "hash",
     "Sets the value of a field in a hash only when the field doesn't exist.",
     "@write @hash @fast"},
    {"hget", 3, kR | kCmdFast, 1, 1, 1, HGetCommand, "hash",
     "Returns the value of a field in a hash.", "@read @hash @fast"},
    {"hmget", -3, kR | kCmdFast, 1, 1, 1, HMGetCommand, "hash",
     "Returns the values of all fields in a hash.", "@read @hash @fast"},
    {"hdel", -3, kCmdWrite | kCmdFast, 1, 1, 1, HDelCommand, "hash",
     "Deletes one or more fields and their values from a hash. Deletes the hash if no fields "
     "remain.",
     "@write @hash @fast"},
    {"hlen", 2, kR | kCmdFast, 1, 1, 1, HLenCommand, "hash",
     "Returns the number of fields in a hash.", "@read @hash @fast"},
    {"hstrlen", 3, kR | kCmdFast, 1, 1, 1, HStrlenCommand, "hash",
     "Returns the length of the value of a field.", "@read @hash @fast"},
    {"hexists", 3, kR | kCmdFast, 1, 1, 1, HExistsCommand, "hash",
     "Determines whether a field exists in a hash.", "@read @hash @fast"},
    {"hincrby", 4, kW | kCmdFast, 1, 1, 1, HIncrByCommand, "hash",
     "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if "
     "the field doesn't exist.",
     "@write @hash @fast"},
    {"hincrbyfloat", 4, kW | kCmdFast, 1, 1, 1, HIncrByFloatCommand, "hash",
     "Increments the floating point value of a field by a number. Uses 0 as initial value if the "
     "field doesn't exist.",
     "@write @hash @fast"},
    {"hkeys", 2, kR, 1, 1, 1, HKeysCommand, "hash", "Returns all fields in a hash.",
     "@read @hash @slow"},
    {"hvals", 2, kR, 1, 1, 1, HValsCommand, "hash", "Returns all values in a hash.",
     "@read @hash @slow"},
    {"hgetall", 2, kR, 1, 1, 1, HGetAllCommand, "hash", "Returns all fields and values in a hash.",
     "@read @hash @slow"},
    {"hscan", -3, kR, 1, 1, 1, HScanCommand, "hash", "Iterates over fields and values of a hash.",
     "@read @hash @slow"},
    {"hrandfield", -2, kR, 1, 1, 1, HRandFieldCommand, "hash",
     "Returns one or more random fields from a hash.", "@read @hash @slow"},
};

}  // namespace

const std::vector<CommandSpec>& HashCommands() {
  return kHashCommands;
}

}  // namespace basalt
