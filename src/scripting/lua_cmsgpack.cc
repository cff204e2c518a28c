// The `cmsgpack` library Redis scripts use (the API of lua-cmsgpack):
//   cmsgpack.pack(v, ...)           -> the MessagePack encodings of the values, concatenated
//   cmsgpack.unpack(s)              -> every value encoded in s
//   cmsgpack.unpack_one(s [, off])  -> next offset (-1 at the end), one value
//   cmsgpack.unpack_limit(s, n [, off]) -> next offset (-1 at the end), up to n values
// Numbers with an integral value become integers in the smallest encoding, other numbers
// float 32 when that is exact, else float 64. A table whose keys are exactly 1..n is an array,
// any other table a map. Values that MessagePack cannot hold (functions, ...) and tables nested
// deeper than 16 levels are encoded as nil, as lua-cmsgpack does.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "scripting/lua_engine.h"

namespace basalt {

namespace {

constexpr int kMaxPackNesting = 16;
constexpr int kMaxUnpackNesting = 1000;

void PutBig(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; i--) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutTagged(std::string* out, uint8_t tag, uint64_t v, int bytes) {
  out->push_back(static_cast<char>(tag));
  PutBig(out, v, bytes);
}

void EncodeInteger(std::string* out, int64_t n) {
  if (n >= 0) {
    auto u = static_cast<uint64_t>(n);
    if (u < 128) return out->push_back(static_cast<char>(u));
    if (u <= 0xFF) return PutTagged(out, 0xcc, u, 1);
    if (u <= 0xFFFF) return PutTagged(out, 0xcd, u, 2);
    if (u <= 0xFFFFFFFFULL) return PutTagged(out, 0xce, u, 4);
    return PutTagged(out, 0xcf, u, 8);
  }
  auto u = static_cast<uint64_t>(n);
  if (n >= -32) return out->push_back(static_cast<char>(static_cast<int8_t>(n)));
  if (n >= -128) return PutTagged(out, 0xd0, u, 1);
  if (n >= -32768) return PutTagged(out, 0xd1, u, 2);
  if (n >= -2147483648LL) return PutTagged(out, 0xd2, u, 4);
  PutTagged(out, 0xd3, u, 8);
}

void EncodeNumber(std::string* out, double n) {
  if (std::isfinite(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
      static_cast<double>(static_cast<int64_t>(n)) == n) {
    return EncodeInteger(out, static_cast<int64_t>(n));
  }
  auto f = static_cast<float>(n);
  if (static_cast<double>(f) == n) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return PutTagged(out, 0xca, bits, 4);
  }
  uint64_t bits;
  memcpy(&bits, &n, 8);
  PutTagged(out, 0xcb, bits, 8);
}

void EncodeString(std::string* out, const char* s, size_t len) {
  if (len < 32) {
    out->push_back(static_cast<char>(0xa0 | len));
  } else if (len <= 0xFF) {
    PutTagged(out, 0xd9, len, 1);
  } else if (len <= 0xFFFF) {
    PutTagged(out, 0xda, len, 2);
  } else {
    PutTagged(out, 0xdb, len, 4);
  }
  out->append(s, len);
}

void EncodeValue(lua_State* L, std::string* out, int depth);

// Array length if the table on top has exactly the keys 1..n (no holes), else -1.
int64_t ArrayLength(lua_State* L) {
  int64_t count = 0;
  double max = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return -1;
    }
    double k = lua_tonumber(L, -1);
    if (k <= 0 || std::floor(k) != k) {
      lua_pop(L, 1);
      return -1;
    }
    if (k > max) max = k;
    count++;
  }
  return max == static_cast<double>(count) ? count : -1;
}

void EncodeTable(lua_State* L, std::string* out, int depth) {
  int64_t n = ArrayLength(L);
  if (n >= 0) {
    if (n < 16) {
      out->push_back(static_cast<char>(0x90 | n));
    } else {
      PutTagged(out, n <= 0xFFFF ? 0xdc : 0xdd, static_cast<uint64_t>(n), n <= 0xFFFF ? 2 : 4);
    }
    for (int64_t i = 1; i <= n; i++) {
      lua_rawgeti(L, -1, static_cast<int>(i));
      EncodeValue(L, out, depth + 1);
      lua_pop(L, 1);
    }
    return;
  }
  uint64_t pairs = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    pairs++;
  }
  if (pairs < 16) {
    out->push_back(static_cast<char>(0x80 | pairs));
  } else {
    PutTagged(out, pairs <= 0xFFFF ? 0xde : 0xdf, pairs, pairs <= 0xFFFF ? 2 : 4);
  }
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pushvalue(L, -2);
    EncodeValue(L, out, depth + 1);  // key
    lua_pop(L, 1);
    EncodeValue(L, out, depth + 1);  // value
    lua_pop(L, 1);
  }
}

// Encodes the value on top of the stack (left there).
void EncodeValue(lua_State* L, std::string* out, int depth) {
  luaL_checkstack(L, 4, "too deeply nested");
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      return EncodeString(out, s, len);
    }
    case LUA_TBOOLEAN:
      return out->push_back(static_cast<char>(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
    case LUA_TNUMBER:
      return EncodeNumber(out, lua_tonumber(L, -1));
    case LUA_TTABLE:
      if (depth < kMaxPackNesting) return EncodeTable(L, out, depth);
      [[fallthrough]];
    default:
      out->push_back(static_cast<char>(0xc0));
  }
}

