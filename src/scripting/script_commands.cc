// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL/HELP.
//
// The EVAL family is kCmdExclusive (a script is one unit of work that nothing interleaves with,
// committed as one batch by the dispatcher) and kCmdOffload (outside MULTI it runs on the
// offload thread, so that the worker stays free to answer BUSY). SCRIPT KILL may run while a
// script is busy, without the keyspace lock (the dispatcher's AllowedWhileBusy).
#include "commands/command_util.h"
#include "common/strutil.h"
#include "scripting/scripting.h"

namespace basalt {

namespace {

constexpr const char* kNoScriptError = "NOSCRIPT No matching script. Please use EVAL.";

// argv[2] is numkeys; the keys follow it.
std::vector<size_t> EvalKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> out;
  if (argv.size() < 3) return out;
  auto n = ParseInt64(argv[2]);
  if (!n || *n < 0 || *n > static_cast<int64_t>(argv.size()) - 3) return out;
  for (int64_t i = 0; i < *n; i++) out.push_back(static_cast<size_t>(3 + i));
  return out;
}

bool ParseNumKeys(CommandContext& c, size_t* numkeys) {
  auto n = ParseInt64(c.arg(2));
  if (!n) {
    c.reply.Error(kNotIntegerError);
    return false;
  }
  if (*n < 0) {
    c.reply.Error("ERR Number of keys can't be negative");
    return false;
  }
  if (*n > static_cast<int64_t>(c.argc()) - 3) {
    c.reply.Error("ERR Number of keys can't be greater than number of args");
    return false;
  }
  *numkeys = static_cast<size_t>(*n);
  return true;
}

void EvalGeneric(CommandContext& c, bool by_sha, bool read_only) {
  size_t numkeys;
  if (!ParseNumKeys(c, &numkeys)) return;
  Scripting& scripting = *c.server.scripting;
  std::string sha;
  ScriptInfo info;
  if (by_sha) {
    sha = ToLower(c.arg(1));
    if (sha.size() != 40 || !scripting.Lookup(sha, &info)) return c.reply.Error(kNoScriptError);
  } else {
    auto loaded = scripting.Load(c.ctx, c.arg(1));
    if (ReplyIfError(c, loaded.status())) return;
    sha = *loaded;
    if (!scripting.Lookup(sha, &info)) return c.reply.Error(kNoScriptError);
  }
  scripting.Run(c, sha, info, read_only, numkeys);
}

void EvalCommand(CommandContext& c) {
  EvalGeneric(c, false, false);
}
void EvalShaCommand(CommandContext& c) {
  EvalGeneric(c, true, false);
}
void EvalRoCommand(CommandContext& c) {
  EvalGeneric(c, false, true);
}
void EvalShaRoCommand(CommandContext& c) {
  EvalGeneric(c, true, true);
}

void ScriptCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  Scripting& scripting = *c.server.scripting;
  // Redis 7 replicates scripts by their effects: a replica needs no script cache.
  ReplicateNothing(c);
  if (sub == "load") {
    auto loaded = scripting.Load(c.ctx, c.arg(2));
    if (ReplyIfError(c, loaded.status())) return;
    return c.reply.Bulk(*loaded);
  }
  if (sub == "exists") {
    c.reply.Array(c.argc() - 2);
    for (size_t i = 2; i < c.argc(); i++) c.reply.Integer(scripting.Exists(ToLower(c.arg(i))));
    return;
  }
  if (sub == "flush") {
    if (c.argc() > 3 || (c.argc() == 3 && !EqualsIgnoreCase(c.arg(2), "sync") &&
                         !EqualsIgnoreCase(c.arg(2), "async"))) {
      return c.reply.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    scripting.Flush(c.ctx);
    return c.reply.Ok();
  }
  if (sub == "kill") return ReplyToKill(c, false);
  static const std::string kHelp[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Print this help."};
  c.reply.SimpleLines(kHelp);
}

constexpr uint32_t kEval = kCmdNoScript | kCmdStale | kCmdExclusive | kCmdOffload |
                           kCmdMovableKeys | kCmdMonitorFirst | kCmdNoMandatoryKeys;

const std::vector<CommandSpec> kScriptingCommands = {
    {"eval", -3, kEval | kCmdMayReplicate, 0, 0, 0, EvalCommand, "scripting",
     "Executes a server-side Lua script.", "@slow @scripting", EvalKeys},
    {"evalsha", -3, kEval | kCmdMayReplicate, 0, 0, 0, EvalShaCommand, "scripting",
     "Executes a server-side Lua script by SHA1 digest.", "@slow @scripting", EvalKeys},
    {"eval_ro", -3, kEval | kCmdReadOnly, 0, 0, 0, EvalRoCommand, "scripting",
     "Executes a read-only server-side Lua script.", "@slow @scripting", EvalKeys},
    {"evalsha_ro", -3, kEval | kCmdReadOnly, 0, 0, 0, EvalShaRoCommand, "scripting",
     "Executes a read-only server-side Lua script by SHA1 digest.", "@slow @scripting", EvalKeys},
    {"script", -2, kCmdNoScript | kCmdAllowBusy, 0, 0, 0, ScriptCommand, "scripting",
     "A container for Lua scripts management commands.", "@slow", nullptr,
     "load:3:@slow@scripting:noscript,stale exists:-3:@slow@scripting:noscript "
     "flush:-2:@slow@scripting:noscript "
     "kill:2:@slow@scripting help:2:@slow@scripting"},
};

}  // namespace

const std::vector<CommandSpec>& ScriptingCommands() {
  return kScriptingCommands;
}

}  // namespace basalt
