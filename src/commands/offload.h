// CommandOffloader: threads that run commands for the workers and deliver their replies back,
// so that a command that would hold up a worker's event loop does not. The server has two:
//
// - one thread for the commands flagged kCmdOffload (EVAL and friends). A script holds the
//   keyspace's exclusive lock for its whole run. If it ran on the worker that received it, that
//   worker's other clients could not even be told `BUSY`, nor send SCRIPT KILL. One thread is
//   enough: scripts serialize on the exclusive lock anyway.
// - `read-threads` threads for reads that need the disk. A worker runs a read command first with
//   its reads limited to memory; if one of them needs the disk the attempt is thrown away and
//   the command comes here, where it waits for the disk without stopping the worker, and the
//   many such threads keep many reads in flight (commands/dispatcher.h). MIGRATE (flag
//   kCmdWaitsOnPeer) runs here too, so that its wait on the target server holds no worker.
//
// Either way the worker parks the client (its later commands stay buffered, as for a blocked
// client, so its replies stay in order), the job runs here through the ordinary Dispatch() path
// (locks, Context, commit, accounting) against a copy of the client's session, and the reply
// goes back through the session's deliver_hook, after which the worker resumes the client.
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
  CommandOffloader(ServerState* server, size_t threads) : server_(server), threads_(threads) {}
  ~CommandOffloader() { Stop(); }

  // Starts the threads.
  void Start();
  // Queues the command for `session` (copied: the job never touches the live session).
  void Submit(Session& session, std::vector<std::string> argv);
  // Finishes the jobs already queued (their clients get their replies or are gone) and joins
  // the threads.
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
    // The client's session, told the sequence number of the job's writes for a later WAIT
    // (set before the reply is delivered, so the client's next command sees it).
    std::weak_ptr<Session> origin;
    // Closes the client: its reply was cut at max-reply-size, which the job's own Session
    // learns, not the client's.
    std::function<void()> close;
  };
  void Loop();
  void Run(Job& job);

  ServerState* server_;
  size_t threads_;
  std::vector<std::thread> running_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
};

}  // namespace basalt
