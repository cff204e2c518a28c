// The keyspace notifications' way out of a Context (types/keyspace_events.h): Pub/Sub delivery
// to this server's subscribers, and the `pubsub` records that carry them to replicas while any
// are connected, exactly as PUBLISH's messages travel (commands/pubsub_commands.cc).
#pragma once

#include <string_view>

#include "commands/pubsub.h"
#include "repl/replication.h"
#include "types/keyspace_events.h"

namespace basalt {

class NotificationSink : public KeyspaceEvents::Sink {
 public:
  // `replication` may be null (no replication: nothing to carry).
  NotificationSink(PubSub* pubsub, const ReplicationManager* replication)
      : pubsub_(pubsub), replication_(replication) {}

  bool Replicating() const override {
    return replication_ != nullptr && replication_->HasReplicas();
  }
  void Deliver(std::string_view channel, std::string_view message) override {
    pubsub_->Deliver(channel, message, false);
  }

 private:
  PubSub* pubsub_;
  const ReplicationManager* replication_;
};

}  // namespace basalt
