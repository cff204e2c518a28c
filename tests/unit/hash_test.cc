// HashBytes: every byte of the input counts, at every length up to past the 16-byte loop, the
// keys the server hashes spread evenly over the low bits (lock stripes, cache slots) and the
// high ones (cache shards), and keys chosen to collide under one hash key do not collide under
// the process's own. The spread tests use a fixed key, so that they check the same hashes on
// every run.
#include "common/hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace basalt {
namespace {

constexpr HashKey kFixedKey{0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};

uint64_t Hash(std::string_view s) {
  return HashBytes(s, kFixedKey);
}

// Changing any one bit of any byte changes the hash, for inputs of 0 to 40 bytes, and flips
// about half of its 64 bits on average (a weak mix flips few, or always the same ones).
TEST(HashBytesTest, EveryBitOfEveryByteChangesTheHash) {
  uint64_t flipped = 0, trials = 0;
  for (size_t length = 0; length <= 40; length++) {
    std::string input(length, '\0');
    for (size_t i = 0; i < length; i++) input[i] = static_cast<char>('a' + i * 7 % 26);
    const uint64_t base = Hash(input);
    for (size_t i = 0; i < length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        std::string changed = input;
        changed[i] = static_cast<char>(changed[i] ^ (1 << bit));
        uint64_t hash = Hash(changed);
        ASSERT_NE(hash, base) << "length " << length << " byte " << i << " bit " << bit;
        flipped += std::popcount(hash ^ base);
        trials++;
      }
    }
  }
  double mean = static_cast<double>(flipped) / static_cast<double>(trials);
  EXPECT_GT(mean, 28.0);
  EXPECT_LT(mean, 36.0);
}

// Inputs that differ only in length (zero bytes appended) hash differently.
TEST(HashBytesTest, LengthCounts) {
  std::set<uint64_t> seen;
  for (size_t length = 0; length <= 40; length++) {
    EXPECT_TRUE(seen.insert(Hash(std::string(length, '\0'))).second) << length;
  }
}

// Sequential keys, as benchmarks and applications name them, over 65536 buckets by the low 16
// bits and over 64 by the top 6, spread as a random function would spread them: 16 keys per
// low bucket on average, where a random function puts 40 or more in one with odds of about 1 in
// 50 (a Poisson tail over 65536 buckets), and each top bucket within 10% of its share.
TEST(HashBytesTest, SequentialKeysSpreadOverLowAndHighBits) {
  constexpr size_t kKeys = 1 << 20;
  std::vector<uint32_t> low(1 << 16), high(64);
  for (size_t i = 0; i < kKeys; i++) {
    uint64_t hash = Hash("key:" + std::to_string(i));
    low[hash & 0xffff]++;
    high[hash >> 58]++;
  }
  EXPECT_LT(*std::max_element(low.begin(), low.end()), kKeys / low.size() * 5 / 2);
  EXPECT_GE(*std::min_element(high.begin(), high.end()), kKeys / high.size() * 9 / 10);
  EXPECT_LE(*std::max_element(high.begin(), high.end()), kKeys / high.size() * 11 / 10);
}

// 31-byte keys whose word at offset 15 is `word` (a metadata key puts one byte in front, so that
// word is the tail's first), the rest of them different.
std::vector<std::string> KeysEndingInWord(uint64_t word, size_t count) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < count; i++) {
    std::string key = "u";
    key += std::to_string(1000000 + i);
    key.resize(15, '.');
    key.append(reinterpret_cast<const char*>(&word), 8);
    key.append("tailtail");
    keys.push_back(std::move(key));
  }
  return keys;
}

size_t DistinctHashes(const std::vector<std::string>& keys, const HashKey& key) {
  std::set<uint64_t> hashes;
  for (const std::string& k : keys) {
    std::string metadata_key(1, '\0');
    metadata_key += k;
    hashes.insert(HashBytes(metadata_key, key));
  }
  return hashes.size();
}

// Whoever knows the hash key can make any number of keys hash alike (a multiply by zero drops
// the rest of the key), and would crowd one bucket of the batch's map with them; keys made so
// for one hash key spread under another, as the process's secret one is to a client.
TEST(HashBytesTest, KeysChosenForOneHashKeyDoNotCollideUnderAnother) {
  std::vector<std::string> chosen = KeysEndingInWord(kFixedKey.word, 10000);
  EXPECT_EQ(DistinctHashes(chosen, kFixedKey), 1u);
  EXPECT_EQ(DistinctHashes(chosen, kProcessHashKey), chosen.size());
}

// Each process draws a key of its own.
TEST(HashBytesTest, HashKeysAreDrawnAtRandom) {
  HashKey a = RandomHashKey(), b = RandomHashKey();
  EXPECT_FALSE(a.start == b.start && a.word == b.word);
  EXPECT_FALSE(a.start == kProcessHashKey.start && a.word == kProcessHashKey.word);
  EXPECT_NE(HashBytes("key:1", a), HashBytes("key:1", b));
}

}  // namespace
}  // namespace basalt
