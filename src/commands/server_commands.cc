// Server commands: CONFIG, DBSIZE, FLUSHDB/FLUSHALL, TIME, LASTSAVE, SAVE, BGSAVE, BACKUP,
// SHUTDOWN, SLOWLOG.
// INFO lives in info.cc, COMMAND in introspection_commands.cc.
#include <sys/time.h>

#include "commands/command_util.h"
#include "commands/info.h"
#include "commands/saves.h"

namespace basalt {

namespace {

void ConfigGet(CommandContext& c) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t j = 2; j < c.argc(); j++) {
    for (auto& kv : c.server.config->Match(c.arg(j))) {
      bool dup = false;
      for (const auto& p : pairs) dup |= p.first == kv.first;
      if (!dup) pairs.push_back(std::move(kv));
    }
  }
  c.reply.Map(pairs.size());
  for (const auto& [k, v] : pairs) {
    c.reply.Bulk(k);
    c.reply.Bulk(v);
  }
}

// Redis's test for "local" in enable-protected-configs: a loopback peer.
bool IsLocalPeer(const std::string& addr) {
  return addr.rfind("127.", 0) == 0 || addr.rfind("::1:", 0) == 0;
}

// CONFIG SET k1 v1 [k2 v2 ...]: all pairs or none, with Redis's error texts.
void ConfigSet(CommandContext& c) {
  if (c.argc() < 4) return c.reply.Error(WrongArityError("config|set"));
  if (c.argc() % 2 != 0) return c.reply.Error("ERR syntax error");
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t j = 2; j < c.argc(); j += 2) pairs.emplace_back(c.arg(j), c.arg(j + 1));
  std::string bad;
  Status s = c.server.config->SetLiveMany(pairs, IsLocalPeer(c.session.addr), &bad);
  if (s.ok()) return c.reply.Ok();
  if (s.IsNotFound())
    return c.reply.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + bad +
                         "'");
  c.reply.Error("ERR CONFIG SET failed (possibly related to argument '" + bad + "') - " +
                s.message());
}

void ConfigCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "get" && c.argc() >= 3) return ConfigGet(c);
  if (sub == "set") return ConfigSet(c);
  if (sub == "resetstat" && c.argc() == 2) {
    ResetServerStats(c.server);
    return c.reply.Ok();
  }
  if (sub == "rewrite" && c.argc() == 2) {
    if (ReplyIfError(c, c.server.config->Rewrite())) return;
    return c.reply.Ok();
  }
  if (sub == "help" && c.argc() == 2) {
    static const std::string kHelp[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Print this help."};
    c.reply.SimpleLines(kHelp);
    return;
  }
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try CONFIG HELP.");
}

void DbSizeCommand(CommandContext& c) {
  c.reply.Integer(c.server.keyspace->KeyCount(c.db()) + c.ctx.PendingKeyDelta(c.db()));
}

bool FlushModeOk(CommandContext& c) {
  if (c.argc() == 1) return true;
  if (c.argc() == 2 && (EqualsIgnoreCase(c.arg(1), "async") || EqualsIgnoreCase(c.arg(1), "sync")))
    return true;
  c.reply.Error(kSyntaxError);
  return false;
}

void FlushDbCommand(CommandContext& c) {
  if (!FlushModeOk(c)) return;
  if (ReplyIfError(c, c.server.keyspace->FlushDatabase(c.db()))) return;
  ReplicateAsSent(c);
  c.reply.Ok();
}

void FlushAllCommand(CommandContext& c) {
  if (!FlushModeOk(c)) return;
  if (ReplyIfError(c, c.server.keyspace->FlushAll())) return;
  if (!c.server.config->GetString("save").empty()) {
    // SaveNow has logged a failure; the flush stands, as in Redis.
    c.server.saves->SaveAfterFlushAll().ok();
  }
  ReplicateAsSent(c);
  c.reply.Ok();
}

// Inside a script or a transaction the time is the one frozen at its start (Context::now_ms),
// as Redis 7.2 answers TIME there from its cached time.
void TimeCommand(CommandContext& c) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  if (c.in_exec) {
    tv.tv_sec = static_cast<time_t>(c.ctx.now_ms() / 1000);
    tv.tv_usec = static_cast<suseconds_t>(c.ctx.now_ms() % 1000 * 1000);
  }
  c.reply.Array(2);
  c.reply.Bulk(std::to_string(tv.tv_sec));
  c.reply.Bulk(std::to_string(tv.tv_usec));
}

