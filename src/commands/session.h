// Session: the state of one client connection that commands read and change (selected
// database, protocol version, authentication, MULTI queue, WATCHed keys), and ClientRegistry,
// the list of all sessions behind CLIENT LIST/KILL and INFO clients.
//
// The network layer owns the socket; it gives each Session a way to be closed from another
// thread (`close_hook`) and keeps the buffer sizes that CLIENT LIST reports up to date. Sessions
// are always owned by shared_ptr: the pub/sub registry holds subscribers that way, so a
// publisher on another thread never sees a session destroyed under it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commands/pubsub_client.h"
#include "security/acl_user.h"
#include "types/watch_registry.h"

namespace basalt {

class Reply;
class ServeTicket;
struct CommandSpec;

struct WatchedKey {
  int db;
  uint8_t physical_db;
  std::string key;
  bool alive_at_watch;  // a key that was live when watched and expired since aborts EXEC
};

// What a parked blocking command is waiting for.
struct BlockState {
  bool active = false;
  std::vector<std::string> argv;              // the command to run again when woken
  int64_t deadline_ms = 0;                    // absolute Unix ms; 0 = wait forever
  bool timeout_replies_null_array = true;     // else a null bulk string
  std::function<void(Reply&)> timeout_reply;  // if set, replaces the null reply (WAIT)
};

struct Session : std::enable_shared_from_this<Session> {
  uint64_t id = 0;
  std::string name;
  std::string addr;   // peer "ip:port"
  std::string laddr;  // local "ip:port"
  int fd = -1;
  std::atomic<int> db{0};
  std::atomic<int> resp{2};
  bool authenticated = false;
  // ACL: the user this connection runs as. `user_name` is written by the session's own thread
  // and read by others under info_mu (CLIENT LIST, disconnecting a deleted user's clients);
  // `acl_user` is that thread's snapshot of the user, re-read when `acl_epoch` falls behind
  // the store's (commands/acl_check.h).
  std::string user_name = "default";
  std::shared_ptr<const AclUser> acl_user;
  uint64_t acl_epoch = 0;
  int64_t created_ms = 0;
  std::atomic<int64_t> last_interaction_ms{0};
  std::string last_command = "NULL";
  // Guards `name`, `user_name` and `last_command`, which CLIENT LIST reads from other threads.
  mutable std::mutex info_mu;
  // The command `last_command` names, unless it has subcommands (only the client's own thread
  // reads this): a pipeline of one command sets the name once.
  const CommandSpec* last_command_spec = nullptr;
  // The name this client last sent a known command by, as it spelled it, and that command
  // (only the client's own thread uses these): see ResolveCommand.
  std::string last_name_sent;
  const CommandSpec* last_spec_found = nullptr;

  // MULTI/EXEC
  bool in_multi = false;
  bool multi_failed = false;    // a command was rejected while queuing: EXEC aborts
  bool queued_denyoom = false;  // a queued command may grow the data set: EXEC is one then
  std::vector<std::vector<std::string>> queued;
  std::shared_ptr<WatchState> watch = std::make_shared<WatchState>();
  std::vector<WatchedKey> watched;

