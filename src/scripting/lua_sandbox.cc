// The sandbox scripts run in, matching what Redis 7.0 offers:
//
// - Libraries: base (without print, dofile, loadfile, getfenv, setfenv, newproxy), table,
//   string, math (with a deterministic math.random), coroutine, cjson and bit (Debian's
//   lua-cjson and lua-bitop), struct and cmsgpack (ours), and the redis table. No os, io,
//   package, require or debug.
// - Read-only globals and libraries. Redis patches its interpreter with a read-only flag on
//   tables; Debian's stock Lua has none, so each protected table is replaced by an empty proxy
//   whose metatable reads from the real table and refuses writes. The functions that bypass
//   metatables (rawset, rawget, next/pairs, setmetatable, table.insert/remove/sort) are
//   wrapped to see through, or refuse, proxies. Strings' metatable is hidden behind a proxy too.
// - Reading a global that does not exist is an error, as in Redis.
// - loadstring/load never accept precompiled bytecode (it can crash the interpreter).
// - bit.tohex takes a width of -2^31 as -(2^31 - 1): Debian's lua-bitop negates it and
//   overflows its buffer; Redis patches its copy the same way.
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "scripting/lua_engine.h"

extern "C" {
int luaopen_cjson(lua_State* L);
int luaopen_bit(lua_State* L);
}

namespace basalt {

const char kRealGlobalsKey[] = "basalt.real_globals";

namespace {

const char kProxyTargetsKey[] = "basalt.proxy_targets";
const char kReadonlyError[] = "Attempt to modify a readonly table";

// If the value at `idx` is a read-only proxy, pushes its real table and returns true.
bool PushProxyTarget(lua_State* L, int idx) {
  if (!lua_istable(L, idx)) return false;
  idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyTargetsKey);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

int ReadonlyNewIndex(lua_State* L) {
  return luaL_error(L, "%s",
                    kReadonlyError);  // with the script's position, as Redis's VM reports it
}

}  // namespace

int NonexistentGlobal(lua_State* L) {
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    lua_isstring(L, 2) ? lua_tostring(L, 2) : "?");
}

void MakeReadonlyProxy(lua_State* L) {
  int target = lua_gettop(L);
  lua_newtable(L);
  lua_newtable(L);
  lua_pushvalue(L, target);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyTargetsKey);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, target);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_replace(L, target);
}

