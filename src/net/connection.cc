#include "net/connection.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <glog/logging.h>
#include <sys/socket.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "commands/acl_check.h"
#include "commands/dispatcher.h"
#include "commands/reply.h"
#include "commands/transactions.h"
#include "common/clock.h"
#include "net/worker.h"

namespace basalt {

namespace {
constexpr size_t kFlushThreshold = 64 * 1024;  // write out long pipelines' replies in chunks
// A client that sends commands faster than it reads their replies: stop running its commands
// (and reading its socket) while this much output waits, and go on once it drained to the low
// mark. Pending output per client is then bounded by this plus one reply (max-reply-size).
constexpr size_t kPauseOutputBytes = 1024 * 1024;
constexpr size_t kResumeOutputBytes = 256 * 1024;
// Read with recv rather than the bufferevent's reading, which asks the kernel how much is
// waiting (ioctl FIONREAD) before every read, one system call more per request, and reads at
// most 4 KiB per callback, which spread a pipeline of larger requests over several loop turns
// and write groups. One wake-up takes up to this much; the rest waits for the next turn.
constexpr size_t kReadChunkBytes = 16 * 1024;
constexpr size_t kMaxReadBytes = 256 * 1024;

void FreeOwnedString(const void*, size_t, void* owned) {
  delete static_cast<std::string*>(owned);
}
}  // namespace

Connection::Connection(int fd, std::shared_ptr<Session> session)
    : fd_(fd), session_(std::move(session)) {}

Connection::~Connection() {
  // First stop other threads from queueing for this client, then leave every subscription.
  session_->output.Close();
  session_->await_peers_hook = nullptr;
  worker_->state()->pubsub.UnsubscribeAll(*session_);
  worker_->state()->monitors.Remove(*session_);
  worker_->state()->tracking.Disable(*session_);
  if (session_->block.active) worker_->state()->blocking.Unblock(*session_);
  ResetTransaction(*worker_->state(), *session_);
  worker_->state()->clients.Remove(session_->id);
  if (worker_->moved_clients() != nullptr) worker_->moved_clients()->Forget(session_->id);
  LeaveLoop();
  ::close(fd_);
}

void Connection::Attach(Worker* worker) {
  worker_ = worker;
  bev_ = bufferevent_socket_new(worker->base(), fd_, 0);
  read_event_ = event_new(worker->base(), fd_, EV_READ | EV_PERSIST, OnReadable, this);
  output_watch_ = evbuffer_add_cb(bufferevent_get_output(bev_), OnOutputChanged, this);
  bufferevent_setcb(bev_, nullptr, OnWrite, OnEvent, this);
  bufferevent_setwatermark(bev_, EV_WRITE, kResumeOutputBytes, 0);
  bufferevent_enable(bev_, EV_WRITE);
  ResumeReading();
  worker->WatchInput(fd_);
  session_->await_peers_hook = [this](std::vector<std::string>& argv) { return AwaitPeers(argv); };
}

void Connection::LeaveLoop() {
  if (block_timer_ != nullptr) event_free(block_timer_);
  block_timer_ = nullptr;
  if (pause_timer_ != nullptr) event_free(pause_timer_);
  pause_timer_ = nullptr;
  if (read_event_ != nullptr) event_free(read_event_);
  read_event_ = nullptr;
  if (bev_ == nullptr) return;
  worker_->UnwatchInput(fd_);
  evbuffer_remove_cb_entry(bufferevent_get_output(bev_), output_watch_);
  // Off the loop now, even when the bufferevent's freeing waits for a callback it is in.
  bufferevent_disable(bev_, EV_READ | EV_WRITE);
  bufferevent_free(bev_);
  bev_ = nullptr;
}

void Connection::StopReading() {
  event_del(read_event_);
}

void Connection::ResumeReading() {
  event_add(read_event_, nullptr);
}

void Connection::Close() {
  worker_->Forget(session_->id);
}  // destroys this

void Connection::FlushBeforeShutdown() {
  evbuffer* output = bufferevent_get_output(bev_);
  evutil_socket_t fd = bufferevent_getfd(bev_);
  while (evbuffer_get_length(output) > 0 && evbuffer_write(output, fd) > 0) {
  }
}

void Connection::OnReadable(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  self->worker_->NoteInput();
  self->HandleInput();
}

void Connection::OnWrite(bufferevent* bev, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  self->worker_->NoteBusy();
  size_t pending = evbuffer_get_length(bufferevent_get_output(bev));
  if (self->paused_ && pending <= kResumeOutputBytes) {
    self->paused_ = false;
    self->ResumeReading();
    // ProcessCommands may close (and destroy) the connection: nothing after it.
    if (!self->session_->block.active && !self->session_->awaiting_reply && !self->held_for_pause_)
      return self->ProcessCommands();
  }
  if (pending != 0) return;
  if (self->handing_over_) return self->HandOver();
  if (self->closing_) self->Close();
}

void Connection::HandOver() {
  int fd = ::dup(bufferevent_getfd(bev_));
  std::function<void(int)> take = std::move(session_->take_socket);
  session_->take_socket = nullptr;
  Close();  // destroys this; the duplicate keeps the socket open
  if (fd < 0) {
    LOG(WARNING) << "can't hand a connection over: dup failed";
    return;
  }
  take(fd);
}

void Connection::OnEvent(bufferevent*, short events, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) self->Close();
}

