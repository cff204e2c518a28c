#include "types/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>

namespace basalt::hll {

namespace {

constexpr std::string_view kMagic = "HYLL";
constexpr size_t kEncodingByte = 4;
constexpr size_t kCardOffset = 8;
constexpr size_t kStaleByte = 15;  // bit 7 of the cardinality's last byte marks it stale
constexpr uint8_t kStaleBit = 0x80;
constexpr uint64_t kHashSeed = 0xadc83b19ULL;
// The hash bits left after the index; a value is the position of the lowest set one.
constexpr int kValueBits = 64 - kIndexBits;  // 50
constexpr uint8_t kRegisterMask = (1 << kRegisterBits) - 1;

// Sparse opcodes.
constexpr uint8_t kOpKindMask = 0xc0;
constexpr uint8_t kOpZero = 0x00;
constexpr uint8_t kOpXzero = 0x40;
constexpr size_t kZeroMaxRun = 64;
constexpr size_t kValMaxRun = 4;

const uint8_t* Bytes(std::string_view s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Register i of a dense body occupies bits [6i, 6i+6), least significant bit first, and may
// straddle two bytes.
uint8_t DenseGet(const uint8_t* body, size_t i) {
  size_t bit = i * kRegisterBits;
  size_t byte = bit / 8, shift = bit % 8;
  unsigned v = body[byte] >> shift;
  if (shift + kRegisterBits > 8) v |= static_cast<unsigned>(body[byte + 1]) << (8 - shift);
  return static_cast<uint8_t>(v & kRegisterMask);
}

void DenseSet(uint8_t* body, size_t i, uint8_t value) {
  size_t bit = i * kRegisterBits;
  size_t byte = bit / 8, shift = bit % 8;
  unsigned v = value & kRegisterMask;
  body[byte] = static_cast<uint8_t>((body[byte] & ~(kRegisterMask << shift)) | (v << shift));
  if (shift + kRegisterBits > 8) {
    unsigned high_bits = shift + kRegisterBits - 8;
    unsigned mask = (1u << high_bits) - 1;
    body[byte + 1] = static_cast<uint8_t>((body[byte + 1] & ~mask) | (v >> (8 - shift)));
  }
}

bool ReadSparse(std::string_view body, Registers* out) {
  const uint8_t* p = Bytes(body);
  size_t pos = 0, index = 0;
  out->fill(0);
  while (pos < body.size()) {
    uint8_t op = p[pos];
    size_t run;
    uint8_t value = 0;
    if ((op & kOpKindMask) == kOpZero) {
      run = (op & 0x3f) + 1;
      pos += 1;
    } else if ((op & kOpKindMask) == kOpXzero) {
      if (pos + 1 >= body.size()) return false;
      run = ((static_cast<size_t>(op & 0x3f) << 8) | p[pos + 1]) + 1;
      pos += 2;
    } else {
      value = static_cast<uint8_t>(((op >> 2) & 0x1f) + 1);
      run = (op & 0x03) + 1;
      pos += 1;
    }
    if (index + run > kRegisters) return false;
    if (value != 0) std::fill_n(out->begin() + index, run, value);
    index += run;
  }
  return index == kRegisters;
}

// The shortest sparse body for the registers, or nullopt when some register does not fit a
// VAL opcode or the value would exceed `max_bytes` (header included).
std::optional<std::string> WriteSparse(const Registers& r, size_t max_bytes) {
  std::string body;
  for (size_t i = 0; i < kRegisters;) {
    uint8_t v = r[i];
    size_t j = i + 1;
    while (j < kRegisters && r[j] == v) j++;
    size_t run = j - i;
    if (v == 0) {
      if (run <= kZeroMaxRun) {
        body.push_back(static_cast<char>(kOpZero | (run - 1)));
      } else {
        body.push_back(static_cast<char>(kOpXzero | ((run - 1) >> 8)));
        body.push_back(static_cast<char>((run - 1) & 0xff));
      }
    } else {
      if (v > kMaxSparseValue) return std::nullopt;
      for (; run > 0; run -= std::min(run, kValMaxRun)) {
        size_t n = std::min(run, kValMaxRun);
        body.push_back(static_cast<char>(0x80 | ((v - 1) << 2) | (n - 1)));
      }
    }
    if (kHeaderSize + body.size() > max_bytes) return std::nullopt;
    i = j;
  }
  return body;
}

// Ertl's sigma and tau series, summed until the partial sums stop changing in double precision.
double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double y = 1, z = x, previous;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double y = 1.0, z = 1 - x, previous;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (previous != z);
  return z / 3;
}

}  // namespace

bool LooksLikeHll(std::string_view value) {
  if (value.size() < kHeaderSize || value.substr(0, kMagic.size()) != kMagic) return false;
  uint8_t encoding = Bytes(value)[kEncodingByte];
  if (encoding == static_cast<uint8_t>(Encoding::kDense)) return value.size() == kDenseSize;
  return encoding == static_cast<uint8_t>(Encoding::kSparse);
}

Encoding EncodingOf(std::string_view value) {
  return static_cast<Encoding>(Bytes(value)[kEncodingByte]);
}

bool ReadRegisters(std::string_view value, Registers* out) {
  std::string_view body = value.substr(kHeaderSize);
  if (EncodingOf(value) == Encoding::kSparse) return ReadSparse(body, out);
  for (size_t i = 0; i < kRegisters; i++) (*out)[i] = DenseGet(Bytes(body), i);
  return true;
}

uint64_t MurmurHash64A(std::string_view data, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const uint8_t* p = Bytes(data);
  uint64_t h = seed ^ (data.size() * m);
  for (size_t blocks = data.size() / 8; blocks > 0; blocks--, p += 8) {
    uint64_t k = 0;
    for (int b = 7; b >= 0; b--) k = (k << 8) | p[b];  // little-endian on every host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  size_t tail = data.size() & 7;
  if (tail > 0) {
    for (size_t b = tail; b > 0; b--) h ^= static_cast<uint64_t>(p[b - 1]) << (8 * (b - 1));
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

Observation Observe(std::string_view element) {
  uint64_t hash = MurmurHash64A(element, kHashSeed);
  size_t index = hash & (kRegisters - 1);
  // A sentinel bit caps the value at kValueBits + 1 when the remaining bits are all zero.
  uint64_t rest = (hash >> kIndexBits) | (uint64_t{1} << kValueBits);
  return {index, static_cast<uint8_t>(std::countr_zero(rest) + 1)};
}

bool Add(Registers* registers, std::string_view element) {
  Observation o = Observe(element);
  if ((*registers)[o.index] >= o.value) return false;
  (*registers)[o.index] = o.value;
  return true;
}

void Merge(Registers* registers, const Registers& other) {
  for (size_t i = 0; i < kRegisters; i++) {
    (*registers)[i] = std::max((*registers)[i], other[i]);
  }
}

uint64_t Estimate(const Registers& registers) {
  constexpr double kAlphaInf = 0.721347520444481703680;  // 1 / (2 ln 2)
  int histogram[1 << kRegisterBits] = {};
  for (uint8_t r : registers) histogram[r & kRegisterMask]++;
  double m = kRegisters;
  // Values above kValueBits + 1 cannot come from the hash and are ignored, as in Redis.
  double z = m * Tau((m - histogram[kValueBits + 1]) / m);
  for (int j = kValueBits; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * Sigma(histogram[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

std::optional<uint64_t> CachedCardinality(std::string_view value) {
  const uint8_t* p = Bytes(value);
  if (p[kStaleByte] & kStaleBit) return std::nullopt;
  uint64_t card = 0;
  for (size_t i = 0; i < 8; i++) card |= static_cast<uint64_t>(p[kCardOffset + i]) << (8 * i);
  return card;
}

void SetCachedCardinality(std::string* value, uint64_t card) {
  for (size_t i = 0; i < 8; i++) {
    (*value)[kCardOffset + i] = static_cast<char>((card >> (8 * i)) & 0xff);
  }
}

std::string Serialize(const Registers& registers, std::string_view header, bool sparse,
                      size_t sparse_max_bytes) {
  std::string out;
  if (header.size() >= kHeaderSize) {
    out.assign(header.substr(0, kHeaderSize));
  } else {
    out.assign(kMagic);
    out.resize(kHeaderSize, '\0');
  }
  out[kStaleByte] = static_cast<char>(out[kStaleByte] | kStaleBit);
  std::optional<std::string> body;
  if (sparse) body = WriteSparse(registers, sparse_max_bytes);
  if (body) {
    out[kEncodingByte] = static_cast<char>(Encoding::kSparse);
    out.append(*body);
    return out;
  }
  out[kEncodingByte] = static_cast<char>(Encoding::kDense);
  out.resize(kDenseSize, '\0');
  auto* dense = reinterpret_cast<uint8_t*>(out.data() + kHeaderSize);
  for (size_t i = 0; i < kRegisters; i++) DenseSet(dense, i, registers[i]);
  return out;
}

std::string DescribeSparse(std::string_view value) {
  std::string_view body = value.substr(kHeaderSize);
  const uint8_t* p = Bytes(body);
  std::string out;
  for (size_t pos = 0; pos < body.size();) {
    uint8_t op = p[pos];
    if (!out.empty()) out += ' ';
    if ((op & kOpKindMask) == kOpZero) {
      out += "z:" + std::to_string((op & 0x3f) + 1);
      pos += 1;
    } else if ((op & kOpKindMask) == kOpXzero) {
      // A truncated XZERO reads its missing low byte as zero rather than past the value.
      size_t low = pos + 1 < body.size() ? p[pos + 1] : 0;
      out += "Z:" + std::to_string(((static_cast<size_t>(op & 0x3f) << 8) | low) + 1);
      pos += 2;
    } else {
      out += "v:" + std::to_string(((op >> 2) & 0x1f) + 1) + "," + std::to_string((op & 0x03) + 1);
      pos += 1;
    }
  }
  return out;
}

namespace {

// Self test 1: every register of a dense body keeps the value written to it, whatever its
// neighbours hold.
std::string CheckDenseRegisters(std::mt19937_64& rng) {
  constexpr int kCycles = 1000;
  std::string body(kDenseSize - kHeaderSize, '\0');
  auto* dense = reinterpret_cast<uint8_t*>(body.data());
  Registers expected;
  for (int cycle = 0; cycle < kCycles; cycle++) {
    for (size_t i = 0; i < kRegisters; i++) {
      expected[i] = static_cast<uint8_t>(rng() & kRegisterMask);
      DenseSet(dense, i, expected[i]);
    }
    for (size_t i = 0; i < kRegisters; i++) {
      uint8_t got = DenseGet(dense, i);
      if (got != expected[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[i]) + " but is " + std::to_string(got);
      }
    }
  }
  return "";
}

// Self test 2 at one checkpoint: the registers written dense and sparse read back to the same
// count, the sparse form is used while small, and the count is within bounds of `card`.
std::string CheckCheckpoint(const Registers& registers, uint64_t card, size_t sparse_max_bytes) {
  std::string dense = Serialize(registers, "", false, sparse_max_bytes);
  std::string sparse = Serialize(registers, "", true, sparse_max_bytes);
  if (card < sparse_max_bytes / 2 && EncodingOf(sparse) != Encoding::kSparse) {
    return "TESTFAILED sparse encoding not used";
  }
  Registers from_dense, from_sparse;
  if (!ReadRegisters(dense, &from_dense) || !ReadRegisters(sparse, &from_sparse)) {
    return "TESTFAILED dense/sparse disagree";
  }
  uint64_t count = Estimate(from_dense);
  if (count != Estimate(from_sparse)) return "TESTFAILED dense/sparse disagree";
  const double relative_error = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  // Cardinality 10 gets a tighter bound than six standard errors allow, as in Redis.
  auto max_error = card == 10 ? 1 : static_cast<uint64_t>(std::ceil(relative_error * 6 * card));
  uint64_t error = count > card ? count - card : card - count;
  if (error > max_error) {
    return "TESTFAILED Too big error. card:" + std::to_string(card) +
           " abserr:" + std::to_string(error);
  }
  return "";
}

}  // namespace

std::string SelfTest(size_t sparse_max_bytes) {
  std::mt19937_64 rng{std::random_device{}()};
  std::string failure = CheckDenseRegisters(rng);
  if (!failure.empty()) return failure;
  Registers registers{};
  uint64_t seed = rng();
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10000000; j++) {
    uint64_t element = j ^ seed;
    char bytes[8];
    for (int b = 0; b < 8; b++) bytes[b] = static_cast<char>((element >> (8 * b)) & 0xff);
    Add(&registers, std::string_view(bytes, sizeof(bytes)));
    if (j != checkpoint) continue;
    failure = CheckCheckpoint(registers, checkpoint, sparse_max_bytes);
    if (!failure.empty()) return failure;
    checkpoint *= 10;
  }
  return "";
}

}  // namespace basalt::hll
