#include "types/zset.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/strutil.h"

namespace basalt {

namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;

Status IterStatus(const MemberIterator& it) {
  return it.status();
}

// How many entries a run of single pops reads ahead (PopCandidates).
constexpr uint64_t kPopReadAhead = 32;

// A zset_score entry's member part: encoded score | member.
std::string_view IndexMember(std::string_view entry) {
  return entry.substr(kScoreBytes);
}
double IndexScore(std::string_view entry) {
  return DecodeScore(entry.substr(0, kScoreBytes));
}

// Pops that halve a sorted set of at least this many members note its `subkey` range for the
// reclaimer (ZsetWriter::Pop).
constexpr uint64_t kReclaimedPops = 8192;

// Entries longer than this are not kept in the metadata, which every command reads.
constexpr size_t kMaxMark = 256;
// At most this many bytes of entries are listed beyond each end's mark (ZsetEnd::beyond).
constexpr size_t kMaxBeyondBytes = 512;

// Whether `entry` lies beyond `end`'s pop mark: below a low one, above a high one.
bool BeyondMark(const ZsetEnd& end, std::string_view entry, bool top) {
  return !end.mark.empty() && (top ? entry > end.mark : entry < end.mark);
}

// A string no longer than kMaxMark that sorts at or below `entry` (at or above it with `top`).
std::string BoundOf(std::string_view entry, bool top) {
  if (entry.size() <= kMaxMark) return std::string(entry);
  std::string bound(entry.substr(0, kMaxMark));
  if (!top) return bound;  // a prefix sorts before the whole
  // The shortest string above every string that starts with the prefix.
  while (!bound.empty() && static_cast<uint8_t>(bound.back()) == 0xff) bound.pop_back();
  if (bound.empty()) return std::string(entry);
  bound.back() = static_cast<char>(static_cast<uint8_t>(bound.back()) + 1);
  return bound;
}

// Walks the score index from one end: first the live entries the metadata lists beyond that
// end's pop mark, then from the mark on (Metadata::ZsetEnd), so it never steps over the
// tombstones of earlier pops. The iterator is made only when the walk gets past the list: a
// single pop of a member added beyond the mark reads nothing.
class EndWalk {
 public:
  EndWalk(Context& ctx, int db, std::string_view key, const Metadata& meta, bool top)
      : ctx_(ctx), db_(db), key_(key), meta_(meta) {
    SetEnd(top);
  }

  // Positions at the first live entry from this end.
  void Start() { StartWith(end_->beyond.size(), end_->mark); }
  // Positions at the first live entry from the end given (the iterator, once made, is reused).
  void StartFrom(bool top) {
    SetEnd(top);
    Start();
  }
  // The low end only: positions at the first live entry at or above `target`.
  void StartAtOrAbove(std::string target) {
    auto first = std::lower_bound(end_->beyond.begin(), end_->beyond.end(), target);
    StartWith(end_->beyond.end() - first, std::max(target, end_->mark));
  }
  // The high end only: positions at the last live entry below `target`.
  void StartBelow(std::string target) {
    auto first = std::lower_bound(end_->beyond.begin(), end_->beyond.end(), target);
    bool from_mark = !end_->mark.empty() && end_->mark < target;
    StartWith(first - end_->beyond.begin(), from_mark ? end_->mark : std::move(target), !from_mark);
  }
  bool Valid() const { return listed_ > 0 || (it_.has_value() && it_->Valid()); }
  // score | member of the current entry.
  std::string_view entry() const { return listed_ > 0 ? Listed() : it_->member(); }
  // Moves one entry away from the end.
  void Step() {
    if (listed_ == 0) {
      top_ ? it_->Prev() : it_->Next();
    } else if (--listed_ == 0) {
      Seek();
    }
  }
  Status status() const { return it_.has_value() ? IterStatus(*it_) : Status::OK(); }

