#include "common/bitops.h"

#include <algorithm>
#include <bit>

namespace basalt {

uint64_t PopCount(std::string_view bytes) {
  uint64_t n = 0;
  size_t i = 0;
  // Eight bytes at a time: order does not matter for a count.
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    __builtin_memcpy(&word, bytes.data() + i, 8);
    n += static_cast<uint64_t>(std::popcount(word));
  }
  for (; i < bytes.size(); i++) n += std::popcount(static_cast<uint8_t>(bytes[i]));
  return n;
}

std::optional<uint64_t> FindBit(std::string_view bytes, bool bit) {
  const uint8_t skip = bit ? 0x00 : 0xff;  // a byte that cannot contain the bit
  for (size_t i = 0; i < bytes.size(); i++) {
    uint8_t b = static_cast<uint8_t>(bytes[i]);
    if (b == skip) continue;
    uint8_t probe = bit ? b : static_cast<uint8_t>(~b);
    return i * 8 + static_cast<uint64_t>(std::countl_zero(probe));
  }
  return std::nullopt;
}

namespace {

bool BitAt(std::string_view bytes, uint64_t pos) {
  return (static_cast<uint8_t>(bytes[pos >> 3]) >> (7 - (pos & 7))) & 1;
}

}  // namespace

uint64_t PopCountBits(std::string_view bytes, uint64_t first, uint64_t last) {
  uint64_t end = last + 1;  // half-open from here on
  uint64_t n = 0;
  // Partial bytes at either end bit by bit, whole bytes in between at once.
  for (; first < end && (first & 7) != 0; first++) n += BitAt(bytes, first);
  for (; end > first && (end & 7) != 0; end--) n += BitAt(bytes, end - 1);
  if (first < end) n += PopCount(bytes.substr(first >> 3, (end - first) >> 3));
  return n;
}

std::optional<uint64_t> FindBitInRange(std::string_view bytes, uint64_t first, uint64_t last,
                                       bool bit) {
  uint64_t end = last + 1;
  for (; first < end && (first & 7) != 0; first++) {
    if (BitAt(bytes, first) == bit) return first;
  }
  uint64_t whole_end = std::max(first, end & ~uint64_t{7});
  if (whole_end > first) {
    auto found = FindBit(bytes.substr(first >> 3, (whole_end - first) >> 3), bit);
    if (found) return first + *found;
  }
  for (uint64_t pos = whole_end; pos < end; pos++) {
    if (BitAt(bytes, pos) == bit) return pos;
  }
  return std::nullopt;
}

uint64_t GetBitField(std::string_view bytes, uint64_t offset, unsigned bits) {
  uint64_t value = 0;
  for (unsigned j = 0; j < bits; j++) {
    uint64_t pos = offset + j;
    uint64_t byte = pos >> 3;
    int bit = 0;
    if (byte < bytes.size()) bit = (static_cast<uint8_t>(bytes[byte]) >> (7 - (pos & 7))) & 1;
    value = (value << 1) | static_cast<uint64_t>(bit);
  }
  return value;
}

void SetBitField(std::string* bytes, uint64_t offset, unsigned bits, uint64_t value) {
  for (unsigned j = 0; j < bits; j++) {
    uint64_t pos = offset + j;
    int bit = (value >> (bits - 1 - j)) & 1;
    auto& byte = reinterpret_cast<uint8_t&>((*bytes)[pos >> 3]);
    uint8_t mask = static_cast<uint8_t>(1u << (7 - (pos & 7)));
    byte = bit ? (byte | mask) : (byte & static_cast<uint8_t>(~mask));
  }
}

bool ParseBitFieldType(std::string_view text, BitFieldType* out) {
  if (text.size() < 2 || text.size() > 3) return false;
  char sign = text[0];
  if (sign != 'i' && sign != 'I' && sign != 'u' && sign != 'U') return false;
  unsigned bits = 0;
  for (char ch : text.substr(1)) {
    if (ch < '0' || ch > '9') return false;
    bits = bits * 10 + static_cast<unsigned>(ch - '0');
  }
  out->is_signed = sign == 'i' || sign == 'I';
  out->bits = bits;
  return bits >= 1 && ((out->is_signed && bits <= 64) || (!out->is_signed && bits <= 63));
}

int64_t BitFieldToInt(uint64_t raw, const BitFieldType& type) {
  if (!type.is_signed || type.bits == 64) return static_cast<int64_t>(raw);
  uint64_t sign = uint64_t{1} << (type.bits - 1);
  if (raw & sign) raw |= ~uint64_t{0} << type.bits;
  return static_cast<int64_t>(raw);
}

std::optional<int64_t> FitBitField(__int128 value, const BitFieldType& type, BitOverflow overflow) {
  __int128 max, min;
  if (type.is_signed) {
    max = (static_cast<__int128>(1) << (type.bits - 1)) - 1;
    min = -max - 1;
  } else {
    max = (static_cast<__int128>(1) << type.bits) - 1;
    min = 0;
  }
  if (value >= min && value <= max) return static_cast<int64_t>(value);
  switch (overflow) {
    case BitOverflow::kFail:
      return std::nullopt;
    case BitOverflow::kSat:
      return static_cast<int64_t>(value > max ? max : min);
    case BitOverflow::kWrap:
      break;
  }
  // Keep the low bits, as two's complement arithmetic in the field's width would.
  uint64_t low = static_cast<uint64_t>(value);
  if (type.bits < 64) low &= (uint64_t{1} << type.bits) - 1;
  return type.is_signed ? BitFieldToInt(low, type) : static_cast<int64_t>(low);
}

}  // namespace basalt
