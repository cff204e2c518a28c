// Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their *STORE forms and ZINTERCARD.
//
// Inputs may be sorted sets or plain sets (members scoring 1), as in Redis. Inputs are read
// member by member from their iterators (see Compute); the result is ordered by (score, member)
// like any sorted set.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>

#include "commands/zset_util.h"
#include "types/set.h"

namespace basalt {

namespace {

enum class SetOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

struct SetOpRequest {
  SetOp op = SetOp::kUnion;
  bool store = false;
  bool card_only = false;  // ZINTERCARD
  std::vector<size_t> keys;
  std::vector<double> weights;
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;
};

const char* CommandName(const SetOpRequest& q) {
  if (q.card_only) return "zintercard";
  static const char* const kNames[3][2] = {
      {"zunion", "zunionstore"}, {"zinter", "zinterstore"}, {"zdiff", "zdiffstore"}};
  return kNames[static_cast<int>(q.op)][q.store ? 1 : 0];
}

// Parses numkeys, the keys and the options that follow them. Replies and returns false on error.
bool ParseKeysAndOptions(CommandContext& c, size_t numkeys_index, SetOpRequest* q) {
  auto numkeys = IntArg(c, numkeys_index);
  if (!numkeys) return false;
  if (*numkeys < 1) {
    c.reply.Error(std::string("ERR at least 1 input key is needed for '") + CommandName(*q) +
                  "' command");
    return false;
  }
  if (*numkeys > static_cast<int64_t>(c.argc() - numkeys_index - 1)) {
    c.reply.Error(kSyntaxError);
    return false;
  }
  size_t j = numkeys_index + 1;
  for (int64_t i = 0; i < *numkeys; i++) q->keys.push_back(j++);
  q->weights.assign(q->keys.size(), 1.0);
  bool algebra = q->op != SetOp::kDiff && !q->card_only;
  while (j < c.argc()) {
    size_t left = c.argc() - j;
    const std::string& o = c.arg(j);
    if (algebra && left >= q->keys.size() + 1 && EqualsIgnoreCase(o, "weights")) {
      j++;
      for (size_t i = 0; i < q->keys.size(); i++, j++) {
        auto w = ParseDouble(c.arg(j), true);
        if (!w) {
          c.reply.Error("ERR weight value is not a float");
          return false;
        }
        q->weights[i] = *w;
      }
    } else if (algebra && left >= 2 && EqualsIgnoreCase(o, "aggregate")) {
      const std::string& a = c.arg(j + 1);
      if (EqualsIgnoreCase(a, "sum"))
        q->aggregate = Aggregate::kSum;
      else if (EqualsIgnoreCase(a, "min"))
        q->aggregate = Aggregate::kMin;
      else if (EqualsIgnoreCase(a, "max"))
        q->aggregate = Aggregate::kMax;
      else
        return c.reply.Error(kSyntaxError), false;
      j += 2;
    } else if (!q->store && !q->card_only && EqualsIgnoreCase(o, "withscores")) {
      q->withscores = true;
      j++;
    } else if (q->card_only && left >= 2 && EqualsIgnoreCase(o, "limit")) {
      // Redis answers a limit that is not an integer as a negative one.
      auto v = ParseInt64(c.arg(j + 1));
      if (!v || *v < 0) return c.reply.Error("ERR LIMIT can't be negative"), false;
      q->limit = *v;
      j += 2;
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

// One input: a sorted set, a set (members score 1) or nothing (not live).
struct Input {
  size_t arg = 0;  // argv index of its key
  KeyState state;
  uint64_t size() const { return state.live() ? state.meta.size : 0; }
};

// Looks every input up; replies WRONGTYPE (for any type but set and zset) and returns false.
bool LookupInputs(CommandContext& c, const SetOpRequest& q, std::vector<Input>* inputs) {
  for (size_t k : q.keys) {
    auto state = c.ctx.Lookup(c.db(), c.arg(k));
    if (ReplyIfError(c, state.status())) return false;
    CountHit(c, c.arg(k), state->live());
    if (state->live() && state->meta.type != RedisType::kZset &&
        state->meta.type != RedisType::kSet) {
      c.reply.Error(kWrongTypeError);
      return false;
    }
    inputs->push_back({k, std::move(*state)});
  }
  return true;
}

double ScoreOf(const Input& in, std::string_view value) {
  return in.state.meta.type == RedisType::kZset ? DecodeScore(value) : 1.0;
}

// Visits the members of a live input in member order; the visitor returns false to stop.
Status VisitInput(CommandContext& c, const Input& in,
                  const std::function<bool(std::string_view member, double score)>& visit) {
  MemberIterator it(c.ctx, ColumnFamily::kSubkey, c.db(), c.arg(in.arg), in.state.meta.version);
  it.SkipPoppedMembers(c.ctx, c.db(), c.arg(in.arg), in.state.meta);
  for (it.Seek(); it.Valid(); it.Next()) {
    if (!visit(it.member(), ScoreOf(in, it.value()))) break;
  }
  return it.status();
}

// The score of `member` in `in`; NotFound when it is not there.
Status FindInInput(CommandContext& c, const Input& in, std::string_view member, double* score) {
  if (!in.state.live()) return Status::NotFound();
  if (in.state.meta.type == RedisType::kZset)
    return GetScore(c.ctx, c.db(), c.arg(in.arg), in.state.meta, member, score);
  std::string value;
  Status s = GetMember(c.ctx, c.db(), c.arg(in.arg), in.state.meta.version, member, &value);
  if (s.ok()) *score = ScoreOf(in, value);
  return s;
}

double Weighted(double score, double weight) {
  double v = score * weight;
  return std::isnan(v) ? 0 : v;  // inf * 0
}

void Combine(double* target, double v, Aggregate a) {
  if (a == Aggregate::kSum) {
    *target += v;
    if (std::isnan(*target)) *target = 0;  // inf + -inf
  } else if (a == Aggregate::kMin) {
    *target = std::min(*target, v);
  } else {
    *target = std::max(*target, v);
  }
}

struct SetOpResult {
  std::map<std::string, double, std::less<>> members;  // found by string_view, no copy
  int64_t count = 0;         // ZINTERCARD counts without keeping the members
  bool over_budget = false;  // stopped: the members passed max_bytes
};

// Computes the operation, reading the inputs member by member: a union visits them all, an
// intersection walks the smallest input and looks its members up in the others, a difference
// walks the first. Stops once the result's members pass `max_bytes`, so a reply over
// max-reply-size never holds its whole result (nor any input) in memory.
StatusOr<SetOpResult> Compute(CommandContext& c, const SetOpRequest& q,
                              const std::vector<Input>& in, size_t max_bytes) {
  SetOpResult out;
  size_t bytes = 0;
  Status failure;
  // Adds a new member to the result; false once over the budget.
  auto add = [&](std::string_view member, double score) {
    if (q.card_only) return ++out.count, q.limit == 0 || out.count < q.limit;
    if (!out.members.emplace(member, score).second) return true;
    bytes += member.size();
    out.over_budget = bytes > max_bytes;
    return !out.over_budget;
  };
  // Whether `member` is in `in[j]`, with its score; false after an error too (in `failure`).
  auto find = [&](size_t j, std::string_view member, double* score) {
    Status s = FindInInput(c, in[j], member, score);
    if (!s.ok() && !s.IsNotFound()) failure = s;
    return s.ok();
  };
  Status s;
  if (q.op == SetOp::kUnion) {
    for (size_t i = 0; i < in.size() && s.ok() && !out.over_budget; i++) {
      if (!in[i].state.live()) continue;
      s = VisitInput(c, in[i], [&](std::string_view member, double score) {
        double v = Weighted(score, q.weights[i]);
        auto it = out.members.find(member);
        if (it == out.members.end()) return add(member, v);
        Combine(&it->second, v, q.aggregate);
        return true;
      });
    }
  } else if (q.op == SetOp::kInter) {
    size_t base = 0;
    for (size_t i = 0; i < in.size(); i++) {
      if (!in[i].state.live()) return out;
      if (in[i].size() < in[base].size()) base = i;
    }
    std::vector<double> scores(in.size());
    s = VisitInput(c, in[base], [&](std::string_view member, double score) {
      scores[base] = score;
      for (size_t i = 0; i < in.size(); i++) {
        if (i != base && !find(i, member, &scores[i])) return failure.ok();
      }
      // Combined in key order, whichever input was walked.
      double v = Weighted(scores[0], q.weights[0]);
      for (size_t i = 1; i < in.size(); i++)
        Combine(&v, Weighted(scores[i], q.weights[i]), q.aggregate);
      return add(member, v);
    });
  } else {
    if (!in[0].state.live()) return out;
    s = VisitInput(c, in[0], [&](std::string_view member, double score) {
      double unused;
      for (size_t i = 1; i < in.size(); i++) {
        if (find(i, member, &unused)) return true;
        if (!failure.ok()) return false;
      }
      return add(member, score);
    });
  }
  if (!s.ok()) return s;
  if (!failure.ok()) return failure;
  return out;
}

void SetOpGeneric(CommandContext& c, SetOp op, bool store, bool card_only) {
  SetOpRequest q;
  q.op = op;
  q.store = store;
  q.card_only = card_only;
  if (!ParseKeysAndOptions(c, store ? 2 : 1, &q)) return;
  std::vector<Input> inputs;
  if (!LookupInputs(c, q, &inputs)) return;
  // A reply's count comes first, so its members are gathered first: up to max-reply-size.
  size_t budget =
      store || card_only ? SIZE_MAX : static_cast<size_t>(c.server.config->max_reply_size.load());
  auto result = Compute(c, q, inputs, budget);
  if (ReplyIfError(c, result.status())) return;
  if (card_only) return c.reply.Integer(result->count);
  if (result->over_budget) return c.reply.Overflow();
  std::vector<ScoredMember> sorted;
  sorted.reserve(result->members.size());
  for (auto& [m, s] : result->members) sorted.push_back({m, s});
  result->members.clear();
  std::sort(sorted.begin(), sorted.end(), [](const ScoredMember& a, const ScoredMember& b) {
    return a.score != b.score ? a.score < b.score : a.member < b.member;
  });
  if (!store) return ReplyScored(c, sorted, q.withscores);
  auto dst = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, dst.status())) return;
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *dst, /*replace=*/true);
  for (const auto& item : sorted) w.Put(item.member, item.score, nullptr);
  w.Finish();
  if (!sorted.empty()) {
    Notify(c, notify::kZset, CommandName(q), c.arg(1));
  } else if (dst->live()) {
    Notify(c, notify::kGeneric, "del", c.arg(1));
  }
  c.reply.Integer(static_cast<int64_t>(sorted.size()));
}

void ZunionCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kUnion, false, false);
}
void ZinterCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kInter, false, false);
}
void ZdiffCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kDiff, false, false);
}
void ZunionstoreCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kUnion, true, false);
}
void ZinterstoreCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kInter, true, false);
}
void ZdiffstoreCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kDiff, true, false);
}
void ZintercardCommand(CommandContext& c) {
  SetOpGeneric(c, SetOp::kInter, false, true);
}

