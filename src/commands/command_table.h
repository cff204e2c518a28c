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
#include "common/status.h"
#include "common/strutil.h"
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
  // Read-only for Redis (and COMMAND INFO) but may rewrite its key in place, as PFCOUNT stores
  // its cached cardinality: the dispatcher locks its keys like a write's.
  kCmdRewritesKey = 1 << 14,
  kCmdAllowBusy = 1 << 15,  // allowed while a script is busy; runs without the keyspace lock then
  kCmdOffload = 1 << 16,    // outside MULTI, runs on the offload thread (scripts), not the worker
  kCmdPubSub = 1 << 17,     // a Pub/Sub command (COMMAND INFO's "pubsub" flag)
  kCmdPubSubContext = 1 << 18,  // allowed while a RESP2 client is subscribed (SUBSCRIBE, PING, ...)
  // Shown by COMMAND INFO only, as Redis shows them: the command may block its client, or its
  // keys are found by parsing its arguments (a KeyFinder or an option such as STORE).
  kCmdBlocking = 1 << 19,
  kCmdMovableKeys = 1 << 20,
  // Shown to monitors before it runs rather than after (the EVAL family: a script's own calls
  // follow it), as Redis's evalCommand does.
  kCmdMonitorFirst = 1 << 21,
  // Redis's "may-replicate": no write flag, yet may lead to replicated effects (EVAL, PUBLISH,
  // PFCOUNT). Held by CLIENT PAUSE WRITE; refused to a monitoring client like reads and writes.
  // COMMAND INFO does not show it: Redis hides it on purpose.
  kCmdMayReplicate = 1 << 22,
  // Redis's "no_mandatory_keys": the keys are optional (EVAL with numkeys 0), so COMMAND GETKEYS
  // answers an empty list rather than an error when the arguments name none.
  kCmdNoMandatoryKeys = 1 << 23,
  // The reply is (un)subscribe confirmations only, which CLIENT REPLY OFF|SKIP does not silence
  // (Redis 7.2 sends pushes whatever the reply mode). Not shown by COMMAND INFO.
  kCmdPushReply = 1 << 24,
  // Waits on another server (MIGRATE): outside MULTI and scripts it runs on a read thread
  // (commands/offload.h), so that its worker's other clients do not wait with it.
  kCmdWaitsOnPeer = 1 << 25,
  // Shown by COMMAND INFO only, as Redis 7.2 shows it: refused while a replica loads its data
  // asynchronously, which Basalt never does.
  kCmdNoAsyncLoading = 1 << 26,
};

// The flags COMMAND INFO shows, with Redis's names, in its order.
struct CommandFlagName {
  uint32_t bit;
  const char* name;
};
const std::vector<CommandFlagName>& CommandFlagNames();

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
  // subcommand table ("encoding:3 freq:3 help:2"). A subcommand whose ACL categories differ
  // from the container's lists them after a second colon: "get:-3:@admin@slow@dangerous"; one
  // whose flags differ from what SubcommandSpec::flags derives lists them all, by COMMAND
  // INFO's names, after a third: "reset:-2:@admin@slow@dangerous:admin,noscript,stale".
  const char* subcommands = "";
  // For a command that needs the exclusive keyspace lock only with some arguments (SORT with
  // BY/GET patterns): true when this call does. kCmdExclusive makes every call exclusive.
  bool (*exclusive_when)(const std::vector<std::string>& argv) = nullptr;
};

// Whether this call holds the exclusive keyspace lock (kCmdExclusive or exclusive_when).
inline bool RunsExclusive(const CommandSpec& spec, const std::vector<std::string>& argv) {
  return (spec.flags & kCmdExclusive) || (spec.exclusive_when && spec.exclusive_when(argv));
}

struct SubcommandSpec {
  std::string name;  // lower case, without the container's name
  int arity;
  const char* acl_categories;  // points into the row; the container's when not given
  size_t acl_categories_len;
  // The flags COMMAND INFO shows. Unless the row lists them: the container's, with admin and
  // write as the categories say, and for HELP Redis's loading and stale only.
  uint32_t flags = 0;
  size_t stat_slot = 0;  // its CommandStats slot (CommandTable::StatSlotOf)
};

class CommandTable {
 public:
  static const CommandTable& Get();
  // Case-insensitive lookup; nullptr if unknown.
  const CommandSpec* Find(std::string_view name) const;
  const std::vector<const CommandSpec*>& all() const { return all_; }
  // Index of a spec in all(), for per-command counters (every command counts itself: no scan).
  size_t IndexOf(const CommandSpec* spec) const;
  // The argument indexes that are keys, per the spec (empty when arity does not allow them).
  static std::vector<size_t> KeyIndexes(const CommandSpec& spec,
                                        const std::vector<std::string>& argv);
  // Calls fn(index) for each index KeyIndexes() lists, in its order, building no list unless
  // the spec has a key finder.
  template <typename Fn>
  static void ForEachKeyIndex(const CommandSpec& spec, const std::vector<std::string>& argv,
                              Fn&& fn) {
    if (spec.key_finder != nullptr) {
      for (size_t i : spec.key_finder(argv)) fn(i);
      return;
    }
    if (spec.first_key <= 0) return;
    int argc = static_cast<int>(argv.size());
    int last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
    int step = spec.key_step > 0 ? spec.key_step : 1;
    for (int i = spec.first_key; i <= last && i < argc; i += step) fn(static_cast<size_t>(i));
  }
  // A container command's subcommand arity; nullopt if `sub` is not one of its subcommands.
  std::optional<int> SubcommandArity(const CommandSpec& spec, std::string_view sub) const;
  bool HasSubcommands(const CommandSpec& spec) const { return spec.subcommands[0] != '\0'; }
  const std::vector<SubcommandSpec>& Subcommands(const CommandSpec& spec) const;
  // The subcommand argv[1] names, or nullptr (no container, no argument, unknown subcommand).
  const SubcommandSpec* FindSubcommand(const CommandSpec& spec,
                                       const std::vector<std::string>& argv) const;
  // The flags this call is judged by: a container's own, with the shown ones replaced by its
  // subcommand's when argv names one.
  uint32_t FlagsOf(const CommandSpec& spec, const std::vector<std::string>& argv) const;

