// Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their *STORE forms and ZINTERCARD.
//
// Inputs may be sorted sets or plain sets (members scoring 1), as in Redis. Inputs are read
// whole; the result is ordered by (score, member) like any sorted set.
#include <algorithm>
#include <cmath>
#include <map>

#include "commands/zset_util.h"

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
      auto v = ParseInt64(c.arg(j + 1));
      if (!v) return c.reply.Error(kNotIntegerError), false;
      if (*v < 0) return c.reply.Error("ERR LIMIT can't be negative"), false;
      q->limit = *v;
      j += 2;
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

// One input: a sorted set, a set (scores 1) or nothing.
struct Input {
  bool present = false;
  std::map<std::string, double> members;
};

// Reads every input; replies WRONGTYPE (for any type but set and zset) and returns false.
bool ReadInputs(CommandContext& c, const SetOpRequest& q, std::vector<Input>* inputs) {
  for (size_t k : q.keys) {
    auto state = c.ctx.Lookup(c.db(), c.arg(k));
    if (ReplyIfError(c, state.status())) return false;
    Input in;
    if (state->live()) {
      RedisType t = state->meta.type;
      if (t != RedisType::kZset && t != RedisType::kSet) {
        c.reply.Error(kWrongTypeError);
        return false;
      }
      in.present = true;
      MemberIterator it(c.ctx, ColumnFamily::kSubkey, c.db(), c.arg(k), state->meta.version);
      for (it.Seek(); it.Valid(); it.Next()) {
        in.members.emplace(it.member(), t == RedisType::kZset ? DecodeScore(it.value()) : 1.0);
      }
      if (ReplyIfError(c, it.status())) return false;
    }
    inputs->push_back(std::move(in));
  }
  return true;
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

std::map<std::string, double> Compute(const SetOpRequest& q, const std::vector<Input>& in) {
  std::map<std::string, double> out;
  if (q.op == SetOp::kUnion) {
    for (size_t i = 0; i < in.size(); i++) {
      for (const auto& [m, s] : in[i].members) {
        double v = Weighted(s, q.weights[i]);
        auto [it, fresh] = out.emplace(m, v);
        if (!fresh) Combine(&it->second, v, q.aggregate);
      }
    }
  } else if (q.op == SetOp::kInter) {
    for (const auto& [m, s] : in[0].members) {
      double v = Weighted(s, q.weights[0]);
      bool all = true;
      for (size_t i = 1; i < in.size() && all; i++) {
        auto it = in[i].members.find(m);
        if (it == in[i].members.end()) {
          all = false;
        } else {
          Combine(&v, Weighted(it->second, q.weights[i]), q.aggregate);
        }
      }
      if (all) out.emplace(m, v);
      if (q.card_only && q.limit > 0 && static_cast<int64_t>(out.size()) >= q.limit) break;
    }
  } else {
    for (const auto& [m, s] : in[0].members) {
      bool found = false;
      for (size_t i = 1; i < in.size() && !found; i++) found = in[i].members.count(m) > 0;
      if (!found) out.emplace(m, s);
    }
  }
  return out;
}

void SetOpGeneric(CommandContext& c, SetOp op, bool store, bool card_only) {
  SetOpRequest q;
  q.op = op;
  q.store = store;
  q.card_only = card_only;
  if (!ParseKeysAndOptions(c, store ? 2 : 1, &q)) return;
  std::vector<Input> inputs;
  if (!ReadInputs(c, q, &inputs)) return;
  auto result = Compute(q, inputs);
  if (card_only) return c.reply.Integer(static_cast<int64_t>(result.size()));
  std::vector<ScoredMember> sorted;
  sorted.reserve(result.size());
  for (auto& [m, s] : result) sorted.push_back({m, s});
  std::sort(sorted.begin(), sorted.end(), [](const ScoredMember& a, const ScoredMember& b) {
    return a.score != b.score ? a.score < b.score : a.member < b.member;
  });
  if (!store) return ReplyScored(c, sorted, q.withscores);
  auto dst = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, dst.status())) return;
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *dst, /*replace=*/true);
  for (const auto& item : sorted) w.Put(item.member, item.score, nullptr);
  w.Finish();
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
    {"zunion", -3, kR, 0, 0, 0, ZunionCommand, "sorted_set",
     "Returns the union of multiple sorted sets.", "@read @sortedset @slow", ReadKeys},
    {"zinter", -3, kR, 0, 0, 0, ZinterCommand, "sorted_set",
     "Returns the intersect of multiple sorted sets.", "@read @sortedset @slow", ReadKeys},
    {"zdiff", -3, kR, 0, 0, 0, ZdiffCommand, "sorted_set",
     "Returns the difference between multiple sorted sets.", "@read @sortedset @slow", ReadKeys},
    {"zintercard", -3, kR, 0, 0, 0, ZintercardCommand, "sorted_set",
     "Returns the number of members of the intersect of multiple sorted sets.",
     "@read @sortedset @slow", ReadKeys},
    {"zunionstore", -4, kW, 1, 1, 1, ZunionstoreCommand, "sorted_set",
     "Stores the union of multiple sorted sets in a key.", "@write @sortedset @slow", StoreKeys},
    {"zinterstore", -4, kW, 1, 1, 1, ZinterstoreCommand, "sorted_set",
     "Stores the intersect of multiple sorted sets in a key.", "@write @sortedset @slow",
     StoreKeys},
    {"zdiffstore", -4, kW, 1, 1, 1, ZdiffstoreCommand, "sorted_set",
     "Stores the difference of multiple sorted sets in a key.", "@write @sortedset @slow",
     StoreKeys},
};

}  // namespace

const std::vector<CommandSpec>& ZsetSetOpCommands() {
  return kZsetSetOpCommands;
}

}  // namespace basalt
