// Admission: the checks between resolving a command and queueing or running it, as Redis 7.2's
// processCommand makes them: authentication, ACL, the RESP2 subscribed context, MULTI
// restrictions, min-replicas-to-write, a read-only replica, replica-serve-stale-data, a load
// in progress, a failed disk and maxmemory. A refusal inside MULTI dooms the transaction; a refused
// EXEC discards it, naming the reason (Reject). EXEC is judged by the commands it queued.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "commands/command_table.h"
#include "commands/reply.h"
#include "commands/server_state.h"
#include "commands/session.h"

namespace basalt {

inline constexpr const char* kReadOnlyError =
    "READONLY You can't write against a read only replica.";
inline constexpr const char* kNoReplicasError = "NOREPLICAS Not enough good replicas to write.";
inline constexpr const char* kLoadingError = "LOADING Redis is loading the dataset in memory";

// False when a check refused the command; the refusal is already in `reply`.
bool Admitted(ServerState& server, Session& session, const CommandSpec& spec,
              const std::vector<std::string>& argv, Reply& reply);

// Refuses the command with `error`, as Redis's rejectCommand does (see the top).
void Reject(ServerState& server, Session& session, const CommandSpec& spec, Reply& reply,
            std::string_view error);

// Whether this call runs while a load holds the keyspace (Keyspace::loading()): Redis flags it
// `loading`, and it runs without the keyspace lock, touching no keys and writing nothing (INFO,
// CLIENT, CONFIG, MULTI, RESET, ...). Redis runs a few more while loading (PUBLISH, DEBUG,
// EXEC); Basalt answers them LOADING, since they need the lock the load holds.
bool RunsWhileLoading(const CommandSpec& spec, const std::vector<std::string>& argv);

// Whether `spec` is a write this server refuses from `session` as a read-only replica (the
// master's own client writes).
bool RejectedAsReplica(const ServerState& server, const Session& session, const CommandSpec& spec);

// min-replicas-to-write: whether this master has fewer good replicas than a write needs now.
bool LacksGoodReplicas(const ServerState& server);

}  // namespace basalt
