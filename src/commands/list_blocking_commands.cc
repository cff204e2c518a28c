// Blocking list commands: BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH.
//
// Each tries its non-blocking twin first. When there is nothing to pop it parks the client on
// its keys (commands/blocking.h) while it still holds their locks; a later push to one of them
// wakes the client and runs the command again. Inside MULTI nothing ever blocks: the command
// answers as if it had timed out (BLMOVE/BRPOPLPUSH with a null bulk string, as Redis does).
#include "commands/command_util.h"
#include "types/list.h"

namespace basalt {

namespace {

std::optional<ListEnd> EndArg(CommandContext& c, size_t i) {
  if (EqualsIgnoreCase(c.arg(i), "left")) return ListEnd::kLeft;
  if (EqualsIgnoreCase(c.arg(i), "right")) return ListEnd::kRight;
  c.reply.Error(kSyntaxError);
  return std::nullopt;
}

// Pops `count` elements from the first non-empty list among the keys at `indexes`, replying
// [key, element] (or [key, [elements]] when `nested`). Returns false when all were empty
// (nothing replied), true when it replied (data or an error).
bool PopFirstNonEmpty(CommandContext& c, const std::vector<size_t>& indexes, ListEnd end,
                      uint64_t count, bool nested) {
  for (size_t i : indexes) {
    auto state = LookupList(c.ctx, c.db(), c.arg(i));
    if (ReplyIfError(c, state.status())) return true;
    if (!state->live()) continue;
    auto popped = ListPopFrom(c.ctx, c.db(), c.arg(i), *state, end, count);
    if (ReplyIfError(c, popped.status())) return true;
    NotifyListPopped(c, c.arg(i), end == ListEnd::kLeft, state->meta.size, popped->size());
    // Replicas get the non-blocking pop, with the count popped for BLMPOP, as Redis sends it.
    const char* pop = end == ListEnd::kLeft ? "LPOP" : "RPOP";
    if (nested) {
      ReplicateAs(c, {pop, c.arg(i), std::to_string(popped->size())});
    } else {
      ReplicateAs(c, {pop, c.arg(i)});
    }
    c.reply.Array(2);
    c.reply.Bulk(c.arg(i));
    if (nested) {
      c.reply.BulkArray(popped->data(), popped->size());
    } else {
      c.reply.Bulk(popped->front());
    }
    return true;
  }
  return false;
}

void BlockingPop(CommandContext& c, ListEnd end) {
  auto deadline = TimeoutArg(c, c.argc() - 1);
  if (!deadline) return;
  std::vector<size_t> keys;
  for (size_t i = 1; i + 1 < c.argc(); i++) keys.push_back(i);
  if (ParkAgainIfNotReady(c, keys, RedisType::kList, *deadline, true)) return;
  if (PopFirstNonEmpty(c, keys, end, 1, false)) return;
  if (c.in_exec) return c.reply.NullArray();
  ParkClient(c, keys, *deadline, true);
}

void BLPopCommand(CommandContext& c) {
  BlockingPop(c, ListEnd::kLeft);
}
void BRPopCommand(CommandContext& c) {
  BlockingPop(c, ListEnd::kRight);
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
std::vector<size_t> BLMPopKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> out;
  if (argv.size() < 3) return out;
  auto n = ParseInt64(argv[2]);
  if (!n || *n < 1 || static_cast<uint64_t>(*n) > argv.size() - 3) return out;
  for (size_t i = 0; i < static_cast<size_t>(*n); i++) out.push_back(3 + i);
  return out;
}

void BLMPopCommand(CommandContext& c) {
  // Redis checks every other argument before the timeout.
  auto numkeys = ParseInt64(c.arg(2));
  if (!numkeys || *numkeys < 1) return c.reply.Error("ERR numkeys should be greater than 0");
  if (static_cast<uint64_t>(*numkeys) >= c.argc() - 3) return c.reply.Error(kSyntaxError);
  size_t where = 3 + static_cast<size_t>(*numkeys);
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
  auto deadline = TimeoutArg(c, 1);
  if (!deadline) return;
  std::vector<size_t> keys = BLMPopKeys(c.argv);
  if (ParkAgainIfNotReady(c, keys, RedisType::kList, *deadline, true)) return;
  if (PopFirstNonEmpty(c, keys, *end, count == -1 ? 1 : static_cast<uint64_t>(count), true)) return;
  if (c.in_exec) return c.reply.NullArray();
  ParkClient(c, keys, *deadline, true);
}

void BlockingMove(CommandContext& c, ListEnd from, ListEnd to, size_t timeout_index) {
  auto deadline = TimeoutArg(c, timeout_index);
  if (!deadline) return;
  if (ParkAgainIfNotReady(c, {1}, RedisType::kList, *deadline, true)) return;
  auto moved = ListMove(c.ctx, c.db(), c.arg(1), c.arg(2), from, to);
  if (ReplyIfError(c, moved.status())) return;
  if (moved->has_value()) {
    NotifyListMoved(c, c.arg(1), c.arg(2), from == ListEnd::kLeft, to == ListEnd::kLeft);
    // Replicas get the non-blocking twin: BRPOPLPUSH's timeout is its 4th argument, BLMOVE's
    // its 6th.
    if (timeout_index == 3) {
      ReplicateAs(c, {"RPOPLPUSH", c.arg(1), c.arg(2)});
    } else {
      ReplicateAs(c, {"LMOVE", c.arg(1), c.arg(2), c.arg(3), c.arg(4)});
    }
    return c.reply.Bulk(**moved);
  }
  if (c.in_exec) return c.reply.Null();
  ParkClient(c, {1}, *deadline, true);
}

void BRPopLPushCommand(CommandContext& c) {
  BlockingMove(c, ListEnd::kRight, ListEnd::kLeft, 3);
}

void BLMoveCommand(CommandContext& c) {
  auto from = EndArg(c, 3);
  if (!from) return;
  auto to = EndArg(c, 4);
  if (!to) return;
  BlockingMove(c, *from, *to, 5);
}

constexpr uint32_t kBlocking = kCmdWrite | kCmdBlocking;

const std::vector<CommandSpec> kBlockingListCommands = {
    {"blpop", -3, kBlocking, 1, -2, 1, BLPopCommand, "list",
     "Removes and returns the first element in a list. Blocks until an element is available "
     "otherwise. Deletes the list if the last element was popped.",
     "@write @list @slow @blocking"},
    {"brpop", -3, kBlocking, 1, -2, 1, BRPopCommand, "list",
     "Removes and returns the last element in a list. Blocks until an element is available "
     "otherwise. Deletes the list if the last element was popped.",
     "@write @list @slow @blocking"},
    // Unlike the other blocking pops, Redis 7.0 lets scripts call BLMPOP; there it does not block.
    {"blmpop", -5, kCmdWrite | kCmdBlocking | kCmdMovableKeys, 0, 0, 0, BLMPopCommand, "list",
     "Pops the first element from one of multiple lists. Blocks until an element is available "
     "otherwise. Deletes the list if the last element was popped.",
     "@write @list @slow @blocking", BLMPopKeys},
    {"brpoplpush", 4, kBlocking | kCmdDenyOom, 1, 2, 1, BRPopLPushCommand, "list",
     "Pops an element from a list, pushes it to another list and returns it. Block until an "
     "element is available otherwise. Deletes the list if the last element was popped.",
     "@write @list @slow @blocking"},
    {"blmove", 6, kBlocking | kCmdDenyOom, 1, 2, 1, BLMoveCommand, "list",
     "Pops an element from a list, pushes it to another list and returns it. Blocks until an "
     "element is available otherwise. Deletes the list if the last element was moved.",
     "@write @list @slow @blocking"},
};

}  // namespace

const std::vector<CommandSpec>& BlockingListCommands() {
  return kBlockingListCommands;
}

}  // namespace basalt
