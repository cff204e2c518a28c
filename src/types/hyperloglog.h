// HyperLogLog values in Redis's own byte format, as pure functions over the bytes.
//
// An HLL is an ordinary string value, so GET/SET/TYPE/DUMP see a string and an HLL written by
// Redis (SET of its bytes) is readable here and the other way round. Layout (Redis's):
//
//   header(16) : "HYLL" | encoding(1: 0 dense, 1 sparse) | 3 zero bytes |
//                cached cardinality (8, little-endian; bit 7 of the last byte set = stale)
//   dense body : 16384 registers of 6 bits, register i at bit offset 6*i, least significant
//                bit first (12288 bytes)
//   sparse body: run-length opcodes covering the 16384 registers, in order:
//                00xxxxxx           ZERO  : xxxxxx+1 registers (1..64) are 0
//                01xxxxxx yyyyyyyy  XZERO : (xxxxxx yyyyyyyy)+1 registers (1..16384) are 0
//                1vvvvvxx           VAL   : xx+1 registers (1..4) hold vvvvv+1 (1..32)
//
// An element is hashed with MurmurHash64A (seed 0xadc83b19, as Redis): the low 14 bits pick the
// register, and the position of the lowest set bit of the remaining 50 (plus one, at most 51) is
// the candidate value. The cardinality comes from the register histogram through Ertl's
// improved estimator ("New cardinality estimation algorithms for HyperLogLog sketches", 2017),
// the one Redis uses, so the same registers give the same count as Redis, to the unit.
//
// Sparse values written here use the shortest run encoding (maximal zero runs, equal values
// grouped by four from the left). Redis edits its sparse form in place and can leave a
// different but equivalent split of value runs, so the sparse bytes may differ from Redis's
// while the registers, and every count, are identical. Dense bytes are identical.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace basalt::hll {

constexpr int kIndexBits = 14;
constexpr size_t kRegisters = size_t{1} << kIndexBits;  // 16384
constexpr int kRegisterBits = 6;
constexpr size_t kHeaderSize = 16;
constexpr size_t kDenseSize = kHeaderSize + kRegisters * kRegisterBits / 8;  // 12304
constexpr uint8_t kMaxSparseValue = 32;  // largest value a sparse VAL opcode can hold

enum class Encoding : uint8_t { kDense = 0, kSparse = 1 };

using Registers = std::array<uint8_t, kRegisters>;

// Redis's test for "a valid HyperLogLog string": magic, a known encoding, and for dense values
// the exact size. A sparse body is only checked when it is decoded.
bool LooksLikeHll(std::string_view value);
Encoding EncodingOf(std::string_view value);  // the value must pass LooksLikeHll

// Expands the registers of a value that passes LooksLikeHll. False when a sparse body is
// corrupt (its runs do not cover exactly the 16384 registers).
bool ReadRegisters(std::string_view value, Registers* out);

// The register an element maps to and the value it proposes for it (1..51).
struct Observation {
  size_t index;
  uint8_t value;
};
Observation Observe(std::string_view element);
uint64_t MurmurHash64A(std::string_view data, uint64_t seed);

// Raises the element's register if its value is larger; true when a register changed.
bool Add(Registers* registers, std::string_view element);
// registers[i] = max(registers[i], other[i]).
void Merge(Registers* registers, const Registers& other);

// The cardinality estimate from the registers (Ertl's improved estimator).
uint64_t Estimate(const Registers& registers);

// The cached cardinality in the header, when it is marked valid.
std::optional<uint64_t> CachedCardinality(std::string_view value);
// Stores `card` (< 2^63) in the header as the valid cached cardinality.
void SetCachedCardinality(std::string* value, uint64_t card);

// Serializes the registers. `header` supplies the 16 header bytes to keep (the old value's, so
// that the cached cardinality bytes survive as Redis leaves them; empty for a new HLL, which
// gets a zeroed header); the cache is marked stale, as after every Redis write. The result is
// sparse when `sparse` is asked for, every register fits a VAL opcode and the whole value is at
// most `sparse_max_bytes`; otherwise dense.
std::string Serialize(const Registers& registers, std::string_view header, bool sparse,
                      size_t sparse_max_bytes);

// The opcodes of a sparse value (which must pass LooksLikeHll and be sparse), as Redis's
// PFDEBUG DECODE spells them: "z:<run>" (ZERO), "Z:<run>" (XZERO), "v:<value>,<run>" (VAL),
// separated by single spaces. Decodes without checking that the runs cover the registers.
std::string DescribeSparse(std::string_view value);

// Redis's PFSELFTEST: sets random values into a dense body and reads them back, then adds
// 10,000,000 distinct elements to a dense and a sparse HLL and checks at every power of ten
// that both give the same count, within six standard errors of the truth, and that the sparse
// form is kept while small (`sparse_max_bytes` as hll-sparse-max-bytes). Returns "" when every
// check holds, else the first failure as Redis words it ("TESTFAILED ...").
std::string SelfTest(size_t sparse_max_bytes);

}  // namespace basalt::hll
