#include "commands/replica_stream.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/resp_encoding.h"
#include "glog/logging.h"

namespace basalt {

ReplicaStream::Feed::Feed() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  PCHECK(wake_fd_ >= 0) << "eventfd";
}

ReplicaStream::Feed::~Feed() {
  ::close(wake_fd_);
}

bool ReplicaStream::Feed::Take(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t ignored;
  while (::read(wake_fd_, &ignored, sizeof ignored) > 0) {
  }
  if (dropped_) return false;
  out->swap(pending_);
  pending_.clear();
  return true;
}

void ReplicaStream::Feed::Append(std::string_view bytes, int64_t hard_limit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dropped_) return;
  const bool was_empty = pending_.empty();
  pending_.append(bytes);
  if (hard_limit > 0 && static_cast<int64_t>(pending_.size()) >= hard_limit) {
    dropped_ = true;
    pending_ = std::string();
  }
  if (was_empty || dropped_) Wake();
}

void ReplicaStream::Feed::Drop() {
  std::lock_guard<std::mutex> lock(mu_);
  dropped_ = true;
  pending_ = std::string();
  Wake();
}

void ReplicaStream::Feed::Wake() {
  const uint64_t one = 1;
  // A full counter (never reached) already polls readable.
  if (::write(wake_fd_, &one, sizeof one) < 0 && errno != EAGAIN) PLOG(WARNING) << "eventfd";
}

bool ReplicaStream::Feed::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

int64_t ReplicaStream::HardLimit() const {
  return config_ == nullptr ? 0 : config_->output_buffer_limit(ClientClass::kReplica).hard_bytes;
}

void ReplicaStream::AppendCommand(int db, const std::vector<std::string>& argv, std::string* out) {
  if (db >= 0 && db != selected_db_) {
    AppendRespArray(out, std::vector<std::string>{"SELECT", std::to_string(db)});
    selected_db_ = db;
  }
  AppendRespArray(out, argv);
}

void ReplicaStream::OnEffects(std::vector<ReplicationEffects::Unit> units) {
  std::lock_guard<std::mutex> lock(mu_);
  if (feeds_.empty()) return;  // the last replica left while this unit of work ran
  std::string bytes;
  for (const ReplicationEffects::Unit& unit : units) {
    // As Redis 7 propagates: one command alone, several as a transaction. MULTI carries no
    // database, so a SELECT comes inside it, before the first command that needs one.
    const bool transaction = unit.size() > 1;
    if (transaction) AppendCommand(-1, {"MULTI"}, &bytes);
    for (const ReplicationEffects::Command& command : unit) {
      AppendCommand(command.db, command.argv, &bytes);
    }
    if (transaction) AppendCommand(-1, {"EXEC"}, &bytes);
  }
  Broadcast(bytes);
}

void ReplicaStream::Broadcast(std::string_view bytes) {
  const int64_t limit = HardLimit();
  for (const std::shared_ptr<Feed>& feed : feeds_) {
    feed->Append(bytes, limit);
    if (feed->dropped()) {
      LOG(WARNING) << "a Redis replica's unsent command stream reached client-output-buffer-limit"
                   << " (replica class); dropping it";
    }
  }
  feeds_.erase(std::remove_if(feeds_.begin(), feeds_.end(),
                              [](const std::shared_ptr<Feed>& f) { return f->dropped(); }),
               feeds_.end());
  replicas_.store(static_cast<int>(feeds_.size()), std::memory_order_relaxed);
  position_.store(position_.load(std::memory_order_relaxed) + bytes.size(),
                  std::memory_order_release);
}

std::shared_ptr<ReplicaStream::Feed> ReplicaStream::Attach() {
  std::lock_guard<std::mutex> lock(mu_);
  auto feed = std::make_shared<Feed>();
  feed->attach_position_ = position_.load(std::memory_order_relaxed);
  // The PINGs' period starts with the first replica.
  if (feeds_.empty()) last_ping_ms_ = MonotonicMicros() / 1000;
  feeds_.push_back(feed);
  // As a Redis master does for a new replica: the next command says its database.
  selected_db_ = -1;
  replicas_.store(static_cast<int>(feeds_.size()), std::memory_order_relaxed);
  return feed;
}

void ReplicaStream::Detach(const std::shared_ptr<Feed>& feed) {
  std::lock_guard<std::mutex> lock(mu_);
  feeds_.erase(std::remove(feeds_.begin(), feeds_.end(), feed), feeds_.end());
  replicas_.store(static_cast<int>(feeds_.size()), std::memory_order_relaxed);
}

void ReplicaStream::DropAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::shared_ptr<Feed>& feed : feeds_) feed->Drop();
  feeds_.clear();
  replicas_.store(0, std::memory_order_relaxed);
}

void ReplicaStream::PingIfDue(int64_t period_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = MonotonicMicros() / 1000;
  if (feeds_.empty() || now - last_ping_ms_ < period_ms) return;
  last_ping_ms_ = now;
  std::string bytes;
  AppendRespArray(&bytes, std::initializer_list<std::string_view>{"PING"});
  Broadcast(bytes);
}

void ReplicaStream::RequestAcks() {
  std::lock_guard<std::mutex> lock(mu_);
  if (feeds_.empty()) return;
  std::string bytes;
  AppendRespArray(&bytes, std::initializer_list<std::string_view>{"REPLCONF", "GETACK", "*"});
  Broadcast(bytes);
}

}  // namespace basalt
