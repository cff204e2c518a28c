// The CRC32C given to RocksDB (storage/crc32c.h): the standard check values, the crc32
// instruction and the tables agreeing on every length and alignment, and RocksDB's own
// checksums agreeing with it. That RocksDB calls this definition and not its own is checked by
// the link itself: the archive's definition is weak, and a second strong one would not link.
#include "storage/crc32c.h"

#include <gtest/gtest.h>
#include <rocksdb/file_checksum.h>

#include <random>
#include <string>

namespace rocksdb::crc32c {
uint32_t Extend(uint32_t crc, const char* data, size_t n);
}

namespace basalt {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

void ExpectCheckValues(Crc32cExtendFn crc32c) {
  // The CRC-32C check value ("123456789") and RFC 3720 B.4's 32 zero bytes and 32 0xff bytes.
  EXPECT_EQ(crc32c(0, "123456789", 9), 0xe3069283u);
  EXPECT_EQ(crc32c(0, "", 0), 0u);
  EXPECT_EQ(crc32c(0, std::string(32, '\0').data(), 32), 0x8a9136aau);
  EXPECT_EQ(crc32c(0, std::string(32, '\xff').data(), 32), 0x62a8ab43u);
}

TEST(Crc32cTest, CheckValues) {
  ExpectCheckValues(Crc32cTable);
  ExpectCheckValues(rocksdb::crc32c::Extend);
  if (Crc32cHardware() != nullptr) ExpectCheckValues(Crc32cHardware());
}

TEST(Crc32cTest, InstructionAndTablesAgreeOnEveryLengthAndAlignment) {
  Crc32cExtendFn hardware = Crc32cHardware();
  if (hardware == nullptr) GTEST_SKIP() << "this CPU has no SSE4.2 crc32 instruction";
  std::string data = RandomBytes(4096 + 64, 7);
  for (size_t offset = 0; offset < 16; offset++) {
    for (size_t n = 0; n <= 300; n++) {
      auto seed = static_cast<uint32_t>(n * 2654435761u);
      ASSERT_EQ(hardware(seed, data.data() + offset, n), Crc32cTable(seed, data.data() + offset, n))
          << "offset " << offset << " length " << n;
    }
  }
  std::string large = RandomBytes(1 << 20, 11);
  EXPECT_EQ(hardware(0, large.data(), large.size()), Crc32cTable(0, large.data(), large.size()));
}

TEST(Crc32cTest, ExtendingEqualsChecksummingTheConcatenation) {
  std::string a = RandomBytes(1000, 1), b = RandomBytes(777, 2);
  uint32_t whole = rocksdb::crc32c::Extend(0, (a + b).data(), a.size() + b.size());
  uint32_t first = rocksdb::crc32c::Extend(0, a.data(), a.size());
  EXPECT_EQ(rocksdb::crc32c::Extend(first, b.data(), b.size()), whole);
}

TEST(Crc32cTest, ReportsTheInstructionWhereTheCpuHasIt) {
  EXPECT_STREQ(Crc32cImplementation(), __builtin_cpu_supports("sse4.2") ? "sse4.2" : "table");
}

TEST(Crc32cTest, RocksDbFileChecksumsAgree) {
  // RocksDB's CRC32C file checksum (big-endian), computed inside the library.
  std::string data = RandomBytes(100000, 3);
  auto generator = rocksdb::GetFileChecksumGenCrc32cFactory()->CreateFileChecksumGenerator(
      rocksdb::FileChecksumGenContext());
  generator->Update(data.data(), data.size());
  generator->Finalize();
  uint32_t crc = Crc32cTable(0, data.data(), data.size());
  std::string expected = {static_cast<char>(crc >> 24), static_cast<char>(crc >> 16),
                          static_cast<char>(crc >> 8), static_cast<char>(crc)};
  EXPECT_EQ(generator->GetChecksum(), expected);
}

}  // namespace
}  // namespace basalt
