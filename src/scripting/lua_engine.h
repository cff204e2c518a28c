// LuaEngine: a Lua 5.1 interpreter and its sandbox. There are two: one runs every EVAL script,
// the other every function library (FUNCTION LOAD / FCALL), so that SCRIPT FLUSH and FUNCTION
// FLUSH each start their own interpreter over without touching the other's, as in Redis.
//
// Scripts are compiled once into functions kept in the interpreter's registry under their SHA-1
// and called with KEYS and ARGV set as globals. A library's code runs once when it loads, with
// only the load-time API visible (redis.register_function, redis.log, the version): the
// callbacks it registers are kept in the registry and called with the keys and the arguments
// as their two parameters. The interpreter is Debian's Lua 5.1 built as
// C++ (liblua5.1-c++): a Lua error unwinds as a C++ exception, so the C++ objects alive in
// redis.call (the command path runs inside it) are destroyed properly.
//
// Threading: one script at a time. A script runs under the keyspace's exclusive lock, and
// mu_ additionally serializes compilation (SCRIPT LOAD runs under the shared lock).
//
// Safety: every use of the interpreter happens inside lua_cpcall, so running out of memory
// (the allocator refuses to pass lua-memory-limit) or any error becomes a script error, never
// a panic. A count hook polls the ScriptGuard so that SCRIPT KILL and shutdown stop a script.
#pragma once

#include <lua.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"
#include "common/status.h"

namespace basalt {

// One script invocation: what redis.call needs to run commands as part of it.
struct ScriptRun {
  ServerState* server = nullptr;
  Context* ctx = nullptr;      // the script's unit of work: every write lands in its batch
  Session* session = nullptr;  // the script's own client (SELECT inside a script changes it)
  Session* caller = nullptr;   // the client that ran the script: its user's ACL rules apply
  bool read_only = false;      // EVAL_RO or a `#!lua flags=no-writes` script
  // allow-oom: commands that may grow the data set run past maxmemory. Otherwise, as in Redis,
  // such a command is refused past maxmemory until the script's first write (a script that
  // declares it may write was refused whole before it started, memory_limit.h).
  bool allow_oom = false;
  bool wrote = false;            // a write command has run
  int resp = 2;                  // redis.setresp()
  std::string name;              // the script's SHA-1 or the function's name, as errors name it
  int function_ref = LUA_NOREF;  // a function's callback; LUA_NOREF for an EVAL script

  // Runs one command for redis.call/pcall. Returns its reply as RESP text (an error line for
  // the script-level refusals: unknown command, arity, no-script, ACL, write in a read-only
  // script).
  std::string Call(std::vector<std::string>& argv);
};

// The flags a script's shebang or a function's registration may give (Redis's names).
enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1 << 0,
  kScriptAllowOom = 1 << 1,
  kScriptAllowStale = 1 << 2,
  kScriptNoCluster = 1 << 3,
  kScriptAllowCrossSlot = 1 << 4,
};
struct ScriptFlagName {
  ScriptFlag flag;
  const char* name;
};
// In Redis's order, which FUNCTION LIST follows.
inline constexpr ScriptFlagName kScriptFlagNames[] = {
    {kScriptNoWrites, "no-writes"},
    {kScriptAllowOom, "allow-oom"},
    {kScriptAllowStale, "allow-stale"},
    {kScriptNoCluster, "no-cluster"},
    {kScriptAllowCrossSlot, "allow-cross-slot-keys"},
};

// A function a library registered while it loaded.
struct RegisteredFunction {
  std::string name;
  std::optional<std::string> description;
  uint32_t flags = 0;   // ScriptFlag bits
  int ref = LUA_NOREF;  // the callback, in the interpreter's registry
};

// What redis.register_function adds to while a library loads.
struct LibraryLoad {
  std::vector<RegisteredFunction>* functions;
  int64_t deadline_us;  // monotonic; 0 = no time limit
};

