// Sorted-set range commands: ZRANGE in all its forms (rank, score, lex, reversed, limited,
// stored) and the ZREMRANGEBY* family.
//
// Rank ranges read from the nearer end of the score index; score ranges seek to the encoded
// bound in the score index; lex ranges seek by member when the scores are equal (Redis's
// documented case) and otherwise walk the score index as Redis's small sorted sets do.
#include <algorithm>
#include <cstdint>

#include "commands/zset_util.h"

namespace basalt {

namespace {

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

struct RangeRequest {
  RangeType type = RangeType::kAuto;
  Direction direction = Direction::kAuto;
  bool withscores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  int64_t start = 0, end = 0;
  ScoreRange score;
  LexRange lex;
};

// Parses ZRANGE's options from argv[first_opt] on, then the range itself. `src` is the index
// of the source key (min and max follow it). Replies and returns false on error.
bool ParseRange(CommandContext& c, size_t src, bool store, RangeRequest* q) {
  for (size_t j = src + 3; j < c.argc(); j++) {
    const std::string& o = c.arg(j);
    size_t left = c.argc() - j - 1;
    if (!store && EqualsIgnoreCase(o, "withscores")) {
      q->withscores = true;
    } else if (EqualsIgnoreCase(o, "limit") && left >= 2) {
      auto off = IntArg(c, j + 1);
      if (!off) return false;
      auto lim = IntArg(c, j + 2);
      if (!lim) return false;
      q->offset = *off;
      q->limit = *lim;
      j += 2;
    } else if (q->direction == Direction::kAuto && EqualsIgnoreCase(o, "rev")) {
      q->direction = Direction::kReverse;
    } else if (q->type == RangeType::kAuto && EqualsIgnoreCase(o, "bylex")) {
      q->type = RangeType::kLex;
    } else if (q->type == RangeType::kAuto && EqualsIgnoreCase(o, "byscore")) {
      q->type = RangeType::kScore;
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  if (q->direction == Direction::kAuto) q->direction = Direction::kForward;
  if (q->type == RangeType::kAuto) q->type = RangeType::kRank;
  if (q->limit != -1 && q->type == RangeType::kRank) {
    c.reply.Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return false;
  }
  if (q->withscores && q->type == RangeType::kLex) {
    c.reply.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return false;
  }
  size_t min = src + 1, max = src + 2;
  if (q->direction == Direction::kReverse && q->type != RangeType::kRank) std::swap(min, max);
  switch (q->type) {
    case RangeType::kScore:
      if (!ParseScoreRange(c.arg(min), c.arg(max), &q->score)) {
        c.reply.Error(kMinMaxNotFloat);
        return false;
      }
      return true;
    case RangeType::kLex:
      if (!ParseLexRange(c.arg(min), c.arg(max), &q->lex)) {
        c.reply.Error(kMinMaxNotLex);
        return false;
      }
      return true;
    default: {
      auto a = IntArg(c, min);
      if (!a) return false;
      auto b = IntArg(c, max);
      if (!b) return false;
      q->start = *a;
      q->end = *b;
      return true;
    }
  }
}

// Clamps Redis rank indexes (negative from the end) to [start, end] within size; false if the
// range is empty.
bool ClampRanks(int64_t size, int64_t* start, int64_t* end) {
  if (*start < 0) *start += size;
  if (*end < 0) *end += size;
  if (*start < 0) *start = 0;
  if (*start > *end || *start >= size) return false;
  if (*end >= size) *end = size - 1;
  return true;
}

// Runs the request against the live sorted set `meta`. Gathering stops once the members
// gathered pass `max_bytes`: the result is then partial, and the caller gives the reply up.
StatusOr<std::vector<ScoredMember>> RunRange(CommandContext& c, const std::string& key,
                                             const Metadata& meta, const RangeRequest& q,
                                             size_t max_bytes = SIZE_MAX) {
  bool reverse = q.direction == Direction::kReverse;
  std::vector<ScoredMember> out;
  if (q.type == RangeType::kRank) {
    int64_t start = q.start, end = q.end, size = static_cast<int64_t>(meta.size);
    if (!ClampRanks(size, &start, &end)) return out;
    if (reverse) {
      auto items = RankRange(c.ctx, c.db(), key, meta, size - 1 - end, size - 1 - start, max_bytes);
      if (items.ok()) std::reverse(items->begin(), items->end());
      return items;
    }
    return RankRange(c.ctx, c.db(), key, meta, start, end, max_bytes);
  }
  if (q.offset < 0 || q.limit == 0) return out;
  int64_t skip = q.offset;
  size_t bytes = 0;
  auto visit = [&](std::string_view member, double score) {
    if (skip > 0) return --skip, true;
    out.push_back({std::string(member), score});
    bytes += member.size();
    return bytes <= max_bytes && (q.limit < 0 || static_cast<int64_t>(out.size()) < q.limit);
  };
  Status s = q.type == RangeType::kScore
                 ? ScanScoreRange(c.ctx, c.db(), key, meta, q.score, reverse, visit)
                 : ScanLexRange(c.ctx, c.db(), key, meta, q.lex, reverse, visit);
  if (!s.ok()) return s;
  return out;
}

// The shared body of every ZRANGE form. `preset` fixes the type/direction of the legacy
// commands (ZREVRANGE, ZRANGEBYSCORE, ...).
void RangeGeneric(CommandContext& c, RangeType type, Direction direction) {
  RangeRequest q;
  q.type = type;
  q.direction = direction;
  if (!ParseRange(c, 1, false, &q)) return;
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Array(0);
  // The count comes first in the reply, so the members are gathered before replying: stop once
  // they alone pass max-reply-size (the reply could not be sent anyway).
  auto budget = static_cast<size_t>(c.server.config->max_reply_size.load());
  auto items = RunRange(c, c.arg(1), state->meta, q, budget);
  if (ReplyIfError(c, items.status())) return;
  size_t bytes = 0;
  for (const auto& item : *items) bytes += item.member.size();
  if (bytes > budget) return c.reply.Overflow();
  ReplyScored(c, *items, q.withscores);
}

void ZrangeCommand(CommandContext& c) {
  RangeGeneric(c, RangeType::kAuto, Direction::kAuto);
}
void ZrevrangeCommand(CommandContext& c) {
  RangeGeneric(c, RangeType::kRank, Direction::kReverse);
}
void ZrangebyscoreCommand(CommandContext& c) {
  RangeGeneric(c, RangeType::kScore, Direction::kForward);
}
void ZrevrangebyscoreCommand(CommandContext& c) {
  RangeGeneric(c, RangeType::kScore, Direction::kReverse);
}
void ZrangebylexCommand(CommandContext& c) {
  RangeGeneric(c, RangeType::kLex, Direction::kForward);
}
void ZrevrangebylexCommand(CommandContext& c) {
  RangeGeneric(c, RangeType::kLex, Direction::kReverse);
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
void ZrangestoreCommand(CommandContext& c) {
  RangeRequest q;
  if (!ParseRange(c, 2, true, &q)) return;
  auto src = LookupZset(c, c.arg(2));
  if (!src) return;
  CountHit(c, c.arg(2), src->live());
  std::vector<ScoredMember> items;
  if (src->live()) {
    auto got = RunRange(c, c.arg(2), src->meta, q);
    if (ReplyIfError(c, got.status())) return;
    items = std::move(*got);
  }
  auto dst = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, dst.status())) return;
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *dst, /*replace=*/true);
  for (const auto& item : items) w.Put(item.member, item.score, nullptr);
  w.Finish();
  if (!items.empty()) {
    Notify(c, notify::kZset, "zrangestore", c.arg(1));
  } else if (dst->live()) {
    Notify(c, notify::kGeneric, "del", c.arg(1));
  }
  c.reply.Integer(static_cast<int64_t>(items.size()));
}

// Removes the members a range selects; `type` says how argv[2], argv[3] are read.
void RemRangeGeneric(CommandContext& c, RangeType type) {
  RangeRequest q;
  q.type = type;
  q.direction = Direction::kForward;
  if (type == RangeType::kScore && !ParseScoreRange(c.arg(2), c.arg(3), &q.score)) {
    return c.reply.Error(kMinMaxNotFloat);
  }
  if (type == RangeType::kLex && !ParseLexRange(c.arg(2), c.arg(3), &q.lex)) {
    return c.reply.Error(kMinMaxNotLex);
  }
  if (type == RangeType::kRank) {
    auto a = IntArg(c, 2);
    if (!a) return;
    auto b = IntArg(c, 3);
    if (!b) return;
    q.start = *a;
    q.end = *b;
  }
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Integer(0);
  auto items = RunRange(c, c.arg(1), state->meta, q);
  if (ReplyIfError(c, items.status())) return;
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *state);
  for (const auto& item : *items) w.Remove(item.member, item.score);
  w.Finish();
  if (!items->empty()) {
    CountChanges(c, static_cast<int64_t>(items->size()));
    Notify(c, notify::kZset,
           type == RangeType::kRank    ? "zremrangebyrank"
           : type == RangeType::kScore ? "zremrangebyscore"
                                       : "zremrangebylex",
           c.arg(1));
    if (items->size() >= state->meta.size) Notify(c, notify::kGeneric, "del", c.arg(1));
  }
  c.reply.Integer(static_cast<int64_t>(items->size()));
}

void ZremrangebyrankCommand(CommandContext& c) {
  RemRangeGeneric(c, RangeType::kRank);
}
void ZremrangebyscoreCommand(CommandContext& c) {
  RemRangeGeneric(c, RangeType::kScore);
}
void ZremrangebylexCommand(CommandContext& c) {
  RemRangeGeneric(c, RangeType::kLex);
}

constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kZsetRangeCommands = {
    {"zrange", -4, kR, 1, 1, 1, ZrangeCommand, "sorted_set",
     "Returns members in a sorted set within a range of indexes.", "@read @sortedset @slow"},
    {"zrevrange", -4, kR, 1, 1, 1, ZrevrangeCommand, "sorted_set",
     "Returns members in a sorted set within a range of indexes in reverse order.",
     "@read @sortedset @slow"},
    {"zrangebyscore", -4, kR, 1, 1, 1, ZrangebyscoreCommand, "sorted_set",
     "Returns members in a sorted set within a range of scores.", "@read @sortedset @slow"},
    {"zrevrangebyscore", -4, kR, 1, 1, 1, ZrevrangebyscoreCommand, "sorted_set",
     "Returns members in a sorted set within a range of scores in reverse order.",
     "@read @sortedset @slow"},
    {"zrangebylex", -4, kR, 1, 1, 1, ZrangebylexCommand, "sorted_set",
     "Returns members in a sorted set within a lexicographical range.", "@read @sortedset @slow"},
    {"zrevrangebylex", -4, kR, 1, 1, 1, ZrevrangebylexCommand, "sorted_set",
     "Returns members in a sorted set within a lexicographical range in reverse order.",
     "@read @sortedset @slow"},
    {"zrangestore", -5, kCmdWrite | kCmdDenyOom, 1, 2, 1, ZrangestoreCommand, "sorted_set",
     "Stores a range of members from sorted set in a key.", "@write @sortedset @slow"},
    {"zremrangebyrank", 4, kCmdWrite, 1, 1, 1, ZremrangebyrankCommand, "sorted_set",
     "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all "
     "members were removed.",
     "@write @sortedset @slow"},
    {"zremrangebyscore", 4, kCmdWrite, 1, 1, 1, ZremrangebyscoreCommand, "sorted_set",
     "Removes members in a sorted set within a range of scores. Deletes the sorted set if all "
     "members were removed.",
     "@write @sortedset @slow"},
    {"zremrangebylex", 4, kCmdWrite, 1, 1, 1, ZremrangebylexCommand, "sorted_set",
     "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if "
     "all members were removed.",
     "@write @sortedset @slow"},
};

}  // namespace

const std::vector<CommandSpec>& ZsetRangeCommands() {
  return kZsetRangeCommands;
}

}  // namespace basalt