 private:
  void SetEnd(bool top) {
    top_ = top;
    end_ = &meta_.zset.end(top);
  }
  // Takes the `listed` listed entries nearest the mark, the farthest of them first, then
  // continues from `resume` (the high end: at or below it, or below it with `before`).
  void StartWith(size_t listed, std::string resume, bool before = false) {
    listed_ = listed;
    resume_ = std::move(resume);
    before_ = before;
    if (listed_ == 0) Seek();
  }
  std::string_view Listed() const {
    const auto& list = end_->beyond;
    return top_ ? list[listed_ - 1] : list[list.size() - listed_];
  }
  void Seek() {
    if (!it_.has_value()) it_.emplace(ctx_, ColumnFamily::kZsetScore, db_, key_, meta_.version);
    if (!top_) return it_->Seek(resume_);
    if (!before_) return it_->SeekToLast(resume_);
    it_->Seek(resume_);
    if (it_->Valid()) {
      it_->Prev();
    } else if (IterStatus(*it_).ok()) {
      it_->SeekToLast();
    }
  }

  Context& ctx_;
  int db_;
  std::string_view key_;
  const Metadata& meta_;
  const ZsetEnd* end_ = nullptr;
  bool top_ = false;
  size_t listed_ = 0;  // listed entries left, the current one included
  std::string resume_;
  bool before_ = false;
  std::optional<MemberIterator> it_;
};

// Compares two lex bounds, the infinities included.
int CompareBounds(const LexBound& a, const LexBound& b) {
  if (a.inf != 0 || b.inf != 0) return a.inf == b.inf ? 0 : (a.inf < b.inf ? -1 : 1);
  return a.value.compare(b.value) < 0 ? -1 : (a.value == b.value ? 0 : 1);
}

bool ParseLexBound(std::string_view s, LexBound* out) {
  if (s.empty()) return false;
  switch (s[0]) {
    case '+':
    case '-':
      if (s.size() != 1) return false;
      out->inf = s[0] == '+' ? 1 : -1;
      out->exclusive = true;
      return true;
    case '(':
    case '[':
      out->exclusive = s[0] == '(';
      out->value = std::string(s.substr(1));
      return true;
    default:
      return false;
  }
}

bool ParseScoreBound(std::string_view s, double* v, bool* exclusive) {
  *exclusive = !s.empty() && s[0] == '(';
  if (*exclusive) s.remove_prefix(1);
  // Redis's zslParseRange: plain strtod, so "1e400" is inf and "(" alone is 0.
  std::string buf(s);
  char* end = nullptr;
  double d = std::strtod(buf.c_str(), &end);
  if (*end != '\0' || std::isnan(d)) return false;
  *v = d;
  return true;
}

// Walks the score index in order from the first member at or above the lower bound (the order
// Redis's small sorted sets use for lex ranges whatever their scores).
Status ScanLexByScoreIndex(Context& ctx, int db, std::string_view key, const Metadata& meta,
                           const LexRange& range, bool reverse, const ZsetVisitor& visit) {
  EndWalk walk(ctx, db, key, meta, true);
  // Like zzlIsInLexRange: nothing when the last member is below min or the first above max.
  walk.Start();
  if (walk.Valid() && !range.AboveMin(IndexMember(walk.entry()))) return walk.status();
  walk.StartFrom(false);
  if (walk.Valid() && !range.BelowMax(IndexMember(walk.entry()))) return walk.status();
  if (reverse) walk.StartFrom(true);
  bool started = false;
  for (; walk.Valid(); walk.Step()) {
    std::string_view m = IndexMember(walk.entry());
    if (!started) {
      if (reverse ? !range.BelowMax(m) : !range.AboveMin(m)) continue;
      started = true;
    }
    if (reverse ? !range.AboveMin(m) : !range.BelowMax(m)) break;
    if (!visit(m, IndexScore(walk.entry()))) break;
  }
  return walk.status();
}

// Whether every member has the same score (then member order is score order).
StatusOr<bool> UniformScores(Context& ctx, int db, std::string_view key, const Metadata& meta) {
  EndWalk walk(ctx, db, key, meta, false);
  walk.Start();
  if (!walk.Valid()) return walk.status().ok() ? StatusOr<bool>(true) : walk.status();
  std::string first(walk.entry().substr(0, kScoreBytes));
  walk.StartFrom(true);
  if (!walk.Valid()) return walk.status().ok() ? StatusOr<bool>(true) : walk.status();
  return walk.entry().substr(0, kScoreBytes) == first;
}

}  // namespace

std::string EncodeScore(double score) {
  if (score == 0) score = 0.0;  // -0 sorts and reads back as 0
  uint64_t bits;
  std::memcpy(&bits, &score, sizeof(bits));
  bits = (bits & kSignBit) ? ~bits : (bits | kSignBit);
  std::string out(kScoreBytes, '\0');
  for (size_t i = 0; i < kScoreBytes; i++) out[i] = static_cast<char>(bits >> (56 - 8 * i));
  return out;
}

