// PubSub: the server-wide registry of who listens to what, and delivery of published messages.
//
// Channels, patterns and shard channels map to the sessions subscribed to them. A session is
// registered by its own worker (SUBSCRIBE family, RESET, connection close); publishers on any
// worker, and the replication applier on its own thread, read the registry under a shared lock,
// collect the receivers as shared_ptrs and hand each one the message through its ClientOutput
// (see pubsub_client.h), so a connection is only ever written by its own worker and a session
// cannot disappear while a publisher holds it. A closing connection unsubscribes everything
// and closes its ClientOutput; a publisher that collected it just before finds it closed.
//
// Order: messages from one publisher reach each subscriber in publishing order (one queue per
// subscriber, appended in order). A subscriber that unsubscribed drops messages still queued
// for that subscription, so nothing arrives after the unsubscribe confirmation.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/reply.h"
#include "commands/session.h"
#include "common/rwlock.h"
#include "config/config.h"

namespace basalt {

class PubSub {
 public:
  // Read for the pubsub client class's output buffer limit; set before workers start.
  void set_config(const Config* config) { config_ = config; }

  // The session's own worker thread. They return false when nothing changed. The session must
  // be owned by a shared_ptr (every connection's is).
  bool Subscribe(Session& session, PubSubKind kind, const std::string& name);
  bool Unsubscribe(Session& session, PubSubKind kind, const std::string& name);
  // Without notifications: for RESET and a closing connection.
  void UnsubscribeAll(Session& session);

  struct Receiver {
    std::shared_ptr<Session> session;
    PubSubKind kind;
    std::string pattern;  // kPattern: the pattern that matched
  };
  // Any thread. Who gets a message on `channel`: its subscribers, then pattern subscribers
  // (one entry per matching pattern, as Redis counts them); shard channels have no patterns.
  std::vector<Receiver> Receivers(std::string_view channel, bool sharded) const;
  // Any thread. Queues the message for each receiver's worker.
  void Send(const std::vector<Receiver>& receivers,
            const std::shared_ptr<const PublishedMessage>& message) const;
  // Any thread: delivers a message to this server's subscribers and returns how many received
  // it. The replication applier calls it for each record of the `pubsub` column family.
  int64_t Deliver(std::string_view channel, std::string_view message, bool sharded);

  // PUBSUB CHANNELS / SHARDCHANNELS: active names of `kind` matching `pattern` (null = all).
  std::vector<std::string> Names(PubSubKind kind, const std::string* pattern) const;
  // PUBSUB NUMSUB / SHARDNUMSUB.
  int64_t SubscriberCount(PubSubKind kind, const std::string& name) const;
  // Distinct channels, patterns or shard channels with at least one subscriber (INFO, NUMPAT).
  int64_t Size(PubSubKind kind) const;

  struct Subscription {
    std::shared_ptr<Session> session;
    PubSubKind kind;
    std::string name;
  };
  // Any thread: every subscription, for an ACL change that may revoke some of them.
  std::vector<Subscription> AllSubscriptions() const;

 private:
  using Subscribers = std::unordered_map<uint64_t, std::shared_ptr<Session>>;
  // Removes the registry entry of one subscription; the caller holds mu_ exclusively.
  void EraseLocked(PubSubKind kind, const std::string& name, uint64_t session_id);

  // Writer-preferring: publishers on every worker hold it shared, and a subscriber's worker
  // that waits to (un)subscribe must not be starved by them (it serves other clients too).
  mutable WriterPreferringMutex mu_;
  std::unordered_map<std::string, Subscribers> registry_[kPubSubKindCount];
  const Config* config_ = nullptr;
};

// Writes one message push ("message", "pmessage" or "smessage") in the reply's protocol.
void WriteMessagePush(Reply& reply, PubSubKind kind, const std::string& pattern,
                      const PublishedMessage& message);
// The session's own worker: writes its queued messages to `reply`, skipping those whose
// subscription has ended since they were published.
void WriteQueuedMessages(Session& session, Reply& reply);

}  // namespace basalt
