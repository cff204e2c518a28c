// Failover: FAILOVER's coordinated hand-over from this master to one of its replicas, as Redis
// 7.2 does it (replication.c, failoverCommand and updateFailoverStatus).
//
// Start() holds client writes (ClientPause's failover hold) and a thread of its own waits until
// a replica (the one TO names, or any) has acknowledged every write this server committed. It
// then promotes that replica (REPLICAOF NO ONE, sent to it with masterauth) and makes this server
// its replica; the held clients run their writes next and get READONLY, as in Redis. TIMEOUT
// ends the wait with an abort, or with FORCE (and TO) hands over to the target anyway. ABORT
// ends a wait. Whatever the outcome, the hold is released and the state is back to
// no-failover; INFO's master_failover_state shows the state meanwhile.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "commands/client_pause.h"
#include "common/status.h"
#include "config/config.h"
#include "repl/replication.h"

namespace basalt {

class Failover {
 public:
  struct Request {
    std::string host;  // empty: the first replica that catches up
    int port = 0;
    int64_t timeout_ms = 0;  // 0: wait until it succeeds or is aborted
    bool force = false;
  };

  Failover(ReplicationManager* replication, ClientPause* pause, Config* config)
      : replication_(replication), pause_(pause), config_(config) {}
  ~Failover() { Stop(); }

  // FAILOVER's checks, with Redis's error texts, then the wait begins and OK is returned.
  Status Start(Request request);
  // FAILOVER ABORT.
  Status Abort();
  // Ends a running failover (shutdown).
  void Stop();

  bool running() const { return state_.load() != kNoFailover; }
  // "no-failover", "waiting-for-sync" or "failover-in-progress".
  const char* state_name() const;

 private:
  enum State : int { kNoFailover, kWaitingForSync, kInProgress };

  void Run(Request request);
  // The replica to hand over to, once it acknowledged everything: the target, or any.
  bool FindCaughtUpReplica(const Request& request, std::string* host, int* port) const;
  void HandOver(const std::string& host, int port);
  void Finish();

  ReplicationManager* replication_;
  ClientPause* pause_;
  Config* config_;
  std::atomic<int> state_{kNoFailover};
  std::mutex mu_;  // guards thread_ and abort_
  std::condition_variable cv_;
  bool abort_ = false;
  std::thread thread_;
};

}  // namespace basalt