// numkeys at argv[first - 1], that many keys from argv[first]; bad counts give no keys (the
// handler then replies with the error).
std::vector<size_t> NumKeysAt(const std::vector<std::string>& argv, size_t first) {
  std::vector<size_t> keys;
  if (argv.size() < first) return keys;
  auto n = ParseInt64(argv[first - 1]);
  if (!n || *n < 1 || *n > static_cast<int64_t>(argv.size() - first)) return keys;
  for (size_t i = first; i < first + static_cast<size_t>(*n); i++) keys.push_back(i);
  return keys;
}
std::vector<size_t> ReadKeys(const std::vector<std::string>& argv) {
  return NumKeysAt(argv, 2);
}
std::vector<size_t> StoreKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> keys = NumKeysAt(argv, 3);
  keys.insert(keys.begin(), 1);
  return keys;
}

constexpr uint32_t kR = kCmdReadOnly;
constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;

const std::vector<CommandSpec> kZsetSetOpCommands = {
    {"zunion", -3, kR | kCmdMovableKeys, 0, 0, 0, ZunionCommand, "sorted_set",
     "Returns the union of multiple sorted sets.", "@read @sortedset @slow", ReadKeys},
    {"zinter", -3, kR | kCmdMovableKeys, 0, 0, 0, ZinterCommand, "sorted_set",
     "Returns the intersect of multiple sorted sets.", "@read @sortedset @slow", ReadKeys},
    {"zdiff", -3, kR | kCmdMovableKeys, 0, 0, 0, ZdiffCommand, "sorted_set",
     "Returns the difference between multiple sorted sets.", "@read @sortedset @slow", ReadKeys},
    {"zintercard", -3, kR | kCmdMovableKeys, 0, 0, 0, ZintercardCommand, "sorted_set",
     "Returns the number of members of the intersect of multiple sorted sets.",
     "@read @sortedset @slow", ReadKeys},
    {"zunionstore", -4, kW | kCmdMovableKeys, 1, 1, 1, ZunionstoreCommand, "sorted_set",
     "Stores the union of multiple sorted sets in a key.", "@write @sortedset @slow", StoreKeys},
    {"zinterstore", -4, kW | kCmdMovableKeys, 1, 1, 1, ZinterstoreCommand, "sorted_set",
     "Stores the intersect of multiple sorted sets in a key.", "@write @sortedset @slow",
     StoreKeys},
    {"zdiffstore", -4, kW | kCmdMovableKeys, 1, 1, 1, ZdiffstoreCommand, "sorted_set",
     "Stores the difference of multiple sorted sets in a key.", "@write @sortedset @slow",
     StoreKeys},
};

}  // namespace

const std::vector<CommandSpec>& ZsetSetOpCommands() {
  return kZsetSetOpCommands;
}

}  // namespace basalt