void Connection::OnOutputChanged(evbuffer* buffer, const evbuffer_cb_info*, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  self->session_->output_buffer_bytes.store(evbuffer_get_length(buffer), std::memory_order_relaxed);
}

void Connection::Flush(std::string& out) {
  if (out.empty()) return;
  worker_->state()->counters.net_output_bytes.fetch_add(static_cast<int64_t>(out.size()),
                                                        std::memory_order_relaxed);
  worker_->state()->counters.writes_processed.fetch_add(1, std::memory_order_relaxed);
  // Write straight to the socket when nothing is queued before this reply, as Redis does:
  // handing it to the bufferevent would register interest in writability (an epoll_ctl), wait
  // for the next loop turn and deregister again, for every reply. Only what the socket does
  // not take now (or an error, which the bufferevent then reports) goes through the buffer.
  size_t written = 0;
  if (evbuffer_get_length(bufferevent_get_output(bev_)) == 0) {
    ssize_t n = send(bufferevent_getfd(bev_), out.data(), out.size(), MSG_NOSIGNAL);
    if (n > 0) written = static_cast<size_t>(n);
  }
  size_t rest = out.size() - written;
  if (rest > 0 && rest < kFlushThreshold) {
    bufferevent_write(bev_, out.data() + written, rest);
  } else if (rest > 0) {
    // Large replies are handed over without a copy, so one never takes twice its size.
    auto* owned = new std::string(std::move(out));
    evbuffer_add_reference(bufferevent_get_output(bev_), owned->data() + written, rest,
                           FreeOwnedString, owned);
  }
  out.clear();
  EnforceOutputLimit();
}

void Connection::EnforceOutputLimit() {
  OutputBufferLimit limit = worker_->state()->config->output_buffer_limit(session_->client_class());
  if (!limit.enabled() || closing_) return;
  size_t unsent = session_->output_buffer_bytes.load(std::memory_order_relaxed);
  if (!session_->output.OverLimit(unsent, limit, UnixMillis())) return;
  LOG(WARNING) << "Client id=" << session_->id << " addr=" << session_->addr
               << " closed for overcoming of output buffer limits.";
  // Nothing more is read or written; the worker destroys the connection on its next turn.
  closing_ = true;
  StopReading();
  bufferevent_disable(bev_, EV_WRITE);
  worker_->CloseClient(session_->id);
}

void Connection::DeliverMessages() {
  std::string out;
  Reply reply(&out, session_->resp);
  WriteQueuedMessages(*session_, reply);
  if (!closing_) Flush(out);
}

