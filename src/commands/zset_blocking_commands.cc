// Blocking sorted-set pops: BZPOPMIN, BZPOPMAX, BZMPOP.
//
// Each first tries its non-blocking twin (ZPOPMIN/ZPOPMAX with one member, ZMPOP). When every
// key is empty it parks the client on its keys (commands/blocking.h) while it still holds their
// locks; a later write to one of them (ZADD from any connection) wakes the client and runs the
// command again. Inside MULTI nothing blocks: the command answers as on timeout, a null array.
#include "commands/zset_util.h"

namespace basalt {

namespace {

// BZPOPMIN|BZPOPMAX key [key ...] timeout: replies [key, member, score].
void BlockingPop(CommandContext& c, bool max) {
  auto deadline = TimeoutArg(c, c.argc() - 1);
  if (!deadline) return;
  std::vector<size_t> keys;
  for (size_t i = 1; i + 1 < c.argc(); i++) keys.push_back(i);
  if (ParkAgainIfNotReady(c, keys, RedisType::kZset, *deadline, true)) return;
  for (size_t k : keys) {
    auto state = LookupZset(c, c.arg(k));
    if (!state) return;
    if (!state->live()) continue;
    auto items = PopMembers(c, c.arg(k), *state, 1, max);
    if (!items) return;
    ReplicateAs(c, {max ? "ZPOPMAX" : "ZPOPMIN", c.arg(k)});  // as Redis 7.2 sends it
    c.reply.Array(3);
    c.reply.Bulk(c.arg(k));
    c.reply.Bulk(items->front().member);
    c.reply.Double(items->front().score);
    return;
  }
  if (c.in_exec) return c.reply.NullArray();
  ParkClient(c, keys, *deadline, true);
}

void BzpopminCommand(CommandContext& c) {
  BlockingPop(c, false);
}
void BzpopmaxCommand(CommandContext& c) {
  BlockingPop(c, true);
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]: as Redis, every other argument
// is checked before the timeout.
void BzmpopCommand(CommandContext& c) {
  auto args = ParseMpop(c, 2);
  if (!args) return;
  auto deadline = TimeoutArg(c, 1);
  if (!deadline) return;
  if (ParkAgainIfNotReady(c, args->keys, RedisType::kZset, *deadline, true)) return;
  if (MpopFirstNonEmpty(c, *args)) return;
  if (c.in_exec) return c.reply.NullArray();
  ParkClient(c, args->keys, *deadline, true);
}

std::vector<size_t> BzmpopKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> keys;
  auto n = argv.size() > 2 ? ParseInt64(argv[2]) : std::nullopt;
  if (!n || *n <= 0) return keys;
  for (size_t i = 3; i < argv.size() && i - 3 < static_cast<size_t>(*n); i++) keys.push_back(i);
  return keys;
}

constexpr uint32_t kBlocking = kCmdWrite | kCmdBlocking;

const std::vector<CommandSpec> kZsetBlockingCommands = {
    {"bzpopmin", -3, kBlocking | kCmdFast, 1, -2, 1, BzpopminCommand, "sorted_set",
     "Removes and returns the member with the lowest score from one or more sorted sets. Blocks "
     "until a member is available otherwise. Deletes the sorted set if the last element was "
     "popped.",
     "@write @sortedset @fast @blocking"},
    {"bzpopmax", -3, kBlocking | kCmdFast, 1, -2, 1, BzpopmaxCommand, "sorted_set",
     "Removes and returns the member with the highest score from one or more sorted sets. "
     "Blocks until a member available otherwise. Deletes the sorted set if the last element "
     "was popped.",
     "@write @sortedset @fast @blocking"},
    {"bzmpop", -5, kCmdWrite | kCmdBlocking | kCmdMovableKeys, 0, 0, 0, BzmpopCommand, "sorted_set",
     "Removes and returns a member by score from one or more sorted sets. Blocks until a member "
     "is available otherwise. Deletes the sorted set if the last element was popped.",
     "@write @sortedset @slow @blocking", BzmpopKeys},
};

}  // namespace

const std::vector<CommandSpec>& ZsetBlockingCommands() {
  return kZsetBlockingCommands;
}

}  // namespace basalt
