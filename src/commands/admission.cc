#include "commands/admission.h"

#include <cstring>

#include "commands/acl_check.h"
#include "commands/dispatcher.h"
#include "commands/saves.h"
#include "commands/transactions.h"

namespace basalt {

bool RejectedAsReplica(const ServerState& server, const Session& session, const CommandSpec& spec) {
  return (spec.flags & kCmdWrite) && !session.from_master && server.replication != nullptr &&
         server.replication->rejects_writes();
}

bool RunsWhileLoading(const CommandSpec& spec, const std::vector<std::string>& argv) {
  const uint32_t flags = CommandTable::Get().FlagsOf(spec, argv);
  return (flags & kCmdLoading) && !(flags & (kCmdWrite | kCmdMayReplicate)) &&
         spec.first_key == 0 && spec.key_finder == nullptr && !RunsExclusive(spec, argv);
}

bool LacksGoodReplicas(const ServerState& server) {
  const int64_t needed = server.config->min_replicas_to_write.load(std::memory_order_relaxed);
  if (needed <= 0 || server.replication == nullptr || server.replication->is_replica()) {
    return false;
  }
  const int64_t lag_ms = server.config->min_replicas_max_lag.load(std::memory_order_relaxed) * 1000;
  const int redis_replicas =
      server.saves == nullptr ? 0 : server.saves->CountRedisReplicasAckedWithin(lag_ms);
  return server.replication->CountGoodReplicas(lag_ms) + redis_replicas < needed;
}

void Reject(ServerState& server, Session& session, const CommandSpec& spec, Reply& reply,
            std::string_view error) {
  if (session.in_multi && strcmp(spec.name, "exec") == 0) {
    ResetTransaction(server, session);
    reply.Error(std::string("EXECABORT Transaction discarded because of: ").append(error));
    return;
  }
  if (session.in_multi) session.multi_failed = true;
  reply.Error(error);
}

namespace {

// A RESP2 client with subscriptions may only run the commands that keep its connection a
// stream of pub/sub replies.
std::string SubscribedContextError(const CommandSpec& spec, const std::vector<std::string>& argv) {
  return "ERR Can't execute '" + FullCommandName(spec, argv) +
         "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
         "context";
}

// Refuses writes while the storage engine cannot persist them (Redis's MISCONF, which it uses
// for the same situation: a failing disk). docs/reliability.md documents the text.
bool RefuseWriteOnStorageError(ServerState& server, const CommandSpec& spec, Reply& reply) {
  Engine* engine = server.keyspace->engine();
  if (!(spec.flags & kCmdWrite) || !engine->writes_stopped()) return false;
  reply.Error("MISCONF Basalt can't persist to disk: " + engine->health().last_error +
              ". Commands that may modify the data set are disabled until the disk problem is "
              "fixed; writes resume by themselves (INFO persistence shows the state).");
  return true;
}

// Whether memory past maxmemory refuses this command (memory_limit.h), as Redis decides: one
// that may grow the data set (EXEC when it queued one), and inside MULTI anything but EXEC,
// DISCARD, QUIT and RESET, since queueing itself takes memory.
bool RefusedOnOom(const Session& session, const CommandSpec& spec) {
  if (spec.flags & kCmdDenyOom) return true;
  bool exec = strcmp(spec.name, "exec") == 0;
  if (exec) return session.queued_denyoom;
  return session.in_multi && strcmp(spec.name, "discard") != 0 && strcmp(spec.name, "quit") != 0 &&
         strcmp(spec.name, "reset") != 0;
}

// What the replication checks below see of a command; for EXEC, of its queued commands, as
// Redis judges a transaction by what it holds.
struct ReplicationTraits {
  bool write = false;     // writes (min-replicas-to-write)
  bool stale_ok = false;  // may run on a stale replica (replica-serve-stale-data no)
};
// A script call (EVAL, FCALL) writes as far as these checks go when its script or function
// declares that it may (scripting.h); a script without a shebang is checked at each write.
ReplicationTraits TraitsOfCommand(ServerState& server, const CommandSpec& spec,
                                  const std::vector<std::string>& argv) {
  bool write = spec.flags & kCmdWrite;
  if ((spec.flags & kCmdOffload) && argv.size() >= 2 && server.script_declares_writes) {
    write = server.script_declares_writes(argv);
  }
  return {write, (spec.flags & kCmdStale) != 0};
}
ReplicationTraits TraitsOf(ServerState& server, const Session& session, const CommandSpec& spec,
                           const std::vector<std::string>& argv) {
  if (!session.in_multi || strcmp(spec.name, "exec") != 0) {
    return TraitsOfCommand(server, spec, argv);
  }
  ReplicationTraits traits{false, true};
  for (const std::vector<std::string>& queued_argv : session.queued) {
    std::string unused;
    const CommandSpec* queued = ResolveCommand(queued_argv, &unused);
    if (queued == nullptr) continue;
    const ReplicationTraits t = TraitsOfCommand(server, *queued, queued_argv);
    traits.write = traits.write || t.write;
    traits.stale_ok = traits.stale_ok && t.stale_ok;
  }
  return traits;
}

// min-replicas-to-write: a master with fewer good replicas refuses writes, as Redis does.
bool TooFewReplicas(ServerState& server, const Session& session, const CommandSpec& spec,
                    const std::vector<std::string>& argv) {
  if (server.config->min_replicas_to_write.load(std::memory_order_relaxed) <= 0 ||
      session.from_master) {
    return false;
  }
  return LacksGoodReplicas(server) && TraitsOf(server, session, spec, argv).write;
}

// replica-serve-stale-data no: a replica whose link is down serves only what Redis flags as
// allowed on stale data (INFO, REPLICAOF, ...).
bool RefusedAsStale(ServerState& server, const Session& session, const CommandSpec& spec,
                    const std::vector<std::string>& argv) {
  if (server.config->replica_serve_stale_data.load(std::memory_order_relaxed) ||
      session.from_master || server.replication == nullptr || !server.replication->is_replica()) {
    return false;
  }
  return !TraitsOf(server, session, spec, argv).stale_ok && server.replication->is_stale_replica();
}

}  // namespace

bool Admitted(ServerState& server, Session& session, const CommandSpec& spec,
              const std::vector<std::string>& argv, Reply& reply) {
  if (!(spec.flags & kCmdNoAuth) && AuthRequired(server, session)) {
    if (session.in_multi) session.multi_failed = true;
    reply.Error("NOAUTH Authentication required.");
    return false;
  }
  if (!session.from_master && !AclPermitsOrReply(server, session, spec, argv, reply)) {
    return false;
  }
  if (session.resp == 2 && session.subscriptions.total() > 0 && !(spec.flags & kCmdPubSubContext)) {
    reply.Error(SubscribedContextError(spec, argv));
    return false;
  }
  if (session.in_multi && (spec.flags & kCmdNoMulti)) {
    session.multi_failed = true;
    reply.Error("ERR Command not allowed inside a transaction");
    return false;
  }
  if (TooFewReplicas(server, session, spec, argv)) {
    Reject(server, session, spec, reply, kNoReplicasError);
    return false;
  }
  if (session.in_multi && RejectedAsReplica(server, session, spec)) {
    session.multi_failed = true;
    reply.Error(kReadOnlyError);
    return false;
  }
  if (RefusedAsStale(server, session, spec, argv)) {
    Reject(server, session, spec, reply,
           "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
    return false;
  }
  if (server.keyspace->loading() && !RunsWhileLoading(spec, argv)) {
    Reject(server, session, spec, reply, kLoadingError);
    return false;
  }
  if (RefuseWriteOnStorageError(server, spec, reply)) {
    if (session.in_multi) session.multi_failed = true;
    return false;
  }
  if (!session.from_master && server.memory_limit.Exceeded(*server.config) &&
      RefusedOnOom(session, spec)) {
    Reject(server, session, spec, reply, kOomError);
    return false;
  }
  return true;
}

}  // namespace basalt
