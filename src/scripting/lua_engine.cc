#include "scripting/lua_engine.h"

#include <glog/logging.h>

#include <cstdlib>
#include <cstring>
#include <optional>

#include "commands/acl_check.h"
#include "commands/admission.h"
#include "commands/command_accounting.h"
#include "commands/dispatcher.h"
#include "common/clock.h"
#include "scripting/lua_convert.h"
#include "stats/error_stats.h"

namespace basalt {

namespace {

const char kErrorHandlerKey[] = "basalt.error_handler";

constexpr int kHookInstructions = 1000;  // how often a running script polls the kill flag
// How often a loading library checks its time limit.
constexpr int kLoadHookInstructions = 10000;

std::string ToDisplayString(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TSTRING:
    case LUA_TNUMBER:
      return lua_tostring(L, idx);
    case LUA_TNIL:
      return "nil";
    case LUA_TBOOLEAN:
      return lua_toboolean(L, idx) ? "true" : "false";
    default: {
      char buf[64];
      snprintf(buf, sizeof(buf), "%s: %p", luaL_typename(L, idx), lua_topointer(L, idx));
      return buf;
    }
  }
}

// The message handler of every script call, like Redis's __redis__err__handler: turns the
// error into {err=..., source=..., line=...} naming where the script was when it failed (the
// caller's position when the error came from a C function such as redis.call or error()).
int ScriptErrorHandler(lua_State* L) {
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar);
  if (have && strcmp(ar.what, "C") == 0)
    have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "Sl", &ar);
  lua_newtable(L);
  lua_pushstring(L, "err");
  if (lua_istable(L, 1)) {
    // A fresh table: the error object may be anything, even a read-only library table.
    lua_pushstring(L, "err");
    lua_rawget(L, 1);
  } else {
    std::string text = "ERR " + ToDisplayString(L, 1);
    lua_pushlstring(L, text.data(), text.size());
  }
  lua_rawset(L, -3);
  if (lua_istable(L, 1)) {
    lua_pushstring(L, kErrorCountedField);
    lua_pushstring(L, kErrorCountedField);
    lua_rawget(L, 1);
    lua_rawset(L, -3);
  }
  if (have) {
    lua_pushstring(L, "source");
    lua_pushstring(L, ar.source);
    lua_rawset(L, -3);
    lua_pushstring(L, "line");
    lua_pushinteger(L, ar.currentline);
    lua_rawset(L, -3);
  }
  return 1;
}

// The reply for a failed script, in Redis 7's format:
//   -<err> script: <sha>, on <source>:<line>.
void ReplyScriptError(lua_State* L, const ScriptRun& run, Reply& reply) {
  if (!lua_istable(L, -1)) {
    std::string msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    reply.Error("ERR Error running script " + run.name + ", " + msg.substr(0, 100));
    return;
  }
  auto field = [L](const char* name) -> std::optional<std::string> {
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    std::optional<std::string> value;
    if (lua_isstring(L, -1)) value = lua_tostring(L, -1);
    lua_pop(L, 1);
    return value;
  };
  // A table thrown without an err string (error({})) has no message; Redis 7.0 crashes there.
  std::string text = field("err").value_or("ERR unknown error");
  auto source = field("source");
  auto line = field("line");
  if (source && line) text += " script: " + run.name + ", on " + *source + ":" + *line + ".";
  ReplyErrorTable(L, text, reply);
}

void PushStringArray(lua_State* L, const std::vector<std::string>& items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); i++) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

struct CompileJob {
  std::string key;
  std::string_view code;
  std::string error;
  bool ok = false;
};

int ProtectedCompile(lua_State* L) {
  auto* job = static_cast<CompileJob*>(lua_touserdata(L, 1));
  lua_getfield(L, LUA_REGISTRYINDEX, job->key.c_str());
  if (!lua_isnil(L, -1)) {
    job->ok = true;
    return 0;
  }
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, job->code.data(), job->code.size(), "@user_script") != 0) {
    job->error = lua_tostring(L, -1);
    return 0;
  }
  lua_setfield(L, LUA_REGISTRYINDEX, job->key.c_str());
  job->ok = true;
  return 0;
}

