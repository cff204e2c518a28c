#include "net/worker.h"

#include <glog/logging.h>
#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "common/clock.h"
#include "net/connection.h"

namespace basalt {

namespace {
// Callbacks run before the loop polls sockets again. Other threads re-activate `notify_` while
// it runs (publishers on other workers queue messages continuously); without a bound libevent
// would run it again and again in the same round and never read this worker's sockets.
constexpr int kMaxCallbacksPerPoll = 16;
// Clients whose queued messages one round writes; the rest wait for the next round, after the
// sockets were polled, so that a flood of messages cannot hold up reading (and noticing
// disconnects) on this worker.
constexpr size_t kDeliveriesPerRound = 64;
// Readable clients one turn serves before it commits. libevent goes on polling and running
// callbacks while any are active, and busy pipelining clients keep some active all the time:
// without an end, a turn (and the key stripes its write group keeps) lasted up to a second,
// while the other worker's clients waited for theirs.
constexpr uint64_t kMaxInputsPerTurn = 32;
}  // namespace

Worker::Worker(ServerState* state)
    : state_(state), group_([this](const std::vector<uint64_t>& ids) { SendHeldReplies(ids); }) {
  event_config* config = event_config_new();
  event_config_set_max_dispatch_interval(config, nullptr, kMaxCallbacksPerPoll, 0);
  base_ = event_base_new_with_config(config);
  event_config_free(config);
  notify_ = event_new(base_, -1, 0, OnNotify, this);
  tick_ = event_new(base_, -1, EV_PERSIST, OnTick, this);
  timeval one_second{1, 0};
  event_add(tick_, &one_second);
  input_probe_ = epoll_create1(EPOLL_CLOEXEC);
  if (input_probe_ < 0) PLOG(WARNING) << "epoll_create1 (the input probe)";
}

Worker::~Worker() {
  Stop();
  receive_queue_.clear();  // moved here after this worker stopped
  event_free(notify_);
  event_free(tick_);
  event_base_free(base_);
  if (input_probe_ >= 0) ::close(input_probe_);
}

void Worker::SetPeers(std::vector<Worker*> peers, uint8_t tag, MovedClients* moved) {
  peers_ = std::move(peers);
  tag_ = tag;
  moved_ = moved;
  group_.set_holder_tag(tag);
}

Worker* Worker::PeerByTag(uint8_t tag) const {
  return tag >= 1 && tag <= peers_.size() ? peers_[tag - 1] : nullptr;
}

void Worker::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Worker::Run() {
  // One turn: wait for events (or, polling, only look), run every callback that is ready, then
  // commit the writes they grouped and send their replies.
  //
  // A turn that read input is followed by polls rather than a sleep: up to worker-idle-polls
  // turns that find nothing, each after a sched_yield(). Where clients share the server's cores
  // (redis-benchmark on this 2-core machine), the yield lets a client run and send its next
  // request, which the next poll picks up; sleeping instead costs a context switch and a wake-up
  // every few requests, and with two workers that is a sixth of the server's CPU in an
  // unpipelined run (docs/benchmarks.md, "Write groups and worker turns"). A worker with no
  // input still sleeps after a few polls.
  int idle_polls = 0;
  while (!exit_loop_) {
    const int64_t poll_limit = state_->config->worker_idle_polls.load(std::memory_order_relaxed);
    // Catch-up requests taken last turn are answered after this one: it must not sleep.
    const bool poll = idle_polls < poll_limit || !catch_up_waiters_.empty();
    const uint64_t inputs_before = inputs_;
    turn_start_inputs_ = inputs_;
    turn_looked_at_peers_ = false;
    int rc = event_base_loop(
        base_, (poll ? EVLOOP_NONBLOCK | EVLOOP_ONCE : EVLOOP_ONCE) | EVLOOP_NO_EXIT_ON_EMPTY);
    RunReadClients();
    RunDelegated();
    CommitGroup();
    busy_.store(false);
    AnswerCatchUps();
    if (rc < 0) {
      LOG(ERROR) << "worker event loop failed; its clients are no longer served";
      return;
    }
    if (inputs_ != inputs_before) {
      idle_polls = 0;
    } else if (poll) {
      idle_polls++;
      sched_yield();
    }
  }
}

void Worker::NoteInput() {
  NoteBusy();
  if (++inputs_ - turn_start_inputs_ >= kMaxInputsPerTurn) event_base_loopbreak(base_);
}

void Worker::RunReadClients() {
  // A turn reads every ready socket before it runs any command: while this worker's group holds
  // a hot key, the other worker reads and writes its sockets instead of waiting for the key
  // with its reads still to do.
  for (size_t i = 0; i < read_clients_.size(); i++) {
    auto it = connections_.find(read_clients_[i]);
    if (it != connections_.end()) it->second->RunReadInput();
  }
  read_clients_.clear();
}

void Worker::WatchInput(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (input_probe_ >= 0 && epoll_ctl(input_probe_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    PLOG(WARNING) << "epoll_ctl ADD (the input probe)";
  }
}

void Worker::UnwatchInput(int fd) {
  if (input_probe_ >= 0) epoll_ctl(input_probe_, EPOLL_CTL_DEL, fd, nullptr);
}

bool Worker::AwaitPeersInput(uint64_t id) {
  if (!turn_looked_at_peers_) {
    turn_looked_at_peers_ = true;
    turn_round_ = 0;
    const uint64_t round = last_round_ + 1;
    int asked = 0;
    for (Worker* peer : peers_) {
      // This worker too, for the clients it was given and has not yet read.
      bool holds = peer->adopting_.load() > 0;
      if (peer != this && !holds) {
        epoll_event ev;
        // Level-triggered and never read here: looking takes nothing from the peer's loop. The
        // sockets first, then the turn: a peer notes its turn busy before it reads a socket, so
        // bytes gone from the socket when looked at are seen as a busy turn, unless that turn
        // has already run them. Looked at the other way round, a read between the two looks
        // escapes both.
        holds = peer->input_probe_ < 0 || epoll_wait(peer->input_probe_, &ev, 1, 0) > 0 ||
                peer->busy_.load();
      }
      if (!holds) continue;
      peer->Post([&] { peer->catch_up_queue_.emplace_back(this, round); });
      asked++;
    }
    if (asked > 0) {
      last_round_ = round;
      turn_round_ = round;
      catch_up_rounds_[round].awaited = asked;
    }
  }
  if (turn_round_ == 0) return false;
  catch_up_rounds_[turn_round_].clients.push_back(id);
  return true;
}

void Worker::PeerCaughtUp(uint64_t round) {
  Post([&] { caught_up_queue_.push_back(round); });
}

void Worker::AnswerCatchUps() {
  // A request taken during a turn may have come after that turn's poll (libevent runs a wake-up
  // posted while it runs the poll's callbacks), so input waiting when it was asked is sure to
  // have been read and run only by the end of the next turn.
  for (const auto& [asker, round] : catch_up_waiters_) asker->PeerCaughtUp(round);
  catch_up_waiters_ = std::move(catch_up_taken_);
  catch_up_taken_.clear();
}

void Worker::SendHeldReplies(const std::vector<uint64_t>& session_ids) {
  for (uint64_t id : session_ids) {
    auto it = connections_.find(id);
    if (it != connections_.end()) {
      it->second->SendHeldReplies();
    } else {
      DeliverDelegated(id);
    }
  }
}

void Worker::Delegate(std::shared_ptr<Session> session,
                      std::vector<std::vector<std::string>> commands) {
  Post([&] { delegate_queue_.push_back({std::move(session), std::move(commands)}); });
}

void Worker::RunDelegated() {
  std::vector<DelegatedCommands> batches;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batches.swap(delegate_queue_);
  }
  for (DelegatedCommands& batch : batches) {
    // A client has one batch here at a time: its connection waits for this batch's replies.
    uint64_t id = batch.session->id;
    auto client = std::make_unique<DelegatedClient>();
    client->session = std::move(batch.session);
    DelegatedClient* raw = client.get();
    delegated_[id] = std::move(client);
    for (std::vector<std::string>& argv : batch.commands) {
      Dispatch(*state_, *raw->session, argv, &raw->out, &group_);
    }
    raw->complete = true;
    if (!group_.HoldsRepliesIn(&raw->out)) DeliverDelegated(id);
  }
}

void Worker::DeliverDelegated(uint64_t session_id) {
  auto it = delegated_.find(session_id);
  if (it == delegated_.end() || !it->second->complete) return;
  std::unique_ptr<DelegatedClient> client = std::move(it->second);
  delegated_.erase(it);
  if (client->session->deliver_hook) client->session->deliver_hook(std::move(client->out));
}

void Worker::MoveConnection(uint64_t id, Worker* to) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  std::unique_ptr<Connection> conn = std::move(it->second);
  connections_.erase(it);
  state_->counters.moved_connections.fetch_add(1, std::memory_order_relaxed);
  moved_->Move(id, to, [&] { to->Post([&] { to->receive_queue_.push_back(std::move(conn)); }); });
}

