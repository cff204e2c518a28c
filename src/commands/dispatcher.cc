#include "commands/dispatcher.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "commands/acl_check.h"
#include "commands/transactions.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "stats/error_stats.h"

namespace basalt {

namespace {

constexpr const char* kReadOnlyError = "READONLY You can't write against a read only replica.";

bool RejectedAsReplica(const ServerState& server, const CommandSpec& spec) {
  return (spec.flags & kCmdWrite) && server.replication != nullptr &&
         server.replication->rejects_writes();
}

std::string UnknownCommandError(const std::vector<std::string>& argv) {
  // Built with append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string msg("ERR unknown command '");
  msg.append(argv[0], 0, 128);
  msg.append("', with args beginning with: ");
  // Like Redis, the argument list is cut once it passes 128 characters.
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; i++) {
    size_t room = 128 - args.size();
    args.append("'");
    args.append(argv[i], 0, room);
    args.append("' ");
  }
  msg.append(args);
  return msg;
}

bool ArityOk(int arity, size_t argc) {
  int n = static_cast<int>(argc);
  return arity > 0 ? n == arity : n >= -arity;
}

// The stripes a command locks: exclusively for writers, shared for readers. A read of even one
// key is several RocksDB lookups (the metadata, then the members or a long string's segments,
// with no snapshot between them), which must not straddle another client's write: LRANGE
// reading a list's head from the metadata and then its elements must not see an LPOP that
// committed in between.
// Into *stripes (sorted, distinct), replacing what it held.
void CollectStripes(ServerState& server, const Session& session, const CommandSpec& spec,
                    const std::vector<std::string>& argv, std::vector<size_t>* stripes) {
  stripes->clear();
  Keyspace* ks = server.keyspace;
  uint8_t pdb = ks->Physical(session.db);
  CommandTable::ForEachKeyIndex(spec, argv, [&](size_t i) {
    stripes->push_back(ks->locks().StripeOf(pdb, argv[i]));
    ks->locks().Prefetch(stripes->back());
  });
  std::sort(stripes->begin(), stripes->end());
  stripes->erase(std::unique(stripes->begin(), stripes->end()), stripes->end());
}

std::vector<size_t> StripesOf(ServerState& server, const Session& session, const CommandSpec& spec,
                              const std::vector<std::string>& argv) {
  std::vector<size_t> stripes;
  CollectStripes(server, session, spec, argv, &stripes);
  return stripes;
}

KeyLockGuard LockKeys(ServerState& server, const Session& session, const CommandSpec& spec,
                      const std::vector<std::string>& argv) {
  bool write = spec.flags & (kCmdWrite | kCmdRewritesKey);
  std::vector<size_t> stripes = StripesOf(server, session, spec, argv);
  if (stripes.empty()) return KeyLockGuard();
  return KeyLockGuard(&server.keyspace->locks(), std::move(stripes), write);
}

// Error replies this thread had produced when the command being accounted started: Account()
// calls the command failed if the count moved since. A command inside EXEC or a script moves the
// mark forward when it is accounted, so the enclosing EXEC fails only for errors of its own
// (EXECABORT, EXEC without MULTI), as Redis counts them.
thread_local int64_t t_errors_at_start = 0;

void MarkCommandStart() {
  t_errors_at_start = ThreadErrorReplies();
}

void Account(ServerState& server, Session& session, const CommandSpec& spec,
             const std::vector<std::string>& argv, uint64_t start_ticks, uint64_t end_ticks,
             bool record_latency = true) {
  // A command that parked its client counts when it replies: woken and run again, or timed out
  // (AccountTimedOutBlock).
  if (session.block.active) return;
  const int64_t duration_us = CommandClock::MicrosBetween(start_ticks, end_ticks);
  size_t slot = CommandTable::Get().StatSlotOf(spec, argv);
  if (slot < server.command_stats.size()) {
    CommandStat& stat = server.command_stats.at(slot);
    stat.calls.fetch_add(1, std::memory_order_relaxed);
    stat.usec.fetch_add(duration_us, std::memory_order_relaxed);
    const int64_t errors = ThreadErrorReplies();
    if (errors != t_errors_at_start) {
      stat.failed.fetch_add(1, std::memory_order_relaxed);
      t_errors_at_start = errors;
    }
    if (record_latency && server.latency_tracking.load(std::memory_order_relaxed)) {
      stat.Histogram().Record(CommandClock::NanosBetween(start_ticks, end_ticks));
    }
  }
  server.counters.commands_processed.fetch_add(1, std::memory_order_relaxed);
  int64_t monitor_ms = server.latency_monitor_threshold_ms.load(std::memory_order_relaxed);
  if (monitor_ms > 0 && duration_us / 1000 >= monitor_ms) {
    server.latency_monitor.Add((spec.flags & kCmdFast) ? "fast-command" : "command",
                               duration_us / 1000, UnixMillis() / 1000);
  }
  int64_t threshold = server.config->slowlog_slower_than.load(std::memory_order_relaxed);
  if (threshold >= 0 && duration_us >= threshold && !(spec.flags & kCmdSkipSlowlog)) {
    std::string name;
    {
      std::lock_guard<std::mutex> lock(session.info_mu);
      name = session.name;
    }
    server.slowlog.Add(argv, duration_us, session.addr, name,
                       static_cast<size_t>(server.config->slowlog_max_len.load()));
  }
}

// A command refused before it ran (arity, ACL, BUSY, READONLY, MISCONF, ...): Redis's
// rejected_calls.
void CountRejected(ServerState& server, const CommandSpec& spec,
                   const std::vector<std::string>& argv) {
  size_t slot = CommandTable::Get().StatSlotOf(spec, argv);
  if (slot < server.command_stats.size()) {
    server.command_stats.at(slot).rejected.fetch_add(1, std::memory_order_relaxed);
  }
}

// After a lookup failed: a known command (or subcommand) called with the wrong number of
// arguments counts as rejected; an unknown name has no counters, as in Redis.
void CountRejectedLookup(ServerState& server, const std::vector<std::string>& argv,
                         const std::string& error) {
  if (error.rfind("ERR wrong number of arguments", 0) != 0) return;
  if (const CommandSpec* spec = CommandTable::Get().Find(argv[0])) {
    CountRejected(server, *spec, argv);
  }
}

// "get", or "client|list" for a container command: CLIENT LIST's cmd= field, error texts.
std::string FullCommandName(const CommandSpec& spec, const std::vector<std::string>& argv) {
  std::string name = spec.name;
  if (argv.size() >= 2 && CommandTable::Get().HasSubcommands(spec)) {
    name.push_back('|');
    name.append(ToLower(argv[1]));
  }
  return name;
}

void SetLastCommand(Session& session, const CommandSpec& spec,
                    const std::vector<std::string>& argv) {
  const bool has_subcommands = CommandTable::Get().HasSubcommands(spec);
  if (!has_subcommands && session.last_command_spec == &spec) return;
  std::string name = FullCommandName(spec, argv);
  std::lock_guard<std::mutex> lock(session.info_mu);
  session.last_command = std::move(name);
  session.last_command_spec = has_subcommands ? nullptr : &spec;
}

// As in Redis: while a script is busy only a few commands get through, and of SCRIPT only KILL,
// of SHUTDOWN only the NOSAVE form.
bool AllowedWhileBusy(const CommandSpec& spec, const std::vector<std::string>& argv) {
  if (!(spec.flags & kCmdAllowBusy)) return false;
  if (strcmp(spec.name, "script") == 0)
    return argv.size() == 2 && EqualsIgnoreCase(argv[1], "kill");
  if (strcmp(spec.name, "function") == 0) {
    return argv.size() == 2 &&
           (EqualsIgnoreCase(argv[1], "kill") || EqualsIgnoreCase(argv[1], "stats"));
  }
  if (strcmp(spec.name, "shutdown") == 0) {
    for (size_t i = 1; i < argv.size(); i++) {
      if (EqualsIgnoreCase(argv[i], "nosave")) return true;
    }
    return false;
  }
  return true;
}

// Waits for the keyspace lock in short slices instead of blocking outright, so that a command
// queued behind a script notices when the script turns busy and can answer BUSY (or, for SCRIPT
// KILL, run) instead of waiting for it to end. False: a script is busy and the lock is not held.
bool LockKeyspace(ServerState& server, bool exclusive, int64_t threshold_ms) {
  constexpr int64_t kSliceMs = 20;
  WriterPreferringMutex& mu = server.keyspace->exclusive();
  while (true) {
    if (exclusive ? mu.try_lock_for_ms(kSliceMs) : mu.try_lock_shared_for_ms(kSliceMs)) return true;
    if (server.script_guard.Busy(threshold_ms)) return false;
  }
}

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

// A reply that passed max-reply-size was dropped while being built; like Redis's output buffer
// hard limit, the client is closed instead of being sent a partial reply.
void CloseForReplySize(ServerState& server, Session& session, const CommandSpec& spec,
                       std::string* out, size_t reply_start) {
  // A group's commit may have sent (and cleared) what preceded the reply since reply_start.
  out->resize(std::min(reply_start, out->size()));
  session.close_after_reply = true;
  server.counters.reply_size_disconnections.fetch_add(1, std::memory_order_relaxed);
  LOG(WARNING) << "closing client " << session.addr << ": the reply to '" << spec.name
               << "' exceeds max-reply-size ("
               << server.config->max_reply_size.load(std::memory_order_relaxed) << " bytes)";
}

// Runs the handler as RunHandler does, while clients monitor: they get the command after it ran
// (the EVAL family before, so that a script's own calls follow it), while its locks are held.
// A parked command run again after a wake-up was shown when it first ran.
// A monitoring client is refused the key space, as Redis 7 refuses it to its replicas (a
// monitor is one); checked here, where only a server with monitors arrives.
bool RunHandlerFeedingMonitors(ServerState& server, Session& session, const CommandSpec& spec,
                               CommandContext& c) {
  if (session.monitor.load(std::memory_order_relaxed) &&
      (spec.flags & (kCmdWrite | kCmdReadOnly | kCmdMayReplicate))) {
    c.reply.Error("ERR Replica can't interact with the keyspace");
    return false;
  }
  const bool shown = !session.woken && ShownToMonitors(spec, c.argv);
  const bool first = spec.flags & kCmdMonitorFirst;
  if (shown && first) server.monitors.Feed(session, session.db, c.argv);
  // The handler may consume its arguments; the line is made from the command as sent.
  std::vector<std::string> sent;
  if (shown && !first) sent = c.argv;
  spec.handler(c);
  if (shown && !first) server.monitors.Feed(session, session.db, sent);
  return true;
}

// Client-side caching (commands/tracking.h). A tracking client's read-only command has its keys
// remembered (the EVAL family's are not: the commands its script runs count instead; nor are a
// Pub/Sub command's shard channels). Copied before the handler runs, which may consume argv.
// Called only while some client tracks.
bool TracksReadsOf(const Session& session, const CommandSpec& spec) {
  const uint32_t flags = session.tracking_flags.load(std::memory_order_relaxed);
  return (flags & (tracking_flag::kOn | tracking_flag::kBcast)) == tracking_flag::kOn &&
         (spec.flags & kCmdReadOnly) && !(spec.flags & (kCmdOffload | kCmdPubSub));
}

void CollectReadKeys(const CommandSpec& spec, const std::vector<std::string>& argv,
                     std::vector<std::string>* keys) {
  CommandTable::ForEachKeyIndex(spec, argv, [&](size_t i) { keys->push_back(argv[i]); });
}

// After a command ran in `ctx` for `session` (a script's client has its caller's id): what it
// changed is invalidated as this client's change, then what it read is remembered, in Redis's
// order (a key a command both changes and reads stays tracked).
void TrackCommand(ServerState& server, const Session& session, Context& ctx,
                  const std::vector<std::string>& read_keys) {
  thread_local std::vector<std::string_view> changed;
  changed.clear();
  ctx.TakeChangedKeys([](std::string_view key) { changed.push_back(key); });
  if (!changed.empty()) server.tracking.ChangedKeys(session.id, changed);
  if (!read_keys.empty()) server.tracking.Remember(session.id, read_keys);
}

}  // namespace

