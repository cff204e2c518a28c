#include "net/server.h"

#include <arpa/inet.h>
#include <event2/thread.h>
#include <glog/logging.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>

#include "net/worker.h"

namespace basalt {

namespace {

// Redis 7.0's text, word for word (its "Setup a an" included): clients and scripts match it.
constexpr const char* kProtectedModeText =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. In this mode connections are only accepted from the loopback "
    "interface. If you want to connect from external computers to Redis you may adopt one of the "
    "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
    "protected-mode no' from the loopback interface by connecting to Redis from the same host the "
    "server is running, however MAKE SURE Redis is not publicly accessible from internet if you do "
    "so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable "
    "the protected mode by editing the Redis configuration file, and setting the protected mode "
    "option to 'no', and then restarting the server. 3) If you started the server manually just "
    "for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication "
    "password for the default user. NOTE: You only need to do one of the above things in order "
    "for the server to start accepting connections from the outside.\r\n";

std::string FormatAddress(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (addr->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

bool IsLoopback(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
  }
  return addr->sa_family == AF_UNIX;
}

// tcp-keepalive as Redis sets it: probes after `seconds` idle, then every third of that, and the
// peer is dropped after three unanswered probes.
void SetKeepAlive(int fd, int seconds) {
  if (seconds <= 0) return;
  int one = 1;
  int interval = std::max(1, seconds / 3);
  int count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &seconds, sizeof(seconds));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

void RejectWith(int fd, const char* text) {
  ssize_t ignored = write(fd, text, strlen(text));
  (void)ignored;
  close(fd);
}

}  // namespace

NetworkServer::NetworkServer(ServerState* state) : state_(state) {
  evthread_use_pthreads();
  base_ = event_base_new();
}

NetworkServer::~NetworkServer() {
  for (auto* listener : listeners_) evconnlistener_free(listener);
  workers_.clear();
  if (sigterm_ != nullptr) event_free(sigterm_);
  if (sigint_ != nullptr) event_free(sigint_);
  event_base_free(base_);
}

Status NetworkServer::Listen(const std::string& address, const std::string& port, int backlog,
                             bool optional, std::vector<evconnlistener*>* out) {
  std::string host = address == "*" ? "0.0.0.0" : address == "::*" ? "::" : address;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    if (optional) return Status::NotFound(gai_strerror(rc));
    return Status::InvalidArgument("can't resolve bind address '" + address +
                                   "': " + gai_strerror(rc));
  }
  int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
  int err = errno;
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // An IPv6 socket takes IPv6 only, so that "0.0.0.0" and "::" can both be bound.
    if (res->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
      err = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) {
    // Redis's rule for '-': an address this host does not have is skipped; one in use is not.
    if (optional && (err == EADDRNOTAVAIL || err == EAFNOSUPPORT || err == EPROTONOSUPPORT ||
                     err == ESOCKTNOSUPPORT))
      return Status::NotFound(strerror(err));
    return Status::IOError("can't listen on " + address + ":" + port + ": " + strerror(err));
  }
  evutil_make_socket_nonblocking(fd);
  // A negative backlog tells libevent the socket already listens.
  evconnlistener* listener =
      evconnlistener_new(base_, OnAccept, this, LEV_OPT_CLOSE_ON_FREE, -1, fd);
  if (listener == nullptr) {
    close(fd);
    return Status::IOError("can't listen on " + address + ":" + port);
  }
  out->push_back(listener);
  return Status::OK();
}

Status NetworkServer::ListenAll(const std::string& bind, int port,
                                std::vector<evconnlistener*>* out) {
  int backlog = static_cast<int>(state_->config->GetInt("tcp-backlog"));
  std::string port_text = std::to_string(port);
  std::string bound;
  for (std::string address : SplitWords(bind)) {
    bool optional = address.size() > 1 && address[0] == '-';
    if (optional) address.erase(0, 1);
    Status s = Listen(address, port_text, backlog, optional, out);
    if (s.IsNotFound()) {
      LOG(WARNING) << "skipping bind address " << address << ": " << s.message();
      continue;
    }
    if (!s.ok()) {
      for (auto* listener : *out) evconnlistener_free(listener);
      out->clear();
      return s;
    }
    if (!bound.empty()) bound.push_back(' ');
    bound.append(address);
  }
  if (out->empty()) return Status::InvalidArgument("no address to listen on (bind '" + bind + "')");
  LOG(INFO) << "listening on " << bound << " port " << port;
  return Status::OK();
}

Status NetworkServer::SwapListeners(const std::optional<std::string>& bind,
                                    std::optional<int> port) {
  // The old sockets close first, so that an address they hold can be bound again; if the new
  // set fails, the old one is opened again.
  for (auto* listener : listeners_) evconnlistener_free(listener);
  listeners_.clear();
  std::string new_bind = bind.value_or(bind_);
  int new_port = port.value_or(port_);
  Status s = ListenAll(new_bind, new_port, &listeners_);
  if (s.ok()) {
    bind_ = new_bind;
    port_ = new_port;
    state_->tcp_port = new_port;
    return s;
  }
  LOG(WARNING) << "can't listen on the new addresses (" << s.message() << "), restoring";
  Status restored = ListenAll(bind_, port_, &listeners_);
  if (!restored.ok())
    LOG(ERROR) << "can't listen again on the old addresses: " << restored.message();
  return s;
}

Status NetworkServer::Relisten(std::optional<std::string> bind, std::optional<int> port) {
  struct Task {
    NetworkServer* server;
    std::optional<std::string> bind;
    std::optional<int> port;
    std::promise<Status> done;
  };
  auto task = std::make_shared<Task>();
  task->server = this;
  task->bind = std::move(bind);
  task->port = port;
  std::future<Status> result = task->done.get_future();
  auto* arg = new std::shared_ptr<Task>(task);
  auto run = [](evutil_socket_t, short, void* p) {
    std::unique_ptr<std::shared_ptr<Task>> holder(static_cast<std::shared_ptr<Task>*>(p));
    Task& t = **holder;
    t.done.set_value(t.server->SwapListeners(t.bind, t.port));
  };
  if (event_base_once(base_, -1, EV_TIMEOUT, run, arg, nullptr) != 0) {
    delete arg;
    return Status::IOError("can't reach the listener thread");
  }
  // The loop answers at once unless it has stopped (the server is shutting down).
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    return Status::IOError("the listener thread did not answer");
  return result.get();
}

Status NetworkServer::Start() {
  bind_ = state_->config->GetString("bind");
  port_ = static_cast<int>(state_->config->GetInt("port"));
  Status s = ListenAll(bind_, port_, &listeners_);
  if (!s.ok()) return s;

  signal(SIGPIPE, SIG_IGN);
  auto stop = [](evutil_socket_t, short, void* arg) {
    LOG(INFO) << "received a stop signal, shutting down";
    static_cast<NetworkServer*>(arg)->RequestStop();
  };
  sigterm_ = evsignal_new(base_, SIGTERM, stop, this);
  sigint_ = evsignal_new(base_, SIGINT, stop, this);
  event_add(sigterm_, nullptr);
  event_add(sigint_, nullptr);

  int n = static_cast<int>(state_->config->GetInt("workers"));
  std::vector<Worker*> peers;
  for (int i = 0; i < n; i++) {
    workers_.push_back(std::make_unique<Worker>(state_));
    peers.push_back(workers_.back().get());
  }
  // Tags fit a byte: workers past the 255th hand no commands over, and take none.
  for (int i = 0; i < n; i++)
    workers_[i]->SetPeers(peers, static_cast<uint8_t>(i < 255 ? i + 1 : 0), &moved_clients_);
  for (auto& w : workers_) w->Start();
  state_->request_shutdown = [this] { RequestStop(); };
  LOG(INFO) << "serving with " << n << " workers";
  return Status::OK();
}

void NetworkServer::Run() {
  event_base_dispatch(base_);
  for (auto* listener : listeners_) evconnlistener_free(listener);
  listeners_.clear();
  // A script still running (on the offload thread, or inside an EXEC on a worker) stops at its
  // next hook and its writes are dropped, so that stopping never waits for it.
  state_->script_guard.AbortForShutdown();
  state_->blocking.Stop();
  state_->stopping.store(true);
  for (auto& w : workers_) w->Stop();
}

void NetworkServer::RequestStop() {
  event_base_loopbreak(base_);
}

void NetworkServer::OnAccept(evconnlistener*, evutil_socket_t fd, sockaddr* addr, int, void* arg) {
  static_cast<NetworkServer*>(arg)->Accept(fd, addr);
}

void NetworkServer::Accept(evutil_socket_t fd, const sockaddr* addr) {
  Config* config = state_->config;
  if (static_cast<int64_t>(state_->clients.size()) >= config->maxclients.load()) {
    state_->counters.rejected_connections++;
    return RejectWith(fd, "-ERR max number of clients reached\r\n");
  }
  // Redis's rule: while the default user has no password, only loopback clients get in.
  if (config->GetBool("protected-mode") && state_->acl.DefaultUserIsNoPass() && !IsLoopback(addr)) {
    state_->counters.rejected_connections++;
    return RejectWith(fd, kProtectedModeText);
  }
  state_->counters.connections_received++;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  SetKeepAlive(fd, static_cast<int>(config->GetInt("tcp-keepalive")));
  sockaddr_storage local{};
  socklen_t local_len = sizeof(local);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len);
  Worker* worker = workers_[next_worker_++ % workers_.size()].get();
  worker->Adopt(fd, FormatAddress(addr), FormatAddress(reinterpret_cast<sockaddr*>(&local)));
}

}  // namespace basalt
