// Memtable entries as RocksDB encodes them, and their order over a bytewise comparator: the
// decoding and the comparisons the skip list (skiplist_memtable.cc) runs on every step of a
// search, kept inline.
//
// An entry is a varint32 internal-key length, the internal key (the user key, then 8 bytes of
// sequence << 8 | type, little-endian), a varint32 value length and the value. RocksDB writes
// it (MemTable::Add); nothing here checks it, since it never comes from outside the process.
#pragma once

#include <rocksdb/slice.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace basalt::memtable {

using rocksdb::Slice;

// The bytes after a varint32 length at `at`.
inline Slice LengthPrefixedAt(const char* at) {
  const auto* p = reinterpret_cast<const uint8_t*>(at);
  uint32_t length = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    uint32_t byte = *p++;
    length |= (byte & 0x7f) << shift;
    if (byte < 0x80) break;
  }
  return Slice(reinterpret_cast<const char*>(p), length);
}

inline Slice InternalKeyOf(const char* entry) {
  return LengthPrefixedAt(entry);
}

// An internal key's last 8 bytes are (sequence << 8 | type), little-endian.
inline uint64_t TrailerOf(const Slice& internal_key) {
  uint64_t trailer;
  std::memcpy(&trailer, internal_key.data() + internal_key.size() - 8, 8);
  if constexpr (std::endian::native == std::endian::big) trailer = __builtin_bswap64(trailer);
  return trailer;
}

// RocksDB's ValueType of a Put, the low byte of its trailer (db/dbformat.h, not a public header).
constexpr uint64_t kTypeValue = 0x1;

// The bytewise order of the eight bytes at `a` and at `b`: <0, 0 or >0.
inline int CompareWords(const char* a, const char* b) {
  uint64_t x, y;
  std::memcpy(&x, a, 8);
  std::memcpy(&y, b, 8);
  if (x == y) return 0;
  if constexpr (std::endian::native == std::endian::little) {
    x = __builtin_bswap64(x);
    y = __builtin_bswap64(y);
  }
  return x < y ? -1 : 1;
}

// Bytewise three-way comparison of user keys, inline eight bytes at a time. A search compares
// the target with dozens of short keys that share a prefix; a call to memcmp for each costs more
// than the comparison itself (docs/benchmarks.md, "The memtable skip list").
inline int CompareUserKeys(const Slice& a, const Slice& b) {
  size_t common = std::min(a.size(), b.size());
  if (common >= 8) {
    size_t i = 0;
    for (; i + 8 < common; i += 8) {
      if (int r = CompareWords(a.data() + i, b.data() + i)) return r;
    }
    // The last eight common bytes, overlapping words found equal: one comparison instead of an
    // unpredictable branch per byte, and a member's distinguishing digits are often there.
    if (int r = CompareWords(a.data() + common - 8, b.data() + common - 8)) return r;
  } else {
    for (size_t i = 0; i < common; i++) {
      auto x = static_cast<uint8_t>(a[i]), y = static_cast<uint8_t>(b[i]);
      if (x != y) return x < y ? -1 : 1;
    }
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// RocksDB's internal key order over a bytewise user comparator: user keys ascending, then the
// newest (largest trailer) first.
inline int CompareBytewise(const Slice& a, const Slice& b) {
  Slice user_a(a.data(), a.size() - 8), user_b(b.data(), b.size() - 8);
  int r = CompareUserKeys(user_a, user_b);
  if (r != 0) return r;
  uint64_t trailer_a = TrailerOf(a), trailer_b = TrailerOf(b);
  return trailer_a > trailer_b ? -1 : (trailer_a < trailer_b ? 1 : 0);
}

// Whether `entry`'s user key sorts before `user_key` (bytewise).
inline bool UserKeyBefore(const char* entry, const Slice& user_key) {
  Slice internal_key = InternalKeyOf(entry);
  return CompareUserKeys(Slice(internal_key.data(), internal_key.size() - 8), user_key) < 0;
}

// A 64-bit hash of a user key, for the memtable's index of its keys (skiplist_list.h): eight
// bytes at a time, then a final mix (MurmurHash3's) so that keys differing only in their last
// bytes (members numbered in sequence) spread over the low bits a bucket is chosen by.
inline uint64_t HashUserKey(const Slice& key) {
  constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ULL;
  uint64_t h = key.size() * kMultiplier;
  size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, key.data() + i, 8);
    h = (h ^ word) * kMultiplier;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, key.data() + i, key.size() - i);
  h ^= tail;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace basalt::memtable