void LastSaveCommand(CommandContext& c) {
  c.reply.Integer(c.server.last_save_unix.load());
}

// SAVE and BGSAVE write the RDB file dir/dbfilename (commands/saves.h).
void SaveCommand(CommandContext& c) {
  if (ReplyIfError(c, c.server.saves->Save())) return;
  c.reply.Ok();
}

// BGSAVE [SCHEDULE]. As in Redis, inside a transaction it is scheduled: the save's thread takes
// its snapshot once EXEC has let go of the keyspace, so the transaction is in the file.
void BgSaveCommand(CommandContext& c) {
  if (c.argc() > 2 || (c.argc() == 2 && !EqualsIgnoreCase(c.arg(1), "schedule")))
    return c.reply.Error(kSyntaxError);
  if (!c.server.saves->StartBackgroundSave())
    return c.reply.Error("ERR Background save already in progress");
  c.reply.Simple(c.in_exec ? "Background saving scheduled" : "Background saving started");
}

// BACKUP <dir>: a consistent copy of the data directory, from which a server can start.
void BackupCommand(CommandContext& c) {
  if (ReplyIfError(c, c.server.saves->Backup(c.arg(1)))) return;
  c.reply.Ok();
}

// BGREWRITEAOF: Basalt's AOF is the RocksDB WAL, which needs no rewrite; what shrinks it is
// flushing the memtables, after which the WAL files holding them are dropped.
void BgRewriteAofCommand(CommandContext& c) {
  if (ReplyIfError(c, c.server.saves->FlushMemtables())) return;
  c.reply.Simple("Background append only file rewriting started");
}

void ShutdownCommand(CommandContext& c) {
  for (size_t j = 1; j < c.argc(); j++) {
    std::string opt = ToLower(c.arg(j));
    if (opt == "abort") return c.reply.Error("ERR No shutdown in progress.");
    if (opt != "nosave" && opt != "save" && opt != "now" && opt != "force")
      return c.reply.Error(kSyntaxError);
  }
  // Like Redis, a successful SHUTDOWN sends no reply: the connection just closes.
  c.session.close_after_reply = true;
  if (c.server.request_shutdown) c.server.request_shutdown();
}

void SlowlogCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "len" && c.argc() == 2)
    return c.reply.Integer(static_cast<int64_t>(c.server.slowlog.Len()));
  if (sub == "reset" && c.argc() == 2) {
    c.server.slowlog.Reset();
    return c.reply.Ok();
  }
  if (sub == "get" && c.argc() <= 3) {
    int64_t count = 10;
    if (c.argc() == 3) {
      auto n = ParseInt64(c.arg(2));
      if (!n || *n < -1) return c.reply.Error("ERR count should be greater than or equal to -1");
      count = *n == -1 ? INT64_MAX : *n;
    }
    auto entries = c.server.slowlog.Get(static_cast<size_t>(count));
    c.reply.Array(entries.size());
    for (const auto& e : entries) {
      c.reply.Array(6);
      c.reply.Integer(e.id);
      c.reply.Integer(e.unix_time);
      c.reply.Integer(e.duration_us);
      c.reply.BulkArray(e.argv.data(), e.argv.size());
      c.reply.Bulk(e.client_addr);
      c.reply.Bulk(e.client_name);
    }
    return;
  }
  if (sub == "help" && c.argc() == 2) {
    static const std::string kHelp[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Print this help."};
    c.reply.SimpleLines(kHelp);
    return;
  }
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try SLOWLOG HELP.");
}

// COMPACT (as in Kvrocks): starts a full manual compaction in the background and replies at
// once; INFO rocksdb shows manual_compaction_running until it is done.
void CompactCommand(CommandContext& c) {
  Status s = c.server.keyspace->engine()->StartManualCompaction();
  if (!s.ok()) return c.reply.Error("ERR " + s.message());
  c.reply.Ok();
}

