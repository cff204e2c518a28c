// Worker: one thread, one libevent base, the connections assigned to it.
//
// A client's writes to a key that another worker's write group holds are not waited for: the
// connection hands them, up to kMaxDelegatedCommands in a row, to that worker (Delegate), which
// runs them in its own group and sends the replies back through the session's deliver_hook, as
// the offload thread does. Were it to wait, the worker's other clients would wait too, with their
// pipelines unserved while the hot key's holder runs out of work (docs/benchmarks.md, "Hot keys on
// two workers").
// A client whose writes keep being handed to one worker moves there (Receive): every hand-over
// costs two wake-ups across threads, and a hot key's clients served by one worker run faster
// than the same clients split between two. Its session's hooks still post to the worker that
// created it, which forwards what it no longer serves (MovedClients).
//
// The worker owns one WriteGroup (commands/dispatcher.h) for all its connections: the plain
// keyed writes that one turn of its event loop reads, from one pipeline or from many clients,
// are committed as one batch at the end of the turn, and their replies are sent after that
// commit, as Redis sends the replies of one turn before it sleeps. Everything else that runs on
// this thread (queued wake-ups, deliveries, closes, timers) commits the group first, since it
// may take the locks the group holds.
//
// Commands that read other clients' subscriptions (PUBLISH, PUBSUB) wait until the other
// workers have run the input they held when the command was read (AwaitPeersInput), as one
// Redis thread would have run an earlier SUBSCRIBE first: a worker answers such a request at
// the end of the turn after the one that took it.
#pragma once

#include <event2/event.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "commands/dispatcher.h"
#include "commands/server_state.h"

namespace basalt {

class Connection;
class Worker;

// Which worker serves each client that moved from one worker to another. A worker that is asked
// to act for a client it does not serve (a reply, a wake-up, a close, messages) forwards the
// request to the worker this names.
class MovedClients {
 public:
  // Runs `hand_over` (which queues the client at `to`) and records the move in one step: a
  // request that finds the client gone from its old worker finds it queued at `to`.
  template <typename HandOver>
  void Move(uint64_t id, Worker* to, HandOver hand_over) {
    std::lock_guard<std::mutex> lock(mu_);
    hand_over();
    where_[id] = to;
  }
  // nullptr for a client that never moved, or is gone.
  Worker* Find(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = where_.find(id);
    return it == where_.end() ? nullptr : it->second;
  }
  void Forget(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    where_.erase(id);
  }

 private:
  std::mutex mu_;
  std::unordered_map<uint64_t, Worker*> where_;
};

class Worker {
 public:
  explicit Worker(ServerState* state);
  ~Worker();

  // Tells the worker about all the server's workers (itself included), whose tags are their
  // positions plus one, and where moved clients are. Called before Start().
  void SetPeers(std::vector<Worker*> peers, uint8_t tag, MovedClients* moved);
  void Start();
  uint8_t tag() const { return tag_; }
  // The worker with that tag; nullptr for none.
  Worker* PeerByTag(uint8_t tag) const;
  bool HasPeers() const { return peers_.size() > 1; }
  // Runs `commands` of the client (whose connection waits for the reply, awaiting_reply) in
  // this worker's group, and delivers their replies through the session's deliver_hook once
  // they are committed. Safe from any thread.
  void Delegate(std::shared_ptr<Session> session, std::vector<std::vector<std::string>> commands);
  static constexpr size_t kMaxDelegatedCommands = 64;
  // Hands one of this worker's connections, idle and detached from this worker's loop
  // (Connection::LeaveLoop), to `to`, which serves it from its next turn on.
  void MoveConnection(uint64_t id, Worker* to);
  MovedClients* moved_clients() const { return moved_; }
  // Safe from any thread.
  void Adopt(int fd, std::string peer, std::string local);
  void CloseClient(uint64_t id);
  // Runs the client's parked command again; with a ticket when it is the client's turn to be
  // served after a write (commands/blocking.h).
  void WakeClient(uint64_t id, std::shared_ptr<ServeTicket> ticket = nullptr);
  // CLIENT UNBLOCK: ends the client's parked command (timeout reply, or the UNBLOCKED error).
  void UnblockClient(uint64_t id, bool error);
  void DeliverReply(uint64_t id, std::string reply);
  // Asks the client's connection to write the pub/sub messages queued for it.
  void DeliverMessages(uint64_t id);
  // A worker this one asked in catch-up round `round` ran its input (AwaitPeersInput).
  void PeerCaughtUp(uint64_t round);
  void Stop();

  // Called by a connection when it is finished.
  void Forget(uint64_t id);
  event_base* base() const { return base_; }
  ServerState* state() const { return state_; }
  WriteGroup& group() { return group_; }
  // Commits the group (if it holds anything) and sends the replies it held.
  void CommitGroup() { group_.Commit(*state_); }
  // Called by a connection whose socket became readable: the turn found input. Ends the turn
  // after kMaxInputsPerTurn of them.
  void NoteInput();
  // Called before a callback reads or writes client sockets (AwaitPeersInput looks at it).
  void NoteBusy() { busy_.store(true); }
  // Runs the client's buffered commands once this turn's reads are done (RunReadClients).
  void RunAfterReads(uint64_t id) { read_clients_.push_back(id); }