size_t Connection::ReadSocket(bool* peer_gone) {
  char buf[kReadChunkBytes];
  size_t total = 0;
  while (total < kMaxReadBytes) {
    ssize_t got = recv(bufferevent_getfd(bev_), buf, sizeof(buf), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (got <= 0) {
      // The end of the stream, or a reset. After bytes were read, their commands run first
      // and the socket, still readable, reports the end again on the next turn.
      *peer_gone = total == 0;
      break;
    }
    reader_.Feed(buf, static_cast<size_t>(got));
    total += static_cast<size_t>(got);
    if (static_cast<size_t>(got) < sizeof(buf)) break;  // the socket is drained
  }
  return total;
}

void Connection::HandleInput() {
  ServerState* state = worker_->state();
  if (closing_) return StopReading();
  bool peer_gone = false;
  size_t len = ReadSocket(&peer_gone);
  if (peer_gone) return Close();
  state->counters.net_input_bytes.fetch_add(static_cast<int64_t>(len), std::memory_order_relaxed);
  if (len > 0) {
    state->counters.reads_processed.fetch_add(1, std::memory_order_relaxed);
    reads_++;
  }
  session_->query_buffer_bytes = reader_.buffered();
  if (static_cast<int64_t>(reader_.buffered()) >
      state->config->client_query_buffer_limit.load(std::memory_order_relaxed)) {
    LOG(WARNING) << "closing client " << session_->addr << ": query buffer limit exceeded";
    state->counters.query_buffer_disconnections++;
    return Close();
  }
  worker_->RunAfterReads(session_->id);
}

void Connection::ReadArrived() {
  worker_->NoteInput();
  HandleInput();
}

void Connection::RunReadInput() {
  // A parked client keeps its later commands buffered until it is served or times out; so does
  // one whose script runs on the offload thread, and a paused one until its output drains.
  if (closing_ || session_->block.active || session_->awaiting_reply || paused_ || held_for_pause_)
    return;
  ProcessCommands();
}

// A pipeline's commands each begin by looking their key up in the metadata cache and locking
// its stripe: two cache misses for a key at a random place, one after another for each command.
// Started together for the commands already received, they overlap (docs/benchmarks.md,
// "The request path"). A pipeline on one key (LPUSH) has nothing to overlap. The first command
// is taken as parsed: peeking it too would parse every unpipelined command twice.
void Connection::PrefetchPipelinedKeys(const std::vector<std::string>& first) {
  constexpr size_t kPrefetchedCommands = 16;
  if (first.size() < 2) return;
  thread_local std::vector<std::string_view> keys;
  keys.assign(1, first[1]);
  // The first two tell a pipeline on one key without scanning the rest.
  reader_.PeekSecondArguments(1, &keys);
  if (keys.size() < 2 || keys[0] == keys[1]) return;
  keys.resize(1);
  reader_.PeekSecondArguments(kPrefetchedCommands - 1, &keys);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  worker_->state()->keyspace->PrefetchForCommands(session_->db, keys);
}

bool Connection::DelegateIfHeldElsewhere(std::vector<std::string>& argv,
                                         const RespReader::Limits& limits) {
  if (!worker_->HasPeers()) return false;
  ServerState* state = worker_->state();
  const uint8_t self = worker_->tag();
  const uint8_t holder = GroupHoldingKeysOf(*state, *session_, argv, self);
  Worker* target = worker_->PeerByTag(holder);
  if (target == nullptr) return false;
  // This client's earlier writes commit, and their replies go out, before the others run.
  worker_->CommitGroup();
  hand_overs_in_a_row_ = target == handed_to_ ? hand_overs_in_a_row_ + 1 : 1;
  handed_to_ = target;
  const int64_t move_at = state->config->worker_move_hand_overs.load(std::memory_order_relaxed);
  if (move_at > 0 && hand_overs_in_a_row_ >= move_at && Movable() && reader_.Unread()) {
    move_to_ = target;
    return true;
  }
  std::vector<std::vector<std::string>> commands;
  commands.push_back(std::move(argv));
  std::vector<std::string> next;
  while (commands.size() < Worker::kMaxDelegatedCommands &&
         reader_.Next(&next, limits) == RespReader::Result::kCommand) {
    if (GroupHoldingKeysOf(*state, *session_, next, self) != holder) {
      // A command that began where the last one ended was parsed in one piece: it goes back.
      if (!reader_.Unread()) LOG(DFATAL) << "a whole command could not be put back";
      break;
    }
    commands.push_back(std::move(next));
  }
  state->counters.delegated_commands.fetch_add(static_cast<int64_t>(commands.size()),
                                               std::memory_order_relaxed);
  session_->awaiting_reply = true;
  target->Delegate(session_, std::move(commands));
  return true;
}

void Connection::DispatchHonouringReplyMode(std::vector<std::string>& argv, WriteGroup& group) {
  using Mode = Session::ReplyMode;
  const Mode before = session_->reply_mode;
  if (before == Mode::kOn || before == Mode::kSkipNext) {
    Dispatch(*worker_->state(), *session_, argv, &out_, &group);
  } else if (const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
             spec != nullptr && (spec->flags & kCmdPushReply)) {
    // (Un)subscribe confirmations are pushes, which no reply mode silences; SKIP is used up.
    Dispatch(*worker_->state(), *session_, argv, &out_, &group);
    if (before == Mode::kSkip && session_->reply_mode == Mode::kSkip) {
      session_->reply_mode = Mode::kOn;
    }
  } else {
    // Silenced: the reply goes to a buffer nobody sends (a grouped write's stays there until
    // the group commits), unless the command was CLIENT REPLY ON, which is answered.
    const size_t start = discarded_.size();
    Dispatch(*worker_->state(), *session_, argv, &discarded_, &group);
    if (session_->reply_mode == Mode::kOn) out_.append(discarded_, start, std::string::npos);
    if (!group.HoldsRepliesIn(&discarded_)) discarded_.clear();
    // A parked or offloaded command replies later, silenced all the same.
    drop_deferred_reply_ = session_->block.active || session_->awaiting_reply;
    if (before == Mode::kSkip && session_->reply_mode == Mode::kSkip) {
      session_->reply_mode = Mode::kOn;
    }
  }
  if (session_->reply_mode == Mode::kSkipNext) session_->reply_mode = Mode::kSkip;
}

bool Connection::DispatchServingWaiters(std::vector<std::string>& argv, WriteGroup& group) {
  ServerState* state = worker_->state();
  std::shared_ptr<ServeBarrier> barrier =
      state->blocking.NewBarrier([deliver = session_->deliver_hook] { deliver(std::string()); });
  {
    ServeBarrierScope scope(barrier);
    DispatchHonouringReplyMode(argv, group);
    if (group.TouchedWaitedKey(state->blocking)) {
      awaiting_served_ = true;  // the commit settles the replies; they stay in out_ for now
      worker_->CommitGroup();
    }
  }
  // A command that parked or went to another thread resumes this client by its own path.
  if (barrier.use_count() == 1 || session_->awaiting_reply || session_->block.active) {
    barrier->Disarm();
    awaiting_served_ = false;
    return false;
  }
  // Resumed by the barrier (DeliverOffloaded with no reply) once the waiters were served; the
  // replies wait in out_ until then, as Redis serves them before it replies.
  session_->awaiting_reply = true;
  awaiting_served_ = true;
  return true;
}

void Connection::ProcessCommands() {
  ServerState* state = worker_->state();
  RespReader::Limits limits;
  limits.max_bulk_len = state->config->proto_max_bulk_len.load(std::memory_order_relaxed);
  std::vector<std::string> argv;
  WriteGroup& group = worker_->group();
  evbuffer* output = bufferevent_get_output(bev_);
  // Once for the commands of a read, as Redis stamps a client when it reads its query.
  session_->last_interaction_ms.store(UnixMillis(), std::memory_order_relaxed);
  bool first = true;
  while (!closing_ && !handing_over_ && !session_->block.active && !session_->awaiting_reply &&
         !held_for_pause_) {
    if (evbuffer_get_length(output) + out_.size() >= kPauseOutputBytes) {
      paused_ = true;
      StopReading();
      break;
    }
    limits.authenticated = !AuthRequired(*state, *session_);
    RespReader::Result r = reader_.Next(&argv, limits);
    if (r == RespReader::Result::kNeedMore) break;
    if (r == RespReader::Result::kError) {
      Reply(&out_, session_->resp).Error("ERR " + reader_.error());
      closing_ = true;
      break;
    }
    if (state->pause.active() && state->pause.Holds(*session_, argv)) {
      HoldForPause(std::move(argv));
      break;
    }
    if (first) PrefetchPipelinedKeys(argv);
    first = false;
    if (session_->reply_mode == Session::ReplyMode::kOn && DelegateIfHeldElsewhere(argv, limits))
      break;
    hand_overs_in_a_row_ = 0;
    if (state->blocking.Listening()) {
      if (DispatchServingWaiters(argv, group)) break;
    } else {
      DispatchHonouringReplyMode(argv, group);
    }
    if (session_->close_after_reply) closing_ = true;
    if (session_->take_socket) handing_over_ = true;
    if (out_.size() >= kFlushThreshold) {
      worker_->CommitGroup();
      Flush(out_);
    }
  }
  session_->query_buffer_bytes = reader_.buffered();
  if (awaiting_served_) return;
  if (move_to_ != nullptr) return Move();
  if (group.HoldsRepliesIn(&out_)) {
    // Normally the replies wait for the end of the worker's turn, when the group commits with
    // the other clients' writes. A client that is closing, handing over, parked or paused
    // needs its replies settled now.
    bool settled_later = !closing_ && !handing_over_ && !paused_ && !session_->block.active &&
                         !session_->awaiting_reply && !held_for_pause_;
    if (settled_later) return;
    worker_->CommitGroup();
  }
  AfterCommands(out_);
}

bool Connection::Movable() {
  // Replies of reads wait in out_ until the end of ProcessCommands: written now, or not at all.
  Flush(out_);
  return !closing_ && !handing_over_ && !paused_ && !session_->block.active &&
         !session_->awaiting_reply && !held_for_pause_ && session_->subscriptions.total() == 0 &&
         evbuffer_get_length(bufferevent_get_output(bev_)) == 0;
}

void Connection::Move() {
  Worker* from = worker_;
  LeaveLoop();
  worker_ = move_to_;
  move_to_ = nullptr;
  hand_overs_in_a_row_ = 0;
  from->MoveConnection(session_->id, worker_);  // the other worker's from here on
}

void Connection::AfterCommands(std::string& out) {
  Flush(out);
  if (session_->block.active) ArmBlockTimer();
  if (handing_over_) {
    StopReading();
    if (evbuffer_get_length(bufferevent_get_output(bev_)) == 0) HandOver();
    return;
  }
  if (closing_) {
    StopReading();
    if (evbuffer_get_length(bufferevent_get_output(bev_)) == 0) Close();
  }
}

void Connection::ArmBlockTimer() {
  if (block_timer_ == nullptr) block_timer_ = evtimer_new(worker_->base(), OnBlockTimeout, this);
  evtimer_del(block_timer_);
  int64_t deadline = session_->block.deadline_ms;
  if (deadline == 0) return;  // waits until served
  int64_t left = std::max<int64_t>(deadline - UnixMillis(), 0);
  timeval tv{static_cast<time_t>(left / 1000), static_cast<suseconds_t>((left % 1000) * 1000)};
  evtimer_add(block_timer_, &tv);
}

void Connection::RetryBlocked(std::shared_ptr<ServeTicket> ticket) {
  if (held_for_pause_) return ResumeFromPause();
  if (!session_->block.active || closing_) return;
  ServerState* state = worker_->state();
  if (state->pause.active() && state->pause.Holds(*session_, session_->block.argv)) {
    // A write pause holds the wake-up too (the pop is a write): it runs when the pause ends.
    state->pause.Hold(*session_);
    return ArmPauseTimer();
  }
  // The client stays registered while its command runs again: parked again, it keeps its
  // place among the waiters.
  std::vector<std::string> argv = std::move(session_->block.argv);
  int64_t deadline = session_->block.deadline_ms;
  session_->block = BlockState();
  session_->last_interaction_ms.store(UnixMillis(), std::memory_order_relaxed);
  std::string out;
  session_->woken = true;
  {
    ServeBarrierScope scope(ticket ? ticket->barrier() : nullptr);
    Dispatch(*state, *session_, argv, &out);
  }
  session_->woken = false;
  if (session_->block.active) {
    // Parked again (someone else was served first): keep the original deadline.
    session_->block.deadline_ms = deadline;
  } else {
    state->blocking.Unblock(*session_);
    if (ticket) ticket->served = true;
  }
  ticket.reset();  // the next waiter's turn, before this client's later commands
  if (!session_->block.active && drop_deferred_reply_) {
    out.clear();
    drop_deferred_reply_ = false;
  }
  if (!session_->block.active && block_timer_ != nullptr) evtimer_del(block_timer_);
  Flush(out);
  if (session_->block.active) return ArmBlockTimer();
  ProcessCommands();
}

bool Connection::AwaitPeers(std::vector<std::string>& argv) {
  if (running_after_peers_ || reads_ == peers_caught_up_at_read_) return false;
  peers_caught_up_at_read_ = reads_;
  if (!worker_->AwaitPeersInput(session_->id)) return false;
  held_for_peers_ = true;
  peers_held_argv_ = std::move(argv);
  session_->awaiting_reply = true;
  return true;
}

void Connection::PeerCaughtUp() {
  if (!held_for_peers_) return;
  held_for_peers_ = false;
  if (closing_) return;
  std::vector<std::string> argv = std::move(peers_held_argv_);
  std::string reply;
  running_after_peers_ = true;
  Dispatch(*worker_->state(), *session_, argv, &reply);
  running_after_peers_ = false;
  // Sent, and the client resumed, as the reply of a command that ran elsewhere.
  DeliverOffloaded(std::move(reply));
}

void Connection::DeliverOffloaded(std::string reply) {
  if (!session_->awaiting_reply) return;
  session_->awaiting_reply = false;
  awaiting_served_ = false;
  if (drop_deferred_reply_) {
    reply.clear();
    drop_deferred_reply_ = false;
  }
  // A reply cut for max-reply-size closes the client, wherever its command ran.
  if (session_->close_after_reply) closing_ = true;
  Flush(reply);
  ProcessCommands();
}

void Connection::OnBlockTimeout(evutil_socket_t, short, void* arg) {
  auto* conn = static_cast<Connection*>(arg);
  // libevent measures a timer from the time it cached when its loop woke, which may be some
  // milliseconds old: a timer that fires before the deadline is armed again for the rest.
  const Session& session = *conn->session_;
  if (session.block.active && session.block.deadline_ms > UnixMillis()) {
    return conn->ArmBlockTimer();
  }
  conn->EndBlock(false);
}

void Connection::EndBlock(bool error) {
  Session& session = *session_;
  if (!session.block.active || closing_) return;
  worker_->state()->blocking.Unblock(session);
  if (block_timer_ != nullptr) evtimer_del(block_timer_);
  std::string out;
  Reply reply(&out, session.resp);
  if (error) {
    reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
  } else if (session.block.timeout_reply) {
    session.block.timeout_reply(reply);
  } else if (session.block.timeout_replies_null_array) {
    reply.NullArray();
  } else {
    reply.Null();
  }
  std::vector<std::string> argv = std::move(session.block.argv);
  session.block = BlockState();
  AccountTimedOutBlock(*worker_->state(), session, argv);
  if (drop_deferred_reply_) {
    out.clear();
    drop_deferred_reply_ = false;
  }
  Flush(out);
  ProcessCommands();
}

void Connection::HoldForPause(std::vector<std::string> argv) {
  ServerState* state = worker_->state();
  held_argv_ = std::move(argv);
  held_for_pause_ = true;
  state->pause.Hold(*session_);
  ArmPauseTimer();
}

void Connection::ArmPauseTimer() {
  ServerState* state = worker_->state();
  if (pause_timer_ == nullptr) pause_timer_ = evtimer_new(worker_->base(), OnPauseTimer, this);
  if (state->pause.until_ms() == 0) return;  // held by a failover: woken when it ends
  int64_t left = std::max<int64_t>(state->pause.until_ms() - UnixMillis(), 0) + 1;
  timeval tv{static_cast<time_t>(left / 1000), static_cast<suseconds_t>((left % 1000) * 1000)};
  evtimer_add(pause_timer_, &tv);
}

void Connection::OnPauseTimer(evutil_socket_t, short, void* arg) {
  static_cast<Connection*>(arg)->ResumeFromPause();
}

void Connection::ResumeFromPause() {
  // A parked command whose wake-up the pause held tries again.
  if (!held_for_pause_) return RetryBlocked();
  if (closing_) return;
  ServerState* state = worker_->state();
  if (state->pause.Holds(*session_, held_argv_)) {
    // Paused again (or longer) since: wait for the new end.
    std::vector<std::string> argv = std::move(held_argv_);
    return HoldForPause(std::move(argv));
  }
  held_for_pause_ = false;
  evtimer_del(pause_timer_);
  std::vector<std::string> argv = std::move(held_argv_);
  session_->last_interaction_ms.store(UnixMillis(), std::memory_order_relaxed);
  DispatchHonouringReplyMode(argv, worker_->group());
  if (session_->close_after_reply) closing_ = true;
  if (session_->take_socket) handing_over_ = true;
  ProcessCommands();
}

}  // namespace basalt
