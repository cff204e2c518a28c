// Helpers shared by the stream command files (stream_commands.cc, stream_group_commands.cc,
// stream_info_commands.cc): lookups, ID arguments with Redis's errors, and entry replies.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_util.h"
#include "types/stream.h"

namespace basalt {

constexpr const char* kInvalidStreamId =
    "ERR Invalid stream ID specified as stream command argument";

// The stream at `key` (live or not); nullopt after replying WRONGTYPE or an I/O error.
std::optional<KeyState> LookupStream(CommandContext& c, std::string_view key);

// Parses a stream ID as Redis's streamGenericParseIDOrReply: "-" and "+" (unless `strict`),
// "ms" (seq = missing_seq) and "ms-seq"; with `seq_given` also "ms-*" (*seq_given false).
// Replies the invalid-ID error and returns nullopt on failure.
std::optional<StreamId> StreamIdArg(CommandContext& c, std::string_view arg, uint64_t missing_seq,
                                    bool strict, bool* seq_given = nullptr);

void ReplyStreamId(CommandContext& c, StreamId id);

// How XREADGROUP, XCLAIM and XAUTOCLAIM reach replicas, as Redis sends them: for each entry they
// delivered, claimed or dropped from the group's pending list, an XCLAIM that leaves it, applied
// in any state, as `p` says (consumer, delivery time and count; dropped if the entry is gone)
// with the group at `last_id`. No-op unless Replicating().
void ReplicateClaim(CommandContext& c, std::string_view key, std::string_view group,
                    const PendingEntry& p, StreamId last_id);
// XGROUP SETID with ENTRIESREAD: the group's position, when no XCLAIM carries it.
void ReplicateGroupPosition(CommandContext& c, std::string_view key, std::string_view group,
                            const StreamGroup& g);
// [id, [field, value, ...]]
void ReplyStreamEntry(CommandContext& c, const StreamEntry& entry);
void ReplyStreamEntries(CommandContext& c, const std::vector<StreamEntry>& entries);

// The entries of `meta` in [start, end], ascending (or descending), at most `count` (0: all).
// Replies the error and returns nullopt when they cannot be read.
std::optional<std::vector<StreamEntry>> ReadStreamEntries(CommandContext& c, StreamStore& store,
                                                          const Metadata& meta, StreamId start,
                                                          StreamId end, bool reverse,
                                                          uint64_t count);

const std::vector<CommandSpec>& StreamGroupCommands();
const std::vector<CommandSpec>& StreamInfoCommands();
const std::vector<CommandSpec>& StreamReadCommands();

}  // namespace basalt
