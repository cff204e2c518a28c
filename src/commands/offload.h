// CommandOffloader: one thread that runs the commands flagged kCmdOffload (EVAL and friends) for
// the workers, so that a long script never freezes a worker's event loop.
//
// Why: a script holds the keyspace's exclusive lock for its whole run. If it ran on the worker
// that received it, that worker's other clients could not even be told `BUSY`, nor send
// SCRIPT KILL. Instead the worker parks the client (its later commands stay buffered, as for a
// blocked client), the job runs here through the ordinary Dispatch() path (locks, Context,
// commit, accounting) against a copy of the client's session, and the reply goes back through
// the session's deliver_hook, after which the worker resumes the client. One thread is enough:
// scripts serialize on the exclusive lock anyway.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "commands/session.h"

namespace basalt {

struct ServerState;

class CommandOffloader {
 public:
  explicit CommandOffloader(ServerState* server) : server_(server) {}
  ~CommandOffloader() { Stop(); }

  void Start();
  // Queues the command for `session` (copied: the job never touches the live session).
  void Submit(const Session& session, std::vector<std::string> argv);
  // Finishes the jobs already queued (their clients get their replies or are gone) and joins.
  void Stop();

 private:
  struct Job {
    uint64_t id;
    int db;
    int resp;
    std::string addr;
    std::string name;
    std::string user_name;    // the ACL user the command (and a script's redis.call) runs as
    uint32_t tracking_flags;  // client-side caching: a script's reads are the client's
    std::vector<std::string> argv;
    std::function<void(std::string)> deliver;
    // Closes the client: its reply was cut at max-reply-size, which the job's own Session
    // learns, not the client's.
    std::function<void()> close;
  };
  void Loop();
  void Run(Job& job);

  ServerState* server_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
};

}  // namespace basalt
