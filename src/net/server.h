// NetworkServer: the TCP listener and the worker threads that serve connections.
//
// The main thread accepts (and enforces maxclients and protected mode), then hands each socket
// to one worker, round robin. A worker owns its connections: it reads, parses, runs commands
// through the dispatcher and writes replies on its own libevent base, so a connection's state
// is touched by one thread at a time. A connection whose writes keep going to another worker's
// hot key moves to that worker, idle, between two commands (net/worker.h). Other threads reach a
// connection only through its worker's queue (CLIENT KILL) and the process stops through
// RequestStop().
#pragma once

#include <event2/event.h>
#include <event2/listener.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands/server_state.h"
#include "common/status.h"
#include "net/worker.h"

namespace basalt {

class NetworkServer {
 public:
  explicit NetworkServer(ServerState* state);
  ~NetworkServer();

  // Listens on every `bind` address (one prefixed with '-' is skipped when it can't be bound,
  // "*" is every IPv4 address, "::*" every IPv6 one) with `tcp-backlog`, and starts the
  // workers; the caller then runs Run() on the main thread.
  Status Start();
  // Serves until RequestStop(); then closes every connection and joins the workers.
  void Run();
  // Safe from any thread and from signal callbacks.
  void RequestStop();
  // CONFIG SET bind / port: listens on the new addresses or port (the one not given stays), on
  // the listener's thread, and waits for it. On failure the old sockets are opened again.
  Status Relisten(std::optional<std::string> bind, std::optional<int> port);

 private:
  static void OnAccept(evconnlistener* listener, evutil_socket_t fd, sockaddr* addr, int len,
                       void* arg);
  void Accept(evutil_socket_t fd, const sockaddr* addr);
  // One listening socket on `address`:`port`, added to `out`; NotFound when an optional address
  // is not available on this host.
  Status Listen(const std::string& address, const std::string& port, int backlog, bool optional,
                std::vector<evconnlistener*>* out);
  // Every address of `bind`; on error none is left open.
  Status ListenAll(const std::string& bind, int port, std::vector<evconnlistener*>* out);
  // On the listener's thread.
  Status SwapListeners(const std::optional<std::string>& bind, std::optional<int> port);

  ServerState* state_;
  event_base* base_ = nullptr;
  std::vector<evconnlistener*> listeners_;
  std::string bind_;  // what listeners_ listen on
  int port_ = 0;
  event* sigterm_ = nullptr;
  event* sigint_ = nullptr;
  MovedClients moved_clients_;  // outlives the workers, which use it until they are destroyed
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t next_worker_ = 0;
};

}  // namespace basalt
