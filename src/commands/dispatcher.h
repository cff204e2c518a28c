// Dispatcher: runs one client command from argument vector to reply.
//
// In order: look the command up, check arity, authentication and the user's ACL permissions
// (commands/acl_check.h), queue it if the client is in MULTI, answer BUSY while a script runs
// too long (src/commands/script_guard.h), hand commands flagged kCmdOffload to the offload thread
// (src/commands/offload.h), take the locks its flags and keys call for, run it against a fresh
// Context, commit that Context, and account for it (counters, slow log). A commit failure
// replaces whatever the handler replied with the error, so a client never sees success for a
// write that did not land.
//
// Pipelined writes are committed in groups (WriteGroup): the connection passes one group for
// the commands it takes from one read of its socket, and consecutive plain keyed writes among
// them run in one Context and reach RocksDB as one batch, with one WAL append (and in sync mode
// one fsync) for all of them. The group keeps the keyspace lock and every grouped command's key
// stripes until it commits, and the connection sends no reply before that, so other clients see
// the same order of effects as without grouping.
#pragma once

#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"

namespace basalt {

// The uncommitted writes of one pipeline: see the top of this file. Lives for one pass of the
// connection over its input, which calls Commit() before sending any reply.
class WriteGroup {
 public:
  WriteGroup() = default;
  WriteGroup(const WriteGroup&) = delete;
  WriteGroup& operator=(const WriteGroup&) = delete;
  ~WriteGroup();

  bool active() const { return ctx_.has_value(); }
  // Commits the grouped commands' batch and releases their locks. If the commit fails, each
  // grouped command's reply in *out (which must still hold them) becomes the error.
  void Commit(ServerState& server, Session& session, std::string* out);

 private:
  friend class GroupedRun;
  std::shared_lock<WriterPreferringMutex> keyspace_lock_;
  std::vector<size_t> stripes_;  // held exclusively, sorted
  LockTable* table_ = nullptr;
  std::optional<Context> ctx_;
  std::vector<std::pair<size_t, size_t>> reply_spans_;  // each grouped reply's [begin, end)
};

// Runs a command from a client. Appends the reply to *out. With a `group`, a plain keyed write
// joins it (and is committed by group->Commit()); any other command commits the group first.
void Dispatch(ServerState& server, Session& session, std::vector<std::string>& argv,
              std::string* out, WriteGroup* group = nullptr);

// Runs an already validated command inside an existing unit of work (used by EXEC). The caller
// holds the locks.
void RunInContext(ServerState& server, Session& session, const CommandSpec& spec,
                  std::vector<std::string>& argv, Reply& reply, Context& ctx, bool in_exec);

extern const char* const kBusyScriptError;

// Checks name and arity. Returns nullptr and writes the error to *error if invalid.
const CommandSpec* ResolveCommand(const std::vector<std::string>& argv, std::string* error);

}  // namespace basalt
