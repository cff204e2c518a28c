#include "scripting/lua_convert.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace basalt {

namespace {

// A failed checkstack only happens for absurdly deep values; Redis panics there, a script
// error is kinder.
void EnsureStack(lua_State* L, int n) {
  if (!lua_checkstack(L, n)) luaL_error(L, "reached lua stack limit");
}

std::string_view TakeLine(std::string_view* in) {
  size_t end = in->find("\r\n");
  if (end == std::string_view::npos) end = in->size();
  std::string_view line = in->substr(0, end);
  in->remove_prefix(std::min(in->size(), end + 2));
  return line;
}

int64_t LineInteger(std::string_view line) {
  return std::strtoll(std::string(line).c_str(), nullptr, 10);
}

std::string_view TakeBulk(std::string_view* in, int64_t len) {
  std::string_view body = in->substr(0, static_cast<size_t>(len));
  in->remove_prefix(std::min(in->size(), body.size() + 2));
  return body;
}

// {name = <value on top>}: pops the value, pushes the table.
void WrapInField(lua_State* L, const char* name) {
  lua_newtable(L);
  lua_pushstring(L, name);
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  lua_remove(L, -2);
}

void PushAggregate(lua_State* L, char type, int64_t n, std::string_view* in) {
  EnsureStack(L, 4);
  lua_newtable(L);
  if (type == '%') {
    for (int64_t i = 0; i < n; i++) {
      PushReplyAsLua(L, in);
      PushReplyAsLua(L, in);
      lua_settable(L, -3);
    }
    return WrapInField(L, "map");
  }
  if (type == '~') {
    for (int64_t i = 0; i < n; i++) {
      PushReplyAsLua(L, in);
      lua_pushboolean(L, 1);
      lua_settable(L, -3);
    }
    return WrapInField(L, "set");
  }
  for (int64_t i = 0; i < n; i++) {
    lua_pushnumber(L, static_cast<lua_Number>(i + 1));
    PushReplyAsLua(L, in);
    lua_settable(L, -3);
  }
}

}  // namespace

