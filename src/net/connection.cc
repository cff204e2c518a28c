#include "net/connection.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <glog/logging.h>

#include <algorithm>

#include "commands/dispatcher.h"
#include "commands/reply.h"
#include "commands/transactions.h"
#include "common/clock.h"
#include "net/worker.h"

namespace basalt {

namespace {
constexpr size_t kFlushThreshold = 64 * 1024;  // write out long pipelines' replies in chunks
}

Connection::Connection(Worker* worker, int fd, std::shared_ptr<Session> session)
    : worker_(worker), session_(std::move(session)) {
  bev_ = bufferevent_socket_new(worker->base(), fd, BEV_OPT_CLOSE_ON_FREE);
}

Connection::~Connection() {
  if (session_->block.active) worker_->state()->blocking.Unblock(*session_);
  if (block_timer_ != nullptr) event_free(block_timer_);
  ResetTransaction(*worker_->state(), *session_);
  worker_->state()->clients.Remove(session_->id);
  if (bev_ != nullptr) bufferevent_free(bev_);
}

void Connection::Start() {
  bufferevent_setcb(bev_, OnRead, OnWrite, OnEvent, this);
  bufferevent_enable(bev_, EV_READ | EV_WRITE);
}

void Connection::Close() {
  worker_->Forget(session_->id);
}  // destroys this

void Connection::OnRead(bufferevent*, void* arg) {
  static_cast<Connection*>(arg)->HandleInput();
}

void Connection::OnWrite(bufferevent* bev, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  if (self->closing_ && evbuffer_get_length(bufferevent_get_output(bev)) == 0) self->Close();
}

void Connection::OnEvent(bufferevent*, short events, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) self->Close();
}

void Connection::Flush(std::string& out) {
  if (out.empty()) return;
  worker_->state()->counters.net_output_bytes.fetch_add(static_cast<int64_t>(out.size()),
                                                        std::memory_order_relaxed);
  bufferevent_write(bev_, out.data(), out.size());
  out.clear();
}

void Connection::HandleInput() {
  ServerState* state = worker_->state();
  evbuffer* in = bufferevent_get_input(bev_);
  size_t len = evbuffer_get_length(in);
  if (closing_) {
    evbuffer_drain(in, len);
    return;
  }
  int n = evbuffer_peek(in, -1, nullptr, nullptr, 0);
  std::vector<evbuffer_iovec> chunks(n > 0 ? n : 0);
  evbuffer_peek(in, -1, nullptr, chunks.data(), n);
  for (const auto& chunk : chunks) {
    reader_.Feed(static_cast<const char*>(chunk.iov_base), chunk.iov_len);
  }
  evbuffer_drain(in, len);
  state->counters.net_input_bytes.fetch_add(static_cast<int64_t>(len), std::memory_order_relaxed);
  session_->query_buffer_bytes = reader_.buffered();
  if (static_cast<int64_t>(reader_.buffered()) >
      state->config->client_query_buffer_limit.load(std::memory_order_relaxed)) {
    LOG(WARNING) << "closing client " << session_->addr << ": query buffer limit exceeded";
    return Close();
  }
  // A parked client keeps its later commands buffered until it is served or times out.
  if (!session_->block.active) ProcessCommands();
}

void Connection::ProcessCommands() {
  ServerState* state = worker_->state();
  RespReader::Limits limits;
  limits.max_bulk_len = state->config->proto_max_bulk_len.load(std::memory_order_relaxed);
  std::string out;
  std::vector<std::string> argv;
  while (!closing_ && !session_->block.active) {
    limits.authenticated = session_->authenticated;
    RespReader::Result r = reader_.Next(&argv, limits);
    if (r == RespReader::Result::kNeedMore) break;
    if (r == RespReader::Result::kError) {
      Reply(&out, session_->resp).Error("ERR " + reader_.error());
      closing_ = true;
      break;
    }
    Dispatch(*state, *session_, argv, &out);
    if (session_->close_after_reply) closing_ = true;
    if (out.size() >= kFlushThreshold) Flush(out);
  }
  session_->query_buffer_bytes = reader_.buffered();
  AfterCommands(out);
}

void Connection::AfterCommands(std::string& out) {
  Flush(out);
  if (session_->block.active) ArmBlockTimer();
  if (closing_) {
    bufferevent_disable(bev_, EV_READ);
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

void Connection::RetryBlocked() {
  if (!session_->block.active || closing_) return;
  ServerState* state = worker_->state();
  state->blocking.Unblock(*session_);
  std::vector<std::string> argv = std::move(session_->block.argv);
  int64_t deadline = session_->block.deadline_ms;
  session_->block = BlockState();
  std::string out;
  Dispatch(*state, *session_, argv, &out);
  // Parked again (someone else was served first): keep the original deadline.
  if (session_->block.active) session_->block.deadline_ms = deadline;
  if (!session_->block.active && block_timer_ != nullptr) evtimer_del(block_timer_);
  Flush(out);
  if (session_->block.active) return ArmBlockTimer();
  ProcessCommands();
}

void Connection::OnBlockTimeout(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  Session& session = *self->session_;
  if (!session.block.active) return;
  self->worker_->state()->blocking.Unblock(session);
  std::string out;
  Reply reply(&out, session.resp);
  if (session.block.timeout_replies_null_array) {
    reply.NullArray();
  } else {
    reply.Null();
  }
  session.block = BlockState();
  self->Flush(out);
  self->ProcessCommands();
}

}  // namespace basalt