class LuaEngine {
 public:
  // `functions`: the interpreter for function libraries (it has the load-time API).
  explicit LuaEngine(ServerState* server, bool functions = false);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // Compiles `body` (its shebang line blanked) as the script `sha`, unless it already is.
  // The error is the client's reply: "ERR Error compiling script (new function): ...".
  Status Compile(const std::string& sha, std::string_view body);
  // Runs the compiled script and appends its reply (value or error) to `reply`.
  void Run(ScriptRun& run, const std::vector<std::string>& keys,
           const std::vector<std::string>& args, Reply& reply);
  // Runs the script `name` (compiled) or the function `function_ref` as the command `c`
  // (EVAL*'s or FCALL*'s unit of work, argv[3..] its keys then its arguments) and replies.
  void RunCommand(CommandContext& c, const std::string& name, int function_ref, bool read_only,
                  bool allow_oom, size_t numkeys);
  // SCRIPT FLUSH / FUNCTION FLUSH: a fresh interpreter, forgetting every compiled script or
  // registered function.
  void Reset();

  // Runs a library's code (without its shebang line) with the load-time API as its globals and
  // returns the functions it registered, or the client's error ("ERR Error compiling function:
  // ...", "ERR Error registering functions: ..."), in which case nothing stays registered.
  // `timeout_ms` bounds the run (0: none, for libraries loaded from disk or a master).
  StatusOr<std::vector<RegisteredFunction>> LoadLibrary(std::string_view code, int64_t timeout_ms);
  // Forgets registered callbacks (a library deleted, replaced or never linked).
  void Release(const std::vector<RegisteredFunction>& functions);

  static LuaEngine* FromState(lua_State* L);
  ScriptRun* current_run() const { return current_; }
  LibraryLoad* current_load() const { return load_; }
  ServerState* server() const { return server_; }

 private:
  static void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize);
  static void Hook(lua_State* L, lua_Debug* ar);
  static void LoadHook(lua_State* L, lua_Debug* ar);
  void Open();
  void Close();
  void AfterRun();
  void ReleaseLocked(const std::vector<RegisteredFunction>& functions);
  // Full collection when the interpreter uses more than half of lua-memory-limit.
  bool CollectIfNearLimit();
  void Collect(int what, int data);

  ServerState* server_;
  std::mutex mu_;
  lua_State* L_ = nullptr;
  ScriptRun* current_ = nullptr;
  LibraryLoad* load_ = nullptr;
  const bool functions_;
  size_t used_ = 0;
  bool unlimited_ = false;  // while collecting garbage
  uint64_t runs_ = 0;
};

// The sandbox and libraries (lua_sandbox.cc, lua_redis_api.cc, lua_struct.cc,
// lua_cmsgpack.cc); each is called inside a protected call while the interpreter is built.
void OpenSandbox(lua_State* L);
void RegisterRedisApi(lua_State* L);
// Builds the globals a library sees while it loads (only a `redis` table with register_function,
// log and the version) and keeps them in the registry under kLibraryApiKey (lua_redis_api.cc).
void RegisterLibraryApi(lua_State* L);
extern const char kLibraryApiKey[];
// The registry key of the real globals table, which the scripts' read-only globals proxy reads.
extern const char kRealGlobalsKey[];
// redis.register_function (lua_library_api.cc).
int RegisterFunction(lua_State* L);
// Pushes a read-only proxy of the table on top of the stack in its place (lua_sandbox.cc).
void MakeReadonlyProxy(lua_State* L);
// The __index of a table whose missing fields are an error: "Script attempted to access
// nonexistent global variable '...'".
int NonexistentGlobal(lua_State* L);
int OpenStructLibrary(lua_State* L);
int OpenMsgpackLibrary(lua_State* L);
// Sets a global in the real globals table (the scripts see a read-only proxy of it).
void SetRealGlobal(lua_State* L, const char* name);

}  // namespace basalt