const char* BusyScriptError(const ScriptGuard& guard) {
  return guard.running_function()
             ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
               "NOSAVE."
             : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
               "NOSAVE.";
}

namespace {

// A client's pipeline mostly repeats one command: comparing the name's few bytes with the one it
// sent last costs less than hashing it into the table, which took 1.3% of a pipelined LPUSH's
// samples (docs/benchmarks.md, change 81). The table changes only at start-up, before any
// client connects (rename-command), so a remembered spec stays right.
const CommandSpec* FindCommand(const std::string& name, Session* session) {
  if (session == nullptr) return CommandTable::Get().Find(name);
  if (session->last_spec_found != nullptr && name == session->last_name_sent) {
    return session->last_spec_found;
  }
  const CommandSpec* spec = CommandTable::Get().Find(name);
  if (spec != nullptr) {
    session->last_name_sent = name;
    session->last_spec_found = spec;
  }
  return spec;
}

}  // namespace

const CommandSpec* ResolveCommand(const std::vector<std::string>& argv, std::string* error,
                                  Session* session) {
  const CommandSpec* spec = FindCommand(argv[0], session);
  if (spec == nullptr) {
    *error = UnknownCommandError(argv);
    return nullptr;
  }
  if (!ArityOk(spec->arity, argv.size())) {
    *error = WrongArityError(spec->name);
    return nullptr;
  }
  const CommandTable& table = CommandTable::Get();
  if (argv.size() >= 2 && table.HasSubcommands(*spec)) {
    auto arity = table.SubcommandArity(*spec, argv[1]);
    std::string upper = spec->name;
    for (auto& ch : upper) ch = static_cast<char>(toupper(static_cast<unsigned char>(ch)));
    if (!arity) {
      error->assign("ERR unknown subcommand '");
      error->append(argv[1], 0, 128);
      error->append("'. Try ");
      error->append(upper);
      error->append(" HELP.");
      return nullptr;
    }
    if (!ArityOk(*arity, argv.size())) {
      std::string full = spec->name;
      full.push_back('|');
      full.append(ToLower(argv[1]));
      *error = WrongArityError(full);
      return nullptr;
    }
  }
  return spec;
}

