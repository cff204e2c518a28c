#include "commands/command_util.h"

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

void WriteString(CommandContext& c, std::string_view key, std::string value, int64_t expire_ms,
                 const KeyState& old, StringEncoding encoding) {
  Metadata meta;
  meta.type = RedisType::kString;
  meta.encoding = encoding;
  meta.expire_ms = expire_ms;
  meta.value = std::move(value);
  c.ctx.Write(c.db(), key, meta, old);
}

void CountHit(CommandContext& c, bool hit) {
  if (hit) {
    c.server.counters.keyspace_hits.fetch_add(1, std::memory_order_relaxed);
  } else {
    c.server.counters.keyspace_misses.fetch_add(1, std::memory_order_relaxed);
  }
}

std::optional<int64_t> TimeoutArg(CommandContext& c, size_t i) {
  auto seconds = ParseLongDouble(c.arg(i));
  if (!seconds || *seconds * 1000 > static_cast<long double>(INT64_MAX / 2)) {
    c.reply.Error("ERR timeout is not a float or out of range");
    return std::nullopt;
  }
  if (*seconds < 0) {
    c.reply.Error("ERR timeout is negative");
    return std::nullopt;
  }
  int64_t ms = static_cast<int64_t>(*seconds * 1000);
  if (ms == 0 && *seconds > 0) ms = 1;
  return ms == 0 ? 0 : c.ctx.now_ms() + ms;
}

void ParkClient(CommandContext& c, const std::vector<size_t>& key_indexes, int64_t deadline_ms,
                bool timeout_replies_null_array) {
  std::vector<std::pair<uint8_t, std::string>> keys;
  uint8_t pdb = c.server.keyspace->Physical(c.db());
  for (size_t i : key_indexes) keys.emplace_back(pdb, c.arg(i));
  c.session.block.active = true;
  c.session.block.argv = c.argv;
  c.session.block.deadline_ms = deadline_ms;
  c.session.block.timeout_replies_null_array = timeout_replies_null_array;
  c.server.blocking.Block(c.session, keys);
}

bool CheckStringSize(CommandContext& c, uint64_t size) {
  if (size > static_cast<uint64_t>(c.server.config->proto_max_bulk_len.load())) {
    c.reply.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    return false;
  }
  return true;
}

}  // namespace basalt
