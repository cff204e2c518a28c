#include "common/rdb_encoding.h"

#include "common/crc64.h"
#include "common/lzf.h"

namespace basalt::rdb {

namespace {

// The two top bits of a length's first byte.
constexpr uint8_t kLen6Bit = 0;
constexpr uint8_t kLen14Bit = 1;
constexpr uint8_t kEncodedValue = 3;
// The whole first byte for the two long forms (big-endian length follows).
constexpr uint8_t kLen32Bit = 0x80;
constexpr uint8_t kLen64Bit = 0x81;
// Encoding types after kEncodedValue.
constexpr uint8_t kEncInt8 = 0;
constexpr uint8_t kEncInt16 = 1;
constexpr uint8_t kEncInt32 = 2;
constexpr uint8_t kEncLzf = 3;

// An LZF back reference expands three input bytes to at most 264 output bytes: a claimed
// length beyond that ratio cannot be real, and is refused before its buffer is allocated.
constexpr uint64_t kMaxLzfRatio = 88;
// No string a server writes is longer than Redis's 512 MB limit; a larger claim is refused
// rather than allocated.
constexpr uint64_t kMaxPlainLength = 512ull << 20;

void AppendBigEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; i--) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t LittleEndian(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

}  // namespace

void AppendLength(std::string* out, uint64_t len) {
  if (len < (1 << 6)) {
    out->push_back(static_cast<char>(len));
  } else if (len < (1 << 14)) {
    out->push_back(static_cast<char>((kLen14Bit << 6) | (len >> 8)));
    out->push_back(static_cast<char>(len & 0xff));
  } else if (len <= UINT32_MAX) {
    out->push_back(static_cast<char>(kLen32Bit));
    AppendBigEndian(out, len, 4);
  } else {
    out->push_back(static_cast<char>(kLen64Bit));
    AppendBigEndian(out, len, 8);
  }
}

void AppendString(std::string* out, std::string_view s) {
  AppendLength(out, s.size());
  out->append(s);
}

void AppendDumpFooter(std::string* payload, uint16_t version) {
  payload->push_back(static_cast<char>(version & 0xff));
  payload->push_back(static_cast<char>(version >> 8));
  uint64_t crc = Crc64(0, *payload);
  for (int i = 0; i < 8; i++) payload->push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
}

bool VerifyDumpPayload(std::string_view payload, uint16_t* version, std::string_view* body) {
  if (payload.size() < 10) return false;
  std::string_view footer = payload.substr(payload.size() - 10);
  *version = static_cast<uint16_t>(LittleEndian(footer.substr(0, 2)));
  if (*version > kNewestReadableVersion) return false;
  if (Crc64(0, payload.substr(0, payload.size() - 8)) != LittleEndian(footer.substr(2)))
    return false;
  *body = payload.substr(0, payload.size() - 10);
  return true;
}

bool Reader::ReadBytes(size_t n, std::string_view* out) {
  if (in_.size() < n) {
    exhausted_ = exhausted_ || n <= total_;
    return false;
  }
  *out = in_.substr(0, n);
  in_.remove_prefix(n);
  total_ -= n;
  return true;
}

bool Reader::Fits(uint64_t count, uint64_t min_bytes) {
  if (count <= in_.size() / min_bytes) return true;
  exhausted_ = exhausted_ || count <= total_ / min_bytes;
  return false;
}

bool Reader::ReadByte(uint8_t* byte) {
  std::string_view b;
  if (!ReadBytes(1, &b)) return false;
  *byte = static_cast<uint8_t>(b[0]);
  return true;
}

bool Reader::ReadLength(uint64_t* len, bool* encoded) {
  uint8_t first;
  if (!ReadByte(&first)) return false;
  *encoded = false;
  uint8_t kind = first >> 6;
  std::string_view rest;
  if (kind == kLen6Bit) {
    *len = first & 0x3f;
  } else if (kind == kLen14Bit) {
    uint8_t second;
    if (!ReadByte(&second)) return false;
    *len = (static_cast<uint64_t>(first & 0x3f) << 8) | second;
  } else if (kind == kEncodedValue) {
    *encoded = true;
    *len = first & 0x3f;
  } else if (first == kLen32Bit || first == kLen64Bit) {
    if (!ReadBytes(first == kLen32Bit ? 4 : 8, &rest)) return false;
    *len = 0;
    for (char c : rest) *len = (*len << 8) | static_cast<uint8_t>(c);
  } else {
    return false;
  }
  return true;
}

bool Reader::ReadString(std::string* out) {
  uint64_t len;
  bool encoded;
  if (!ReadLength(&len, &encoded)) return false;
  std::string_view bytes;
  if (!encoded) {
    if (!Fits(len, 1) || !ReadBytes(len, &bytes)) return false;
    out->assign(bytes);
    return true;
  }
  int width = len == kEncInt8 ? 1 : len == kEncInt16 ? 2 : len == kEncInt32 ? 4 : 0;
  if (width != 0) {
    if (!ReadBytes(width, &bytes)) return false;
    uint64_t raw = LittleEndian(bytes);
    // Sign-extend from the stored width.
    int64_t value = static_cast<int64_t>(raw << (64 - 8 * width)) >> (64 - 8 * width);
    *out = std::to_string(value);
    return true;
  }
  if (len != kEncLzf) return false;
  uint64_t compressed_len, plain_len;
  if (!ReadLength(&compressed_len, &encoded) || encoded) return false;
  if (!ReadLength(&plain_len, &encoded) || encoded) return false;
  if (compressed_len == 0 || !Fits(compressed_len, 1)) return false;
  if (plain_len == 0 || plain_len > compressed_len * kMaxLzfRatio) return false;
  if (plain_len > kMaxPlainLength) return false;
  if (!ReadBytes(compressed_len, &bytes)) return false;
  return LzfDecompress(bytes, plain_len, out);
}

}  // namespace basalt::rdb
