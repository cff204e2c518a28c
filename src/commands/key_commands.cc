// Generic key commands: existence, expiry, renaming, copying between databases, iteration.
//
// Every key, whatever its type, has one metadata entry, so most of these commands read and
// write metadata only; RENAME, COPY and MOVE of a collection also copy its members under a new
// version (types/collection.h).
#include <climits>
#include <random>

#include "commands/command_util.h"
#include "commands/object_encoding.h"
#include "types/collection.h"

namespace basalt {

namespace {

// DB index argument with Redis's two error texts.
std::optional<int> DbArg(CommandContext& c, size_t i) {
  auto v = IntArg(c, i);
  if (!v) return std::nullopt;
  if (*v < 0 || *v >= c.server.keyspace->databases()) {
    c.reply.Error("ERR DB index is out of range");
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

void DelCommand(CommandContext& c) {
  int64_t deleted = 0;
  for (size_t i = 1; i < c.argc(); i++) {
    auto state = c.ctx.Peek(c.db(), c.arg(i));
    if (ReplyIfError(c, state.status())) return;
    c.ctx.Delete(c.db(), c.arg(i), *state);  // expired entries are reclaimed too
    if (state->live()) {
      deleted++;
      Notify(c, notify::kGeneric, "del", c.arg(i));
    }
  }
  c.reply.Integer(deleted);
}

// EXISTS only peeks (an access for OBJECT IDLETIME / FREQ it is not); TOUCH looks keys up.
void CountLiveKeys(CommandContext& c, bool touch) {
  int64_t count = 0;
  for (size_t i = 1; i < c.argc(); i++) {
    auto state = touch ? c.ctx.Lookup(c.db(), c.arg(i)) : c.ctx.Peek(c.db(), c.arg(i));
    if (ReplyIfError(c, state.status())) return;
    CountHit(c, c.arg(i), state->live());
    if (state->live()) count++;
  }
  c.reply.Integer(count);
}

void ExistsCommand(CommandContext& c) {
  CountLiveKeys(c, false);
}

void TypeCommand(CommandContext& c) {
  auto state = c.ctx.Peek(c.db(), c.arg(1));
  if (ReplyIfError(c, state.status())) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Simple(state->live() ? RedisTypeName(state->meta.type) : "none");
}

enum ExpireFlag { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };

void ExpireGeneric(CommandContext& c, bool seconds, bool absolute) {
  int flags = 0;
  for (size_t j = 3; j < c.argc(); j++) {
    const std::string& opt = c.arg(j);
    if (EqualsIgnoreCase(opt, "nx"))
      flags |= kNx;
    else if (EqualsIgnoreCase(opt, "xx"))
      flags |= kXx;
    else if (EqualsIgnoreCase(opt, "gt"))
      flags |= kGt;
    else if (EqualsIgnoreCase(opt, "lt"))
      flags |= kLt;
    else
      return c.reply.Error("ERR Unsupported option " + opt);
  }
  if ((flags & kNx) && (flags & (kXx | kGt | kLt)))
    return c.reply.Error("ERR NX and XX, GT or LT options at the same time are not compatible");
  if ((flags & kGt) && (flags & kLt))
    return c.reply.Error("ERR GT and LT options at the same time are not compatible");
  auto when = IntArg(c, 2);  // after the options, as Redis checks them
  if (!when) return;
  std::string invalid = "ERR invalid expire time in '" + ToLower(c.arg(0)) + "' command";
  int64_t ms = *when;
  if (seconds) {
    if (ms > LLONG_MAX / 1000 || ms < LLONG_MIN / 1000) return c.reply.Error(invalid);
    ms *= 1000;
  }
  if (!absolute) {
    int64_t now = c.ctx.now_ms();
    // Like Redis, only overflow past the maximum is an error; any negative time is just past.
    if (ms > LLONG_MAX - now) return c.reply.Error(invalid);
    ms += now;
  }
  auto state = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, state.status())) return;
  if (!state->live()) return c.reply.Integer(0);
  int64_t current = state->meta.expire_ms;  // 0: no expiry (an infinite TTL for GT/LT)
  if ((flags & kNx) && current != 0) return c.reply.Integer(0);
  if ((flags & kXx) && current == 0) return c.reply.Integer(0);
  if ((flags & kGt) && (current == 0 || ms <= current)) return c.reply.Integer(0);
  if ((flags & kLt) && current != 0 && ms >= current) return c.reply.Integer(0);
  if (ms <= c.ctx.now_ms()) {
    ReplicateAs(c, {"DEL", c.arg(1)});
    c.ctx.Delete(c.db(), c.arg(1), *state);
    Notify(c, notify::kGeneric, "del", c.arg(1));
  } else {
    if (Replicating(c)) {
      // As Redis 7 sends every expiry: PEXPIREAT with the absolute time, options kept.
      std::vector<std::string> sent(c.argv.begin(), c.argv.end());
      sent[0] = "PEXPIREAT";
      sent[2] = std::to_string(ms);
      ReplicateAs(c, std::move(sent));
    }
    Metadata meta = state->meta;
    meta.expire_ms = ms;
    c.ctx.Write(c.db(), c.arg(1), meta, *state);
    Notify(c, notify::kGeneric, "expire", c.arg(1));
  }
  c.reply.Integer(1);
}

void ExpireCommand(CommandContext& c) {
  ExpireGeneric(c, true, false);
}
void PExpireCommand(CommandContext& c) {
  ExpireGeneric(c, false, false);
}
void ExpireAtCommand(CommandContext& c) {
  ExpireGeneric(c, true, true);
}
void PExpireAtCommand(CommandContext& c) {
  ExpireGeneric(c, false, true);
}

void TtlGeneric(CommandContext& c, bool millis, bool absolute) {
  auto state = c.ctx.Peek(c.db(), c.arg(1));
  if (ReplyIfError(c, state.status())) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Integer(-2);
  if (state->meta.expire_ms == 0) return c.reply.Integer(-1);
  int64_t ttl = absolute ? state->meta.expire_ms : state->meta.expire_ms - c.ctx.now_ms();
  if (ttl < 0) ttl = 0;
  c.reply.Integer(millis ? ttl : (ttl + 500) / 1000);
}

void TtlCommand(CommandContext& c) {
  TtlGeneric(c, false, false);
}
void PTtlCommand(CommandContext& c) {
  TtlGeneric(c, true, false);
}
void ExpireTimeCommand(CommandContext& c) {
  TtlGeneric(c, false, true);
}
void PExpireTimeCommand(CommandContext& c) {
  TtlGeneric(c, true, true);
}

void PersistCommand(CommandContext& c) {
  auto state = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, state.status())) return;
  if (!state->live() || state->meta.expire_ms == 0) return c.reply.Integer(0);
  Metadata meta = state->meta;
  meta.expire_ms = 0;
  c.ctx.Write(c.db(), c.arg(1), meta, *state);
  Notify(c, notify::kGeneric, "persist", c.arg(1));
  c.reply.Integer(1);
}

