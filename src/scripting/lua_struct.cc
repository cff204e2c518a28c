// The `struct` library Redis scripts use: struct.pack(fmt, ...), struct.unpack(fmt, s [, i]),
// struct.size(fmt), over the format language of Roberto Ierusalimschy's struct library:
//   > < = byte order (big, little, native)     ! [n] maximum alignment (default native)
//   b B h H l L T i[n] I[n]  signed/unsigned integers of 1, 2, 8, size_t, n (default 4) bytes
//   f d  float, double        c[n]  n characters (c0: the whole string / the previous number)
//   s  zero-terminated string          x  one padding byte        space: ignored
// Integers are Lua numbers (doubles); sizes up to 32 bytes, beyond 8 bytes sign-extended.
#include <cstdint>
#include <cstring>
#include <string>

#include "scripting/lua_engine.h"

namespace basalt {

namespace {

constexpr int kMaxIntSize = 32;
constexpr size_t kNativeAlign = 8;

struct Header {
  bool little = true;
  size_t align = 1;
};

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

size_t ReadNumber(const char** fmt, size_t def) {
  if (!IsDigit(**fmt)) return def;
  size_t a = 0;
  while (IsDigit(**fmt) && a < 100000) a = a * 10 + static_cast<size_t>(*((*fmt)++) - '0');
  return a;
}

size_t IntSize(lua_State* L, const char** fmt) {
  size_t sz = ReadNumber(fmt, 4);
  if (sz == 0 || sz > kMaxIntSize)
    luaL_error(L, "integral size %d is larger than limit of %d", static_cast<int>(sz), kMaxIntSize);
  return sz;
}

// The size of one item; 0 for options that only change the header.
size_t OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return 2;
    case 'L':
    case 'l':
    case 'T':
      return 8;
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'c':
      return ReadNumber(fmt, 1);
    case 'i':
    case 'I':
      return IntSize(L, fmt);
    default:
      return 0;
  }
}

size_t Padding(const Header& h, size_t len, size_t size) {
  size_t align = size < h.align ? size : h.align;
  if (align <= 1 || (align & (align - 1)) != 0) return 0;
  return (align - (len & (align - 1))) & (align - 1);
}

// Applies a header option; false if `opt` is an item.
bool HeaderOption(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return true;
    case '>':
      h->little = false;
      return true;
    case '<':
    case '=':
      h->little = true;
      return true;
    case '!': {
      size_t a = ReadNumber(fmt, kNativeAlign);
      if (a == 0 || (a & (a - 1)) != 0)
        luaL_error(L, "alignment %d is not a power of 2", static_cast<int>(a));
      h->align = a;
      return true;
    }
    default:
      return false;
  }
}

void PutInteger(std::string* out, uint64_t v, bool little, size_t size) {
  char fill = static_cast<int64_t>(v) < 0 ? '\xff' : '\0';
  for (size_t i = 0; i < size; i++) {
    size_t byte = little ? i : size - 1 - i;
    out->push_back(byte < 8 ? static_cast<char>((v >> (8 * byte)) & 0xFF) : fill);
  }
}

uint64_t GetInteger(lua_State* L, const char* p, bool little, size_t size, bool is_signed) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; i++) {
    size_t at = little ? size - 1 - i : i;
    v = (v << 8) | static_cast<unsigned char>(p[at]);
  }
  if (size > 8) {
    // The bytes above the low 8 must only extend the value.
    for (size_t byte = 8; byte < size; byte++) {
      auto b = static_cast<unsigned char>(p[little ? byte : size - 1 - byte]);
      unsigned char expect = is_signed && static_cast<int64_t>(v) < 0 ? 0xff : 0;
      if (b != expect)
        luaL_error(L, "%d-byte integer does not fit into Lua Integer", static_cast<int>(size));
    }
  } else if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1) {
    v |= ~uint64_t{0} << (8 * size);
  }
  return v;
}

void CheckOption(lua_State* L, char opt) {
  if (strchr("bBhHlLTiIfdcsx", opt) == nullptr)
    luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
}

int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  lua_pushnil(L);  // like the original, one slot past the arguments: a missing one reads nil
  Header h;
  std::string out;
  int arg = 2;
  while (*fmt != '\0') {
    char opt = *fmt++;
    if (HeaderOption(L, opt, &fmt, &h)) continue;
    CheckOption(L, opt);
    size_t size = OptionSize(L, opt, &fmt);
    out.append(Padding(h, out.size(), size), '\0');
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I': {
        double n = luaL_checknumber(L, arg++);
        uint64_t bits =
            n < 0 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : static_cast<uint64_t>(n);
        PutInteger(&out, bits, h.little, size);
        break;
      }
      case 'x':
        out.push_back('\0');
        break;
      case 'f': {
        auto f = static_cast<float>(luaL_checknumber(L, arg++));
        uint32_t bits;
        memcpy(&bits, &f, 4);
        PutInteger(&out, bits, h.little, 4);
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        uint64_t bits;
        memcpy(&bits, &d, 8);
        PutInteger(&out, bits, h.little, 8);
        break;
      }
      case 'c':
      case 's': {
        size_t len;
        const char* s = luaL_checklstring(L, arg, &len);
        if (opt == 'c' && size == 0) size = len;
        if (opt == 'c') {
          luaL_argcheck(L, len >= size, arg, "string too short");
          out.append(s, size);
        } else {
          out.append(s, len);
          out.push_back('\0');
        }
        arg++;
        break;
      }
    }
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

int Unpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len;
  const char* data = luaL_checklstring(L, 2, &len);
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  pos--;
  Header h;
  int count = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    if (HeaderOption(L, opt, &fmt, &h)) continue;
    CheckOption(L, opt);
    size_t size = OptionSize(L, opt, &fmt);
    pos += Padding(h, pos, size);
    luaL_argcheck(L, pos <= len && size <= len - pos, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b':
      case 'h':
      case 'l':
      case 'i':
        lua_pushnumber(L, static_cast<double>(static_cast<int64_t>(
                              GetInteger(L, data + pos, h.little, size, true))));
        count++;
        break;
      case 'B':
      case 'H':
      case 'L':
      case 'T':
      case 'I':
        lua_pushnumber(L, static_cast<double>(GetInteger(L, data + pos, h.little, size, false)));
        count++;
        break;
      case 'x':
        break;
      case 'f': {
        auto bits = static_cast<uint32_t>(GetInteger(L, data + pos, h.little, 4, false));
        float f;
        memcpy(&f, &bits, 4);
        lua_pushnumber(L, f);
        count++;
        break;
      }
      case 'd': {
        uint64_t bits = GetInteger(L, data + pos, h.little, 8, false);
        double d;
        memcpy(&d, &bits, 8);
        lua_pushnumber(L, d);
        count++;
        break;
      }
      case 'c':
        if (size == 0) {
          // c0: the length is the number unpacked just before.
          if (count == 0 || !lua_isnumber(L, -1))
            luaL_error(L, "format 'c0' needs a previous size");
          size = static_cast<size_t>(lua_tonumber(L, -1));
          lua_pop(L, 1);
          count--;
          luaL_argcheck(L, size <= len - pos, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        count++;
        break;
      case 's': {
        const void* end = memchr(data + pos, '\0', len - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        count++;
        break;
      }
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return count + 1;
}

int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  size_t pos = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    if (HeaderOption(L, opt, &fmt, &h)) continue;
    CheckOption(L, opt);
    size_t size = OptionSize(L, opt, &fmt);
    pos += Padding(h, pos, size);
    if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
    if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStructLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", Pack}, {"unpack", Unpack}, {"size", Size}, {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace basalt
