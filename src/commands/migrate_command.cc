// MIGRATE: moves keys to another server (Basalt or Redis) as Redis 7.2 does. Each key's DUMP
// payload (types/rdb_value.h) goes to the target as RESTORE, after AUTH and SELECT, all in one
// pipelined write; the target's replies come back one line each. A key the target accepted is
// deleted here (unless COPY), with the `del` notification and replication of a DEL; the first
// error the target replied is forwarded as "ERR Target instance replied with error: ...", and a
// socket failure or a timeout as Redis's IOERR texts.
//
// The exchange blocks, for at most `timeout` ms per connect, write and reply, and holds the
// command's keys (their lock stripes) meanwhile, so no other client changes them between the
// DUMP and the delete. The row carries kCmdWaitsOnPeer: outside MULTI and scripts the dispatcher
// runs MIGRATE on a read thread (commands/offload.h), so the worker's other clients do not wait
// with it. Connections are kept for the next call to the same target, as in Redis
// (commands/migrate_sockets.h). Shutdown ends a wait at once, with an IOERR.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>

#include "commands/command_util.h"
#include "commands/migrate_sockets.h"
#include "common/clock.h"
#include "common/resp_encoding.h"
#include "repl/wire.h"
#include "types/rdb_value.h"

namespace basalt {

namespace {

struct MigrateArgs {
  std::string host;
  int port = 0;
  int64_t db = 0;
  int64_t timeout_ms = 0;
  bool copy = false;
  bool replace = false;
  bool auth = false;
  bool auth2 = false;  // AUTH2: a user name too
  std::string user;
  std::string password;
  size_t first_key = 3;
  size_t num_keys = 1;
};

// The options after the five fixed arguments, then the database and timeout, in Redis's order
// and with its errors.
bool ParseMigrateArgs(CommandContext& c, MigrateArgs* a) {
  for (size_t j = 6; j < c.argc(); j++) {
    size_t more = c.argc() - 1 - j;
    if (EqualsIgnoreCase(c.arg(j), "copy")) {
      a->copy = true;
    } else if (EqualsIgnoreCase(c.arg(j), "replace")) {
      a->replace = true;
    } else if (EqualsIgnoreCase(c.arg(j), "auth") && more >= 1) {
      a->auth = true;
      a->auth2 = false;
      a->password = c.arg(++j);
    } else if (EqualsIgnoreCase(c.arg(j), "auth2") && more >= 2) {
      a->auth = a->auth2 = true;
      a->user = c.arg(++j);
      a->password = c.arg(++j);
    } else if (EqualsIgnoreCase(c.arg(j), "keys")) {
      if (!c.arg(3).empty()) {
        c.reply.Error(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        return false;
      }
      a->first_key = j + 1;
      a->num_keys = c.argc() - j - 1;
      break;
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  auto timeout = IntArg(c, 5);
  if (!timeout) return false;
  auto db = IntArg(c, 4);
  if (!db) return false;
  a->host = c.arg(1);
  a->port = atoi(c.arg(2).c_str());  // Redis reads the port as atoi does: no error of its own
  a->db = *db;
  // Past a year the bound means nothing; capped, deadlines cannot overflow.
  constexpr int64_t kMaxTimeoutMs = 365LL * 24 * 3600 * 1000;
  a->timeout_ms = *timeout <= 0 ? 1000 : std::min(*timeout, kMaxTimeoutMs);
  return true;
}

// The keys of MIGRATE (COMMAND GETKEYS, locking): the key argument, or with the KEYS option
// the arguments after it, which requires the key argument to be empty.
std::vector<size_t> MigrateKeys(const std::vector<std::string>& argv) {
  for (size_t i = 6; i < argv.size(); i++) {
    if (EqualsIgnoreCase(argv[i], "keys")) {
      if (!argv[3].empty()) return {};
      std::vector<size_t> keys;
      for (size_t k = i + 1; k < argv.size(); k++) keys.push_back(k);
      return keys;
    }
    if (EqualsIgnoreCase(argv[i], "auth")) {
      i += 1;
    } else if (EqualsIgnoreCase(argv[i], "auth2")) {
      i += 2;
    }
  }
  if (argv.size() > 3) return {3};
  return {};
}

// A key to send: its name, payload and TTL.
struct OutgoingKey {
  std::string_view name;
  int64_t ttl_ms = 0;  // 0: no expiry
  std::string payload;
};

void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  AppendRespArray(out, args);
}

// AUTH, SELECT (unless the connection has that database selected), then one RESTORE per key,
// as Redis pipelines them.
std::string BuildRequest(const MigrateArgs& a, bool select, const std::vector<OutgoingKey>& keys) {
  std::string out;
  if (a.auth2) {
    AppendCommand(&out, {"AUTH", a.user, a.password});
  } else if (a.auth) {
    AppendCommand(&out, {"AUTH", a.password});
  }
  std::string db = std::to_string(a.db);
  if (select) AppendCommand(&out, {"SELECT", db});
  for (const OutgoingKey& key : keys) {
    std::string ttl = std::to_string(key.ttl_ms);
    if (a.replace) {
      AppendCommand(&out, {"RESTORE", key.name, ttl, key.payload, "REPLACE"});
    } else {
      AppendCommand(&out, {"RESTORE", key.name, ttl, key.payload});
    }
  }
  return out;
}

// Why a connection could not be made. Redis reports a target that refuses the connection when
// it writes the request (it does not look at the connect's outcome), and anything else here.
enum class ConnectFailure { kNone, kConnecting, kWriting };

// Waits up to `timeout_ms` for the connect of `fd` to finish, looking at `stop` between
// slices. False on a timeout or once `stop` is set.
bool WaitConnected(int fd, int64_t timeout_ms, const std::atomic<bool>* stop) {
  constexpr int64_t kSliceMs = 100;
  int64_t deadline = MonotonicMicros() / 1000 + timeout_ms;
  while (!stop->load(std::memory_order_relaxed)) {
    int64_t left = deadline - MonotonicMicros() / 1000;
    if (left <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min(left, kSliceMs)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
  return false;
}

// Connects within `timeout_ms`; on failure returns null and sets *failure.
std::unique_ptr<ReplSocket> ConnectToTarget(const MigrateArgs& a, const std::atomic<bool>* stop,
                                            ConnectFailure* failure) {
  *failure = ConnectFailure::kConnecting;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(a.port);
  if (getaddrinfo(a.host.c_str(), port.c_str(), &hints, &found) != 0) return nullptr;
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> found_guard(found, &freeaddrinfo);
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    auto sock = std::make_unique<ReplSocket>(fd, stop);
    sock->set_timeout_ms(a.timeout_ms);
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) continue;
    // Timed out: Redis gives up on the first address too.
    if (!WaitConnected(fd, a.timeout_ms, stop)) return nullptr;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      *failure = ConnectFailure::kWriting;
      return nullptr;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *failure = ConnectFailure::kNone;
    return sock;
  }
  return nullptr;
}

// The live keys among those named, with their payloads and remaining TTLs. False after
// replying an error.
bool CollectKeys(CommandContext& c, const MigrateArgs& a, std::vector<OutgoingKey>* keys) {
  for (size_t i = a.first_key; i < a.first_key + a.num_keys; i++) {
    auto state = c.ctx.Lookup(c.db(), c.arg(i));
    if (ReplyIfError(c, state.status())) return false;
    if (!state->live()) continue;
    OutgoingKey key;
    key.name = c.arg(i);
    if (state->meta.expire_ms != 0) {
      key.ttl_ms = std::max<int64_t>(state->meta.expire_ms - c.ctx.now_ms(), 1);
    }
    auto payload = DumpKey(c.ctx, c.db(), key.name, state->meta);
    if (ReplyIfError(c, payload.status())) return false;
    key.payload = std::move(*payload);
    keys->push_back(std::move(key));
  }
  return true;
}

// Deletes a key the target accepted (looked up again: KEYS may name a key twice). False after
// replying an error, unless an earlier error was replied already.
bool DeleteMigrated(CommandContext& c, std::string_view key, bool replied) {
  auto state = c.ctx.Lookup(c.db(), key);
  if (!state.ok()) {
    if (!replied) ReplyIfError(c, state.status());
    return false;
  }
  if (!state->live()) return true;
  ReplicateAs(c, {"DEL", key});  // replicas delete it; they do not migrate it again
  c.ctx.Delete(c.db(), key, *state);
  Notify(c, notify::kGeneric, "del", key);
  return true;
}

void ReplyIoError(CommandContext& c, const char* doing) {
  c.reply.Error(std::string("IOERR error or timeout ") + doing + " to target instance");
}

// How one attempt at the exchange ended. kRetry: a kept connection failed before the target
// answered anything, without timing out (it went stale: the target closed it), and nothing was
// replied: a fresh connection tries again, as in Redis.
enum class Attempt { kDone, kRetry };

// The connection for this call: the kept one, or a new one. Null after replying an error.
std::optional<MigrateSockets::Link> OpenLink(CommandContext& c, const MigrateArgs& a,
                                             const std::string& target, bool* kept) {
  std::optional<MigrateSockets::Link> link = MigrateSockets::Get().Take(target);
  *kept = link.has_value();
  if (*kept) {
    link->sock->set_timeout_ms(a.timeout_ms);
    return link;
  }
  ConnectFailure failure;
  std::unique_ptr<ReplSocket> sock = ConnectToTarget(a, &c.server.stopping, &failure);
  if (failure == ConnectFailure::kConnecting) {
    c.reply.Error("IOERR error or timeout connecting to the client");
    return std::nullopt;
  }
  if (failure == ConnectFailure::kWriting) {
    ReplyIoError(c, "writing");
    return std::nullopt;
  }
  return MigrateSockets::Link{std::move(sock), -1};
}

Attempt MigrateOnce(CommandContext& c, const MigrateArgs& a, const std::vector<OutgoingKey>& keys,
                    bool may_retry) {
  std::string target = a.host + ":" + std::to_string(a.port);
  bool kept;
  std::optional<MigrateSockets::Link> link = OpenLink(c, a, target, &kept);
  if (!link) return Attempt::kDone;
  const int64_t start_ms = MonotonicMicros() / 1000;
  // A failure before any RESTORE reply: retried once on a kept connection, unless timed out.
  auto early_failure = [&](const char* doing) {
    bool timed_out = MonotonicMicros() / 1000 - start_ms >= a.timeout_ms;
    if (kept && may_retry && !timed_out && !c.server.stopping.load()) return Attempt::kRetry;
    ReplyIoError(c, doing);
    return Attempt::kDone;
  };
  ReplSocket& sock = *link->sock;
  const bool select = link->db != a.db;
  if (!sock.Send(BuildRequest(a, select, keys)).ok()) return early_failure("writing");

  std::string auth_reply, select_reply, reply;
  if (a.auth && !sock.ReadLine(&auth_reply).ok()) return early_failure("reading");
  if (select && !sock.ReadLine(&select_reply).ok()) return early_failure("reading");
  bool target_error = false;
  for (size_t j = 0; j < keys.size(); j++) {
    if (!sock.ReadLine(&reply).ok()) {
      if (j == 0 && !target_error) return early_failure("reading");
      // Keys the target took before the failure stay deleted, as in Redis.
      if (!target_error) ReplyIoError(c, "reading");
      return Attempt::kDone;
    }
    const std::string* error = nullptr;
    if (a.auth && auth_reply.starts_with('-')) {
      error = &auth_reply;
    } else if (select && select_reply.starts_with('-')) {
      error = &select_reply;
    } else if (reply.starts_with('-')) {
      error = &reply;
    }
    if (error != nullptr) {
      if (!target_error) {
        c.reply.Error(std::string("ERR Target instance replied with error: ")
                          .append(std::string_view(*error).substr(1)));
      }
      target_error = true;
      continue;
    }
    if (!a.copy && !DeleteMigrated(c, keys[j].name, target_error)) return Attempt::kDone;
  }
  // After an error the database selected is not known for sure: the next call selects again.
  link->db = target_error ? -1 : a.db;
  MigrateSockets::Get().Return(target, std::move(*link));
  if (!target_error) c.reply.Ok();
  return Attempt::kDone;
}

void MigrateCommand(CommandContext& c) {
  MigrateArgs a;
  if (!ParseMigrateArgs(c, &a)) return;
  std::vector<OutgoingKey> keys;
  if (!CollectKeys(c, a, &keys)) return;
  if (keys.empty()) return c.reply.Simple("NOKEY");
  if (MigrateOnce(c, a, keys, true) == Attempt::kRetry) MigrateOnce(c, a, keys, false);
}

const std::vector<CommandSpec> kMigrateCommands = {
    {"migrate", -6, kCmdWrite | kCmdMovableKeys | kCmdWaitsOnPeer, 3, 3, 1, MigrateCommand,
     "generic", "Atomically transfer a key from a Redis instance to another one.",
     "@keyspace @write @slow @dangerous", MigrateKeys},
};

}  // namespace

const std::vector<CommandSpec>& MigrateCommands() {
  return kMigrateCommands;
}

}  // namespace basalt
