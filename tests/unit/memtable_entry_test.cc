// The memtable's inline key comparisons (storage/memtable_entry.h) against RocksDB's bytewise
// comparator, which the memtable's order must match exactly: a flush, an iterator or a seek that
// disagreed with it would misplace keys.
#include <gtest/gtest.h>
#include <rocksdb/comparator.h>

#include <random>
#include <string>
#include <vector>

#include "storage/memtable_entry.h"

namespace basalt::memtable {
namespace {

int Sign(int r) {
  return (r > 0) - (r < 0);
}

// Pairs of keys of every length up to 40 that share a prefix and differ first at each position,
// by bytes on either side of 0x80 (a signed comparison would get those wrong), or where one key
// is a prefix of the other.
TEST(MemtableEntry, UserKeysCompareAsRocksDBsBytewiseComparatorDoes) {
  const rocksdb::Comparator* bytewise = rocksdb::BytewiseComparator();
  std::mt19937 rng(7);
  const std::vector<unsigned char> bytes = {0x00, 0x01, 0x30, 0x39, 0x7f, 0x80, 0xfe, 0xff};
  size_t pairs = 0;
  for (size_t length = 0; length <= 40; length++) {
    for (size_t differ_at = 0; differ_at <= length; differ_at++) {
      for (int round = 0; round < 8; round++) {
        std::string a(length, '\0');
        for (char& c : a) c = static_cast<char>(bytes[rng() % bytes.size()]);
        std::string b = a;
        if (differ_at < length) {
          b[differ_at] = static_cast<char>(bytes[rng() % bytes.size()]);
          // Bytes after the first difference must not decide the order.
          for (size_t i = differ_at + 1; i < length; i++) {
            b[i] = static_cast<char>(bytes[rng() % bytes.size()]);
          }
        } else {
          b.resize(rng() % (length + 1));  // a prefix of a (or all of it)
        }
        int expected = Sign(bytewise->Compare(a, b));
        EXPECT_EQ(Sign(CompareUserKeys(a, b)), expected) << length << " " << differ_at;
        EXPECT_EQ(Sign(CompareUserKeys(b, a)), -expected) << length << " " << differ_at;
        pairs++;
      }
    }
  }
  EXPECT_GT(pairs, 6000u);
}

// Internal keys: user keys first, then the newest (largest trailer) first.
TEST(MemtableEntry, InternalKeysOrderByUserKeyThenNewestFirst) {
  auto internal = [](std::string user_key, uint64_t sequence) {
    uint64_t trailer = (sequence << 8) | kTypeValue;
    for (int i = 0; i < 8; i++) user_key.push_back(static_cast<char>(trailer >> (8 * i)));
    return user_key;
  };
  EXPECT_LT(CompareBytewise(internal("member:000123", 5), internal("member:000124", 9)), 0);
  EXPECT_LT(CompareBytewise(internal("member:000123", 9), internal("member:000123", 5)), 0);
  EXPECT_GT(CompareBytewise(internal("member:000123", 5), internal("member:000123", 9)), 0);
  EXPECT_EQ(CompareBytewise(internal("member:000123", 5), internal("member:000123", 5)), 0);
  EXPECT_LT(CompareBytewise(internal("member:00012", 1), internal("member:000123", 9)), 0);
}

}  // namespace
}  // namespace basalt::memtable
