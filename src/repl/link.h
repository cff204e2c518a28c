// MasterLink: a replica's connection to its master, on a thread of its own.
//
// It connects, authenticates (masterauth), and sends REPLSYNC with its stored position. On
// "+CONTINUE" it applies the streamed batches from there; on "+FULLSYNC" it receives the
// checkpoint files into "<dir>.fullsync", swaps them in for its data (under the exclusive
// keyspace lock, so clients see the old data or the new, never a mix), records the position
// the copy ends at and tells the master to stream from there. Clients keep reading the old
// data while the files arrive.
//
// When the link fails (master restart or crash, dropped connection, timeout) it reconnects
// with exponential backoff (100 ms doubling to 5 s) and resumes from the position stored with
// the data, which the master accepts incrementally when it can and answers with a full sync
// otherwise. Every group of applied batches is acknowledged (WAIT, the master's INFO), and at
// least once a second while idle.
//
// A master that answers REPLSYNC with "-ERR unknown command" is not a Basalt server: the link
// then follows it as a Redis replica follows its master, with RedisFollower on the same
// connection (repl/redis_follower.h). The answer decides afresh at every connection, so the
// same address may change kind across restarts.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "config/config.h"
#include "repl/applier.h"
#include "repl/redis_follower.h"
#include "repl/state.h"
#include "repl/wire.h"
#include "types/keyspace.h"

namespace basalt {

// Sends AUTH with masterauth (and masteruser) when masterauth is set, as a replica does to its
// master, and as FAILOVER does to the replica it promotes.
Status AuthenticateWithMasterAuth(ReplSocket* sock, const Config& config);

// FAILOVER's hand-over: connects to the replica at host:port, authenticates as above, and sends
// REPLICAOF NO ONE; OK once it answered +OK.
Status PromoteReplicaAt(const std::string& host, int port, const Config& config,
                        int64_t timeout_ms);

struct LinkContext {
  Keyspace* keyspace = nullptr;
  Config* config = nullptr;
  BatchApplier* applier = nullptr;
  int listening_port = 0;
  std::function<std::string()> own_replid;
  // Around a full sync's data swap: stop this node's own replicas' feeders (their history
  // ends), then give the node a new replication id.
  std::function<void()> before_swap;
  std::function<void()> after_swap;
  // After the swap, once clients can run again.
  std::function<void()> data_replaced;
  // For a master that answers REPLSYNC as an unknown command: a Redis master.
  RedisMasterHooks redis;
};

class MasterLink {
 public:
  enum class State { kConnect, kConnecting, kSync, kConnected };
  struct Info {
    std::string host;
    int port = 0;
    State state = State::kConnect;
    int64_t last_io_unix_ms = 0;     // last byte from the master
    int64_t down_since_unix_ms = 0;  // 0 if the link was never up
    uint64_t sync_total_bytes = 0;
    uint64_t sync_read_bytes = 0;
    bool has_position = false;
    uint64_t applied_seq = 0;  // the last master sequence applied
    uint64_t master_latest_seq = 0;
    int64_t lag_ms = 0;
    std::string last_error;
    // The master is a Redis server (repl/redis_follower.h): applied_seq is then its
    // replication offset and master_replid its replication id.
    bool redis_master = false;
    std::string master_replid;
  };

  MasterLink(LinkContext context, std::string host, int port);
  ~MasterLink();
  void Start();
  // Asks the thread to end and joins it. Safe while holding the keyspace lock shared.
  void Stop();
  Info info() const;
  const std::string& host() const { return host_; }
  int port() const { return port_; }

 private:
  void Run();
  Status RunSession();
  Status FollowRedis(ReplSocket* sock);
  Status ReceiveCheckpoint(ReplSocket* sock, const std::string& dir);
  Status ReceiveFile(ReplSocket* sock, const std::string& dir);
  Status SwapIn(ReplSocket* sock, const std::string& dir, const std::string& master_replid);
  Status Stream(ReplSocket* sock, const std::string& master_replid);
  // Parses the complete frames in the socket's buffer into the applier.
  Status TakeFrames(ReplSocket* sock, const std::string& master_replid);
  Status CommitApplied(ReplSocket* sock, const std::string& master_replid);
  Status SendAck(ReplSocket* sock);
  void SetState(State state);

  LinkContext ctx_;
  std::string host_;
  int port_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  RedisFollower redis_;

  // The stream's position: what has been taken from frames, and what has been applied.
  uint64_t taken_next_ = 0;
  uint64_t taken_hash_ = 0;
  std::string last_batch_;  // the last batch taken, whose hash the position records
  int64_t taken_commit_ms_ = 0;
  int64_t last_ack_ms_ = 0;

  mutable std::mutex mu_;
  Info info_;                      // guarded by mu_
  int64_t applied_commit_ms_ = 0;  // guarded by mu_: master commit time of the last applied batch
  int64_t behind_since_ms_ = 0;    // guarded by mu_: when the replica learned it was behind
};

}  // namespace basalt