namespace {

// Wrappers that call the original C function in their own frame, so that argument errors
// keep the original's name and the script's position.
int CallOriginal(lua_State* L) {
  return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

// rawset, setmetatable, table.insert/remove/sort: refuse read-only tables (no position in the
// message, as in Redis where the check is inside the C function).
int RefuseReadonly(lua_State* L) {
  if (PushProxyTarget(L, 1)) {
    lua_pushstring(L, kReadonlyError);
    return lua_error(L);
  }
  return CallOriginal(L);
}

int SeeThroughRawget(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  if (PushProxyTarget(L, 1)) lua_replace(L, 1);
  lua_settop(L, 2);
  lua_rawget(L, 1);
  return 1;
}

int SeeThroughNext(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (PushProxyTarget(L, 1)) lua_replace(L, 1);
  lua_settop(L, 2);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

int SeeThroughPairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// Redis 7's pcall: errors raised as {err=...} tables (redis.call's) reach the script as their
// message string, as they did before Redis 7.
int RedisPcall(lua_State* L) {
  int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// Loads `code` as text. A binary chunk is parsed as text too (one leading space makes Lua's
// loader treat it so), which fails with the same message Redis gives.
int LoadText(lua_State* L, const std::string& code, const std::string& chunkname) {
  int rc;
  if (!code.empty() && code[0] == '\033') {
    rc = luaL_loadbuffer(L, (" " + code).c_str(), code.size() + 1, chunkname.c_str());
  } else {
    rc = luaL_loadbuffer(L, code.data(), code.size(), chunkname.c_str());
  }
  if (rc == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

int SafeLoadstring(lua_State* L) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  std::string code(s, len);
  std::string name = luaL_optstring(L, 2, code.c_str());
  return LoadText(L, code, name);
}

int SafeLoad(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  std::string name = luaL_optstring(L, 2, "=(load)");
  std::string code;
  while (true) {
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) break;
    if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
    size_t len;
    const char* piece = lua_tolstring(L, -1, &len);
    if (len == 0) break;
    code.append(piece, len);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return LoadText(L, code, name);
}

// math.random over a 48-bit linear congruential generator (the drand48 recurrence), so the
// sequence does not depend on the C library, as in Redis.
uint64_t g_rand_state = 0x1234ABCD330EULL;

double NextRandom() {
  g_rand_state = (0x5DEECE66DULL * g_rand_state + 0xB) & ((1ULL << 48) - 1);
  int64_t r = static_cast<int64_t>(g_rand_state >> 17);  // 31 bits
  return static_cast<double>(r % INT32_MAX) / INT32_MAX;
}

int MathRandom(lua_State* L) {
  double r = NextRandom();
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      return 1;
    case 1: {
      int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      return 1;
    }
    case 2: {
      int l = luaL_checkint(L, 1);
      int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      return 1;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
}

// bit.tohex(x [, n]) over the original (upvalue 1), with the one width that overflows it,
// -2^31 as lua-bitop reduces numbers to 32 bits, replaced by -(2^31 - 1), which gives the
// same result: eight upper-case digits.
int SafeBitTohex(lua_State* L) {
  if (lua_gettop(L) >= 2 && lua_isnumber(L, 2)) {
    // lua-bitop's reduction: add 2^52 + 2^51 and keep the low 32 bits of the double's bits.
    uint64_t bits = std::bit_cast<uint64_t>(lua_tonumber(L, 2) + 6755399441055744.0);
    if (static_cast<uint32_t>(bits) == 0x80000000u) {
      lua_pushnumber(L, -2147483647.0);
      lua_replace(L, 2);
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int MathRandomseed(lua_State* L) {
  g_rand_state = (static_cast<uint64_t>(static_cast<uint32_t>(luaL_checkint(L, 1))) << 16) | 0x330E;
  return 0;
}

void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  if (name[0] != '\0' && lua_istable(L, -1)) {
    lua_setglobal(L, name);
  } else {
    lua_pop(L, 1);
  }
}

// Replaces table[name] by a closure of `wrapper` over the original function.
void Wrap(lua_State* L, const char* table, const char* name, lua_CFunction wrapper) {
  if (table != nullptr) {
    lua_getglobal(L, table);
  } else {
    lua_pushvalue(L, LUA_GLOBALSINDEX);
  }
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, wrapper, 1);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

void SetField(lua_State* L, const char* table, const char* name, lua_CFunction fn) {
  lua_getglobal(L, table);
  lua_pushcfunction(L, fn);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

}  // namespace

void SetRealGlobal(lua_State* L, const char* name) {
  lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobalsKey);
  lua_pushstring(L, name);
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 2);
}

void OpenSandbox(lua_State* L) {
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, LUA_REGISTRYINDEX, kRealGlobalsKey);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyTargetsKey);

  OpenLibrary(L, luaopen_base, "");
  OpenLibrary(L, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(L, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(L, luaopen_math, LUA_MATHLIBNAME);
  OpenLibrary(L, luaopen_cjson, "cjson");
  OpenLibrary(L, luaopen_bit, "bit");
  Wrap(L, "bit", "tohex", SafeBitTohex);
  OpenLibrary(L, OpenStructLibrary, "struct");
  OpenLibrary(L, OpenMsgpackLibrary, "cmsgpack");
  for (const char* name : {"print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  RegisterRedisApi(L);

  lua_pushcfunction(L, RedisPcall);
  lua_setglobal(L, "pcall");
  lua_pushcfunction(L, SafeLoadstring);
  lua_setglobal(L, "loadstring");
  lua_pushcfunction(L, SafeLoad);
  lua_setglobal(L, "load");
  lua_pushcfunction(L, SeeThroughRawget);
  lua_setglobal(L, "rawget");
  lua_pushcfunction(L, SeeThroughNext);
  lua_pushvalue(L, -1);
  lua_setglobal(L, "next");
  lua_pushcclosure(L, SeeThroughPairs, 1);
  lua_setglobal(L, "pairs");
  Wrap(L, nullptr, "rawset", RefuseReadonly);
  Wrap(L, nullptr, "setmetatable", RefuseReadonly);
  for (const char* name : {"insert", "remove", "sort"}) Wrap(L, "table", name, RefuseReadonly);
  SetField(L, "math", "random", MathRandom);
  SetField(L, "math", "randomseed", MathRandomseed);

  for (const char* name :
       {"string", "table", "math", "coroutine", "cjson", "bit", "struct", "cmsgpack", "redis"}) {
    lua_getglobal(L, name);
    MakeReadonlyProxy(L);
    lua_setglobal(L, name);
  }
  // Strings' metatable: its __index becomes the string proxy, and getmetatable("") returns a
  // proxy of the metatable itself.
  lua_pushstring(L, "");
  lua_getmetatable(L, -1);
  lua_getglobal(L, "string");
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -1);
  MakeReadonlyProxy(L);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);

  lua_newtable(L);
  lua_pushcfunction(L, NonexistentGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, LUA_GLOBALSINDEX);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  MakeReadonlyProxy(L);
  // getmetatable(_G) is a table in Redis, and writing to it fails as read-only: here an empty
  // read-only table stands for it, so that the real globals never leak through it.
  lua_getmetatable(L, -1);
  lua_newtable(L);
  MakeReadonlyProxy(L);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  lua_pushvalue(L, -1);
  lua_setglobal(L, "_G");
  lua_replace(L, LUA_GLOBALSINDEX);
}

}  // namespace basalt
