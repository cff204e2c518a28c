#include "commands/command_util.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "types/collection.h"
#include "types/zset.h"

namespace basalt {

std::optional<int64_t> IntArg(CommandContext& c, size_t i, const char* error) {
  auto v = ParseInt64(c.arg(i));
  if (!v) c.reply.Error(error);
  return v;
}

bool ReplyIfError(CommandContext& c, const Status& s) {
  if (s.ok()) return false;
  c.reply.Error(s.ToReplyText());
  return true;
}

std::optional<KeyState> LookupString(CommandContext& c, std::string_view key) {
  auto state = c.ctx.Lookup(c.db(), key);
  if (ReplyIfError(c, state.status())) return std::nullopt;
  if (state->live() && state->meta.type != RedisType::kString) {
    c.reply.Error(kWrongTypeError);
    return std::nullopt;
  }
  return *state;
}

void WriteString(CommandContext& c, std::string_view key, std::string_view value, int64_t expire_ms,
                 const KeyState& old, StringEncoding encoding) {
  PutString(c.ctx, c.db(), key, value, expire_ms, old, encoding);
}

bool ReadStringValue(CommandContext& c, std::string_view key, const KeyState& state,
                     std::string* out) {
  out->clear();
  if (!state.live()) return true;
  return !ReplyIfError(c, ReadString(c.ctx, c.db(), key, state.meta, out));
}

void CountHit(CommandContext& c, std::string_view key, bool hit) {
  if (TentativeStats* held = c.reply.tentative()) {
    (hit ? held->keyspace_hits : held->keyspace_misses)++;
    if (!hit) c.ctx.Notify(notify::kKeyMiss, "keymiss", c.db(), key);
    return;
  }
  if (hit) {
    c.server.counters.keyspace_hits.fetch_add(1, std::memory_order_relaxed);
  } else {
    c.server.counters.keyspace_misses.fetch_add(1, std::memory_order_relaxed);
    c.ctx.Notify(notify::kKeyMiss, "keymiss", c.db(), key);
  }
}

void NotifyIfEmptied(CommandContext& c, std::string_view key) {
  if (!c.ctx.keyspace()->events().Enabled(notify::kGeneric)) return;
  auto state = c.ctx.Lookup(c.db(), key);
  if (state.ok() && !state->live()) Notify(c, notify::kGeneric, "del", key);
}

void NotifyListPopped(CommandContext& c, std::string_view key, bool left, uint64_t size_before,
                      size_t popped) {
  Notify(c, notify::kList, left ? "lpop" : "rpop", key);
  if (popped >= size_before) Notify(c, notify::kGeneric, "del", key);
  CountChanges(c, static_cast<int64_t>(popped));
}

void NotifyListMoved(CommandContext& c, std::string_view src, std::string_view dst, bool from_left,
                     bool to_left) {
  Notify(c, notify::kList, to_left ? "lpush" : "rpush", dst);
  Notify(c, notify::kList, from_left ? "lpop" : "rpop", src);
  NotifyIfEmptied(c, src);
  if (src != dst) c.ctx.AddChanges(-1);
}

std::optional<int64_t> TimeoutArg(CommandContext& c, size_t i) {
  auto seconds = ParseLongDouble(c.arg(i), /*allow_inf=*/true);
  if (!seconds) {
    c.reply.Error("ERR timeout is not a float or out of range");
    return std::nullopt;
  }
  // As Redis 7.2: milliseconds past a long long, or a deadline past one, are out of range;
  // seconds * 1000 rounds up, so -0.0001 is 0, which means forever.
  const long double ms_exact = std::ceil(*seconds * 1000);
  constexpr long double kTwo63 = 9223372036854775808.0L;
  if (ms_exact >= kTwo63) {
    c.reply.Error("ERR timeout is out of range");
    return std::nullopt;
  }
  const int64_t ms = ms_exact < -kTwo63 ? INT64_MIN : static_cast<int64_t>(ms_exact);
  if (ms < 0) {
    c.reply.Error("ERR timeout is negative");
    return std::nullopt;
  }
  if (ms == 0) return 0;
  if (ms > INT64_MAX - c.ctx.now_ms()) {
    c.reply.Error("ERR timeout is out of range");
    return std::nullopt;
  }
  return c.ctx.now_ms() + ms;
}

void ParkClient(CommandContext& c, const std::vector<size_t>& key_indexes, int64_t deadline_ms,
                bool timeout_replies_null_array, bool fails_on_deleted_key) {
  std::vector<std::pair<uint8_t, std::string>> keys;
  uint8_t pdb = c.server.keyspace->Physical(c.db());
  for (size_t i : key_indexes) keys.emplace_back(pdb, c.arg(i));
  c.session.block.active = true;
  c.session.block.argv = c.argv;
  c.session.block.deadline_ms = deadline_ms;
  c.session.block.timeout_replies_null_array = timeout_replies_null_array;
  c.server.blocking.Block(c.session, keys, fails_on_deleted_key);
}

bool ParkAgainIfNotReady(CommandContext& c, const std::vector<size_t>& key_indexes, RedisType type,
                         int64_t deadline_ms, bool timeout_replies_null_array) {
  if (!c.session.woken) return false;
  for (size_t i : key_indexes) {
    auto state = c.ctx.Lookup(c.db(), c.arg(i));
    if (!state.ok() || (state->live() && state->meta.type == type)) return false;
  }
  ParkClient(c, key_indexes, deadline_ms, timeout_replies_null_array);
  return true;
}

std::optional<uint64_t> ScanCursorArg(CommandContext& c, size_t i) {
  const std::string& s = c.arg(i);
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if ((!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) || *end != '\0' ||
      errno == ERANGE) {
    c.reply.Error("ERR invalid cursor");
    return std::nullopt;
  }
  return static_cast<uint64_t>(v);
}

bool ParseScanOptions(CommandContext& c, size_t first, bool allow_type, ScanOptions* out) {
  for (size_t j = first; j < c.argc(); j++) {
    bool has_next = j + 1 < c.argc();
    if (EqualsIgnoreCase(c.arg(j), "match") && has_next) {
      out->pattern = c.arg(++j);
    } else if (EqualsIgnoreCase(c.arg(j), "count") && has_next) {
      auto n = IntArg(c, ++j);
      if (!n) return false;
      if (*n < 1) {
        c.reply.Error(kSyntaxError);
        return false;
      }
      out->count = *n;
    } else if (allow_type && EqualsIgnoreCase(c.arg(j), "type") && has_next) {
      out->type = ToLower(c.arg(++j));
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

void ScanMembersCommand(CommandContext& c, RedisType type, const ScanEmitter& emit) {
  auto cursor = ScanCursorArg(c, 2);
  if (!cursor) return;
  auto state = LookupCollection(c.ctx, c.db(), c.arg(1), type);
  if (ReplyIfError(c, state.status())) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) {
    // Redis replies to a missing key before it looks at the options.
    c.reply.Array(2);
    c.reply.Bulk("0");
    return c.reply.Array(0);
  }
  ScanOptions opts;
  if (!ParseScanOptions(c, 3, false, &opts)) return;
  std::string start;
  // An unknown cursor starts over, which keeps SCAN's guarantees.
  if (*cursor != 0 && !c.server.scan_cursors.Lookup(*cursor, &start)) start.clear();
  std::vector<std::string> out;
  uint64_t next = 0;
  MemberIterator it(c.ctx, ColumnFamily::kSubkey, c.db(), c.arg(1), state->meta.version);
  int64_t examined = 0;
  for (it.Seek(start); it.Valid(); it.Next()) {
    if (examined++ == opts.count) {
      next = c.server.scan_cursors.Issue(std::string(it.member()));
      break;
    }
    if (!opts.Matches(it.member())) continue;
    // Checked here rather than by the iterator (SkipPoppedMembers): a popped member's entry
    // counts as examined, so that COUNT bounds the work of one call as it does elsewhere.
    if (type == RedisType::kZset) {
      StatusOr<bool> live =
          ZsetMemberLive(c.ctx, c.db(), c.arg(1), state->meta, it.member(), it.value());
      if (ReplyIfError(c, live.status())) return;
      if (!*live) continue;
    }
    if (ReplyIfError(c, emit(state->meta, it.member(), it.value(), &out))) return;
  }
  if (ReplyIfError(c, it.status())) return;
  c.reply.Array(2);
  c.reply.Bulk(std::to_string(next));
  c.reply.BulkArray(out.data(), out.size());
}

bool CheckStringSize(CommandContext& c, uint64_t size) {
  if (size > static_cast<uint64_t>(c.server.config->proto_max_bulk_len.load())) {
    c.reply.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    return false;
  }
  return true;
}

void ReplicateAs(CommandContext& c, std::initializer_list<std::string_view> argv) {
  if (Replicating(c))
    c.ctx.effects().Add(c.db(), std::vector<std::string>(argv.begin(), argv.end()));
}

void ReplicateDeletion(CommandContext& c, std::string_view key) {
  if (!Replicating(c)) return;
  const bool lazy = c.server.config->GetBool("lazyfree-lazy-server-del");
  ReplicateAs(c, {lazy ? "UNLINK" : "DEL", key});
}

void ReplicateExpireAt(CommandContext& c, std::string_view key, int64_t expire_ms) {
  if (Replicating(c)) ReplicateAs(c, {"PEXPIREAT", key, std::to_string(expire_ms)});
}

}  // namespace basalt