int64_t LuaNumberToInteger(double v) {
  if (std::isnan(v) || v >= 9223372036854775808.0 || v < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

void PushErrorTable(lua_State* L, std::string_view text) {
  std::string code = "ERR";
  std::string_view msg = text;
  if (!text.empty() && text[0] == '-') {
    size_t space = text.find(' ');
    if (space == std::string_view::npos) {
      msg = text.substr(1);
    } else {
      code = std::string(text.substr(1, space - 1));
      msg = text.substr(space + 1);
    }
  }
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.remove_prefix(1);
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
  std::string full = code;
  full.push_back(' ');
  full.append(msg);
  EnsureStack(L, 3);
  lua_newtable(L);
  lua_pushstring(L, "err");
  lua_pushlstring(L, full.data(), full.size());
  lua_settable(L, -3);
}

void ReplyErrorTable(lua_State* L, const std::string& text, Reply& reply) {
  lua_pushstring(L, kErrorCountedField);
  lua_rawget(L, -2);
  bool counted = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (counted) {
    reply.ErrorNotCounted(text);
  } else {
    reply.Error(text);
  }
}

void PushReplyAsLua(lua_State* L, std::string_view* in) {
  EnsureStack(L, 3);
  if (in->empty()) return lua_pushnil(L);
  char type = (*in)[0];
  in->remove_prefix(1);
  std::string_view line = TakeLine(in);
  switch (type) {
    case '+':
      lua_pushlstring(L, line.data(), line.size());
      return WrapInField(L, "ok");
    case '-': {
      std::string text("-");  // built with append: GCC 12 warns falsely on "lit" + string
      text.append(line);
      PushErrorTable(L, text);
      // The command that replied it has counted it in the error statistics: a script that
      // passes it on does not count it again (ReplyErrorTable).
      lua_pushstring(L, kErrorCountedField);
      lua_pushboolean(L, 1);
      lua_settable(L, -3);
      return;
    }
    case ':':
      return lua_pushnumber(L, static_cast<lua_Number>(LineInteger(line)));
    case '$':
    case '=': {
      int64_t len = LineInteger(line);
      if (len < 0) return lua_pushboolean(L, 0);
      std::string_view body = TakeBulk(in, len);
      if (type == '$') return lua_pushlstring(L, body.data(), body.size());
      lua_newtable(L);
      lua_pushstring(L, "string");
      std::string_view text = body.size() >= 4 ? body.substr(4) : std::string_view();
      lua_pushlstring(L, text.data(), text.size());
      lua_settable(L, -3);
      lua_pushstring(L, "format");
      lua_pushlstring(L, body.data(), std::min<size_t>(3, body.size()));
      lua_settable(L, -3);
      return WrapInField(L, "verbatim_string");
    }
    case '*':
    case '>':
    case '%':
    case '~': {
      int64_t n = LineInteger(line);
      if (n < 0) return lua_pushboolean(L, 0);
      return PushAggregate(L, type, n, in);
    }
    case '|': {
      // An attribute map: scripts are not shown attributes (as in Redis), only the reply that
      // follows it.
      int64_t n = LineInteger(line);
      for (int64_t i = 0; i < 2 * n && !in->empty(); i++) {
        PushReplyAsLua(L, in);
        lua_pop(L, 1);
      }
      return PushReplyAsLua(L, in);
    }
    case '_':
      return lua_pushnil(L);
    case ',':
      lua_pushnumber(L, std::strtod(std::string(line).c_str(), nullptr));
      return WrapInField(L, "double");
    case '#':
      return lua_pushboolean(L, line == "t");
    case '(':
      lua_pushlstring(L, line.data(), line.size());
      return WrapInField(L, "big_number");
    default:
      return lua_pushnil(L);
  }
}

namespace {

std::string SpacesForNewlines(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  return out;
}

// Reads t[field] (raw) onto the stack and returns its type.
int RawField(lua_State* L, const char* field) {
  lua_pushstring(L, field);
  lua_rawget(L, -2);
  return lua_type(L, -1);
}

// The number of key/value pairs of the table on top of the stack.
size_t CountPairs(lua_State* L) {
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    n++;
  }
  return n;
}

// {big_number = "digits"}, the string on top: a RESP3 big number, a bulk string in RESP2.
void ReplyBigNumber(lua_State* L, Reply& reply) {
  size_t len;
  const char* s = lua_tolstring(L, -1, &len);
  std::string digits = SpacesForNewlines(std::string_view(s, len));
  if (reply.resp() >= 3) {
    std::string line("(");
    line.append(digits).append("\r\n");
    reply.Raw(line);
  } else {
    reply.Bulk(digits);
  }
}

// {verbatim_string = {format = "txt", string = "..."}}, the inner table on top: a RESP3
// verbatim string, a bulk string in RESP2. False (nothing replied) if a field is missing.
bool ReplyVerbatim(lua_State* L, Reply& reply) {
  int vs = lua_gettop(L);
  lua_pushstring(L, "format");
  lua_rawget(L, vs);
  lua_pushstring(L, "string");
  lua_rawget(L, vs);
  bool done = lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING;
  if (done) {
    size_t len;
    const char* s = lua_tolstring(L, -1, &len);
    std::string format = std::string(lua_tostring(L, -2)).substr(0, 3);
    if (reply.resp() >= 3) {
      format.resize(3, ' ');
      std::string header("=");
      header.append(std::to_string(len + 4)).append("\r\n").append(format).append(":");
      reply.Raw(header);
      reply.Raw(std::string_view(s, len));
      reply.Raw("\r\n");
    } else {
      reply.Bulk(std::string_view(s, len));
    }
  }
  lua_settop(L, vs);
  return done;
}

// {map = {...}} or {set = {...}}, the inner table on top: a RESP3 map of its pairs, or a set
// of its keys (flattened to arrays for RESP2 by Reply).
void ReplyMapOrSet(lua_State* L, Reply& reply, int script_resp, bool map) {
  size_t n = CountPairs(L);
  if (map) {
    reply.Map(n);
  } else {
    reply.Set(n);
  }
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (map) {
      lua_pushvalue(L, -2);
      ReplyFromLua(L, reply, script_resp);  // key
      ReplyFromLua(L, reply, script_resp);  // value
    } else {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      ReplyFromLua(L, reply, script_resp);
    }
  }
}

// Pushes field `name` of the table on top if it has type `type`; otherwise pushes nothing.
bool FieldOfType(lua_State* L, const char* name, int type) {
  if (RawField(L, name) == type) return true;
  lua_pop(L, 1);
  return false;
}

// {verbatim_string = {...}}: replies and leaves the inner table on top, or pushes nothing and
// returns false when the field is absent or malformed.
bool ReplyVerbatimField(lua_State* L, Reply& reply) {
  if (!FieldOfType(L, "verbatim_string", LUA_TTABLE)) return false;
  if (ReplyVerbatim(L, reply)) return true;
  lua_pop(L, 1);
  return false;
}

// Handles the single-field tables; true if the table (still on top) was one.
bool ReplySpecialTable(lua_State* L, Reply& reply, int script_resp) {
  if (FieldOfType(L, "err", LUA_TSTRING)) {
    std::string text = lua_tostring(L, -1);
    lua_pop(L, 1);
    ReplyErrorTable(L, text, reply);
    lua_pushnil(L);  // stands for the field the other branches leave on top
  } else if (FieldOfType(L, "ok", LUA_TSTRING)) {
    reply.Simple(SpacesForNewlines(lua_tostring(L, -1)));
  } else if (FieldOfType(L, "double", LUA_TNUMBER)) {
    reply.Double(lua_tonumber(L, -1));
  } else if (FieldOfType(L, "big_number", LUA_TSTRING)) {
    ReplyBigNumber(L, reply);
  } else if (!ReplyVerbatimField(L, reply)) {
    if (FieldOfType(L, "map", LUA_TTABLE)) {
      ReplyMapOrSet(L, reply, script_resp, true);
    } else if (FieldOfType(L, "set", LUA_TTABLE)) {
      ReplyMapOrSet(L, reply, script_resp, false);
    } else {
      return false;
    }
  }
  lua_pop(L, 1);
  return true;
}

}  // namespace

void ReplyFromLua(lua_State* L, Reply& reply, int script_resp) {
  if (!lua_checkstack(L, 4)) {
    reply.Error("ERR reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      reply.Bulk(std::string_view(s, len));
      break;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, -1)) {
          reply.Integer(1);
        } else {
          reply.Null();
        }
      } else {
        reply.Bool(lua_toboolean(L, -1));
      }
      break;
    case LUA_TNUMBER:
      reply.Integer(LuaNumberToInteger(lua_tonumber(L, -1)));
      break;
    case LUA_TTABLE: {
      if (ReplySpecialTable(L, reply, script_resp)) break;
      size_t n = 0;
      while (true) {
        lua_rawgeti(L, -1, static_cast<int>(n + 1));
        bool nil = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (nil) break;
        n++;
      }
      reply.Array(n);
      for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, static_cast<int>(i));
        ReplyFromLua(L, reply, script_resp);
      }
      break;
    }
    default:
      reply.Null();
  }
  lua_pop(L, 1);
}

}  // namespace basalt
