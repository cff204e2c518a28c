// Transaction state helpers shared with the connection commands (RESET) and the network layer
// (a closing connection drops its watches).
#pragma once

#include "commands/server_state.h"

namespace basalt {

void UnwatchAll(ServerState& server, Session& session);
// Leaves MULTI (discarding the queue) and drops all watches.
void ResetTransaction(ServerState& server, Session& session);

}  // namespace basalt
