// HashBytes: a fast 64-bit keyed hash of the short byte strings the server hashes for every
// command (keys for their lock stripe and metadata-cache slot, members' keys in a batch, command
// names).
//
// std::hash (libstdc++'s MurmurHash2 variant) walks these a byte at a time at the ends and costs
// 3-4% of a pipelined push's instructions (docs/benchmarks.md, "Per-command bookkeeping"). This
// one reads whole words, sixteen bytes a step, and folds each step's two words into the state
// with a 64x64->128-bit multiply, whose two halves xored together mix every input bit into every
// output bit.
//
// The keys hashed are the clients', so the hash is keyed with a secret drawn when the process
// starts. A multiply by zero loses its other operand: with a fixed constant in place of the
// secret, any key whose word cancels that constant would hash alike whatever its other bytes
// hold, and one MSET of 20,000 such keys would take 4 s of a worker in its batch's map. Values
// live in memory only: nothing stored on disk or sent to a client depends on them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace basalt {

namespace hash_internal {

inline uint64_t Fold(uint64_t a, uint64_t b) {
  unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

inline uint64_t Load64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

inline uint64_t Load32(const char* p) {
  uint32_t word;
  std::memcpy(&word, p, 4);
  return word;
}

// Odd constants with about half their bits set (the fractional parts of the golden ratio and of
// sqrt(3)), so that a multiply by them spreads every bit. They only finish the hash: every
// multiply that takes input takes it xored with the key or with state made from it.
constexpr uint64_t kLength = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kLast = 0xbb67ae8584caa73bULL;

}  // namespace hash_internal

// What HashBytes is keyed with.
struct HashKey {
  uint64_t start;  // the state before the first word
  uint64_t word;   // xored into the first word of each step
};

// This process's key, random (getrandom) and drawn before anything defined after this header is
// initialized.
HashKey RandomHashKey();
inline const HashKey kProcessHashKey = RandomHashKey();

inline uint64_t HashBytes(std::string_view s, const HashKey& key) {
  using namespace hash_internal;
  const char* p = s.data();
  size_t n = s.size();
  uint64_t state = key.start ^ n;
  while (n > 16) {
    state = Fold(Load64(p) ^ key.word, Load64(p + 8) ^ state);
    p += 16;
    n -= 16;
  }
  // The last 1-16 bytes, as two words that may overlap (or, below four bytes, the first, middle
  // and last byte): every byte is read, none twice into one word.
  uint64_t a = 0, b = 0;
  if (n > 8) {
    a = Load64(p);
    b = Load64(p + n - 8);
  } else if (n >= 4) {
    a = Load32(p);
    b = Load32(p + n - 4);
  } else if (n > 0) {
    a = (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16) |
        (static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8) |
        static_cast<uint8_t>(p[n - 1]);
  }
  return Fold(Fold(a ^ key.word, b ^ state) ^ kLast, s.size() ^ kLength);
}

inline uint64_t HashBytes(std::string_view s) {
  return HashBytes(s, kProcessHashKey);
}

}  // namespace basalt