int Pack(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  std::string out;
  for (int i = 1; i <= argc; i++) {
    lua_pushvalue(L, i);
    EncodeValue(L, &out, 0);
    lua_pop(L, 1);
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

struct Cursor {
  lua_State* L;
  const unsigned char* p;
  size_t left;
};

[[noreturn]] void Truncated(lua_State* L) {
  luaL_error(L, "Missing bytes in input.");
  __builtin_unreachable();
}

uint64_t TakeBig(Cursor& c, size_t bytes) {
  if (c.left < bytes) Truncated(c.L);
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; i++) v = (v << 8) | c.p[i];
  c.p += bytes;
  c.left -= bytes;
  return v;
}

void DecodeValue(Cursor& c, int depth);

void DecodeString(Cursor& c, size_t len) {
  if (c.left < len) Truncated(c.L);
  lua_pushlstring(c.L, reinterpret_cast<const char*>(c.p), len);
  c.p += len;
  c.left -= len;
}

void DecodeArray(Cursor& c, uint64_t n, int depth) {
  lua_newtable(c.L);
  for (uint64_t i = 1; i <= n; i++) {
    DecodeValue(c, depth + 1);
    lua_rawseti(c.L, -2, static_cast<int>(i));
  }
}

void DecodeMap(Cursor& c, uint64_t n, int depth) {
  lua_newtable(c.L);
  for (uint64_t i = 0; i < n; i++) {
    DecodeValue(c, depth + 1);
    DecodeValue(c, depth + 1);
    if (lua_isnil(c.L, -2)) {
      lua_pop(c.L, 2);  // a nil key cannot be stored
    } else {
      lua_rawset(c.L, -3);
    }
  }
}

void DecodeValue(Cursor& c, int depth) {
  lua_State* L = c.L;
  if (depth > kMaxUnpackNesting) luaL_error(L, "Bad data format in input.");
  luaL_checkstack(L, 4, "too deeply nested");
  uint8_t tag = static_cast<uint8_t>(TakeBig(c, 1));
  if (tag < 0x80) return lua_pushnumber(L, tag);
  if (tag >= 0xe0) return lua_pushnumber(L, static_cast<int8_t>(tag));
  if ((tag & 0xe0) == 0xa0) return DecodeString(c, tag & 0x1f);
  if ((tag & 0xf0) == 0x90) return DecodeArray(c, tag & 0x0f, depth);
  if ((tag & 0xf0) == 0x80) return DecodeMap(c, tag & 0x0f, depth);
  switch (tag) {
    case 0xc0:
      return lua_pushnil(L);
    case 0xc2:
      return lua_pushboolean(L, 0);
    case 0xc3:
      return lua_pushboolean(L, 1);
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
      return lua_pushnumber(L, static_cast<double>(TakeBig(c, size_t{1} << (tag - 0xcc))));
    case 0xd0:
      return lua_pushnumber(L, static_cast<int8_t>(TakeBig(c, 1)));
    case 0xd1:
      return lua_pushnumber(L, static_cast<int16_t>(TakeBig(c, 2)));
    case 0xd2:
      return lua_pushnumber(L, static_cast<int32_t>(TakeBig(c, 4)));
    case 0xd3:
      return lua_pushnumber(L, static_cast<double>(static_cast<int64_t>(TakeBig(c, 8))));
    case 0xca: {
      auto bits = static_cast<uint32_t>(TakeBig(c, 4));
      float f;
      memcpy(&f, &bits, 4);
      return lua_pushnumber(L, f);
    }
    case 0xcb: {
      uint64_t bits = TakeBig(c, 8);
      double d;
      memcpy(&d, &bits, 8);
      return lua_pushnumber(L, d);
    }
    case 0xc4:
    case 0xd9:
      return DecodeString(c, TakeBig(c, 1));
    case 0xc5:
    case 0xda:
      return DecodeString(c, TakeBig(c, 2));
    case 0xc6:
    case 0xdb:
      return DecodeString(c, TakeBig(c, 4));
    case 0xdc:
      return DecodeArray(c, TakeBig(c, 2), depth);
    case 0xdd:
      return DecodeArray(c, TakeBig(c, 4), depth);
    case 0xde:
      return DecodeMap(c, TakeBig(c, 2), depth);
    case 0xdf:
      return DecodeMap(c, TakeBig(c, 4), depth);
    default:
      luaL_error(L, "Bad data format in input.");
  }
}

// Decodes up to `limit` values (0: all) from `offset`; with `with_offset`, first returns the
// offset after them (-1 when the input is used up).
int UnpackFull(lua_State* L, int64_t limit, int64_t offset, bool with_offset) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(limit));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  Cursor c{L, reinterpret_cast<const unsigned char*>(s) + offset,
           len - static_cast<size_t>(offset)};
  int base = lua_gettop(L);
  if (with_offset) lua_pushnil(L);  // replaced below
  int64_t count = 0;
  while (c.left > 0 && (limit == 0 || count < limit)) {
    DecodeValue(c, 0);
    count++;
  }
  if (with_offset) {
    lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
    lua_replace(L, base + 1);
  }
  return lua_gettop(L) - base;
}

int Unpack(lua_State* L) {
  return UnpackFull(L, 0, 0, false);
}

int UnpackOne(lua_State* L) {
  return UnpackFull(L, 1, luaL_optinteger(L, 2, 0), true);
}

int UnpackLimit(lua_State* L) {
  return UnpackFull(L, luaL_checkinteger(L, 2), luaL_optinteger(L, 3, 0), true);
}

}  // namespace

int OpenMsgpackLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"pack", Pack},
                                        {"unpack", Unpack},
                                        {"unpack_one", UnpackOne},
                                        {"unpack_limit", UnpackLimit},
                                        {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  lua_pushstring(L, "lua-cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushstring(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  return 1;
}

}  // namespace basalt
