#include "net/worker.h"

#include <glog/logging.h>
#include <unistd.h>

#include "common/clock.h"
#include "net/connection.h"

namespace basalt {

Worker::Worker(ServerState* state) : state_(state) {
  base_ = event_base_new();
  notify_ = event_new(base_, -1, 0, OnNotify, this);
  tick_ = event_new(base_, -1, EV_PERSIST, OnTick, this);
  timeval one_second{1, 0};
  event_add(tick_, &one_second);
}

Worker::~Worker() {
  Stop();
  event_free(notify_);
  event_free(tick_);
  event_base_free(base_);
}

void Worker::Start() {
  thread_ = std::thread([this] { event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY); });
}

void Worker::Adopt(int fd, std::string peer, std::string local) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    adopt_queue_.push_back(Pending{fd, std::move(peer), std::move(local)});
  }
  event_active(notify_, EV_READ, 0);
}

void Worker::CloseClient(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    close_queue_.push_back(id);
  }
  event_active(notify_, EV_READ, 0);
}

void Worker::WakeClient(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_queue_.push_back(id);
  }
  event_active(notify_, EV_READ, 0);
}

void Worker::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  event_active(notify_, EV_READ, 0);
  thread_.join();
}

void Worker::Forget(uint64_t id) {
  connections_.erase(id);
}

void Worker::OnNotify(evutil_socket_t, short, void* arg) {
  static_cast<Worker*>(arg)->DrainQueue();
}

void Worker::DrainQueue() {
  std::vector<Pending> adopt;
  std::vector<uint64_t> close;
  std::vector<uint64_t> wake;
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    adopt.swap(adopt_queue_);
    close.swap(close_queue_);
    wake.swap(wake_queue_);
    stopping = stopping_;
  }
  if (stopping) {
    for (auto& p : adopt) ::close(p.fd);
    connections_.clear();
    event_base_loopbreak(base_);
    return;
  }
  for (auto& p : adopt) {
    auto session = std::make_shared<Session>();
    session->id = state_->clients.NextId();
    session->fd = p.fd;
    session->addr = std::move(p.peer);
    session->laddr = std::move(p.local);
    session->created_ms = UnixMillis();
    session->last_interaction_ms = session->created_ms;
    session->authenticated = state_->config->GetString("requirepass").empty();
    uint64_t id = session->id;
    session->close_hook = [this, id] { CloseClient(id); };
    session->wake_hook = [this, id] { WakeClient(id); };
    auto conn = std::make_unique<Connection>(this, p.fd, session);
    state_->clients.Add(session);
    Connection* raw = conn.get();
    connections_.emplace(id, std::move(conn));
    raw->Start();
  }
  for (uint64_t id : close) connections_.erase(id);
  for (uint64_t id : wake) {
    auto it = connections_.find(id);
    if (it != connections_.end()) it->second->RetryBlocked();
  }
}

void Worker::OnTick(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Worker*>(arg);
  int64_t timeout = self->state_->config->timeout_seconds.load(std::memory_order_relaxed);
  if (timeout <= 0) return;
  int64_t now = UnixMillis();
  std::vector<uint64_t> idle;
  for (auto& [id, conn] : self->connections_) {
    Session& s = conn->session();
    if (s.block.active) continue;  // parked clients wait as long as their command asked
    // Clients in the middle of MULTI are idle-closed like any other, as in Redis.
    if (now - s.last_interaction_ms.load() > timeout * 1000) idle.push_back(id);
  }
  for (uint64_t id : idle) self->connections_.erase(id);
}

}  // namespace basalt