// Writes the whole value of src (strings: the metadata; collections: a copy of every member
// under a new version) to dst_db/dst_key, replacing `dst`. The destination is a new key even
// when it replaces a live one, as Redis deletes that one and adds the new (the `new` event).
Status PlaceKey(CommandContext& c, const std::string& src_key, const Metadata& meta, int dst_db,
                const std::string& dst_key, const KeyState& dst) {
  if (dst.live()) c.ctx.Notify(notify::kNew, "new", dst_db, dst_key);
  if (!meta.HasSubkeys()) {
    c.ctx.Write(dst_db, dst_key, meta, dst);
    return Status::OK();
  }
  auto copy = CopyMembers(c.ctx, c.db(), src_key, meta, dst_db, dst_key);
  if (!copy.ok()) return copy.status();
  c.ctx.Write(dst_db, dst_key, *copy, dst);
  return Status::OK();
}

void RenameGeneric(CommandContext& c, bool nx) {
  const std::string& src_key = c.arg(1);
  const std::string& dst_key = c.arg(2);
  auto src = c.ctx.Lookup(c.db(), src_key);
  if (ReplyIfError(c, src.status())) return;
  if (!src->live()) return c.reply.Error("ERR no such key");
  if (src_key == dst_key) return nx ? c.reply.Integer(0) : c.reply.Ok();
  auto dst = c.ctx.Lookup(c.db(), dst_key);
  if (ReplyIfError(c, dst.status())) return;
  if (nx && dst->live()) return c.reply.Integer(0);
  if (ReplyIfError(c, PlaceKey(c, src_key, src->meta, c.db(), dst_key, *dst))) return;
  c.ctx.Delete(c.db(), src_key, *src);
  c.ctx.AddChanges(-1);  // Redis counts a rename once
  Notify(c, notify::kGeneric, "rename_from", src_key);
  Notify(c, notify::kGeneric, "rename_to", dst_key);
  nx ? c.reply.Integer(1) : c.reply.Ok();
}

