// The command table: every command Basalt knows, declared once.
//
// A CommandSpec names the command, its arity (Redis convention: N exact, -N at least N), its
// flags, its key positions and the handler. The dispatcher checks arity, authentication, MULTI
// queueing and locking from this table alone; COMMAND INFO/COUNT/DOCS/GETKEYS read it too. Each
// command family (strings, keys, server, ...) declares its rows in its own file and the table
// gathers them here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/reply.h"
#include "commands/session.h"
#include "types/keyspace.h"

namespace basalt {

struct ServerState;

enum CommandFlag : uint32_t {
  kCmdWrite = 1 << 0,        // may modify the data set
  kCmdReadOnly = 1 << 1,     // reads the data set only
  kCmdAdmin = 1 << 2,        // administrative (CONFIG, SHUTDOWN, ...)
  kCmdNoScript = 1 << 3,     // not allowed from scripts
  kCmdFast = 1 << 4,         // O(1) or O(log N)
  kCmdNoAuth = 1 << 5,       // allowed before AUTH
  kCmdNoMulti = 1 << 6,      // refused inside MULTI (SHUTDOWN, ...)
  kCmdTxControl = 1 << 12,   // runs at once inside MULTI instead of queueing (EXEC, WATCH, ...)
  kCmdSelfCommit = 1 << 13,  // commits its own batch (FLUSHDB, SWAPDB): EXEC commits before it
  kCmdExclusive = 1 << 7,    // runs alone: holds the keyspace's exclusive lock
  kCmdLoading = 1 << 8,      // allowed while loading
  kCmdStale = 1 << 9,        // allowed on a stale replica
  kCmdDenyOom = 1 << 10,     // may grow memory/disk use
  kCmdSkipSlowlog = 1 << 11,
};

struct CommandContext {
  ServerState& server;
  Session& session;
  std::vector<std::string>& argv;
  Reply& reply;
  Context& ctx;  // the unit of work: this command's own, or the enclosing EXEC's
  bool in_exec;

  const std::string& arg(size_t i) const { return argv[i]; }
  size_t argc() const { return argv.size(); }
  int db() const { return session.db; }
};

using CommandHandler = void (*)(CommandContext& c);
// Returns the argument indexes that are keys, for commands whose keys a range cannot express.
using KeyFinder = std::vector<size_t> (*)(const std::vector<std::string>& argv);

struct CommandSpec {
  const char* name;  // lower case
  int arity;
  uint32_t flags;
  int first_key;  // 0 = no keys
  int last_key;   // negative: counted from the end (-1 = last argument)
  int key_step;
  CommandHandler handler;
  const char* group;                // Redis's command group: "string", "generic", "server", ...
  const char* summary;              // one line for COMMAND DOCS
  const char* acl_categories = "";  // e.g. "@write @string @slow"
  KeyFinder key_finder = nullptr;
  // Container commands: "name:arity ..." of each subcommand, checked at dispatch like Redis's
  // subcommand table ("encoding:3 freq:3 help:2").
  const char* subcommands = "";
};

class CommandTable {
 public:
  static const CommandTable& Get();
  // Case-insensitive lookup; nullptr if unknown.
  const CommandSpec* Find(std::string_view name) const;
  const std::vector<const CommandSpec*>& all() const { return all_; }
  // Index of a spec in all(), for per-command counters.
  size_t IndexOf(const CommandSpec* spec) const;
  // The argument indexes that are keys, per the spec (empty when arity does not allow them).
  static std::vector<size_t> KeyIndexes(const CommandSpec& spec,
                                        const std::vector<std::string>& argv);
  // A container command's subcommand arity; nullopt if `sub` is not one of its subcommands.
  std::optional<int> SubcommandArity(const CommandSpec& spec, std::string_view sub) const;
  bool HasSubcommands(const CommandSpec& spec) const { return spec.subcommands[0] != '\0'; }

 private:
  CommandTable();
  std::vector<const CommandSpec*> all_;
  std::unordered_map<std::string, int> subcommand_arity_;  // "parent|sub" -> arity
};

// Each family file defines one of these.
const std::vector<CommandSpec>& StringCommands();
const std::vector<CommandSpec>& KeyCommands();
const std::vector<CommandSpec>& ServerCommands();
const std::vector<CommandSpec>& ConnectionCommands();
const std::vector<CommandSpec>& TransactionCommands();
const std::vector<CommandSpec>& IntrospectionCommands();
const std::vector<CommandSpec>& HashCommands();
const std::vector<CommandSpec>& SetCommands();
const std::vector<CommandSpec>& ListCommands();
const std::vector<CommandSpec>& ZsetCommands();
const std::vector<CommandSpec>& BlockingListCommands();

// Shared reply helpers for handlers.
inline std::string WrongArityError(std::string_view name) {
  return "ERR wrong number of arguments for '" + std::string(name) + "' command";
}
constexpr const char* kSyntaxError = "ERR syntax error";
constexpr const char* kNotIntegerError = "ERR value is not an integer or out of range";
constexpr const char* kNotFloatError = "ERR value is not a valid float";

}  // namespace basalt
