#include "types/zset.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

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

// Where a forward scan of the score index starting at `target` may begin: past the low mark,
// so that the tombstones of earlier pops from the low end are never stepped over.
std::string StartAtOrAfterLowMark(const Metadata& meta, std::string target) {
  return target < meta.zset_low ? meta.zset_low : target;
}

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
  MemberIterator it(ctx, ColumnFamily::kZsetScore, db, key, meta.version);
  // Like zzlIsInLexRange: nothing when the last member is below min or the first above max.
  it.SeekToLast();
  if (it.Valid() && !range.AboveMin(IndexMember(it.member()))) return IterStatus(it);
  it.Seek();
  if (it.Valid() && !range.BelowMax(IndexMember(it.member()))) return IterStatus(it);
  bool started = false;
  for (reverse ? it.SeekToLast() : it.Seek(); it.Valid(); reverse ? it.Prev() : it.Next()) {
    std::string_view m = IndexMember(it.member());
    if (!started) {
      if (reverse ? !range.BelowMax(m) : !range.AboveMin(m)) continue;
      started = true;
    }
    if (reverse ? !range.AboveMin(m) : !range.BelowMax(m)) break;
    if (!visit(m, IndexScore(it.member()))) break;
  }
  return IterStatus(it);
}

// Whether every member has the same score (then member order is score order).
StatusOr<bool> UniformScores(Context& ctx, int db, std::string_view key, const Metadata& meta) {
  MemberIterator it(ctx, ColumnFamily::kZsetScore, db, key, meta.version);
  it.Seek();
  if (!it.Valid()) return IterStatus(it).ok() ? StatusOr<bool>(true) : IterStatus(it);
  std::string first(it.member().substr(0, kScoreBytes));
  it.SeekToLast();
  if (!it.Valid()) return IterStatus(it).ok() ? StatusOr<bool>(true) : IterStatus(it);
  return it.member().substr(0, kScoreBytes) == first;
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

Status GetScore(Context& ctx, int db, std::string_view key, uint64_t version,
                std::string_view member, double* score) {
  std::string value;
  auto s = ctx.batch().Get(ColumnFamily::kSubkey, MemberKey(ctx, db, key, version, member), &value);
  if (s.IsNotFound()) return Status::NotFound();
  if (!s.ok()) return Status::IOError(s.ToString());
  *score = DecodeScore(value);
  return Status::OK();
}

StatusOr<std::vector<ScoredMember>> RankRange(Context& ctx, int db, std::string_view key,
                                              const Metadata& meta, uint64_t start, uint64_t stop,
                                              size_t max_bytes) {
  std::vector<ScoredMember> out;
  if (start > stop || start >= meta.size) return out;
  stop = std::min(stop, meta.size - 1);
  MemberIterator it(ctx, ColumnFamily::kZsetScore, db, key, meta.version);
  bool from_top = meta.size - 1 - stop < start;
  uint64_t skip = from_top ? meta.size - 1 - stop : start;
  uint64_t rank = 0;
  size_t bytes = 0;
  if (from_top) {
    it.SeekToLast(meta.zset_high);
  } else {
    it.Seek(meta.zset_low);
  }
  for (; it.Valid() && out.size() <= stop - start && bytes <= max_bytes;
       from_top ? it.Prev() : it.Next()) {
    if (rank++ < skip) continue;
    out.push_back({std::string(IndexMember(it.member())), IndexScore(it.member())});
    bytes += out.back().member.size();
  }
  Status s = IterStatus(it);
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
  bool in_a_run = n == 1 && meta.size >= 2 &&
                  ctx.batch().WritesMetadata(MetadataKey(ctx.keyspace()->Physical(db), key));
  if (!in_a_run) return end_members(n);
  std::string prefix = MemberKey(ctx, db, key, meta.version, "");
  std::string tag = prefix + (from_top ? "+" : "-");
  const std::string* next = ctx.batch().NextOfPopRun(tag);
  if (next == nullptr) {
    auto run = end_members(std::min(kPopReadAhead, meta.size));
    if (!run.ok()) return run.status();
    std::vector<std::string> keys;
    keys.reserve(run->size());
    for (const ScoredMember& item : *run)
      keys.push_back(prefix + EncodeScore(item.score) + item.member);
    ctx.batch().RememberPopRun(tag, std::move(keys));
    next = ctx.batch().NextOfPopRun(tag);
    if (next == nullptr) return std::vector<ScoredMember>{};
  }
  std::string_view entry = std::string_view(*next).substr(prefix.size());
  return std::vector<ScoredMember>{{std::string(IndexMember(entry)), IndexScore(entry)}};
}

StatusOr<uint64_t> MemberRank(Context& ctx, int db, std::string_view key, const Metadata& meta,
                              std::string_view member, double score) {
  std::string target = EncodeScore(score);
  target.append(member);
  MemberIterator fwd(ctx, ColumnFamily::kZsetScore, db, key, meta.version);
  MemberIterator bwd(ctx, ColumnFamily::kZsetScore, db, key, meta.version);
  fwd.Seek(meta.zset_low);
  bwd.SeekToLast(meta.zset_high);
  for (uint64_t i = 0; i < meta.size && fwd.Valid() && bwd.Valid(); i++) {
    if (fwd.member() == target) return i;
    if (bwd.member() == target) return meta.size - 1 - i;
    fwd.Next();
    bwd.Prev();
  }
  Status s = IterStatus(fwd);
  if (s.ok()) s = IterStatus(bwd);
  if (!s.ok()) return s;
  return Status::NotFound();
}

Status ScanScoreRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                      const ScoreRange& range, bool reverse, const ZsetVisitor& visit) {
  if (range.Empty()) return Status::OK();
  MemberIterator it(ctx, ColumnFamily::kZsetScore, db, key, meta.version);
  if (!reverse) {
    it.Seek(StartAtOrAfterLowMark(meta, EncodeScore(range.min)));
  } else if (range.max == INFINITY && !range.maxex) {
    it.SeekToLast(meta.zset_high);
  } else {
    // Position just past the last entry that may be in range, then step back.
    double above = range.maxex ? range.max : std::nextafter(range.max, INFINITY);
    it.Seek(EncodeScore(above));
    if (it.Valid()) {
      it.Prev();
    } else if (IterStatus(it).ok()) {
      it.SeekToLast();
    }
  }
  for (; it.Valid(); reverse ? it.Prev() : it.Next()) {
    double score = IndexScore(it.member());
    if (range.Contains(score)) {
      if (!visit(IndexMember(it.member()), score)) break;
      continue;
    }
    // Out of range on the far side ends the walk; on the near side (an exclusive bound equal
    // to the score) it is skipped.
    bool beyond = reverse ? (score < range.min || (score == range.min && range.minex))
                          : (score > range.max || (score == range.max && range.maxex));
    if (beyond) break;
  }
  return IterStatus(it);
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
    if (!visit(m, DecodeScore(it.value()))) break;
  }
  return IterStatus(it);
}

