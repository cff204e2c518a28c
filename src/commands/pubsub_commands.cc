// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
// PUBLISH, SPUBLISH and PUBSUB. On one node the shard variants behave like their plain twins
// (without patterns). The registry and cross-thread delivery are in pubsub.h.
#include "commands/command_util.h"
#include "commands/pubsub.h"
#include "types/pubsub_record.h"

namespace basalt {

namespace {

const char* const kSubscribeWord[kPubSubKindCount] = {"subscribe", "psubscribe", "ssubscribe"};
const char* const kUnsubscribeWord[kPubSubKindCount] = {"unsubscribe", "punsubscribe",
                                                        "sunsubscribe"};

// The count in a confirmation: channels and patterns count together, shard channels apart.
int64_t ConfirmationCount(const Session& session, PubSubKind kind) {
  const Subscriptions& subs = session.subscriptions;
  if (kind == PubSubKind::kShard) return subs.count(PubSubKind::kShard);
  return subs.count(PubSubKind::kChannel) + subs.count(PubSubKind::kPattern);
}

// A (un)subscribe confirmation: a push in RESP3, an array in RESP2. `name` is null when an
// UNSUBSCRIBE without arguments found nothing to leave.
void Confirm(CommandContext& c, const char* word, const std::string* name, PubSubKind kind) {
  c.reply.Push(3);
  c.reply.Bulk(word);
  if (name != nullptr) {
    c.reply.Bulk(*name);
  } else {
    c.reply.Null();
  }
  c.reply.Integer(ConfirmationCount(c.session, kind));
}

void SubscribeGeneric(CommandContext& c, PubSubKind kind) {
  for (size_t j = 1; j < c.argc(); j++) {
    c.server.pubsub.Subscribe(c.session, kind, c.arg(j));
    Confirm(c, kSubscribeWord[static_cast<int>(kind)], &c.arg(j), kind);
  }
}

void UnsubscribeGeneric(CommandContext& c, PubSubKind kind) {
  const char* word = kUnsubscribeWord[static_cast<int>(kind)];
  std::vector<std::string> names;
  if (c.argc() == 1) {
    names = c.session.subscriptions.List(kind);
    if (names.empty()) return Confirm(c, word, nullptr, kind);
  } else {
    names.assign(c.argv.begin() + 1, c.argv.end());
  }
  for (const std::string& name : names) {
    c.server.pubsub.Unsubscribe(c.session, kind, name);
    Confirm(c, word, &name, kind);
  }
}

void SubscribeCommand(CommandContext& c) {
  SubscribeGeneric(c, PubSubKind::kChannel);
}
void PsubscribeCommand(CommandContext& c) {
  SubscribeGeneric(c, PubSubKind::kPattern);
}
void SsubscribeCommand(CommandContext& c) {
  SubscribeGeneric(c, PubSubKind::kShard);
}
void UnsubscribeCommand(CommandContext& c) {
  UnsubscribeGeneric(c, PubSubKind::kChannel);
}
void PunsubscribeCommand(CommandContext& c) {
  UnsubscribeGeneric(c, PubSubKind::kPattern);
}
void SunsubscribeCommand(CommandContext& c) {
  UnsubscribeGeneric(c, PubSubKind::kShard);
}

// While replicas are connected the message goes into this command's batch as a `pubsub` record,
// so replicas replaying the WAL deliver it in order with the surrounding writes. Without
// replicas nobody would read it (a replica that connects later must not receive old messages),
// so PUBLISH then writes nothing and never waits for the WAL. Local subscribers get the message
// once the batch has committed. Replies with the number of receivers, counted now, as Redis.
void PublishGeneric(CommandContext& c, bool sharded) {
  const std::string& channel = c.arg(1);
  const std::string& payload = c.arg(2);
  ReplicateAsSent(c);
  if (c.server.replication == nullptr || c.server.replication->HasReplicas()) {
    AddPubsubRecord(c.ctx.batch(), sharded, channel, payload);
  }
  std::vector<PubSub::Receiver> receivers = c.server.pubsub.Receivers(channel, sharded);
  auto count = static_cast<int64_t>(receivers.size());
  auto message = std::make_shared<const PublishedMessage>(PublishedMessage{channel, payload});
  // A client subscribed to what it publishes (RESP3, or inside EXEC) gets the message right
  // after the reply of the command it runs (Dispatch appends it), as in Redis 7.2.
  std::vector<PubSub::Receiver> others;
  for (PubSub::Receiver& r : receivers) {
    if (r.session.get() == &c.session) {
      Reply after(&c.session.pushes_after_reply, c.reply.resp());
      WriteMessagePush(after, r.kind, r.pattern, *message);
    } else {
      others.push_back(std::move(r));
    }
  }
  if (!others.empty()) {
    PubSub* pubsub = &c.server.pubsub;
    c.ctx.AfterCommit(
        [pubsub, others = std::move(others), message] { pubsub->Send(others, message); });
  }
  c.reply.Integer(count);
}

void PublishCommand(CommandContext& c) {
  PublishGeneric(c, false);
}
void SpublishCommand(CommandContext& c) {
  PublishGeneric(c, true);
}

void PubsubNames(CommandContext& c, PubSubKind kind) {
  const std::string* pattern = c.argc() == 3 ? &c.arg(2) : nullptr;
  std::vector<std::string> names = c.server.pubsub.Names(kind, pattern);
  c.reply.BulkArray(names.data(), names.size());
}

void PubsubCounts(CommandContext& c, PubSubKind kind) {
  c.reply.Array(2 * (c.argc() - 2));  // an array of pairs in RESP3 too, as in Redis 7.0
  for (size_t j = 2; j < c.argc(); j++) {
    c.reply.Bulk(c.arg(j));
    c.reply.Integer(c.server.pubsub.SubscriberCount(kind, c.arg(j)));
  }
}

void PubsubHelp(CommandContext& c) {
  static const std::string kHelp[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: "
      "'*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help."};
  c.reply.SimpleLines(kHelp);
}

void PubsubCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "channels" && c.argc() <= 3) return PubsubNames(c, PubSubKind::kChannel);
  if (sub == "shardchannels" && c.argc() <= 3) return PubsubNames(c, PubSubKind::kShard);
  if (sub == "numsub") return PubsubCounts(c, PubSubKind::kChannel);
  if (sub == "shardnumsub") return PubsubCounts(c, PubSubKind::kShard);
  if (sub == "numpat") return c.reply.Integer(c.server.pubsub.Size(PubSubKind::kPattern));
  if (sub == "help") return PubsubHelp(c);
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try PUBSUB HELP.");
}