void RunInContext(ServerState& server, Session& session, const CommandSpec& spec,
                  std::vector<std::string>& argv, Reply& reply, Context& ctx, bool in_exec) {
  SetLastCommand(session, spec, argv);
  if (in_exec && (spec.flags & kCmdSelfCommit)) {
    // Whole-database commands commit on their own; what the transaction wrote before them
    // must land first so that the order of effects is the order of commands.
    Status s = ctx.Commit();
    if (!s.ok()) {
      reply.Error(s.ToReplyText());
      return;
    }
  }
  if (in_exec && RejectedAsReplica(server, spec)) {
    // Queued while this server was a master; it became a replica before EXEC.
    reply.Error(kReadOnlyError);
    return;
  }
  if (in_exec) MarkCommandStart();
  const bool tracking = server.tracking.active();
  std::vector<std::string> read_keys;
  if (tracking && TracksReadsOf(session, spec)) CollectReadKeys(spec, argv, &read_keys);
  uint64_t start = CommandClock::Now();
  CommandContext c{server, session, argv, reply, ctx, in_exec};
  if (server.monitors.active()) {
    RunHandlerFeedingMonitors(server, session, spec, c);
  } else {
    spec.handler(c);
  }
  if (tracking) TrackCommand(server, session, ctx, read_keys);
  if (in_exec) Account(server, session, spec, argv, start, CommandClock::Now());
}

