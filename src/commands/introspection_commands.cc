// COMMAND and its subcommands, answered from the command table.
#include "commands/command_util.h"

namespace basalt {

namespace {

void ReplyFlags(Reply& r, uint32_t flags) {
  static const struct {
    uint32_t bit;
    const char* name;
  } kNames[] = {
      {kCmdWrite, "write"},    {kCmdReadOnly, "readonly"},        {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},    {kCmdNoScript, "noscript"},        {kCmdLoading, "loading"},
      {kCmdStale, "stale"},    {kCmdSkipSlowlog, "skip_slowlog"}, {kCmdFast, "fast"},
      {kCmdNoAuth, "no_auth"}, {kCmdNoMulti, "no_multi"}};
  size_t n = 0;
  for (const auto& f : kNames) n += (flags & f.bit) ? 1 : 0;
  r.Set(n);
  for (const auto& f : kNames) {
    if (flags & f.bit) r.Simple(f.name);
  }
}

std::vector<std::string> SplitWords(const char* text) {
  std::vector<std::string> out;
  std::string word;
  for (const char* p = text; *p; p++) {
    if (*p == ' ') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(*p);
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

void ReplyCommandInfo(Reply& r, const CommandSpec& spec) {
  r.Array(10);
  r.Bulk(spec.name);
  r.Integer(spec.arity);
  ReplyFlags(r, spec.flags);
  r.Integer(spec.first_key);
  r.Integer(spec.last_key);
  r.Integer(spec.key_step);
  auto categories = SplitWords(spec.acl_categories);
  r.Set(categories.size());
  for (const auto& cat : categories) r.Simple(cat);
  r.Set(0);    // tips
  r.Array(0);  // key specifications
  r.Array(0);  // subcommands
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

void CommandCommand(CommandContext& c) {
  const CommandTable& table = CommandTable::Get();
  if (c.argc() == 1) {
    c.reply.Array(table.all().size());
    for (const auto* spec : table.all()) ReplyCommandInfo(c.reply, *spec);
    return;
  }
  std::string sub = ToLower(c.arg(1));
  if (sub == "count" && c.argc() == 2)
    return c.reply.Integer(static_cast<int64_t>(table.all().size()));
  if (sub == "list" && c.argc() == 2) {
    c.reply.Array(table.all().size());
    for (const auto* spec : table.all()) c.reply.Bulk(spec->name);
    return;
  }
  if (sub == "info") {
    if (c.argc() == 2) {
      c.reply.Array(table.all().size());
      for (const auto* spec : table.all()) ReplyCommandInfo(c.reply, *spec);
      return;
    }
    c.reply.Array(c.argc() - 2);
    for (size_t j = 2; j < c.argc(); j++) {
      const CommandSpec* spec = table.Find(c.arg(j));
      if (spec == nullptr) {
        c.reply.Null();
      } else {
        ReplyCommandInfo(c.reply, *spec);
      }
    }
    return;
  }
  if (sub == "docs") {
    std::vector<const CommandSpec*> specs;
    if (c.argc() == 2) {
      specs = table.all();
    } else {
      for (size_t j = 2; j < c.argc(); j++) {
        if (const CommandSpec* spec = table.Find(c.arg(j))) specs.push_back(spec);
      }
    }
    c.reply.Map(specs.size());
    for (const auto* spec : specs) ReplyCommandDocs(c.reply, *spec);
    return;
  }
  if (sub == "getkeys" && c.argc() >= 3) {
    std::vector<std::string> argv(c.argv.begin() + 2, c.argv.end());
    const CommandSpec* spec = table.Find(argv[0]);
    if (spec == nullptr) return c.reply.Error("ERR Invalid command specified");
    int n = static_cast<int>(argv.size());
    if ((spec->arity > 0 && n != spec->arity) || n < -spec->arity)
      return c.reply.Error("ERR Invalid number of arguments specified for command");
    auto indexes = CommandTable::KeyIndexes(*spec, argv);
    if (indexes.empty()) return c.reply.Error("ERR The command has no key arguments");
    c.reply.Array(indexes.size());
    for (size_t i : indexes) c.reply.Bulk(argv[i]);
    return;
  }
  if (sub == "help" && c.argc() == 2) {
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
        "HELP",
        "    Print this help."};
    c.reply.Array(std::size(kHelp));
    for (const auto& line : kHelp) c.reply.Simple(line);
    return;
  }
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try COMMAND HELP.");
}

const std::vector<CommandSpec> kIntrospectionCommands = {
    {"command", -1, kCmdLoading | kCmdStale, 0, 0, 0, CommandCommand, "server",
     "Returns detailed information about all commands.", "@slow @connection", nullptr,
     "count:2 list:-2 info:-2 docs:-2 getkeys:-4 help:2"},
};

}  // namespace

const std::vector<CommandSpec>& IntrospectionCommands() {
  return kIntrospectionCommands;
}

}  // namespace basalt
