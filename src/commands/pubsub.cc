#include "commands/pubsub.h"

#include <glog/logging.h>

#include <mutex>
#include <shared_mutex>

#include "commands/tracking.h"
#include "common/clock.h"
#include "common/strutil.h"

namespace basalt {

bool PubSub::Subscribe(Session& session, PubSubKind kind, const std::string& name) {
  std::shared_ptr<Session> owner = session.weak_from_this().lock();
  if (owner == nullptr || session.subscriptions.Contains(kind, name)) return false;
  {
    std::unique_lock<WriterPreferringMutex> lock(mu_);
    registry_[static_cast<int>(kind)][name].emplace(session.id, std::move(owner));
  }
  return session.subscriptions.Add(kind, name);
}

void PubSub::EraseLocked(PubSubKind kind, const std::string& name, uint64_t session_id) {
  auto& map = registry_[static_cast<int>(kind)];
  auto it = map.find(name);
  if (it == map.end()) return;
  it->second.erase(session_id);
  if (it->second.empty()) map.erase(it);
}

bool PubSub::Unsubscribe(Session& session, PubSubKind kind, const std::string& name) {
  if (!session.subscriptions.Remove(kind, name)) return false;
  std::unique_lock<WriterPreferringMutex> lock(mu_);
  EraseLocked(kind, name, session.id);
  return true;
}

void PubSub::UnsubscribeAll(Session& session) {
  if (session.subscriptions.total() == 0) return;
  std::unique_lock<WriterPreferringMutex> lock(mu_);  // once, however many subscriptions
  for (int k = 0; k < kPubSubKindCount; k++) {
    auto kind = static_cast<PubSubKind>(k);
    for (const std::string& name : session.subscriptions.List(kind)) {
      session.subscriptions.Remove(kind, name);
      EraseLocked(kind, name, session.id);
    }
  }
}

std::vector<PubSub::Receiver> PubSub::Receivers(std::string_view channel, bool sharded) const {
  std::vector<Receiver> out;
  std::shared_lock<WriterPreferringMutex> lock(mu_);
  const auto& channels =
      registry_[static_cast<int>(sharded ? PubSubKind::kShard : PubSubKind::kChannel)];
  auto it = channels.find(std::string(channel));
  if (it != channels.end()) {
    for (const auto& [id, session] : it->second) {
      out.push_back(Receiver{session, sharded ? PubSubKind::kShard : PubSubKind::kChannel, {}});
    }
  }
  if (sharded) return out;
  for (const auto& [pattern, sessions] : registry_[static_cast<int>(PubSubKind::kPattern)]) {
    if (!GlobMatch(pattern, channel)) continue;
    for (const auto& [id, session] : sessions) {
      out.push_back(Receiver{session, PubSubKind::kPattern, pattern});
    }
  }
  return out;
}

void PubSub::Send(const std::vector<Receiver>& receivers,
                  const std::shared_ptr<const PublishedMessage>& message) const {
  if (receivers.empty()) return;
  OutputBufferLimit limit;
  if (config_ != nullptr) limit = config_->output_buffer_limit(ClientClass::kPubsub);
  int64_t now = UnixMillis();
  for (const Receiver& r : receivers) {
    Session& s = *r.session;
    auto result = s.output.Push(PendingMessage{r.kind, r.pattern, message},
                                s.output_buffer_bytes.load(std::memory_order_relaxed), limit, now);
    if (result == ClientOutput::PushResult::kOverLimit) {
      LOG(WARNING) << "Client id=" << s.id << " addr=" << s.addr
                   << " closed for overcoming of output buffer limits.";
    }
  }
}

int64_t PubSub::Deliver(std::string_view channel, std::string_view message, bool sharded) {
  std::vector<Receiver> receivers = Receivers(channel, sharded);
  Send(receivers, std::make_shared<const PublishedMessage>(
                      PublishedMessage{std::string(channel), std::string(message)}));
  return static_cast<int64_t>(receivers.size());
}

std::vector<std::string> PubSub::Names(PubSubKind kind, const std::string* pattern) const {
  std::vector<std::string> out;
  std::shared_lock<WriterPreferringMutex> lock(mu_);
  for (const auto& [name, sessions] : registry_[static_cast<int>(kind)]) {
    if (pattern == nullptr || GlobMatch(*pattern, name)) out.push_back(name);
  }
  return out;
}

int64_t PubSub::SubscriberCount(PubSubKind kind, const std::string& name) const {
  std::shared_lock<WriterPreferringMutex> lock(mu_);
  const auto& map = registry_[static_cast<int>(kind)];
  auto it = map.find(name);
  return it == map.end() ? 0 : static_cast<int64_t>(it->second.size());
}

int64_t PubSub::Size(PubSubKind kind) const {
  std::shared_lock<WriterPreferringMutex> lock(mu_);
  return static_cast<int64_t>(registry_[static_cast<int>(kind)].size());
}

std::vector<PubSub::Subscription> PubSub::AllSubscriptions() const {
  std::vector<Subscription> out;
  std::shared_lock<WriterPreferringMutex> lock(mu_);
  for (int kind = 0; kind < kPubSubKindCount; kind++) {
    for (const auto& [name, sessions] : registry_[kind]) {
      for (const auto& [id, session] : sessions) {
        out.push_back(Subscription{session, static_cast<PubSubKind>(kind), name});
      }
    }
  }
  return out;
}

void WriteMessagePush(Reply& reply, PubSubKind kind, const std::string& pattern,
                      const PublishedMessage& message) {
  if (kind == PubSubKind::kPattern) {
    reply.Push(4);
    reply.Bulk("pmessage");
    reply.Bulk(pattern);
  } else {
    reply.Push(3);
    reply.Bulk(kind == PubSubKind::kShard ? "smessage" : "message");
  }
  reply.Bulk(message.channel);
  reply.Bulk(message.payload);
}

void WriteQueuedMessages(Session& session, Reply& reply) {
  for (const PendingMessage& m : session.output.Take()) {
    if (m.kind == PubSubKind::kMonitor) {
      // A monitor gets its lines as status replies, in either protocol, while it monitors.
      if (session.monitor.load(std::memory_order_relaxed)) reply.Simple(m.message->payload);
      continue;
    }
    if (m.kind == PubSubKind::kTracking) {
      WriteTrackingMessage(session, reply, m.message->channel, m.message->payload);
      continue;
    }
    const std::string& name = m.kind == PubSubKind::kPattern ? m.pattern : m.message->channel;
    if (!session.subscriptions.Contains(m.kind, name)) continue;
    WriteMessagePush(reply, m.kind, m.pattern, *m.message);
  }
}

}  // namespace basalt