namespace {

// The checks between resolving a command and queueing or running it: authentication, ACL, the
// RESP2 subscribed context, MULTI restrictions, a read-only replica and a failed disk. False
// when one refused the command; the refusal is already in `reply`.
bool Admitted(ServerState& server, Session& session, const CommandSpec& spec,
              const std::vector<std::string>& argv, Reply& reply) {
  if (!(spec.flags & kCmdNoAuth) && AuthRequired(server, session)) {
    if (session.in_multi) session.multi_failed = true;
    reply.Error("NOAUTH Authentication required.");
    return false;
  }
  if (!AclPermitsOrReply(server, session, spec, argv, reply)) {
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
  if (session.in_multi && RejectedAsReplica(server, spec)) {
    session.multi_failed = true;
    reply.Error(kReadOnlyError);
    return false;
  }
  if (RefuseWriteOnStorageError(server, spec, reply)) {
    if (session.in_multi) session.multi_failed = true;
    return false;
  }
  return true;
}

// A command naming several keys (MSET's ten, MGET's, DEL's) looks each up in turn, and each
// lookup waits for a cache miss or two in the metadata cache; started together, they overlap.
void PrefetchKeys(const Session& session, const CommandSpec& spec,
                  const std::vector<std::string>& argv, Context& ctx) {
  if (spec.key_finder == nullptr && (spec.first_key <= 0 || spec.first_key == spec.last_key)) {
    return;
  }
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  CommandTable::ForEachKeyIndex(spec, argv, [&](size_t i) {
    if (keys.size() < MetadataCache::kMaxPrefetch) keys.push_back(argv[i]);
  });
  if (keys.size() >= 2) ctx.PrefetchMetadata(session.db, keys);
}

// Runs the handler in `ctx`, once the caller holds the command's locks. False when the command
// was refused instead: a write on a read-only replica, checked here under the keyspace lock
// because a replica's link takes that lock exclusively once it starts, so no write that passed
// this check can still be running when the link applies the master's data. `tracking`: some
// client tracks keys (Tracking::active(), read once per command by Dispatch).
bool RunHandler(ServerState& server, Session& session, const CommandSpec& spec,
                std::vector<std::string>& argv, Reply& reply, Context& ctx, bool tracking) {
  if (RejectedAsReplica(server, spec)) {
    reply.Error(kReadOnlyError);
    return false;
  }
  SetLastCommand(session, spec, argv);
  reply.SetLimit(static_cast<size_t>(server.config->max_reply_size.load()));
  PrefetchKeys(session, spec, argv, ctx);
  std::vector<std::string> read_keys;
  if (tracking && TracksReadsOf(session, spec)) CollectReadKeys(spec, argv, &read_keys);
  CommandContext c{server, session, argv, reply, ctx, false};
  bool ran = true;
  if (server.monitors.active()) {
    ran = RunHandlerFeedingMonitors(server, session, spec, c);
  } else {
    spec.handler(c);
  }
  if (tracking) TrackCommand(server, session, ctx, read_keys);
  return ran;
}

// Whether a worker runs the command first with its reads limited to memory, handing it to the
// read threads when that is not enough (the top of dispatcher.h): a command that only reads,
// from a client that can be parked (it has a deliver_hook), outside MULTI, while there are read
// threads. Not while monitors watch, who would see the command run twice.
bool RunsMemoryFirst(const ServerState& server, const Session& session, const CommandSpec& spec) {
  constexpr uint32_t kNotMemoryFirst = kCmdWrite | kCmdRewritesKey | kCmdExclusive | kCmdOffload |
                                       kCmdSelfCommit | kCmdTxControl | kCmdAllowBusy |
                                       kCmdBlocking | kCmdMayReplicate;
  return (spec.flags & kCmdReadOnly) && !(spec.flags & kNotMemoryFirst) &&
         server.read_offloader != nullptr && session.deliver_hook && !session.offloaded &&
         !session.in_multi && !server.monitors.active();
}

// Adds what a memory-only run that stood held back to the server's statistics.
void PublishStats(ServerState& server, const TentativeStats& stats) {
  if (stats.keyspace_hits != 0) {
    server.counters.keyspace_hits.fetch_add(stats.keyspace_hits, std::memory_order_relaxed);
  }
  if (stats.keyspace_misses != 0) {
    server.counters.keyspace_misses.fetch_add(stats.keyspace_misses, std::memory_order_relaxed);
  }
  for (const std::string& error : stats.error_replies) RecordErrorReply(error);
}

// Hands a command whose memory-only run missed to the read threads; its client waits.
void OffloadRead(ServerState& server, Session& session, std::vector<std::string>& argv) {
  server.counters.offloaded_reads.fetch_add(1, std::memory_order_relaxed);
  session.awaiting_reply = true;
  server.read_offloader->Submit(session, std::move(argv));
}

// Runs an admitted command under the keyspace lock and its key locks, in a fresh Context that
// is committed before returning. `allowed_while_busy` commands run without the locks while a
// script is busy, since they do not touch the key space. With `memory_only`, the Context reads
// memory only; if that was not enough, nothing is committed, the reply is taken back and
// *missed_memory is set. False when the command was refused (BUSY, READONLY) instead of run.
bool RunLocked(ServerState& server, Session& session, const CommandSpec& spec,
               std::vector<std::string>& argv, Reply& reply, std::string* out,
               int64_t busy_threshold_ms, bool allowed_while_busy, bool tracking, bool memory_only,
               bool* missed_memory) {
  size_t reply_start = out->size();
  bool exclusive = RunsExclusive(spec, argv);
  WriterPreferringMutex& mu = server.keyspace->exclusive();
  std::shared_lock<WriterPreferringMutex> shared(mu, std::defer_lock);
  std::unique_lock<WriterPreferringMutex> unique(mu, std::defer_lock);
  KeyLockGuard keys;
  if (LockKeyspace(server, exclusive, busy_threshold_ms)) {
    if (exclusive) {
      unique = std::unique_lock<WriterPreferringMutex>(mu, std::adopt_lock);
    } else {
      shared = std::shared_lock<WriterPreferringMutex>(mu, std::adopt_lock);
    }
    keys = LockKeys(server, session, spec, argv);
  } else if (!allowed_while_busy) {
    reply.Error(BusyScriptError(server.script_guard));
    return false;
  }
  Context ctx(server.keyspace);
  TentativeStats tentative;
  if (memory_only) {
    ctx.set_memory_only(true);
    reply.HoldStatsIn(&tentative);
  }
  const bool ran = RunHandler(server, session, spec, argv, reply, ctx, tracking);
  if (memory_only) {
    reply.HoldStatsIn(nullptr);
    if (ctx.missed_memory()) {
      ctx.Discard();
      out->resize(reply_start);
      *missed_memory = true;
      return true;
    }
    PublishStats(server, tentative);
  }
  if (!ran) return false;
  Status s = ctx.Commit();
  if (!s.ok()) {
    out->resize(reply_start);
    reply.Error(s.ToReplyText());
  } else if (ctx.wrote() || (spec.flags & kCmdWrite)) {
    session.last_write_seq = server.keyspace->engine()->LatestSequence();
  }
  return true;
}

// A plain keyed write, which a WriteGroup may take: nothing that locks the whole key space,
// commits on its own, blocks (the blocking commands are the no-script writes), runs elsewhere,
// or belongs to MULTI, Pub/Sub or administration.
bool JoinsGroups(const Session& session, const CommandSpec& spec,
                 const std::vector<std::string>& argv) {
  constexpr uint32_t kNotGrouped = kCmdExclusive | kCmdSelfCommit | kCmdOffload | kCmdTxControl |
                                   kCmdAllowBusy | kCmdNoScript | kCmdPubSub | kCmdAdmin;
  return (spec.flags & kCmdWrite) && !(spec.flags & kNotGrouped) && spec.first_key > 0 &&
         !session.in_multi && !RunsExclusive(spec, argv);
}

}  // namespace

// Runs admitted commands in a WriteGroup: takes the locks a command needs on top of those the
// group holds, without ever waiting while it holds any (a stripe another client holds makes
// the group commit and release first), so two grouping connections cannot deadlock.
class GroupedRun {
 public:
  // Bounds how long a group holds its locks (other clients wait for its stripes) and how much
  // its batch holds; 64 commands already share one WAL append 64 ways.
  static constexpr size_t kMaxGroupedCommands = 64;
  // How long a group waits for another worker to take a stripe the last group handed it. Far
  // longer than a wake-up normally takes; reached only if that worker waits on a third holder.
  static constexpr int64_t kHandOffWaitUs = 2000;

