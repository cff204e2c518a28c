#include "commands/acl_check.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "commands/command_util.h"
#include "common/clock.h"
#include "common/strutil.h"

namespace basalt {

namespace {

struct CatalogIndex {
  AclCatalog catalog;
  std::unordered_map<const CommandSpec*, int> ids;
};

uint64_t Categories(std::string_view text) {
  uint64_t bits = 0;
  ParseAclCategories(text, &bits);  // every row's categories are checked by a unit test
  return bits;
}

const CatalogIndex& Index() {
  static const CatalogIndex index = [] {
    CatalogIndex built;
    const CommandTable& table = CommandTable::Get();
    for (const CommandSpec* spec : table.all()) {
      int id = built.catalog.Add(spec->name, Categories(spec->acl_categories));
      built.ids[spec] = id;
      for (const SubcommandSpec& sub : table.Subcommands(*spec)) {
        built.catalog.Add(std::string(spec->name) + "|" + sub.name,
                          Categories({sub.acl_categories, sub.acl_categories_len}), id);
      }
    }
    return built;
  }();
  return index;
}

// The catalog id the rules are checked against: the subcommand's for a container command.
int CommandId(const CommandSpec& spec, const std::vector<std::string>& argv) {
  const CatalogIndex& index = Index();
  int id = index.ids.at(&spec);
  if (argv.size() >= 2 && !index.catalog.entry(id).subcommands.empty()) {
    int sub = index.catalog.Find(std::string(spec.name) + "|" + ToLower(argv[1]));
    if (sub >= 0) id = sub;
  }
  return id;
}

// How commands use their keys where the read/write flag of the row alone does not say it,
// following Redis's key specs: R reads the value, W modifies the key, RW both, "-" neither
// (existence or metadata only). One code per key in key order; the last code applies to the
// remaining keys. Commands not listed: writes need W, reads need R, others nothing.
const std::unordered_map<std::string_view, std::vector<uint8_t>>& KeyAccessExceptions() {
  static const auto table = [] {
    const std::pair<const char*, const char*> kRules[] = {
        // metadata-only reads
        {"exists", "-"},
        {"type", "-"},
        {"touch", "-"},
        {"strlen", "-"},
        {"hexists", "-"},
        {"hlen", "-"},
        {"hstrlen", "-"},
        {"llen", "-"},
        {"scard", "-"},
        {"sismember", "-"},
        {"zcard", "-"},
        {"object", "-"},
        // writes that return the old or the new value
        {"incr", "RW"},
        {"decr", "RW"},
        {"incrby", "RW"},
        {"decrby", "RW"},
        {"incrbyfloat", "RW"},
        {"getset", "RW"},
        {"getdel", "RW"},
        {"getex", "RW"},
        {"setbit", "RW"},
        {"hincrby", "RW"},
        {"hincrbyfloat", "RW"},
        {"lpop", "RW"},
        {"rpop", "RW"},
        {"blpop", "RW"},
        {"brpop", "RW"},
        {"lmpop", "RW"},
        {"blmpop", "RW"},
        {"spop", "RW"},
        {"zincrby", "RW"},
        {"zpopmin", "RW"},
        {"zpopmax", "RW"},
        {"zmpop", "RW"},
        {"bzpopmin", "RW"},
        {"bzpopmax", "RW"},
        {"bzmpop", "RW"},
        {"move", "RW"},
        {"eval", "RW"},
        {"evalsha", "RW"},
        // a source and a destination
        {"copy", "R W"},
        {"rename", "RW W"},
        {"renamenx", "RW W"},
        {"smove", "RW W"},
        {"lmove", "RW W"},
        {"blmove", "RW W"},
        {"rpoplpush", "RW W"},
        {"brpoplpush", "RW W"},
        {"georadius", "R W"},
        {"georadiusbymember", "R W"},
        // a destination, then sources
        {"bitop", "W R"},
        {"sdiffstore", "W R"},
        {"sinterstore", "W R"},
        {"sunionstore", "W R"},
        {"zdiffstore", "W R"},
        {"zinterstore", "W R"},
        {"zunionstore", "W R"},
        {"zrangestore", "W R"},
        {"geosearchstore", "W R"},
        {"pfmerge", "RW R"},
    };
    std::unordered_map<std::string_view, std::vector<uint8_t>> built;
    for (const auto& [name, codes] : kRules) {
      std::vector<uint8_t>& access = built[name];
      std::string_view rest = codes;
      while (!rest.empty()) {
        size_t space = rest.find(' ');
        std::string_view code = rest.substr(0, space);
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
        uint8_t a = kAclKeyNone;
        if (code.find('R') != std::string_view::npos) a |= kAclKeyRead;
        if (code.find('W') != std::string_view::npos) a |= kAclKeyWrite;
        access.push_back(a);
      }
    }
    return built;
  }();
  return table;
}

bool HasArgument(const std::vector<std::string>& argv, size_t from, std::string_view word) {
  for (size_t i = from; i < argv.size(); i++) {
    if (EqualsIgnoreCase(argv[i], word)) return true;
  }
  return false;
}

uint8_t KeyAccess(const CommandSpec& spec, const std::vector<std::string>& argv, size_t nth) {
  std::string_view name = spec.name;
  // Commands whose access depends on their arguments (Redis's variable key-spec flags).
  if (name == "set") return HasArgument(argv, 3, "get") ? kAclKeyReadWrite : kAclKeyWrite;
  if (name == "bitfield") {
    bool writes = HasArgument(argv, 2, "set") || HasArgument(argv, 2, "incrby");
    return writes ? kAclKeyReadWrite : kAclKeyRead;
  }
  const auto& exceptions = KeyAccessExceptions();
  auto it = exceptions.find(name);
  if (it != exceptions.end()) return it->second[std::min(nth, it->second.size() - 1)];
  if (spec.flags & kCmdWrite) return kAclKeyWrite;
  if (spec.flags & kCmdReadOnly) return kAclKeyRead;
  return kAclKeyNone;
}

// The Pub/Sub commands' channel arguments: from argv[1] to the end, or argv[1] only for the
// publishers. PSUBSCRIBE's patterns must appear literally in the user's channel list.
bool ChannelArguments(const CommandSpec& spec, size_t* last_offset, bool* literal) {
  std::string_view name = spec.name;
  *literal = name == "psubscribe";
  if (name == "publish" || name == "spublish") {
    *last_offset = 1;
    return true;
  }
  *last_offset = SIZE_MAX;
  return name == "subscribe" || name == "ssubscribe" || *literal;
}

AclCheckResult CheckSelector(const AclSelector& selector, const CommandSpec& spec,
                             const std::vector<std::string>& argv, int id,
                             const std::vector<size_t>& keys) {
  if (!(spec.flags & kCmdNoAuth)) {
    // "+select|0"-style rules match the first argument of commands without subcommands.
    bool container = CommandTable::Get().HasSubcommands(spec);
    const std::string* first_arg = !container && argv.size() >= 2 ? &argv[1] : nullptr;
    if (!selector.AllowsCommand(id, first_arg)) return {AclVerdict::kDeniedCommand, 0};
  }
  // The shard Pub/Sub commands declare their channels as keys (for cluster routing, as Redis
  // does); they are checked as channels below, not as keys.
  if (!selector.all_keys() && !(spec.flags & kCmdPubSub)) {
    for (size_t n = 0; n < keys.size(); n++) {
      if (!selector.AllowsKey(argv[keys[n]], KeyAccess(spec, argv, n)))
        return {AclVerdict::kDeniedKey, keys[n]};
    }
  }
  size_t last = 0;
  bool literal = false;
  if (!selector.all_channels() && ChannelArguments(spec, &last, &literal)) {
    for (size_t i = 1; i < argv.size() && i <= last; i++) {
      if (!selector.AllowsChannel(argv[i], literal)) return {AclVerdict::kDeniedChannel, i};
    }
  }
  return {};
}

// Redis reports the most specific reason among the selectors: channel over key over command,
// then the later argument. The values are Redis's ACL_DENIED_* codes (3, a failed login, never
// comes out of a command check).
int Severity(AclVerdict v) {
  switch (v) {
    case AclVerdict::kAllowed:
      return 0;
    case AclVerdict::kDeniedCommand:
      return 1;
    case AclVerdict::kDeniedKey:
      return 2;
    case AclVerdict::kDeniedChannel:
      return 4;
  }
  return 0;
}

// A user with no permission at all, for sessions whose user was deleted under them.
const AclUser& NobodyUser() {
  static const AclUser nobody;
  return nobody;
}

}  // namespace

uint8_t AclKeyAccessOf(const CommandSpec& spec, const std::vector<std::string>& argv, size_t nth) {
  return KeyAccess(spec, argv, nth);
}

const AclCatalog& CommandAclCatalog() {
  return Index().catalog;
}

std::string AclCommandName(const CommandSpec& spec, const std::vector<std::string>& argv) {
  return CommandAclCatalog().entry(CommandId(spec, argv)).name;
}

AclCheckResult AclCheck(const AclUser& user, const CommandSpec& spec,
                        const std::vector<std::string>& argv) {
  const AclSelector& root = user.root();
  if (user.selectors.size() == 1 && root.all_commands() && root.all_keys() && root.all_channels()) {
    return {};
  }
  int id = CommandId(spec, argv);
  std::vector<size_t> keys = CommandTable::KeyIndexes(spec, argv);
  AclCheckResult worst{AclVerdict::kDeniedCommand, 0};
  for (const AclSelector& selector : user.selectors) {
    AclCheckResult r = CheckSelector(selector, spec, argv, id, keys);
    if (r.ok()) return r;
    if (Severity(r.verdict) > Severity(worst.verdict) ||
        (r.verdict == worst.verdict && r.arg > worst.arg)) {
      worst = r;
    }
  }
  return worst;
}

std::string NoPermissionError(const AclCheckResult& result, const CommandSpec& spec,
                              const std::vector<std::string>& argv) {
  switch (result.verdict) {
    case AclVerdict::kDeniedKey:
      return "NOPERM this user has no permissions to access one of the keys used as arguments";
    case AclVerdict::kDeniedChannel:
      return "NOPERM this user has no permissions to access one of the channels used as "
             "arguments";
    default:
      return "NOPERM this user has no permissions to run the '" + AclCommandName(spec, argv) +
             "' command";
  }
}

std::string DryRunExplanation(const AclCheckResult& result, const CommandSpec& spec,
                              const std::vector<std::string>& argv) {
  switch (result.verdict) {
    case AclVerdict::kDeniedKey:
      return "This user has no permissions to access the '" + argv[result.arg] + "' key";
    case AclVerdict::kDeniedChannel:
      return "This user has no permissions to access the '" + argv[result.arg] + "' channel";
    default:
      return "This user has no permissions to run the '" + AclCommandName(spec, argv) + "' command";
  }
}

const AclUser& SessionUser(ServerState& server, Session& session) {
  uint64_t epoch = server.acl.epoch();
  if (session.acl_user == nullptr || session.acl_epoch != epoch) {
    // The name only changes on this session's own thread, so it can be read without info_mu.
    session.acl_user = server.acl.Find(session.user_name);
    session.acl_epoch = epoch;
  }
  return session.acl_user != nullptr ? *session.acl_user : NobodyUser();
}

void SetSessionUser(ServerState& server, Session& session, std::shared_ptr<const AclUser> user) {
  {
    std::lock_guard<std::mutex> lock(session.info_mu);
    session.user_name = user->name;
  }
  session.acl_user = std::move(user);
  session.acl_epoch = server.acl.epoch();
}

bool AuthRequired(ServerState& server, const Session& session) {
  return !session.authenticated && server.acl.AuthRequired();
}

bool AclPermitsOrReply(ServerState& server, Session& session, const CommandSpec& spec,
                       const std::vector<std::string>& argv, Reply& reply) {
  AclCheckResult result = AclCheck(SessionUser(server, session), spec, argv);
  if (result.ok()) return true;
  LogAclDenial(server, session, result, spec, argv, session.in_multi ? "multi" : "toplevel");
  if (session.in_multi) session.multi_failed = true;
  reply.Error(NoPermissionError(result, spec, argv));
  return false;
}

std::string AclRecheckForExec(ServerState& server, Session& session, const CommandSpec& spec,
                              const std::vector<std::string>& argv) {
  AclCheckResult result = AclCheck(SessionUser(server, session), spec, argv);
  if (result.ok()) return "";
  LogAclDenial(server, session, result, spec, argv, "multi");
  const char* reason = "no permission to execute the command or subcommand";
  if (result.verdict == AclVerdict::kDeniedKey)
    reason = "no permission to touch the specified keys";
  if (result.verdict == AclVerdict::kDeniedChannel)
    reason = "no permission to access one of the channels used as arguments";
  return std::string(
             "NOPERM ACLs rules changed between the moment the transaction was accumulated and "
             "the EXEC call. This command is no longer allowed for the following reason: ") +
         reason;
}

std::string AclCheckForScript(ServerState& server, Session& caller, const CommandSpec& spec,
                              const std::vector<std::string>& argv) {
  AclCheckResult result = AclCheck(SessionUser(server, caller), spec, argv);
  if (result.ok()) return "";
  LogAclDenial(server, caller, result, spec, argv, "lua");
  switch (result.verdict) {
    case AclVerdict::kDeniedKey:
      return "ERR The user executing the script can't access at least one of the keys "
             "mentioned in the command arguments";
    case AclVerdict::kDeniedChannel:
      return "ERR The user executing the script can't publish to the channel mentioned in the "
             "command";
    default:
      return "ERR The user executing the script can't run this command or subcommand";
  }
}

namespace {

void AddLogEntry(ServerState& server, Session& session, AclLogEntry entry) {
  // INFO stats' acl_access_denied_*: every denial is logged here exactly once.
  ServerCounters& c = server.counters;
  if (entry.reason == "auth") {
    c.acl_denied_auth.fetch_add(1, std::memory_order_relaxed);
  } else if (entry.reason == "key") {
    c.acl_denied_key.fetch_add(1, std::memory_order_relaxed);
  } else if (entry.reason == "channel") {
    c.acl_denied_channel.fetch_add(1, std::memory_order_relaxed);
  } else {
    c.acl_denied_cmd.fetch_add(1, std::memory_order_relaxed);
  }
  entry.created_ms = UnixMillis();
  entry.client_info = ClientInfoLine(session);
  server.acl_log.Add(std::move(entry),
                     static_cast<size_t>(server.config->GetInt("acllog-max-len")));
}

}  // namespace

void LogAclDenial(ServerState& server, Session& session, const AclCheckResult& result,
                  const CommandSpec& spec, const std::vector<std::string>& argv,
                  const char* context) {
  AclLogEntry entry;
  switch (result.verdict) {
    case AclVerdict::kDeniedKey:
      entry.reason = "key";
      entry.object = argv[result.arg];
      break;
    case AclVerdict::kDeniedChannel:
      entry.reason = "channel";
      entry.object = argv[result.arg];
      break;
    default:
      entry.reason = "command";
      entry.object = AclCommandName(spec, argv);
  }
  entry.context = context;
  entry.username = SessionUser(server, session).name;
  AddLogEntry(server, session, std::move(entry));
}

void LogAuthFailure(ServerState& server, Session& session, const std::string& username,
                    const char* command) {
  AclLogEntry entry;
  entry.reason = "auth";
  entry.context = session.in_multi ? "multi" : "toplevel";
  entry.object = command;
  entry.username = username;
  AddLogEntry(server, session, std::move(entry));
}

void DisconnectUsers(ServerState& server, Session& caller, const std::vector<std::string>& users) {
  if (users.empty()) return;
  for (const auto& s : server.clients.Snapshot()) {
    std::string name;
    {
      std::lock_guard<std::mutex> lock(s->info_mu);
      name = s->user_name;
    }
    if (std::find(users.begin(), users.end(), name) == users.end()) continue;
    if (s.get() == &caller) {
      caller.close_after_reply = true;  // after this command's reply, as in Redis
    } else if (s->close_hook) {
      s->close_hook();
    }
  }
}

namespace {

bool AllowsChannelAnywhere(const AclUser& user, std::string_view channel, bool literal) {
  for (const AclSelector& selector : user.selectors) {
    if (selector.AllowsChannel(channel, literal)) return true;
  }
  return false;
}

// Redis's shortcut: nothing can be revoked if the new rules allow every channel or keep every
// channel pattern of the old ones.
bool ChannelRulesOnlyGrew(const AclUser& before, const AclUser& after) {
  std::vector<const std::string*> kept;
  for (const AclSelector& selector : after.selectors) {
    if (selector.all_channels()) return true;
    for (const auto& pattern : selector.channels()) kept.push_back(&pattern);
  }
  for (const AclSelector& selector : before.selectors) {
    for (const auto& pattern : selector.channels()) {
      bool found = std::any_of(kept.begin(), kept.end(),
                               [&](const std::string* k) { return *k == pattern; });
      if (!found) return false;
    }
  }
  return true;
}

}  // namespace

void DisconnectRevokedSubscribers(ServerState& server, Session& caller, const AclUser& before,
                                  const AclUser& after) {
  if (ChannelRulesOnlyGrew(before, after)) return;
  std::vector<std::shared_ptr<Session>> revoked;
  for (const auto& sub : server.pubsub.AllSubscriptions()) {
    {
      std::lock_guard<std::mutex> lock(sub.session->info_mu);
      if (sub.session->user_name != after.name) continue;
    }
    if (AllowsChannelAnywhere(after, sub.name, sub.kind == PubSubKind::kPattern)) continue;
    if (std::find(revoked.begin(), revoked.end(), sub.session) == revoked.end())
      revoked.push_back(sub.session);
  }
  for (const auto& s : revoked) {
    if (s.get() == &caller) {
      caller.close_after_reply = true;
    } else if (s->close_hook) {
      s->close_hook();
    }
  }
}

}  // namespace basalt
