// COMMAND and its subcommands, answered from the command table. Commands disabled by
// rename-command are not listed; renamed ones are found under their new name and, as in Redis,
// described under their original one.
#include <algorithm>

#include "commands/acl_check.h"
#include "commands/command_util.h"
#include "commands/key_specs.h"
#include "security/acl_catalog.h"

namespace basalt {

namespace {

void ReplyFlags(Reply& r, uint32_t flags) {
  const std::vector<CommandFlagName>& names = CommandFlagNames();
  size_t n = 0;
  for (const CommandFlagName& f : names) n += (flags & f.bit) ? 1 : 0;
  r.Set(n);
  for (const CommandFlagName& f : names) {
    if (flags & f.bit) r.Simple(f.name);
  }
}

void ReplyCategories(Reply& r, std::string_view text) {
  uint64_t bits = 0;
  ParseAclCategories(text, &bits);
  const auto& names = AclCategoryNames();
  r.Set(static_cast<size_t>(__builtin_popcountll(bits)));
  for (size_t i = 0; i < names.size(); i++) {
    if (bits & (1ull << i)) r.Simple("@" + names[i]);
  }
}

// A subcommand's entry, "config|get".
void ReplySubcommandInfo(Reply& r, const CommandSpec& spec, const SubcommandSpec& sub) {
  std::string_view categories(sub.acl_categories, sub.acl_categories_len);
  std::string full_name = std::string(spec.name) + "|" + sub.name;
  r.Array(10);
  r.Bulk(full_name);
  r.Integer(sub.arity);
  ReplyFlags(r, sub.flags);
  // The container's key positions are those of its subcommands that take keys.
  const std::vector<KeySpec>& specs = KeySpecsOf(full_name);
  r.Integer(specs.empty() ? 0 : spec.first_key);
  r.Integer(specs.empty() ? 0 : spec.last_key);
  r.Integer(specs.empty() ? 0 : spec.key_step);
  ReplyCategories(r, categories);
  r.Set(0);
  ReplyKeySpecs(r, specs);
  r.Array(0);
}

void ReplyCommandInfo(Reply& r, const CommandSpec& spec) {
  const auto& subcommands = CommandTable::Get().Subcommands(spec);
  // A container that runs only through a subcommand (CONFIG, OBJECT; not COMMAND) has, as in
  // Redis, no flags or keys of its own: its subcommands' entries carry them.
  bool bare_container = !subcommands.empty() && spec.arity == -2;
  r.Array(10);
  r.Bulk(spec.name);
  r.Integer(spec.arity);
  ReplyFlags(r, bare_container ? 0 : spec.flags);
  r.Integer(bare_container ? 0 : spec.first_key);
  r.Integer(bare_container ? 0 : spec.last_key);
  r.Integer(bare_container ? 0 : spec.key_step);
  ReplyCategories(r, spec.acl_categories);
  r.Set(0);  // tips
  ReplyKeySpecs(r, KeySpecsOf(spec.name));
  r.Array(subcommands.size());
  for (const SubcommandSpec& sub : subcommands) ReplySubcommandInfo(r, spec, sub);
}

void ReplyCommandDocs(Reply& r, const CommandSpec& spec) {
  r.Bulk(spec.name);
  r.Map(3);
  r.Bulk("summary");
  r.Bulk(spec.summary);
  r.Bulk("since");
  r.Bulk("1.0.0");
  r.Bulk("group");
  r.Bulk(spec.group);
}

void ReplyAllCommandInfo(CommandContext& c) {
  const CommandTable& table = CommandTable::Get();
  c.reply.Array(table.callable().size());
  for (const auto* spec : table.callable()) ReplyCommandInfo(c.reply, *spec);
}

// COMMAND LIST [FILTERBY MODULE <name> | ACLCAT <category> | PATTERN <pattern>]. Like Redis 7,
// the list names subcommands too ("config|get"); no command belongs to a module, and an
// unknown category matches nothing.
void CommandList(CommandContext& c) {
  enum class Filter { kNone, kModule, kAclCat, kPattern } filter = Filter::kNone;
  std::string arg;
  for (size_t i = 2; i < c.argc(); i += 3) {
    if (!EqualsIgnoreCase(c.arg(i), "filterby") || c.argc() - 1 - i != 2) {
      return c.reply.Error(kSyntaxError);
    }
    std::string type = ToLower(c.arg(i + 1));
    if (type == "module") {
      filter = Filter::kModule;
    } else if (type == "aclcat") {
      filter = Filter::kAclCat;
    } else if (type == "pattern") {
      filter = Filter::kPattern;
    } else {
      return c.reply.Error(kSyntaxError);
    }
    arg = c.arg(i + 2);
  }
  const uint64_t category = filter == Filter::kAclCat ? AclCategoryByName(arg) : 0;
  auto listed = [&](const std::string& name, std::string_view categories) {
    switch (filter) {
      case Filter::kNone:
        return true;
      case Filter::kModule:
        return false;
      case Filter::kAclCat: {
        uint64_t bits = 0;
        ParseAclCategories(categories, &bits);
        return (bits & category) != 0;
      }
      case Filter::kPattern:
        return GlobMatch(arg, name, true);
    }
    return false;
  };
  const CommandTable& table = CommandTable::Get();
  std::vector<std::string> names;
  for (const auto* spec : table.callable()) {
    if (listed(spec->name, spec->acl_categories)) names.emplace_back(spec->name);
    for (const SubcommandSpec& s : table.Subcommands(*spec)) {
      std::string full = std::string(spec->name) + "|" + s.name;
      if (listed(full, std::string_view(s.acl_categories, s.acl_categories_len))) {
        names.push_back(std::move(full));
      }
    }
  }
  c.reply.Array(names.size());
  for (const auto& name : names) c.reply.Bulk(name);
}

void CommandInfo(CommandContext& c) {
  if (c.argc() == 2) return ReplyAllCommandInfo(c);
  c.reply.Array(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    // "container|subcommand" names one subcommand, as in Redis 7.
    const std::string& name = c.arg(j);
    const size_t bar = name.find('|');
    const CommandSpec* spec = CommandTable::Get().Find(name.substr(0, bar));
    const SubcommandSpec* sub = nullptr;
    if (spec != nullptr && bar != std::string::npos) {
      const std::string wanted = ToLower(name.substr(bar + 1));
      for (const SubcommandSpec& s : CommandTable::Get().Subcommands(*spec)) {
        if (wanted == s.name) sub = &s;
      }
    }
    if (spec == nullptr || (bar != std::string::npos && sub == nullptr)) {
      c.reply.Null();
    } else if (sub != nullptr) {
      ReplySubcommandInfo(c.reply, *spec, *sub);
    } else {
      ReplyCommandInfo(c.reply, *spec);
    }
  }
}

void CommandDocs(CommandContext& c) {
  const CommandTable& table = CommandTable::Get();
  std::vector<const CommandSpec*> specs;
  if (c.argc() == 2) {
    specs = table.callable();
  } else {
    for (size_t j = 2; j < c.argc(); j++) {
      if (const CommandSpec* spec = table.Find(c.arg(j))) specs.push_back(spec);
    }
  }
  c.reply.Map(specs.size());
  for (const auto* spec : specs) ReplyCommandDocs(c.reply, *spec);
}

// The key positions of the command COMMAND GETKEYS[ANDFLAGS] names (argv from its third
// argument on), or nullopt after replying Redis's error. The checks come in Redis's order: a
// command that never takes keys is refused before its arity is looked at.
std::optional<std::vector<size_t>> KeysOfNamedCommand(CommandContext& c,
                                                      const std::vector<std::string>& argv) {
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
  if (spec == nullptr) {
    c.reply.Error("ERR Invalid command specified");
    return std::nullopt;
  }
  // Shard channels (SPUBLISH) sit where keys would, but are no keys.
  const std::vector<KeySpec>& specs = KeySpecsOf(AclCommandName(*spec, argv));
  bool only_channels = !specs.empty() && std::all_of(specs.begin(), specs.end(), [](const auto& s) {
    return s.Has("not_key");
  });
  if ((spec->first_key <= 0 && spec->key_finder == nullptr) || only_channels) {
    c.reply.Error("ERR The command has no key arguments");
    return std::nullopt;
  }
  int n = static_cast<int>(argv.size());
  if ((spec->arity > 0 && n != spec->arity) || n < -spec->arity) {
    c.reply.Error("ERR Invalid number of arguments specified for command");
    return std::nullopt;
  }
  auto indexes = CommandTable::KeyIndexes(*spec, argv);
  if (indexes.empty() && !(spec->flags & kCmdNoMandatoryKeys)) {
    c.reply.Error("ERR Invalid arguments specified for command");
    return std::nullopt;
  }
  return indexes;
}

void CommandGetKeys(CommandContext& c) {
  std::vector<std::string> argv(c.argv.begin() + 2, c.argv.end());
  auto indexes = KeysOfNamedCommand(c, argv);
  if (!indexes) return;
  c.reply.Array(indexes->size());
  for (size_t i : *indexes) c.reply.Bulk(argv[i]);
}

// The flags Basalt derives from how a command uses its key (acl_check.h), for a key that no
// specification of Redis's describes.
std::vector<std::string> DerivedKeyFlags(uint8_t access) {
  switch (access) {
    case kAclKeyRead:
      return {"RO", "access"};
    case kAclKeyWrite:
      return {"OW", "update"};
    case kAclKeyReadWrite:
      return {"RW", "access", "update"};
    default:
      return {"RO"};
  }
}

// COMMAND GETKEYSANDFLAGS: each key with the flags of the Redis 7.2 key specification that
// locates it (key_specs.h). A key found only by the command's own parsing (SORT's STORE, a
// script's keys) takes the flags of the command's open-ended specification that matches how the
// command uses it, read-only or not.
void CommandGetKeysAndFlags(CommandContext& c) {
  std::vector<std::string> argv(c.argv.begin() + 2, c.argv.end());
  auto indexes = KeysOfNamedCommand(c, argv);
  if (!indexes) return;
  const CommandSpec& spec = *CommandTable::Get().Find(argv[0]);
  const std::vector<KeySpec>& specs = KeySpecsOf(AclCommandName(spec, argv));
  auto located = LocateKeys(specs, argv);
  c.reply.Array(indexes->size());
  for (size_t nth = 0; nth < indexes->size(); nth++) {
    size_t position = (*indexes)[nth];
    const uint8_t access = AclKeyAccessOf(spec, argv, nth);
    const KeySpec* source = nullptr;
    for (const auto& [at, which] : located) {
      if (at == position) {
        source = &specs[which];
        break;
      }
    }
    for (size_t i = 0; source == nullptr && i < specs.size(); i++) {
      bool open_ended =
          specs[i].begin == KeySpec::Begin::kUnknown || specs[i].find == KeySpec::Find::kUnknown;
      if (open_ended && specs[i].Has("RO") == (access == kAclKeyRead)) source = &specs[i];
    }
    // Redis works out a "variable_flags" key's flags from the arguments (SET with or without
    // GET), as Basalt's derived access does.
    bool variable = source != nullptr && source->Has("variable_flags");
    std::vector<std::string> flags =
        source != nullptr && !variable ? source->flags : DerivedKeyFlags(access);
    c.reply.Array(2);
    c.reply.Bulk(argv[position]);
    c.reply.Set(flags.size());
    for (const std::string& flag : flags) c.reply.Simple(flag);
  }
}

void CommandHelp(CommandContext& c) {
  static const std::string kHelp[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Print this help."};
  c.reply.SimpleLines(kHelp);
}

void CommandCommand(CommandContext& c) {
  if (c.argc() == 1) return ReplyAllCommandInfo(c);
  std::string sub = ToLower(c.arg(1));
  if (sub == "count" && c.argc() == 2)
    return c.reply.Integer(static_cast<int64_t>(CommandTable::Get().callable().size()));
  if (sub == "list") return CommandList(c);
  if (sub == "info") return CommandInfo(c);
  if (sub == "docs") return CommandDocs(c);
  if (sub == "getkeys" && c.argc() >= 3) return CommandGetKeys(c);
  if (sub == "getkeysandflags") return CommandGetKeysAndFlags(c);
  if (sub == "help" && c.argc() == 2) return CommandHelp(c);
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try COMMAND HELP.");
}

const std::vector<CommandSpec> kIntrospectionCommands = {
    {"command", -1, kCmdLoading | kCmdStale, 0, 0, 0, CommandCommand, "server",
     "Returns detailed information about all commands.", "@slow @connection", nullptr,
     "count:2 list:-2 info:-2 docs:-2 getkeys:-4 getkeysandflags:-4 help:2"},
};

}  // namespace

const std::vector<CommandSpec>& IntrospectionCommands() {
  return kIntrospectionCommands;
}

}  // namespace basalt