StatusOr<std::vector<ScoredMember>> ReadAll(Context& ctx, int db, std::string_view key,
                                            const Metadata& meta) {
  std::vector<ScoredMember> out;
  out.reserve(meta.size);
  MemberIterator it(ctx, ColumnFamily::kZsetScore, db, key, meta.version);
  for (it.Seek(); it.Valid(); it.Next()) {
    out.push_back({std::string(IndexMember(it.member())), IndexScore(it.member())});
  }
  Status s = IterStatus(it);
  if (!s.ok()) return s;
  return out;
}

ZsetWriter::ZsetWriter(Context& ctx, int db, std::string_view key, const KeyState& old,
                       bool replace)
    : ctx_(ctx), db_(db), key_(key), old_(old) {
  if (old.live() && !replace) {
    meta_ = old.meta;
  } else {
    meta_ = NewCollection(RedisType::kZset);
    changed_ = replace;
  }
}

void ZsetWriter::Put(std::string_view member, double score, const double* old_score) {
  std::string encoded = EncodeScore(score);
  // A member beyond a mark becomes the mark, so the marks stay bounds of every live member.
  std::string entry = encoded + std::string(member);
  if (!meta_.zset_low.empty() && entry < meta_.zset_low) meta_.zset_low = entry;
  if (!meta_.zset_high.empty() && entry > meta_.zset_high) meta_.zset_high = entry;
  if (old_score != nullptr) {
    std::string old_encoded = EncodeScore(*old_score);
    if (old_encoded == encoded) return;
    ctx_.batch().Delete(ColumnFamily::kZsetScore, MemberKey(ctx_, db_, key_, meta_.version,
                                                            old_encoded + std::string(member)));
  } else {
    meta_.size++;
  }
  ctx_.batch().Put(ColumnFamily::kSubkey, MemberKey(ctx_, db_, key_, meta_.version, member),
                   encoded);
  ctx_.batch().Put(ColumnFamily::kZsetScore, MemberKey(ctx_, db_, key_, meta_.version, entry), "");
  changed_ = true;
}

void ZsetWriter::Remove(std::string_view member, double score) {
  ctx_.batch().Delete(ColumnFamily::kSubkey, MemberKey(ctx_, db_, key_, meta_.version, member));
  ctx_.batch().Delete(
      ColumnFamily::kZsetScore,
      MemberKey(ctx_, db_, key_, meta_.version, EncodeScore(score) + std::string(member)));
  meta_.size--;
  changed_ = true;
}

void ZsetWriter::PoppedThrough(std::string_view member, double score, bool from_top) {
  std::string entry = EncodeScore(score) + std::string(member);
  // Entries longer than this are not kept as marks: the metadata is read by every command.
  constexpr size_t kMaxMark = 256;
  if (entry.size() > kMaxMark) return;
  (from_top ? meta_.zset_high : meta_.zset_low) = std::move(entry);
}

void ZsetWriter::Finish() {
  if (!changed_) return;
  ctx_.WriteCollection(db_, key_, meta_, old_);
  changed_ = false;
}

}  // namespace basalt