struct RunJob {
  ScriptRun* run;
  const std::vector<std::string>* keys;
  const std::vector<std::string>* args;
  Reply* reply;
};

int ProtectedRun(lua_State* L) {
  auto* job = static_cast<RunJob*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  lua_getfield(L, LUA_REGISTRYINDEX, kErrorHandlerKey);
  int rc;
  if (job->run->function_ref != LUA_NOREF) {
    // A function gets the keys and the arguments as parameters; there are no KEYS/ARGV globals.
    lua_rawgeti(L, LUA_REGISTRYINDEX, job->run->function_ref);
    PushStringArray(L, *job->keys);
    PushStringArray(L, *job->args);
    rc = lua_pcall(L, 2, 1, 1);
  } else {
    std::string key = "f_" + job->run->name;
    lua_getfield(L, LUA_REGISTRYINDEX, key.c_str());
    PushStringArray(L, *job->keys);
    SetRealGlobal(L, "KEYS");
    PushStringArray(L, *job->args);
    SetRealGlobal(L, "ARGV");
    rc = lua_pcall(L, 0, 1, 1);
  }
  if (rc != 0) {
    ReplyScriptError(L, *job->run, *job->reply);
  } else {
    ReplyFromLua(L, *job->reply, job->run->resp);
  }
  return 0;
}

int ProtectedOpen(lua_State* L) {
  bool functions = lua_touserdata(L, 1) != nullptr;
  OpenSandbox(L);
  lua_pushcfunction(L, ScriptErrorHandler);
  lua_pushvalue(L, -1);
  SetRealGlobal(L, "__redis__err__handler");  // Redis exposes its handler under this name
  lua_setfield(L, LUA_REGISTRYINDEX, kErrorHandlerKey);
  if (functions) RegisterLibraryApi(L);
  return 0;
}

// Points the scripts' globals proxy at the load-time API (a library loading) or back at the
// real globals.
int ProtectedSetGlobalsView(lua_State* L) {
  const char* key = static_cast<const char*>(lua_touserdata(L, 1));
  lua_getmetatable(L, LUA_GLOBALSINDEX);
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  lua_setfield(L, -2, "__index");
  return 0;
}

// The message of an error a library's code raised outside any handler: an {err=...} table's
// text, or a string with Redis's ERR code.
std::string LoadErrorMessage(lua_State* L) {
  if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
    return std::string("ERR ") + lua_tostring(L, -1);
  if (lua_istable(L, -1)) {
    lua_pushstring(L, "err");
    lua_rawget(L, -2);
    std::string text = lua_isstring(L, -1) ? lua_tostring(L, -1) : "ERR unknown error";
    lua_pop(L, 1);
    return text;
  }
  return "ERR execution failure";
}

struct LoadJob {
  std::string_view code;
  std::string error;
};

