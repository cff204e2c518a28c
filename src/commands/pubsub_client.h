// The per-client half of Pub/Sub.
//
// Subscriptions: the channels, patterns and shard channels one client listens to. Only the
// client's own worker thread changes or reads the names; the counts are atomics because
// CLIENT LIST and INFO read them from other threads.
//
// ClientOutput: the only part of a client that other threads write to. A publisher on another
// worker never touches the subscriber's connection: it pushes the message here and asks the
// subscriber's worker (the `notify` hook, a queue plus a libevent wake-up) to take the queued
// messages and write them to the socket. The queue counts towards the client's output buffer
// limit together with the bytes the connection has not yet written, so a subscriber that stops
// reading is disconnected (the `close` hook) instead of holding memory without bound. Hooks are
// called under the queue's mutex and dropped by Close(), so no thread calls into a connection
// or worker after the connection is gone.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/output_buffer_limits.h"

namespace basalt {

// kMonitor is no subscription: a MONITOR line (the message's payload) queued like a message
// (commands/monitor.h); nor is kTracking, a client-side caching message whose channel names
// its kind and whose payload its value (commands/tracking.h). kPubSubKindCount counts the
// subscription kinds only.
enum class PubSubKind : int { kChannel = 0, kPattern = 1, kShard = 2, kMonitor = 3, kTracking = 4 };
constexpr int kPubSubKindCount = 3;

// One published message, shared by all its receivers.
struct PublishedMessage {
  std::string channel;
  std::string payload;
};

// A message on its way to one receiver.
struct PendingMessage {
  PubSubKind kind;  // what the receiver subscribed to: the channel, a pattern, the shard channel
  std::string pattern;  // kPattern: the pattern that matched
  std::shared_ptr<const PublishedMessage> message;
  // What it costs the receiver until written: about its RESP size.
  size_t bytes() const;
};

class Subscriptions {
 public:
  // Owner thread. Add/Remove return false if nothing changed.
  bool Add(PubSubKind kind, const std::string& name);
  bool Remove(PubSubKind kind, const std::string& name);
  bool Contains(PubSubKind kind, const std::string& name) const;
  // In subscription order.
  std::vector<std::string> List(PubSubKind kind) const;

  // Any thread.
  int64_t count(PubSubKind kind) const {
    return counts_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }
  // A client with any subscription is in the "pubsub" client class (and, in RESP2, in the
  // subscribed context that allows only a few commands).
  int64_t total() const {
    return count(PubSubKind::kChannel) + count(PubSubKind::kPattern) + count(PubSubKind::kShard);
  }

 private:
  std::unordered_map<std::string, uint64_t> names_[kPubSubKindCount];  // name -> order
  uint64_t next_order_ = 0;
  std::atomic<int64_t> counts_[kPubSubKindCount] = {};
};

class ClientOutput {
 public:
  using Hook = std::function<void()>;
  enum class PushResult { kQueued, kDropped, kOverLimit };

  // Set once by the network layer before the client is visible to other threads.
  void SetHooks(Hook notify, Hook close);

  // Any thread. Queues `message` for the owner's worker. `unsent_bytes` is what the connection
  // still has to write; with the queue it is checked against `limit`. Over the limit the client
  // is asked to close, its queue is dropped and later messages are refused (kOverLimit).
  // kDropped: the client has closed.
  PushResult Push(PendingMessage message, size_t unsent_bytes, const OutputBufferLimit& limit,
                  int64_t now_ms);

  // Owner thread: everything queued so far, oldest first.
  std::vector<PendingMessage> Take();
  // Owner thread: the same limit check after replies were added to the connection's output.
  // When it returns true the caller must close the connection; later messages are refused.
  bool OverLimit(size_t unsent_bytes, const OutputBufferLimit& limit, int64_t now_ms);
  // Owner thread, when the connection closes: drops the queue and the hooks.
  void Close();

  size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }

 private:
  bool OverLimitLocked(size_t used, const OutputBufferLimit& limit, int64_t now_ms);

  std::mutex mu_;
  std::deque<PendingMessage> queue_;
  std::atomic<size_t> queued_bytes_{0};
  bool notify_pending_ = false;  // the owner has been asked to Take() and has not yet
  bool closed_ = false;
  int64_t soft_limit_since_ms_ = 0;  // when usage last went over the soft limit; 0 = under it
  Hook notify_;
  Hook close_;
};

}  // namespace basalt
