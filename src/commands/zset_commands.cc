// Sorted-set commands: member writes, point reads, pops and scans. Range reads and stores are
// in zset_range_commands.cc, union/intersection/difference in zset_setop_commands.cc, the
// blocking pops in zset_blocking_commands.cc (which share PopMembers and the ZMPOP parser).
//
// Each handler looks the key up once (WRONGTYPE there), writes members into the batch and the
// metadata once through ZsetWriter, which keeps the size exact and deletes emptied keys.
#include <algorithm>
#include <climits>
#include <cmath>

#include "commands/zset_util.h"
#include "types/set.h"

namespace basalt {

std::optional<KeyState> LookupZset(CommandContext& c, std::string_view key) {
  auto state = LookupCollection(c.ctx, c.db(), key, RedisType::kZset);
  if (ReplyIfError(c, state.status())) return std::nullopt;
  return *state;
}

void ReplyScored(CommandContext& c, const std::vector<ScoredMember>& items, bool withscores) {
  bool pairs = withscores && c.reply.resp() >= 3;
  c.reply.Array(withscores && !pairs ? items.size() * 2 : items.size());
  for (const auto& item : items) {
    if (pairs) c.reply.Array(2);
    c.reply.Bulk(item.member);
    if (withscores) c.reply.Double(item.score);
  }
}

// Removes up to `count` members from the low (or high) end of `key`'s score index.
std::optional<std::vector<ScoredMember>> PopMembers(CommandContext& c, const std::string& key,
                                                    const KeyState& state, uint64_t count,
                                                    bool max) {
  uint64_t n = std::min<uint64_t>(count, state.meta.size);
  if (n == 0) return std::vector<ScoredMember>{};
  auto items = PopCandidates(c.ctx, c.db(), key, state.meta, n, max);
  if (ReplyIfError(c, items.status())) return std::nullopt;
  ZsetWriter w(c.ctx, c.db(), key, state);
  w.Pop(*items, max);
  w.Finish();
  Notify(c, notify::kZset, max ? "zpopmax" : "zpopmin", key);
  CountChanges(c, static_cast<int64_t>(n));
  if (n >= state.meta.size) Notify(c, notify::kGeneric, "del", key);
  return std::move(*items);
}

std::optional<MpopArgs> ParseMpop(CommandContext& c, size_t numkeys_index) {
  auto numkeys = ParseInt64(c.arg(numkeys_index));
  if (!numkeys || *numkeys < 1) {
    c.reply.Error("ERR numkeys should be greater than 0");
    return std::nullopt;
  }
  size_t first = numkeys_index + 1;
  // MIN|MAX must follow the keys.
  if (static_cast<uint64_t>(*numkeys) >= c.argc() - first) {
    c.reply.Error(kSyntaxError);
    return std::nullopt;
  }
  size_t where = first + static_cast<size_t>(*numkeys);
  MpopArgs args;
  args.max = EqualsIgnoreCase(c.arg(where), "max");
  if (!args.max && !EqualsIgnoreCase(c.arg(where), "min")) {
    c.reply.Error(kSyntaxError);
    return std::nullopt;
  }
  bool has_count = false;
  for (size_t j = where + 1; j < c.argc(); j++) {
    if (!has_count && EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      auto v = ParseInt64(c.arg(++j));
      if (!v || *v < 1) {
        c.reply.Error("ERR count should be greater than 0");
        return std::nullopt;
      }
      args.count = static_cast<uint64_t>(*v);
      has_count = true;
    } else {
      c.reply.Error(kSyntaxError);
      return std::nullopt;
    }
  }
  for (size_t k = first; k < where; k++) args.keys.push_back(k);
  return args;
}

bool MpopFirstNonEmpty(CommandContext& c, const MpopArgs& args) {
  for (size_t k : args.keys) {
    auto state = LookupZset(c, c.arg(k));
    if (!state) return true;
    if (!state->live()) continue;
    auto items = PopMembers(c, c.arg(k), *state, args.count, args.max);
    if (!items) return true;
    // As Redis 7.2 sends ZMPOP and BZMPOP: ZPOPMIN/ZPOPMAX with the count popped.
    ReplicateAs(c, {args.max ? "ZPOPMAX" : "ZPOPMIN", c.arg(k), std::to_string(items->size())});
    c.reply.Array(2);
    c.reply.Bulk(c.arg(k));
    c.reply.Array(items->size());
    for (const auto& item : *items) {
      c.reply.Array(2);
      c.reply.Bulk(item.member);
      c.reply.Double(item.score);
    }
    return true;
  }
  return false;
}

namespace {

constexpr const char* kNaNError = "ERR resulting score is not a number (NaN)";

struct ZaddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

// Applies one ZADD element. Returns false on a NaN result (after replying). `*done` says
// whether the element was added or its score updated; `*result` is its final score.
bool ZaddOne(CommandContext& c, ZsetWriter& w, const ZaddFlags& f, const std::string& member,
             double score, int* added, int* updated, bool* done, double* result) {
  *done = false;
  double cur;
  Status s = w.Find(member, &cur);
  if (!s.ok() && !s.IsNotFound()) {
    ReplyIfError(c, s);
    return false;
  }
  if (s.ok()) {
    if (f.nx) return true;
    if (f.incr) {
      score += cur;
      if (std::isnan(score)) {
        c.reply.Error(kNaNError);
        return false;
      }
    }
    if ((f.lt && score >= cur) || (f.gt && score <= cur)) return true;
    *done = true;
    *result = score;
    if (score != cur) {
      w.Put(member, score, &cur);
      (*updated)++;
    }
    return true;
  }
  if (f.xx) return true;
  w.Put(member, score, nullptr);
  (*added)++;
  *done = true;
  *result = score;
  return true;
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void ZaddCommand(CommandContext& c) {
  ZaddFlags f;
  size_t i = 2;
  for (; i < c.argc(); i++) {
    const std::string& o = c.arg(i);
    if (EqualsIgnoreCase(o, "nx"))
      f.nx = true;
    else if (EqualsIgnoreCase(o, "xx"))
      f.xx = true;
    else if (EqualsIgnoreCase(o, "gt"))
      f.gt = true;
    else if (EqualsIgnoreCase(o, "lt"))
      f.lt = true;
    else if (EqualsIgnoreCase(o, "ch"))
      f.ch = true;
    else if (EqualsIgnoreCase(o, "incr"))
      f.incr = true;
    else
      break;
  }
  size_t elements = c.argc() - i;
  if (elements == 0 || elements % 2 != 0) return c.reply.Error(kSyntaxError);
  elements /= 2;
  if (f.nx && f.xx)
    return c.reply.Error("ERR XX and NX options at the same time are not compatible");
  if ((f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt)) {
    return c.reply.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (f.incr && elements > 1) {
    return c.reply.Error("ERR INCR option supports a single increment-element pair");
  }
  std::vector<double> scores;
  for (size_t j = 0; j < elements; j++) {
    auto d = ParseDouble(c.arg(i + 2 * j), true);
    if (!d) return c.reply.Error(kNotFloatError);
    scores.push_back(*d);
  }
  auto old = LookupZset(c, c.arg(1));
  if (!old) return;
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *old);
  int added = 0, updated = 0;
  bool done = false;
  double result = 0;
  if (!old->live() && f.xx) elements = 0;  // nothing to update, nothing created
  for (size_t j = 0; j < elements; j++) {
    if (!ZaddOne(c, w, f, c.arg(i + 2 * j + 1), scores[j], &added, &updated, &done, &result)) {
      return;
    }
  }
  w.Finish();
  if (added + updated != 0) {
    Notify(c, notify::kZset, f.incr ? "zincr" : "zadd", c.arg(1));
    CountChanges(c, added + updated);
  }
  if (f.incr) return done ? c.reply.Double(result) : c.reply.Null();
  c.reply.Integer(f.ch ? added + updated : added);
}

void ZincrbyCommand(CommandContext& c) {
  auto incr = ParseDouble(c.arg(2), true);
  if (!incr) return c.reply.Error(kNotFloatError);
  auto old = LookupZset(c, c.arg(1));
  if (!old) return;
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *old);
  ZaddFlags f;
  f.incr = true;
  int added = 0, updated = 0;
  bool done = false;
  double result = 0;
  if (!ZaddOne(c, w, f, c.arg(3), *incr, &added, &updated, &done, &result)) return;
  w.Finish();
  if (added + updated != 0) Notify(c, notify::kZset, "zincr", c.arg(1));
  c.reply.Double(result);
}

void ZremCommand(CommandContext& c) {
  auto old = LookupZset(c, c.arg(1));
  if (!old) return;
  if (!old->live()) return c.reply.Integer(0);
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *old);
  int64_t removed = 0;
  for (size_t i = 2; i < c.argc(); i++) {
    double score;
    Status s = w.Find(c.arg(i), &score);
    if (s.IsNotFound()) continue;
    if (ReplyIfError(c, s)) return;
    w.Remove(c.arg(i), score);
    removed++;
  }
  w.Finish();
  if (removed != 0) {
    CountChanges(c, removed);
    Notify(c, notify::kZset, "zrem", c.arg(1));
    if (static_cast<uint64_t>(removed) >= old->meta.size)
      Notify(c, notify::kGeneric, "del", c.arg(1));
  }
  c.reply.Integer(removed);
}

void ZcardCommand(CommandContext& c) {
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Integer(state->live() ? static_cast<int64_t>(state->meta.size) : 0);
}

void ZscoreCommand(CommandContext& c) {
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live() || !MemberFilterOf(c.ctx, state->meta.version).MayHold(c.arg(2))) {
    return c.reply.Null();
  }
  double score;
  Status s = GetScore(c.ctx, c.db(), c.arg(1), state->meta, c.arg(2), &score);
  if (s.IsNotFound()) return c.reply.Null();
  if (ReplyIfError(c, s)) return;
  c.reply.Double(score);
}

