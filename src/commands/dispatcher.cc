#include "commands/dispatcher.h"

#include <mutex>
#include <shared_mutex>

#include "common/clock.h"

namespace basalt {

namespace {

std::string UnknownCommandError(const std::vector<std::string>& argv) {
  // Built with append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string msg("ERR unknown command '");
  msg.append(argv[0], 0, 128);
  msg.append("', with args beginning with: ");
  for (size_t i = 1; i < argv.size() && msg.size() < 512; i++) {
    msg.append("'");
    msg.append(argv[i], 0, 128);
    msg.append("' ");
  }
  return msg;
}

bool ArityOk(const CommandSpec& spec, size_t argc) {
  int n = static_cast<int>(argc);
  return spec.arity > 0 ? n == spec.arity : n >= -spec.arity;
}

KeyLockGuard LockKeys(ServerState& server, const Session& session, const CommandSpec& spec,
                      const std::vector<std::string>& argv) {
  bool write = spec.flags & kCmdWrite;
  std::vector<size_t> indexes = CommandTable::KeyIndexes(spec, argv);
  // A single-key read is one RocksDB lookup and atomic on its own; multi-key reads take shared
  // locks so that they never see half of another client's multi-key write.
  if (indexes.empty() || (!write && indexes.size() < 2)) return KeyLockGuard();
  Keyspace* ks = server.keyspace;
  uint8_t pdb = ks->Physical(session.db);
  std::vector<size_t> stripes;
  stripes.reserve(indexes.size());
  for (size_t i : indexes) stripes.push_back(ks->locks().StripeOf(pdb, argv[i]));
  return KeyLockGuard(&ks->locks(), std::move(stripes), write);
}

void Account(ServerState& server, Session& session, const CommandSpec& spec,
             const std::vector<std::string>& argv, int64_t duration_us) {
  size_t index = CommandTable::Get().IndexOf(&spec);
  if (index < server.command_counters.size()) {
    server.command_counters[index].calls.fetch_add(1, std::memory_order_relaxed);
    server.command_counters[index].usec.fetch_add(duration_us, std::memory_order_relaxed);
  }
  server.counters.commands_processed.fetch_add(1, std::memory_order_relaxed);
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

}  // namespace

const CommandSpec* ResolveCommand(const std::vector<std::string>& argv, std::string* error) {
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
  if (spec == nullptr) {
    *error = UnknownCommandError(argv);
    return nullptr;
  }
  if (!ArityOk(*spec, argv.size())) {
    *error = WrongArityError(spec->name);
    return nullptr;
  }
  return spec;
}

void RunInContext(ServerState& server, Session& session, const CommandSpec& spec,
                  std::vector<std::string>& argv, Reply& reply, Context& ctx, bool in_exec) {
  {
    std::lock_guard<std::mutex> lock(session.info_mu);
    session.last_command = spec.name;
  }
  if (in_exec && (spec.flags & kCmdExclusive)) {
    // Whole-database commands commit on their own; what the transaction wrote before them
    // must land first so that the order of effects is the order of commands.
    Status s = ctx.Commit();
    if (!s.ok()) {
      reply.Error(s.ToReplyText());
      return;
    }
  }
  int64_t start = MonotonicMicros();
  CommandContext c{server, session, argv, reply, ctx, in_exec};
  spec.handler(c);
  if (in_exec) Account(server, session, spec, argv, MonotonicMicros() - start);
}

void Dispatch(ServerState& server, Session& session, std::vector<std::string>& argv,
              std::string* out) {
  Reply reply(out, session.resp);
  session.last_interaction_ms = UnixMillis();
  std::string error;
  const CommandSpec* spec = ResolveCommand(argv, &error);
  if (spec == nullptr) {
    if (session.in_multi) session.multi_failed = true;
    server.counters.error_replies++;
    reply.Error(error);
    return;
  }
  if (!session.authenticated && !(spec->flags & kCmdNoAuth)) {
    if (session.in_multi) session.multi_failed = true;
    reply.Error("NOAUTH Authentication required.");
    return;
  }
  if (session.in_multi && !(spec->flags & kCmdNoMulti)) {
    session.queued.push_back(argv);
    reply.Simple("QUEUED");
    return;
  }

  int64_t start = MonotonicMicros();
  size_t reply_start = out->size();
  {
    std::shared_lock<std::shared_mutex> shared(server.keyspace->exclusive(), std::defer_lock);
    std::unique_lock<std::shared_mutex> exclusive(server.keyspace->exclusive(), std::defer_lock);
    if (spec->flags & kCmdExclusive) {
      exclusive.lock();
    } else {
      shared.lock();
    }
    KeyLockGuard keys = LockKeys(server, session, *spec, argv);
    Context ctx(server.keyspace);
    {
      std::lock_guard<std::mutex> lock(session.info_mu);
      session.last_command = spec->name;
    }
    CommandContext c{server, session, argv, reply, ctx, false};
    spec->handler(c);
    Status s = ctx.Commit();
    if (!s.ok()) {
      out->resize(reply_start);
      reply.Error(s.ToReplyText());
    }
  }
  Account(server, session, *spec, argv, MonotonicMicros() - start);
}

}  // namespace basalt
