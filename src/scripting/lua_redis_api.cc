// The `redis` table scripts see: call, pcall, error_reply, status_reply, sha1hex, log,
// setresp, set_repl, replicate_commands, breakpoint, debug, acl_check_cmd and the constants,
// with Redis 7.0's argument checks and error texts.
#include <glog/logging.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands/acl_check.h"
#include "common/strutil.h"
#include "common/version.h"
#include "scripting/lua_convert.h"
#include "scripting/lua_engine.h"
#include "scripting/sha1.h"

namespace basalt {

namespace {

// Raises Redis's error table for `message` (which gets the code ERR unless it has one).
int RaiseError(lua_State* L, const char* message) {
  PushErrorTable(L, message);
  return lua_error(L);
}

ScriptRun* CurrentRun(lua_State* L, const char* what) {
  ScriptRun* run = LuaEngine::FromState(L)->current_run();
  if (run == nullptr) {
    std::string msg(what);
    msg.append(" can only be called inside a script invocation");
    RaiseError(L, msg.c_str());
  }
  return run;
}

// Collects redis.call's arguments; false (with the error table pushed) if there are none or
// one is neither a string nor a number. Numbers are written with %.17g, as Redis does.
bool CollectArguments(lua_State* L, std::vector<std::string>* argv) {
  int argc = lua_gettop(L);
  if (argc == 0) {
    PushErrorTable(L, "Please specify at least one argument for this redis lib call");
    return false;
  }
  bool ok = true;
  for (int i = 1; i <= argc && ok; i++) {
    if (lua_type(L, i) == LUA_TNUMBER) {
      char buf[64];
      int len = snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(lua_tonumber(L, i)));
      argv->emplace_back(buf, len);
    } else if (lua_type(L, i) == LUA_TSTRING) {
      size_t len;
      const char* s = lua_tolstring(L, i, &len);
      argv->emplace_back(s, len);
    } else {
      ok = false;
    }
  }
  lua_settop(L, 0);
  if (!ok) PushErrorTable(L, "Lua redis lib command arguments must be strings or integers");
  return ok;
}

int GenericCall(lua_State* L, bool raise) {
  ScriptRun* run = CurrentRun(L, "redis.call/pcall");
  std::vector<std::string> argv;
  if (!CollectArguments(L, &argv)) return raise ? lua_error(L) : 1;
  std::string reply = run->Call(argv);
  std::string_view in = reply;
  PushReplyAsLua(L, &in);
  if (raise && !reply.empty() && reply[0] == '-') return lua_error(L);
  return 1;
}

int Call(lua_State* L) {
  return GenericCall(L, true);
}

int PCall(lua_State* L) {
  return GenericCall(L, false);
}

int Sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "wrong number of arguments");
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  std::string digest = Sha1Hex(s == nullptr ? std::string_view() : std::string_view(s, len));
  lua_pushstring(L, digest.c_str());
  return 1;
}

int ErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  std::string text;
  const char* given = lua_tostring(L, 1);
  if (given[0] != '-') text.push_back('-');
  text.append(given);
  PushErrorTable(L, text);
  return 1;
}

int StatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, 1);
  lua_settable(L, -3);
  return 1;
}

int Log(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) return RaiseError(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return RaiseError(L, "First argument must be a number (log level).");
  auto level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return RaiseError(L, "Invalid debug level.");
  static const char* const kLevels[] = {"debug", "verbose", "notice", "warning", "nothing"};
  std::string configured = LuaEngine::FromState(L)->server()->config->GetString("loglevel");
  int threshold = 2;
  for (int i = 0; i < 5; i++) {
    if (configured == kLevels[i]) threshold = i;
  }
  if (level < threshold) return 0;
  std::string line;
  for (int i = 2; i <= argc; i++) {
    size_t len;
    const char* s = lua_tolstring(L, i, &len);
    if (s == nullptr) continue;
    if (i != 2) line.push_back(' ');
    line.append(s, len);
  }
  if (level == 3) {
    LOG(WARNING) << line;
  } else {
    LOG(INFO) << line;
  }
  return 0;
}

int SetResp(lua_State* L) {
  ScriptRun* run = CurrentRun(L, "redis.setresp");
  if (lua_gettop(L) != 1) return RaiseError(L, "redis.setresp() requires one argument.");
  auto resp = static_cast<int>(lua_tonumber(L, 1));
  if (resp != 2 && resp != 3) return RaiseError(L, "RESP version must be 2 or 3.");
  run->resp = resp;
  return 0;
}

// Effects always reach replicas as the script's one write batch; the flags are only checked.
int SetRepl(lua_State* L) {
  CurrentRun(L, "redis.set_repl");
  if (lua_gettop(L) != 1) return RaiseError(L, "redis.set_repl() requires two arguments.");
  auto flags = static_cast<int>(lua_tonumber(L, 1));
  if ((flags & ~3) != 0) {
    return RaiseError(L,
                      "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
                      "REPL_NONE.");
  }
  return 0;
}

int ReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int Breakpoint(lua_State* L) {
  lua_pushboolean(L, 0);  // no debugger attached, ever
  return 1;
}

int Debug(lua_State*) {
  return 0;
}

// Whether the user running the script may run the command with these arguments.
int AclCheckCmd(lua_State* L) {
  ScriptRun* run = CurrentRun(L, "redis.acl_check_cmd");
  std::vector<std::string> argv;
  if (!CollectArguments(L, &argv)) return lua_error(L);
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
  if (spec == nullptr) return RaiseError(L, "Invalid command passed to redis.acl_check_cmd()");
  bool allowed =
      run->caller == nullptr || AclCheck(SessionUser(*run->server, *run->caller), *spec, argv).ok();
  lua_pushboolean(L, allowed ? 1 : 0);
  return 1;
}

void SetFunction(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_setfield(L, -2, name);
}

void SetNumber(lua_State* L, const char* name, double value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, name);
}

// Makes reading a missing field of the table on top of the stack an error, as Redis does for
// the load-time globals and their redis table.
void SetErrorOnMissing(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, NonexistentGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

void SetVersion(lua_State* L) {
  lua_pushstring(L, kRedisVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
  SetNumber(L, "REDIS_VERSION_NUM", kRedisVersionNum);
}

void SetLog(lua_State* L) {
  SetFunction(L, "log", Log);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
}

}  // namespace

const char kLibraryApiKey[] = "basalt.library_api";

void RegisterLibraryApi(lua_State* L) {
  lua_newtable(L);  // the globals
  lua_newtable(L);  // their `redis`
  SetFunction(L, "register_function", RegisterFunction);
  SetLog(L);
  SetVersion(L);
  SetErrorOnMissing(L);
  MakeReadonlyProxy(L);
  lua_setfield(L, -2, "redis");
  SetErrorOnMissing(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kLibraryApiKey);
}

void RegisterRedisApi(lua_State* L) {
  lua_newtable(L);
  SetFunction(L, "call", Call);
  SetFunction(L, "pcall", PCall);
  SetLog(L);
  SetVersion(L);
  SetFunction(L, "setresp", SetResp);
  SetFunction(L, "sha1hex", Sha1hex);
  SetFunction(L, "error_reply", ErrorReply);
  SetFunction(L, "status_reply", StatusReply);
  SetFunction(L, "set_repl", SetRepl);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_ALL", 3);
  SetFunction(L, "replicate_commands", ReplicateCommands);
  SetFunction(L, "breakpoint", Breakpoint);
  SetFunction(L, "debug", Debug);
  SetFunction(L, "acl_check_cmd", AclCheckCmd);
  lua_setglobal(L, "redis");
}

}  // namespace basalt
