// Bit-level helpers over byte strings for the bitmap commands, with Redis's bit numbering: bit 0
// is the most significant bit of byte 0.
//
// They work on pieces of a larger value so that a command can stream a sparse bitmap (stored in
// segments) without materializing its zeros: counts add up across pieces and a search resumes in
// the next piece.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace basalt {

// Number of set bits in `bytes`.
uint64_t PopCount(std::string_view bytes);

// Position (bit index within `bytes`) of the first bit equal to `bit`, or nullopt.
std::optional<uint64_t> FindBit(std::string_view bytes, bool bit);

// The same two over the bits [first, last] of `bytes` (inclusive bit indexes, last < 8 * size).
uint64_t PopCountBits(std::string_view bytes, uint64_t first, uint64_t last);
std::optional<uint64_t> FindBitInRange(std::string_view bytes, uint64_t first, uint64_t last,
                                       bool bit);

// Reads the `bits`-wide (1..64) unsigned big-endian field starting at bit `offset` of `bytes`;
// bits past the end read as zero.
uint64_t GetBitField(std::string_view bytes, uint64_t offset, unsigned bits);
// Writes the low `bits` bits of `value` at bit `offset`; `bytes` must be long enough.
void SetBitField(std::string* bytes, uint64_t offset, unsigned bits, uint64_t value);

// BITFIELD integer types and overflow handling, as Redis defines them.
struct BitFieldType {
  bool is_signed = false;
  unsigned bits = 0;  // i1..i64, u1..u63
};
// Parses "i8", "u16", ...; false for anything Redis rejects (u64 included).
bool ParseBitFieldType(std::string_view text, BitFieldType* out);

enum class BitOverflow { kWrap, kSat, kFail };

// The field value as a signed integer (sign-extended for signed types).
int64_t BitFieldToInt(uint64_t raw, const BitFieldType& type);
// Fits `value` (the mathematically exact result, as a 128-bit integer) into `type` under
// `overflow`. Returns nullopt on FAIL overflow; otherwise the value to store (as a signed number
// in the type's range).
std::optional<int64_t> FitBitField(__int128 value, const BitFieldType& type, BitOverflow overflow);

}  // namespace basalt
