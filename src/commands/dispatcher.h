// Dispatcher: runs one client command from argument vector to reply.
//
// In order: look the command up, check arity, authentication and the user's ACL permissions
// (commands/acl_check.h), queue it if the client is in MULTI, answer BUSY while a script runs
// too long (src/commands/script_guard.h), hand commands flagged kCmdOffload to the offload thread
// (src/commands/offload.h), take the locks its flags and keys call for, run it against a fresh
// Context, commit that Context, and account for it (counters, slow log). A commit failure
// replaces whatever the handler replied with the error, so a client never sees success for a
// write that did not land.
#pragma once

#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"

namespace basalt {

// Runs a command from a client. Appends the reply to *out.
void Dispatch(ServerState& server, Session& session, std::vector<std::string>& argv,
              std::string* out);

// Runs an already validated command inside an existing unit of work (used by EXEC). The caller
// holds the locks.
void RunInContext(ServerState& server, Session& session, const CommandSpec& spec,
                  std::vector<std::string>& argv, Reply& reply, Context& ctx, bool in_exec);

extern const char* const kBusyScriptError;

// Checks name and arity. Returns nullptr and writes the error to *error if invalid.
const CommandSpec* ResolveCommand(const std::vector<std::string>& argv, std::string* error);

}  // namespace basalt
