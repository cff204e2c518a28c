#include "common/crc64.h"

#include <array>

namespace basalt {

namespace {

// The Jones polynomial with its bits reversed, for the reflected (LSB-first) form.
constexpr uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ULL;

// Eight tables for slicing-by-8: table[k][b] is the CRC of byte b followed by k zero bytes, so
// eight input bytes cost eight lookups and no per-bit work. Payloads of large keys reuse this.
using Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Tables BuildTables() {
  Tables t{};
  for (uint64_t b = 0; b < 256; b++) {
    uint64_t crc = b;
    for (int bit = 0; bit < 8; bit++) crc = (crc & 1) ? (crc >> 1) ^ kReflectedPoly : crc >> 1;
    t[0][b] = crc;
  }
  for (size_t k = 1; k < 8; k++) {
    for (size_t b = 0; b < 256; b++) t[k][b] = t[0][t[k - 1][b] & 0xff] ^ (t[k - 1][b] >> 8);
  }
  return t;
}

constexpr Tables kTables = BuildTables();

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word = 0;
    for (int i = 7; i >= 0; i--) word = (word << 8) | p[i];  // little-endian, any alignment
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff] ^
          kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^
          kTables[2][(crc >> 40) & 0xff] ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace basalt
