// Small helpers shared by command handlers: argument parsing with Redis's error texts and the
// common read/write patterns over the Context.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"
#include "common/strutil.h"
#include "types/string.h"

namespace basalt {

// Parses argv[i] as an integer; on failure replies with Redis's error and returns nullopt.
std::optional<int64_t> IntArg(CommandContext& c, size_t i, const char* error = kNotIntegerError);

// Looks up a key that must be a string. Returns nullopt after replying WRONGTYPE or an I/O
// error; otherwise the state (which may be absent).
std::optional<KeyState> LookupString(CommandContext& c, std::string_view key);

// Replies with the status's error text and returns true if it is not OK.
bool ReplyIfError(CommandContext& c, const Status& s);

// One client's CLIENT LIST line, without the newline (also ACL LOG's client-info); `blocked`:
// parked by a blocking command (flag b).
std::string ClientInfoLine(const Session& s, bool blocked = false);

// Stores a string value for `key`, replacing `old`.
void WriteString(CommandContext& c, std::string_view key, std::string_view value, int64_t expire_ms,
                 const KeyState& old, StringEncoding encoding = StringEncoding::kAuto);

// The whole value of the string `state` of `key` (empty if not live). Returns false after
// replying with the error if it cannot be read.
bool ReadStringValue(CommandContext& c, std::string_view key, const KeyState& state,
                     std::string* out);

// Counts a read lookup of `key` as a keyspace hit or miss; a miss is also the key-miss
// notification (class m), as in Redis.
void CountHit(CommandContext& c, std::string_view key, bool hit);

// The command's one key write counts as `changes` changes in rdb_changes_since_last_save, as
// Redis counts it: each element pushed, member added or removed, entry trimmed.
inline void CountChanges(CommandContext& c, int64_t changes) {
  c.ctx.AddChanges(changes - 1);
}

// A keyspace notification of this command on `key` of the session's database: the names and
// classes are Redis's (types/keyspace_events.h); commands call it after their write.
inline void Notify(CommandContext& c, uint32_t event_class, std::string_view event,
                   std::string_view key) {
  c.ctx.Notify(event_class, event, c.db(), key);
}
// What a write sends Redis replicas (commands/replica_stream.h, types/replication_effects.h).
// By default: the command as sent, when it changed a key. A command whose effect would differ
// on the replica (a relative TTL, a random pick, a generated ID, a blocking form) sends its
// rewrite instead, built only while Replicating(): each ReplicateAs() adds one command in the
// client's database.
inline bool Replicating(const CommandContext& c) {
  return c.ctx.effects().capturing();
}
inline void ReplicateAs(CommandContext& c, std::vector<std::string> argv) {
  if (Replicating(c)) c.ctx.effects().Add(c.db(), std::move(argv));
}
// The same from views, copied only while Replicating(): a call costs no allocation otherwise.
void ReplicateAs(CommandContext& c, std::initializer_list<std::string_view> argv);
// Sends nothing, whatever the command changed.
inline void ReplicateNothing(CommandContext& c) {
  c.ctx.effects().AddNothing();
}
// Sends the command as sent even though it changed no key (FLUSHALL of an empty database,
// PUBLISH, FUNCTION LOAD).
inline void ReplicateAsSent(CommandContext& c) {
  c.ctx.effects().SendAsSent();
}
// The deletion of `key` as Redis replicates a key a command removed by its own rule (an expiry
// in the past, SPOP of every member): UNLINK when lazyfree-lazy-server-del says so, else DEL.
void ReplicateDeletion(CommandContext& c, std::string_view key);
// PEXPIREAT `key` `expire_ms`: how every TTL a command sets reaches replicas (absolute, so a
// replica that applies it late does not keep the key longer).
void ReplicateExpireAt(CommandContext& c, std::string_view key, int64_t expire_ms);

// The `del` event when a removal emptied the collection `key` (Redis deletes it then).
void NotifyIfEmptied(CommandContext& c, std::string_view key);
// A list pop's events: lpop or rpop, and del when it took all `size_before` elements. Counts
// the pop as Redis does: one change per element.
void NotifyListPopped(CommandContext& c, std::string_view key, bool left, uint64_t size_before,
                      size_t popped);
// LMOVE's events, in Redis's order: the push on dst, then the pop on src (and its del). Counts
// the move as Redis does: one change, also between two keys.
void NotifyListMoved(CommandContext& c, std::string_view src, std::string_view dst, bool from_left,
                     bool to_left);

// Blocking commands. TimeoutArg parses a timeout in seconds (fractions allowed) with Redis's
// errors and returns the absolute deadline in Unix ms, 0 meaning forever. As in Redis the
// milliseconds are rounded up. ParkClient registers
// the session on the keys at the given argument indexes and records the command to re-run;
// it must be called while the command still holds its key locks (that is, from the handler).
// Inside MULTI a blocking command never parks: the caller replies as on timeout instead.
// `fails_on_deleted_key` marks a command that a deletion of its key ends with an error rather
// than keeps waiting (XREADGROUP: INFO's total_blocking_keys_on_nokey).
std::optional<int64_t> TimeoutArg(CommandContext& c, size_t i);
void ParkClient(CommandContext& c, const std::vector<size_t>& key_indexes, int64_t deadline_ms,
                bool timeout_replies_null_array, bool fails_on_deleted_key = false);
// A woken client runs its command again only if one of its keys now holds a live value of the
// type it waits for, as Redis serves a client woken by a write: a key that a transaction pushed
// to, deleted and set to a string wakes nobody. Otherwise the client parks again (returns true).
bool ParkAgainIfNotReady(CommandContext& c, const std::vector<size_t>& key_indexes, RedisType type,
                         int64_t deadline_ms, bool timeout_replies_null_array);

// Largest string a command may build (SETRANGE, APPEND): proto-max-bulk-len, as in Redis.
bool CheckStringSize(CommandContext& c, uint64_t size);

// SCAN-family arguments, parsed as Redis does. The cursor follows strtoul's rules (no leading
// space, the whole string, no overflow); replies "ERR invalid cursor" otherwise.
std::optional<uint64_t> ScanCursorArg(CommandContext& c, size_t i);
struct ScanOptions {
  std::string pattern;  // empty: everything
  int64_t count = 10;
  std::string type;  // SCAN's TYPE filter, lower case; empty: any
  bool Matches(std::string_view name) const {
    return pattern.empty() || pattern == "*" || GlobMatch(pattern, name);
  }
};
// MATCH/COUNT (and TYPE when `allow_type`) from argument `first` on; replies and returns false
// on a syntax error.
bool ParseScanOptions(CommandContext& c, size_t first, bool allow_type, ScanOptions* out);

// HSCAN/SSCAN/ZSCAN key cursor [MATCH pattern] [COUNT count] over the collection of `type` at
// argv[1]. For each matching member, `emit` appends what the reply shows for it (the member,
// and its value or score) given the collection's metadata, the member and its stored `subkey`
// value.
using ScanEmitter = std::function<Status(const Metadata& meta, std::string_view member,
                                         std::string_view stored, std::vector<std::string>* out)>;
void ScanMembersCommand(CommandContext& c, RedisType type, const ScanEmitter& emit);

}  // namespace basalt