void RenameCommand(CommandContext& c) {
  RenameGeneric(c, false);
}
void RenameNxCommand(CommandContext& c) {
  RenameGeneric(c, true);
}

void CopyCommand(CommandContext& c) {
  int dst_db = c.db();
  bool replace = false;
  for (size_t j = 3; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(c.arg(j), "db") && j + 1 < c.argc()) {
      auto db = DbArg(c, ++j);
      if (!db) return;
      dst_db = *db;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  if (dst_db == c.db() && c.arg(1) == c.arg(2))
    return c.reply.Error("ERR source and destination objects are the same");
  auto src = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, src.status())) return;
  if (!src->live()) return c.reply.Integer(0);
  auto dst = c.ctx.Lookup(dst_db, c.arg(2));
  if (ReplyIfError(c, dst.status())) return;
  if (dst->live() && !replace) return c.reply.Integer(0);
  if (ReplyIfError(c, PlaceKey(c, c.arg(1), src->meta, dst_db, c.arg(2), *dst))) return;
  c.ctx.Notify(notify::kGeneric, "copy_to", dst_db, c.arg(2));
  c.reply.Integer(1);
}

void MoveCommand(CommandContext& c) {
  auto db = DbArg(c, 2);
  if (!db) return;
  if (*db == c.db()) return c.reply.Error("ERR source and destination objects are the same");
  auto src = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, src.status())) return;
  if (!src->live()) return c.reply.Integer(0);
  auto dst = c.ctx.Lookup(*db, c.arg(1));
  if (ReplyIfError(c, dst.status())) return;
  if (dst->live()) return c.reply.Integer(0);
  if (ReplyIfError(c, PlaceKey(c, c.arg(1), src->meta, *db, c.arg(1), *dst))) return;
  c.ctx.Delete(c.db(), c.arg(1), *src);
  Notify(c, notify::kGeneric, "move_from", c.arg(1));
  c.ctx.Notify(notify::kGeneric, "move_to", *db, c.arg(1));
  c.reply.Integer(1);
}

void SwapDbCommand(CommandContext& c) {
  auto a = ParseInt64(c.arg(1));
  if (!a) return c.reply.Error("ERR invalid first DB index");
  auto b = ParseInt64(c.arg(2));
  if (!b) return c.reply.Error("ERR invalid second DB index");
  int n = c.server.keyspace->databases();
  if (*a < 0 || *a >= n || *b < 0 || *b >= n) return c.reply.Error("ERR DB index is out of range");
  if (ReplyIfError(c, c.server.keyspace->SwapDatabases(static_cast<int>(*a), static_cast<int>(*b))))
    return;
  ReplicateAsSent(c);
  c.reply.Ok();
}

// The literal part of a glob pattern before its first special character: a seek target.
std::string LiteralPrefix(const std::string& pattern) {
  std::string prefix;
  for (char ch : pattern) {
    if (ch == '*' || ch == '?' || ch == '[' || ch == '\\') break;
    prefix.push_back(ch);
  }
  return prefix;
}