double DecodeScore(std::string_view in) {
  uint64_t bits = 0;
  for (size_t i = 0; i < kScoreBytes && i < in.size(); i++) {
    bits = (bits << 8) | static_cast<uint8_t>(in[i]);
  }
  bits = (bits & kSignBit) ? (bits & ~kSignBit) : ~bits;
  double score;
  std::memcpy(&score, &bits, sizeof(score));
  return score;
}

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out) {
  return ParseScoreBound(min, &out->min, &out->minex) &&
         ParseScoreBound(max, &out->max, &out->maxex);
}

bool LexRange::AboveMin(std::string_view m) const {
  if (min.inf != 0) return min.inf < 0;
  int cmp = m.compare(min.value);
  return min.exclusive ? cmp > 0 : cmp >= 0;
}

bool LexRange::BelowMax(std::string_view m) const {
  if (max.inf != 0) return max.inf > 0;
  int cmp = m.compare(max.value);
  return max.exclusive ? cmp < 0 : cmp <= 0;
}

bool LexRange::Empty() const {
  int cmp = CompareBounds(min, max);
  return cmp > 0 || (cmp == 0 && (min.exclusive || max.exclusive));
}

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* out) {
  return ParseLexBound(min, &out->min) && ParseLexBound(max, &out->max);
}

ZsetSubkeyEntry JudgeZsetSubkeyEntry(const Metadata& meta, std::string_view entry) {
  ZsetSubkeyEntry judged = ZsetSubkeyEntry::kMember;
  for (bool top : {false, true}) {
    const ZsetEnd& end = meta.zset.end(top);
    if (end.mark.empty()) continue;
    if (BeyondMark(end, entry, top)) {
      // Every member beyond the mark is listed; the rest there were popped.
      if (!std::binary_search(end.beyond.begin(), end.beyond.end(), entry))
        return ZsetSubkeyEntry::kDead;
      continue;
    }
    // From the mark to the reach, pops and members the mark moved out over lie side by side:
    // only the pops' tombstones in the score index tell them apart.
    const std::string& reach = end.reach.empty() ? end.mark : end.reach;
    if (top ? entry >= std::string_view(reach) : entry <= std::string_view(reach))
      judged = ZsetSubkeyEntry::kAsk;
  }
  return judged;
}

StatusOr<bool> ZsetMemberLive(Context& ctx, int db, std::string_view key, const Metadata& meta,
                              std::string_view member, std::string_view value) {
  if (!meta.zset.Marked()) return true;
  std::string entry;
  entry.reserve(value.size() + member.size());
  entry.append(value).append(member);
  switch (JudgeZsetSubkeyEntry(meta, entry)) {
    case ZsetSubkeyEntry::kMember:
      return true;
    case ZsetSubkeyEntry::kDead:
      return false;
    case ZsetSubkeyEntry::kAsk:
      break;
  }
  std::string unused;
  auto s = ctx.batch().Get(ColumnFamily::kZsetScore, MemberKey(ctx, db, key, meta.version, entry),
                           &unused);
  if (s.IsNotFound()) return false;
  if (!s.ok()) return Status::IOError(s.ToString());
  return true;
}

Status GetScore(Context& ctx, int db, std::string_view key, const Metadata& meta,
                std::string_view member, double* score) {
  std::string value;
  auto s =
      ctx.batch().Get(ColumnFamily::kSubkey, MemberKey(ctx, db, key, meta.version, member), &value);
  if (s.IsNotFound()) return Status::NotFound();
  if (!s.ok()) return Status::IOError(s.ToString());
  StatusOr<bool> live = ZsetMemberLive(ctx, db, key, meta, member, value);
  if (!live.ok()) return live.status();
  if (!*live) return Status::NotFound();
  *score = DecodeScore(value);
  return Status::OK();
}