// Commands allowed in a RESP2 client's subscribed context carry kCmdPubSubContext (PING,
// QUIT and RESET too, in connection_commands.cc).
constexpr uint32_t kSub =
    kCmdPubSub | kCmdPubSubContext | kCmdNoScript | kCmdLoading | kCmdStale | kCmdPushReply;
constexpr uint32_t kPub = kCmdPubSub | kCmdLoading | kCmdStale | kCmdFast;

const std::vector<CommandSpec> kPubSubCommands = {
    {"subscribe", -2, kSub, 0, 0, 0, SubscribeCommand, "pubsub",
     "Listens for messages published to channels.", "@pubsub @slow"},
    {"unsubscribe", -1, kSub, 0, 0, 0, UnsubscribeCommand, "pubsub",
     "Stops listening to messages posted to channels.", "@pubsub @slow"},
    {"psubscribe", -2, kSub, 0, 0, 0, PsubscribeCommand, "pubsub",
     "Listens for messages published to channels that match one or more patterns.",
     "@pubsub @slow"},
    {"punsubscribe", -1, kSub, 0, 0, 0, PunsubscribeCommand, "pubsub",
     "Stops listening to messages published to channels that match one or more patterns.",
     "@pubsub @slow"},
    {"ssubscribe", -2, kSub, 1, -1, 1, SsubscribeCommand, "pubsub",
     "Listens for messages published to shard channels.", "@pubsub @slow"},
    {"sunsubscribe", -1, kSub, 1, -1, 1, SunsubscribeCommand, "pubsub",
     "Stops listening to messages posted to shard channels.", "@pubsub @slow"},
    {"publish", 3, kPub | kCmdMayReplicate, 0, 0, 0, PublishCommand, "pubsub",
     "Posts a message to a channel.", "@pubsub @fast"},
    {"spublish", 3, kPub | kCmdMayReplicate, 1, 1, 1, SpublishCommand, "pubsub",
     "Post a message to a shard channel", "@pubsub @fast"},
    {"pubsub", -2, 0, 0, 0, 0, PubsubCommand, "pubsub", "A container for Pub/Sub commands.",
     "@slow", nullptr,
     "channels:-2:@pubsub@slow:loading,pubsub,stale numpat:2:@pubsub@slow:loading,pubsub,stale "
     "numsub:-2:@pubsub@slow:loading,pubsub,stale "
     "shardchannels:-2:@pubsub@slow:loading,pubsub,stale "
     "shardnumsub:-2:@pubsub@slow:loading,pubsub,stale help:2:@slow"},
};

}  // namespace

const std::vector<CommandSpec>& PubSubCommands() {
  return kPubSubCommands;
}

}  // namespace basalt