  GroupedRun(ServerState& server, Session& session, WriteGroup& group)
      : server_(server), session_(session), group_(group) {}

  // False when the command was refused (BUSY, READONLY) instead of run.
  bool Run(const CommandSpec& spec, std::vector<std::string>& argv, Reply& reply, std::string* out,
           int64_t busy_threshold_ms, bool tracking) {
    // In a buffer the group keeps: a vector per command was one of a write's allocations.
    std::vector<size_t>& stripes = group_.next_stripes_;
    CollectStripes(server_, session_, spec, argv, &stripes);
    if (group_.active() && group_.replies_.size() >= kMaxGroupedCommands) {
      // A full group whose next command writes keys the group already locked (a pipeline on
      // one hot key) commits and goes on with those locks: releasing them would hand the key to
      // the other worker, waiting on it, and take it back for the very next command.
      if (HoldsAll(stripes)) {
        group_.CommitKeepingLocks(server_, stripes);
      } else {
        group_.Commit(server_);
      }
    } else if (group_.active() && !TryAddStripes(stripes)) {
      group_.Commit(server_);
    }
    if (!group_.active() && !Begin(stripes, busy_threshold_ms)) {
      reply.Error(BusyScriptError(server_.script_guard));
      return false;
    }
    size_t begin = out->size();
    if (!RunHandler(server_, session_, spec, argv, reply, *group_.ctx_, tracking)) return false;
    group_.replies_.push_back({&session_, out, begin, out->size()});
    return true;
  }

