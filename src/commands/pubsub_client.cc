#include "commands/pubsub_client.h"

#include <algorithm>

namespace basalt {

namespace {
// RESP framing of a message push: the array header, "pmessage", lengths and line ends.
constexpr size_t kFramingBytes = 48;
}  // namespace

size_t PendingMessage::bytes() const {
  return message->channel.size() + message->payload.size() + pattern.size() + kFramingBytes;
}

// ---------------------------------------------------------------------------------------------
// Subscriptions

bool Subscriptions::Add(PubSubKind kind, const std::string& name) {
  int k = static_cast<int>(kind);
  if (!names_[k].emplace(name, next_order_).second) return false;
  next_order_++;
  counts_[k].fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Subscriptions::Remove(PubSubKind kind, const std::string& name) {
  int k = static_cast<int>(kind);
  if (names_[k].erase(name) == 0) return false;
  counts_[k].fetch_sub(1, std::memory_order_relaxed);
  return true;
}

bool Subscriptions::Contains(PubSubKind kind, const std::string& name) const {
  return names_[static_cast<int>(kind)].count(name) != 0;
}

std::vector<std::string> Subscriptions::List(PubSubKind kind) const {
  const auto& names = names_[static_cast<int>(kind)];
  std::vector<std::pair<uint64_t, const std::string*>> ordered;
  ordered.reserve(names.size());
  for (const auto& [name, order] : names) ordered.emplace_back(order, &name);
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::string> out;
  out.reserve(ordered.size());
  for (const auto& entry : ordered) out.push_back(*entry.second);
  return out;
}

// ---------------------------------------------------------------------------------------------
// ClientOutput

void ClientOutput::SetHooks(Hook notify, Hook close) {
  std::lock_guard<std::mutex> lock(mu_);
  notify_ = std::move(notify);
  close_ = std::move(close);
}

ClientOutput::PushResult ClientOutput::Push(PendingMessage message, size_t unsent_bytes,
                                            const OutputBufferLimit& limit, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return PushResult::kDropped;
  size_t bytes = message.bytes();
  size_t queued = queued_bytes_.load(std::memory_order_relaxed) + bytes;
  if (OverLimitLocked(queued + unsent_bytes, limit, now_ms)) {
    // Free the memory now; the connection goes as soon as its worker gets to it.
    closed_ = true;
    queue_.clear();
    queued_bytes_ = 0;
    if (close_) close_();
    return PushResult::kOverLimit;
  }
  queue_.push_back(std::move(message));
  queued_bytes_.store(queued, std::memory_order_relaxed);
  if (!notify_pending_ && notify_) {
    notify_pending_ = true;
    notify_();
  }
  return PushResult::kQueued;
}

std::vector<PendingMessage> ClientOutput::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  notify_pending_ = false;
  std::vector<PendingMessage> out(std::make_move_iterator(queue_.begin()),
                                  std::make_move_iterator(queue_.end()));
  queue_.clear();
  queued_bytes_ = 0;
  return out;
}

bool ClientOutput::OverLimit(size_t unsent_bytes, const OutputBufferLimit& limit, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  if (!OverLimitLocked(queued_bytes_.load(std::memory_order_relaxed) + unsent_bytes, limit, now_ms))
    return false;
  closed_ = true;  // the caller closes the connection; nothing more is queued meanwhile
  queue_.clear();
  queued_bytes_ = 0;
  return true;
}

// Redis's rule (checkClientOutputBufferLimits): the hard limit applies at once; the soft limit
// only once usage has stayed at or above it for more than soft_seconds.
bool ClientOutput::OverLimitLocked(size_t used, const OutputBufferLimit& limit, int64_t now_ms) {
  int64_t u = static_cast<int64_t>(used);
  if (limit.hard_bytes > 0 && u >= limit.hard_bytes) return true;
  if (limit.soft_bytes <= 0 || u < limit.soft_bytes) {
    soft_limit_since_ms_ = 0;
    return false;
  }
  if (soft_limit_since_ms_ == 0) {
    soft_limit_since_ms_ = now_ms;
    return false;
  }
  return now_ms - soft_limit_since_ms_ > limit.soft_seconds * 1000;
}

void ClientOutput::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  queue_.clear();
  queued_bytes_ = 0;
  notify_ = nullptr;
  close_ = nullptr;
}

}  // namespace basalt