void Worker::Serve(std::unique_ptr<Connection> conn) {
  uint64_t id = conn->session().id;
  Connection* raw = conn.get();
  connections_.emplace(id, std::move(conn));
  raw->Attach(this);
}

void Worker::Receive(std::unique_ptr<Connection> conn) {
  uint64_t id = conn->session().id;
  Serve(std::move(conn));
  // Commands it received before the move (the one that made it move, at least) run this turn.
  RunAfterReads(id);
}

Worker* Worker::ServerOf(uint64_t id) {
  // This worker itself when the client is on its way here: its Receive was queued after this
  // drain took the queues, so the request is queued again, to be drained after it.
  return moved_ != nullptr ? moved_->Find(id) : nullptr;
}

void Worker::Adopt(int fd, std::string peer, std::string local) {
  adopting_.fetch_add(1);
  Post([&] { adopt_queue_.push_back(Pending{fd, std::move(peer), std::move(local)}); });
}

void Worker::CloseClient(uint64_t id) {
  Post([&] { close_queue_.push_back(id); });
}

void Worker::WakeClient(uint64_t id, std::shared_ptr<ServeTicket> ticket) {
  Post([&] { wake_queue_.emplace_back(id, std::move(ticket)); });
}

void Worker::UnblockClient(uint64_t id, bool error) {
  Post([&] { unblock_queue_.emplace_back(id, error); });
}