void ZmscoreCommand(CommandContext& c) {
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  std::vector<std::optional<double>> scores;
  MemberFilterRef filter = MemberFilterOf(c.ctx, state->meta.version);
  for (size_t i = 2; i < c.argc(); i++) {
    double score;
    if (!state->live() || !filter.MayHold(c.arg(i))) {
      scores.emplace_back();
      continue;
    }
    Status s = GetScore(c.ctx, c.db(), c.arg(1), state->meta, c.arg(i), &score);
    if (s.IsNotFound()) {
      scores.emplace_back();
      continue;
    }
    if (ReplyIfError(c, s)) return;
    scores.emplace_back(score);
  }
  c.reply.Array(scores.size());
  for (const auto& s : scores) s ? c.reply.Double(*s) : c.reply.Null();
}

// ZRANK/ZREVRANK key member [WITHSCORE] (WITHSCORE since Redis 7.2: [rank, score]).
void RankCommand(CommandContext& c, bool reverse) {
  if (c.argc() > 4 || (c.argc() == 4 && !EqualsIgnoreCase(c.arg(3), "withscore"))) {
    return c.reply.Error(kSyntaxError);
  }
  const bool withscore = c.argc() == 4;
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  auto absent = [&] { withscore ? c.reply.NullArray() : c.reply.Null(); };
  if (!state->live() || !MemberFilterOf(c.ctx, state->meta.version).MayHold(c.arg(2))) {
    return absent();
  }
  double score;
  Status s = GetScore(c.ctx, c.db(), c.arg(1), state->meta, c.arg(2), &score);
  if (s.IsNotFound()) return absent();
  if (ReplyIfError(c, s)) return;
  auto rank = MemberRank(c.ctx, c.db(), c.arg(1), state->meta, c.arg(2), score);
  if (ReplyIfError(c, rank.status())) return;
  uint64_t r = reverse ? state->meta.size - 1 - *rank : *rank;
  if (!withscore) return c.reply.Integer(static_cast<int64_t>(r));
  c.reply.Array(2);
  c.reply.Integer(static_cast<int64_t>(r));
  c.reply.Double(score);
}