  // Input the other workers hold, for commands that read other clients' subscriptions
  // (Session::await_peers_hook). A connection registers its socket while it is on this
  // worker's loop; an epoll set of them, only looked at, tells whether any has unread bytes.
  void WatchInput(int fd);
  void UnwatchInput(int fd);
  // Holds client `id`'s command until every worker that may hold input it has not run (unread
  // bytes on a client socket; a turn under way, which may have read bytes it has not run yet
  // or be writing a socket whose arriving bytes the kernel keeps aside meanwhile; clients given
  // to it and not yet read, for which this worker counts too) has finished a turn that ran it;
  // then calls the client's Connection::PeerCaughtUp. False when none holds any: the command
  // runs now. The clients of one turn share one round of requests, as their commands were all
  // read before the first looked. A client still in the listening socket's queue is not seen.
  bool AwaitPeersInput(uint64_t id);

 private:
  // Changes the queues under mu_ (`change`), then wakes the loop to drain them (DrainQueue).
  template <typename Change>
  void Post(Change change) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      change();
    }
    event_active(notify_, EV_READ, 0);
  }
  static void OnNotify(evutil_socket_t, short, void* arg);
  static void OnTick(evutil_socket_t, short, void* arg);
  void DrainQueue();
  void Run();
  void SendHeldReplies(const std::vector<uint64_t>& session_ids);
  void RunReadClients();
  // Tells the workers whose catch-up requests the last turn took that their wait is over.
  void AnswerCatchUps();
  // Runs the commands other workers delegated (Delegate), in this turn's group.
  void RunDelegated();
  // Sends a delegated client's replies to its own worker once they are all run and committed.
  void DeliverDelegated(uint64_t session_id);
  // Adds a connection to this worker's loop.
  void Serve(std::unique_ptr<Connection> conn);
  // Takes over a connection another worker moved here (MoveConnection).
  void Receive(std::unique_ptr<Connection> conn);
  // The worker serving a client this one does not serve, if it moved (this one, if it is on
  // its way here); nullptr otherwise.
  Worker* ServerOf(uint64_t id);
  // Runs `serve` on the client's connection if this worker serves it, else `forward` on the
  // worker that does, if the client moved.
  template <typename ServeFn, typename ForwardFn>
  void ServeOrForward(uint64_t id, ServeFn serve, ForwardFn forward) {
    auto it = connections_.find(id);
    if (it != connections_.end()) return serve(*it->second);
    if (Worker* w = ServerOf(id)) forward(*w);
  }

  ServerState* state_;
  event_base* base_;
  event* notify_;
  event* tick_;
  std::thread thread_;

  struct Pending {
    int fd;
    std::string peer;
    std::string local;
  };
  std::mutex mu_;
  std::vector<Pending> adopt_queue_;
  std::vector<uint64_t> close_queue_;
  std::vector<std::pair<uint64_t, std::shared_ptr<ServeTicket>>> wake_queue_;
  std::vector<std::pair<uint64_t, bool>> unblock_queue_;
  std::vector<std::pair<uint64_t, std::string>> deliver_queue_;
  std::deque<uint64_t> message_queue_;  // each client at most once (ClientOutput coalesces)
  struct DelegatedCommands {
    std::shared_ptr<Session> session;
    std::vector<std::vector<std::string>> commands;
  };
  std::vector<DelegatedCommands> delegate_queue_;
  std::vector<std::unique_ptr<Connection>> receive_queue_;
  // Catch-up requests: (asking worker, its round) to answer at the end of a turn.
  std::vector<std::pair<Worker*, uint64_t>> catch_up_queue_;
  std::vector<uint64_t> caught_up_queue_;  // this worker's rounds that a worker answered
  bool stopping_ = false;
  bool exit_loop_ = false;  // set on the worker's thread once it has stopped its connections

  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint64_t inputs_ = 0;  // readable-socket callbacks run so far (NoteInput)
  uint64_t turn_start_inputs_ = 0;
  std::vector<uint64_t> read_clients_;  // this turn's reads, whose commands have not run
  int input_probe_ = -1;                // epoll set of the client sockets (WatchInput)
  // Set by a turn's callbacks before they read or write a client socket, cleared once the turn
  // has run what it read: a peer that finds a socket drained, or its bytes still held in the
  // kernel's backlog because this thread is writing that socket, finds this set.
  std::atomic<bool> busy_{false};
  std::atomic<int> adopting_{0};  // clients handed over by Adopt and not yet read
  // Catch-up requests this turn took, and those the last turn took, which are answered once
  // this turn has run its reads and committed.
  std::vector<std::pair<Worker*, uint64_t>> catch_up_taken_, catch_up_waiters_;
  // This worker's catch-up rounds: the answers still awaited and the clients held.
  struct CatchUpRound {
    int awaited = 0;
    std::vector<uint64_t> clients;
  };
  std::unordered_map<uint64_t, CatchUpRound> catch_up_rounds_;
  uint64_t last_round_ = 0;
  bool turn_looked_at_peers_ = false;  // this turn's round (or none) is decided
  uint64_t turn_round_ = 0;            // 0: no worker held input when this turn looked
  std::vector<Worker*> peers_;
  uint8_t tag_ = 0;
  MovedClients* moved_ = nullptr;
  // Delegated clients whose replies are being built or wait for the group's commit; the group
  // points into `out`, so this is declared before it.
  struct DelegatedClient {
    std::shared_ptr<Session> session;
    std::string out;
    bool complete = false;  // every command has run
  };
  std::unordered_map<uint64_t, std::unique_ptr<DelegatedClient>> delegated_;
  WriteGroup group_;  // committed before any connection in connections_ is destroyed
};

}  // namespace basalt
