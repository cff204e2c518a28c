// Scripting: the script cache (SHA-1 -> body), its persistence, and the Lua engine, as one
// object that the EVAL and SCRIPT commands and the replication applier use.
//
// Scripts loaded by SCRIPT LOAD or first run by EVAL (Redis 7 caches both) are written to the
// `propagate` column family as `script:<sha>` -> body, in the batch of the command that
// loaded them, so they survive a restart and reach replicas in order with the data; SCRIPT
// FLUSH deletes them in its batch. At start-up LoadPersisted() reads them back; a replica's
// applier calls OnReplicatedPut/OnReplicatedDelete for such entries (docs/encoding.md).
//
// Threading: the cache has its own mutex; the engine serializes its interpreter.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"
#include "common/status.h"
#include "scripting/functions.h"
#include "scripting/lua_engine.h"

namespace basalt {

struct ScriptInfo {
  std::string body;
  bool no_writes = false;  // `#!lua flags=no-writes`
  bool allow_oom = false;  // `#!lua flags=allow-oom`: runs past maxmemory (memory_limit.h)
  // A script with a shebang declares its flags, as a function does: without no-writes it is a
  // write (EVAL_RO and a read-only replica refuse it), as in Redis.
  bool declares_flags = false;
};

class Scripting {
 public:
  explicit Scripting(ServerState* server) : server_(server), engine_(server), functions_(server) {}

  // The function libraries (FUNCTION / FCALL), which persist and replicate alongside scripts.
  Functions& functions() { return functions_; }

  // Reads the persisted scripts and function libraries (start-up, before clients are served).
  Status LoadPersisted();
  // Forgets the cache and the libraries and reads them again: a replica's full sync replaced
  // the data, scripts and libraries included.
  Status ReloadPersisted();

  bool Lookup(const std::string& sha, ScriptInfo* info);
  bool Exists(const std::string& sha);
  // Checks the shebang and compiles `body`; if it is new, caches it and persists it in `ctx`.
  // Returns its SHA-1, or the error reply.
  StatusOr<std::string> Load(Context& ctx, const std::string& body);
  // Runs a cached script as part of `c` (EVAL*'s unit of work) and replies.
  void Run(CommandContext& c, const std::string& sha, const ScriptInfo& info, bool read_only,
           size_t numkeys);
  // Whether an EVAL, EVALSHA or FCALL `argv` (two arguments at least) may write, as Redis
  // derives these commands' flags from the script's or function's: EVAL* is false only for a
  // script that declares no-writes in its shebang, found in the cache or (EVAL of a script not
  // cached yet) read from the body; an unknown sha, a body without shebang or with a bad one
  // may write. CLIENT PAUSE WRITE lets the others through.
  bool MayWrite(const std::vector<std::string>& argv);
  // Whether such a call declares before it runs that it may write: a function without
  // no-writes, a script whose shebang lacks it. min-replicas-to-write refuses these up front,
  // as Redis does; a script without a shebang is checked at each write it makes.
  bool DeclaresWrites(const std::vector<std::string>& argv);
  // SCRIPT FLUSH: forgets every script (deleting them in `ctx`) and restarts the interpreter.
  void Flush(Context& ctx);

  // For the replication applier: a `propagate` entry was put or deleted by an applied batch.
  // Function libraries' entries go to functions(); other keys are ignored.
  void OnReplicatedPut(std::string_view key, std::string_view value);
  void OnReplicatedDelete(std::string_view key);

  static std::string PersistKey(std::string_view sha) { return "script:" + std::string(sha); }

 private:
  Status LoadPersistedScripts();
  bool ScriptMayWrite(std::string_view script, bool by_sha);

  ServerState* server_;
  std::mutex mu_;
  std::unordered_map<std::string, ScriptInfo> scripts_;
  // Stores scripts_.size() for INFO memory's number_of_cached_scripts; called under mu_.
  void PublishCount() {
    server_->cached_scripts.store(static_cast<int64_t>(scripts_.size()), std::memory_order_relaxed);
  }
  LuaEngine engine_;
  Functions functions_;
};

// SCRIPT KILL (function = false) and FUNCTION KILL (function = true): asks the running script
// to stop and replies as Redis does.
void ReplyToKill(CommandContext& c, bool function);

// Parses a `#!lua [flags=a,b]` first line. Bodies without one are accepted (no flags).
// `allow_oom`, when given, tells whether the flags include allow-oom.
Status ParseShebang(std::string_view body, bool* no_writes, bool* allow_oom = nullptr);

}  // namespace basalt