void ZrankCommand(CommandContext& c) {
  RankCommand(c, false);
}
void ZrevrankCommand(CommandContext& c) {
  RankCommand(c, true);
}

// ZCOUNT and ZLEXCOUNT: the members `scan` (ScanScoreRange or ScanLexRange) finds in `range`.
template <typename Range, typename Scan>
void ReplyRangeCount(CommandContext& c, const Range& range, Scan scan) {
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  int64_t n = 0;
  if (state->live()) {
    Status s = scan(c.ctx, c.db(), c.arg(1), state->meta, range, false,
                    [&](std::string_view, double) { return ++n, true; });
    if (ReplyIfError(c, s)) return;
  }
  c.reply.Integer(n);
}

void ZcountCommand(CommandContext& c) {
  ScoreRange range;
  if (!ParseScoreRange(c.arg(2), c.arg(3), &range)) return c.reply.Error(kMinMaxNotFloat);
  ReplyRangeCount(c, range, ScanScoreRange);
}

void ZlexcountCommand(CommandContext& c) {
  LexRange range;
  if (!ParseLexRange(c.arg(2), c.arg(3), &range)) return c.reply.Error(kMinMaxNotLex);
  ReplyRangeCount(c, range, ScanLexRange);
}

void PopCommand(CommandContext& c, bool max) {
  if (c.argc() > 3) return c.reply.Error(kSyntaxError);
  int64_t count = 1;
  if (c.argc() == 3) {
    auto v = ParseInt64(c.arg(2));
    if (!v || *v < 0) return c.reply.Error("ERR value is out of range, must be positive");
    count = *v;
  }
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Array(0);
  auto items = PopMembers(c, c.arg(1), *state, static_cast<uint64_t>(count), max);
  if (!items) return;
  if (c.argc() == 3) return ReplyScored(c, *items, true);
  // Without a count RESP3 still replies flat: [member, score].
  c.reply.Array(items->size() * 2);
  for (const auto& item : *items) {
    c.reply.Bulk(item.member);
    c.reply.Double(item.score);
  }
}