int ProtectedLoadLibrary(lua_State* L) {
  auto* job = static_cast<LoadJob*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  if (luaL_loadbuffer(L, job->code.data(), job->code.size(), "@user_function") != 0) {
    job->error = std::string("ERR Error compiling function: ") +
                 (lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
    return 0;
  }
  if (lua_pcall(L, 0, 0, 0) != 0)
    job->error = "ERR Error registering functions: " + LoadErrorMessage(L);
  return 0;
}

struct ReleaseJob {
  const std::vector<RegisteredFunction>* functions;
};

int ProtectedRelease(lua_State* L) {
  auto* job = static_cast<ReleaseJob*>(lua_touserdata(L, 1));
  for (const RegisteredFunction& fn : *job->functions) luaL_unref(L, LUA_REGISTRYINDEX, fn.ref);
  return 0;
}

struct CollectJob {
  int what;
  int data;
};

int ProtectedCollect(lua_State* L) {
  auto* job = static_cast<CollectJob*>(lua_touserdata(L, 1));
  lua_gc(L, job->what, job->data);
  return 0;
}

int Panic(lua_State* L) {
  // Every interpreter call is protected; reaching this is a bug, not a script's doing.
  LOG(FATAL) << "unprotected Lua error: " << (lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
  return 0;
}

// Whether DEBUG SET-DISABLE-DENY-SCRIPTS lets a script call this noscript command. Never for
// scripts and transactions (they would nest in the running script), commands refused in MULTI
// (SHUTDOWN, ...) or those that run beside a busy script (SCRIPT, FUNCTION): those change
// what is running.
bool NoScriptLifted(ServerState& server, const CommandSpec& spec) {
  constexpr uint32_t kNeverFromScripts = kCmdOffload | kCmdTxControl | kCmdNoMulti | kCmdAllowBusy;
  return server.scripts_call_noscript.load(std::memory_order_relaxed) &&
         !(spec.flags & kNeverFromScripts);
}

}  // namespace

std::string ScriptRun::Call(std::vector<std::string>& argv) {
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
  // A refused call counts as Redis counts it: the error, and the command's rejected_calls. The
  // script's own error reply that carries it on is not counted again.
  auto refuse = [&](std::string error) {
    RecordErrorReply(error);
    if (spec != nullptr) CountRejected(*server, *spec, argv);
    return "-" + error + "\r\n";
  };
  if (spec == nullptr) return refuse("ERR Unknown Redis command called from script");
  std::string error;
  if (ResolveCommand(argv, &error) == nullptr) {
    if (error.rfind("ERR wrong number of arguments", 0) == 0)
      return refuse("ERR Wrong number of args calling Redis command from script");
    return refuse(error);
  }
  // By the subcommand's flags: CLUSTER RESET is refused, CLIENT HELP is not.
  if ((CommandTable::Get().FlagsOf(*spec, argv) & kCmdNoScript) && !NoScriptLifted(*server, *spec))
    return refuse("ERR This Redis command is not allowed from script");
  if (caller != nullptr) {
    std::string denied = AclCheckForScript(*server, *caller, *spec, argv);
    if (!denied.empty()) return refuse(denied);
  }
  // A may-replicate command (PUBLISH, PFCOUNT) counts as a write here, as in Redis: a
  // read-only script then never needs to wait for CLIENT PAUSE WRITE.
  if ((spec->flags & (kCmdWrite | kCmdMayReplicate)) && read_only)
    return refuse("ERR Write commands are not allowed from read-only scripts.");
  if ((spec->flags & kCmdDenyOom) && !allow_oom && !wrote &&
      server->memory_limit.Exceeded(*server->config)) {
    return refuse(kOomError);
  }
  // As Redis checks a script's writes (a script that declared them was checked before it ran).
  if ((spec->flags & kCmdWrite) && LacksGoodReplicas(*server)) return refuse(kNoReplicasError);
  if (spec->flags & kCmdWrite) {
    server->script_guard.MarkWrote();
    wrote = true;
  }
  std::string out;
  Reply reply(&out, resp);
  RunInContext(*server, *session, *spec, argv, reply, *ctx, true);
  return out;
}

LuaEngine::LuaEngine(ServerState* server, bool functions) : server_(server), functions_(functions) {
  Open();
}

LuaEngine::~LuaEngine() {
  Close();
}

LuaEngine* LuaEngine::FromState(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<LuaEngine*>(ud);
}

void* LuaEngine::Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* self = static_cast<LuaEngine*>(ud);
  if (nsize == 0) {
    free(ptr);
    self->used_ -= osize;
    return nullptr;
  }
  if (nsize > osize && !self->unlimited_) {
    auto limit = static_cast<size_t>(self->server_->config->lua_memory_limit.load());
    if (self->used_ + (nsize - osize) > limit) return nullptr;  // Lua raises "not enough memory"
  }
  void* grown = realloc(ptr, nsize);
  if (grown == nullptr) return nullptr;
  self->used_ = self->used_ - osize + nsize;
  return grown;
}

