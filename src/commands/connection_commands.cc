// Connection commands: PING, ECHO, AUTH, HELLO, SELECT, QUIT, RESET and CLIENT.
#include <algorithm>
#include <optional>

#include "commands/acl_check.h"
#include "commands/command_util.h"
#include "commands/transactions.h"
#include "common/clock.h"
#include "common/version.h"

namespace basalt {

namespace {

constexpr const char* kWrongPass = "WRONGPASS invalid username-password pair or user is disabled.";

// Logs in as `user` if the password is right; a failure is recorded in the ACL LOG under the
// command that tried (AUTH or HELLO).
Status Authenticate(CommandContext& c, const std::string& user, const std::string& pass,
                    const char* command) {
  std::shared_ptr<const AclUser> found = c.server.acl.Authenticate(user, pass);
  if (found == nullptr) {
    LogAuthFailure(c.server, c.session, user, command);
    return Status::RedisError(kWrongPass);
  }
  SetSessionUser(c.server, c.session, std::move(found));
  c.session.authenticated = true;
  return Status::OK();
}

void PingCommand(CommandContext& c) {
  if (c.argc() > 2) return c.reply.Error(WrongArityError("ping"));
  if (c.session.resp == 2 && c.session.subscriptions.total() > 0) {
    // A subscribed RESP2 connection only carries arrays: ["pong", <argument or "">].
    c.reply.Array(2);
    c.reply.Bulk("pong");
    return c.reply.Bulk(c.argc() == 2 ? c.arg(1) : "");
  }
  if (c.argc() == 2) return c.reply.Bulk(c.arg(1));
  c.reply.Simple("PONG");
}

void EchoCommand(CommandContext& c) {
  c.reply.Bulk(c.arg(1));
}

void AuthCommand(CommandContext& c) {
  if (c.argc() > 3) return c.reply.Error(kSyntaxError);
  if (c.argc() == 2 && c.server.acl.DefaultUserIsNoPass()) {
    return c.reply.Error(
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
  }
  std::string user = c.argc() == 3 ? c.arg(1) : "default";
  Status s = Authenticate(c, user, c.arg(c.argc() - 1), "AUTH");
  if (ReplyIfError(c, s)) return;
  c.reply.Ok();
}

void HelloCommand(CommandContext& c) {
  int resp = c.session.resp;
  size_t j = 1;
  if (c.argc() >= 2) {
    auto ver = ParseInt64(c.arg(1));
    if (!ver) return c.reply.Error("ERR Protocol version is not an integer or out of range");
    if (*ver < 2 || *ver > 3) return c.reply.Error("NOPROTO unsupported protocol version");
    resp = static_cast<int>(*ver);
    j = 2;
  }
  std::string name;
  bool set_name = false;
  for (; j < c.argc(); j++) {
    size_t left = c.argc() - j - 1;
    if (EqualsIgnoreCase(c.arg(j), "auth") && left >= 2) {
      Status s = Authenticate(c, c.arg(j + 1), c.arg(j + 2), "HELLO");
      if (ReplyIfError(c, s)) return;
      j += 2;
    } else if (EqualsIgnoreCase(c.arg(j), "setname") && left >= 1) {
      name = c.arg(++j);
      set_name = true;
    } else {
      return c.reply.Error("ERR Syntax error in HELLO option '" + c.arg(j) + "'");
    }
  }
  if (AuthRequired(c.server, c.session)) {
    return c.reply.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "AUTH <user> <pass> option can be used to authenticate the client and select the "
        "RESP protocol version at the same time");
  }
  if (set_name) {
    std::lock_guard<std::mutex> lock(c.session.info_mu);
    c.session.name = name;
  }
  c.session.resp = resp;
  c.reply.set_resp(resp);
  c.reply.Map(7);
  c.reply.Bulk("server");
  c.reply.Bulk("redis");
  c.reply.Bulk("version");
  c.reply.Bulk(kRedisVersion);
  c.reply.Bulk("proto");
  c.reply.Integer(resp);
  c.reply.Bulk("id");
  c.reply.Integer(static_cast<int64_t>(c.session.id));
  c.reply.Bulk("mode");
  c.reply.Bulk("standalone");
  c.reply.Bulk("role");
  c.reply.Bulk(c.server.replication->is_replica() ? "replica" : "master");
  c.reply.Bulk("modules");
  c.reply.Array(0);
}

void SelectCommand(CommandContext& c) {
  auto db = ParseInt64(c.arg(1));
  if (!db) return c.reply.Error(kNotIntegerError);
  if (*db < 0 || *db >= c.server.keyspace->databases())
    return c.reply.Error("ERR DB index is out of range");
  c.session.db = static_cast<int>(*db);
  c.reply.Ok();
}

void QuitCommand(CommandContext& c) {
  c.session.close_after_reply = true;
  c.reply.Ok();
}

void ResetCommand(CommandContext& c) {
  ResetTransaction(c.server, c.session);
  c.server.pubsub.UnsubscribeAll(c.session);
  c.server.monitors.Remove(c.session);
  c.server.tracking.Disable(c.session);
  c.session.db = 0;
  c.session.resp = 2;
  c.reply.set_resp(2);
  {
    std::lock_guard<std::mutex> lock(c.session.info_mu);
    c.session.name.clear();
  }
  SetSessionUser(c.server, c.session, c.server.acl.DefaultUser());
  c.session.authenticated = !c.server.acl.AuthRequired();
  c.reply.Simple("RESET");
}

}  // namespace

std::string ClientInfoLine(const Session& s, bool blocked) {
  std::string name, cmd, user, lib_name, lib_ver;
  {
    std::lock_guard<std::mutex> lock(s.info_mu);
    name = s.name;
    cmd = s.last_command;
    user = s.user_name;
    lib_name = s.lib_name;
    lib_ver = s.lib_ver;
  }
  int64_t now = UnixMillis();
  std::string line;
  line += "id=" + std::to_string(s.id);
  line += " addr=" + s.addr + " laddr=" + s.laddr + " fd=" + std::to_string(s.fd);
  line += " name=" + name;
  line += " age=" + std::to_string((now - s.created_ms) / 1000);
  line += " idle=" + std::to_string((now - s.last_interaction_ms.load()) / 1000);
  std::string flags;
  if (s.monitor.load(std::memory_order_relaxed)) flags += "O";
  if (s.subscriptions.total() > 0) flags += "P";
  if (s.in_multi) flags += "x";
  if (blocked) flags += "b";
  const uint32_t tracking = s.tracking_flags.load(std::memory_order_relaxed);
  if (tracking & tracking_flag::kOn) flags += "t";
  if (tracking & tracking_flag::kBrokenRedirect) flags += "R";
  if (tracking & tracking_flag::kBcast) flags += "B";
  if (s.no_evict.load(std::memory_order_relaxed)) flags += "e";
  if (s.no_touch.load(std::memory_order_relaxed)) flags += "T";
  line += " flags=" + (flags.empty() ? std::string("N") : flags);
  line += " db=" + std::to_string(s.db.load());
  line += " sub=" + std::to_string(s.subscriptions.count(PubSubKind::kChannel));
  line += " psub=" + std::to_string(s.subscriptions.count(PubSubKind::kPattern));
  line += " ssub=" + std::to_string(s.subscriptions.count(PubSubKind::kShard));
  line += " multi=" + std::to_string(s.in_multi ? static_cast<int64_t>(s.queued.size()) : -1);
  line += " qbuf=" + std::to_string(s.query_buffer_bytes.load()) + " qbuf-free=0";
  line += " argv-mem=0 multi-mem=0 rbs=16384 rbp=0 obl=0 oll=0";
  line += " omem=" + std::to_string(s.output_buffer_bytes.load() + s.output.queued_bytes());
  line += " tot-mem=0 events=r cmd=" + cmd + " user=" + user;
  line += " redir=" + std::to_string((tracking & tracking_flag::kOn)
                                         ? static_cast<int64_t>(s.tracking_redirect.load())
                                         : int64_t{-1});
  line += " resp=" + std::to_string(s.resp.load());
  line += " lib-name=" + lib_name + " lib-ver=" + lib_ver;
  return line;
}

namespace {

bool ValidClientName(const std::string& name) {
  for (char ch : name) {
    if (ch < '!' || ch > '~') return false;  // Redis allows printable ASCII without spaces
  }
  return true;
}

// CLIENT LIST/KILL TYPE: Redis's type names, "replica" spelled "slave"; empty if unknown.
std::string CanonicalClientType(const std::string& name) {
  std::string type = ToLower(name);
  if (type == "replica") return "slave";
  if (type == "normal" || type == "slave" || type == "master" || type == "pubsub") return type;
  return "";
}

// Every client of this server is a normal client or, once subscribed, a pubsub client.
bool HasClientType(const Session& s, const std::string& type) {
  return type == (s.client_class() == ClientClass::kPubsub ? "pubsub" : "normal");
}

// Closes another client as Redis frees it: gone from CLIENT LIST and INFO before the reply,
// while its worker closes the connection.
void KillOtherClient(CommandContext& c, Session& s) {
  c.server.clients.Remove(s.id);
  if (s.close_hook) s.close_hook();
}

// CLIENT KILL in both forms. Old form: CLIENT KILL addr -> OK or error. New form: filters,
// returns the number of clients killed.
void ClientKill(CommandContext& c) {
  auto sessions = c.server.clients.Snapshot();
  if (c.argc() == 3) {
    for (const auto& s : sessions) {
      if (s->addr != c.arg(2)) continue;
      if (s.get() == &c.session) {
        c.session.close_after_reply = true;
      } else {
        KillOtherClient(c, *s);
      }
      return c.reply.Ok();
    }
    return c.reply.Error("ERR No such client");
  }
  if (c.argc() % 2 != 0) return c.reply.Error(kSyntaxError);
  std::optional<uint64_t> id;
  std::string addr, laddr, type, user;
  bool skipme = true;
  for (size_t j = 2; j + 1 < c.argc(); j += 2) {
    std::string opt = ToLower(c.arg(j));
    const std::string& value = c.arg(j + 1);
    if (opt == "id") {
      auto v = ParseInt64(value);
      if (!v || *v <= 0) return c.reply.Error("ERR client-id should be greater than 0");
      id = static_cast<uint64_t>(*v);
    } else if (opt == "addr") {
      addr = value;
    } else if (opt == "laddr") {
      laddr = value;
    } else if (opt == "skipme") {
      if (EqualsIgnoreCase(value, "yes"))
        skipme = true;
      else if (EqualsIgnoreCase(value, "no"))
        skipme = false;
      else
        return c.reply.Error(kSyntaxError);
    } else if (opt == "type") {
      type = CanonicalClientType(value);
      if (type.empty()) return c.reply.Error("ERR Unknown client type '" + value + "'");
    } else if (opt == "user") {
      if (c.server.acl.Find(value) == nullptr)
        return c.reply.Error("ERR No such user '" + value + "'");
      user = value;
    } else if (opt == "maxage") {
      continue;  // accepted; connections are not filtered by age
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  int64_t killed = 0;
  for (const auto& s : sessions) {
    if (id && s->id != *id) continue;
    if (!addr.empty() && s->addr != addr) continue;
    if (!laddr.empty() && s->laddr != laddr) continue;
    if (!type.empty() && !HasClientType(*s, type)) continue;
    if (!user.empty()) {
      std::lock_guard<std::mutex> lock(s->info_mu);
      if (s->user_name != user) continue;
    }
    bool self = s.get() == &c.session;
    if (self && skipme) continue;
    if (self) {
      c.session.close_after_reply = true;
    } else {
      KillOtherClient(c, *s);
    }
    killed++;
  }
  c.reply.Integer(killed);
}

std::optional<bool> OnOff(const std::string& arg) {
  if (EqualsIgnoreCase(arg, "on")) return true;
  if (EqualsIgnoreCase(arg, "off")) return false;
  return std::nullopt;
}

// CLIENT SETINFO LIB-NAME|LIB-VER <value>: shown in CLIENT LIST; an empty value clears it.
void ClientSetInfo(CommandContext& c) {
  const std::string& attr = c.arg(2);
  const bool lib_name = EqualsIgnoreCase(attr, "lib-name");
  if (!lib_name && !EqualsIgnoreCase(attr, "lib-ver"))
    return c.reply.Error("ERR Unrecognized option '" + attr + "'");
  if (!ValidClientName(c.arg(3)))
    return c.reply.Error("ERR " + attr + " cannot contain spaces, newlines or special characters.");
  std::lock_guard<std::mutex> lock(c.session.info_mu);
  (lib_name ? c.session.lib_name : c.session.lib_ver) = c.arg(3);
  c.reply.Ok();
}

// CLIENT REPLY ON|OFF|SKIP. OFF and SKIP are not answered; the connection drops the replies
// they silence (net/connection.cc).
void ClientReply(CommandContext& c) {
  using Mode = Session::ReplyMode;
  const std::string& mode = c.arg(2);
  if (EqualsIgnoreCase(mode, "on")) {
    c.session.reply_mode = Mode::kOn;
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(mode, "off")) {
    c.session.reply_mode = Mode::kOff;
  } else if (EqualsIgnoreCase(mode, "skip")) {
    if (c.session.reply_mode != Mode::kOff) c.session.reply_mode = Mode::kSkipNext;
  } else {
    c.reply.Error(kSyntaxError);
  }
}

// CLIENT PAUSE <timeout ms> [WRITE|ALL] (commands/client_pause.h).
void ClientPauseCommand(CommandContext& c) {
  auto ms = ParseInt64(c.arg(2));
  if (!ms) return c.reply.Error("ERR timeout is not an integer or out of range");
  if (*ms < 0) return c.reply.Error("ERR timeout is negative");
  ClientPause::Mode mode = ClientPause::kAll;
  if (c.argc() == 4 && EqualsIgnoreCase(c.arg(3), "write")) {
    mode = ClientPause::kWrite;
  } else if (c.argc() == 4 && !EqualsIgnoreCase(c.arg(3), "all")) {
    return c.reply.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
  } else if (c.argc() > 4) {
    return c.reply.Error(kSyntaxError);
  }
  const int64_t until = UnixMillis() + std::min<int64_t>(*ms, INT64_MAX / 2);
  c.server.pause.Pause(mode, until);
  if (c.server.expirer != nullptr) c.server.expirer->PauseUntil(c.server.pause.until_ms());
  c.reply.Ok();
}

// CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: 1 if that client was parked in a blocking command.
void ClientUnblock(CommandContext& c) {
  auto id = ParseInt64(c.arg(2));
  if (!id) return c.reply.Error(kNotIntegerError);
  bool error = false;
  if (c.argc() == 4) {
    if (EqualsIgnoreCase(c.arg(3), "error")) {
      error = true;
    } else if (!EqualsIgnoreCase(c.arg(3), "timeout")) {
      return c.reply.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  } else if (c.argc() > 4) {
    return c.reply.Error(kSyntaxError);
  }
  for (const auto& s : c.server.clients.Snapshot()) {
    if (static_cast<int64_t>(s->id) != *id) continue;
    if (!c.server.blocking.IsBlocked(s->id) || !s->unblock_hook) break;
    s->unblock_hook(error);
    return c.reply.Integer(1);
  }
  c.reply.Integer(0);
}

void ClientHelp(CommandContext& c) {
  static const std::string kHelp[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <option> <value>",
      "    Set client meta attr. Options are:",
      "    * LIB-NAME: the client lib name.",
      "    * LIB-VER: the client lib version.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
      "NO-TOUCH (ON|OFF)",
      "    Will not touch LRU/LFU stats when this mode is on.",
      "HELP",
      "    Print this help."};
  c.reply.SimpleLines(kHelp);
}

void ClientCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "id" && c.argc() == 2) return c.reply.Integer(static_cast<int64_t>(c.session.id));
  if (sub == "setname" && c.argc() == 3) {
    if (!ValidClientName(c.arg(2)))
      return c.reply.Error(
          "ERR Client names cannot contain spaces, newlines or special characters.");
    std::lock_guard<std::mutex> lock(c.session.info_mu);
    c.session.name = c.arg(2);
    return c.reply.Ok();
  }
  if (sub == "getname" && c.argc() == 2) {
    std::string name;
    {
      std::lock_guard<std::mutex> lock(c.session.info_mu);
      name = c.session.name;
    }
    if (name.empty()) return c.reply.Null();
    return c.reply.Bulk(name);
  }
  if (sub == "info" && c.argc() == 2) return c.reply.Verbatim(ClientInfoLine(c.session) + "\n");
  if (sub == "list") {
    std::vector<uint64_t> ids;
    std::string type;
    for (size_t j = 2; j < c.argc(); j++) {
      if (EqualsIgnoreCase(c.arg(j), "type") && j + 1 < c.argc()) {
        type = CanonicalClientType(c.arg(++j));
        if (type.empty()) return c.reply.Error("ERR Unknown client type '" + c.arg(j) + "'");
      } else if (EqualsIgnoreCase(c.arg(j), "id")) {
        for (j++; j < c.argc(); j++) {
          auto v = ParseInt64(c.arg(j));
          if (!v || *v <= 0) return c.reply.Error("ERR Invalid client ID");
          ids.push_back(static_cast<uint64_t>(*v));
        }
      } else {
        return c.reply.Error(kSyntaxError);
      }
    }
    std::string text;
    for (const auto& s : c.server.clients.Snapshot()) {
      if (!ids.empty() && std::find(ids.begin(), ids.end(), s->id) == ids.end()) continue;
      if (!type.empty() && !HasClientType(*s, type)) continue;
      text += ClientInfoLine(*s, c.server.blocking.IsBlocked(s->id)) + "\n";
    }
    return c.reply.Verbatim(text);
  }
  if (sub == "kill" && c.argc() >= 3) return ClientKill(c);
  if (sub == "setinfo" && c.argc() == 4) return ClientSetInfo(c);
  if ((sub == "no-evict" || sub == "no-touch") && c.argc() == 3) {
    std::optional<bool> on = OnOff(c.arg(2));
    if (!on) return c.reply.Error(kSyntaxError);
    (sub == "no-evict" ? c.session.no_evict : c.session.no_touch).store(*on);
    return c.reply.Ok();
  }
  if (sub == "reply" && c.argc() == 3) return ClientReply(c);
  if (sub == "pause" && c.argc() >= 3) return ClientPauseCommand(c);
  if (sub == "unpause" && c.argc() == 2) {
    c.server.pause.Unpause();
    if (c.server.expirer != nullptr) c.server.expirer->PauseUntil(0);
    return c.reply.Ok();
  }
  if (sub == "unblock" && c.argc() >= 3) return ClientUnblock(c);
  if (sub == "tracking" && c.argc() >= 3) return ClientTrackingCommand(c);
  if (sub == "caching" && c.argc() >= 3) return ClientCachingCommand(c);
  if (sub == "getredir" && c.argc() == 2) return ClientGetRedirCommand(c);
  if (sub == "trackinginfo" && c.argc() == 2) return ClientTrackingInfoCommand(c);
  if (sub == "help") return ClientHelp(c);
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try CLIENT HELP.");
}

constexpr uint32_t kConn = kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast;

const std::vector<CommandSpec> kConnectionCommands = {
    {"ping", -1, kCmdFast | kCmdPubSubContext, 0, 0, 0, PingCommand, "connection",
     "Returns the server's liveliness response.", "@fast @connection"},
    {"echo", 2, kCmdFast | kCmdLoading | kCmdStale, 0, 0, 0, EchoCommand, "connection",
     "Returns the given string.", "@fast @connection"},
    {"auth", -2, kConn | kCmdAllowBusy | kCmdNoAuth | kCmdSkipSlowlog, 0, 0, 0, AuthCommand,
     "connection", "Authenticates the connection.", "@fast @connection"},
    {"hello", -1, kConn | kCmdAllowBusy | kCmdNoAuth | kCmdSkipSlowlog, 0, 0, 0, HelloCommand,
     "connection", "Handshakes with the Redis server.", "@fast @connection"},
    {"select", 2, kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, SelectCommand, "connection",
     "Changes the selected database.", "@fast @connection"},
    {"quit", -1, kConn | kCmdAllowBusy | kCmdNoAuth | kCmdTxControl | kCmdPubSubContext, 0, 0, 0,
     QuitCommand, "connection", "Closes the connection.", "@fast @connection"},
    {"reset", 1, kConn | kCmdAllowBusy | kCmdNoAuth | kCmdTxControl | kCmdPubSubContext, 0, 0, 0,
     ResetCommand, "connection", "Resets the connection.", "@fast @connection"},
    {"client", -2, kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0, ClientCommand, "connection",
     "A container for client connection commands.", "@slow", nullptr,
     "id:2:@slow@connection setname:3:@slow@connection getname:2:@slow@connection "
     "info:2:@slow@connection list:-2:@admin@slow@dangerous@connection "
     "kill:-3:@admin@slow@dangerous@connection setinfo:4:@slow@connection "
     "no-evict:3:@admin@slow@dangerous@connection no-touch:3:@slow@connection "
     "reply:3:@slow@connection pause:-3:@admin@slow@dangerous@connection "
     "unpause:2:@admin@slow@dangerous@connection unblock:-3:@admin@slow@dangerous@connection "
     "tracking:-3:@slow@connection caching:3:@slow@connection getredir:2:@slow@connection "
     "trackinginfo:2:@slow@connection help:2:@slow@connection"},
};

}  // namespace

const std::vector<CommandSpec>& ConnectionCommands() {
  return kConnectionCommands;
}

}  // namespace basalt
