// The string layouts (types/string.h) against a real RocksDB: inline and segmented values read
// back the same, edits touch only their segments, gaps read as zeros, and a whole-value rewrite
// leaves the old segments to the compaction filter.
#include <gtest/gtest.h>

#include <string>

#include "keyspace_fixture.h"
#include "types/collection.h"
#include "types/string.h"

namespace basalt {
namespace {

class StringCodecTest : public KeyspaceFixture {
 protected:
  void Put(const std::string& key, const std::string& value) {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(0, key);
    ASSERT_TRUE(old.ok());
    PutString(ctx, 0, key, value, 0, *old, StringEncoding::kAuto);
    ASSERT_TRUE(ctx.Commit().ok());
  }

  std::string Read(const std::string& key) {
    Context ctx(ks_.get());
    auto state = ctx.Lookup(0, key);
    EXPECT_TRUE(state.ok() && state->live());
    std::string out;
    EXPECT_TRUE(ReadString(ctx, 0, key, state->meta, &out).ok());
    return out;
  }

  // Applies one Write through a StringEditor and commits it.
  void Edit(const std::string& key, uint64_t offset, const std::string& bytes) {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(0, key);
    ASSERT_TRUE(old.ok());
    StringEditor editor(ctx, 0, key, *old);
    ASSERT_TRUE(editor.Write(offset, bytes).ok());
    editor.Finish(StringEncoding::kRaw);
    ASSERT_TRUE(ctx.Commit().ok());
  }

  // Number of `subkey` entries (all keys, all versions).
  int SubkeyEntries() {
    rocksdb::ReadOptions ro;
    auto it = ks_->engine()->NewIterator(ColumnFamily::kSubkey, ro);
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    return n;
  }

  static std::string Pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i++) s[i] = static_cast<char>('a' + i % 26);
    return s;
  }
};

TEST_F(StringCodecTest, SmallValuesStayInline) {
  Put("k", std::string(kInlineStringMax, 'x'));
  EXPECT_FALSE(Get(0, "k").meta.segmented);
  EXPECT_EQ(SubkeyEntries(), 0);
  EXPECT_EQ(Read("k"), std::string(kInlineStringMax, 'x'));
}

TEST_F(StringCodecTest, LargeValuesAreSegmented) {
  std::string value = Pattern(200000);
  Put("k", value);
  KeyState state = Get(0, "k");
  EXPECT_TRUE(state.meta.segmented);
  EXPECT_EQ(state.meta.size, value.size());
  EXPECT_TRUE(state.meta.value.empty());  // the metadata entry stays small
  EXPECT_EQ(SubkeyEntries(), 4);          // 200000 bytes in 64 KiB segments
  EXPECT_TRUE(Read("k") == value);

  Context ctx(ks_.get());
  std::string range;
  ASSERT_TRUE(ReadStringRange(ctx, 0, "k", state.meta, 65530, 65540, &range).ok());
  EXPECT_EQ(range, value.substr(65530, 10));
  ASSERT_TRUE(ReadStringRange(ctx, 0, "k", state.meta, 199990, 300000, &range).ok());
  EXPECT_EQ(range, value.substr(199990));
}

TEST_F(StringCodecTest, EditsGrowInlineValuesIntoSegments) {
  Put("k", "abc");
  Edit("k", 10000, "Z");
  KeyState state = Get(0, "k");
  ASSERT_TRUE(state.meta.segmented);
  EXPECT_EQ(state.meta.segment_shift, kEditSegmentShift);
  std::string expected = "abc" + std::string(9997, '\0') + "Z";
  EXPECT_TRUE(Read("k") == expected);
}

TEST_F(StringCodecTest, SparseWritesStoreOnlyTheirSegment) {
  Put("k", Pattern(kInlineStringMax + 1));  // segmented, 64 KiB segments: one entry
  ASSERT_EQ(SubkeyEntries(), 1);
  Edit("k", 10 * 1000 * 1000, "!");  // 150 segments later
  EXPECT_EQ(SubkeyEntries(), 2);
  KeyState state = Get(0, "k");
  EXPECT_EQ(state.meta.size, 10u * 1000 * 1000 + 1);

  Context ctx(ks_.get());
  std::string gap;
  ASSERT_TRUE(ReadStringRange(ctx, 0, "k", state.meta, 5000000, 5000010, &gap).ok());
  EXPECT_EQ(gap, std::string(10, '\0'));
  // The visitor delivers stored pieces only; the zeros in between are implied.
  std::vector<std::pair<uint64_t, size_t>> pieces;
  ASSERT_TRUE(VisitStringRange(ctx, 0, "k", state.meta, 0, state.meta.size,
                               [&](uint64_t offset, std::string_view bytes) {
                                 pieces.emplace_back(offset, bytes.size());
                                 return true;
                               })
                  .ok());
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0], std::make_pair(uint64_t{0}, size_t{kInlineStringMax + 1}));
  EXPECT_EQ(pieces[1].first + pieces[1].second, state.meta.size);
}

TEST_F(StringCodecTest, EditorReadsItsOwnWrites) {
  Put("k", Pattern(70000));
  Context ctx(ks_.get());
  auto old = ctx.Lookup(0, "k");
  ASSERT_TRUE(old.ok());
  StringEditor editor(ctx, 0, "k", *old);
  ASSERT_TRUE(editor.Write(65534, "XYZ").ok());  // spans two segments
  std::string out;
  ASSERT_TRUE(editor.Read(65533, 5, &out).ok());
  EXPECT_EQ(out, std::string(1, Pattern(70000)[65533]) + "XYZ" + Pattern(70000)[65537]);
  editor.Grow(80000);
  EXPECT_EQ(editor.length(), 80000u);
  ASSERT_TRUE(editor.Read(79999, 10, &out).ok());
  EXPECT_EQ(out, std::string(1, '\0'));
}

TEST_F(StringCodecTest, RewriteLeavesOldSegmentsToTheFilter) {
  Put("k", Pattern(300000));
  ASSERT_EQ(SubkeyEntries(), 5);
  Put("k", "small");
  EXPECT_EQ(Read("k"), "small");
  EXPECT_EQ(SubkeyEntries(), 5);  // stale until compaction
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(
      ks_->engine()
          ->db()
          ->CompactRange(options, ks_->engine()->cf(ColumnFamily::kSubkey), nullptr, nullptr)
          .ok());
  EXPECT_EQ(SubkeyEntries(), 0);
}

TEST_F(StringCodecTest, SegmentedValuesSurviveReopen) {
  std::string value = Pattern(100000);
  Put("k", value);
  Edit("k", 99999, "!");
  value[99999] = '!';
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_TRUE(Read("k") == value);
}

}  // namespace
}  // namespace basalt
