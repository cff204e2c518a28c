// Sorted sets: the score encoding and the member/score codec over the two column families.
//
// Every member has two entries under the collection prefix (db | len | key | version):
//   subkey     : prefix | member                 -> EncodeScore(score)
//   zset_score : prefix | EncodeScore(score) | member -> empty
// EncodeScore maps a double to 8 bytes whose memcmp order is the numeric order, so the score
// index iterates in (score, member) order, which is exactly Redis's sorted-set order.
// The metadata keeps the exact member count; ZsetWriter maintains it with one metadata write.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "types/collection.h"
#include "types/member_filter.h"

namespace basalt {

constexpr size_t kScoreBytes = 8;

// IEEE-754 bits, big-endian, all bits flipped for negatives and the sign bit for positives;
// -0 is stored as 0. NaN is never stored (callers reject it).
std::string EncodeScore(double score);
double DecodeScore(std::string_view in);

struct ScoredMember {
  std::string member;
  double score = 0;
};

// A score interval as ZRANGEBYSCORE takes it: "(" makes a bound exclusive.
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
  bool Contains(double v) const {
    return (minex ? v > min : v >= min) && (maxex ? v < max : v <= max);
  }
  bool Empty() const { return min > max || (min == max && (minex || maxex)); }
};
// Parses Redis's score bound syntax ("1.5", "(1.5", "-inf", "+inf").
bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out);

// A lexicographic interval: "[a" inclusive, "(a" exclusive, "-" and "+" the infinities.
struct LexBound {
  int inf = 0;  // -1 for "-", +1 for "+", 0 for a value
  std::string value;
  bool exclusive = false;
};
struct LexRange {
  LexBound min, max;
  bool AboveMin(std::string_view m) const;
  bool BelowMax(std::string_view m) const;
  bool Empty() const;
};
bool ParseLexRange(std::string_view min, std::string_view max, LexRange* out);

// Pops leave the popped members' `subkey` entries in place (Metadata's ZsetEnd): what the
// metadata says of the `subkey` entry whose score | member is `entry`. kAsk: a member only if
// the score index holds `entry`.
enum class ZsetSubkeyEntry { kMember, kDead, kAsk };
ZsetSubkeyEntry JudgeZsetSubkeyEntry(const Metadata& meta, std::string_view entry);
// Whether the `subkey` entry of `member`, holding `value` (its encoded score), is a member of
// the sorted set `meta`: every reader of a sorted set's `subkey` entries asks this.
StatusOr<bool> ZsetMemberLive(Context& ctx, int db, std::string_view key, const Metadata& meta,
                              std::string_view member, std::string_view value);

// Reads one member's score. NotFound when absent.
Status GetScore(Context& ctx, int db, std::string_view key, const Metadata& meta,
                std::string_view member, double* score);

// Visits members in order; the visitor returns false to stop. `reverse` walks from the top.
using ZsetVisitor = std::function<bool(std::string_view member, double score)>;

// Members whose forward ranks are in [start, stop] (already clamped to the set), ascending;
// iterates from whichever end of the score index is nearer. Stops early, returning only part of
// the range, once the members gathered pass `max_bytes` (a reply over max-reply-size).
StatusOr<std::vector<ScoredMember>> RankRange(Context& ctx, int db, std::string_view key,
                                              const Metadata& meta, uint64_t start, uint64_t stop,
                                              size_t max_bytes = SIZE_MAX);
// The members a pop of `count` takes from the low end (the high end if `from_top`), in pop
// order; it removes nothing. A single pop leaves what it read to the batch as a run
// (Batch::RememberPopRun); one that follows a used-up run of the same sorted set in the write
// group (a pipeline of pops) reads the next entries at that end once, for the pops after it:
// one seek per run, not per pop.
StatusOr<std::vector<ScoredMember>> PopCandidates(Context& ctx, int db, std::string_view key,
                                                  const Metadata& meta, uint64_t count,
                                                  bool from_top);
// The forward rank of `member` (which has `score`): walks from both ends at once, so the cost
// is the distance to the nearer end.
StatusOr<uint64_t> MemberRank(Context& ctx, int db, std::string_view key, const Metadata& meta,
                              std::string_view member, double score);
// Members with a score in `range`, in score order (descending with `reverse`).
Status ScanScoreRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                      const ScoreRange& range, bool reverse, const ZsetVisitor& visit);
// Members in the lex `range` (Redis assumes equal scores; members are read in member order).
Status ScanLexRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                    const LexRange& range, bool reverse, const ZsetVisitor& visit);
// Every member in score order.
StatusOr<std::vector<ScoredMember>> ReadAll(Context& ctx, int db, std::string_view key,
                                            const Metadata& meta);

// Builds the next state of one sorted set: member writes go to the batch at once, the metadata
// is written once by Finish(), which deletes the key when the set becomes empty.
class ZsetWriter {
 public:
  // Continues the live sorted set in `old`, or starts a new one if `old` is not live. With
  // `replace` a new empty incarnation replaces whatever `old` holds (the *STORE commands).
  ZsetWriter(Context& ctx, int db, std::string_view key, const KeyState& old, bool replace = false);
  uint64_t version() const { return meta_.version; }
  uint64_t size() const { return meta_.size; }
  // The member's score in the incarnation written, through the batch (a member named twice in
  // one command is found the second time); NotFound when absent. A member the incarnation never
  // held is known absent without a read (types/member_filter.h).
  Status Find(std::string_view member, double* score);
  // Sets member's score; `old_score` is its current score if it is in the set.
  void Put(std::string_view member, double score, const double* old_score);
  // The member must be in the set with `score`.
  void Remove(std::string_view member, double score);
  // Removes `items`, the lowest (or, `from_top`, the highest) members in order: later scans from
  // that end start past them (Metadata::zset), and their `subkey` entries stay,
  // dead by the metadata, unless too long an entry left the mark where it was.
  void Pop(const std::vector<ScoredMember>& items, bool from_top);
  void Finish();

 private:
  // Keep each end's list of the live entries beyond its pop mark (Metadata::ZsetEnd).
  void ListIfBeyond(std::string_view entry);
  void UnlistIfBeyond(std::string_view entry);
  // Moves the mark at that end to `entry`, the last one popped, when it can hold it.
  void PoppedThrough(const std::string& entry, bool from_top);

  Context& ctx_;
  int db_;
  std::string key_;
  KeyState old_;
  Metadata meta_;
  MemberFilterRef filter_;
  bool changed_ = false;
};

}  // namespace basalt
