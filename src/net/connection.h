// Connection: one client socket on a worker thread.
//
// Reads whatever arrived, lets the RespReader cut it into commands, runs each through the
// dispatcher and writes all replies of one read in a single write, which is what makes
// pipelining cheap. A protocol error gets its "-ERR Protocol error: ..." reply and closes this
// connection only.
#pragma once

#include <event2/bufferevent.h>
#include <event2/event.h>

#include <memory>
#include <string>

#include "commands/server_state.h"
#include "net/resp_reader.h"

namespace basalt {

class Worker;

class Connection {
 public:
  Connection(Worker* worker, int fd, std::shared_ptr<Session> session);
  ~Connection();

  void Start();
  // Closes now (CLIENT KILL, idle timeout, server stop).
  void Close();
  // Runs the parked blocking command again after a write to one of its keys.
  void RetryBlocked();
  Session& session() { return *session_; }

 private:
  static void OnRead(bufferevent* bev, void* arg);
  static void OnWrite(bufferevent* bev, void* arg);
  static void OnEvent(bufferevent* bev, short events, void* arg);
  static void OnBlockTimeout(evutil_socket_t, short, void* arg);
  void HandleInput();
  // Runs every complete buffered command until input runs out, the client blocks or closes.
  void ProcessCommands();
  void AfterCommands(std::string& out);
  void ArmBlockTimer();
  void Flush(std::string& out);

  Worker* worker_;
  bufferevent* bev_;
  std::shared_ptr<Session> session_;
  RespReader reader_;
  bool closing_ = false;  // waiting for the last reply to drain
  event* block_timer_ = nullptr;
};

}  // namespace basalt
