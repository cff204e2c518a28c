// List commands (the non-blocking ones): pushes, pops, ranges, LINSERT/LREM/LTRIM/LPOS and the
// moves between lists.
//
// The storage work lives in types/list.h; handlers here parse arguments in the order Redis
// does (so the same error wins), look the key up once, and reply. The blocking commands call
// the same list functions (ListPop, ListMove).
#include <climits>
#include <span>

#include "commands/command_util.h"
#include "types/list.h"

namespace basalt {

namespace {

// Looks up a list; replies WRONGTYPE (or an I/O error) and returns nullopt on failure.
std::optional<KeyState> LookupListOrReply(CommandContext& c, std::string_view key) {
  auto state = LookupList(c.ctx, c.db(), key);
  if (ReplyIfError(c, state.status())) return std::nullopt;
  return *state;
}

// LEFT|RIGHT (LMOVE, LMPOP).
std::optional<ListEnd> EndArg(CommandContext& c, size_t i) {
  if (EqualsIgnoreCase(c.arg(i), "left")) return ListEnd::kLeft;
  if (EqualsIgnoreCase(c.arg(i), "right")) return ListEnd::kRight;
  c.reply.Error(kSyntaxError);
  return std::nullopt;
}

// Redis's getPositiveLongFromObjectOrReply: any failure (not a number, negative) is `error`.
std::optional<int64_t> NonNegativeArg(CommandContext& c, size_t i, const char* error) {
  auto v = ParseInt64(c.arg(i));
  if (!v || *v < 0) {
    c.reply.Error(error);
    return std::nullopt;
  }
  return v;
}

void ReplyElements(CommandContext& c, const std::vector<std::string>& items) {
  c.reply.BulkArray(items.data(), items.size());
}

void PushGeneric(CommandContext& c, ListEnd end, bool only_if_exists) {
  // Most pushes carry one element, whose view needs no vector.
  std::string_view one[] = {c.arg(2)};
  std::vector<std::string_view> many;
  if (c.argc() > 3) many.assign(c.argv.begin() + 2, c.argv.end());
  std::span<const std::string_view> items = c.argc() > 3 ? std::span(many) : std::span(one);
  auto size = ListPush(c.ctx, c.db(), c.arg(1), end, items, only_if_exists);
  if (ReplyIfError(c, size.status())) return;
  if (*size != 0) {
    Notify(c, notify::kList, end == ListEnd::kLeft ? "lpush" : "rpush", c.arg(1));
    CountChanges(c, static_cast<int64_t>(items.size()));
  }
  c.reply.Integer(static_cast<int64_t>(*size));
}

void LPushCommand(CommandContext& c) {
  PushGeneric(c, ListEnd::kLeft, false);
}
void RPushCommand(CommandContext& c) {
  PushGeneric(c, ListEnd::kRight, false);
}
void LPushXCommand(CommandContext& c) {
  PushGeneric(c, ListEnd::kLeft, true);
}
void RPushXCommand(CommandContext& c) {
  PushGeneric(c, ListEnd::kRight, true);
}

void PopGeneric(CommandContext& c, ListEnd end) {
  if (c.argc() > 3) return c.reply.Error(WrongArityError(end == ListEnd::kLeft ? "lpop" : "rpop"));
  bool has_count = c.argc() == 3;
  int64_t count = 1;
  if (has_count) {
    auto v = NonNegativeArg(c, 2, "ERR value is out of range, must be positive");
    if (!v) return;
    count = *v;
  }
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return has_count ? c.reply.NullArray() : c.reply.Null();
  if (count == 0) return c.reply.Array(0);
  auto popped = ListPopFrom(c.ctx, c.db(), c.arg(1), *state, end, static_cast<uint64_t>(count));
  if (ReplyIfError(c, popped.status())) return;
  NotifyListPopped(c, c.arg(1), end == ListEnd::kLeft, state->meta.size, popped->size());
  if (has_count) return ReplyElements(c, *popped);
  c.reply.Bulk(popped->front());
}

void LPopCommand(CommandContext& c) {
  PopGeneric(c, ListEnd::kLeft);
}
void RPopCommand(CommandContext& c) {
  PopGeneric(c, ListEnd::kRight);
}

void LLenCommand(CommandContext& c) {
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Integer(state->live() ? static_cast<int64_t>(state->meta.size) : 0);
}

void LIndexCommand(CommandContext& c) {
  // Redis looks the key up before it parses the index.
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Null();
  auto index = IntArg(c, 2);
  if (!index) return;
  auto offset = ListOffset(*index, state->meta.size);
  if (!offset) return c.reply.Null();
  std::vector<std::string> out;
  if (ReplyIfError(c, ListRead(c.ctx, c.db(), c.arg(1), state->meta, *offset, 1, &out))) return;
  c.reply.Bulk(out[0]);
}

void LRangeCommand(CommandContext& c) {
  auto start = IntArg(c, 2);
  if (!start) return;
  auto stop = IntArg(c, 3);
  if (!stop) return;
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Array(0);
  auto range = ListRange(*start, *stop, state->meta.size);
  if (!range) return c.reply.Array(0);
  // Straight into the reply, so a huge range costs at most max-reply-size of memory.
  uint64_t count = range->second - range->first + 1;
  size_t mark = c.reply.buffer()->size();
  c.reply.Array(count);
  Status s = ListVisit(c.ctx, c.db(), c.arg(1), state->meta, range->first, count,
                       [&c](std::string_view item) {
                         c.reply.Bulk(item);
                         return !c.reply.overflowed();
                       });
  if (!s.ok() && !c.reply.overflowed()) {
    c.reply.buffer()->resize(mark);
    ReplyIfError(c, s);
  }
}

void LSetCommand(CommandContext& c) {
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Error("ERR no such key");
  auto index = IntArg(c, 2);
  if (!index) return;
  auto offset = ListOffset(*index, state->meta.size);
  if (!offset) return c.reply.Error("ERR index out of range");
  ListSet(c.ctx, c.db(), c.arg(1), *state, *offset, c.arg(3));
  Notify(c, notify::kList, "lset", c.arg(1));
  c.reply.Ok();
}

void LInsertCommand(CommandContext& c) {
  bool after;
  if (EqualsIgnoreCase(c.arg(2), "after")) {
    after = true;
  } else if (EqualsIgnoreCase(c.arg(2), "before")) {
    after = false;
  } else {
    return c.reply.Error(kSyntaxError);
  }
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Integer(0);
  auto size = ListInsert(c.ctx, c.db(), c.arg(1), *state, after, c.arg(3), c.arg(4));
  if (ReplyIfError(c, size.status())) return;
  if (*size != -1) Notify(c, notify::kList, "linsert", c.arg(1));
  c.reply.Integer(*size);
}

void LRemCommand(CommandContext& c) {
  auto count = IntArg(c, 2);
  if (!count) return;
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Integer(0);
  auto removed = ListRemove(c.ctx, c.db(), c.arg(1), *state, *count, c.arg(3));
  if (ReplyIfError(c, removed.status())) return;
  if (*removed != 0) {
    Notify(c, notify::kList, "lrem", c.arg(1));
    NotifyIfEmptied(c, c.arg(1));
    CountChanges(c, *removed);
  }
  c.reply.Integer(*removed);
}

void LTrimCommand(CommandContext& c) {
  auto start = IntArg(c, 2);
  if (!start) return;
  auto stop = IntArg(c, 3);
  if (!stop) return;
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  if (state->live()) {
    const uint64_t trimmed = ListTrim(c.ctx, c.db(), c.arg(1), *state, *start, *stop);
    CountChanges(c, static_cast<int64_t>(trimmed));
    Notify(c, notify::kList, "ltrim", c.arg(1));
    NotifyIfEmptied(c, c.arg(1));
  }
  c.reply.Ok();
}

struct LPosOptions {
  int64_t rank = 1;
  int64_t count = -1;  // -1: not given (reply a single position)
  int64_t maxlen = 0;  // 0: the whole list
};

bool ParseLPosOptions(CommandContext& c, LPosOptions* o) {
  for (size_t j = 3; j < c.argc(); j++) {
    const std::string& opt = c.arg(j);
    bool more = j + 1 < c.argc();
    if (EqualsIgnoreCase(opt, "rank") && more) {
      auto v = IntArg(c, ++j);
      if (!v) return false;
      if (*v == INT64_MIN) {  // Redis 7.2 refuses the one rank it cannot negate
        c.reply.Error(
            "ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
        return false;
      }
      if (*v == 0) {
        c.reply.Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
        return false;
      }
      o->rank = *v;
    } else if (EqualsIgnoreCase(opt, "count") && more) {
      auto v = NonNegativeArg(c, ++j, "ERR COUNT can't be negative");
      if (!v) return false;
      o->count = *v;
    } else if (EqualsIgnoreCase(opt, "maxlen") && more) {
      auto v = NonNegativeArg(c, ++j, "ERR MAXLEN can't be negative");
      if (!v) return false;
      o->maxlen = *v;
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

void LPosCommand(CommandContext& c) {
  LPosOptions o;
  if (!ParseLPosOptions(c, &o)) return;
  auto state = LookupListOrReply(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return o.count >= 0 ? c.reply.Array(0) : c.reply.Null();
  const bool reverse = o.rank < 0;
  uint64_t skip = reverse ? static_cast<uint64_t>(-(o.rank + 1)) : o.rank - 1;
  uint64_t want = o.count > 0 ? static_cast<uint64_t>(o.count) : UINT64_MAX;
  if (o.count < 0) want = 1;
  uint64_t examined = 0;
  std::vector<int64_t> found;
  const std::string& element = c.arg(2);
  Status s = ListScan(c.ctx, c.db(), c.arg(1), state->meta, reverse,
                      [&](uint64_t offset, const std::string& v) {
                        if (o.maxlen > 0 && examined >= static_cast<uint64_t>(o.maxlen)) {
                          return false;
                        }
                        examined++;
                        if (v != element) return true;
                        if (skip > 0) {
                          skip--;
                          return true;
                        }
                        found.push_back(static_cast<int64_t>(offset));
                        return found.size() < want;
                      });
  if (ReplyIfError(c, s)) return;
  if (o.count < 0) return found.empty() ? c.reply.Null() : c.reply.Integer(found[0]);
  c.reply.Array(found.size());
  for (int64_t pos : found) c.reply.Integer(pos);
}

void MoveGeneric(CommandContext& c, ListEnd from, ListEnd to) {
  auto moved = ListMove(c.ctx, c.db(), c.arg(1), c.arg(2), from, to);
  if (ReplyIfError(c, moved.status())) return;
  if (!moved->has_value()) return c.reply.Null();
  NotifyListMoved(c, c.arg(1), c.arg(2), from == ListEnd::kLeft, to == ListEnd::kLeft);
  c.reply.Bulk(**moved);
}

void RPopLPushCommand(CommandContext& c) {
  MoveGeneric(c, ListEnd::kRight, ListEnd::kLeft);
}

void LMoveCommand(CommandContext& c) {
  auto from = EndArg(c, 3);
  if (!from) return;
  auto to = EndArg(c, 4);
  if (!to) return;
  MoveGeneric(c, *from, *to);
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: keys only when numkeys is sane, as
// Redis's getkeys does.
std::vector<size_t> LMPopKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> out;
  if (argv.size() < 2) return out;
  auto n = ParseInt64(argv[1]);
  if (!n || *n < 1 || static_cast<uint64_t>(*n) > argv.size() - 2) return out;
  for (size_t i = 0; i < static_cast<size_t>(*n); i++) out.push_back(2 + i);
  return out;
}

void LMPopCommand(CommandContext& c) {
  auto numkeys = ParseInt64(c.arg(1));
  if (!numkeys || *numkeys < 1) return c.reply.Error("ERR numkeys should be greater than 0");
  if (static_cast<uint64_t>(*numkeys) >= c.argc() - 2) return c.reply.Error(kSyntaxError);
  size_t where = 2 + static_cast<size_t>(*numkeys);
  auto end = EndArg(c, where);
  if (!end) return;
  int64_t count = -1;
  for (size_t j = where + 1; j < c.argc(); j++) {
    if (count == -1 && EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      auto v = ParseInt64(c.arg(++j));
      if (!v || *v < 1) return c.reply.Error("ERR count should be greater than 0");
      count = *v;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  if (count == -1) count = 1;
  for (size_t i = 2; i < where; i++) {
    auto state = LookupListOrReply(c, c.arg(i));
    if (!state) return;
    if (!state->live()) continue;
    auto popped = ListPopFrom(c.ctx, c.db(), c.arg(i), *state, *end, static_cast<uint64_t>(count));
    if (ReplyIfError(c, popped.status())) return;
    NotifyListPopped(c, c.arg(i), *end == ListEnd::kLeft, state->meta.size, popped->size());
    ReplicateAs(
        c, {*end == ListEnd::kLeft ? "LPOP" : "RPOP", c.arg(i), std::to_string(popped->size())});
    c.reply.Array(2);
    c.reply.Bulk(c.arg(i));
    return ReplyElements(c, *popped);
  }
  c.reply.NullArray();
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kListCommands = {
    {"lpush", -3, kW | kCmdFast, 1, 1, 1, LPushCommand, "list",
     "Prepends one or more elements to a list. Creates the key if it doesn't exist.",
     "@write @list @fast"},
    {"rpush", -3, kW | kCmdFast, 1, 1, 1, RPushCommand, "list",
     "Appends one or more elements to a list. Creates the key if it doesn't exist.",
     "@write @list @fast"},
    {"lpushx", -3, kW | kCmdFast, 1, 1, 1, LPushXCommand, "list",
     "Prepends one or more elements to a list only when the list exists.", "@write @list @fast"},
    {"rpushx", -3, kW | kCmdFast, 1, 1, 1, RPushXCommand, "list",
     "Appends an element to a list only when the list exists.", "@write @list @fast"},
    {"lpop", -2, kCmdWrite | kCmdFast, 1, 1, 1, LPopCommand, "list",
     "Returns the first elements in a list after removing it. Deletes the list if the last "
     "element was popped.",
     "@write @list @fast"},
    {"rpop", -2, kCmdWrite | kCmdFast, 1, 1, 1, RPopCommand, "list",
     "Returns and removes the last elements of a list. Deletes the list if the last element "
     "was popped.",
     "@write @list @fast"},
    {"llen", 2, kR | kCmdFast, 1, 1, 1, LLenCommand, "list", "Returns the length of a list.",
     "@read @list @fast"},
    {"lindex", 3, kR, 1, 1, 1, LIndexCommand, "list",
     "Returns an element from a list by its index.", "@read @list @slow"},
    {"lrange", 4, kR, 1, 1, 1, LRangeCommand, "list", "Returns a range of elements from a list.",
     "@read @list @slow"},
    {"lset", 4, kW, 1, 1, 1, LSetCommand, "list",
     "Sets the value of an element in a list by its index.", "@write @list @slow"},
    {"linsert", 5, kW, 1, 1, 1, LInsertCommand, "list",
     "Inserts an element before or after another element in a list.", "@write @list @slow"},
    {"lrem", 4, kCmdWrite, 1, 1, 1, LRemCommand, "list", "Removes elements from a list.",
     "@write @list @slow"},
    {"ltrim", 4, kCmdWrite, 1, 1, 1, LTrimCommand, "list",
     "Removes elements from both ends a list. Deletes the list if all elements were trimmed.",
     "@write @list @slow"},
    {"lpos", -3, kR, 1, 1, 1, LPosCommand, "list",
     "Returns the index of matching elements in a list.", "@read @list @slow"},
    {"rpoplpush", 3, kW, 1, 2, 1, RPopLPushCommand, "list",
     "Returns the last element of a list after removing and pushing it to another list. Deletes "
     "the list if the last element was popped.",
     "@write @list @slow"},
    {"lmove", 5, kW, 1, 2, 1, LMoveCommand, "list",
     "Returns an element after popping it from one list and pushing it to another. Deletes the "
     "list if the last element was moved.",
     "@write @list @slow"},
    {"lmpop", -4, kCmdWrite | kCmdMovableKeys, 0, 0, 0, LMPopCommand, "list",
     "Returns multiple elements from a list after removing them. Deletes the list if the last "
     "element was popped.",
     "@write @list @slow", LMPopKeys},
};

}  // namespace

const std::vector<CommandSpec>& ListCommands() {
  return kListCommands;
}

}  // namespace basalt
