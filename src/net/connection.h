// Connection: one client socket on a worker thread.
//
// Reads whatever arrived (with recv, up to 256 KiB per wake-up), lets the RespReader cut it into
// commands, runs each through the dispatcher and writes all replies of one read in a single
// write, which is what makes pipelining cheap. The socket's reading is the connection's own
// event; its bufferevent only writes what the socket did not take at once. Replies of writes in the
// worker's group wait in out_ until the group commits (net/worker.h), then go out through
// SendHeldReplies(). A protocol error gets its "-ERR Protocol error: ..." reply and closes this
// connection only. Pub/sub messages published on other threads arrive through the session's
// ClientOutput and the worker (DeliverMessages), never by another thread writing here. Replies and
// messages not yet written count against client-output-buffer-limit.
#pragma once

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <memory>
#include <string>

#include "commands/dispatcher.h"
#include "commands/server_state.h"
#include "net/resp_reader.h"

namespace basalt {

class Worker;

class Connection {
 public:
  Connection(int fd, std::shared_ptr<Session> session);
  ~Connection();

  // Joins `worker`'s loop: at the start, and again on the worker it moved to.
  void Attach(Worker* worker);
  // Closes now (CLIENT KILL, idle timeout, server stop).
  void Close();
  // Server stop: hands the replies already computed to the socket without blocking, so a
  // client mid-pipeline gets every reply the kernel can take before the connection closes.
  void FlushBeforeShutdown();
  // Runs the parked blocking command again after a write to one of its keys; for a client held
  // by CLIENT PAUSE, runs the held command if the pause no longer covers it. A ticket marks the
  // client's turn to be served; it is given back (served or not) before later commands run.
  void RetryBlocked(std::shared_ptr<ServeTicket> ticket = nullptr);
  // CLIENT UNBLOCK: ends the parked command with its timeout reply, or with the UNBLOCKED error.
  void EndBlock(bool error);
  // Sends the reply of the command the offload thread ran for this client, then resumes it.
  void DeliverOffloaded(std::string reply);
  // Writes the pub/sub messages other threads queued for this client.
  void DeliverMessages();
  // Reads what the client sent before the connection joined the loop, as a readable socket is.
  void ReadArrived();
  // The workers AwaitPeers waited for have run their input: the held command runs and the
  // client resumes.
  void PeerCaughtUp();
  // Sends the replies that waited for the worker's write group to commit.
  void SendHeldReplies() {
    if (!awaiting_served_) Flush(out_);
  }
  // Runs the commands the last read buffered (the worker calls it once the turn's reads are
  // done), unless the client is parked, waiting for a script or paused.
  void RunReadInput();
  Session& session() { return *session_; }

 private:
  static void OnReadable(evutil_socket_t fd, short, void* arg);
  static void OnWrite(bufferevent* bev, void* arg);
  static void OnEvent(bufferevent* bev, short events, void* arg);
  static void OnBlockTimeout(evutil_socket_t, short, void* arg);
  static void OnPauseTimer(evutil_socket_t, short, void* arg);
  // Keeps `argv` (and all input after it) until CLIENT PAUSE no longer covers it.
  void HoldForPause(std::vector<std::string> argv);
  void ResumeFromPause();
  // Fires ResumeFromPause() when the current pause ends.
  void ArmPauseTimer();
  static void OnOutputChanged(evbuffer* buffer, const evbuffer_cb_info* info, void* arg);
  // Reads the socket and asks the worker to run the commands after the turn's other reads.
  void HandleInput();
  // Reads what the socket holds into the RespReader; returns the bytes read. Sets *peer_gone
  // if the socket reached its end (or failed) before any byte was read.
  size_t ReadSocket(bool* peer_gone);
  void StopReading();
  void ResumeReading();
  // Runs every complete buffered command until input runs out, the client blocks or closes.
  void ProcessCommands();
  // Runs one command, dropping its reply while CLIENT REPLY OFF or SKIP silences it.
  // Runs one command while clients are parked. If it wrote a key they wait on, it commits at
  // once, and this client's later commands wait (true) until the waiters that the write woke
  // were served, as Redis serves them between one command and the next.
  bool DispatchServingWaiters(std::vector<std::string>& argv, WriteGroup& group);
  void DispatchHonouringReplyMode(std::vector<std::string>& argv, WriteGroup& group);
  // Starts loading the metadata cache slots and lock stripes of the keys of `first` (the first
  // command of a read, just parsed) and of the commands received after it, before it runs.
  void PrefetchPipelinedKeys(const std::vector<std::string>& first);
  // If `argv` writes only keys that another worker's write group holds, hands it, and the
  // commands after it that do the same, to that worker (Worker::Delegate) and returns true.
  bool DelegateIfHeldElsewhere(std::vector<std::string>& argv, const RespReader::Limits& limits);
  void AfterCommands(std::string& out);
  // Session::await_peers_hook: holds `argv` while other workers hold input received before
  // it. A command from the same read as one that already waited runs at once.
  bool AwaitPeers(std::vector<std::string>& argv);
  void ArmBlockTimer();
  void Flush(std::string& out);
  // Closes the client if its unsent output passed client-output-buffer-limit.
  void EnforceOutputLimit();
  // Frees what ties the connection to its worker's loop; the socket stays open.
  void LeaveLoop();
  // Gives the socket to the session's take_socket (REPLSYNC) and destroys this connection.
  void HandOver();
  // Whether the client may move to another worker now: nothing of it is left to write or
  // waits for anything on this one.
  bool Movable();
  // Leaves this worker's loop (the socket stays open) and moves to move_to_. The connection is
  // the other worker's once this returns: nothing may touch it after.
  void Move();

  Worker* worker_ = nullptr;
  const int fd_;
  bufferevent* bev_ = nullptr;   // writes only; the connection closes the socket
  event* read_event_ = nullptr;  // the socket is readable
  std::shared_ptr<Session> session_;
  RespReader reader_;
  std::string out_;        // replies not yet written, held while the worker's write group holds any
  std::string discarded_;  // replies CLIENT REPLY OFF or SKIP silences
  // The silenced command parked or went to the offload thread: its later reply is dropped too.
  bool drop_deferred_reply_ = false;
  // This client's write woke parked clients: its next command and its replies wait until they
  // were served (DispatchServingWaiters).
  bool awaiting_served_ = false;
  bool closing_ = false;       // waiting for the last reply to drain
  bool handing_over_ = false;  // waiting for the last reply to drain before HandOver()
  bool paused_ = false;        // too much output waiting: no commands run until it drains
  event* block_timer_ = nullptr;
  // A command CLIENT PAUSE holds; its timer fires when the pause ends.
  bool held_for_pause_ = false;
  std::vector<std::string> held_argv_;
  event* pause_timer_ = nullptr;
  evbuffer_cb_entry* output_watch_ = nullptr;  // keeps session().output_buffer_bytes current
  // Hand-overs in a row (DelegateIfHeldElsewhere) to one worker, which the client moves to at
  // worker-move-hand-overs.
  Worker* handed_to_ = nullptr;
  int64_t hand_overs_in_a_row_ = 0;
  Worker* move_to_ = nullptr;                      // set when ProcessCommands is to end with Move()
  uint64_t reads_ = 0;                             // socket reads that brought bytes
  uint64_t peers_caught_up_at_read_ = UINT64_MAX;  // reads_ when AwaitPeers last looked
  bool held_for_peers_ = false;                    // AwaitPeers holds peers_held_argv_
  std::vector<std::string> peers_held_argv_;
  bool running_after_peers_ = false;
};

}  // namespace basalt
