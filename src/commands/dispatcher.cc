#include "commands/dispatcher.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "commands/acl_check.h"
#include "commands/admission.h"
#include "commands/command_accounting.h"
#include "commands/transactions.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "stats/error_stats.h"

namespace basalt {

std::string FullCommandName(const CommandSpec& spec, const std::vector<std::string>& argv) {
  std::string name = spec.name;
  if (argv.size() >= 2 && CommandTable::Get().HasSubcommands(spec)) {
    name.push_back('|');
    name.append(ToLower(argv[1]));
  }
  return name;
}

namespace {

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

void SetLastCommand(Session& session, const CommandSpec& spec,
                    const std::vector<std::string>& argv) {
  const bool has_subcommands = CommandTable::Get().HasSubcommands(spec);
  if (!has_subcommands && session.last_command_spec == &spec) return;
  std::string name = FullCommandName(spec, argv);
  std::lock_guard<std::mutex> lock(session.info_mu);
  session.last_command = std::move(name);
  session.last_command_spec = has_subcommands ? nullptr : &spec;
}

// As in Redis: while a script is busy only the allow-busy commands get through (of SCRIPT only
// KILL, of FUNCTION only KILL and STATS, by their subcommands' flags), and of SHUTDOWN only the
// NOSAVE form.
bool AllowedWhileBusy(const CommandSpec& spec, const std::vector<std::string>& argv) {
  if (!(spec.flags & kCmdAllowBusy)) return false;
  if (!(CommandTable::Get().FlagsOf(spec, argv) & kCmdAllowBusy)) return false;
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
// KILL, run) instead of waiting for it to end, and one queued behind a load answers LOADING.
// False: a script is busy, a load holds the keyspace, or `abandon` became true, and the lock
// is not held.
bool LockKeyspace(ServerState& server, bool exclusive, int64_t threshold_ms,
                  const std::atomic<bool>* abandon = nullptr) {
  constexpr int64_t kSliceMs = 20;
  WriterPreferringMutex& mu = server.keyspace->exclusive();
  while (true) {
    if (server.keyspace->loading()) return false;
    if (exclusive ? mu.try_lock_for_ms(kSliceMs) : mu.try_lock_shared_for_ms(kSliceMs)) return true;
    if (server.script_guard.Busy(threshold_ms)) return false;
    if (abandon != nullptr && abandon->load()) return false;
  }
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

// Runs the handler (feeding monitors when some watch) and notes what the command sends Redis
// replicas while one is attached (types/replication_effects.h): unless the command decided
// otherwise, itself as sent when it changed a key or wrote anything else (a stream group's
// records, XACK). EXEC and scripts send only the commands they ran. False when the command
// was refused instead of run.
bool InvokeHandler(ServerState& server, Session& session, const CommandSpec& spec,
                   CommandContext& c) {
  ReplicationEffects& effects = c.ctx.effects();
  if (!effects.capturing()) {
    if (server.monitors.active()) return RunHandlerFeedingMonitors(server, session, spec, c);
    spec.handler(c);
    return true;
  }
  constexpr uint32_t kSendsEffectsOnly = kCmdTxControl | kCmdOffload;
  const bool effects_only = spec.flags & kSendsEffectsOnly;
  const int db = session.db;
  std::vector<std::string> sent;
  if (!effects_only) sent = c.argv;  // the handler may consume its arguments
  const uint64_t changes = c.ctx.changes();
  const uint32_t writes = c.ctx.batch().WriteCount();
  effects.StartCommand();
  bool ran = true;
  if (server.monitors.active()) {
    ran = RunHandlerFeedingMonitors(server, session, spec, c);
  } else {
    spec.handler(c);
  }
  if (!ran || effects_only) return ran;
  const ReplicationEffects::Decision decision = effects.decision();
  const bool changed = c.ctx.changes() != changes || c.ctx.batch().WriteCount() != writes;
  if (decision == ReplicationEffects::Decision::kAsSent ||
      (decision == ReplicationEffects::Decision::kDefault && changed)) {
    effects.Add(db, std::move(sent));
  }
  return ran;
}

// Whether the command's lookups are accesses of its keys (OBJECT IDLETIME / FREQ): not under
// CLIENT NO-TOUCH, but for TOUCH, as in Redis.
bool TouchesKeys(const Session& session, const CommandSpec& spec) {
  return !session.no_touch.load(std::memory_order_relaxed) ||
         std::string_view(spec.name) == "touch";
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
// sent last costs less than hashing it into the table, which takes 1.3% of a pipelined LPUSH's
// samples (docs/benchmarks.md, "Per-command bookkeeping"). The table changes only at start-up,
// before any client connects (rename-command), so a remembered spec stays right.
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
  if (session.script_client && RejectedAsReplica(server, session, spec)) {
    // A script's write on a read-only replica. (EXEC checks its queue once, as it starts.)
    reply.Error(kReadOnlyError);
    return;
  }
  if (in_exec) MarkCommandStart();
  const bool tracking = server.tracking.active();
  std::vector<std::string> read_keys;
  if (tracking && TracksReadsOf(session, spec)) CollectReadKeys(spec, argv, &read_keys);
  uint64_t start = CommandClock::Now();
  ctx.set_touches_keys(TouchesKeys(session, spec));
  CommandContext c{server, session, argv, reply, ctx, in_exec};
  InvokeHandler(server, session, spec, c);
  if (tracking) TrackCommand(server, session, ctx, read_keys);
  if (in_exec) Account(server, session, spec, argv, start, CommandClock::Now());
}

namespace {

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
  if (RejectedAsReplica(server, session, spec)) {
    reply.Error(kReadOnlyError);
    return false;
  }
  SetLastCommand(session, spec, argv);
  reply.SetLimit(static_cast<size_t>(server.config->max_reply_size.load()));
  PrefetchKeys(session, spec, argv, ctx);
  std::vector<std::string> read_keys;
  if (tracking && TracksReadsOf(session, spec)) CollectReadKeys(spec, argv, &read_keys);
  ctx.set_touches_keys(TouchesKeys(session, spec));
  CommandContext c{server, session, argv, reply, ctx, false};
  // What this client command runs, and it, reaches Redis replicas as one unit.
  ctx.effects().OpenUnit();
  const bool ran = InvokeHandler(server, session, spec, c);
  ctx.effects().CloseUnit();
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

// The thread a command runs on instead of the worker, if any: the offload thread for
// kCmdOffload (scripts), a read thread for kCmdWaitsOnPeer (MIGRATE, which waits on another
// server). Only for a client that can be parked, and not for a command that is already there.
CommandOffloader* OffloaderFor(const ServerState& server, const Session& session,
                               const CommandSpec& spec) {
  constexpr uint32_t kRunsElsewhere = kCmdOffload | kCmdWaitsOnPeer;
  if (!(spec.flags & kRunsElsewhere) || !session.deliver_hook || session.offloaded) return nullptr;
  if (spec.flags & kCmdOffload) return server.offloader;
  if (spec.flags & kCmdWaitsOnPeer) return server.read_offloader;
  return nullptr;
}

// PUBLISH, SPUBLISH and the PUBSUB subcommands: Pub/Sub commands that are not themselves
// (un)subscriptions.
bool ReadsOthersSubscriptions(const CommandSpec& spec, const std::vector<std::string>& argv) {
  if (!(spec.flags & kCmdPubSub) && !CommandTable::Get().HasSubcommands(spec)) return false;
  const uint32_t flags = CommandTable::Get().FlagsOf(spec, argv);
  return (flags & kCmdPubSub) && !(flags & kCmdPushReply);
}

// A command that reads other clients' subscriptions, or an EXEC whose transaction holds one:
// what must wait until the other workers ran the input they hold (Session::await_peers_hook).
bool WaitsForPeersInput(const Session& session, const CommandSpec& spec,
                        const std::vector<std::string>& argv) {
  if (ReadsOthersSubscriptions(spec, argv)) return true;
  if (!session.in_multi || strcmp(spec.name, "exec") != 0) return false;
  return std::any_of(session.queued.begin(), session.queued.end(),
                     [](const std::vector<std::string>& queued) {
                       const CommandSpec* s = CommandTable::Get().Find(queued[0]);
                       return s != nullptr && ReadsOthersSubscriptions(*s, queued);
                     });
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
// script is busy, and RunsWhileLoading ones while a load holds them, since they do not touch
// the key space. With `memory_only`, the Context reads
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
  if (LockKeyspace(server, exclusive, busy_threshold_ms, session.abandon_lock_waits)) {
    if (exclusive) {
      unique = std::unique_lock<WriterPreferringMutex>(mu, std::adopt_lock);
    } else {
      shared = std::shared_lock<WriterPreferringMutex>(mu, std::adopt_lock);
    }
    keys = LockKeys(server, session, spec, argv);
  } else if (session.abandon_lock_waits != nullptr && session.abandon_lock_waits->load()) {
    reply.Error("ERR the replication link is stopping");
    return false;
  } else if (server.keyspace->loading()) {
    if (!RunsWhileLoading(spec, argv)) {
      Reject(server, session, spec, reply, kLoadingError);
      return false;
    }
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
    return true;
  }
  if (ctx.wrote() || (spec.flags & kCmdWrite)) {
    NoteCommittedWrite(server, session, server.keyspace->engine()->LatestSequence());
  }
  // Lazy expiry, with this command's locks released: the expirer takes its own. Not for a
  // parked command that a wake-up runs again: as Redis 7.2 checks a blocked client's keys, its
  // lookups leave an expired key to the next command that reads it.
  if (ctx.found_expired() && server.expirer != nullptr && !session.woken) {
    keys.Release();
    if (shared.owns_lock()) shared.unlock();
    if (unique.owns_lock()) unique.unlock();
    server.expirer->ExpireFound(ctx.TakeFoundExpired());
  }
  return true;
}

// A plain keyed write, which a WriteGroup may take: nothing that locks the whole key space,
// commits on its own, blocks (the blocking commands are the no-script writes), runs elsewhere,
// or belongs to MULTI, Pub/Sub or administration.
bool JoinsGroups(const Session& session, const CommandSpec& spec,
                 const std::vector<std::string>& argv) {
  constexpr uint32_t kNotGrouped = kCmdExclusive | kCmdSelfCommit | kCmdOffload | kCmdTxControl |
                                   kCmdAllowBusy | kCmdNoScript | kCmdPubSub | kCmdAdmin |
                                   kCmdWaitsOnPeer;
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
    // In a buffer the group keeps: a vector per command would be one of a write's allocations.
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
      reply.Error(server_.keyspace->loading() ? std::string(kLoadingError)
                                              : BusyScriptError(server_.script_guard));
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
    if (!LockKeyspace(server_, false, busy_threshold_ms, session_.abandon_lock_waits)) return false;
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
  int64_t threshold = server.config->busy_reply_threshold.load(std::memory_order_relaxed);
  bool allowed_while_busy = AllowedWhileBusy(*spec, argv);
  if (server.script_guard.Busy(threshold) && !allowed_while_busy) {
    CountRejected(server, *spec, argv);
    return Reject(server, session, *spec, reply, BusyScriptError(server.script_guard));
  }
  if (session.in_multi && !(spec->flags & kCmdTxControl)) {
    if (spec->flags & kCmdDenyOom) session.queued_denyoom = true;
    session.queued.push_back(argv);
    reply.Simple("QUEUED");
    return;
  }
  if (CommandOffloader* elsewhere = OffloaderFor(server, session, *spec)) {
    SetLastCommand(session, *spec, argv);
    session.awaiting_reply = true;
    elsewhere->Submit(session, std::move(argv));
    return;
  }
  if (session.await_peers_hook && WaitsForPeersInput(session, *spec, argv) &&
      session.await_peers_hook(argv)) {
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
  // A parked client parks on its own worker, which keeps its timer and takes its wake-ups.
  if (spec->flags & kCmdBlocking) return 0;
  for (size_t stripe : StripesOf(server, session, *spec, argv)) {
    if (locks.HolderOf(stripe) != tag) return 0;
  }
  // A write to a key that clients wait on runs here, where the waiters it wakes are served
  // before this client's next command (Connection::DispatchServingWaiters); the holder runs a
  // delegated batch through without serving between its commands.
  if (server.blocking.Listening()) {
    const uint8_t pdb = ks->Physical(session.db);
    bool waited = false;
    CommandTable::ForEachKeyIndex(*spec, argv, [&](size_t i) {
      waited = waited || server.blocking.HasWaiters(pdb, argv[i]);
    });
    if (waited) return 0;
  }
  return tag;
}

}  // namespace basalt
