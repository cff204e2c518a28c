// CRC-64 as Redis computes it for DUMP payloads and RDB files: the Jones polynomial
// (0xad93d23594c935a9), reflected input and output, initial value 0, no final xor. Its check
// value for "123456789" is 0xe9c6d914c4b8d9ca.
//
// Basalt's payloads (FUNCTION DUMP, and later DUMP and RDB files) must carry the checksum
// redis-server verifies, and payloads redis-server produced must verify here, so this is exactly
// Redis's function, written for Basalt. Extending is incremental:
// Crc64(Crc64(0, a), b) == Crc64(0, a + b).
#pragma once

#include <cstdint>
#include <string_view>

namespace basalt {

uint64_t Crc64(uint64_t crc, std::string_view data);

}  // namespace basalt