void Worker::DeliverReply(uint64_t id, std::string reply) {
  Post([&] { deliver_queue_.emplace_back(id, std::move(reply)); });
}

void Worker::DeliverMessages(uint64_t id) {
  Post([&] { message_queue_.push_back(id); });
}

void Worker::Stop() {
  if (!thread_.joinable()) return;
  Post([&] { stopping_ = true; });
  thread_.join();
}

void Worker::Forget(uint64_t id) {
  CommitGroup();
  connections_.erase(id);
}

void Worker::OnNotify(evutil_socket_t, short, void* arg) {
  static_cast<Worker*>(arg)->DrainQueue();
}

void Worker::DrainQueue() {
  NoteBusy();
  CommitGroup();
  std::vector<Pending> adopt;
  std::vector<std::unique_ptr<Connection>> received;
  std::vector<uint64_t> close;
  std::vector<std::pair<uint64_t, std::shared_ptr<ServeTicket>>> wake;
  std::vector<std::pair<uint64_t, bool>> unblock;
  std::vector<std::pair<uint64_t, std::string>> deliver;
  std::vector<uint64_t> messages;
  std::vector<uint64_t> caught_up;
  bool more_messages = false;
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    adopt.swap(adopt_queue_);
    received.swap(receive_queue_);
    close.swap(close_queue_);
    wake.swap(wake_queue_);
    unblock.swap(unblock_queue_);
    deliver.swap(deliver_queue_);
    caught_up.swap(caught_up_queue_);
    catch_up_taken_.insert(catch_up_taken_.end(), catch_up_queue_.begin(), catch_up_queue_.end());
    catch_up_queue_.clear();
    size_t n = std::min(message_queue_.size(), kDeliveriesPerRound);
    messages.assign(message_queue_.begin(), message_queue_.begin() + n);
    message_queue_.erase(message_queue_.begin(), message_queue_.begin() + n);
    more_messages = !message_queue_.empty();
    stopping = stopping_;
  }
  if (stopping) {
    for (auto& p : adopt) ::close(p.fd);
    received.clear();
    for (auto& [id, conn] : connections_) conn->FlushBeforeShutdown();
    connections_.clear();
    exit_loop_ = true;
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
    session->authenticated = !state_->acl.AuthRequired();
    uint64_t id = session->id;
    session->close_hook = [this, id] { CloseClient(id); };
    session->wake_hook = [this, id] { WakeClient(id); };
    session->serve_hook = [this, id](std::shared_ptr<ServeTicket> ticket) {
      WakeClient(id, std::move(ticket));
    };
    session->unblock_hook = [this, id](bool error) { UnblockClient(id, error); };
    session->deliver_hook = [this, id](std::string reply) { DeliverReply(id, std::move(reply)); };
    session->output.SetHooks([this, id] { DeliverMessages(id); }, [this, id] { CloseClient(id); });
    state_->clients.Add(session);
    auto conn = std::make_unique<Connection>(p.fd, session);
    Connection* raw = conn.get();
    Serve(std::move(conn));
    // What the client sent before it was adopted runs this turn, as if its socket had been
    // polled with the others (AwaitPeersInput counts on it). May close the connection.
    raw->ReadArrived();
  }
  adopting_.fetch_sub(static_cast<int>(adopt.size()));
  // Connections that moved here first: requests for them queued after their move.
  for (auto& conn : received) Receive(std::move(conn));
  // A request for a client this worker does not serve goes on to the one that does, if the
  // client moved (its hooks post to the worker that created it).
  for (uint64_t id : close) {
    if (connections_.erase(id) != 0) continue;
    if (Worker* w = ServerOf(id)) w->CloseClient(id);
  }
  for (auto& request : wake) {
    // Not a structured binding: the clang of the sanitizer build cannot capture one.
    const uint64_t id = request.first;
    std::shared_ptr<ServeTicket>& ticket = request.second;
    ServeOrForward(
        id, [&](Connection& c) { c.RetryBlocked(std::move(ticket)); },
        [&](Worker& w) { w.WakeClient(id, std::move(ticket)); });
  }
  // A ticket whose client is gone is given back here, before the other requests run.
  wake.clear();
  for (const auto& request : unblock) {
    const uint64_t id = request.first;
    const bool error = request.second;
    ServeOrForward(
        id, [error](Connection& c) { c.EndBlock(error); },
        [id, error](Worker& w) { w.UnblockClient(id, error); });
  }
  for (auto& delivery : deliver) {
    // Not a structured binding: the clang of the sanitizer build cannot capture one.
    const uint64_t id = delivery.first;
    std::string& reply = delivery.second;
    ServeOrForward(
        id, [&](Connection& c) { c.DeliverOffloaded(std::move(reply)); },
        [&](Worker& w) { w.DeliverReply(id, std::move(reply)); });
  }
  for (uint64_t id : messages) {
    ServeOrForward(
        id, [](Connection& c) { c.DeliverMessages(); }, [id](Worker& w) { w.DeliverMessages(id); });
  }
  for (uint64_t round : caught_up) {
    auto it = catch_up_rounds_.find(round);
    if (it == catch_up_rounds_.end() || --it->second.awaited > 0) continue;
    std::vector<uint64_t> clients = std::move(it->second.clients);
    catch_up_rounds_.erase(it);
    // A held client does not move, and one that closed is simply not found.
    for (uint64_t id : clients) {
      auto conn = connections_.find(id);
      if (conn != connections_.end()) conn->second->PeerCaughtUp();
    }
  }
  if (more_messages) event_active(notify_, EV_READ, 0);
}

void Worker::OnTick(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Worker*>(arg);
  self->CommitGroup();
  int64_t timeout = self->state_->config->timeout_seconds.load(std::memory_order_relaxed);
  if (timeout <= 0) return;
  int64_t now = UnixMillis();
  std::vector<uint64_t> idle;
  for (auto& [id, conn] : self->connections_) {
    Session& s = conn->session();
    // Parked clients wait as long as their command asked, and a script's client for its script.
    if (s.block.active || s.awaiting_reply) continue;
    if (s.subscriptions.total() > 0) continue;  // subscribers wait for messages, as in Redis
    // Clients in the middle of MULTI are idle-closed like any other, as in Redis.
    if (now - s.last_interaction_ms.load() > timeout * 1000) idle.push_back(id);
  }
  for (uint64_t id : idle) self->connections_.erase(id);
}

}  // namespace basalt
