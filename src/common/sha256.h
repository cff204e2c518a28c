// SHA-256 (FIPS 180-4), for ACL password hashes.
//
// Redis stores and shows user passwords as the lowercase hex SHA-256 of the clear text
// (`#<hash>` in ACL LIST and the ACL file), so Basalt must produce exactly the same digests.
// Incremental use: Update() any number of times, then Final() once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace basalt {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(std::string_view data);
  Digest Final();

  // One-shot helpers.
  static Digest Hash(std::string_view data);
  static std::string HexHash(std::string_view data);  // 64 lowercase hex characters

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace basalt
