// Conversions between Redis replies and Lua values, with Redis 7's exact rules.
//
// Reply -> Lua (what redis.call returns): integer -> number, bulk -> string, null bulk/array
// (RESP2) -> false, RESP3 null -> nil, array -> table, status -> {ok=...}, error -> {err=...},
// and after redis.setresp(3): map -> {map={...}}, set -> {set={m=true}}, double ->
// {double=n}, boolean -> boolean, big number -> {big_number="..."}, verbatim ->
// {verbatim_string={format=..., string=...}}.
//
// Lua -> reply (what a script returns): string -> bulk, number -> integer (truncated), table ->
// error/status/double/big number/verbatim/map/set by its field, else array up to the first nil,
// true -> 1 (or RESP3 true after setresp(3)), false -> null (or RESP3 false), nil -> null.
//
// Every function here runs inside a protected Lua call (they may raise Lua errors on memory
// exhaustion).
#pragma once

#include <lua.hpp>

#include <string_view>

#include "commands/reply.h"

namespace basalt {

// Pushes one value parsed from the RESP reply `*in` (advanced past it).
void PushReplyAsLua(lua_State* L, std::string_view* in);

// Pops the value on top of the stack and appends it to `reply`. `script_resp` is the script's
// redis.setresp() version, which decides how booleans are sent.
void ReplyFromLua(lua_State* L, Reply& reply, int script_resp);

// Pushes Redis's error table {err="CODE message"}: `text` is "-CODE message" (the code is the
// first word) or a bare message, which gets the code ERR. Trailing CR/LF are trimmed.
void PushErrorTable(lua_State* L, std::string_view text);

// Set (true) in the error table of a command's error reply that redis.call/pcall returns: that
// error is already in the error statistics (Redis's name for the field).
inline constexpr const char* kErrorCountedField = "ignore_error_stats_update";

// Replies `text` as an error for the error table on top of the stack (left there): counted in
// the error statistics unless the table carries kErrorCountedField.
void ReplyErrorTable(lua_State* L, const std::string& text, Reply& reply);

// Lua number -> integer reply, as Redis's (long long) cast behaves on x86-64: out of range and
// NaN give INT64_MIN.
int64_t LuaNumberToInteger(double v);

}  // namespace basalt