  // Statistics slots (stats/command_stats.h): each command of all() at its IndexOf(), then each
  // subcommand of a container command.
  size_t StatSlotCount() const { return stat_names_.size(); }
  // This call's slot: its subcommand's for a container command, else its command's.
  size_t StatSlotOf(const CommandSpec& spec, const std::vector<std::string>& argv) const;
  // "get", "client|list": the name INFO commandstats and latencystats print.
  const std::string& StatSlotName(size_t slot) const { return stat_names_[slot]; }

  // rename-command, applied at start-up before any client connects: the command answers to
  // `new_name` only, or to nothing when `new_name` is empty. COMMAND lists what can be called;
  // ACL rules keep naming commands by their original names, as in Redis.
  static Status Rename(std::string_view name, std::string_view new_name);
  // The commands a client can call (COMMAND, COMMAND COUNT): all() minus disabled ones.
  const std::vector<const CommandSpec*>& callable() const { return callable_; }
  // Lookup by original name, whatever rename-command did (ACL rules, ACL DRYRUN).
  const CommandSpec* FindOriginal(std::string_view name) const;

 private:
  CommandTable();
  static CommandTable& Mutable();
  std::vector<const CommandSpec*> all_;
  // Position in all_ by spec address: open addressing, a power of two at least four times the
  // specs, so that a lookup is a multiply and a slot or two of one array.
  struct IndexSlot {
    const CommandSpec* spec = nullptr;
    size_t index = 0;
  };
  static size_t SlotOf(const CommandSpec* spec, size_t mask) {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(spec) * 0x9E3779B97F4A7C15ull) >> 32) &
           mask;
  }
  std::vector<IndexSlot> index_slots_;
  std::vector<const CommandSpec*> callable_;
  // Found by lowercased view: looking a command up builds no string.
  using NameMap =
      std::unordered_map<std::string, const CommandSpec*, StringViewHash, std::equal_to<>>;
  NameMap by_name_;                                        // current names
  NameMap by_original_;                                    // names in the rows
  std::unordered_map<std::string, int> subcommand_arity_;  // "parent|sub" -> arity
  std::unordered_map<const CommandSpec*, std::vector<SubcommandSpec>> subcommands_;
  std::vector<std::string> stat_names_;
};

// Each family file defines one of these.
const std::vector<CommandSpec>& StringCommands();
const std::vector<CommandSpec>& KeyCommands();
const std::vector<CommandSpec>& DumpCommands();
const std::vector<CommandSpec>& MigrateCommands();
const std::vector<CommandSpec>& ServerCommands();
const std::vector<CommandSpec>& ConnectionCommands();
const std::vector<CommandSpec>& TransactionCommands();
const std::vector<CommandSpec>& IntrospectionCommands();
const std::vector<CommandSpec>& HashCommands();
const std::vector<CommandSpec>& SetCommands();
const std::vector<CommandSpec>& ListCommands();
const std::vector<CommandSpec>& ZsetCommands();
const std::vector<CommandSpec>& StreamCommands();
const std::vector<CommandSpec>& BlockingListCommands();
const std::vector<CommandSpec>& BitmapCommands();
const std::vector<CommandSpec>& HllCommands();
const std::vector<CommandSpec>& GeoCommands();
const std::vector<CommandSpec>& SortCommands();
// Defined by src/scripting/ (EVAL, SCRIPT, ...), which sits above this folder: the table only
// names it.
const std::vector<CommandSpec>& ScriptingCommands();
const std::vector<CommandSpec>& FunctionCommands();  // FUNCTION, FCALL: src/scripting/ too
const std::vector<CommandSpec>& ImportCommands();    // IMPORT RDB: src/scripting/ too
const std::vector<CommandSpec>& PubSubCommands();
const std::vector<CommandSpec>& AclCommands();
const std::vector<CommandSpec>& ReplicationCommands();
const std::vector<CommandSpec>& MemoryCommands();
const std::vector<CommandSpec>& LatencyCommands();
const std::vector<CommandSpec>& DebugCommands();
const std::vector<CommandSpec>& ClusterCommands();

// Shared reply helpers for handlers.
inline std::string WrongArityError(std::string_view name) {
  return "ERR wrong number of arguments for '" + std::string(name) + "' command";
}
constexpr const char* kSyntaxError = "ERR syntax error";
constexpr const char* kNotIntegerError = "ERR value is not an integer or out of range";
constexpr const char* kNotFloatError = "ERR value is not a valid float";

}  // namespace basalt
