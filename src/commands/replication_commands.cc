// Replication commands: REPLICAOF/SLAVEOF, ROLE, WAIT, REPLSYNC, the command a Basalt replica
// sends to switch its connection into replication mode (docs/replication.md), and SYNC/PSYNC/
// REPLCONF, which give Redis's replicas and redis-cli --rdb an RDB file of the data.
//
// The handlers only parse and reply; the work is in repl/ (ReplicationManager). REPLSYNC does
// not reply itself: it hands the socket over, and the master's feeder thread answers.

#include "commands/command_util.h"
#include "commands/saves.h"
#include "common/clock.h"
#include "common/strutil.h"

namespace basalt {

namespace {

constexpr const char* kWaitOnReplicaError =
    "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
    "replica is configured to be writable (which is not the default) writes to replicas are "
    "just local and are not propagated.";

void ReplicaOfCommand(CommandContext& c) {
  ReplicationManager* repl = c.server.replication;
  if (c.server.failover != nullptr && c.server.failover->running()) {
    return c.reply.Error("ERR REPLICAOF not allowed while failing over.");
  }
  if (EqualsIgnoreCase(c.arg(1), "no") && EqualsIgnoreCase(c.arg(2), "one")) {
    Status s = repl->PromoteToMaster();
    if (ReplyIfError(c, s)) return;
    return c.reply.Ok();
  }
  auto port = ParseInt64(c.arg(2));
  if (!port || *port < 0 || *port > 65535) return c.reply.Error("ERR Invalid master port");
  bool already = false;
  Status s = repl->ReplicaOf(c.arg(1), static_cast<int>(*port), &already);
  if (ReplyIfError(c, s)) return;
  if (already) return c.reply.Simple("OK Already connected to specified master");
  c.server.replica_stream.DropAll();
  c.reply.Ok();
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], parsed as Redis 7.2 parses it.
void FailoverCommand(CommandContext& c) {
  if (c.argc() == 2 && EqualsIgnoreCase(c.arg(1), "abort")) {
    if (ReplyIfError(c, c.server.failover->Abort())) return;
    return c.reply.Ok();
  }
  Failover::Request request;
  bool has_target = false;
  for (size_t j = 1; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "timeout") && j + 1 < c.argc() && request.timeout_ms == 0) {
      auto ms = ParseInt64(c.arg(j + 1));
      if (!ms) return c.reply.Error(kNotIntegerError);
      if (*ms <= 0) return c.reply.Error("ERR FAILOVER timeout must be greater than 0");
      request.timeout_ms = *ms;
      j++;
    } else if (EqualsIgnoreCase(c.arg(j), "to") && j + 2 < c.argc() && !has_target) {
      auto port = ParseInt64(c.arg(j + 2));
      if (!port) return c.reply.Error(kNotIntegerError);
      request.host = c.arg(j + 1);
      request.port = static_cast<int>(*port);
      has_target = true;
      j += 2;
    } else if (EqualsIgnoreCase(c.arg(j), "force") && !request.force) {
      request.force = true;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  if (ReplyIfError(c, c.server.failover->Start(std::move(request)))) return;
  c.reply.Ok();
}

const char* LinkStateName(MasterLink::State state) {
  switch (state) {
    case MasterLink::State::kConnect:
      return "connect";
    case MasterLink::State::kConnecting:
      return "connecting";
    case MasterLink::State::kSync:
      return "sync";
    case MasterLink::State::kConnected:
      return "connected";
  }
  return "connect";
}

void RoleCommand(CommandContext& c) {
  ReplicationSnapshot snap = c.server.replication->Snapshot();
  if (snap.replica) {
    c.reply.Array(5);
    c.reply.Bulk("slave");
    c.reply.Bulk(snap.link.host);
    c.reply.Integer(snap.link.port);
    c.reply.Bulk(LinkStateName(snap.link.state));
    c.reply.Integer(snap.link.has_position ? static_cast<int64_t>(snap.link.applied_seq) : -1);
    return;
  }
  c.reply.Array(3);
  c.reply.Bulk("master");
  c.reply.Integer(static_cast<int64_t>(snap.latest_seq));
  c.reply.Array(snap.replicas.size());
  for (const auto& r : snap.replicas) {
    c.reply.Array(3);
    c.reply.Bulk(r.ip);
    c.reply.Bulk(std::to_string(r.port));
    c.reply.Bulk(std::to_string(r.acked_seq));
  }
}

// The replicas, Basalt's and Redis's, that acknowledged `session`'s last write.
std::function<int()> AckedReplicasCounter(ServerState& server, const Session& session) {
  ReplicationManager* repl = server.replication;
  Saves* saves = server.saves;
  const uint64_t sequence = session.last_write_seq;
  const uint64_t position = session.last_write_stream_position;
  return [repl, saves, sequence, position] {
    return repl->CountReplicasAcked(sequence) +
           (saves == nullptr ? 0 : saves->CountRedisReplicasAcked(position));
  };
}

// Parks a WAIT or WAITAOF that needs more acknowledgements: each acknowledgement runs it again,
// and the timeout replies with `timeout_reply`. Redis replicas acknowledge once a second; as
// Redis does, the first run asks them to acknowledge at once.
void ParkForAcks(CommandContext& c, int64_t timeout_ms, std::function<void(Reply&)> timeout_reply) {
  if (!c.session.woken) c.server.replica_stream.RequestAcks();
  Session& session = c.session;
  session.block.active = true;
  session.block.argv = c.argv;
  session.block.deadline_ms = timeout_ms == 0 ? 0 : UnixMillis() + timeout_ms;
  session.block.timeout_reply = std::move(timeout_reply);
  c.server.blocking.BlockOnReplicaAcks(session);
}

void WaitCommand(CommandContext& c) {
  ReplicationManager* repl = c.server.replication;
  if (repl->is_replica()) return c.reply.Error(kWaitOnReplicaError);
  auto wanted = IntArg(c, 1);
  if (!wanted) return;
  auto timeout_ms = IntArg(c, 2, "ERR timeout is not an integer or out of range");
  if (!timeout_ms) return;
  if (*timeout_ms < 0) return c.reply.Error("ERR timeout is negative");
  std::function<int()> count_acked = AckedReplicasCounter(c.server, c.session);
  const int acked = count_acked();
  if (c.in_exec || acked >= *wanted) return c.reply.Integer(acked);
  ParkForAcks(c, *timeout_ms, [count_acked](Reply& reply) { reply.Integer(count_acked()); });
}

// WAITAOF numlocal numreplicas timeout (Redis 7.2). Basalt's WAL is always on and plays the
// AOF's part, so numlocal is never refused as with Redis's appendonly no: the local count is 1
// once the WAL holding the client's last write is fsynced (at once in sync durability; in the
// other modes WAITAOF fsyncs it then and there rather than wait for the next background sync).
// Basalt replicas count as for WAIT: those that acknowledged the write. Redis replicas are not
// counted: they report their AOF's offset (REPLCONF ACK ... FACK), which Basalt does not track.
void WaitAofCommand(CommandContext& c) {
  auto numlocal = ParseInt64(c.arg(1));
  if (!numlocal) return c.reply.Error(kNotIntegerError);
  if (*numlocal < 0 || *numlocal > 1)
    return c.reply.Error("ERR value is out of range, value must between 0 and 1");
  auto numreplicas = ParseInt64(c.arg(2));
  if (!numreplicas || *numreplicas < 0)
    return c.reply.Error("ERR value is out of range, must be positive");
  auto timeout_ms = IntArg(c, 3, "ERR timeout is not an integer or out of range");
  if (!timeout_ms) return;
  if (*timeout_ms < 0) return c.reply.Error("ERR timeout is negative");
  ReplicationManager* repl = c.server.replication;
  if (repl->is_replica()) {
    return c.reply.Error(
        "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
        "replicas are just local and are not propagated.");
  }
  const uint64_t target = c.session.last_write_seq;
  Engine* engine = c.server.keyspace->engine();
  int64_t local = 1;
  if (target != 0 && engine->durability() != Durability::kSync) {
    rocksdb::Status s = engine->db()->SyncWAL();
    if (!s.ok()) local = 0;
  }
  const int acked = repl->CountReplicasAcked(target);
  if (c.in_exec || (acked >= *numreplicas && local >= *numlocal)) {
    c.reply.Array(2);
    c.reply.Integer(local);
    return c.reply.Integer(acked);
  }
  ParkForAcks(c, *timeout_ms, [repl, target, local](Reply& reply) {
    reply.Array(2);
    reply.Integer(local);
    reply.Integer(repl->CountReplicasAcked(target));
  });
}

// REPLSYNC replica-replid master-replid next-seq last-hash listening-port
void ReplSyncCommand(CommandContext& c) {
  SyncRequest request;
  request.replica_replid = c.arg(1);
  request.master_replid = c.arg(2);
  auto next = ParseUnsigned(c.arg(3));
  auto hash = ParseUnsigned(c.arg(4));
  auto port = ParseInt64(c.arg(5));
  if (!next || !hash || !port || *port < 0 || *port > 65535)
    return c.reply.Error("ERR invalid REPLSYNC arguments");
  request.next_seq = *next;
  request.last_hash = *hash;
  request.listening_port = static_cast<int>(*port);
  std::string ip = c.session.addr.substr(0, c.session.addr.rfind(':'));
  ReplicationManager* repl = c.server.replication;
  c.session.take_socket = [repl, request, ip](int fd) { repl->ServeReplica(fd, request, ip); };
}

// SYNC and PSYNC from Redis's replicas and redis-cli --rdb: a full resynchronization (an RDB
// file of the data, commands/saves.h), never a partial one. The socket goes to the sending
// thread once this reply-less command's turn is over.
void LegacySyncCommand(CommandContext& c) {
  Saves::SyncRequest request;
  request.psync = EqualsIgnoreCase(c.arg(0), "psync");
  request.rdb_only = c.session.repl_rdb_only;
  request.replid = c.server.replication->replid();
  request.offset = c.server.keyspace->engine()->LatestSequence();
  request.ip = c.session.addr.substr(0, c.session.addr.rfind(':'));
  request.port = c.session.repl_listening_port;
  Saves* saves = c.server.saves;
  c.session.take_socket = [saves, request](int fd) { saves->ServeSync(fd, request); };
}

// REPLCONF <option> <value> ...: what a Redis replica or redis-cli --rdb tells its master
// before SYNC/PSYNC. rdb-only and listening-port are kept; ACK and GETACK get no reply.
void ReplConfCommand(CommandContext& c) {
  if (c.argc() % 2 == 0) return c.reply.Error(kSyntaxError);
  for (size_t j = 1; j < c.argc(); j += 2) {
    std::string option = ToLower(c.arg(j));
    if (option == "ack" || option == "getack" || option == "fack") return;
    if (option == "rdb-only") {
      if (c.arg(j + 1) != "0" && c.arg(j + 1) != "1") return c.reply.Error(kSyntaxError);
      c.session.repl_rdb_only = c.arg(j + 1) == "1";
    } else if (option == "listening-port") {
      auto port = ParseInt64(c.arg(j + 1));
      if (!port || *port < 0 || *port > 65535) return c.reply.Error("ERR invalid listening port");
      c.session.repl_listening_port = static_cast<int>(*port);
    } else if (option != "ip-address" && option != "capa" && option != "rdb-filter-only") {
      return c.reply.Error("ERR Unrecognized REPLCONF option: " + c.arg(j));
    }
  }
  c.reply.Ok();
}

constexpr uint32_t kAdm = kCmdAdmin | kCmdNoScript;

const std::vector<CommandSpec> kReplicationCommands = {
    {"replicaof", 3, kAdm | kCmdStale, 0, 0, 0, ReplicaOfCommand, "server",
     "Configures a server as replica of another, or promotes it to a master.",
     "@admin @slow @dangerous"},
    {"slaveof", 3, kAdm | kCmdStale, 0, 0, 0, ReplicaOfCommand, "server",
     "Sets a Redis server as a replica of another, or promotes it to being a master.",
     "@admin @slow @dangerous"},
    {"failover", -1, kAdm | kCmdNoScript | kCmdStale, 0, 0, 0, FailoverCommand, "server",
     "Starts a coordinated failover from a server to one of its replicas.",
     "@admin @slow @dangerous"},
    {"role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, RoleCommand, "server",
     "Returns the replication role.", "@admin @fast @dangerous"},
    {"wait", 3, 0, 0, 0, 0, WaitCommand, "generic",
     "Blocks until the asynchronous replication of all preceding write commands sent by the "
     "connection is completed.",
     "@slow @connection"},
    {"waitaof", 4, kCmdNoScript, 0, 0, 0, WaitAofCommand, "generic",
     "Blocks until all of the preceding write commands sent by the connection are written to "
     "the append-only file of the master and/or replicas.",
     "@slow @connection"},
    {"replsync", 6, kAdm | kCmdNoMulti | kCmdSkipSlowlog, 0, 0, 0, ReplSyncCommand, "server",
     "Internal command used by Basalt replicas to start replication.", "@admin @slow @dangerous"},
    {"psync", -3, kAdm | kCmdNoMulti, 0, 0, 0, LegacySyncCommand, "server",
     "An internal command used in replication (Basalt: a full resync, no command stream).",
     "@admin @slow @dangerous"},
    {"sync", 1, kAdm | kCmdNoMulti, 0, 0, 0, LegacySyncCommand, "server",
     "An internal command used in replication (Basalt: the RDB file, no command stream).",
     "@admin @slow @dangerous"},
    {"replconf", -1, kAdm | kCmdNoMulti | kCmdLoading | kCmdStale, 0, 0, 0, ReplConfCommand,
     "server", "An internal command for configuring the replication stream.",
     "@admin @slow @dangerous"},
};

}  // namespace

const std::vector<CommandSpec>& ReplicationCommands() {
  return kReplicationCommands;
}

}  // namespace basalt