void ZpopminCommand(CommandContext& c) {
  PopCommand(c, false);
}
void ZpopmaxCommand(CommandContext& c) {
  PopCommand(c, true);
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
void ZmpopCommand(CommandContext& c) {
  auto args = ParseMpop(c, 1);
  if (!args) return;
  if (!MpopFirstNonEmpty(c, *args)) c.reply.NullArray();
}

std::vector<size_t> ZmpopKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> keys;
  auto n = argv.size() > 1 ? ParseInt64(argv[1]) : std::nullopt;
  if (!n || *n <= 0) return keys;
  for (size_t i = 2; i < argv.size() && i < 2 + static_cast<size_t>(*n); i++) keys.push_back(i);
  return keys;
}

// Samples like SRANDMEMBER (RandomMembers): a sorted set's `subkey` entries are its members,
// each holding its score, so a large set is probed at random points instead of read to a random
// rank or in whole.
void ZrandmemberCommand(CommandContext& c) {
  bool withscores = false;
  int64_t count = 1;
  if (c.argc() >= 3) {
    auto v = IntArg(c, 2);
    if (!v) return;
    count = *v;
    if (c.argc() == 4 && EqualsIgnoreCase(c.arg(3), "withscores")) {
      withscores = true;
    } else if (c.argc() >= 4) {
      return c.reply.Error(kSyntaxError);
    }
    if (count < -LONG_MAX / 2 || count > LONG_MAX / 2) {
      return c.reply.Error("ERR value is out of range");
    }
  }
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.argc() >= 3 ? c.reply.Array(0) : c.reply.Null();
  if (count == 0) return ReplyScored(c, {}, withscores);
  const bool repeats = c.argc() == 2 || count < 0;
  const uint64_t n = static_cast<uint64_t>(count < 0 ? -count : count);
  StatusOr<std::vector<Member>> picked =
      !repeats && n >= state->meta.size
          ? ReadMembers(c.ctx, c.db(), c.arg(1), state->meta)
          : RandomMembers(c.ctx, c.db(), c.arg(1), state->meta, n, repeats);
  if (ReplyIfError(c, picked.status())) return;
  if (c.argc() == 2) {
    if (picked->empty()) return c.reply.Null();
    return c.reply.Bulk(picked->front().name);
  }
  std::vector<ScoredMember> out;
  out.reserve(picked->size());
  for (Member& m : *picked) out.push_back({std::move(m.name), DecodeScore(m.value)});
  ReplyScored(c, out, withscores);
}

