// SHA-256 (common/sha256.h) against the FIPS 180-2 example vectors and padding boundaries.
#include "common/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace basalt {
namespace {

TEST(Sha256Test, Fips180Vectors) {
  EXPECT_EQ(Sha256::HexHash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::HexHash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::HexHash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::HexHash(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the 56-byte point where the length field stops fitting in the last block
// (expected values from coreutils sha256sum).
TEST(Sha256Test, PaddingBoundaries) {
  const std::pair<size_t, const char*> kCases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto& [n, hex] : kCases) EXPECT_EQ(Sha256::HexHash(std::string(n, 'a')), hex) << n;
}

// The password hash Redis shows for "password" in ACL LIST.
TEST(Sha256Test, RedisPasswordHash) {
  EXPECT_EQ(Sha256::HexHash("password"),
            "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8");
}

TEST(Sha256Test, IncrementalUpdatesMatchOneShot) {
  std::string data;
  for (int i = 0; i < 300; i++) data.push_back(static_cast<char>(i * 7));
  for (size_t split : {0, 1, 55, 63, 64, 65, 128, 299}) {
    Sha256 h;
    h.Update(std::string_view(data).substr(0, split));
    h.Update(std::string_view(data).substr(split));
    EXPECT_EQ(h.Final(), Sha256::Hash(data)) << split;
  }
}

TEST(Sha256Test, BinaryInput) {
  std::string zeros(3, '\0');
  EXPECT_EQ(Sha256::HexHash(zeros),
            "709e80c88487a2411e1ee4dfb9f22a861492d20c4765150c0c794abd70f8147c");
}

}  // namespace
}  // namespace basalt