// MONITOR: from now on the client receives every command the server runs (commands/monitor.h).
void MonitorCommand(CommandContext& c) {
  if (c.in_exec) return c.reply.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
  // As in Redis, MONITOR from a client that already monitors is ignored, without a reply.
  if (c.session.monitor.load(std::memory_order_relaxed)) return;
  c.server.monitors.Add(c.session);
  c.reply.Ok();
}

void InfoCommand(CommandContext& c) {
  c.reply.Verbatim(BuildInfo(c.server, c.argv));
}

constexpr uint32_t kAdm = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;

const std::vector<CommandSpec> kServerCommands = {
    {"config", -2, kAdm, 0, 0, 0, ConfigCommand, "server",
     "A container for server configuration commands.", "@slow", nullptr,
     "get:-3:@admin@slow@dangerous set:-4:@admin@slow@dangerous "
     "resetstat:2:@admin@slow@dangerous rewrite:2:@admin@slow@dangerous help:2:@slow"},
    {"dbsize", 1, kCmdReadOnly | kCmdFast, 0, 0, 0, DbSizeCommand, "server",
     "Returns the number of keys in the database.", "@keyspace @read @fast"},
    {"flushdb", -1, kCmdWrite | kCmdExclusive | kCmdSelfCommit, 0, 0, 0, FlushDbCommand, "server",
     "Remove all keys from the current database.", "@keyspace @write @slow @dangerous"},
    {"flushall", -1, kCmdWrite | kCmdExclusive | kCmdSelfCommit, 0, 0, 0, FlushAllCommand, "server",
     "Removes all keys from all databases.", "@keyspace @write @slow @dangerous"},
    {"time", 1, kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, TimeCommand, "server",
     "Returns the server time.", "@fast"},
    {"lastsave", 1, kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, LastSaveCommand, "server",
     "Returns the Unix timestamp of the last successful save to disk.", "@admin @fast @dangerous"},
    // As in Redis 7.0: neither is served by a stale replica, and SAVE is refused inside MULTI.
    {"save", 1, kCmdAdmin | kCmdNoScript | kCmdNoMulti, 0, 0, 0, SaveCommand, "server",
     "Synchronously saves the database(s) to disk.", "@admin @slow @dangerous"},
    {"bgsave", -1, kCmdAdmin | kCmdNoScript, 0, 0, 0, BgSaveCommand, "server",
     "Asynchronously saves the database(s) to disk.", "@admin @slow @dangerous"},
    {"backup", 2, kCmdAdmin | kCmdNoScript | kCmdNoMulti, 0, 0, 0, BackupCommand, "server",
     "Makes a consistent copy of the data directory in a new directory (Basalt).",
     "@admin @slow @dangerous"},
    {"bgrewriteaof", 1, kCmdAdmin | kCmdNoScript, 0, 0, 0, BgRewriteAofCommand, "server",
     "Flushes memtables so that the WAL (Basalt's AOF) shrinks.", "@admin @slow @dangerous"},
    {"shutdown", -1, kAdm | kCmdNoMulti | kCmdAllowBusy, 0, 0, 0, ShutdownCommand, "server",
     "Synchronously saves the database(s) to disk and shuts down the server.",
     "@admin @slow @dangerous"},
    {"slowlog", -2, kCmdAdmin | kCmdLoading | kCmdStale, 0, 0, 0, SlowlogCommand, "server",
     "A container for slow log commands.", "@slow", nullptr,
     "get:-2:@admin@slow@dangerous len:2:@admin@slow@dangerous reset:2:@admin@slow@dangerous "
     "help:2:@slow"},
    {"compact", 1, kAdm, 0, 0, 0, CompactCommand, "server",
     "Compacts the whole database in the background, reclaiming deleted and expired data.",
     "@admin @slow @dangerous"},
    {"monitor", 1, kAdm, 0, 0, 0, MonitorCommand, "server",
     "Listens for all requests received by the server in real-time.", "@admin @slow @dangerous"},
    {"info", -1, kCmdLoading | kCmdStale, 0, 0, 0, InfoCommand, "server",
     "Returns information and statistics about the server.", "@slow @dangerous"},
};

}  // namespace

const std::vector<CommandSpec>& ServerCommands() {
  return kServerCommands;
}

}  // namespace basalt
