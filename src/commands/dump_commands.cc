// DUMP and RESTORE: a key's value in Redis's serialization (types/rdb_value.h), so that values
// move between Basalt and redis-server in both directions.
//
// RESTORE checks everything before it writes: options, the key's absence (unless REPLACE),
// the TTL, the payload's footer (RDB version and CRC-64), then the whole object, every length
// checked against the payload. A payload that fails any check changes nothing.
#include <climits>

#include "commands/command_util.h"
#include "common/rdb_encoding.h"
#include "types/rdb_value.h"

namespace basalt {

namespace {

void DumpCommand(CommandContext& c) {
  auto state = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, state.status())) return;
  if (!state->live()) return c.reply.Null();
  auto payload = DumpKey(c.ctx, c.db(), c.arg(1), state->meta);
  if (ReplyIfError(c, payload.status())) return;
  c.reply.Bulk(*payload);
}

struct RestoreOptions {
  bool replace = false;
  bool absttl = false;
  int64_t idletime = -1;  // -1: not given
  int64_t freq = -1;
};

// REPLACE, ABSTTL, IDLETIME s, FREQ f (the last two exclusive, as in Redis).
bool ParseRestoreOptions(CommandContext& c, RestoreOptions* opts) {
  bool idletime = false, freq = false;
  for (size_t j = 4; j < c.argc(); j++) {
    bool has_value = j + 1 < c.argc();
    if (EqualsIgnoreCase(c.arg(j), "replace")) {
      opts->replace = true;
    } else if (EqualsIgnoreCase(c.arg(j), "absttl")) {
      opts->absttl = true;
    } else if (EqualsIgnoreCase(c.arg(j), "idletime") && has_value && !freq) {
      auto v = IntArg(c, ++j);
      if (!v) return false;
      if (*v < 0) {
        c.reply.Error("ERR Invalid IDLETIME value, must be >= 0");
        return false;
      }
      idletime = true;
      opts->idletime = *v;
    } else if (EqualsIgnoreCase(c.arg(j), "freq") && has_value && !idletime) {
      auto v = IntArg(c, ++j);
      if (!v) return false;
      if (*v < 0 || *v > 255) {
        c.reply.Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
        return false;
      }
      freq = true;
      opts->freq = *v;
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

void RestoreCommand(CommandContext& c) {
  RestoreOptions opts;
  if (!ParseRestoreOptions(c, &opts)) return;
  const std::string& key = c.arg(1);
  auto old = c.ctx.Lookup(c.db(), key);
  if (ReplyIfError(c, old.status())) return;
  if (!opts.replace && old->live()) return c.reply.Error("BUSYKEY Target key name already exists.");
  auto ttl = IntArg(c, 2);
  if (!ttl) return;
  if (*ttl < 0) return c.reply.Error("ERR Invalid TTL value, must be >= 0");
  uint16_t version;
  std::string_view body;
  if (!rdb::VerifyDumpPayload(c.arg(3), &version, &body))
    return c.reply.Error("ERR DUMP payload version or checksum are wrong");
  RdbValue value;
  if (!ParseRdbObject(body, &value)) return c.reply.Error("ERR Bad data format");

  int64_t expire_ms = *ttl;
  if (expire_ms != 0 && !opts.absttl) {
    if (expire_ms > LLONG_MAX - c.ctx.now_ms()) return c.reply.Error(kNotIntegerError);
    expire_ms += c.ctx.now_ms();
  }
  if (expire_ms != 0 && expire_ms <= c.ctx.now_ms()) {
    // Already expired: the key is not created, and a replaced one is deleted.
    if (old->live()) {
      ReplicateDeletion(c, key);
      c.ctx.Delete(c.db(), key, *old);
      Notify(c, notify::kGeneric, "del", key);
    } else {
      ReplicateNothing(c);
    }
    return c.reply.Ok();
  }
  if (expire_ms != 0 && !opts.absttl && Replicating(c)) {
    // As Redis sends a TTL: absolute.
    std::vector<std::string> sent(c.argv.begin(), c.argv.end());
    sent[0] = "RESTORE";
    sent[2] = std::to_string(expire_ms);
    sent.push_back("ABSTTL");
    ReplicateAs(c, std::move(sent));
  }
  if (ReplyIfError(c, WriteRdbValue(c.ctx, c.db(), key, value, expire_ms, *old))) return;
  c.server.keyspace->access().SetRestored(c.server.keyspace->Physical(c.db()), key, c.ctx.now_ms(),
                                          opts.idletime, static_cast<int>(opts.freq));
  Notify(c, notify::kGeneric, "restore", key);
  c.reply.Ok();
}

const std::vector<CommandSpec> kDumpCommands = {
    {"dump", 2, kCmdReadOnly, 1, 1, 1, DumpCommand, "generic",
     "Returns a serialized representation of the value stored at a key.", "@keyspace @read @slow"},
    {"restore", -4, kCmdWrite | kCmdDenyOom, 1, 1, 1, RestoreCommand, "generic",
     "Creates a key from the serialized representation of a value.",
     "@keyspace @write @slow @dangerous"},
};

}  // namespace

const std::vector<CommandSpec>& DumpCommands() {
  return kDumpCommands;
}

}  // namespace basalt
