// CRC32C for RocksDB with the CPU's crc32 instruction.
//
// RocksDB checksums every WAL record, blob record and file it writes with CRC32C (Castagnoli),
// through one function, `rocksdb::crc32c::Extend`. Debian's librocksdb is built for any x86-64
// CPU, so that function uses lookup tables even where the CPU has SSE4.2: with large values it
// was more than half of the server's CPU (docs/benchmarks.md). On x86-64 crc32c.cc defines
// `rocksdb::crc32c::Extend` itself, and the build links a copy of the RocksDB archive in which
// the library's definition is weak (CMakeLists.txt), so every caller inside RocksDB calls this
// one: with `crc32` instructions where the CPU has SSE4.2, with tables where it does not. Both
// compute the standard CRC32C, so files written by either are read by the other and by any
// other RocksDB.
#pragma once

#include <cstddef>
#include <cstdint>

namespace basalt {

using Crc32cExtendFn = uint32_t (*)(uint32_t crc, const char* data, size_t n);

// How RocksDB computes CRC32C in this process: "sse4.2", "table" (this file's tables, on an
// x86-64 CPU without SSE4.2) or "rocksdb" (the library's own code: not x86-64). For INFO.
const char* Crc32cImplementation();

// The two implementations, for tests. Crc32cHardware() is nullptr where the CPU or the build
// has no crc32 instruction.
uint32_t Crc32cTable(uint32_t crc, const char* data, size_t n);
Crc32cExtendFn Crc32cHardware();

}  // namespace basalt
