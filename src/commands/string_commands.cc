// String commands: GET/SET and friends, counters, ranges.
//
// Every handler reads the key once through the Context (lazy expiry applies there) and writes
// once; TTLs are kept or cleared exactly as Redis does for each command. Values are read and
// written through types/string.h, which hides whether a value is inline or segmented: partial
// writers (APPEND, SETRANGE) edit only the segments they touch.
#include <climits>
#include <cmath>

#include "commands/command_util.h"
#include "commands/string_lcs.h"

namespace basalt {

namespace {

enum ExpireUnit { kSeconds, kMillis };

// Parses an expiry argument into absolute Unix ms, with Redis's checks and error texts.
std::optional<int64_t> ExpireArg(CommandContext& c, size_t i, ExpireUnit unit, bool absolute,
                                 const char* command) {
  auto v = IntArg(c, i);
  if (!v) return std::nullopt;
  int64_t ms = *v;
  std::string invalid = std::string("ERR invalid expire time in '") + command + "' command";
  if (ms <= 0 || (unit == kSeconds && ms > LLONG_MAX / 1000)) {
    c.reply.Error(invalid);
    return std::nullopt;
  }
  if (unit == kSeconds) ms *= 1000;
  if (!absolute) {
    if (ms > LLONG_MAX - c.ctx.now_ms()) {
      c.reply.Error(invalid);
      return std::nullopt;
    }
    ms += c.ctx.now_ms();
  }
  return ms;
}

// The expiry options shared by SET and GETEX.
struct ExpireOptions {
  bool has_expire = false;
  bool keep_ttl = false;
  bool persist = false;
  int64_t expire_ms = 0;
};

bool IsExpireOption(std::string_view opt, ExpireUnit* unit, bool* absolute) {
  if (EqualsIgnoreCase(opt, "ex")) {
    *unit = kSeconds;
    *absolute = false;
  } else if (EqualsIgnoreCase(opt, "px")) {
    *unit = kMillis;
    *absolute = false;
  } else if (EqualsIgnoreCase(opt, "exat")) {
    *unit = kSeconds;
    *absolute = true;
  } else if (EqualsIgnoreCase(opt, "pxat")) {
    *unit = kMillis;
    *absolute = true;
  } else {
    return false;
  }
  return true;
}

void GetCommand(CommandContext& c) {
  auto state = LookupString(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Null();
  std::string value;
  if (!ReadStringValue(c, c.arg(1), *state, &value)) return;
  c.reply.Bulk(value);
}

void SetCommand(CommandContext& c) {
  bool nx = false, xx = false, get = false;
  ExpireOptions ex;
  size_t expire_arg = 0;
  ExpireUnit unit = kSeconds;
  bool absolute = false;
  for (size_t j = 3; j < c.argc(); j++) {
    const std::string& opt = c.arg(j);
    bool has_next = j + 1 < c.argc();
    ExpireUnit u;
    bool abs;
    if (EqualsIgnoreCase(opt, "nx") && !xx) {
      nx = true;
    } else if (EqualsIgnoreCase(opt, "xx") && !nx) {
      xx = true;
    } else if (EqualsIgnoreCase(opt, "get")) {
      get = true;
    } else if (EqualsIgnoreCase(opt, "keepttl") && !ex.has_expire) {
      ex.keep_ttl = true;
    } else if (IsExpireOption(opt, &u, &abs) && !ex.keep_ttl &&
               (!ex.has_expire || (u == unit && abs == absolute)) && has_next) {
      // Repeating the same option is accepted and the last value wins, as in Redis.
      ex.has_expire = true;
      unit = u;
      absolute = abs;
      expire_arg = ++j;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  if (ex.has_expire) {
    auto ms = ExpireArg(c, expire_arg, unit, absolute, "set");
    if (!ms) return;
    ex.expire_ms = *ms;
  }
  const std::string& key = c.arg(1);
  auto old = c.ctx.Lookup(c.db(), key);
  if (ReplyIfError(c, old.status())) return;
  bool found = old->live();
  if (get && found && old->meta.type != RedisType::kString) return c.reply.Error(kWrongTypeError);
  std::string old_value;
  if (get && !ReadStringValue(c, key, *old, &old_value)) return;
  auto reply_old = [&] {
    if (found) {
      c.reply.Bulk(old_value);
    } else {
      c.reply.Null();
    }
  };
  if ((nx && found) || (xx && !found)) {
    if (get) return reply_old();
    return c.reply.Null();
  }
  if (get) {
    reply_old();
  } else {
    c.reply.Ok();
  }
  int64_t expire = ex.has_expire ? ex.expire_ms : (ex.keep_ttl && found ? old->meta.expire_ms : 0);
  if (expire != 0 && expire <= c.ctx.now_ms()) {
    // Already in the past: set-then-expire is a delete, heard as Redis's set and expire.
    if (!found) Notify(c, notify::kNew, "new", key);
    if (old->present) ReplicateAs(c, {"DEL", key});
    c.ctx.Delete(c.db(), key, *old);
    Notify(c, notify::kString, "set", key);
    Notify(c, notify::kGeneric, "expire", key);
    return;
  }
  // A relative or second-based expiry reaches replicas as Redis sends it: absolute, in ms.
  if (ex.has_expire && !(absolute && unit == kMillis)) {
    ReplicateAs(c, {"SET", key, c.arg(2), "PXAT", std::to_string(expire)});
  } else if (get && Replicating(c)) {
    // Without its GET (however often given): the replica has no use for the old value.
    std::vector<std::string> sent;
    for (size_t j = 0; j < c.argc(); j++) {
      if (j < 3 || !EqualsIgnoreCase(c.arg(j), "get")) sent.push_back(c.arg(j));
    }
    ReplicateAs(c, std::move(sent));
  }
  WriteString(c, key, c.arg(2), expire, *old);
  Notify(c, notify::kString, "set", key);
  if (ex.has_expire) Notify(c, notify::kGeneric, "expire", key);
}

void SetNxCommand(CommandContext& c) {
  auto old = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, old.status())) return;
  if (old->live()) return c.reply.Integer(0);
  WriteString(c, c.arg(1), c.arg(2), 0, *old);
  Notify(c, notify::kString, "set", c.arg(1));
  c.reply.Integer(1);
}

void SetExGeneric(CommandContext& c, ExpireUnit unit, const char* name) {
  auto ms = ExpireArg(c, 2, unit, false, name);
  if (!ms) return;
  auto old = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, old.status())) return;
  ReplicateAs(c, {"SET", c.arg(1), c.arg(3), "PXAT", std::to_string(*ms)});
  WriteString(c, c.arg(1), c.arg(3), *ms, *old);
  Notify(c, notify::kString, "set", c.arg(1));
  Notify(c, notify::kGeneric, "expire", c.arg(1));
  c.reply.Ok();
}

void SetExCommand(CommandContext& c) {
  SetExGeneric(c, kSeconds, "setex");
}
void PSetExCommand(CommandContext& c) {
  SetExGeneric(c, kMillis, "psetex");
}

void GetSetCommand(CommandContext& c) {
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  CountHit(c, c.arg(1), old->live());
  std::string value;
  if (!ReadStringValue(c, c.arg(1), *old, &value)) return;
  if (old->live()) {
    c.reply.Bulk(value);
  } else {
    c.reply.Null();
  }
  ReplicateAs(c, {"SET", c.arg(1), c.arg(2)});  // as Redis 7 sends it
  WriteString(c, c.arg(1), c.arg(2), 0, *old);
  Notify(c, notify::kString, "set", c.arg(1));
}

void GetDelCommand(CommandContext& c) {
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  CountHit(c, c.arg(1), old->live());
  if (!old->live()) return c.reply.Null();
  std::string value;
  if (!ReadStringValue(c, c.arg(1), *old, &value)) return;
  c.reply.Bulk(value);
  ReplicateAs(c, {"DEL", c.arg(1)});
  c.ctx.Delete(c.db(), c.arg(1), *old);
  Notify(c, notify::kGeneric, "del", c.arg(1));
}

void GetExCommand(CommandContext& c) {
  ExpireOptions ex;
  size_t expire_arg = 0;
  ExpireUnit unit = kSeconds;
  bool absolute = false;
  for (size_t j = 2; j < c.argc(); j++) {
    const std::string& opt = c.arg(j);
    ExpireUnit u;
    bool abs;
    if (EqualsIgnoreCase(opt, "persist") && !ex.has_expire) {
      ex.persist = true;
    } else if (IsExpireOption(opt, &u, &abs) && !ex.persist &&
               (!ex.has_expire || (u == unit && abs == absolute)) && j + 1 < c.argc()) {
      ex.has_expire = true;
      unit = u;
      absolute = abs;
      expire_arg = ++j;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  // Redis looks the key up before it validates the expiry value.
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  CountHit(c, c.arg(1), old->live());
  if (!old->live()) return c.reply.Null();
  if (ex.has_expire) {
    auto ms = ExpireArg(c, expire_arg, unit, absolute, "getex");
    if (!ms) return;
    ex.expire_ms = *ms;
  }
  std::string value;
  if (!ReadStringValue(c, c.arg(1), *old, &value)) return;
  c.reply.Bulk(value);
  // Only the expiry changes: the metadata is rewritten, a segmented value stays where it is.
  Metadata meta = old->meta;
  if (ex.has_expire && ex.expire_ms <= c.ctx.now_ms()) {
    ReplicateAs(c, {"DEL", c.arg(1)});
    c.ctx.Delete(c.db(), c.arg(1), *old);
    Notify(c, notify::kGeneric, "del", c.arg(1));
  } else if (ex.has_expire) {
    meta.expire_ms = ex.expire_ms;
    ReplicateExpireAt(c, c.arg(1), ex.expire_ms);
    c.ctx.Write(c.db(), c.arg(1), meta, *old);
    Notify(c, notify::kGeneric, "expire", c.arg(1));
  } else if (ex.persist && old->meta.expire_ms != 0) {
    meta.expire_ms = 0;
    ReplicateAs(c, {"PERSIST", c.arg(1)});
    c.ctx.Write(c.db(), c.arg(1), meta, *old);
    Notify(c, notify::kGeneric, "persist", c.arg(1));
  }
}

void MGetCommand(CommandContext& c) {
  c.reply.Array(c.argc() - 1);
  for (size_t i = 1; i < c.argc(); i++) {
    auto state = c.ctx.Lookup(c.db(), c.arg(i));
    std::string value;
    // A key of another type is a hit that reads as nil, as in Redis.
    bool found = state.ok() && state->live();
    CountHit(c, c.arg(i), found);
    if (found && state->meta.type == RedisType::kString &&
        ReadString(c.ctx, c.db(), c.arg(i), state->meta, &value).ok()) {
      c.reply.Bulk(value);
    } else {
      c.reply.Null();
    }
  }
}

void MSetGeneric(CommandContext& c, bool nx) {
  if (c.argc() % 2 == 0) return c.reply.Error(WrongArityError(nx ? "msetnx" : "mset"));
  if (nx) {
    for (size_t i = 1; i < c.argc(); i += 2) {
      auto old = c.ctx.Lookup(c.db(), c.arg(i));
      if (ReplyIfError(c, old.status())) return;
      if (old->live()) return c.reply.Integer(0);
    }
  }
  for (size_t i = 1; i < c.argc(); i += 2) {
    // A key named twice: the later value wins and the earlier write is what it replaces.
    auto current = c.ctx.Lookup(c.db(), c.arg(i));
    if (ReplyIfError(c, current.status())) return;
    WriteString(c, c.arg(i), c.arg(i + 1), 0, *current);
    Notify(c, notify::kString, "set", c.arg(i));
  }
  if (nx) return c.reply.Integer(1);
  c.reply.Ok();
}

void MSetCommand(CommandContext& c) {
  MSetGeneric(c, false);
}
void MSetNxCommand(CommandContext& c) {
  MSetGeneric(c, true);
}

void AppendCommand(CommandContext& c) {
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  StringEditor editor(c.ctx, c.db(), c.arg(1), *old);
  uint64_t length = editor.length();
  if (!CheckStringSize(c, length + c.arg(2).size())) return;
  if (ReplyIfError(c, editor.Write(length, c.arg(2)))) return;
  c.reply.Integer(static_cast<int64_t>(editor.length()));
  if (c.arg(2).empty()) {
    // Appending nothing is still a write in Redis: a missing key is created empty, and an
    // existing one is touched (WATCH sees it) and becomes raw.
    if (!old->live()) {
      WriteString(c, c.arg(1), "", 0, *old);
    } else {
      Metadata meta = old->meta;
      meta.encoding = StringEncoding::kRaw;
      c.ctx.Write(c.db(), c.arg(1), meta, *old);
    }
    return Notify(c, notify::kString, "append", c.arg(1));
  }
  editor.Finish(old->live() ? StringEncoding::kRaw : StringEncoding::kAuto);
  Notify(c, notify::kString, "append", c.arg(1));
}

void StrlenCommand(CommandContext& c) {
  auto state = LookupString(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Integer(state->live() ? static_cast<int64_t>(StringLength(state->meta)) : 0);
}

void IncrByGeneric(CommandContext& c, int64_t delta) {
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  int64_t current = 0;
  if (old->live()) {
    std::string text;
    if (!ReadStringValue(c, c.arg(1), *old, &text)) return;
    auto v = ParseInt64(text);
    if (!v) return c.reply.Error(kNotIntegerError);
    current = *v;
  }
  if ((delta < 0 && current < 0 && delta < LLONG_MIN - current) ||
      (delta > 0 && current > 0 && delta > LLONG_MAX - current)) {
    return c.reply.Error("ERR increment or decrement would overflow");
  }
  int64_t result = current + delta;
  c.reply.Integer(result);
  WriteString(c, c.arg(1), std::to_string(result), old->live() ? old->meta.expire_ms : 0, *old);
  Notify(c, notify::kString, "incrby", c.arg(1));
}

void IncrCommand(CommandContext& c) {
  IncrByGeneric(c, 1);
}
void DecrCommand(CommandContext& c) {
  IncrByGeneric(c, -1);
}
void IncrByCommand(CommandContext& c) {
  auto d = IntArg(c, 2);
  if (d) IncrByGeneric(c, *d);
}
void DecrByCommand(CommandContext& c) {
  auto d = IntArg(c, 2);
  if (!d) return;
  if (*d == LLONG_MIN) return c.reply.Error("ERR decrement would overflow");
  IncrByGeneric(c, -*d);
}

void IncrByFloatCommand(CommandContext& c) {
  auto incr = ParseLongDouble(c.arg(2), true);
  if (!incr) return c.reply.Error(kNotFloatError);
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  long double current = 0;
  if (old->live()) {
    std::string text;
    if (!ReadStringValue(c, c.arg(1), *old, &text)) return;
    auto v = ParseLongDouble(text, true);
    if (!v) return c.reply.Error(kNotFloatError);
    current = *v;
  }
  long double result = current + *incr;
  if (std::isnan(result) || std::isinf(result))
    return c.reply.Error("ERR increment would produce NaN or Infinity");
  std::string text = FormatLongDouble(result);
  c.reply.Bulk(text);
  // The value, not the increment: float arithmetic need not round alike on the replica.
  ReplicateAs(c, {"SET", c.arg(1), text, "KEEPTTL"});
  WriteString(c, c.arg(1), std::move(text), old->live() ? old->meta.expire_ms : 0, *old,
              StringEncoding::kNoInt);
  Notify(c, notify::kString, "incrbyfloat", c.arg(1));
}

void GetRangeCommand(CommandContext& c) {
  auto start = IntArg(c, 2);
  if (!start) return;
  auto end = IntArg(c, 3);
  if (!end) return;
  auto state = LookupString(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  int64_t len = state->live() ? static_cast<int64_t>(StringLength(state->meta)) : 0;
  int64_t from = *start, to = *end;
  if (from < 0 && to < 0 && from > to) return c.reply.Bulk("");
  if (from < 0) from += len;
  if (to < 0) to += len;
  if (from < 0) from = 0;
  if (to < 0) to = 0;
  if (to >= len) to = len - 1;
  if (from > to || len == 0) return c.reply.Bulk("");
  std::string bytes;
  if (ReplyIfError(c, ReadStringRange(c.ctx, c.db(), c.arg(1), state->meta, from, to + 1, &bytes)))
    return;
  c.reply.Bulk(bytes);
}

void SetRangeCommand(CommandContext& c) {
  auto offset = IntArg(c, 2);
  if (!offset) return;
  if (*offset < 0) return c.reply.Error("ERR offset is out of range");
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  const std::string& patch = c.arg(3);
  if (!old->live() && patch.empty()) return c.reply.Integer(0);
  StringEditor editor(c.ctx, c.db(), c.arg(1), *old);
  if (patch.empty()) return c.reply.Integer(static_cast<int64_t>(editor.length()));
  if (!CheckStringSize(c, static_cast<uint64_t>(*offset) + patch.size())) return;
  if (ReplyIfError(c, editor.Write(static_cast<uint64_t>(*offset), patch))) return;
  c.reply.Integer(static_cast<int64_t>(editor.length()));
  editor.Finish(StringEncoding::kRaw);
  Notify(c, notify::kString, "setrange", c.arg(1));
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kStringCommands = {
    {"get", 2, kR | kCmdFast, 1, 1, 1, GetCommand, "string", "Returns the string value of a key.",
     "@read @string @fast"},
    {"set", -3, kW, 1, 1, 1, SetCommand, "string",
     "Sets the string value of a key, ignoring its type.", "@write @string @slow"},
    {"setnx", 3, kW | kCmdFast, 1, 1, 1, SetNxCommand, "string",
     "Set the string value of a key only when the key doesn't exist.", "@write @string @fast"},
    {"setex", 4, kW, 1, 1, 1, SetExCommand, "string",
     "Sets the string value and expiration time of a key.", "@write @string @slow"},
    {"psetex", 4, kW, 1, 1, 1, PSetExCommand, "string",
     "Sets the string value and expiration time in milliseconds of a key.", "@write @string @slow"},
    {"getset", 3, kW | kCmdFast, 1, 1, 1, GetSetCommand, "string",
     "Returns the previous string value of a key after setting it to a new value.",
     "@write @string @fast"},
    {"getdel", 2, kCmdWrite | kCmdFast, 1, 1, 1, GetDelCommand, "string",
     "Returns the string value of a key after deleting the key.", "@write @string @fast"},
    {"getex", -2, kCmdWrite | kCmdFast, 1, 1, 1, GetExCommand, "string",
     "Returns the string value of a key after setting its expiration time.",
     "@write @string @fast"},
    {"mget", -2, kR | kCmdFast, 1, -1, 1, MGetCommand, "string",
     "Atomically returns the string values of one or more keys.", "@read @string @fast"},
    {"mset", -3, kW, 1, -1, 2, MSetCommand, "string",
     "Atomically creates or modifies the string values of one or more keys.",
     "@write @string @slow"},
    {"msetnx", -3, kW, 1, -1, 2, MSetNxCommand, "string",
     "Atomically modifies the string values of one or more keys only when all keys don't exist.",
     "@write @string @slow"},
    {"append", 3, kW | kCmdFast, 1, 1, 1, AppendCommand, "string",
     "Appends a string to the value of a key. Creates the key if it doesn't exist.",
     "@write @string @fast"},
    {"strlen", 2, kR | kCmdFast, 1, 1, 1, StrlenCommand, "string",
     "Returns the length of a string value.", "@read @string @fast"},
    {"incr", 2, kW | kCmdFast, 1, 1, 1, IncrCommand, "string",
     "Increments the integer value of a key by one.", "@write @string @fast"},
    {"decr", 2, kW | kCmdFast, 1, 1, 1, DecrCommand, "string",
     "Decrements the integer value of a key by one.", "@write @string @fast"},
    {"incrby", 3, kW | kCmdFast, 1, 1, 1, IncrByCommand, "string",
     "Increments the integer value of a key by a number.", "@write @string @fast"},
    {"decrby", 3, kW | kCmdFast, 1, 1, 1, DecrByCommand, "string",
     "Decrements a number from the integer value of a key.", "@write @string @fast"},
    {"incrbyfloat", 3, kW | kCmdFast, 1, 1, 1, IncrByFloatCommand, "string",
     "Increment the floating point value of a key by a number.", "@write @string @fast"},
    {"getrange", 4, kR, 1, 1, 1, GetRangeCommand, "string",
     "Returns a substring of the string stored at a key.", "@read @string @slow"},
    {"substr", 4, kR, 1, 1, 1, GetRangeCommand, "string",
     "Returns a substring from a string value.", "@read @string @slow"},
    {"setrange", 4, kW, 1, 1, 1, SetRangeCommand, "string",
     "Overwrites a part of a string value with another by an offset.", "@write @string @slow"},
    {"lcs", -3, kR, 1, 2, 1, LcsCommand, "string", "Finds the longest common substring.",
     "@read @string @slow"},
};

}  // namespace

const std::vector<CommandSpec>& StringCommands() {
  return kStringCommands;
}

}  // namespace basalt
