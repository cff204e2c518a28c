// MULTI/EXEC/DISCARD/WATCH/UNWATCH.
//
// Queued commands run inside one Context under the keyspace's exclusive lock, so their writes
// commit as one batch and no other client observes a transaction half done. WATCH registers the
// key with the WatchRegistry; any committed write to it marks this session dirty, and a watched
// key that was live and has since expired counts as modified, as in Redis 7.
#include "commands/acl_check.h"
#include "commands/admission.h"
#include "commands/command_util.h"
#include "commands/dispatcher.h"
#include "commands/transactions.h"

namespace basalt {

void UnwatchAll(ServerState& server, Session& session) {
  for (const auto& w : session.watched) {
    server.keyspace->watches().Unwatch(w.physical_db, w.key, session.watch.get());
  }
  session.watched.clear();
  session.watch->dirty = false;
}

void ResetTransaction(ServerState& server, Session& session) {
  session.in_multi = false;
  session.multi_failed = false;
  session.queued_denyoom = false;
  session.queued.clear();
  UnwatchAll(server, session);
}

namespace {

void MultiCommand(CommandContext& c) {
  if (c.session.in_multi) return c.reply.Error("ERR MULTI calls can not be nested");
  c.session.in_multi = true;
  c.session.multi_failed = false;
  c.session.queued.clear();
  c.reply.Ok();
}

void DiscardCommand(CommandContext& c) {
  if (!c.session.in_multi) return c.reply.Error("ERR DISCARD without MULTI");
  ResetTransaction(c.server, c.session);
  c.reply.Ok();
}

// Whether a key live when watched is gone: expired, or deleted by expiry (which does not mark
// its watchers, Context::DeleteExpired).
bool WatchedKeyExpired(CommandContext& c) {
  for (const auto& w : c.session.watched) {
    if (!w.alive_at_watch) continue;
    auto state = c.ctx.Inspect(w.db, w.key);
    if (state.ok() && !state->live()) return true;
  }
  return false;
}

// Whether the transaction, queued while this server was a master, writes and this server is a
// read-only replica now: as Redis, EXEC is then refused as a whole (a REPLICAOF inside the
// transaction does not stop the commands after it).
bool QueuedWriteRefusedAsReplica(CommandContext& c) {
  if (c.server.replication == nullptr || !c.server.replication->rejects_writes()) return false;
  for (const auto& argv : c.session.queued) {
    std::string unused;
    const CommandSpec* spec = ResolveCommand(argv, &unused);
    if (spec != nullptr && RejectedAsReplica(c.server, c.session, *spec)) return true;
  }
  return false;
}

void ExecCommand(CommandContext& c) {
  Session& session = c.session;
  if (!session.in_multi) return c.reply.Error("ERR EXEC without MULTI");
  if (session.multi_failed) {
    ResetTransaction(c.server, session);
    return c.reply.Error("EXECABORT Transaction discarded because of previous errors.");
  }
  if (session.watch->dirty || WatchedKeyExpired(c)) {
    ResetTransaction(c.server, session);
    return c.reply.NullArray();
  }
  if (QueuedWriteRefusedAsReplica(c)) {
    ResetTransaction(c.server, session);
    return c.reply.Error(std::string("EXECABORT Transaction discarded because of: ") +
                         kReadOnlyError);
  }
  std::vector<std::vector<std::string>> queued = std::move(session.queued);
  ResetTransaction(c.server, session);
  c.reply.Array(queued.size());
  for (auto& argv : queued) {
    std::string error;
    const CommandSpec* spec = ResolveCommand(argv, &error);
    if (spec == nullptr) {
      c.reply.Error(error);
      continue;
    }
    // The rules may have changed since the command was queued.
    std::string denied =
        session.from_master ? std::string() : AclRecheckForExec(c.server, session, *spec, argv);
    if (!denied.empty()) {
      c.reply.Error(denied);
      continue;
    }
    RunInContext(c.server, session, *spec, argv, c.reply, c.ctx, true);
  }
}

void WatchCommand(CommandContext& c) {
  if (c.session.in_multi) return c.reply.Error("ERR WATCH inside MULTI is not allowed");
  Keyspace* ks = c.server.keyspace;
  for (size_t i = 1; i < c.argc(); i++) {
    const std::string& key = c.arg(i);
    uint8_t pdb = ks->Physical(c.db());
    bool already = false;
    for (const auto& w : c.session.watched) {
      if (w.physical_db == pdb && w.key == key) already = true;
    }
    if (already) continue;
    auto state = c.ctx.Inspect(c.db(), key);
    if (ReplyIfError(c, state.status())) return;
    c.session.watched.push_back(WatchedKey{c.db(), pdb, key, state->live()});
    ks->watches().Watch(pdb, key, c.session.watch);
  }
  c.reply.Ok();
}

void UnwatchCommand(CommandContext& c) {
  UnwatchAll(c.server, c.session);
  c.reply.Ok();
}

// As in Redis 7.2, a busy script does not hold these up (EXEC waits for it).
constexpr uint32_t kTx = kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdAllowBusy;

const std::vector<CommandSpec> kTransactionCommands = {
    {"multi", 1, kTx | kCmdTxControl, 0, 0, 0, MultiCommand, "transactions",
     "Starts a transaction.", "@fast @transaction"},
    {"exec", 1,
     kCmdNoScript | kCmdLoading | kCmdStale | kCmdSkipSlowlog | kCmdTxControl | kCmdExclusive, 0, 0,
     0, ExecCommand, "transactions", "Executes all commands in a transaction.",
     "@slow @transaction"},
    {"discard", 1, kTx | kCmdTxControl, 0, 0, 0, DiscardCommand, "transactions",
     "Discards a transaction.", "@fast @transaction"},
    {"watch", -2, kTx | kCmdTxControl, 1, -1, 1, WatchCommand, "transactions",
     "Monitors changes to keys to determine the execution of a transaction.", "@fast @transaction"},
    {"unwatch", 1, kTx, 0, 0, 0, UnwatchCommand, "transactions",
     "Forgets about watched keys of a transaction.", "@fast @transaction"},
};

}  // namespace

const std::vector<CommandSpec>& TransactionCommands() {
  return kTransactionCommands;
}

}  // namespace basalt
