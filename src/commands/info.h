// INFO: renders the server's sections as Redis formats them ("# Section", "key:value" lines).
#pragma once

#include <string>
#include <vector>

#include "commands/server_state.h"

namespace basalt {

// `argv` is the INFO command line: no section means the default set; "all"/"everything" add
// commandstats; otherwise the named sections (case-insensitive).
std::string BuildInfo(ServerState& server, const std::vector<std::string>& argv);

}  // namespace basalt