 private:
  // Starts the group: after another worker took the stripe the last group handed it, the
  // keyspace lock (given up, returning false, while a script is busy), then the first command's
  // stripes, waiting for them in turn (lock_table.h).
  bool Begin(const std::vector<size_t>& stripes, int64_t busy_threshold_ms) {
    group_.table_ = &server_.keyspace->locks();
    if (group_.hand_off_ != LockTable::kNoStripe) {
      group_.table_->AwaitTakenByWaiter(group_.hand_off_, kHandOffWaitUs);
      group_.hand_off_ = LockTable::kNoStripe;
    }
    WriterPreferringMutex& mu = server_.keyspace->exclusive();
    if (!LockKeyspace(server_, false, busy_threshold_ms)) return false;
    group_.keyspace_lock_ = std::shared_lock<WriterPreferringMutex>(mu, std::adopt_lock);
    for (size_t stripe : stripes) {
      group_.table_->LockWaitingInTurn(stripe);
      group_.Hold(stripe);
    }
    group_.ctx_.emplace(server_.keyspace);
    return true;
  }

  bool HoldsAll(const std::vector<size_t>& stripes) const {
    return std::all_of(stripes.begin(), stripes.end(),
                       [this](size_t stripe) { return group_.Holds(stripe); });
  }

  // All of `stripes` (distinct) that the group does not hold yet, without waiting; all or none.
  // Only the first command's stripes are waited for (Begin), in order; these are only tried, so
  // the group may take them in any order.
  bool TryAddStripes(const std::vector<size_t>& stripes) {
    size_t tried = 0;
    for (; tried < stripes.size(); tried++) {
      const size_t stripe = stripes[tried];
      if (!group_.Holds(stripe) && !group_.table_->stripe(stripe).try_lock()) break;
    }
    if (tried < stripes.size()) {
      for (size_t i = 0; i < tried; i++) {
        if (!group_.Holds(stripes[i])) group_.table_->stripe(stripes[i]).unlock();
      }
      return false;
    }
    for (size_t stripe : stripes) {
      if (!group_.Holds(stripe)) group_.Hold(stripe);
    }
    return true;
  }