StatusOr<std::vector<ScoredMember>> RankRange(Context& ctx, int db, std::string_view key,
                                              const Metadata& meta, uint64_t start, uint64_t stop,
                                              size_t max_bytes) {
  std::vector<ScoredMember> out;
  if (start > stop || start >= meta.size) return out;
  stop = std::min(stop, meta.size - 1);
  bool from_top = meta.size - 1 - stop < start;
  uint64_t skip = from_top ? meta.size - 1 - stop : start;
  uint64_t rank = 0;
  size_t bytes = 0;
  EndWalk walk(ctx, db, key, meta, from_top);
  for (walk.Start(); walk.Valid() && out.size() <= stop - start && bytes <= max_bytes;
       walk.Step()) {
    if (rank++ < skip) continue;
    out.push_back({std::string(IndexMember(walk.entry())), IndexScore(walk.entry())});
    bytes += out.back().member.size();
  }
  Status s = walk.status();
  if (!s.ok()) return s;
  if (from_top) std::reverse(out.begin(), out.end());
  return out;
}

StatusOr<std::vector<ScoredMember>> PopCandidates(Context& ctx, int db, std::string_view key,
                                                  const Metadata& meta, uint64_t count,
                                                  bool from_top) {
  // The first `n` members at the popped end, in pop order.
  auto end_members = [&](uint64_t n) {
    auto items = from_top ? RankRange(ctx, db, key, meta, meta.size - n, meta.size - 1)
                          : RankRange(ctx, db, key, meta, 0, n - 1);
    if (items.ok() && from_top) std::reverse(items->begin(), items->end());
    return items;
  };
  uint64_t n = std::min(count, meta.size);
  if (n != 1 || meta.size < 2) return end_members(n);
  // The run is consulted only once this group has written the key (its stripe is held since).
  bool in_a_run = ctx.batch().WritesMetadata(MetadataKey(ctx.keyspace()->Physical(db), key));
  std::string prefix = MemberKey(ctx, db, key, meta.version, "");
  const std::string* next = in_a_run ? ctx.batch().NextOfPopRun(prefix, from_top) : nullptr;
  if (next == nullptr) {
    // A pop reads its own entry only (often listed in the metadata: no read at all) unless a
    // pop before it in the group has used up a run; a ZADD and a ZPOPMIN read nothing unused.
    bool after_a_pop = in_a_run && ctx.batch().HasPopRun(prefix, from_top);
    auto run = end_members(std::min(after_a_pop ? kPopReadAhead : 1, meta.size));
    if (!run.ok()) return run.status();
    std::vector<std::string> keys;
    keys.reserve(run->size());
    for (const ScoredMember& item : *run)
      keys.push_back(prefix + EncodeScore(item.score) + item.member);
    ctx.batch().RememberPopRun(prefix, from_top, std::move(keys));
    next = ctx.batch().NextOfPopRun(prefix, from_top);
    if (next == nullptr) return std::vector<ScoredMember>{};
  }
  std::string_view entry = std::string_view(*next).substr(prefix.size());
  return std::vector<ScoredMember>{{std::string(IndexMember(entry)), IndexScore(entry)}};
}

StatusOr<uint64_t> MemberRank(Context& ctx, int db, std::string_view key, const Metadata& meta,
                              std::string_view member, double score) {
  std::string target = EncodeScore(score);
  target.append(member);
  EndWalk up(ctx, db, key, meta, false), down(ctx, db, key, meta, true);
  up.Start();
  down.Start();
  for (uint64_t i = 0; i < meta.size && up.Valid() && down.Valid(); i++) {
    if (up.entry() == target) return i;
    if (down.entry() == target) return meta.size - 1 - i;
    up.Step();
    down.Step();
  }
  Status s = up.status();
  if (s.ok()) s = down.status();
  if (!s.ok()) return s;
  return Status::NotFound();
}

Status ScanScoreRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                      const ScoreRange& range, bool reverse, const ZsetVisitor& visit) {
  if (range.Empty()) return Status::OK();
  EndWalk walk(ctx, db, key, meta, reverse);
  if (!reverse) {
    walk.StartAtOrAbove(EncodeScore(range.min));
  } else if (range.max == INFINITY && !range.maxex) {
    walk.Start();
  } else {
    // The last entry below the first score past the range.
    walk.StartBelow(EncodeScore(range.maxex ? range.max : std::nextafter(range.max, INFINITY)));
  }
  for (; walk.Valid(); walk.Step()) {
    double score = IndexScore(walk.entry());
    if (range.Contains(score)) {
      if (!visit(IndexMember(walk.entry()), score)) break;
      continue;
    }
    // Out of range on the far side ends the walk; on the near side (an exclusive bound equal
    // to the score) it is skipped.
    bool beyond = reverse ? (score < range.min || (score == range.min && range.minex))
                          : (score > range.max || (score == range.max && range.maxex));
    if (beyond) break;
  }
  return walk.status();
}

