#include "commands/dispatcher.h"

#include <mutex>
#include <shared_mutex>

#include "commands/transactions.h"
#include "common/clock.h"
#include "common/strutil.h"

namespace basalt {

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

// CLIENT LIST's cmd= field: "get", or "client|list" for a container command.
void SetLastCommand(Session& session, const CommandSpec& spec,
                    const std::vector<std::string>& argv) {
  std::string name = spec.name;
  if (argv.size() >= 2 && CommandTable::Get().HasSubcommands(spec)) {
    name.push_back('|');
    name.append(ToLower(argv[1]));
  }
  std::lock_guard<std::mutex> lock(session.info_mu);
  session.last_command = std::move(name);
}

}  // namespace

const CommandSpec* ResolveCommand(const std::vector<std::string>& argv, std::string* error) {
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
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
    server.counters.error_replies++;
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
  if (!session.authenticated && !(spec->flags & kCmdNoAuth)) {
    if (session.in_multi) session.multi_failed = true;
    reply.Error("NOAUTH Authentication required.");
    return;
  }
  if (session.in_multi && (spec->flags & kCmdNoMulti)) {
    session.multi_failed = true;
    reply.Error("ERR Command not allowed inside a transaction");
    return;
  }
  if (session.in_multi && !(spec->flags & kCmdTxControl)) {
    session.queued.push_back(argv);
    reply.Simple("QUEUED");
    return;
  }

  int64_t start = MonotonicMicros();
  size_t reply_start = out->size();
  {
    std::shared_lock<WriterPreferringMutex> shared(server.keyspace->exclusive(), std::defer_lock);
    std::unique_lock<WriterPreferringMutex> exclusive(server.keyspace->exclusive(),
                                                      std::defer_lock);
    if (spec->flags & kCmdExclusive) {
      exclusive.lock();
    } else {
      shared.lock();
    }
    KeyLockGuard keys = LockKeys(server, session, *spec, argv);
    Context ctx(server.keyspace);
    SetLastCommand(session, *spec, argv);
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
