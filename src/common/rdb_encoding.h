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
constexpr uint8_t kOpcodeFunction2 = 245;      // a function library: its code as a string
constexpr uint8_t kOpcodeFunctionPreGa = 246;  // a 7.0 release candidate's format, refused
constexpr uint8_t kOpcodeModuleAux = 247;      // a module's own data, not a key's
constexpr uint8_t kOpcodeIdle = 248;           // the next key's LRU idle time
constexpr uint8_t kOpcodeFreq = 249;           // the next key's LFU counter
constexpr uint8_t kOpcodeAux = 250;            // a name/value pair about the file
constexpr uint8_t kOpcodeResizeDb = 251;       // the sizes of the selected database's tables
constexpr uint8_t kOpcodeExpireTimeMs = 252;   // the next key's expiry, in ms
constexpr uint8_t kOpcodeExpireTime = 253;     // the next key's expiry, in s (old files)
constexpr uint8_t kOpcodeSelectDb = 254;       // the database the following keys belong to
constexpr uint8_t kOpcodeEof = 255;

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

// Reads RDB values from the front of a buffer. The buffer may be a window on a longer input
// (an RDB file read piece by piece) of which `total` bytes remain: a read that needs more than
// the window but no more than the input sets exhausted(), so that the caller can retry with a
// larger window; a read beyond the whole input is plainly malformed.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in), total_(in.size()) {}
  Reader(std::string_view in, uint64_t total)
      : in_(in), total_(total < in.size() ? in.size() : total) {}

  size_t remaining() const { return in_.size(); }
  bool exhausted() const { return exhausted_; }
  bool ReadByte(uint8_t* byte);
  // A length; *encoded is set (and the length is the encoding type) for the special forms
  // that introduce integer-encoded and compressed strings.
  bool ReadLength(uint64_t* len, bool* encoded);
  // A string in any of its encodings; false if malformed or longer than the input allows.
  bool ReadString(std::string* out);
  // `n` raw bytes; false if fewer remain.
  bool ReadBytes(size_t n, std::string_view* out);
  // Whether `count` items of at least `min_bytes` each fit in what remains.
  bool Fits(uint64_t count, uint64_t min_bytes);

 private:
  std::string_view in_;
  uint64_t total_;  // what remains of the whole input, the window included
  bool exhausted_ = false;
};

}  // namespace basalt::rdb
