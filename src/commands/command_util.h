// Small helpers shared by command handlers: argument parsing with Redis's error texts and the
// common read/write patterns over the Context.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "commands/command_table.h"
#include "commands/server_state.h"
#include "common/strutil.h"

namespace basalt {

// Parses argv[i] as an integer; on failure replies with Redis's error and returns nullopt.
std::optional<int64_t> IntArg(CommandContext& c, size_t i, const char* error = kNotIntegerError);

// Looks up a key that must be a string. Returns nullopt after replying WRONGTYPE or an I/O
// error; otherwise the state (which may be absent).
std::optional<KeyState> LookupString(CommandContext& c, std::string_view key);

// Replies with the status's error text and returns true if it is not OK.
bool ReplyIfError(CommandContext& c, const Status& s);

// Stores a string value for `key`, replacing `old`.
void WriteString(CommandContext& c, std::string_view key, std::string value, int64_t expire_ms,
                 const KeyState& old, StringEncoding encoding = StringEncoding::kAuto);

void CountHit(CommandContext& c, bool hit);

// Blocking commands. TimeoutArg parses a timeout in seconds (fractions allowed) with Redis's
// errors and returns the absolute deadline in Unix ms, 0 meaning forever. ParkClient registers
// the session on the keys at the given argument indexes and records the command to re-run;
// it must be called while the command still holds its key locks (that is, from the handler).
// Inside MULTI a blocking command never parks: the caller replies as on timeout instead.
std::optional<int64_t> TimeoutArg(CommandContext& c, size_t i);
void ParkClient(CommandContext& c, const std::vector<size_t>& key_indexes, int64_t deadline_ms,
                bool timeout_replies_null_array);

// Largest string a command may build (SETRANGE, APPEND): proto-max-bulk-len, as in Redis.
bool CheckStringSize(CommandContext& c, uint64_t size);

}  // namespace basalt