Status ScanLexRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                    const LexRange& range, bool reverse, const ZsetVisitor& visit) {
  if (range.Empty()) return Status::OK();
  auto uniform = UniformScores(ctx, db, key, meta);
  if (!uniform.ok()) return uniform.status();
  if (!*uniform) return ScanLexByScoreIndex(ctx, db, key, meta, range, reverse, visit);
  // Equal scores: member order is the set's order, and the subkey family seeks by member.
  MemberIterator it(ctx, ColumnFamily::kSubkey, db, key, meta.version);
  if (!reverse) {
    it.Seek(range.min.inf == 0 ? std::string_view(range.min.value) : std::string_view());
  } else if (range.max.inf > 0) {
    it.SeekToLast();
  } else {
    it.Seek(range.max.value);
    if (!it.Valid() && IterStatus(it).ok()) it.SeekToLast();
  }
  bool started = false;
  for (; it.Valid(); reverse ? it.Prev() : it.Next()) {
    std::string_view m = it.member();
    if (!started) {
      if (reverse ? !range.BelowMax(m) : !range.AboveMin(m)) continue;
      started = true;
    }
    if (reverse ? !range.AboveMin(m) : !range.BelowMax(m)) break;
    StatusOr<bool> live = ZsetMemberLive(ctx, db, key, meta, m, it.value());
    if (!live.ok()) return live.status();
    if (*live && !visit(m, DecodeScore(it.value()))) break;
  }
  return IterStatus(it);
}

StatusOr<std::vector<ScoredMember>> ReadAll(Context& ctx, int db, std::string_view key,
                                            const Metadata& meta) {
  std::vector<ScoredMember> out;
  out.reserve(meta.size);
  EndWalk walk(ctx, db, key, meta, false);
  for (walk.Start(); walk.Valid(); walk.Step()) {
    out.push_back({std::string(IndexMember(walk.entry())), IndexScore(walk.entry())});
  }
  Status s = walk.status();
  if (!s.ok()) return s;
  return out;
}

ZsetWriter::ZsetWriter(Context& ctx, int db, std::string_view key, const KeyState& old,
                       bool replace)
    : ctx_(ctx),
      db_(db),
      key_(key),
      old_(old),
      meta_(old.live() && !replace ? old.meta : NewCollection(RedisType::kZset)),
      filter_(ctx.keyspace()->member_filters(), meta_.version, !(old.live() && !replace)),
      changed_(replace) {}

Status ZsetWriter::Find(std::string_view member, double* score) {
  if (!filter_.MayHold(member)) return Status::NotFound();
  return GetScore(ctx_, db_, key_, meta_, member, score);
}

void ZsetWriter::Put(std::string_view member, double score, const double* old_score) {
  std::string encoded = EncodeScore(score);
  // The `zset_score` keys end with their entries (score, member): built in one piece each.
  const size_t entry_size = encoded.size() + member.size();
  auto entry_of = [&](const std::string& score_key) {
    return std::string_view(score_key).substr(score_key.size() - entry_size);
  };
  std::string score_key = MemberKey(ctx_, db_, key_, meta_.version, encoded, member);
  if (old_score != nullptr) {
    std::string old_encoded = EncodeScore(*old_score);
    if (old_encoded == encoded) return;
    std::string old_key = MemberKey(ctx_, db_, key_, meta_.version, old_encoded, member);
    UnlistIfBeyond(entry_of(old_key));
    ctx_.batch().Delete(ColumnFamily::kZsetScore, old_key);
  } else {
    meta_.size++;
  }
  ListIfBeyond(entry_of(score_key));
  filter_.Note(member);
  ctx_.batch().Put(ColumnFamily::kSubkey, MemberKey(ctx_, db_, key_, meta_.version, member),
                   encoded);
  ctx_.batch().Put(ColumnFamily::kZsetScore, score_key, "");
  changed_ = true;
}

void ZsetWriter::Remove(std::string_view member, double score) {
  std::string entry = EncodeScore(score) + std::string(member);
  UnlistIfBeyond(entry);
  ctx_.batch().Delete(ColumnFamily::kSubkey, MemberKey(ctx_, db_, key_, meta_.version, member));
  ctx_.batch().Delete(ColumnFamily::kZsetScore, MemberKey(ctx_, db_, key_, meta_.version, entry));
  meta_.size--;
  changed_ = true;
}

