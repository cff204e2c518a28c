// RedisFollower: a replica's session with a real Redis master (live migration from Redis).
//
// Contract. MasterLink decides which kind of master it talks to from the master's answer to
// REPLSYNC: a Basalt master knows the command, a Redis master (or any other server speaking
// Redis's replication protocol) answers "-ERR unknown command". In the second case the link
// hands its socket, already authenticated with masterauth/masteruser, to RedisFollower::Run(),
// which then owns the session until it fails or the link is stopped:
//
//   1. Handshake as a Redis replica does: PING, REPLCONF listening-port <port>,
//      REPLCONF capa eof capa psync2, PSYNC ? -1. Only a full resynchronization is asked for:
//      every session, also after a dropped link, starts with a fresh copy of the data.
//   2. The RDB payload, in either form the master sends it: "$<length>" (from a file) or
//      "$EOF:<40-byte mark>" (diskless, ending with the mark), goes to a file beside the data
//      directory ("<dir>.redis-sync.rdb"). Clients keep reading the old data meanwhile.
//   3. Under the keyspace's exclusive lock every database is emptied and the file is loaded with
//      the RDB importer (types/rdb_loader.h), through the write-ahead log, so Basalt replicas of
//      this server receive it. As a loading Redis does, the server answers LOADING meanwhile,
//      to all but the commands Redis runs while loading (INFO, CLIENT, ...; the keyspace's
//      loading()), and clients see the old data or the new, never a mix. A file the importer
//      refuses leaves the data set empty and fails the session (the link retries). A newline goes
//      to the master every second meanwhile, as a loading Redis replica sends, so that the master
//      does not time the link out during a long load.
//   4. The command stream: RESP multibulk commands from the master's offset on. PING and
//      REPLCONF are handled here (REPLCONF GETACK * is answered with REPLCONF ACK <offset>);
//      every other command goes to the MasterCommandSink, which runs it as the master's client
//      (SELECT, MULTI/EXEC included) without replying. The commands of one read from the socket
//      may share commits; the offset, and what INFO and acknowledgements report, advance only
//      once they are committed. An acknowledgement goes out every second.
//      The offset counts the stream's bytes as Redis counts them, starting at the offset of
//      +FULLRESYNC, so INFO's slave_repl_offset on Basalt equals the master's
//      master_repl_offset once everything has been applied.
//
// The follower only runs on the link thread; progress() may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "repl/wire.h"
#include "types/keyspace.h"

namespace basalt {

// Runs the master's commands in the command layer, which lives above replication: the server
// hands an implementation in (commands/master_client.h). Called from the link thread only.
class MasterCommandSink {
 public:
  virtual ~MasterCommandSink() = default;
  // A new stream begins (after a full sync): database 0, no transaction open.
  virtual void Reset() = 0;
  // Runs one command as the master's client: never refused as a write on a read-only replica,
  // its reply dropped. Gives up waiting for locks once `stop` is set (the command then does
  // not run), so that stopping the link can never wait for a command that waits for the
  // caller of Stop().
  virtual void Execute(std::vector<std::string>& argv, const std::atomic<bool>& stop) = 0;
  // Commits what the commands run so far wrote: consecutive writes may share one commit, and
  // the follower calls this before it waits for input, acknowledges, or ends.
  virtual void Flush() = 0;
};

// What the server provides for following a Redis master; without a sink, a Redis master is
// refused.
struct RedisMasterHooks {
  MasterCommandSink* sink = nullptr;
  // Installs the RDB file's function libraries (RdbImportOptions::install_functions).
  std::function<Status(Context& ctx, const std::vector<std::string>& libraries)> install_functions;
};

class RedisFollower {
 public:
  struct Progress {
    std::string master_replid;
    uint64_t offset = 0;  // the master's replication offset up to which commands were applied
    bool has_offset = false;
    uint64_t sync_total_bytes = 0;  // 0 for a diskless transfer, whose size is unknown
    uint64_t sync_read_bytes = 0;
    int64_t last_io_unix_ms = 0;
  };
  // Called with true when the RDB transfer starts, with false once the stream starts.
  using SyncPhase = std::function<void(bool syncing)>;

  RedisFollower(Keyspace* keyspace, Config* config, RedisMasterHooks hooks, int listening_port,
                const std::atomic<bool>* stop);

  // One session on `sock`, which holds the authenticated connection to the master. Returns
  // when the link fails (the error) or is stopped (Busy).
  Status Run(ReplSocket* sock, const SyncPhase& phase);
  Progress progress() const;

 private:
  Status Handshake(ReplSocket* sock);
  // Consumes the newlines a master sends to keep the link alive while it prepares the RDB.
  Status SkipNewlines(ReplSocket* sock);
  Status ReceiveRdb(ReplSocket* sock, const std::string& path);
  Status ReceiveSizedRdb(ReplSocket* sock, int fd, uint64_t size);
  Status ReceiveDisklessRdb(ReplSocket* sock, int fd, const std::string& mark);
  Status LoadKeepingLinkAlive(ReplSocket* sock, const std::string& path);
  Status LoadRdb(const std::string& path);
  Status Stream(ReplSocket* sock);
  // Runs the complete commands in the socket's buffer.
  Status TakeCommands(ReplSocket* sock);
  // Commits what the sink ran and publishes `offset` as applied.
  void CommitUpTo(uint64_t offset);
  Status SendAck(ReplSocket* sock, uint64_t offset);
  void NoteRead(uint64_t bytes);

  Keyspace* keyspace_;
  Config* config_;
  RedisMasterHooks hooks_;
  int listening_port_;
  const std::atomic<bool>* stop_;
  std::vector<std::string> argv_;  // reused for each command of the stream
  int64_t last_ack_ms_ = 0;

  mutable std::mutex mu_;
  Progress progress_;  // guarded by mu_
};

// Parses one RESP multibulk command at the start of `in`: false with *used = 0 when it is not
// complete yet; an error for anything else than a well-formed multibulk (the master never sends
// inline commands) or lengths beyond `max_bulk`.
StatusOr<bool> ParseMultibulk(std::string_view in, size_t max_bulk, std::vector<std::string>* argv,
                              size_t* used);

}  // namespace basalt
