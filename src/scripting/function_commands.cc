// FCALL, FCALL_RO and FUNCTION LOAD/DELETE/FLUSH/LIST/STATS/KILL/DUMP/RESTORE/HELP.
//
// FCALL runs as EVAL does (kCmdExclusive, kCmdOffload: one unit of work on the offload thread,
// BUSY and FUNCTION KILL while it runs long). The FUNCTION subcommands that change libraries
// hold the exclusive keyspace lock too, so that no function runs while its library changes,
// and they are writes: a read-only replica refuses them. FUNCTION KILL and STATS may run while
// a script is busy (the dispatcher's AllowedWhileBusy).
#include "commands/command_util.h"
#include "common/strutil.h"
#include "scripting/scripting.h"

namespace basalt {

namespace {

// argv[2] is numkeys; the keys follow it (as for EVAL).
std::vector<size_t> FcallKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> out;
  if (argv.size() < 3) return out;
  auto n = ParseInt64(argv[2]);
  if (!n || *n < 0 || *n > static_cast<int64_t>(argv.size()) - 3) return out;
  for (int64_t i = 0; i < *n; i++) out.push_back(static_cast<size_t>(3 + i));
  return out;
}

void FcallCommand(CommandContext& c) {
  c.server.scripting->functions().Call(c, false);
}

void FcallRoCommand(CommandContext& c) {
  c.server.scripting->functions().Call(c, true);
}

bool ChangesLibraries(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return false;
  for (const char* sub : {"load", "delete", "flush", "restore"}) {
    if (EqualsIgnoreCase(argv[1], sub)) return true;
  }
  return false;
}

// The subcommands that change libraries are writes, which a read-only replica refuses (the
// container row cannot carry the write flag for them alone).
bool RefusedAsReplica(CommandContext& c) {
  if (c.session.from_master || c.server.replication == nullptr ||
      !c.server.replication->rejects_writes()) {
    return false;
  }
  c.reply.Error("READONLY You can't write against a read only replica.");
  return true;
}

void SubcommandSyntaxError(CommandContext& c) {
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try FUNCTION HELP.");
}

// FUNCTION LOAD and RESTORE are denyoom in Redis; FUNCTION's row flags its container only, so
// the two refuse past maxmemory themselves (memory_limit.h).
bool RefusedOnOom(CommandContext& c) {
  if (!c.server.memory_limit.Exceeded(*c.server.config)) return false;
  c.reply.Error(kOomError);
  return true;
}

void FunctionLoad(CommandContext& c) {
  if (RefusedOnOom(c)) return;
  bool replace = false;
  size_t pos = 2;
  for (; pos < c.argc() - 1; pos++) {
    if (!EqualsIgnoreCase(c.arg(pos), "replace"))
      return c.reply.Error("ERR Unknown option given: " + c.arg(pos));
    replace = true;
  }
  auto loaded = c.server.scripting->functions().Load(c.ctx, c.arg(pos), replace);
  if (ReplyIfError(c, loaded.status())) return;
  ReplicateAsSent(c);
  c.reply.Bulk(*loaded);
}

void FunctionFlush(CommandContext& c) {
  if (c.argc() > 3) return SubcommandSyntaxError(c);
  if (c.argc() == 3 && !EqualsIgnoreCase(c.arg(2), "sync") && !EqualsIgnoreCase(c.arg(2), "async"))
    return c.reply.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  c.server.scripting->functions().Flush(c.ctx);
  ReplicateAsSent(c);
  c.reply.Ok();
}

void FunctionList(CommandContext& c) {
  bool with_code = false;
  std::optional<std::string> pattern;
  for (size_t i = 2; i < c.argc(); i++) {
    if (!with_code && EqualsIgnoreCase(c.arg(i), "withcode")) {
      with_code = true;
    } else if (!pattern && EqualsIgnoreCase(c.arg(i), "libraryname")) {
      if (i + 1 >= c.argc()) return c.reply.Error("ERR library name argument was not given");
      pattern = c.arg(++i);
    } else {
      return c.reply.Error("ERR Unknown argument " + c.arg(i));
    }
  }
  c.server.scripting->functions().ReplyList(c, pattern, with_code);
}

void FunctionRestore(CommandContext& c) {
  if (c.argc() > 4) return SubcommandSyntaxError(c);
  if (RefusedOnOom(c)) return;
  RestorePolicy policy = RestorePolicy::kAppend;
  if (c.argc() == 4) {
    if (EqualsIgnoreCase(c.arg(3), "append")) {
      policy = RestorePolicy::kAppend;
    } else if (EqualsIgnoreCase(c.arg(3), "replace")) {
      policy = RestorePolicy::kReplace;
    } else if (EqualsIgnoreCase(c.arg(3), "flush")) {
      policy = RestorePolicy::kFlush;
    } else {
      return c.reply.Error(
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
    }
  }
  Status s = c.server.scripting->functions().Restore(c.ctx, c.arg(2), policy);
  if (ReplyIfError(c, s)) return;
  ReplicateAsSent(c);
  c.reply.Ok();
}

void FunctionHelp(CommandContext& c) {
  static const std::string kHelp[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored using "
      "FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Print this help."};
  c.reply.SimpleLines(kHelp);
}

void FunctionCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  Functions& functions = c.server.scripting->functions();
  if (ChangesLibraries(c.argv) && RefusedAsReplica(c)) return;
  if (sub == "load") return FunctionLoad(c);
  if (sub == "delete") {
    Status s = functions.Delete(c.ctx, c.arg(2));
    if (ReplyIfError(c, s)) return;
    ReplicateAsSent(c);
    return c.reply.Ok();
  }
  if (sub == "flush") return FunctionFlush(c);
  if (sub == "list") return FunctionList(c);
  if (sub == "stats") return functions.ReplyStats(c);
  if (sub == "kill") return ReplyToKill(c, true);
  if (sub == "dump") return c.reply.Bulk(functions.Dump());
  if (sub == "restore") return FunctionRestore(c);
  FunctionHelp(c);
}

constexpr uint32_t kFcall = kCmdNoScript | kCmdStale | kCmdExclusive | kCmdOffload |
                            kCmdMovableKeys | kCmdMonitorFirst | kCmdNoMandatoryKeys;

const std::vector<CommandSpec> kFunctionCommands = {
    {"fcall", -3, kFcall | kCmdMayReplicate, 0, 0, 0, FcallCommand, "scripting",
     "Invokes a function.", "@slow @scripting", FcallKeys},
    {"fcall_ro", -3, kFcall | kCmdReadOnly, 0, 0, 0, FcallRoCommand, "scripting",
     "Invokes a read-only function.", "@slow @scripting", FcallKeys},
    {"function", -2, kCmdNoScript | kCmdAllowBusy, 0, 0, 0, FunctionCommand, "scripting",
     "A container for function commands.", "@slow", nullptr,
     "load:-3:@write@slow@scripting:denyoom,noscript,write "
     "delete:3:@write@slow@scripting:noscript,write "
     "flush:-2:@write@slow@scripting:noscript,write list:-2:@slow@scripting:noscript "
     "stats:2:@slow@scripting "
     "kill:2:@slow@scripting dump:2:@slow@scripting:noscript "
     "restore:-3:@write@slow@scripting:denyoom,noscript,write "
     "help:2:@slow@scripting",
     ChangesLibraries},
};

}  // namespace

const std::vector<CommandSpec>& FunctionCommands() {
  return kFunctionCommands;
}

}  // namespace basalt