void ZsetWriter::Pop(const std::vector<ScoredMember>& items, bool from_top) {
  if (items.empty()) return;
  const uint64_t size_before = meta_.size;
  std::vector<std::string> entries;
  entries.reserve(items.size());
  for (const ScoredMember& item : items) {
    entries.push_back(EncodeScore(item.score) + item.member);
    UnlistIfBeyond(entries.back());
    ctx_.batch().Delete(ColumnFamily::kZsetScore,
                        MemberKey(ctx_, db_, key_, meta_.version, entries.back()));
  }
  meta_.size -= items.size();
  changed_ = true;
  PoppedThrough(entries.back(), from_top);
  // The marks now say the rest are dead: only the index's tombstones are written for them. A
  // `subkey` entry inserts at a random place in its memtable, so this halves a pop's writing.
  for (size_t i = 0; i < items.size(); i++) {
    if (JudgeZsetSubkeyEntry(meta_, entries[i]) == ZsetSubkeyEntry::kMember) {
      ctx_.batch().Delete(ColumnFamily::kSubkey,
                          MemberKey(ctx_, db_, key_, meta_.version, items[i].member));
    }
  }
  // With no tombstones among them, nothing brings a compaction to the files of the popped
  // members' `subkey` entries: each time pops halve a large set, its files are noted for the
  // reclaimer (storage/reclaimer.h), whose compaction filter drops the dead entries.
  if (size_before >= kReclaimedPops && std::bit_width(meta_.size) < std::bit_width(size_before)) {
    ctx_.batch().NoteDeadRange(ColumnFamily::kSubkey, MemberKey(ctx_, db_, key_, meta_.version, ""),
                               MemberKey(ctx_, db_, key_, meta_.version + 1, ""));
  }
}

void ZsetWriter::PoppedThrough(const std::string& entry, bool from_top) {
  ZsetEnd& end = meta_.zset.mutable_end(from_top);
  // A member listed beyond the mark (Pop has unlisted it) leaves the mark where the
  // tombstones end. Any other pops past all the listed ones first.
  if (BeyondMark(end, entry, from_top)) return;
  end.beyond.clear();
  if (entry.size() > kMaxMark) return;
  end.mark = entry;
  // Past the reach, the mark stands for every pop again.
  if (!end.reach.empty() && (from_top ? entry <= end.reach : entry >= end.reach)) {
    end.reach.clear();
  }
}

void ZsetWriter::ListIfBeyond(std::string_view entry) {
  for (bool top : {false, true}) {
    if (!BeyondMark(meta_.zset.end(top), entry, top)) continue;
    ZsetEnd& end = meta_.zset.mutable_end(top);
    auto& list = end.beyond;
    size_t bytes = entry.size();
    for (const std::string& e : list) bytes += e.size();
    if (entry.size() <= kMaxMark && bytes <= kMaxBeyondBytes) {
      list.insert(std::lower_bound(list.begin(), list.end(), entry), std::string(entry));
      continue;
    }
    // Too many to list: the farthest entry becomes the mark, and the pops' tombstones between
    // it and the old mark will be stepped over. The popped members' `subkey` entries there are
    // told from the members by the reach (ZsetEnd), which keeps the innermost pop.
    std::string_view farthest = entry;
    if (!list.empty())
      farthest = top ? std::max(farthest, std::string_view(list.back()))
                     : std::min(farthest, std::string_view(list.front()));
    if (end.reach.empty()) end.reach = std::move(end.mark);
    end.mark = BoundOf(farthest, top);
    list.clear();
  }
}

void ZsetWriter::UnlistIfBeyond(std::string_view entry) {
  for (bool top : {false, true}) {
    if (!BeyondMark(meta_.zset.end(top), entry, top)) continue;
    ZsetEnd& end = meta_.zset.mutable_end(top);
    auto it = std::lower_bound(end.beyond.begin(), end.beyond.end(), entry);
    if (it != end.beyond.end() && *it == entry) end.beyond.erase(it);
  }
}

void ZsetWriter::Finish() {
  if (!changed_) return;
  ctx_.WriteCollection(db_, key_, meta_, old_);
  changed_ = false;
}

}  // namespace basalt
