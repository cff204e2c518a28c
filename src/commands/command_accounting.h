// Command accounting: what the dispatcher records about each command it ran or refused, for
// INFO commandstats and latencystats, SLOWLOG, the LATENCY monitor and INFO's
// total_commands_processed, as Redis's call() and rejectCommand() record them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"

namespace basalt {

// Marks where the command about to run starts, so that Account() can tell whether it failed
// (an error reply since the mark).
void MarkCommandStart();

// Records a command that ran from start_ticks to end_ticks (CommandClock ticks): its calls,
// time, failure, latency histogram (unless `record_latency` is false), the slow log and the
// latency monitor. A command that parked its client is accounted when it replies.
void Account(ServerState& server, Session& session, const CommandSpec& spec,
             const std::vector<std::string>& argv, uint64_t start_ticks, uint64_t end_ticks,
             bool record_latency = true);

// A command refused before it ran (arity, ACL, BUSY, READONLY, MISCONF, ...): Redis's
// rejected_calls.
void CountRejected(ServerState& server, const CommandSpec& spec,
                   const std::vector<std::string>& argv);

// After a lookup failed: a known command (or subcommand) called with the wrong number of
// arguments counts as rejected; an unknown name has no counters, as in Redis.
void CountRejectedLookup(ServerState& server, const std::vector<std::string>& argv,
                         const std::string& error);

}  // namespace basalt