void LuaEngine::Hook(lua_State* L, lua_Debug*) {
  LuaEngine* self = FromState(L);
  if (!self->server_->script_guard.kill_requested()) return;
  // From now on the hook fires on every line and instruction, so a script that catches the
  // error with pcall cannot keep running.
  lua_sethook(L, Hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  PushErrorTable(L, "Script killed by user with SCRIPT KILL...");
  lua_error(L);
}

void LuaEngine::Open() {
  used_ = 0;
  L_ = lua_newstate(Allocate, this);
  CHECK(L_ != nullptr) << "cannot create the Lua interpreter";
  lua_atpanic(L_, Panic);
  // lua_cpcall passes one light userdata: a non-null pointer says "functions".
  if (lua_cpcall(L_, ProtectedOpen, functions_ ? this : nullptr) != 0) {
    LOG(FATAL) << "building the Lua sandbox failed: "
               << (lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "?");
  }
}

void LuaEngine::Close() {
  if (L_ != nullptr) lua_close(L_);
  L_ = nullptr;
}

void LuaEngine::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  Close();
  Open();
}

Status LuaEngine::Compile(const std::string& sha, std::string_view body) {
  std::lock_guard<std::mutex> lock(mu_);
  CompileJob job;
  job.key = "f_" + sha;
  CollectIfNearLimit();
  // The shebang line is not Lua; blanking it keeps the line numbers of error messages.
  job.code = body;
  if (body.substr(0, 2) == "#!") job.code = body.substr(std::min(body.find('\n'), body.size()));
  int rc = lua_cpcall(L_, ProtectedCompile, &job);
  if (rc != 0) {
    job.error = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "execution failure";
    lua_pop(L_, 1);
  }
  if (job.ok) return Status::OK();
  return Status::RedisError("ERR Error compiling script (new function): " + job.error);
}

void LuaEngine::Run(ScriptRun& run, const std::vector<std::string>& keys,
                    const std::vector<std::string>& args, Reply& reply) {
  std::lock_guard<std::mutex> lock(mu_);
  CollectIfNearLimit();
  current_ = &run;
  server_->script_guard.Begin(run.function_ref != LUA_NOREF);
  lua_sethook(L_, Hook, LUA_MASKCOUNT, kHookInstructions);
  RunJob job{&run, &keys, &args, &reply};
  size_t reply_start = reply.buffer()->size();
  int rc = lua_cpcall(L_, ProtectedRun, &job);
  if (rc != 0) {
    // Only reachable if building the reply itself failed (memory): start it over as an error.
    std::string msg = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "execution failure";
    lua_pop(L_, 1);
    reply.buffer()->resize(reply_start);
    reply.Error("ERR Error running script " + run.name + ", " + msg.substr(0, 100));
  }
  lua_sethook(L_, nullptr, 0, 0);
  server_->script_guard.End();
  current_ = nullptr;
  AfterRun();
}

void LuaEngine::RunCommand(CommandContext& c, const std::string& name, int function_ref,
                           bool read_only, bool allow_oom, size_t numkeys) {
  // The script's own client: SELECT inside the script changes its database, not the caller's.
  Session session;
  session.id = c.session.id;
  session.db = c.db();
  session.authenticated = true;
  // Redis's Lua client has no connection: the slowlog shows its commands as "?:0"'s.
  session.addr = "?:0";
  session.script_client = true;
  // Client-side caching: the keys the script's commands read are the calling client's.
  session.tracking_flags = c.session.tracking_flags.load(std::memory_order_relaxed);
  ScriptRun run;
  run.server = server_;
  run.ctx = &c.ctx;
  run.session = &session;
  run.caller = &c.session;
  run.read_only = read_only;
  run.allow_oom = allow_oom;
  run.name = name;
  run.function_ref = function_ref;
  std::vector<std::string> keys(c.argv.begin() + 3, c.argv.begin() + 3 + numkeys);
  std::vector<std::string> args(c.argv.begin() + 3 + numkeys, c.argv.end());
  Run(run, keys, args, c.reply);
  // Stopped by shutdown: its writes must not land, not even in part.
  if (server_->script_guard.aborted_for_shutdown()) c.ctx.Discard();
}

