// LuaEngine: the one Lua 5.1 interpreter that runs every script, and its sandbox.
//
// Scripts are compiled once into functions kept in the interpreter's registry under their SHA-1
// and called with KEYS and ARGV set as globals. The interpreter is Debian's Lua 5.1 built as
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
  int resp = 2;                // redis.setresp()
  std::string sha;

  // Runs one command for redis.call/pcall. Returns its reply as RESP text (an error line for
  // the script-level refusals: unknown command, arity, no-script, ACL, write in a read-only
  // script).
  std::string Call(std::vector<std::string>& argv);
};

class LuaEngine {
 public:
  explicit LuaEngine(ServerState* server);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // Compiles `body` (its shebang line blanked) as the script `sha`, unless it already is.
  // The error is the client's reply: "ERR Error compiling script (new function): ...".
  Status Compile(const std::string& sha, std::string_view body);
  // Runs the compiled script and appends its reply (value or error) to `reply`.
  void Run(ScriptRun& run, const std::vector<std::string>& keys,
           const std::vector<std::string>& args, Reply& reply);
  // SCRIPT FLUSH: a fresh interpreter, forgetting every compiled script.
  void Reset();

  static LuaEngine* FromState(lua_State* L);
  ScriptRun* current_run() const { return current_; }
  ServerState* server() const { return server_; }

 private:
  static void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize);
  static void Hook(lua_State* L, lua_Debug* ar);
  void Open();
  void Close();
  void AfterRun();
  // Full collection when the interpreter uses more than half of lua-memory-limit.
  bool CollectIfNearLimit();
  void Collect(int what, int data);

  ServerState* server_;
  std::mutex mu_;
  lua_State* L_ = nullptr;
  ScriptRun* current_ = nullptr;
  size_t used_ = 0;
  bool unlimited_ = false;  // while collecting garbage
  uint64_t runs_ = 0;
};

// The sandbox and libraries (lua_sandbox.cc, lua_redis_api.cc, lua_struct.cc,
// lua_cmsgpack.cc); each is called inside a protected call while the interpreter is built.
void OpenSandbox(lua_State* L);
void RegisterRedisApi(lua_State* L);
int OpenStructLibrary(lua_State* L);
int OpenMsgpackLibrary(lua_State* L);
// Sets a global in the real globals table (the scripts see a read-only proxy of it).
void SetRealGlobal(lua_State* L, const char* name);

}  // namespace basalt
