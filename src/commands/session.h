// Session: the state of one client connection that commands read and change (selected
// database, protocol version, authentication, MULTI queue, WATCHed keys), and ClientRegistry,
// the list of all sessions behind CLIENT LIST/KILL and INFO clients.
//
// The network layer owns the socket; it gives each Session a way to be closed from another
// thread (`close_hook`) and keeps the buffer sizes that CLIENT LIST reports up to date.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "types/watch_registry.h"

namespace basalt {

struct WatchedKey {
  int db;
  uint8_t physical_db;
  std::string key;
  bool alive_at_watch;  // a key that was live when watched and expired since aborts EXEC
};

// What a parked blocking command is waiting for.
struct BlockState {
  bool active = false;
  std::vector<std::string> argv;           // the command to run again when woken
  int64_t deadline_ms = 0;                 // absolute Unix ms; 0 = wait forever
  bool timeout_replies_null_array = true;  // else a null bulk string
};

struct Session {
  uint64_t id = 0;
  std::string name;
  std::string addr;   // peer "ip:port"
  std::string laddr;  // local "ip:port"
  int fd = -1;
  std::atomic<int> db{0};
  std::atomic<int> resp{2};
  bool authenticated = false;
  int64_t created_ms = 0;
  std::atomic<int64_t> last_interaction_ms{0};
  std::string last_command = "NULL";
  // Guards `name` and `last_command`, which CLIENT LIST reads from other threads.
  mutable std::mutex info_mu;

  // MULTI/EXEC
  bool in_multi = false;
  bool multi_failed = false;  // a command was rejected while queuing: EXEC aborts
  std::vector<std::vector<std::string>> queued;
  std::shared_ptr<WatchState> watch = std::make_shared<WatchState>();
  std::vector<WatchedKey> watched;

  // Set by QUIT and by protocol errors: close once the pending reply is written.
  bool close_after_reply = false;
  // Asks the owning worker to close the connection; safe from any thread.
  std::function<void()> close_hook;
  // Asks the owning worker to run the parked blocking command again; safe from any thread.
  std::function<void()> wake_hook;
  BlockState block;
  std::atomic<size_t> query_buffer_bytes{0};
  std::atomic<size_t> output_buffer_bytes{0};
};

class ClientRegistry {
 public:
  void Add(const std::shared_ptr<Session>& session);
  void Remove(uint64_t id);
  std::vector<std::shared_ptr<Session>> Snapshot() const;
  size_t size() const;
  uint64_t NextId() { return next_id_.fetch_add(1) + 1; }

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_;
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace basalt
