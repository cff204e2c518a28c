// Functions: the function libraries of FUNCTION LOAD / FCALL (Redis 7's functions), with their
// own interpreter, their registry and their persistence.
//
// A library is the code a client loaded (`#!lua name=<lib>` first line); running it once
// registers its functions (redis.register_function). The registry maps library names to their
// code and functions, and function names (case-insensitively, as Redis) to their library.
//
// Persistence and replicas: each library is one `propagate` entry, `function:<name>` -> code,
// written or deleted in the batch of the command that changed it (LOAD, DELETE, FLUSH,
// RESTORE), deletions first. At start-up LoadPersisted() runs every library again; a replica's
// applier hands each entry to OnReplicatedPut/OnReplicatedDelete, so a replica holds the
// master's libraries and a promoted replica serves FCALL.
//
// Threading: the registry has its own mutex. The commands that change libraries hold the
// keyspace's exclusive lock, as FCALL does, so no function runs while its library changes.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command_table.h"
#include "common/status.h"
#include "scripting/lua_engine.h"

namespace basalt {

enum class RestorePolicy { kFlush, kAppend, kReplace };

struct FunctionLibrary {
  std::string name;
  std::string code;  // as loaded, shebang line included
  std::vector<RegisteredFunction> functions;
};

class Functions {
 public:
  explicit Functions(ServerState* server) : server_(server), engine_(server, true) {}

  static constexpr std::string_view kPersistPrefix = "function:";

  // FUNCTION LOAD [REPLACE]: returns the library's name, or the error reply (nothing changed).
  StatusOr<std::string> Load(Context& ctx, const std::string& code, bool replace);
  Status Delete(Context& ctx, const std::string& name);
  void Flush(Context& ctx);
  // FUNCTION DUMP's payload: each library as RDB_OPCODE_FUNCTION2 and its code, then the footer.
  std::string Dump();
  // FUNCTION RESTORE: all or nothing.
  Status Restore(Context& ctx, std::string_view payload, RestorePolicy policy);
  // An RDB file's libraries (their code), added as FUNCTION RESTORE adds them with `policy`.
  Status RestoreLibraries(Context& ctx, const std::vector<std::string>& codes,
                          RestorePolicy policy = RestorePolicy::kAppend);

  // FCALL / FCALL_RO: runs the function argv[1] and replies.
  void Call(CommandContext& c, bool read_only);
  // Whether FCALL of `name` may write: false only for a registered function with the
  // no-writes flag (CLIENT PAUSE WRITE lets such calls through, as Redis derives FCALL's flags
  // from the function's).
  bool MayWrite(std::string_view name);
  // FUNCTION LIST and FUNCTION STATS replies.
  void ReplyList(CommandContext& c, const std::optional<std::string>& pattern, bool with_code);
  void ReplyStats(CommandContext& c);

  // Start-up, and a replica's full sync (which replaced the persisted libraries).
  Status LoadPersisted();
  Status ReloadPersisted();
  // A replica's applier: a `function:` entry was put or deleted (`name` without the prefix).
  void OnReplicatedPut(std::string_view name, std::string_view code);
  void OnReplicatedDelete(std::string_view name);

 private:
  // Parses the metadata and runs the library's code; the registry is not touched.
  StatusOr<FunctionLibrary> Compile(const std::string& code, int64_t timeout_ms);
  // Reads and compiles every library of a verified DUMP payload's body; on error none stays.
  StatusOr<std::vector<FunctionLibrary>> CompilePayload(std::string_view body);
  // Why `incoming` cannot be restored with `policy`, as Redis's error (empty if it can), and
  // the libraries it makes leave. Requires mu_.
  std::string RestoreConflict(const std::vector<FunctionLibrary>& incoming, RestorePolicy policy,
                              std::vector<std::string>* leaving);
  // The first of `library`'s functions that a library other than those named in `ignore` has,
  // as Redis's error; empty if none. Requires mu_.
  std::string FunctionCollision(const FunctionLibrary& library,
                                const std::vector<std::string>& ignore) const;
  // Requires mu_.
  void Link(FunctionLibrary library);
  void PublishCounts();
  void Unlink(const std::string& name);
  // A library from disk or a master: it replaces its namesake and any library it collides with.
  void Install(std::string_view name, std::string_view code);

  ServerState* server_;
  std::mutex mu_;
  std::map<std::string, FunctionLibrary> libraries_;
  // Lowercased function name -> its library's name.
  std::unordered_map<std::string, std::string> function_library_;
  LuaEngine engine_;
  // The function that runs, for FUNCTION STATS (under mu_).
  std::string running_name_;
  const std::vector<std::string>* running_command_ = nullptr;
};

}  // namespace basalt