  ServerState& server_;
  Session& session_;
  WriteGroup& group_;
};

void WriteGroup::Hold(size_t stripe) {
  if (held_bits_.empty()) held_bits_.resize(LockTable::kStripes / 64);
  held_bits_[stripe / 64] |= uint64_t{1} << (stripe % 64);
  stripes_.push_back(stripe);
  table_->SetHolder(stripe, holder_tag_);
}

void WriteGroup::Unlock(size_t stripe) {
  held_bits_[stripe / 64] &= ~(uint64_t{1} << (stripe % 64));
  table_->SetHolder(stripe, 0);
  table_->stripe(stripe).unlock();
}

WriteGroup::~WriteGroup() {
  // Every owner commits before its group goes away; reaching here active is a bug, and dropping
  // the writes (their replies were never sent) is the safe way out of it.
  if (!active()) return;
  LOG(DFATAL) << "write group destroyed uncommitted";
  ctx_->Discard();
  ctx_.reset();
  for (size_t stripe : stripes_) Unlock(stripe);
}

bool WriteGroup::HoldsRepliesIn(const std::string* out) const {
  return std::any_of(replies_.begin(), replies_.end(),
                     [out](const HeldReply& r) { return r.out == out; }) ||
         std::find(committed_outs_.begin(), committed_outs_.end(), out) != committed_outs_.end();
}

void WriteGroup::ReplaceRepliesWithError(const Status& error) {
  // Each output string is rebuilt rather than patched in place: replies of commands that did
  // not join the group (errors before they ran) sit between the grouped ones and stay as they
  // are. The held replies of one string appear in replies_ in the order they were written.
  std::vector<std::string*> outs;
  for (const HeldReply& r : replies_) {
    if (std::find(outs.begin(), outs.end(), r.out) == outs.end()) outs.push_back(r.out);
  }
  for (std::string* out : outs) {
    std::string rebuilt;
    size_t copied = 0;
    for (const HeldReply& r : replies_) {
      if (r.out != out) continue;
      // A reply cut for max-reply-size ends before its span did (its client is being closed).
      size_t begin = std::min(r.begin, out->size());
      size_t end = std::min(r.end, out->size());
      rebuilt.append(*out, copied, begin - copied);
      Reply(&rebuilt, r.session->resp).Error(error.ToReplyText());
      copied = end;
    }
    rebuilt.append(*out, copied, std::string::npos);
    out->swap(rebuilt);
  }
}

void WriteGroup::Commit(ServerState& server) {
  if (!active()) return;
  std::vector<uint64_t> sessions = CommitBatch(server);
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) Unlock(*it);
  for (size_t stripe : stripes_) {
    if (table_->HasWaiter(stripe)) {
      hand_off_ = stripe;
      break;
    }
  }
  stripes_.clear();
  keyspace_lock_ = std::shared_lock<WriterPreferringMutex>();
  for (uint64_t id : committed_sessions_) {
    if (std::find(sessions.begin(), sessions.end(), id) == sessions.end()) sessions.push_back(id);
  }
  committed_sessions_.clear();
  committed_outs_.clear();
  if (after_commit_) after_commit_(sessions);
}

void WriteGroup::CommitKeepingLocks(ServerState& server, const std::vector<size_t>& keep) {
  for (const HeldReply& r : replies_) {
    if (std::find(committed_outs_.begin(), committed_outs_.end(), r.out) == committed_outs_.end()) {
      committed_outs_.push_back(r.out);
    }
  }
  std::vector<uint64_t> sessions = CommitBatch(server);
  size_t kept = 0;
  for (size_t stripe : stripes_) {
    if (std::binary_search(keep.begin(), keep.end(), stripe)) {
      stripes_[kept++] = stripe;
    } else {
      Unlock(stripe);
    }
  }
  stripes_.resize(kept);
  for (uint64_t id : sessions) {
    if (std::find(committed_sessions_.begin(), committed_sessions_.end(), id) ==
        committed_sessions_.end()) {
      committed_sessions_.push_back(id);
    }
  }
  ctx_.emplace(server.keyspace);
}

std::vector<uint64_t> WriteGroup::CommitBatch(ServerState& server) {
  Status s = ctx_->Commit();
  std::vector<uint64_t> sessions;
  if (!s.ok()) ReplaceRepliesWithError(s);
  uint64_t sequence = s.ok() ? server.keyspace->engine()->LatestSequence() : 0;
  for (const HeldReply& r : replies_) {
    if (s.ok()) r.session->last_write_seq = sequence;
    if (std::find(sessions.begin(), sessions.end(), r.session->id) == sessions.end()) {
      sessions.push_back(r.session->id);
    }
  }
  if (replies_.size() > 1) {
    server.counters.grouped_commits.fetch_add(1, std::memory_order_relaxed);
    server.counters.grouped_commands.fetch_add(static_cast<int64_t>(replies_.size()),
                                               std::memory_order_relaxed);
  }
  ctx_.reset();
  replies_.clear();
  return sessions;
}

