// ACL: SETUSER, GETUSER, DELUSER, USERS, LIST, WHOAMI, CAT, GENPASS, LOG, DRYRUN, SAVE, LOAD.
//
// Users live in ServerState::acl (security/acl_store.h); these handlers parse arguments, call
// the store and shape Redis 7.0's replies. Deleting a user, or replacing all users with ACL
// LOAD, disconnects the clients logged in as the users that went away, as Redis does.
#include <glog/logging.h>
#include <sys/random.h>

#include "commands/acl_check.h"
#include "commands/command_util.h"
#include "common/clock.h"

namespace basalt {

namespace {

void AclSetUser(CommandContext& c) {
  const std::string& name = c.arg(2);
  if (!AclNameIsValid(name))
    return c.reply.Error("ERR Usernames can't contain spaces or null characters");
  std::vector<std::string> rules;
  size_t unmatched = 0;
  std::vector<std::string> args(c.argv.begin() + 3, c.argv.end());
  if (!MergeSelectorArguments(args, &rules, &unmatched)) {
    return c.reply.Error("ERR Unmatched parenthesis in acl selector starting at '" +
                         args[unmatched] + "'.");
  }
  std::shared_ptr<const AclUser> before = c.server.acl.Find(name);
  std::string bad_rule;
  Status s = c.server.acl.SetUser(name, rules, &bad_rule);
  if (!s.ok()) {
    return c.reply.Error("ERR Error in ACL SETUSER modifier '" + bad_rule + "': " + s.message());
  }
  std::shared_ptr<const AclUser> after = c.server.acl.Find(name);
  if (before != nullptr && after != nullptr) {
    DisconnectRevokedSubscribers(c.server, c.session, *before, *after);
  }
  c.reply.Ok();
}

void AclDelUser(CommandContext& c) {
  std::vector<std::string> names(c.argv.begin() + 2, c.argv.end());
  for (const auto& name : names) {
    if (name == "default") return c.reply.Error("ERR The 'default' user cannot be removed");
  }
  std::vector<std::string> deleted = c.server.acl.DelUsers(names);
  DisconnectUsers(c.server, c.session, deleted);
  c.reply.Integer(static_cast<int64_t>(deleted.size()));
}

// The commands, keys and channels fields of GETUSER for one selector.
void ReplySelector(CommandContext& c, const AclSelector& selector) {
  c.reply.Bulk("commands");
  c.reply.Bulk(selector.DescribeCommands(c.server.acl.catalog()));
  c.reply.Bulk("keys");
  c.reply.Bulk(selector.DescribeKeys());
  c.reply.Bulk("channels");
  c.reply.Bulk(selector.DescribeChannels());
}

void AclGetUser(CommandContext& c) {
  std::shared_ptr<const AclUser> user = c.server.acl.Find(c.arg(2));
  if (user == nullptr) return c.reply.Null();
  std::vector<const char*> flags = {user->enabled ? "on" : "off"};
  if (user->nopass) flags.push_back("nopass");
  if (user->sanitize_payload == AclUser::Sanitize::kSkip) flags.push_back("skip-sanitize-payload");
  if (user->sanitize_payload == AclUser::Sanitize::kSanitize) flags.push_back("sanitize-payload");
  c.reply.Map(6);
  c.reply.Bulk("flags");
  c.reply.Set(flags.size());
  for (const char* flag : flags) c.reply.Bulk(flag);
  c.reply.Bulk("passwords");
  c.reply.Array(user->password_hashes.size());
  for (const auto& hash : user->password_hashes) c.reply.Bulk(hash);
  ReplySelector(c, user->root());
  c.reply.Bulk("selectors");
  c.reply.Array(user->selectors.size() - 1);
  for (size_t i = 1; i < user->selectors.size(); i++) {
    c.reply.Map(3);
    ReplySelector(c, user->selectors[i]);
  }
}

void AclList(CommandContext& c, bool names_only) {
  auto users = c.server.acl.Users();
  c.reply.Array(users.size());
  for (const auto& user : users) {
    if (names_only) {
      c.reply.Bulk(user->name);
    } else {
      c.reply.Bulk("user " + user->name + " " + user->Describe(c.server.acl.catalog()));
    }
  }
}

void AclCat(CommandContext& c) {
  const auto& names = AclCategoryNames();
  if (c.argc() == 2) {
    c.reply.Array(names.size());
    for (const auto& name : names) c.reply.Bulk(name);
    return;
  }
  uint64_t category = AclCategoryByName(c.arg(2));
  if (category == 0) return c.reply.Error("ERR Unknown category '" + c.arg(2).substr(0, 128) + "'");
  std::vector<const std::string*> matching;
  for (const auto& entry : c.server.acl.catalog().entries()) {
    if (entry.categories & category) matching.push_back(&entry.name);
  }
  c.reply.Array(matching.size());
  for (const auto* name : matching) c.reply.Bulk(*name);
}

void AclGenPass(CommandContext& c) {
  int64_t bits = 256;
  if (c.argc() == 3) {
    auto v = IntArg(c, 2);
    if (!v) return;
    bits = *v;
  }
  constexpr int64_t kMaxBits = 4096;
  if (bits <= 0 || bits > kMaxBits) {
    return c.reply.Error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a "
        "positive number up to 4096");
  }
  size_t chars = static_cast<size_t>((bits + 3) / 4);
  unsigned char random[kMaxBits / 8];
  size_t bytes = (chars + 1) / 2;
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(random + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return c.reply.Error("ERR can't read random bytes from the kernel");
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string pass;
  for (size_t i = 0; i < chars; i++) {
    unsigned char byte = random[i / 2];
    pass.push_back(kHex[i % 2 == 0 ? byte >> 4 : byte & 0xf]);
  }
  c.reply.Bulk(pass);
}

void AclLogCommand(CommandContext& c) {
  int64_t count = 10;
  if (c.argc() == 3) {
    if (EqualsIgnoreCase(c.arg(2), "reset")) {
      c.server.acl_log.Reset();
      return c.reply.Ok();
    }
    auto v = IntArg(c, 2);
    if (!v) return;
    count = std::max<int64_t>(*v, 0);
  }
  int64_t now = UnixMillis();
  auto entries = c.server.acl_log.Recent(static_cast<size_t>(count));
  c.reply.Array(entries.size());
  for (const auto& e : entries) {
    c.reply.Map(7);
    c.reply.Bulk("count");
    c.reply.Integer(static_cast<int64_t>(e.count));
    c.reply.Bulk("reason");
    c.reply.Bulk(e.reason);
    c.reply.Bulk("context");
    c.reply.Bulk(e.context);
    c.reply.Bulk("object");
    c.reply.Bulk(e.object);
    c.reply.Bulk("username");
    c.reply.Bulk(e.username);
    c.reply.Bulk("age-seconds");
    c.reply.Double(static_cast<double>(now - e.created_ms) / 1000);
    c.reply.Bulk("client-info");
    c.reply.Bulk(e.client_info);
  }
}

void AclDryRun(CommandContext& c) {
  std::shared_ptr<const AclUser> user = c.server.acl.Find(c.arg(2));
  if (user == nullptr) return c.reply.Error("ERR User '" + c.arg(2) + "' not found");
  std::vector<std::string> argv(c.argv.begin() + 3, c.argv.end());
  const CommandTable& table = CommandTable::Get();
  const CommandSpec* spec = table.Find(argv[0]);
  std::optional<int> sub_arity;
  if (spec != nullptr && argv.size() >= 2 && table.HasSubcommands(*spec)) {
    sub_arity = table.SubcommandArity(*spec, argv[1]);
    if (!sub_arity) spec = nullptr;
  }
  if (spec == nullptr) return c.reply.Error("ERR Command '" + argv[0] + "' not found");
  int arity = sub_arity ? *sub_arity : spec->arity;
  int n = static_cast<int>(argv.size());
  if ((arity > 0 && n != arity) || n < -arity) {
    return c.reply.Error(WrongArityError(AclCommandName(*spec, argv)));
  }
  AclCheckResult result = AclCheck(*user, *spec, argv);
  if (!result.ok()) return c.reply.Bulk(DryRunExplanation(result, *spec, argv));
  c.reply.Ok();
}

constexpr const char* kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users "
    "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration.";

void AclSave(CommandContext& c) {
  std::string path = c.server.config->GetString("aclfile");
  if (path.empty()) return c.reply.Error(kNoAclFile);
  Status s = c.server.acl.SaveFile(path);
  if (!s.ok()) {
    LOG(WARNING) << "ACL SAVE: " << s.message();
    return c.reply.Error(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
  }
  c.reply.Ok();
}

void AclLoad(CommandContext& c) {
  std::string path = c.server.config->GetString("aclfile");
  if (path.empty()) return c.reply.Error(kNoAclFile);
  std::vector<std::string> previous;
  for (const auto& user : c.server.acl.Users()) {
    if (user->name != "default") previous.push_back(user->name);
  }
  Status s = c.server.acl.LoadFile(path);
  if (!s.ok()) return c.reply.Error("ERR " + s.message());
  // Redis replaces every user object on load, which logs out their clients; `default` is
  // updated in place and its clients stay.
  DisconnectUsers(c.server, c.session, previous);
  c.reply.Ok();
}

void AclHelp(CommandContext& c) {
  static const std::string kHelp[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the "
      "command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Prints this help."};
  c.reply.SimpleLines(kHelp);
}

void AclCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "setuser") return AclSetUser(c);
  if (sub == "deluser") return AclDelUser(c);
  if (sub == "getuser") return AclGetUser(c);
  if (sub == "list" || sub == "users") return AclList(c, sub == "users");
  if (sub == "whoami") return c.reply.Bulk(SessionUser(c.server, c.session).name);
  if (sub == "cat") return AclCat(c);
  if (sub == "genpass") return AclGenPass(c);
  if (sub == "log") return AclLogCommand(c);
  if (sub == "dryrun") return AclDryRun(c);
  if (sub == "save") return AclSave(c);
  if (sub == "load") return AclLoad(c);
  AclHelp(c);
}

const std::vector<CommandSpec> kAclCommands = {
    {"acl", -2, kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0, AclCommand, "server",
     "A container for Access List Control commands.", "@slow", nullptr,
     "cat:-2:@slow deluser:-3:@admin@slow@dangerous dryrun:-4:@admin@slow@dangerous "
     "genpass:-2:@slow getuser:3:@admin@slow@dangerous list:2:@admin@slow@dangerous "
     "load:2:@admin@slow@dangerous log:-2:@admin@slow@dangerous save:2:@admin@slow@dangerous "
     "setuser:-3:@admin@slow@dangerous users:2:@admin@slow@dangerous whoami:2:@slow "
     "help:2:@slow"},
};

}  // namespace

const std::vector<CommandSpec>& AclCommands() {
  return kAclCommands;
}

}  // namespace basalt
