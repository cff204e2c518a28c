// MasterClient: the client through which a replica runs the commands a Redis master streams to
// it (repl/redis_follower.h), as Redis runs them through its master client.
//
// Consecutive keyed writes run in one WriteGroup (commands/dispatcher.h) until Flush(), which
// lets the replica keep up with a master's write rate. Its session is flagged `from_master`: the
// dispatcher neither refuses its writes as a read-only replica's nor checks them against ACLs or
// maxmemory, since the master already accepted them. Commands go through the ordinary dispatcher
// one at a time (each committed before the next), so SELECT switches this client's database and
// MULTI ... EXEC runs as one atomic unit. Replies are dropped; an error reply is logged (the first
// of a kind at warning level), since it means the replica's data may now differ from the master's.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "commands/dispatcher.h"
#include "commands/server_state.h"
#include "commands/session.h"
#include "repl/redis_follower.h"

namespace basalt {

class MasterClient : public MasterCommandSink {
 public:
  explicit MasterClient(ServerState* server);
  void Reset() override;
  void Execute(std::vector<std::string>& argv, const std::atomic<bool>& stop) override;
  void Flush() override;
  uint64_t errors() const { return errors_.load(); }

 private:
  ServerState* server_;
  std::shared_ptr<Session> session_;
  // Consecutive plain writes share a commit, as a worker groups its clients' writes; their
  // replies stay in out_ until Flush().
  WriteGroup group_;
  std::string out_;
  std::atomic<uint64_t> errors_{0};
};

}  // namespace basalt
