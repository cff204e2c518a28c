// Dispatcher: runs one client command from argument vector to reply.
//
// In order: look the command up, check arity, authentication and the user's ACL permissions
// (commands/acl_check.h), queue it if the client is in MULTI, answer BUSY while a script runs
// too long (src/commands/script_guard.h), hand commands flagged kCmdOffload to the offload thread
// and those flagged kCmdWaitsOnPeer (MIGRATE) to the read threads (src/commands/offload.h), take
// the locks its flags and keys call for, run it against a fresh Context, commit that Context,
// and account for it (counters, slow log). A commit failure replaces whatever the handler
// replied with the error, so a client never sees success for a write that did not land.
//
// A worker never waits for the disk on a read. A command that only reads (kCmdReadOnly, none of
// the flags that make it write, block, run alone or run elsewhere), outside MULTI, runs first
// with its Context's reads limited to memory (Context::set_memory_only). If one of them needs
// the disk, the run is thrown away before it has any effect: its Context is discarded (a read
// command writes at most a lazy expiry's deletion, which the second run makes again), its reply
// cut off, its statistics (error replies, keyspace hits) held back and dropped, its accounting
// not done. The command then goes to the read threads (commands/offload.h) and runs again there
// with ordinary reads, while its client is parked: the client's later commands wait, so its
// replies keep their order, and since every write of the worker's group was committed before
// the read ran, the read sees the client's own writes. MULTI/EXEC and scripts run as before,
// reading from disk where they must, so they stay atomic.
//
// Writes are committed in groups (WriteGroup). A worker passes its one group for every command
// it runs, and consecutive plain keyed writes, of one pipeline or of the many clients whose
// requests one turn of the worker's event loop reads, run in one Context and reach RocksDB as
// one batch, with one WAL append (and in sync mode one fsync) for all of them. The group keeps
// the keyspace lock and every grouped command's key stripes until it commits, and none of its
// replies is sent before that, so every client sees the same order of effects as without
// grouping.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"

namespace basalt {

// The uncommitted writes of one worker: see the top of this file. The worker commits it at the
// end of each turn of its event loop and before anything else runs on its thread; Dispatch()
// commits it before a command that cannot join, at 64 commands, and before waiting for a key
// stripe. A grouped command's reply stays in its client's output string until the commit.
class WriteGroup {
 public:
  // Runs after every commit with the ids of the sessions whose replies the group held, which
  // may now be sent.
  using CommitListener = std::function<void(const std::vector<uint64_t>& session_ids)>;

  explicit WriteGroup(CommitListener after_commit = nullptr)
      : after_commit_(std::move(after_commit)) {}
  WriteGroup(const WriteGroup&) = delete;
  WriteGroup& operator=(const WriteGroup&) = delete;
  ~WriteGroup();

  bool active() const { return ctx_.has_value(); }
  // Whether a key the group changed and has not committed yet is one some client waits on.
  bool TouchedWaitedKey(BlockingRegistry& blocking) const;
  // The tag (1 and up) of the worker that owns this group, which the group leaves on the
  // stripes it holds (LockTable::HolderOf); 0, the default, for none.
  void set_holder_tag(uint8_t tag) { holder_tag_ = tag; }
  // True while a reply in *out waits for this group's commit.
  bool HoldsRepliesIn(const std::string* out) const;
  // Commits the grouped commands' batch and releases their locks. If the commit fails, each
  // grouped command's reply (still in its client's output string) becomes the error.
  void Commit(ServerState& server);
  // Commits like Commit() but keeps the keyspace lock and the stripes in `keep` (sorted, all
  // held) for a new group that starts at once. The group stays active.
  void CommitKeepingLocks(ServerState& server, const std::vector<size_t>& keep);

 private:
  friend class GroupedRun;
  struct HeldReply {
    Session* session;
    std::string* out;
    size_t begin, end;  // the reply's bytes in *out
  };
  void ReplaceRepliesWithError(const Status& error);
  // Whether the group holds a stripe, by the stripe's bit: a ten-key MSET joining a group of
  // twenty had searched and shifted a sorted list of two hundred for each of its stripes.
  bool Holds(size_t stripe) const {
    return !held_bits_.empty() && (held_bits_[stripe / 64] >> (stripe % 64)) & 1;
  }
  // Records a stripe this group has just locked.
  void Hold(size_t stripe);
  // Releases one of the stripes the group holds.
  void Unlock(size_t stripe);
  // Commits the batch, settles the held replies (the error on failure) and forgets them;
  // returns the sessions that held replies. The locks stay as they are.
  std::vector<uint64_t> CommitBatch(ServerState& server);

  CommitListener after_commit_;
  std::shared_lock<WriterPreferringMutex> keyspace_lock_;
  std::vector<size_t> stripes_;       // held exclusively, in the order they were taken
  std::vector<uint64_t> held_bits_;   // stripes_ as a bit per stripe of the table
  std::vector<size_t> next_stripes_;  // those of the command joining (GroupedRun::Run)
  LockTable* table_ = nullptr;
  uint8_t holder_tag_ = 0;
  // A stripe the last commit released while another group waited for it: the next group lets
  // that one take it first (lock_table.h).
  size_t hand_off_ = LockTable::kNoStripe;
  std::optional<Context> ctx_;
  std::vector<HeldReply> replies_;
  // Replies committed by CommitKeepingLocks(), sent only once Commit() has released the locks:
  // sending is a good part of a hot key's turn, and the other worker may be waiting for it.
  std::vector<uint64_t> committed_sessions_;
  std::vector<const std::string*> committed_outs_;
};

// Runs a command from a client. Appends the reply to *out. With a `group`, a plain keyed write
// joins it (and is committed by group->Commit()); any other command commits the group first.
void Dispatch(ServerState& server, Session& session, std::vector<std::string>& argv,
              std::string* out, WriteGroup* group = nullptr);

// Accounts for a blocked command whose timeout replied for it (INFO commandstats, latency): as
// in Redis, a blocking command counts once, when it replies, not when it parks.
void AccountTimedOutBlock(ServerState& server, Session& session,
                          const std::vector<std::string>& argv);

// The tag of the worker whose write group holds every stripe that `argv` would lock, when it is
// a command that joins write groups, its first key is its second argument (as for nearly every
// one), the session may run it there, it neither blocks nor writes a key some client waits
// on, and that worker is not `self_tag`; 0 otherwise, and the command runs here.
uint8_t GroupHoldingKeysOf(ServerState& server, Session& session,
                           const std::vector<std::string>& argv, uint8_t self_tag);

// "get", or "client|list" for a container command: CLIENT LIST's cmd= field, error texts.
std::string FullCommandName(const CommandSpec& spec, const std::vector<std::string>& argv);

// Runs an already validated command inside an existing unit of work (used by EXEC). The caller
// holds the locks.
void RunInContext(ServerState& server, Session& session, const CommandSpec& spec,
                  std::vector<std::string>& argv, Reply& reply, Context& ctx, bool in_exec);

// The BUSY reply while a script runs too long; it names FUNCTION KILL when the script is a
// function, SCRIPT KILL otherwise, as Redis does.
const char* BusyScriptError(const ScriptGuard& guard);

// Checks name and arity. Returns nullptr and writes the error to *error if invalid. With the
// client's `session`, a name it sent last is not looked up again.
const CommandSpec* ResolveCommand(const std::vector<std::string>& argv, std::string* error,
                                  Session* session = nullptr);

}  // namespace basalt