void ZscanCommand(CommandContext& c) {
  ScanMembersCommand(c, RedisType::kZset,
                     [](const Metadata&, std::string_view member, std::string_view score,
                        std::vector<std::string>* out) {
                       out->emplace_back(member);
                       out->push_back(FormatDouble(DecodeScore(score)));
                       return Status::OK();
                     });
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kZsetCommands = {
    {"zadd", -4, kW | kCmdFast, 1, 1, 1, ZaddCommand, "sorted_set",
     "Adds one or more members to a sorted set, or updates their scores. Creates the key if it "
     "doesn't exist.",
     "@write @sortedset @fast"},
    {"zincrby", 4, kW | kCmdFast, 1, 1, 1, ZincrbyCommand, "sorted_set",
     "Increments the score of a member in a sorted set.", "@write @sortedset @fast"},
    {"zrem", -3, kCmdWrite | kCmdFast, 1, 1, 1, ZremCommand, "sorted_set",
     "Removes one or more members from a sorted set. Deletes the sorted set if all members were "
     "removed.",
     "@write @sortedset @fast"},
    {"zcard", 2, kR | kCmdFast, 1, 1, 1, ZcardCommand, "sorted_set",
     "Returns the number of members in a sorted set.", "@read @sortedset @fast"},
    {"zscore", 3, kR | kCmdFast, 1, 1, 1, ZscoreCommand, "sorted_set",
     "Returns the score of a member in a sorted set.", "@read @sortedset @fast"},
    {"zmscore", -3, kR | kCmdFast, 1, 1, 1, ZmscoreCommand, "sorted_set",
     "Returns the score of one or more members in a sorted set.", "@read @sortedset @fast"},
    {"zrank", -3, kR | kCmdFast, 1, 1, 1, ZrankCommand, "sorted_set",
     "Returns the index of a member in a sorted set ordered by ascending scores.",
     "@read @sortedset @fast"},
    {"zrevrank", -3, kR | kCmdFast, 1, 1, 1, ZrevrankCommand, "sorted_set",
     "Returns the index of a member in a sorted set ordered by descending scores.",
     "@read @sortedset @fast"},
    {"zcount", 4, kR | kCmdFast, 1, 1, 1, ZcountCommand, "sorted_set",
     "Returns the count of members in a sorted set that have scores within a range.",
     "@read @sortedset @fast"},
    {"zlexcount", 4, kR | kCmdFast, 1, 1, 1, ZlexcountCommand, "sorted_set",
     "Returns the number of members in a sorted set within a lexicographical range.",
     "@read @sortedset @fast"},
    {"zpopmin", -2, kCmdWrite | kCmdFast, 1, 1, 1, ZpopminCommand, "sorted_set",
     "Returns the lowest-scoring members from a sorted set after removing them. Deletes the "
     "sorted set if the last member was popped.",
     "@write @sortedset @fast"},
    {"zpopmax", -2, kCmdWrite | kCmdFast, 1, 1, 1, ZpopmaxCommand, "sorted_set",
     "Returns the highest-scoring members from a sorted set after removing them. Deletes the "
     "sorted set if the last member was popped.",
     "@write @sortedset @fast"},
    {"zmpop", -4, kCmdWrite | kCmdMovableKeys, 0, 0, 0, ZmpopCommand, "sorted_set",
     "Returns the highest- or lowest-scoring members from one or more sorted sets after removing "
     "them. Deletes the sorted set if the last member was popped.",
     "@write @sortedset @slow", ZmpopKeys},
    {"zrandmember", -2, kR, 1, 1, 1, ZrandmemberCommand, "sorted_set",
     "Returns one or more random members from a sorted set.", "@read @sortedset @slow"},
    {"zscan", -3, kR, 1, 1, 1, ZscanCommand, "sorted_set",
     "Iterates over members and scores of a sorted set.", "@read @sortedset @slow"},
};

}  // namespace

const std::vector<CommandSpec>& ZsetCommands() {
  static const std::vector<CommandSpec> all = [] {
    std::vector<CommandSpec> out = kZsetCommands;
    for (const auto* more : {&ZsetRangeCommands(), &ZsetSetOpCommands(), &ZsetBlockingCommands()}) {
      out.insert(out.end(), more->begin(), more->end());
    }
    return out;
  }();
  return all;
}

}  // namespace basalt