void LuaEngine::LoadHook(lua_State* L, lua_Debug*) {
  LuaEngine* self = FromState(L);
  if (self->load_ == nullptr || self->load_->deadline_us == 0 ||
      MonotonicMicros() < self->load_->deadline_us) {
    return;
  }
  // Every line from now on fails too, so that pcall cannot keep the library running.
  lua_sethook(L, LoadHook, LUA_MASKLINE, 0);
  PushErrorTable(L, "FUNCTION LOAD timeout");
  lua_error(L);
}

StatusOr<std::vector<RegisteredFunction>> LuaEngine::LoadLibrary(std::string_view code,
                                                                 int64_t timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  CollectIfNearLimit();
  std::vector<RegisteredFunction> registered;
  LibraryLoad load{&registered, timeout_ms > 0 ? MonotonicMicros() + timeout_ms * 1000 : 0};
  load_ = &load;
  LoadJob job{code, ""};
  int rc = lua_cpcall(L_, ProtectedSetGlobalsView, const_cast<char*>(kLibraryApiKey));
  if (rc == 0) {
    lua_sethook(L_, LoadHook, LUA_MASKCOUNT, kLoadHookInstructions);
    rc = lua_cpcall(L_, ProtectedLoadLibrary, &job);
    lua_sethook(L_, nullptr, 0, 0);
  }
  if (rc != 0) {
    job.error = std::string("ERR Error registering functions: ") +
                (lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "execution failure");
    lua_pop(L_, 1);
  }
  // The real globals come back whatever happened: a failure to restore them (memory) would
  // leave every later function seeing only the load-time API, so it is retried after a
  // collection, and is fatal only if even that fails.
  if (lua_cpcall(L_, ProtectedSetGlobalsView, const_cast<char*>(kRealGlobalsKey)) != 0) {
    lua_pop(L_, 1);
    Collect(LUA_GCCOLLECT, 0);
    unlimited_ = true;
    CHECK_EQ(lua_cpcall(L_, ProtectedSetGlobalsView, const_cast<char*>(kRealGlobalsKey)), 0);
    unlimited_ = false;
  }
  load_ = nullptr;
  lua_settop(L_, 0);
  if (job.error.empty() && !registered.empty()) return registered;
  ReleaseLocked(registered);
  if (job.error.empty()) return Status::RedisError("ERR No functions registered");
  return Status::RedisError(job.error);
}

void LuaEngine::Release(const std::vector<RegisteredFunction>& functions) {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseLocked(functions);
}

void LuaEngine::ReleaseLocked(const std::vector<RegisteredFunction>& functions) {
  if (functions.empty()) return;
  ReleaseJob job{&functions};
  // Unreferencing reuses registry slots and allocates nothing; lifted limit for certainty.
  unlimited_ = true;
  if (lua_cpcall(L_, ProtectedRelease, &job) != 0) lua_pop(L_, 1);
  unlimited_ = false;
}

void LuaEngine::AfterRun() {
  lua_settop(L_, 0);
  // A script may have stopped the collector.
  lua_gc(L_, LUA_GCRESTART, 0);
  // A cheap incremental step now and then keeps the full cycles (and their pauses) rare, as
  // Redis does.
  if (!CollectIfNearLimit() && ++runs_ % 50 == 0) Collect(LUA_GCSTEP, 50);
}

bool LuaEngine::CollectIfNearLimit() {
  // The allocator cannot collect when it refuses: garbage left near the limit (or a limit just
  // lowered by CONFIG SET) would fail the next script for no reason of its own.
  auto limit = static_cast<size_t>(server_->config->lua_memory_limit.load());
  if (used_ <= limit / 2) return false;
  Collect(LUA_GCCOLLECT, 0);
  return true;
}

void LuaEngine::Collect(int what, int data) {
  CollectJob job{what, data};
  // The protected call itself allocates a little, which must not fail when the garbage to
  // collect is what fills the quota: the limit is lifted for the call.
  unlimited_ = true;
  if (lua_cpcall(L_, ProtectedCollect, &job) != 0) lua_pop(L_, 1);
  unlimited_ = false;
}

}  // namespace basalt
