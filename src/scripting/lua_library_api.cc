// redis.register_function: what a library's code calls while FUNCTION LOAD runs it, in its two
// forms, with Redis 7's argument checks and error texts:
//
//   redis.register_function('name', callback)
//   redis.register_function{function_name='name', callback=fn, flags={'no-writes'},
//                           description='...'}
//
// A registered callback is kept in the interpreter's registry (luaL_ref); the library's loader
// (LuaEngine::LoadLibrary) collects them and releases them all if the library fails to load.
#include <strings.h>

#include <string>

#include "scripting/lua_convert.h"
#include "scripting/lua_engine.h"

namespace basalt {

namespace {

bool ValidFunctionName(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_';
    if (!ok) return false;
  }
  return true;
}

// The string (or number, as text) at `idx`; nullopt for other types. Works on a copy, so that
// a number key is never converted in place under lua_next.
std::optional<std::string> StringAt(lua_State* L, int idx) {
  if (!lua_isstring(L, idx)) return std::nullopt;
  lua_pushvalue(L, idx);
  size_t len;
  const char* s = lua_tolstring(L, -1, &len);
  std::string out(s, len);
  lua_pop(L, 1);
  return out;
}

// The flags table at the top of the stack; false on an unknown flag or a non-string element.
bool ReadFlags(lua_State* L, uint32_t* flags) {
  *flags = 0;
  for (int i = 1;; i++) {
    lua_rawgeti(L, -1, i);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return true;
    }
    std::optional<std::string> name = StringAt(L, -1);
    lua_pop(L, 1);
    if (!name) return false;
    bool found = false;
    for (const ScriptFlagName& known : kScriptFlagNames) {
      if (strcasecmp(known.name, name->c_str()) == 0) {
        *flags |= known.flag;
        found = true;
      }
    }
    if (!found) return false;
  }
}

// Keeps the function at the top of the stack in the registry as fn->ref (popping it).
void KeepCallback(lua_State* L, RegisteredFunction* fn) {
  if (fn->ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, fn->ref);
  fn->ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

// The table form; returns the error text, empty on success.
std::string ReadNamedArguments(lua_State* L, RegisteredFunction* fn) {
  if (!lua_istable(L, 1)) {
    return "calling redis.register_function with a single argument is only applicable to Lua "
           "table (representing named arguments).";
  }
  bool have_name = false;
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    std::optional<std::string> key = StringAt(L, -2);
    if (!key) return "named argument key given to redis.register_function is not a string";
    if (strcasecmp(key->c_str(), "function_name") == 0) {
      std::optional<std::string> name = StringAt(L, -1);
      if (!name) return "function_name argument given to redis.register_function must be a string";
      fn->name = std::move(*name);
      have_name = true;
    } else if (strcasecmp(key->c_str(), "description") == 0) {
      fn->description = StringAt(L, -1);
      if (!fn->description)
        return "description argument given to redis.register_function must be a string";
    } else if (strcasecmp(key->c_str(), "callback") == 0) {
      if (!lua_isfunction(L, -1))
        return "callback argument given to redis.register_function must be a function";
      lua_pushvalue(L, -1);
      KeepCallback(L, fn);
    } else if (strcasecmp(key->c_str(), "flags") == 0) {
      if (!lua_istable(L, -1)) {
        return "flags argument to redis.register_function must be a table representing function "
               "flags";
      }
      if (!ReadFlags(L, &fn->flags)) return "unknown flag given";
    } else {
      return "unknown argument given to redis.register_function";
    }
    lua_pop(L, 1);
  }
  if (!have_name) return "redis.register_function must get a function name argument";
  if (fn->ref == LUA_NOREF) return "redis.register_function must get a callback argument";
  return "";
}

std::string ReadPositionalArguments(lua_State* L, RegisteredFunction* fn) {
  std::optional<std::string> name = StringAt(L, 1);
  if (!name) return "first argument to redis.register_function must be a string";
  if (!lua_isfunction(L, 2)) return "second argument to redis.register_function must be a function";
  fn->name = std::move(*name);
  lua_pushvalue(L, 2);
  KeepCallback(L, fn);
  return "";
}

std::string CheckAgainstLibrary(const LibraryLoad& load, const RegisteredFunction& fn) {
  // Redis's text says "Library names" here too.
  if (!ValidFunctionName(fn.name)) {
    return "Library names can only contain letters, numbers, or underscores(_) and must be at "
           "least one character long";
  }
  for (const RegisteredFunction& other : *load.functions) {
    if (other.name == fn.name) return "Function already exists in the library";
  }
  return "";
}

}  // namespace

int RegisterFunction(lua_State* L) {
  LuaEngine* engine = LuaEngine::FromState(L);
  LibraryLoad* load = engine->current_load();
  if (load == nullptr) {
    PushErrorTable(L, "redis.register_function can only be called on FUNCTION LOAD command");
    return lua_error(L);
  }
  RegisteredFunction fn;
  std::string error;
  {
    int argc = lua_gettop(L);
    if (argc < 1 || argc > 2) {
      error = "wrong number of arguments to redis.register_function";
    } else if (argc == 1) {
      error = ReadNamedArguments(L, &fn);
    } else {
      error = ReadPositionalArguments(L, &fn);
    }
    if (error.empty()) error = CheckAgainstLibrary(*load, fn);
  }
  if (!error.empty()) {
    if (fn.ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, fn.ref);
    PushErrorTable(L, error);
    return lua_error(L);
  }
  load->functions->push_back(std::move(fn));
  return 0;
}

}  // namespace basalt
