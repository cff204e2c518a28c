// Metadata values and the key encodings of every column family (types/metadata.h).
#include "types/metadata.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/coding.h"

namespace basalt {
namespace {

TEST(MetadataTest, StringRoundTrip) {
  Metadata m;
  m.type = RedisType::kString;
  m.expire_ms = 1700000000123;
  m.value = std::string("hello\0world\r\n", 13);
  std::string encoded = m.Encode();
  EXPECT_EQ(encoded.size(), 9 + m.value.size());

  Metadata d;
  ASSERT_TRUE(d.Decode(encoded));
  EXPECT_EQ(d.type, RedisType::kString);
  EXPECT_EQ(d.expire_ms, 1700000000123);
  EXPECT_EQ(d.value, m.value);
  EXPECT_FALSE(d.IsCollection());
}

TEST(MetadataTest, EmptyStringWithoutExpiryRoundTrip) {
  Metadata m;
  m.type = RedisType::kString;
  Metadata d;
  ASSERT_TRUE(d.Decode(m.Encode()));
  EXPECT_EQ(d.type, RedisType::kString);
  EXPECT_EQ(d.expire_ms, 0);
  EXPECT_EQ(d.value, "");
}

TEST(MetadataTest, SetEncodingFloorRoundTripsAndStaysOutOfOtherTypes) {
  for (SetFloor floor : {SetFloor::kIntset, SetFloor::kListpack, SetFloor::kHashtable}) {
    Metadata m;
    m.type = RedisType::kSet;
    m.version = 7;
    m.size = 3;
    m.set_floor = floor;
    Metadata d;
    ASSERT_TRUE(d.Decode(m.Encode()));
    EXPECT_EQ(d, m);
  }
  // The same bits are a string's encoding hint: a set's floor never reads as one, and a
  // string's hint never as a floor.
  Metadata set;
  set.type = RedisType::kSet;
  set.set_floor = SetFloor::kHashtable;
  Metadata d;
  ASSERT_TRUE(d.Decode(set.Encode()));
  EXPECT_EQ(d.encoding, StringEncoding::kAuto);
  Metadata str;
  str.type = RedisType::kString;
  str.encoding = StringEncoding::kRaw;
  ASSERT_TRUE(d.Decode(str.Encode()));
  EXPECT_EQ(d.set_floor, SetFloor::kIntset);
  EXPECT_EQ(d.encoding, StringEncoding::kRaw);
}

TEST(MetadataTest, StringEncodingHintRoundTrip) {
  for (StringEncoding enc : {StringEncoding::kAuto, StringEncoding::kRaw, StringEncoding::kNoInt}) {
    Metadata m;
    m.type = RedisType::kString;
    m.encoding = enc;
    m.value = "12";
    Metadata d;
    ASSERT_TRUE(d.Decode(m.Encode()));
    EXPECT_EQ(d.encoding, enc);
    EXPECT_EQ(d.type, RedisType::kString);
    RedisType type;
    int64_t expire;
    ASSERT_TRUE(Metadata::DecodeHeader(m.Encode(), &type, &expire));
    EXPECT_EQ(type, RedisType::kString);
  }
}

TEST(MetadataTest, HashRoundTrip) {
  Metadata m;
  m.type = RedisType::kHash;
  m.expire_ms = 42;
  m.version = 0x0123456789abcdefull;
  m.size = 1000000;
  std::string encoded = m.Encode();
  EXPECT_EQ(encoded.size(), 9u + 16u);

  Metadata d;
  ASSERT_TRUE(d.Decode(encoded));
  EXPECT_EQ(d.type, RedisType::kHash);
  EXPECT_EQ(d.expire_ms, 42);
  EXPECT_EQ(d.version, m.version);
  EXPECT_EQ(d.size, 1000000u);
  EXPECT_TRUE(d.IsCollection());
}

TEST(MetadataTest, ListRoundTrip) {
  Metadata m;
  m.type = RedisType::kList;
  m.version = 7;
  m.size = 3;
  m.list_head = (1ull << 63) - 1;
  m.list_tail = (1ull << 63) + 2;
  std::string encoded = m.Encode();
  EXPECT_EQ(encoded.size(), 9u + 32u);

  Metadata d;
  ASSERT_TRUE(d.Decode(encoded));
  EXPECT_EQ(d.type, RedisType::kList);
  EXPECT_EQ(d.expire_ms, 0);
  EXPECT_EQ(d.version, 7u);
  EXPECT_EQ(d.size, 3u);
  EXPECT_EQ(d.list_head, m.list_head);
  EXPECT_EQ(d.list_tail, m.list_tail);
}

TEST(MetadataTest, SetAndZsetRoundTrip) {
  for (RedisType t : {RedisType::kSet, RedisType::kZset}) {
    Metadata m;
    m.type = t;
    m.version = 99;
    m.size = 5;
    Metadata d;
    ASSERT_TRUE(d.Decode(m.Encode()));
    EXPECT_EQ(d.type, t);
    EXPECT_EQ(d.version, 99u);
    EXPECT_EQ(d.size, 5u);
  }
}

TEST(MetadataTest, ZsetScanBoundsRoundTripAndAreOptional) {
  Metadata m;
  m.type = RedisType::kZset;
  m.version = 7;
  m.size = 3;
  std::string plain = m.Encode();
  m.zset.mutable_end(false).mark = std::string("\x80\0\0\0\0\0\0\0a", 9);
  m.zset.mutable_end(true).mark = "zz";
  std::string marked = m.Encode();
  EXPECT_EQ(marked.size(), plain.size() + 4 + 9 + 4 + 2);
  Metadata d;
  ASSERT_TRUE(d.Decode(marked));
  EXPECT_EQ(d.zset.low().mark, m.zset.low().mark);
  EXPECT_EQ(d.zset.high().mark, "zz");
  EXPECT_TRUE(d.zset.low().beyond.empty());
  EXPECT_EQ(d.size, 3u);
  // Decoding a value without bounds into a Metadata that had some clears them.
  ASSERT_TRUE(d.Decode(plain));
  EXPECT_TRUE(d.zset.low().mark.empty());
  EXPECT_TRUE(d.zset.high().mark.empty());
  for (size_t len = plain.size() + 1; len < marked.size(); len++) {
    EXPECT_FALSE(d.Decode(std::string_view(marked.data(), len))) << len;
  }
}

// A sorted set of three members popped from both ends, leaving these marks.
Metadata PoppedZset(std::string low_mark, std::string high_mark) {
  Metadata m;
  m.type = RedisType::kZset;
  m.version = 7;
  m.size = 3;
  m.zset.mutable_end(false).mark = std::move(low_mark);
  m.zset.mutable_end(true).mark = std::move(high_mark);
  return m;
}

TEST(MetadataTest, ZsetEntriesBeyondTheMarksRoundTripOnlyWhenListed) {
  Metadata m = PoppedZset("m", "x");
  std::string marks_only = m.Encode();
  m.zset.mutable_end(false).beyond = {"a", "cc"};
  std::string listed = m.Encode();
  // Two counts, then the low end's two length-prefixed entries.
  EXPECT_EQ(listed.size(), marks_only.size() + 4 + (4 + 1) + (4 + 2) + 4);
  Metadata d;
  ASSERT_TRUE(d.Decode(listed));
  EXPECT_EQ(d.zset.low().mark, "m");
  EXPECT_EQ(d.zset.low().beyond, (std::vector<std::string>{"a", "cc"}));
  EXPECT_TRUE(d.zset.high().beyond.empty());
  // A value written before the lists existed (marks only) decodes with none.
  ASSERT_TRUE(d.Decode(marks_only));
  EXPECT_EQ(d.zset.low().mark, "m");
  EXPECT_TRUE(d.zset.low().beyond.empty());
  for (size_t len = marks_only.size() + 1; len < listed.size(); len++) {
    EXPECT_FALSE(d.Decode(std::string_view(listed.data(), len))) << len;
  }
  EXPECT_FALSE(d.Decode(listed + "x"));
  // A count larger than the bytes that follow could hold is rejected, not allocated.
  std::string huge = marks_only;
  PutFixed32(&huge, 0xffffffff);
  EXPECT_FALSE(d.Decode(huge));
}

TEST(MetadataTest, ZsetReachesRoundTripAfterTheListsOnlyWhenSet) {
  Metadata m = PoppedZset("c", "x");
  std::string marks_only = m.Encode();
  m.zset.mutable_end(false).reach = "k";
  std::string reached = m.Encode();
  // Two empty lists' counts, then both reaches (the high one empty).
  EXPECT_EQ(reached.size(), marks_only.size() + 4 + 4 + (4 + 1) + 4);
  Metadata d;
  ASSERT_TRUE(d.Decode(reached));
  EXPECT_EQ(d.zset.low().reach, "k");
  EXPECT_TRUE(d.zset.high().reach.empty());
  EXPECT_TRUE(d.zset.low().beyond.empty());
  EXPECT_EQ(d, m);
  m.zset.mutable_end(true).beyond = {"y"};
  ASSERT_TRUE(d.Decode(m.Encode()));
  EXPECT_EQ(d, m);
  // Decoding a value without reaches clears them.
  ASSERT_TRUE(d.Decode(marks_only));
  EXPECT_TRUE(d.zset.low().reach.empty());
  // Cut inside the reaches (after the lists' counts, a value on its own), it is rejected.
  for (size_t len = marks_only.size() + 8 + 1; len < reached.size(); len++) {
    EXPECT_FALSE(d.Decode(std::string_view(reached.data(), len))) << len;
  }
}

TEST(MetadataTest, ZsetEndsCopiesShareUntilEitherChanges) {
  Metadata a;
  a.type = RedisType::kZset;
  Metadata never_popped = a;
  EXPECT_FALSE(never_popped.zset.Marked());
  EXPECT_TRUE(never_popped.zset.high().beyond.empty());
  // An end made but left empty equals one never made.
  a.zset.mutable_end(true);
  EXPECT_EQ(a, never_popped);
  a.zset.mutable_end(false).mark = "m";
  a.zset.mutable_end(false).beyond.assign(1, "a");
  Metadata b = a;
  EXPECT_EQ(b, a);
  EXPECT_EQ(&b.zset.low(), &a.zset.low());  // shared, not copied
  b.zset.mutable_end(false).beyond.clear();
  EXPECT_EQ(a.zset.low().beyond.size(), 1u);  // the copy changed is its own
  EXPECT_NE(b, a);
  // And the original changed after a copy leaves the copy as it was.
  Metadata c = a;
  a.zset.mutable_end(true).mark = "z";
  EXPECT_TRUE(c.zset.high().mark.empty());
  EXPECT_EQ(c.zset.low().mark, "m");
  EXPECT_EQ(a.zset.low().mark, "m");
  b = never_popped;
  EXPECT_FALSE(b.zset.Marked());
  Metadata moved = std::move(a);
  EXPECT_EQ(moved.zset.low().mark, "m");
}

TEST(MetadataTest, DecodeRejectsTruncatedCollections) {
  Metadata m;
  m.type = RedisType::kList;
  m.version = 1;
  m.size = 1;
  std::string encoded = m.Encode();
  for (size_t len = 0; len < encoded.size(); len++) {
    Metadata d;
    EXPECT_FALSE(d.Decode(std::string_view(encoded.data(), len))) << len;
  }
}

TEST(MetadataTest, DecodeHeaderReadsTypeAndExpiry) {
  Metadata m;
  m.type = RedisType::kZset;
  m.expire_ms = 123456789;
  RedisType type = RedisType::kNone;
  int64_t expire = 0;
  ASSERT_TRUE(Metadata::DecodeHeader(m.Encode(), &type, &expire));
  EXPECT_EQ(type, RedisType::kZset);
  EXPECT_EQ(expire, 123456789);
}

TEST(MetadataTest, DecodeHeaderRejectsGarbage) {
  RedisType type;
  int64_t expire;
  EXPECT_FALSE(Metadata::DecodeHeader("", &type, &expire));
  EXPECT_FALSE(Metadata::DecodeHeader("x", &type, &expire));
  // A valid type byte but a truncated expiry.
  EXPECT_FALSE(Metadata::DecodeHeader(std::string("\x01\0\0\0", 4), &type, &expire));
  Metadata d;
  EXPECT_FALSE(d.Decode(""));
  EXPECT_FALSE(d.Decode("garbage"));
}

TEST(MetadataTest, DecodeHeaderRejectsUnknownTypes) {
  RedisType type;
  int64_t expire;
  for (int t : {0, 7, 8, 15}) {
    std::string v;
    PutFixed8(&v, static_cast<uint8_t>(t));
    PutFixed64(&v, 0);
    v += "body";
    EXPECT_FALSE(Metadata::DecodeHeader(v, &type, &expire)) << "type " << t;
    Metadata d;
    EXPECT_FALSE(d.Decode(v)) << "type " << t;
  }
}

TEST(MetadataTest, StreamCountersRoundTripAndMustBeWhole) {
  Metadata m;
  m.type = RedisType::kStream;
  m.expire_ms = 1234;
  m.version = 42;
  m.size = 3;
  m.stream.last_id = {UINT64_MAX, 7};
  m.stream.first_id = {5, 1};
  m.stream.max_deleted_id = {6, 0};
  m.stream.entries_added = 9;
  m.stream.groups = 2;
  std::string encoded = m.Encode();
  EXPECT_EQ(encoded.size(), 9u + 16u + 3 * 16u + 16u);
  Metadata d;
  ASSERT_TRUE(d.Decode(encoded));
  EXPECT_EQ(d, m);
  for (size_t len = 9 + 16; len < encoded.size(); len++) {
    EXPECT_FALSE(d.Decode(std::string_view(encoded.data(), len))) << len;
  }
  EXPECT_FALSE(d.Decode(encoded + "x"));
  // The block origin follows only when set, so streams stored before it decode unchanged.
  m.stream.block_origin = 4;
  std::string with_origin = m.Encode();
  EXPECT_EQ(with_origin.size(), encoded.size() + 8);
  ASSERT_TRUE(d.Decode(with_origin));
  EXPECT_EQ(d, m);
  for (size_t len = encoded.size() + 1; len < with_origin.size(); len++) {
    EXPECT_FALSE(d.Decode(std::string_view(with_origin.data(), len))) << len;
  }
  EXPECT_FALSE(d.Decode(with_origin + "x"));
  // Another type's decode into the same object leaves no stream counters behind.
  Metadata hash;
  hash.type = RedisType::kHash;
  ASSERT_TRUE(d.Decode(hash.Encode()));
  EXPECT_EQ(d.stream, StreamCounters());
}

TEST(MetadataTest, ExpiredAt) {
  Metadata m;
  EXPECT_FALSE(m.ExpiredAt(INT64_MAX));  // no expiry
  m.expire_ms = 1000;
  EXPECT_FALSE(m.ExpiredAt(999));
  EXPECT_TRUE(m.ExpiredAt(1000));
  EXPECT_TRUE(m.ExpiredAt(1001));
}

TEST(MetadataTest, TypeNames) {
  EXPECT_STREQ(RedisTypeName(RedisType::kString), "string");
  EXPECT_STREQ(RedisTypeName(RedisType::kHash), "hash");
  EXPECT_STREQ(RedisTypeName(RedisType::kList), "list");
  EXPECT_STREQ(RedisTypeName(RedisType::kSet), "set");
  EXPECT_STREQ(RedisTypeName(RedisType::kZset), "zset");
  EXPECT_STREQ(RedisTypeName(RedisType::kStream), "stream");
  EXPECT_STREQ(RedisTypeName(RedisType::kNone), "none");
}

// ---------------------------------------------------------------------------------------------
// Keys

TEST(MetadataKeyTest, RoundTrip) {
  const std::string user_key("user:\0:1", 8);
  std::string key = MetadataKey(3, user_key);
  EXPECT_EQ(key.size(), 1 + user_key.size());
  EXPECT_EQ(key[0], '\x03');
  uint8_t db = 0;
  std::string_view parsed;
  ASSERT_TRUE(ParseMetadataKey(key, &db, &parsed));
  EXPECT_EQ(db, 3);
  EXPECT_EQ(parsed, user_key);
}

TEST(MetadataKeyTest, EmptyUserKey) {
  std::string key = MetadataKey(15, "");
  uint8_t db = 0;
  std::string_view parsed = "x";
  ASSERT_TRUE(ParseMetadataKey(key, &db, &parsed));
  EXPECT_EQ(db, 15);
  EXPECT_EQ(parsed, "");
  EXPECT_FALSE(ParseMetadataKey("", &db, &parsed));
}

TEST(MetadataKeyTest, DatabaseRangeCoversOnlyThatDatabase) {
  for (uint8_t db : {0, 1, 7, 15}) {
    const std::string begin = DatabaseBegin(db), end = DatabaseEnd(db);
    for (const std::string& k : {std::string(), std::string("a"), std::string(300, '\xff')}) {
      std::string in = MetadataKey(db, k);
      EXPECT_TRUE(in >= begin && in < end);
      if (db > 0) {
        EXPECT_FALSE(MetadataKey(db - 1, k) >= begin);
      }
      EXPECT_FALSE(MetadataKey(db + 1, k) < end);
    }
  }
}

TEST(ExpireKeyTest, RoundTrip) {
  std::string key = ExpireKey(1700000000000, 4, "some:key");
  int64_t t = 0;
  uint8_t db = 0;
  std::string_view user_key;
  ASSERT_TRUE(ParseExpireKey(key, &t, &db, &user_key));
  EXPECT_EQ(t, 1700000000000);
  EXPECT_EQ(db, 4);
  EXPECT_EQ(user_key, "some:key");
}

TEST(ExpireKeyTest, ParseRejectsShortKeys) {
  int64_t t;
  uint8_t db;
  std::string_view user_key;
  std::string key = ExpireKey(5, 1, "");
  ASSERT_EQ(key.size(), 9u);
  EXPECT_TRUE(ParseExpireKey(key, &t, &db, &user_key));
  for (size_t len = 0; len < 9; len++)
    EXPECT_FALSE(ParseExpireKey(std::string_view(key.data(), len), &t, &db, &user_key)) << len;
}

TEST(ExpireKeyTest, OrderingIsTimeOrdering) {
  // Keys of every db and name sort by expiry time first.
  std::vector<int64_t> times = {
      1, 2, 255, 256, 65535, 65536, 1700000000000, 1700000000001, 4102444800000};
  std::vector<std::pair<int64_t, std::string>> entries;
  for (int64_t t : times) {
    entries.emplace_back(t, ExpireKey(t, 15, "zzzz"));
    entries.emplace_back(t, ExpireKey(t, 0, "a"));
    entries.emplace_back(t, ExpireKey(t, 3, std::string(40, '\xff')));
  }
  for (const auto& [ta, ka] : entries) {
    for (const auto& [tb, kb] : entries) {
      if (ta < tb) {
        EXPECT_LT(ka, kb) << ta << " vs " << tb;
      }
    }
  }
  // The expirer's scan bound: everything due at `now` sorts below ExpireKey(now + 1, 0, "").
  const int64_t now = 1700000000000;
  EXPECT_LT(ExpireKey(now, 255, std::string(10, '\xff')), ExpireKey(now + 1, 0, ""));
  EXPECT_GE(ExpireKey(now + 1, 0, "a"), ExpireKey(now + 1, 0, ""));
}

TEST(SubkeyPrefixTest, LayoutAndVersion) {
  std::string p = SubkeyPrefix(2, "key", 0x0102030405060708ull);
  std::string_view in = p;
  uint8_t db;
  std::string_view user_key;
  uint64_t version;
  ASSERT_TRUE(GetFixed8(&in, &db));
  ASSERT_TRUE(GetLengthPrefixed(&in, &user_key));
  ASSERT_TRUE(GetFixed64(&in, &version));
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(db, 2);
  EXPECT_EQ(user_key, "key");
  EXPECT_EQ(version, 0x0102030405060708ull);
}

TEST(SubkeyPrefixTest, NoPrefixCollisionBetweenKeys) {
  // Members of "a" (any version, any member bytes, e.g. starting with "b") must never fall
  // under the prefix of "ab", and vice versa.
  const std::vector<uint64_t> versions = {0, 1, 0x6200000000000000ull, UINT64_MAX};
  const std::vector<std::string> members = {"", "b", "bcdefgh", std::string(20, 'b'),
                                            std::string("\0\0\0\x02", 4)};
  for (uint64_t va : versions) {
    for (uint64_t vb : versions) {
      const std::string ab = SubkeyPrefix(0, "ab", vb);
      for (const auto& m : members) {
        const std::string under_a = SubkeyPrefix(0, "a", va) + m;
        const std::string under_ab = ab + m;
        EXPECT_NE(under_a.compare(0, ab.size(), ab), 0);
        const std::string a = SubkeyPrefix(0, "a", va);
        EXPECT_NE(under_ab.compare(0, a.size(), a), 0);
      }
    }
  }
  // Nor across databases or versions of the same key.
  EXPECT_NE(SubkeyPrefix(0, "a", 1).substr(0, 1), SubkeyPrefix(1, "a", 1).substr(0, 1));
  std::string v1 = SubkeyPrefix(0, "a", 1), v2 = SubkeyPrefix(0, "a", 2);
  EXPECT_NE((v1 + "m").compare(0, v2.size(), v2), 0);
}

TEST(CounterKeysTest, DistinctPerDatabase) {
  std::vector<std::string> keys;
  for (uint8_t db = 0; db < 16; db++) {
    keys.push_back(KeysCounterKey(db));
    keys.push_back(ExpiresCounterKey(db));
    keys.push_back(EpochKey(db));
  }
  keys.emplace_back(kDbMapKey);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
}

TEST(NewVersionTest, StrictlyIncreasing) {
  uint64_t prev = NewVersion();
  for (int i = 0; i < 200000; i++) {
    uint64_t v = NewVersion();
    ASSERT_GT(v, prev) << "call " << i;
    prev = v;
  }
}

TEST(NewVersionTest, TracksWallClock) {
  // Microseconds shifted left by 11 bits: a version made now is far above one made from
  // a 2020 timestamp, so versions also grow across restarts.
  const uint64_t jan_2020_us = 1577836800ull * 1000000;
  EXPECT_GT(NewVersion(), jan_2020_us << 11);
}

}  // namespace
}  // namespace basalt
