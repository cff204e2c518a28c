// The member-per-entry codec (types/set.h) against a real RocksDB: CollectionWriter keeps the
// exact size with one metadata write and deletes an emptied collection; RandomMembers returns
// distinct members (or repeats when asked) both from a full read and from random probes into a
// large collection.
#include <gtest/gtest.h>

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <set>
#include <string>

#include "keyspace_fixture.h"
#include "types/set.h"

namespace basalt {
namespace {

// "m<i>", built with append: GCC 12 warns falsely (-Wrestrict) on Name(i).
std::string Name(int i) {
  std::string out("m");
  out.append(std::to_string(i));
  return out;
}

class SetCodecTest : public KeyspaceFixture {
 protected:
  void Add(const std::string& key, int from, int to) {
    Context ctx(ks_.get());
    auto old = LookupCollection(ctx, 0, key, RedisType::kSet);
    ASSERT_TRUE(old.ok());
    CollectionWriter w(ctx, 0, key, *old, RedisType::kSet);
    for (int i = from; i < to; i++) w.Put(Name(i), "", true);
    w.Finish();
    ASSERT_TRUE(ctx.Commit().ok());
  }

  std::vector<Member> Sample(const std::string& key, uint64_t count, bool repeats) {
    Context ctx(ks_.get());
    KeyState state = Get(0, key);
    auto out = RandomMembers(ctx, 0, key, state.meta, count, repeats);
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : std::vector<Member>();
  }
};

TEST_F(SetCodecTest, WriterKeepsExactSizeAndDeletesWhenEmpty) {
  Add("s", 0, 10);
  EXPECT_EQ(Get(0, "s").meta.size, 10u);
  Context ctx(ks_.get());
  auto old = LookupCollection(ctx, 0, "s", RedisType::kSet);
  ASSERT_TRUE(old.ok());
  CollectionWriter w(ctx, 0, "s", *old, RedisType::kSet);
  for (int i = 0; i < 10; i++) w.Remove(Name(i));
  w.Finish();
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_FALSE(Get(0, "s").present);
  EXPECT_EQ(ks_->KeyCount(0), 0);
}

TEST_F(SetCodecTest, ReplaceStartsANewIncarnation) {
  Add("s", 0, 5);
  uint64_t first = Get(0, "s").meta.version;
  Context ctx(ks_.get());
  auto old = LookupCollection(ctx, 0, "s", RedisType::kSet);
  ASSERT_TRUE(old.ok());
  CollectionWriter w = CollectionWriter::Replace(ctx, 0, "s", *old, RedisType::kSet);
  w.Put("fresh", "", true);
  w.Finish();
  ASSERT_TRUE(ctx.Commit().ok());
  KeyState now = Get(0, "s");
  EXPECT_NE(now.meta.version, first);
  EXPECT_EQ(now.meta.size, 1u);
  Context read(ks_.get());
  auto members = ReadMembers(read, 0, "s", now.meta);
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].name, "fresh");
}

TEST_F(SetCodecTest, SamplesFromAFullReadAreDistinct) {
  Add("small", 0, 100);
  auto picked = Sample("small", 60, false);
  ASSERT_EQ(picked.size(), 60u);
  std::set<std::string> names;
  for (const auto& m : picked) names.insert(m.name);
  EXPECT_EQ(names.size(), 60u);
  EXPECT_EQ(Sample("small", 300, true).size(), 300u);  // repeats allowed
}

TEST_F(SetCodecTest, ProbesIntoALargeSetAreDistinctAndSpread) {
  Add("big", 0, 5000);
  auto picked = Sample("big", 200, false);
  ASSERT_EQ(picked.size(), 200u);
  std::set<std::string> names;
  for (const auto& m : picked) names.insert(m.name);
  EXPECT_EQ(names.size(), 200u);
  // Random points land all over the key range, not only near one end.
  EXPECT_LT(*names.begin(), "m2");
  EXPECT_GT(*names.rbegin(), "m7");
}

// FLUSHDB drops a database with range deletions, and RocksDB's iterators step over the keys
// such a deletion covers one by one while both sit in one memtable, whatever the iterator's
// bounds: after a FLUSHALL, a read that runs off the end of a small set would walk every flushed
// key sorting after it (docs/benchmarks.md, "Storage upkeep"). The versioned families ignore range
// deletions (Engine::PrepareRead), so reading the new set compares a few keys, not thousands.
// (Once flushed to a file, RocksDB seeks past the covered keys itself.)
TEST_F(SetCodecTest, ReadsAfterAFlushDoNotStepOverTheFlushedMembers) {
  Add("s", 0, 5000);
  Add("t", 0, 5000);  // after "s" in `subkey` order: a read running off the end of "s" meets it
  ASSERT_TRUE(ks_->FlushDatabase(0).ok());
  Add("s", 0, 10);
  Add("t", 0, 10);
  KeyState state = Get(0, "s");
  const rocksdb::PerfLevel saved = rocksdb::GetPerfLevel();
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  Context ctx(ks_.get());
  auto members = ReadMembers(ctx, 0, "s", state.meta);
  std::string member;
  Status got = GetMember(ctx, 0, "s", state.meta.version, Name(3), &member);
  Status gone = GetMember(ctx, 0, "s", state.meta.version, Name(30), &member);
  uint64_t compared = rocksdb::get_perf_context()->user_key_comparison_count;
  std::string report = rocksdb::get_perf_context()->ToString(true);
  rocksdb::SetPerfLevel(saved);
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 10u);
  for (int i = 0; i < 10; i++) EXPECT_EQ((*members)[i].name, Name(i)) << i;
  EXPECT_TRUE(got.ok());
  EXPECT_TRUE(gone.IsNotFound());  // member 30 was flushed with the old incarnation
  EXPECT_LT(compared, 500u) << report;
}

}  // namespace
}  // namespace basalt