void Dispatch(ServerState& server, Session& session, std::vector<std::string>& argv,
              std::string* out, WriteGroup* group) {
  Reply reply(out, session.resp);
  std::string error;
  const CommandSpec* spec = ResolveCommand(argv, &error, &session);
  const bool grouped = group != nullptr && spec != nullptr && JoinsGroups(session, *spec, argv);
  if (group != nullptr && !grouped) group->Commit(server);
  if (spec == nullptr) {
    CountRejectedLookup(server, argv, error);
    if (session.in_multi && EqualsIgnoreCase(argv[0], "exec")) {
      // A malformed EXEC ends the transaction, as in Redis.
      ResetTransaction(server, session);
      std::string_view reason = error;
      if (reason.substr(0, 4) == "ERR ") reason.remove_prefix(4);
      reply.Error("EXECABORT Transaction discarded because of: " + std::string(reason));
      return;
    }
    if (session.in_multi) session.multi_failed = true;
    reply.Error(error);
    return;
  }
  if (!Admitted(server, session, *spec, argv, reply)) return CountRejected(server, *spec, argv);
  if (session.in_multi && !(spec->flags & kCmdTxControl)) {
    session.queued.push_back(argv);
    reply.Simple("QUEUED");
    return;
  }

  int64_t threshold = server.config->busy_reply_threshold.load(std::memory_order_relaxed);
  bool allowed_while_busy = AllowedWhileBusy(*spec, argv);
  if (server.script_guard.Busy(threshold) && !allowed_while_busy) {
    CountRejected(server, *spec, argv);
    return reply.Error(BusyScriptError(server.script_guard));
  }
  if ((spec->flags & kCmdOffload) && server.offloader != nullptr && session.deliver_hook &&
      !session.offloaded) {
    SetLastCommand(session, *spec, argv);
    session.awaiting_reply = true;
    server.offloader->Submit(session, std::move(argv));
    return;
  }

  MarkCommandStart();
  uint64_t start = CommandClock::Now();
  size_t reply_start = out->size();
  const bool tracking = server.tracking.active();
  if (tracking) server.tracking.StartCommand(session);
  bool missed_memory = false;
  bool ran =
      grouped
          ? GroupedRun(server, session, *group).Run(*spec, argv, reply, out, threshold, tracking)
          : RunLocked(server, session, *spec, argv, reply, out, threshold, allowed_while_busy,
                      tracking, RunsMemoryFirst(server, session, *spec), &missed_memory);
  if (missed_memory || !ran) {
    if (tracking) server.tracking.FinishCommand(session, true);
    if (missed_memory) return OffloadRead(server, session, argv);
    return CountRejected(server, *spec, argv);
  }
  if (reply.overflowed()) CloseForReplySize(server, session, *spec, out, reply_start);
  Account(server, session, *spec, argv, start, CommandClock::Now());
  if (tracking) {
    // CLIENT CACHING covers the next command, or a whole transaction, and any CLIENT calls
    // before it, as in Redis.
    const bool keeps_caching = session.in_multi || strcmp(spec->name, "client") == 0;
    server.tracking.FinishCommand(session, keeps_caching);
  }
  if (!session.pushes_after_reply.empty()) {
    out->append(session.pushes_after_reply);
    session.pushes_after_reply.clear();
  }
}

void AccountTimedOutBlock(ServerState& server, Session& session,
                          const std::vector<std::string>& argv) {
  if (argv.empty()) return;
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
  if (spec == nullptr) return;
  MarkCommandStart();
  uint64_t now = CommandClock::Now();
  // Redis leaves a timed-out block out of the latency histogram.
  Account(server, session, *spec, argv, now, now, false);
}

uint8_t GroupHoldingKeysOf(ServerState& server, Session& session,
                           const std::vector<std::string>& argv, uint8_t self_tag) {
  // Every write command asks, so the answer for nearly all of them comes from their first key,
  // which is their second argument, before the command is looked up.
  if (argv.size() < 2) return 0;
  Keyspace* ks = server.keyspace;
  const LockTable& locks = ks->locks();
  const uint8_t tag = locks.HolderOf(locks.StripeOf(ks->Physical(session.db), argv[1]));
  if (tag == 0 || tag == self_tag) return 0;
  std::string error;
  const CommandSpec* spec = ResolveCommand(argv, &error, &session);
  // Whatever would be refused or answered specially (an error, a subscribed client, a
  // transaction) is answered by the ordinary path.
  if (spec == nullptr || !JoinsGroups(session, *spec, argv) || AuthRequired(server, session) ||
      session.subscriptions.total() > 0) {
    return 0;
  }
  for (size_t stripe : StripesOf(server, session, *spec, argv)) {
    if (locks.HolderOf(stripe) != tag) return 0;
  }
  return tag;
}

}  // namespace basalt