// Iterates the live keys of the session's database from `start` (a metadata key) on; calls
// `visit(user_key, meta_header_type)` and stops when it returns false. Returns the metadata key
// after which iteration stopped ("" when the database was exhausted). With `lazy_expire`, the
// expired keys passed over are deleted after the command (SCAN, RANDOMKEY; Redis's KEYS only
// skips them).
template <typename Visit>
StatusOr<std::string> ForEachKey(CommandContext& c, const std::string& start,
                                 const std::string& end_bound, bool lazy_expire, Visit visit) {
  uint8_t pdb = c.server.keyspace->Physical(c.db());
  std::string upper = end_bound.empty() ? DatabaseEnd(pdb) : end_bound;
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  auto it = c.ctx.batch().NewIterator(ColumnFamily::kMetadata, &ro);
  for (it->Seek(start.empty() ? DatabaseBegin(pdb) : start); it->Valid(); it->Next()) {
    RedisType type;
    int64_t expire_ms;
    std::string_view value(it->value().data(), it->value().size());
    if (!Metadata::DecodeHeader(value, &type, &expire_ms)) continue;
    std::string_view key(it->key().data() + 1, it->key().size() - 1);
    if (expire_ms != 0 && expire_ms <= c.ctx.now_ms()) {
      if (lazy_expire) c.ctx.NoteExpired(pdb, key);
      continue;
    }
    if (!visit(key, type)) return it->key().ToString();
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return std::string();
}

void KeysCommand(CommandContext& c) {
  const std::string& pattern = c.arg(1);
  uint8_t pdb = c.server.keyspace->Physical(c.db());
  std::string prefix = LiteralPrefix(pattern);
  std::string start = MetadataKey(pdb, prefix);
  std::vector<std::string> keys;
  bool match_all = pattern == "*";
  // The count comes first in the reply, so the keys are gathered before replying: stop once
  // they pass max-reply-size (the reply could not be sent anyway).
  auto budget = static_cast<size_t>(c.server.config->max_reply_size.load());
  size_t bytes = 0;
  auto done = ForEachKey(c, start, "", false, [&](std::string_view key, RedisType) {
    if (key.substr(0, prefix.size()) != prefix) return false;  // past the literal prefix
    if (match_all || GlobMatch(pattern, key)) {
      keys.emplace_back(key);
      bytes += key.size();
    }
    return bytes <= budget;
  });
  if (ReplyIfError(c, done.status())) return;
  if (bytes > budget) return c.reply.Overflow();
  c.reply.BulkArray(keys.data(), keys.size());
}

void ScanCommand(CommandContext& c) {
  auto cursor = ScanCursorArg(c, 1);
  if (!cursor) return;
  ScanOptions opts;
  if (!ParseScanOptions(c, 2, true, &opts)) return;
  std::string start;
  uint8_t pdb = c.server.keyspace->Physical(c.db());
  if (*cursor != 0 && (!c.server.scan_cursors.Lookup(*cursor, &start) || start.empty() ||
                       static_cast<uint8_t>(start[0]) != pdb)) {
    // Unknown, or issued for another database: start over, which keeps SCAN's guarantees.
    start.clear();
  }
  std::vector<std::string> keys;
  int64_t examined = 0;
  std::string last;
  auto stopped = ForEachKey(c, start, "", true, [&](std::string_view key, RedisType type) {
    if (examined >= opts.count) return false;
    examined++;
    last = std::string(key);
    if (!opts.Matches(key)) return true;
    if (!opts.type.empty() && opts.type != RedisTypeName(type)) return true;
    keys.emplace_back(key);
    return true;
  });
  if (ReplyIfError(c, stopped.status())) return;
  uint64_t next = 0;
  if (!stopped->empty()) {
    // Resume strictly after the last key examined.
    std::string resume = MetadataKey(pdb, last);
    resume.push_back('\0');
    next = c.server.scan_cursors.Issue(std::move(resume));
  }
  c.reply.Array(2);
  c.reply.Bulk(std::to_string(next));
  c.reply.BulkArray(keys.data(), keys.size());
}

void RandomKeyCommand(CommandContext& c) {
  uint8_t pdb = c.server.keyspace->Physical(c.db());
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  // A few keys: one drawn by position, uniformly (a random seek below favours the key after
  // the widest gap in key space, and a small database has wide gaps).
  constexpr int64_t kDrawnByPosition = 64;
  const int64_t count = c.server.keyspace->KeyCount(c.db());
  if (count > 0 && count <= kDrawnByPosition) {
    std::vector<std::string> keys;
    auto all = ForEachKey(c, "", "", true, [&](std::string_view key, RedisType) {
      keys.emplace_back(key);
      return true;
    });
    if (ReplyIfError(c, all.status())) return;
    if (keys.empty()) return c.reply.Null();
    return c.reply.Bulk(keys[rng() % keys.size()]);
  }
  std::string probe = DatabaseBegin(pdb);
  for (int i = 0; i < 8; i++) probe.push_back(static_cast<char>(rng() & 0xff));
  std::string found;
  bool any = false;
  auto pick = [&](std::string_view key, RedisType) {
    found = std::string(key);
    any = true;
    return false;
  };
  auto r = ForEachKey(c, probe, "", true, pick);
  if (ReplyIfError(c, r.status())) return;
  if (!any) {
    r = ForEachKey(c, "", "", true, pick);  // the probe fell after the last key: wrap around
    if (ReplyIfError(c, r.status())) return;
  }
  if (!any) return c.reply.Null();
  c.reply.Bulk(found);
}

void TouchCommand(CommandContext& c) {
  CountLiveKeys(c, true);
}

void ObjectCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "help") {
    static const std::string kHelp[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value "
        "associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is proportional "
        "to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of seconds elapsed "
        "since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified <key>.",
        "HELP",
        "    Print this help."};
    c.reply.SimpleLines(kHelp);
    return;
  }
  if (c.argc() != 3 ||
      (sub != "encoding" && sub != "freq" && sub != "idletime" && sub != "refcount")) {
    return c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                         "'. Try OBJECT HELP.");
  }
  // OBJECT is no access of the key, nor are the reads behind its encoding.
  c.ctx.set_touches_keys(false);
  auto state = c.ctx.Peek(c.db(), c.arg(2));
  if (ReplyIfError(c, state.status())) return;
  if (!state->live()) return c.reply.Null();
  if (sub == "encoding") {
    auto encoding = ObjectEncoding(c, c.db(), c.arg(2), *state);
    if (ReplyIfError(c, encoding.status())) return;
    return c.reply.Bulk(*encoding);
  }
  if (sub == "refcount") return c.reply.Integer(ObjectRefcount(*c.server.config, *state));
  const bool lfu = c.server.config->maxmemory_lfu.load(std::memory_order_relaxed);
  KeyAccessTable& access = c.server.keyspace->access();
  const uint8_t pdb = c.server.keyspace->Physical(c.db());
  if (sub == "freq") {
    if (!lfu) {
      return c.reply.Error(
          "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
          "note that when switching between policies at runtime LRU and LFU data will take some "
          "time to adjust.");
    }
    return c.reply.Integer(access.Frequency(pdb, c.arg(2), c.ctx.now_ms()));
  }
  if (lfu) {
    return c.reply.Error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.");
  }
  c.reply.Integer(access.IdleSeconds(pdb, c.arg(2), c.ctx.now_ms()));
}

