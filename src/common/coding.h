// Fixed-width big-endian integer encoding for keys and values.
//
// Big-endian so that byte order equals numeric order for unsigned values: keys that embed a
// version or an expiry time sort by it. Readers take a string_view and advance it; they return
// false when the input is too short, so corrupt values are detected instead of read past.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace basalt {

inline void PutFixed8(std::string* dst, uint8_t v) {
  dst->push_back(static_cast<char>(v));
}

// The byte loops below are the portable definition. On a little-endian host a byte swap and one
// store do the same: the compiler does not always merge the loop's stores (a byte at a time,
// 18 instructions a field, when the destination is a buffer indexed by a running offset).
inline void EncodeFixed32(char* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    v = __builtin_bswap32(v);
    std::memcpy(p, &v, 4);
  } else {
    for (int i = 0; i < 4; i++) p[i] = static_cast<char>(v >> (24 - 8 * i));
  }
}

inline void EncodeFixed64(char* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    v = __builtin_bswap64(v);
    std::memcpy(p, &v, 8);
  } else {
    for (int i = 0; i < 8; i++) p[i] = static_cast<char>(v >> (56 - 8 * i));
  }
}

inline void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}

inline void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, 4);
    v = __builtin_bswap32(v);
  } else {
    for (int i = 0; i < 4; i++) v = (v << 8) | static_cast<uint8_t>(p[i]);
  }
  return v;
}

inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, 8);
    v = __builtin_bswap64(v);
  } else {
    for (int i = 0; i < 8; i++) v = (v << 8) | static_cast<uint8_t>(p[i]);
  }
  return v;
}

inline bool GetFixed8(std::string_view* in, uint8_t* v) {
  if (in->size() < 1) return false;
  *v = static_cast<uint8_t>((*in)[0]);
  in->remove_prefix(1);
  return true;
}

inline bool GetFixed32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = DecodeFixed32(in->data());
  in->remove_prefix(4);
  return true;
}

inline bool GetFixed64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = DecodeFixed64(in->data());
  in->remove_prefix(8);
  return true;
}

// A 32-bit length followed by the bytes: used where a variable field is followed by more key
// parts, so that "ab"+"c" and "a"+"bc" never collide.
inline void PutLengthPrefixed(std::string* dst, std::string_view s) {
  PutFixed32(dst, static_cast<uint32_t>(s.size()));
  dst->append(s.data(), s.size());
}

inline bool GetLengthPrefixed(std::string_view* in, std::string_view* out) {
  uint32_t len;
  if (!GetFixed32(in, &len) || in->size() < len) return false;
  *out = in->substr(0, len);
  in->remove_prefix(len);
  return true;
}

}  // namespace basalt
