// Hash field entries (types/hash.h) against a real RocksDB: small values inline, large ones in
// large_value behind a stub that carries the length, and the two families kept in step when a
// value changes size or a field is removed.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "keyspace_fixture.h"
#include "types/hash.h"

namespace basalt {
namespace {

class HashCodecTest : public KeyspaceFixture {
 protected:
  // HSET key field value, as the hash commands do it.
  void HSet(const std::string& field, const std::string& value) {
    Context ctx(ks_.get());
    auto old = LookupCollection(ctx, 0, "h", RedisType::kHash);
    ASSERT_TRUE(old.ok());
    HashWriter w(ctx, 0, "h", *old);
    std::string stored;
    Status s = w.Find(field, &stored);
    w.Put(field, value, s.ok() ? &stored : nullptr);
    w.Finish();
    ASSERT_TRUE(ctx.Commit().ok());
  }

  void HDel(const std::string& field) {
    Context ctx(ks_.get());
    auto old = LookupCollection(ctx, 0, "h", RedisType::kHash);
    ASSERT_TRUE(old.ok());
    HashWriter w(ctx, 0, "h", *old);
    std::string stored;
    ASSERT_TRUE(w.Find(field, &stored).ok());
    w.Remove(field, stored);
    w.Finish();
    ASSERT_TRUE(ctx.Commit().ok());
  }

  FieldEntry Entry(const std::string& field, std::string* stored) {
    Context ctx(ks_.get());
    KeyState state = Get(0, "h");
    EXPECT_TRUE(GetFieldEntry(ctx, 0, "h", state.meta.version, field, stored).ok());
    FieldEntry entry;
    EXPECT_TRUE(DecodeFieldEntry(*stored, &entry));
    return entry;
  }

  std::string Value(const std::string& field) {
    Context ctx(ks_.get());
    KeyState state = Get(0, "h");
    std::string value;
    EXPECT_TRUE(GetFieldValue(ctx, 0, "h", state.meta.version, field, &value).ok());
    return value;
  }

  int LargeValues() {
    rocksdb::ReadOptions ro;
    auto it = ks_->engine()->NewIterator(ColumnFamily::kLargeValue, ro);
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    return n;
  }
};

TEST_F(HashCodecTest, EntryEncodingRejectsGarbage) {
  FieldEntry e;
  EXPECT_FALSE(DecodeFieldEntry("", &e));
  EXPECT_FALSE(DecodeFieldEntry("zvalue", &e));
  EXPECT_FALSE(DecodeFieldEntry(std::string("x\0\0", 3), &e));  // stub without a full length
}

TEST_F(HashCodecTest, SmallValuesAreInline) {
  HSet("f", "v");
  std::string stored;
  FieldEntry e = Entry("f", &stored);
  EXPECT_FALSE(e.external);
  EXPECT_EQ(e.length, 1u);
  EXPECT_EQ(e.inline_value, "v");
  EXPECT_EQ(LargeValues(), 0);
}

TEST_F(HashCodecTest, LargeValuesLiveBehindAStub) {
  std::string big(kLargeFieldValue, 'b');
  HSet("f", big);
  std::string stored;
  FieldEntry e = Entry("f", &stored);
  EXPECT_TRUE(e.external);
  EXPECT_EQ(e.length, big.size());
  EXPECT_EQ(stored.size(), 9u);  // the field entry stays tiny
  EXPECT_EQ(LargeValues(), 1);
  EXPECT_TRUE(Value("f") == big);
}

TEST_F(HashCodecTest, ShrinkingOrRemovingDropsTheLargeValue) {
  HSet("f", std::string(10000, 'b'));
  HSet("g", std::string(10000, 'c'));
  HSet("f", "small");
  EXPECT_EQ(LargeValues(), 1);
  EXPECT_EQ(Value("f"), "small");
  HDel("g");
  EXPECT_EQ(LargeValues(), 0);
  EXPECT_EQ(Get(0, "h").meta.size, 1u);
}

// A field set to the value it has writes nothing (neither its entry nor the hash's metadata),
// yet still marks a watcher of the hash dirty; a new value, or a field overwritten with another
// value, is written, and the metadata only when the size changes.
TEST_F(HashCodecTest, SettingAFieldToItsValueWritesNothing) {
  HSet("f", "v");
  auto watcher = std::make_shared<WatchState>();
  ks_->watches().Watch(ks_->Physical(0), "h", watcher);
  const uint64_t before = ks_->engine()->LatestSequence();
  HSet("f", "v");
  EXPECT_EQ(ks_->engine()->LatestSequence(), before);
  EXPECT_TRUE(watcher->dirty);
  HSet("f", "w");
  EXPECT_EQ(ks_->engine()->LatestSequence(), before + 1);  // the field entry alone
  EXPECT_EQ(Value("f"), "w");
  HSet("g", "w");
  EXPECT_EQ(ks_->engine()->LatestSequence(), before + 3);  // and the metadata with its size
  EXPECT_EQ(Get(0, "h").meta.size, 2u);
}

TEST_F(HashCodecTest, ReadFieldsResolvesOnlyWhenAsked) {
  HSet("a", "1");
  HSet("b", std::string(5000, 'x'));
  Context ctx(ks_.get());
  KeyState state = Get(0, "h");
  auto names = ReadFields(ctx, 0, "h", state.meta, false);
  ASSERT_TRUE(names.ok());
  ASSERT_EQ(names->size(), 2u);
  EXPECT_EQ((*names)[1].name, "b");
  EXPECT_TRUE((*names)[1].value.empty());
  auto all = ReadFields(ctx, 0, "h", state.meta, true);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].value, "1");
  EXPECT_TRUE((*all)[1].value == std::string(5000, 'x'));
}

}  // namespace
}  // namespace basalt