  // Set by QUIT and by protocol errors: close once the pending reply is written.
  bool close_after_reply = false;
  // Set by a command that takes the socket over (a replica's REPLSYNC): once the pending
  // replies are written the connection stops serving commands and hands its socket to this
  // function, which then owns it.
  std::function<void(int fd)> take_socket;
  // REPLCONF rdb-only 1 (redis-cli --rdb): SYNC/PSYNC sends the RDB file and disconnects.
  bool repl_rdb_only = false;
  int repl_listening_port = 0;  // REPLCONF listening-port: INFO replication shows it
  // The database's sequence number after this client's latest write (WAIT waits for it).
  // Atomic because an offloaded command (a script) records its writes from the offload thread.
  std::atomic<uint64_t> last_write_seq{0};
  // The position of Redis replicas' command stream after that write (ReplicaStream::position();
  // WAIT waits for Redis replicas to acknowledge it). Atomic for the same reason.
  std::atomic<uint64_t> last_write_stream_position{0};
  // Asks the owning worker to close the connection; safe from any thread.
  std::function<void()> close_hook;
  // Asks the owning worker to run the parked blocking command again; safe from any thread.
  std::function<void()> wake_hook;
  // The same, when it is this client's turn to be served after a write to one of its keys: the
  // worker gives the ticket back once the command ran again (commands/blocking.h).
  std::function<void(std::shared_ptr<ServeTicket>)> serve_hook;
  // CLIENT UNBLOCK: asks the owning worker to end the parked command as if it timed out, or
  // with an UNBLOCKED error (true); safe from any thread.
  std::function<void(bool error)> unblock_hook;
  BlockState block;
  // Set while a parked command runs again after a write to one of its keys woke it (monitors
  // saw it when it first ran).
  bool woken = false;
  // Messages this client published to itself during the current command, in its protocol:
  // as in Redis 7.2 they follow the command's whole reply (after EXEC's array, not inside it).
  std::string pushes_after_reply;
  // An offloaded command (a script) is running for this client: its later commands wait.
  // Worker thread only.
  bool awaiting_reply = false;
  // This session is the offload thread's copy of a client's session: run, never offload again.
  bool offloaded = false;
  // Asks the owning worker to send an offloaded command's reply and resume the client; safe
  // from any thread.
  std::function<void(std::string)> deliver_hook;
  // PUBLISH, SPUBLISH and PUBSUB read other clients' subscriptions, whose (UN)SUBSCRIBE may have
  // reached another worker first and not run yet: one Redis thread would have run it before.
  // The worker's answer: true when it took `argv` and runs it once the other workers ran the
  // input they held (the client waits meanwhile, awaiting_reply), false to run it now. Worker
  // thread only.
  std::function<bool(std::vector<std::string>& argv)> await_peers_hook;
  std::atomic<size_t> query_buffer_bytes{0};
  // Replies and messages the connection has accepted but not yet written to the socket.
  std::atomic<size_t> output_buffer_bytes{0};

  // CLIENT SETINFO (under info_mu, read by CLIENT LIST from other threads).
  std::string lib_name, lib_ver;
  // CLIENT NO-EVICT / NO-TOUCH: shown in CLIENT LIST; Basalt neither evicts clients nor keeps
  // access times, so nothing else reads them.
  std::atomic<bool> no_evict{false};
  std::atomic<bool> no_touch{false};
  // CLIENT REPLY: kSkipNext is what SKIP sets; the connection turns it into kSkip for the
  // command after, whose reply it drops as it does every reply under kOff.
  enum class ReplyMode { kOn, kOff, kSkipNext, kSkip };
  ReplyMode reply_mode = ReplyMode::kOn;
  // MONITOR: this client receives the feed of executed commands (commands/monitor.h). Written
  // by its own worker, read by others for CLIENT LIST.
  std::atomic<bool> monitor{false};
  // A script's own client: monitors show its calls as "lua".
  bool script_client = false;
  // The client that runs a Redis master's command stream (commands/master_client.h): its writes
  // pass a read-only replica's check, ACLs and maxmemory, as Redis's master client's do.
  bool from_master = false;
  // When set, waits for the keyspace lock give up once it becomes true, and the command is not
  // run (a replica's link being stopped by a thread that may hold the lock shared).
  const std::atomic<bool>* abandon_lock_waits = nullptr;

  // Client-side caching (commands/tracking.h): the tracking_flag bits and the REDIRECT id, kept
  // by the tracking registry; the dispatcher reads the flags after each command, CLIENT LIST
  // from other threads.
  std::atomic<uint32_t> tracking_flags{0};
  std::atomic<uint64_t> tracking_redirect{0};

  // Pub/Sub: what this client listens to, and messages other threads queued for it.
  Subscriptions subscriptions;
  ClientOutput output;
  // The client class whose client-output-buffer-limit applies.
  ClientClass client_class() const {
    return subscriptions.total() > 0 ? ClientClass::kPubsub : ClientClass::kNormal;
  }
};

class ClientRegistry {
 public:
  void Add(const std::shared_ptr<Session>& session);
  void Remove(uint64_t id);
  std::vector<std::shared_ptr<Session>> Snapshot() const;
  // The client with this id, or nullptr.
  std::shared_ptr<Session> Find(uint64_t id) const;
  size_t size() const;
  uint64_t NextId() { return next_id_.fetch_add(1) + 1; }

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_;
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace basalt
