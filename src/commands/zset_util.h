// Helpers shared by the sorted-set command files (zset_*commands.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_util.h"
#include "types/zset.h"

namespace basalt {

constexpr const char* kMinMaxNotFloat = "ERR min or max is not a float";
constexpr const char* kMinMaxNotLex = "ERR min or max not valid string range item";

// Looks up a key that must be a sorted set. Returns nullopt after replying WRONGTYPE or an I/O
// error; otherwise the state (which may be absent).
std::optional<KeyState> LookupZset(CommandContext& c, std::string_view key);

// Replies with members, and scores when `withscores`: RESP2 flat [m, s, ...], RESP3 an array
// of [member, double] pairs.
void ReplyScored(CommandContext& c, const std::vector<ScoredMember>& items, bool withscores);

// Removes up to `count` members from the low (or, with `max`, high) end of the live sorted set
// `state`, returning them in pop order; nullopt after replying an I/O error.
std::optional<std::vector<ScoredMember>> PopMembers(CommandContext& c, const std::string& key,
                                                    const KeyState& state, uint64_t count,
                                                    bool max);

// ZMPOP/BZMPOP's arguments from argv[numkeys_index] on: numkeys key [key ...] MIN|MAX
// [COUNT count], checked in Redis's order with its error texts.
struct MpopArgs {
  std::vector<size_t> keys;  // argv indexes
  bool max = false;
  uint64_t count = 1;
};
std::optional<MpopArgs> ParseMpop(CommandContext& c, size_t numkeys_index);
// Pops from the first non-empty sorted set among the keys and replies [key, [[member, score],
// ...]]. Returns false, having replied nothing, when every key is empty; true when it replied
// (the data, WRONGTYPE or an I/O error).
bool MpopFirstNonEmpty(CommandContext& c, const MpopArgs& args);

// The tables of the other zset command files, gathered by ZsetCommands().
const std::vector<CommandSpec>& ZsetRangeCommands();
const std::vector<CommandSpec>& ZsetSetOpCommands();
const std::vector<CommandSpec>& ZsetBlockingCommands();

}  // namespace basalt