std::vector<size_t> CopyKeys(const std::vector<std::string>&) {
  return {1, 2};
}

constexpr uint32_t kW = kCmdWrite;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kKeyCommands = {
    {"del", -2, kW, 1, -1, 1, DelCommand, "generic", "Deletes one or more keys.",
     "@keyspace @write @slow"},
    {"unlink", -2, kW | kCmdFast, 1, -1, 1, DelCommand, "generic",
     "Asynchronously deletes one or more keys.", "@keyspace @write @fast"},
    {"exists", -2, kR | kCmdFast, 1, -1, 1, ExistsCommand, "generic",
     "Determines whether one or more keys exist.", "@keyspace @read @fast"},
    {"type", 2, kR | kCmdFast, 1, 1, 1, TypeCommand, "generic",
     "Determines the type of value stored at a key.", "@keyspace @read @fast"},
    {"expire", -3, kW | kCmdFast, 1, 1, 1, ExpireCommand, "generic",
     "Sets the expiration time of a key in seconds.", "@keyspace @write @fast"},
    {"pexpire", -3, kW | kCmdFast, 1, 1, 1, PExpireCommand, "generic",
     "Sets the expiration time of a key in milliseconds.", "@keyspace @write @fast"},
    {"expireat", -3, kW | kCmdFast, 1, 1, 1, ExpireAtCommand, "generic",
     "Sets the expiration time of a key to a Unix timestamp.", "@keyspace @write @fast"},
    {"pexpireat", -3, kW | kCmdFast, 1, 1, 1, PExpireAtCommand, "generic",
     "Sets the expiration time of a key to a Unix milliseconds timestamp.",
     "@keyspace @write @fast"},
    {"ttl", 2, kR | kCmdFast, 1, 1, 1, TtlCommand, "generic",
     "Returns the expiration time in seconds of a key.", "@keyspace @read @fast"},
    {"pttl", 2, kR | kCmdFast, 1, 1, 1, PTtlCommand, "generic",
     "Returns the expiration time in milliseconds of a key.", "@keyspace @read @fast"},
    {"expiretime", 2, kR | kCmdFast, 1, 1, 1, ExpireTimeCommand, "generic",
     "Returns the expiration time of a key as a Unix timestamp.", "@keyspace @read @fast"},
    {"pexpiretime", 2, kR | kCmdFast, 1, 1, 1, PExpireTimeCommand, "generic",
     "Returns the expiration time of a key as a Unix milliseconds timestamp.",
     "@keyspace @read @fast"},
    {"persist", 2, kW | kCmdFast, 1, 1, 1, PersistCommand, "generic",
     "Removes the expiration time of a key.", "@keyspace @write @fast"},
    {"rename", 3, kW, 1, 2, 1, RenameCommand, "generic",
     "Renames a key and overwrites the destination.", "@keyspace @write @slow"},
    {"renamenx", 3, kW | kCmdFast, 1, 2, 1, RenameNxCommand, "generic",
     "Renames a key only when the target key name doesn't exist.", "@keyspace @write @fast"},
    {"copy", -3, kW | kCmdDenyOom | kCmdExclusive, 1, 2, 1, CopyCommand, "generic",
     "Copies the value of a key to a new key.", "@keyspace @write @slow", CopyKeys},
    {"move", 3, kW | kCmdFast | kCmdExclusive, 1, 1, 1, MoveCommand, "generic",
     "Moves a key to another database.", "@keyspace @write @fast"},
    {"swapdb", 3, kW | kCmdFast | kCmdExclusive | kCmdSelfCommit, 0, 0, 0, SwapDbCommand, "server",
     "Swaps two Redis databases.", "@keyspace @write @fast @dangerous"},
    {"keys", 2, kR, 0, 0, 0, KeysCommand, "generic", "Returns all key names that match a pattern.",
     "@keyspace @read @slow @dangerous"},
    {"scan", -2, kR, 0, 0, 0, ScanCommand, "generic",
     "Iterates over the key names in the database.", "@keyspace @read @slow"},
    {"randomkey", 1, kR, 0, 0, 0, RandomKeyCommand, "generic",
     "Returns a random key name from the database.", "@keyspace @read @slow"},
    {"touch", -2, kR | kCmdFast, 1, -1, 1, TouchCommand, "generic",
     "Returns the number of existing keys out of those specified after updating the time they were "
     "last accessed.",
     "@keyspace @read @fast"},
    {"object", -2, kR, 2, 2, 1, ObjectCommand, "generic",
     "A container for object introspection commands.", "@slow", nullptr,
     "encoding:3:@keyspace@read@slow freq:3:@keyspace@read@slow idletime:3:@keyspace@read@slow "
     "refcount:3:@keyspace@read@slow help:2:@keyspace@slow"},
};

}  // namespace

const std::vector<CommandSpec>& KeyCommands() {
  return kKeyCommands;
}

}  // namespace basalt
