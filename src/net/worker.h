// Worker: one thread, one libevent base, the connections assigned to it.
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "commands/server_state.h"

namespace basalt {

class Connection;

class Worker {
 public:
  explicit Worker(ServerState* state);
  ~Worker();

  void Start();
  // Both are safe from any thread.
  void Adopt(int fd, std::string peer, std::string local);
  void CloseClient(uint64_t id);
  void WakeClient(uint64_t id);
  void Stop();

  // Called by a connection when it is finished.
  void Forget(uint64_t id);
  event_base* base() const { return base_; }
  ServerState* state() const { return state_; }

 private:
  static void OnNotify(evutil_socket_t, short, void* arg);
  static void OnTick(evutil_socket_t, short, void* arg);
  void DrainQueue();

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
  std::vector<uint64_t> wake_queue_;
  bool stopping_ = false;

  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
};

}  // namespace basalt
