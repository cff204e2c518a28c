// The pieces of Redis's RDB serialization that DUMP-style payloads share: lengths, strings, and
// the payload footer (RDB version and CRC-64).
//
// Writing produces what Redis 7.0 reads (RDB version 10, which Redis 7.2 reads too); strings
// are written plain, never LZF-compressed or integer-encoded, which every Redis version accepts.
// Reading accepts everything Redis 7.0-7.2 write: the four length forms, integer-encoded strings
// and LZF-compressed strings. The input is untrusted: every length is checked against what is
// left of the input before anything is allocated for it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace basalt::rdb {

// Opcodes of the RDB stream (rdb.h in Redis).
constexpr uint8_t kOpcodeFunctionPreGa = 246;  // a 7.0 release candidate's format, refused
constexpr uint8_t kOpcodeFunction2 = 245;      // a function library: its code as a string

// The RDB version Basalt writes, and the newest it reads (Redis 7.2's).
constexpr uint16_t kVersion = 10;
constexpr uint16_t kNewestReadableVersion = 11;

void AppendLength(std::string* out, uint64_t len);
// A plain string: its length, then its bytes.
void AppendString(std::string* out, std::string_view s);

// Appends the DUMP footer to `payload`: the 2-byte little-endian RDB version, then the 8-byte
// little-endian CRC-64 of everything before the checksum.
void AppendDumpFooter(std::string* payload, uint16_t version = kVersion);
// Checks a DUMP payload's footer as Redis does: at least the 10 footer bytes, a version Basalt
// reads, and a matching checksum. On success *body is the payload without its footer.
bool VerifyDumpPayload(std::string_view payload, uint16_t* version, std::string_view* body);

// Reads RDB values from the front of a buffer.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  size_t remaining() const { return in_.size(); }
  bool ReadByte(uint8_t* byte);
  // A length; *encoded is set (and the length is the encoding type) for the special forms
  // that introduce integer-encoded and compressed strings.
  bool ReadLength(uint64_t* len, bool* encoded);
  // A string in any of its encodings; false if malformed or longer than the input allows.
  bool ReadString(std::string* out);

 private:
  bool ReadBytes(size_t n, std::string_view* out);
  std::string_view in_;
};

}  // namespace basalt::rdb
